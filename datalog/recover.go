package datalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batonrl/baton/datalog/internal/ipcfile"
)

// Recovered is what Recover did to one part that had no footer.
type Recovered struct {
	// Path is the part's path.
	Path string
	// Batches and Rows count the complete batches kept, and their rows.
	Batches int
	Rows    int64
	// Removed reports that the part held no complete batch and was deleted.
	Removed bool
	// Cut says why the part's stream ended where it did ("" when it ended cleanly,
	// at a batch boundary), such as "unexpected EOF" for a batch cut short.
	Cut string
}

// Recover rewrites every part of the log in dir that has no footer (its writer was
// killed) as a proper IPC file holding its complete batches, and deletes those with
// none; parts with a footer are left alone. It reports each part it rewrote or
// deleted, in the order of Log.Parts. A part is rewritten to a temporary file in its
// folder and renamed over the original, so an interrupted Recover loses nothing. No
// process may be writing the log meanwhile.
func Recover(dir string, opts ...ReadOption) ([]Recovered, error) {
	l, err := Open(dir, opts...)
	if err != nil {
		return nil, err
	}
	var out []Recovered
	for _, p := range l.Parts() {
		rec, done, err := recoverPart(p.Path, l.cfg)
		if err != nil {
			return out, err
		}
		if done {
			out = append(out, rec)
		}
	}
	return out, nil
}

// recoverPart rewrites one part if it has no footer; done reports that it did.
func recoverPart(path string, cfg readConfig) (rec Recovered, done bool, err error) {
	r, err := openPart(path, cfg.mem)
	if err != nil {
		return rec, false, fmt.Errorf("datalog: %w", err)
	}
	defer func() {
		if r != nil {
			_ = r.Close()
		}
	}()
	if r.complete {
		return rec, false, nil
	}
	rec.Path = path
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".recover")
	_ = os.Remove(tmp)
	var pw *partWriter
	if r.schema != nil {
		comp := Uncompressed
		if i := r.schema.Metadata().FindKey(MetaCompression); i >= 0 {
			if c, err := ParseCompression(r.schema.Metadata().Values()[i]); err == nil {
				comp = c
			}
		}
		enc := ipcfile.NewEncoder(comp.codec())
		defer enc.Close()
		for b, err := range r.batches() {
			if err != nil {
				return rec, false, err
			}
			if pw == nil {
				if pw, err = createPart(tmp, r.schema, nil, enc); err != nil {
					return rec, false, fmt.Errorf("datalog: recovering %s: %w", path, err)
				}
			}
			if err := pw.writeBatch(b); err != nil {
				pw.abandon()
				_ = os.Remove(tmp)
				return rec, false, fmt.Errorf("datalog: recovering %s: %w", path, err)
			}
			rec.Batches++
			rec.Rows += b.NumRows()
		}
	}
	if r.sr != nil && r.sr.Err() != nil {
		rec.Cut = rootCause(r.sr.Err()).Error()
	}
	_ = r.Close()
	r = nil
	if pw == nil {
		rec.Removed = true
		if err := os.Remove(path); err != nil {
			return rec, false, fmt.Errorf("datalog: %w", err)
		}
		return rec, true, nil
	}
	if err := pw.finish(); err != nil {
		_ = os.Remove(tmp)
		return rec, false, err
	}
	if f, err := os.Open(tmp); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return rec, false, fmt.Errorf("datalog: %w", err)
	}
	return rec, true, nil
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
