package datalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockedError is the error of a writer (NewDataset) or Recover that found the log's
// directory held by another writer: a log has one writer at a time per shard
// (WithShard), since two that take the same part numbers and trial ids make a log
// that reads as neither. It wraps ErrLocked.
type LockedError struct {
	// Dir is the log's directory and Lock the lock file held there.
	Dir, Lock string
	// PID is the holder's process id as its lock file tells it, 0 when unknown.
	PID int
}

func (e *LockedError) Error() string {
	holder := "another writer"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("datalog: %s is being written by %s (it holds %s): a log takes one writer at a time",
		e.Dir, holder, filepath.Base(e.Lock))
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// lockName is the name of the lock file of shard's writers in a log's directory.
// It starts with '.', so that pyarrow's dataset discovery skips it.
func lockName(shard string) string {
	if shard == "" {
		return ".baton-writer.lock"
	}
	return ".baton-writer-" + shard + ".lock"
}

// isLockName reports whether name is the name of a writer's lock file.
func isLockName(name string) bool {
	return strings.HasPrefix(name, ".baton-writer") && strings.HasSuffix(name, ".lock")
}

// lockDir takes the lock of shard's writers of the log in dir, which must exist;
// a *LockedError when another process (or another Dataset of this one) holds it.
func lockDir(dir, shard string) (*dirLock, error) {
	path := filepath.Join(dir, lockName(shard))
	l, err := tryLock(path)
	if errors.Is(err, errHeld) {
		return nil, &LockedError{Dir: dir, Lock: path, PID: readPID(path)}
	}
	if err != nil {
		return nil, fmt.Errorf("datalog: locking %s: %w", dir, err)
	}
	return l, nil
}

// lockAll takes the lock of the unsharded writers of the log in dir and of every
// shard whose lock file is there, for Recover; unlock them with unlockAll.
func lockAll(dir string) ([]*dirLock, error) {
	l, err := lockDir(dir, "")
	if err != nil {
		return nil, err
	}
	locks := []*dirLock{l}
	entries, err := os.ReadDir(dir)
	if err != nil {
		unlockAll(locks)
		return nil, fmt.Errorf("datalog: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !isLockName(name) || name == lockName("") {
			continue
		}
		shard := strings.TrimSuffix(strings.TrimPrefix(name, ".baton-writer-"), ".lock")
		l, err := lockDir(dir, shard)
		if err != nil {
			unlockAll(locks)
			return nil, err
		}
		locks = append(locks, l)
	}
	return locks, nil
}

func unlockAll(locks []*dirLock) {
	for _, l := range locks {
		_ = l.unlock()
	}
}

// errHeld is tryLock's error for a lock that another holds.
var errHeld = errors.New("lock held")

// readPID reads the process id that the holder of the lock file at path wrote into
// it, 0 if none can be read.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
