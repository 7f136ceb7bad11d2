package datalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/batonrl/baton/datalog/internal/ipcfile"
)

// DamagedDir is the folder of a log, under its directory, into which Recover moves
// the parts it cannot keep whole, each at its path within the log
// (DIR/_damaged/agent=motion/part-00003.arrow). Readers skip it, pyarrow's dataset
// discovery too (its name starts with '_').
const DamagedDir = "_damaged"

// Recovered is what Recover did to one part.
type Recovered struct {
	// Path is the part's path.
	Path string
	// Batches and Rows count the batches kept, and their rows.
	Batches int
	Rows    int64
	// Removed reports that no batch of the part could be kept: it is no longer in
	// the log (Moved says where it went).
	Removed bool
	// Cut says why the part's stream ended where it did when its writer was killed
	// within a batch ("" when it ended at a batch boundary), such as "unexpected
	// EOF" for a batch cut short. That batch is lost.
	Cut string
	// Skipped counts the record batches dropped because they were damaged (their
	// checksum differs, their buffers do not hold what their metadata says), and
	// Damage says what was damaged: those batches, a footer that does not check,
	// the damage that ended the part's stream (the batches after it could not be
	// read), or a file that is not an Arrow file; "" for a part that was only
	// missing its footer.
	Skipped int
	Damage  string
	// Moved is where the original part went, under DamagedDir, when it was damaged
	// or held no batch to keep; "" when it was rewritten in place (a part that only
	// lacked its footer).
	Moved string
}

// Recover checks every part of the log in dir and repairs those that are not whole,
// keeping every batch it can read and deleting nothing:
//
//   - A part that has no footer (its writer was killed) is rewritten as a proper IPC
//     file holding its complete batches (the batch the writer was killed in is lost).
//   - A damaged part (a batch whose checksum differs, a footer that does not check or
//     does not match its batches) is rewritten with every batch that reads intact:
//     a damaged record batch is skipped and the batches after it kept, as long as the
//     stream's lengths hold; damage to those lengths, or to a dictionary batch, which
//     the batches after it use, ends the part there. The original is moved into
//     DamagedDir.
//   - A part that holds no batch to keep, and a file named as a part that is not an
//     Arrow file, are moved into DamagedDir.
//
// Whole parts are left alone. It reports each part it rewrote or moved, in the order
// of Log.Parts. A part is rewritten to a temporary file in its folder, which is
// renamed over the original (after the original was moved aside, if it is), so an
// interrupted Recover loses nothing; a failed write removes the temporary file.
// Recover takes the log's writer locks (see NewDataset) while it works: it fails
// with a *LockedError if a process is writing the log.
func Recover(dir string, opts ...ReadOption) ([]Recovered, error) {
	l, err := Open(dir, opts...)
	if err != nil {
		return nil, err
	}
	locks, err := lockAll(dir)
	if err != nil {
		return nil, err
	}
	defer unlockAll(locks)
	var out []Recovered
	for _, p := range l.Parts() {
		rec, done, err := recoverPart(dir, p.Path, l.cfg)
		if err != nil {
			return out, err
		}
		if done {
			out = append(out, rec)
		}
	}
	return out, nil
}

// recoverPart repairs one part if it is not whole; done reports that it did.
func recoverPart(dir, path string, cfg readConfig) (rec Recovered, done bool, err error) {
	rec.Path = path
	whole, damage, err := checkPart(path, cfg)
	switch {
	case err != nil:
		return rec, false, err
	case whole:
		return rec, false, nil
	}
	if damage != nil && errors.Is(damage, ErrNotLog) {
		rec.Removed, rec.Damage = true, damage.Error()
		rec.Moved, err = moveAside(dir, path)
		return rec, err == nil, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".recover")
	if err := removeStale(tmp); err != nil {
		return rec, false, err
	}
	kept, err := rewritePart(path, tmp, cfg, &rec)
	if err != nil {
		return rec, false, err
	}
	if damage != nil && rec.Damage == "" {
		rec.Damage = damage.Error()
	}
	if !kept || rec.Damage != "" {
		if rec.Moved, err = moveAside(dir, path); err != nil {
			_ = os.Remove(tmp)
			return rec, false, err
		}
	}
	if !kept {
		rec.Removed = true
		return rec, true, nil
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return rec, false, fmt.Errorf("datalog: recovering %s: %w", path, err)
	}
	return rec, true, nil
}

