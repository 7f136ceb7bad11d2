package datalog

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/batonrl/baton/event"
)

// Dataset is a log being written into a directory. It hands out Writers, one per
// goroutine that feeds events (one per campaign worker: WorkerSinks), and numbers
// their parts so that no two take the same name. Build it with NewDataset. A Dataset
// is safe for concurrent use; a Writer is not.
type Dataset struct {
	dir  string
	cfg  writeConfig
	base map[string]string // the metadata every part has
	next atomic.Int64      // the next part number

	rows, batches, bytes, parts atomic.Int64

	lock *dirLock // the directory's, for the dataset's shard

	mu      sync.Mutex
	writers map[*Writer]struct{}
	closed  bool
}

// NewDataset creates dir (and its parents) if needed and returns a dataset that
// writes its parts there. A directory that already holds parts keeps them: new parts
// are numbered after the highest there, so a log can be appended to. The dataset
// holds the directory's lock (a file in it, .baton-writer.lock, or
// .baton-writer-SHARD.lock with WithShard) until Close: a second dataset of the same
// directory and shard, in this process or another, fails with a *LockedError
// (ErrLocked) that names the directory and the holder's process id, and so does
// Recover. Errors wrap ErrOption for a bad option.
func NewDataset(dir string, opts ...WriteOption) (*Dataset, error) {
	cfg, err := newWriteConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	lock, err := lockDir(dir, cfg.shard)
	if err != nil {
		return nil, err
	}
	last, err := lastPartNumber(dir, cfg.shard)
	if err != nil {
		_ = lock.unlock()
		return nil, err
	}
	d := &Dataset{dir: dir, cfg: cfg, lock: lock, writers: map[*Writer]struct{}{}}
	d.next.Store(last + 1)
	d.base = map[string]string{
		MetaFormatVersion: strconv.Itoa(FormatVersion),
		MetaVersion:       moduleVersion(),
		MetaCompression:   cfg.compression.String(),
	}
	for k, v := range cfg.meta {
		d.base[k] = v
	}
	return d, nil
}

// Dir returns the dataset's directory.
func (d *Dataset) Dir() string { return d.dir }

// NewWriter returns a writer of the dataset. Close it when its events are over (a
// campaign closes the writers of WorkerSinks itself).
func (d *Dataset) NewWriter() (*Writer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: dataset %s", ErrClosed, d.dir)
	}
	w := newWriter(d)
	d.writers[w] = struct{}{}
	return w, nil
}

// WorkerSinks returns a function for runners.WithWorkerSinks that gives each worker
// of a campaign a Writer of its own, which the campaign closes when the worker ends:
//
//	c, err := runners.NewCampaign(reg, spec, runners.WithWorkers(8),
//		runners.WithWorkerSinks(ds.WorkerSinks()))
func (d *Dataset) WorkerSinks() func(worker int) (event.Sink, error) {
	return func(int) (event.Sink, error) {
		w, err := d.NewWriter()
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Close closes the writers still open and then the dataset, and lets go of the
// directory's lock: NewWriter fails after it. It returns the writers' errors;
// calling it again returns nil.
func (d *Dataset) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	ws := make([]*Writer, 0, len(d.writers))
	for w := range d.writers {
		ws = append(ws, w)
	}
	d.mu.Unlock()
	var errs []error
	for _, w := range ws {
		errs = append(errs, w.Close())
	}
	errs = append(errs, d.lock.unlock())
	return errors.Join(errs...)
}

func (d *Dataset) forget(w *Writer) {
	d.mu.Lock()
	delete(d.writers, w)
	d.mu.Unlock()
}

// Stats counts what the writers of a dataset have written so far.
type Stats struct {
	// Rows counts the step rows written (in batches, not those still buffered).
	Rows int64
	// Batches counts the record batches written, of every table; Bytes the bytes of
	// the parts up to their latest batch; Parts the parts begun.
	Batches, Bytes, Parts int64
}

// Stats returns what the dataset's writers have written so far.
func (d *Dataset) Stats() Stats {
	return Stats{Rows: d.rows.Load(), Batches: d.batches.Load(), Bytes: d.bytes.Load(), Parts: d.parts.Load()}
}

// count adds a batch of rows step rows written to p.
func (d *Dataset) count(rows int64, p *partWriter) {
	d.rows.Add(rows)
	d.batches.Add(1)
	d.bytes.Add(p.pos - p.counted)
	p.counted = p.pos
}

// createPart creates the next part of a table under the dataset's directory, whose
// batches enc encodes, written through bw (see createPart).
func (d *Dataset) createPart(folder string, schema *arrow.Schema, bw *bufio.Writer, enc *ipcfile.Encoder) (*partWriter, error) {
	dir := filepath.Join(d.dir, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for {
		n := d.next.Add(1) - 1
		pw, err := createPart(filepath.Join(dir, partName(d.cfg.shard, n)), schema, bw, enc)
		if errors.Is(err, fs.ErrExist) {
			continue // another process of the same shard took it: take the next
		}
		if err == nil {
			d.parts.Add(1)
		}
		return pw, err
	}
}

// partName is the file name of part n.
func partName(shard string, n int64) string {
	if shard == "" {
		return fmt.Sprintf("part-%05d.arrow", n)
	}
	return fmt.Sprintf("part-%s-%05d.arrow", shard, n)
}

// parsePartName returns the shard and number of a part's file name.
func parsePartName(name string) (shard string, n int64, ok bool) {
	rest, found := strings.CutPrefix(name, "part-")
	if !found {
		return "", 0, false
	}
	if rest, found = strings.CutSuffix(rest, ".arrow"); !found {
		return "", 0, false
	}
	if i := strings.LastIndexByte(rest, '-'); i >= 0 {
		shard, rest = rest[:i], rest[i+1:]
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return shard, n, true
}

// lastPartNumber returns the highest number of the parts of shard in dir's tables, -1
// for none.
func lastPartNumber(dir, shard string) (int64, error) {
	last := int64(-1)
	tables, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("datalog: %w", err)
	}
	for _, t := range tables {
		if !t.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, t.Name()))
		if err != nil {
			return 0, fmt.Errorf("datalog: %w", err)
		}
		for _, f := range files {
			if s, n, ok := parsePartName(f.Name()); ok && s == shard {
				last = max(last, n)
			}
		}
	}
	return last, nil
}
