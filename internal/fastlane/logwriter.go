package fastlane

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
)

// opKind is what an op of a batch does.
type opKind uint8

const (
	// opBegin: copy begins trial number index, seeded with seed.
	opBegin opKind = 1 + iota
	// opRow: a report of the copy (a step event).
	opRow
	// opEnd: the copy's episode ended: its returns and metrics in floats, its
	// ticks in tick, success; its trial ends.
	opEnd
	// opState: the copy's trial ends with state and err.
	opState
)

// op is one thing that the recorder staged for the writing goroutine: one struct for
// every kind, so that a batch is a flat slice that holds no interface.
type op struct {
	kind                       opKind
	start, acting, term, trunc bool
	success                    bool
	state                      event.State
	copy, agent, tick, span    int32
	index                      int // opBegin: the trial's number; opRow: the report's index in its tick
	seed                       uint64
	action                     int64
	reward                     float64
	agentID, parentID          string
	obs, mask, floats          [2]int32 // [from, to) in the batch's obs, masks and floats; mask[0] -1 for none
	err                        error
}

// batch is what one Reset or Step staged.
type batch struct {
	ops    []op
	obs    []float32
	masks  []bool
	floats []float64
}

// A batch is handed over once it holds batchOps ops or batchFloats observation
// values: several steps of every copy, so that the writer gets runs of each trial's
// rows, and at most a few megabytes.
const (
	batchOps    = 8192
	batchFloats = 1 << 20
)

func (b *batch) full() bool { return len(b.ops) >= batchOps || len(b.obs) >= batchFloats }

func (b *batch) reset() {
	clear(b.ops) // drop the strings and errors
	b.ops, b.obs, b.masks, b.floats = b.ops[:0], b.obs[:0], b.masks[:0], b.floats[:0]
}

// logWriter is the recorder's writing goroutine: it turns the batches given to it
// into the events of a datalog writer, in order, and gives them back.
type logWriter struct {
	ds   *datalog.Dataset
	w    *datalog.Writer
	info event.TrialInfo // the template of every trial's info
	run  string
	full chan *batch   // to the goroutine
	free chan *batch   // back from it
	done chan struct{} // closed when the goroutine has ended

	mu  sync.Mutex
	err error // the first error of the writer

	// The goroutine's own.
	trials []event.TrialInfo // each copy's open trial
	starts []int32           // where each copy's ops begin in order
	order  []int32           // a batch's ops, copy by copy
	ev     event.Event
	step   event.StepEvent
	epEv   event.EpisodeEvent
	state  event.StateChange
	src    [1]event.RewardSource
	nagent int
}

func startLogWriter(ds *datalog.Dataset, w *datalog.Writer, info event.TrialInfo, run string, n int) *logWriter {
	lw := &logWriter{ds: ds, w: w, info: info, run: run, full: make(chan *batch, 2), free: make(chan *batch, 2),
		done: make(chan struct{}), trials: make([]event.TrialInfo, n), starts: make([]int32, n+1), nagent: len(info.Agents)}
	lw.src[0].Source = event.SourceEnv
	lw.free <- new(batch)
	lw.free <- new(batch)
	go lw.loop()
	return lw
}

// take returns an empty batch, waiting while the goroutine holds both.
func (lw *logWriter) take() *batch { return <-lw.free }

// give hands b to the goroutine.
func (lw *logWriter) give(b *batch) { lw.full <- b }

// failed returns the writer's first error, if any.
func (lw *logWriter) failed() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err
}

// close hands the last batch over, waits for the goroutine to write everything and
// end, and closes the log.
func (lw *logWriter) close(last *batch) error {
	lw.full <- last
	close(lw.full)
	<-lw.done
	err := lw.failed()
	if cerr := lw.w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrLog, cerr)
	}
	if cerr := lw.ds.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrLog, cerr)
	}
	return err
}

func (lw *logWriter) loop() {
	defer close(lw.done)
	// The datalog writer takes a context because it is a event.Sink; it does not
	// block on anything a context could cancel.
	ctx := context.Background()
	for b := range lw.full {
		if lw.failed() == nil {
			lw.write(ctx, b)
		}
		b.reset()
		lw.free <- b
	}
}

// byCopy sets lw.order to the indices of b's ops, copy by copy, each copy's in their
// order (a counting sort).
func (lw *logWriter) byCopy(b *batch) {
	clear(lw.starts)
	for k := range b.ops {
		lw.starts[b.ops[k].copy+1]++
	}
	for i := 1; i < len(lw.starts); i++ {
		lw.starts[i] += lw.starts[i-1]
	}
	lw.order = slices.Grow(lw.order[:0], len(b.ops))[:len(b.ops)]
	for k := range b.ops {
		c := b.ops[k].copy
		lw.order[lw.starts[c]] = int32(k)
		lw.starts[c]++
	}
}

// write hands the events of b's ops to the writer, copy by copy, stopping at its
// first error.
func (lw *logWriter) write(ctx context.Context, b *batch) {
	lw.byCopy(b)
	for _, k := range lw.order {
		o := &b.ops[k]
		t := &lw.trials[o.copy]
		var err error
		switch o.kind {
		case opBegin:
			*t = lw.info
			t.ID, t.Index, t.Seed = lw.run+"-"+strconv.Itoa(o.index), o.index, o.seed
			err = lw.setState(ctx, t, event.Running, nil)
		case opRow:
			s := &lw.step
			s.Episode, s.Tick, s.Index = 0, int(o.tick), o.index
			s.Agent, s.AgentID, s.ParentID = t.Agents[o.agent].Name, o.agentID, o.parentID
			s.Start, s.Acting = o.start, o.acting
			s.Obs, s.Mask = b.obs[o.obs[0]:o.obs[1]], nil
			if o.mask[0] >= 0 {
				s.Mask = b.masks[o.mask[0]:o.mask[1]]
			}
			s.Action.Int = o.action
			lw.src[0].Value = o.reward
			s.Reward, s.Sources = o.reward, lw.src[:]
			s.Terminated, s.Truncated, s.SpanTicks = o.term, o.trunc, int(o.span)
			lw.ev = event.Event{Kind: event.KindStep, Trial: t.ID, Step: s}
			err = lw.w.Handle(ctx, &lw.ev)
		case opEnd:
			f := b.floats[o.floats[0]:o.floats[1]]
			lw.epEv = event.EpisodeEvent{Seed: t.Seed, End: true, Ticks: int(o.tick), Success: o.success,
				Returns: f[:lw.nagent:lw.nagent]}
			if len(f) > lw.nagent {
				lw.epEv.Metrics = f[lw.nagent:]
			}
			lw.ev = event.Event{Kind: event.KindEpisode, Trial: t.ID, Episode: &lw.epEv}
			if err = lw.w.Handle(ctx, &lw.ev); err == nil {
				err = lw.setState(ctx, t, event.Ended, nil)
			}
		case opState:
			err = lw.setState(ctx, t, o.state, o.err)
		}
		if err != nil {
			lw.mu.Lock()
			lw.err = fmt.Errorf("%w: %w", ErrLog, err)
			lw.mu.Unlock()
			return
		}
	}
}

func (lw *logWriter) setState(ctx context.Context, t *event.TrialInfo, s event.State, err error) error {
	lw.state = event.StateChange{Trial: t.ID, State: s, Err: err, Info: t}
	lw.ev = event.Event{Kind: event.KindState, Trial: t.ID, State: &lw.state}
	return lw.w.Handle(ctx, &lw.ev)
}
