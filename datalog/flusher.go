package datalog

import (
	"bufio"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
)

// A Writer hands its full batches to a goroutine of its own, its flusher, which builds
// their record batches, encodes and compresses them and writes them to their parts,
// while the goroutine that feeds the writer fills the next batch. Each table has two
// sets of column buffers, the one being filled and the one being written, so that
// the feeder waits only when the flusher is a whole batch behind, and a table never
// has more than two batches in memory. The flusher takes its jobs in the order they
// were given, so the tables' batches reach the disk in the order the writer made
// them (the trials' rows before the steps that follow them), and a part's batches in
// the order of their rows. An inline flusher (WithInlineWrites) has no goroutine: it
// does each job in the call that hands it over, in the same order, to the same bytes.

// batch is a set of column buffers that a writer hands to its flusher.
type batch interface {
	// record builds the record batch of schema over the buffers; it is valid until
	// recycle.
	record(schema *arrow.Schema) arrow.RecordBatch
	// recycle empties the buffers for the next batch and lets go of what the batch
	// held besides (its dictionaries).
	recycle()
	// free gives the buffers back to the allocator.
	free()
}

// output is a table as its flusher writes it: a folder and the part open in it.
type output struct {
	dir string
	// steps marks an agent's steps: their rows count in Stats, and the writer
	// decides where a part ends (where its dictionaries begin anew). The other
	// tables' parts end where the flusher finds them full.
	steps bool
	// schema is the schema of the parts of a table other than the steps.
	schema *arrow.Schema
	part   *partWriter // touched by the flusher only

	// What the writer learns of its batches once they are written: parts counts the
	// parts begun, and written[seq%2] says where batch seq left its part.
	mu      sync.Mutex
	parts   int
	written [2]written
}

// newOutput returns the output of a table written to dir, with parts of schema when
// it is not an agent's.
func newOutput(dir string, steps bool, schema *arrow.Schema) *output {
	o := &output{dir: dir, steps: steps, schema: schema}
	o.written[0].seq, o.written[1].seq = -1, -1
	return o
}

// written is where a batch left its part.
type written struct {
	seq   int   // the batch's number in its table, from 0; -1 for none
	part  int   // the part's number in its table, from 1
	bytes int64 // the part's size after the batch
	added int64 // the bytes the batch added to the part
}