// checkPart reads the part at path through: whole reports a part with its footer
// whose every batch reads intact; damage is what is wrong with a part that is not
// a complete one, nil for one that only lacks its footer. err is an error of the
// file system.
func checkPart(path string, cfg readConfig) (whole bool, damage, err error) {
	r, err := openPart(path, cfg.mem)
	switch {
	case errors.Is(err, ErrNotLog), errors.Is(err, ErrCorrupt):
		return false, err, nil
	case err != nil:
		return false, nil, fmt.Errorf("datalog: %w", err)
	}
	defer r.Close()
	for _, err := range r.batches() {
		if err != nil {
			return false, err, nil
		}
	}
	return r.complete, nil, nil
}

// rewritePart writes the batches of the part at path that read intact into tmp,
// skipping the damaged ones, and counts them in rec; kept reports that tmp holds at
// least one (none is written otherwise). tmp is removed on an error.
func rewritePart(path, tmp string, cfg readConfig, rec *Recovered) (kept bool, err error) {
	r, err := openPartSkipping(path, cfg.mem, true)
	if err != nil {
		if errors.Is(err, ErrCorrupt) { // its schema: nothing to keep
			rec.Damage = err.Error()
			return false, nil
		}
		return false, fmt.Errorf("datalog: %w", err)
	}
	defer r.Close()
	var pw *partWriter
	defer func() {
		if err != nil {
			if pw != nil {
				pw.abandon()
			}
			_ = os.Remove(tmp)
		}
	}()
	if r.schema == nil {
		return false, nil
	}
	comp := Uncompressed
	if i := r.schema.Metadata().FindKey(MetaCompression); i >= 0 {
		if c, err := ParseCompression(r.schema.Metadata().Values()[i]); err == nil {
			comp = c
		}
	}
	enc := ipcfile.NewEncoder(comp.codec())
	defer enc.Close()
	var stop error
	for b, err := range r.batches() {
		if err != nil {
			stop = err
			break
		}
		if pw == nil {
			if pw, err = createPartWith(tmp, r.schema, nil, enc, cfg.wrapWrite); err != nil {
				return false, fmt.Errorf("datalog: recovering %s: %w", path, err)
			}
		}
		if err := pw.writeBatch(b); err != nil {
			return false, fmt.Errorf("datalog: recovering %s: %w", path, err)
		}
		rec.Batches++
		rec.Rows += b.NumRows()
	}
	if r.cut != nil {
		rec.Cut = rootCause(r.cut).Error()
	}
	var damage []string
	if sk := r.msgs.Skipped(); len(sk) > 0 {
		rec.Skipped = len(sk)
		for _, s := range sk {
			damage = append(damage, fmt.Sprintf("batch at offset %d skipped: %v", s.Offset, s.Err))
		}
	}
	if stop != nil {
		damage = append(damage, stop.Error())
	}
	if len(damage) > 0 {
		rec.Damage = joinLines(damage)
	}
	if pw == nil {
		return false, nil
	}
	if err := pw.finish(); err != nil {
		pw = nil // closed
		return false, fmt.Errorf("datalog: recovering %s: %w", path, err)
	}
	pw = nil
	if f, err := os.Open(tmp); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
	return true, nil
}

func joinLines(s []string) string {
	out := s[0]
	for _, x := range s[1:] {
		out += "; " + x
	}
	return out
}

// removeStale removes the temporary file of an earlier Recover that was killed.
func removeStale(tmp string) error {
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("datalog: %w", err)
	}
	return nil
}

// moveAside moves the part at path into the log's DamagedDir, at its path within
// the log (with a number added if a file of that name is there already), and
// returns where it went.
func moveAside(dir, path string) (string, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	dst := filepath.Join(dir, DamagedDir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("datalog: %w", err)
	}
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = filepath.Join(dir, DamagedDir, rel+"."+strconv.Itoa(i))
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("datalog: moving %s aside: %w", path, err)
	}
	return dst, nil
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// A writer of the parts that Recover writes, for the tests that make writes fail.
type writeWrapper = func(io.Writer) io.Writer
