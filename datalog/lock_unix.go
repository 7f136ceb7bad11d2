//go:build unix

package datalog

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// dirLock is a lock file held with flock(2): the kernel lets go of it when the
// process ends, however it ends, so a killed writer leaves no stale lock. The file
// stays; its content is the holder's process id, for the error of the next one.
type dirLock struct {
	f *os.File
}

func tryLock(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errHeld
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// unlock lets go of the lock; the file stays, emptied.
func (l *dirLock) unlock() error {
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}