// afterBatch returns where batch seq left its part; ok is false when that is not
// known (yet, or any longer: only the latest two batches are remembered).
func (o *output) afterBatch(seq int) (w written, ok bool) {
	if seq < 0 {
		return written{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	w = o.written[seq%2]
	return w, w.seq == seq
}

func (o *output) report(seq int, begun bool, bytes, added int64) {
	o.mu.Lock()
	if begun {
		o.parts++
	}
	o.written[seq%2] = written{seq: seq, part: o.parts, bytes: bytes, added: added}
	o.mu.Unlock()
}

// job is one thing for a flusher to do, in this order: write b (beginning a new
// part of schema first when schema is set), finish the open part, take the table's
// buffers out of free and give them back to the allocator, reply.
type job struct {
	out    *output
	b      batch
	seq    int        // b's number in its table
	free   chan batch // where b goes back once written; the table's spare buffers
	schema *arrow.Schema
	finish bool
	retire bool
	// reply gets the flusher's error, once the jobs before this one are done.
	reply chan error
}

// flusher is the goroutine that writes a Writer's batches.
type flusher struct {
	ds *Dataset
	// bw is the buffer the parts are written through, one at a time: each batch
	// and each part's tail leave it empty.
	bw *bufio.Writer
	// enc encodes the batches of the parts, one part at a time, as bw writes them.
	enc  *ipcfile.Encoder
	jobs chan job
	done chan struct{}
	open map[*output]struct{} // outputs with a part open; touched by the flusher only
	err  atomic.Pointer[error]
	// inline makes the flusher do each job in the call that hands it over, on the
	// writer's goroutine, with no goroutine of its own (WithInlineWrites).
	inline bool
}

// flusherQueue is how many jobs a writer can hand over before it waits for its
// flusher. The buffers a writer has bound what it can hand over anyway; the queue
// only spares it waits on the channel.
const flusherQueue = 32

func startFlusher(ds *Dataset) *flusher {
	f := &flusher{ds: ds, bw: bufio.NewWriterSize(nil, partBuffer), enc: ipcfile.NewEncoder(ds.cfg.compression.codec()), jobs: make(chan job, flusherQueue), done: make(chan struct{}), open: map[*output]struct{}{}}
	if ds.cfg.noChecksums {
		f.enc.NoChecksums()
	}
	if ds.cfg.noObservations {
		f.enc.DropRows()
	}
	if ds.cfg.inline {
		f.inline = true
		close(f.done)
		return f
	}
	go f.run()
	return f
}

// failed returns the first error of the flusher, nil if none.
func (f *flusher) failed() error {
	if e := f.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (f *flusher) fail(err error) {
	err = fmt.Errorf("datalog: %w", err)
	f.err.CompareAndSwap(nil, &err)
}

// send hands j to the flusher; an inline flusher does it at once.
func (f *flusher) send(j job) {
	if f.inline {
		f.do(j)
		return
	}
	f.jobs <- j
}

// sync waits until the jobs sent so far are done and returns the flusher's error.
func (f *flusher) sync() error {
	if f.inline {
		return f.failed() // they are
	}
	reply := make(chan error, 1)
	f.jobs <- job{reply: reply}
	return <-reply
}

// stop waits for the jobs sent so far and ends the flusher, which finishes the parts
// still open or, after a failure, leaves them without footers for Recover. It
// returns the flusher's error.
func (f *flusher) stop() error {
	if f.inline {
		f.end()
		return f.failed()
	}
	close(f.jobs)
	<-f.done
	return f.failed()
}

func (f *flusher) run() {
	defer close(f.done)
	for j := range f.jobs {
		f.do(j)
	}
	f.end()
}

// end finishes the parts still open, or after a failure leaves them without
// footers, and lets go of the encoder.
func (f *flusher) end() {
	defer f.enc.Close()
	var errs []error
	for o := range f.open {
		if f.failed() != nil {
			o.part.abandon()
		} else {
			errs = append(errs, o.part.finish())
		}
		o.part = nil
	}
	if err := errors.Join(errs...); err != nil {
		f.fail(err)
	}
	clear(f.open)
}

func (f *flusher) do(j job) {
	if j.b != nil {
		if f.failed() == nil {
			if err := f.write(&j); err != nil {
				f.fail(err)
			}
		}
		j.b.recycle()
		j.free <- j.b
	}
	if j.finish && j.out.part != nil && f.failed() == nil {
		if err := f.finish(j.out); err != nil {
			f.fail(err)
		}
	}
	if j.retire {
		for len(j.free) > 0 {
			(<-j.free).free()
		}
	}
	if j.reply != nil {
		j.reply <- f.failed()
	}
}

// write writes j's batch to its table's part.
func (f *flusher) write(j *job) error {
	o := j.out
	if j.schema != nil && o.part != nil {
		if err := f.finish(o); err != nil {
			return err
		}
	}
	begun := false
	if o.part == nil {
		schema := j.schema
		if !o.steps {
			schema = o.schema
		}
		if schema == nil {
			return fmt.Errorf("%s: a batch of steps without the schema of its part", o.dir)
		}
		p, err := f.ds.createPart(o.dir, schema, f.bw, f.enc)
		if err != nil {
			return err
		}
		o.part, begun = p, true
		f.open[o] = struct{}{}
	}
	before := o.part.size()
	rec := j.b.record(o.part.schema)
	n := rec.NumRows()
	err := o.part.writeBatch(rec)
	rec.Release()
	if err != nil {
		return err
	}
	if !o.steps {
		n = 0
	}
	f.ds.count(n, o.part)
	o.report(j.seq, begun, o.part.size(), o.part.size()-before)
	if !o.steps && o.part.size() >= f.ds.cfg.maxPart {
		return f.finish(o)
	}
	return nil
}

func (f *flusher) finish(o *output) error {
	err := o.part.finish()
	o.part = nil
	delete(f.open, o)
	return err
}
