package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/batonrl/baton/datalog"
	"github.com/spf13/cobra"
)

// newLogDir checks the directory of baton run --log: absent, empty, or a directory that
// holds no log (a second campaign would reuse the first one's trial ids).
func newLogDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usagef("--log %s: %v", dir, unwrapPath(err))
	case !st.IsDir():
		return usagef("--log %s: not a directory", dir)
	}
	_, err = datalog.Open(dir)
	switch {
	case err == nil:
		return usagef("--log %s already holds a log (give a new directory; baton inspect %s reads that one)", dir, dir)
	case errors.Is(err, datalog.ErrNotLog):
		return nil
	}
	return usagef("--log %s: %v", dir, err)
}

// openLog opens the log in dir for the command cmd. A missing directory, a file, or a
// directory that holds no log is bad input.
func openLog(cmd, dir string) (*datalog.Log, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: no such directory", cmd, dir)
	case err != nil:
		return nil, usagef("%s %s: %v", cmd, dir, unwrapPath(err))
	case !st.IsDir():
		return nil, usagef("%s %s: not a directory (want a log's directory, as baton run ENV --log DIR writes)", cmd, dir)
	}
	l, err := datalog.Open(dir)
	if errors.Is(err, datalog.ErrNotLog) {
		return nil, usagef("%s %s: not a baton log: no part in agent=NAME, _trials, _episodes or _rewards (baton run ENV --log DIR writes one)", cmd, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", cmd, dir, err)
	}
	return l, nil
}

// logError makes bad input of a log that this baton cannot read (datalog.ErrNotLog: a
// part of an unknown format version, a schema without baton's metadata).
func logError(cmd, dir string, err error) error {
	if errors.Is(err, datalog.ErrNotLog) {
		return &usageError{msg: fmt.Sprintf("%s %s: %v", cmd, dir, err), err: err}
	}
	return fmt.Errorf("%s %s: %w", cmd, dir, err)
}

// unwrapPath drops the operation and path of an *fs.PathError, which the message
// names already.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// oneLog checks that a command was given exactly one log directory.
func oneLog(cmd string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("%s needs a log directory (baton run ENV --log DIR writes one)", cmd)
		case len(args) > 1:
			return usagef("%s takes one log directory, got %q", cmd, args)
		}
		return nil
	}
}

// bytesText writes a size for people: 512 B, 1.5 KiB, 12.3 MiB, 2.0 GiB.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}
