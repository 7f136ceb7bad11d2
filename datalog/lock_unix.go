//go:build unix

package datalog

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// dirLock is a lock file held with flock(2): the kernel lets go of it when the
// process ends, however it ends, so a killed writer leaves no stale lock (its file
// stays, unlocked, and the next writer takes it). Its content is the holder's
// process id, for the error of the next one; unlock removes it.
type dirLock struct {
	f    *os.File
	path string
}

func tryLock(path string) (*dirLock, error) {
	// A holder removes the file as it lets go: a lock taken on a file that is no
	// longer the one at path is no lock, and is taken again.
	for range 100 {
		l, err := lockOnce(path)
		if err != nil || l != nil {
			return l, err
		}
	}
	return nil, errHeld
}

// lockOnce takes the lock of the file at path; nil and no error when the file was
// removed or replaced meanwhile.
func lockOnce(path string) (*dirLock, error) {
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
	held, herr := f.Stat()
	now, nerr := os.Stat(path)
	if herr != nil || nerr != nil || !os.SameFile(held, now) {
		_ = f.Close()
		return nil, nil
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f, path: path}, nil
}

// unlock removes the lock file, while it holds it, and lets go of the lock.
func (l *dirLock) unlock() error {
	err := os.Remove(l.path)
	if errors.Is(err, fs.ErrNotExist) { // its directory removed meanwhile
		err = nil
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
