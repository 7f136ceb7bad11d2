//go:build !unix

package datalog

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// dirLock is a lock file created exclusively and removed by unlock, where flock(2)
// is missing: a writer killed before it unlocks leaves the file, and the next
// writer's error names it, for a person to remove once no process writes the log.
type dirLock struct {
	path string
}

func tryLock(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, errHeld
	}
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return nil, werr
	}
	return &dirLock{path: path}, nil
}

func (l *dirLock) unlock() error { return os.Remove(l.path) }
