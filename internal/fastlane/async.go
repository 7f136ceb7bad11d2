package fastlane

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/runners"
)

// ErrCopyState: a copy was sent an action, or reset, while it is stepping, before its
// first reset, or after it failed; or Recv was called with no copy stepping that could
// complete its batch.
var ErrCopyState = errors.New("fastlane: copy not ready")

// AsyncBatch is where Recv writes a batch of B copies: their ids, and the rows of
// their results in that order (B rows of ObsDim for Obs and FinalObs, of MaskLen for
// Masks, nil without a mask; B elements for the rest). As with vector.Buffers, the
// memory may be the caller's C memory; it must stay valid until the Async is closed.
type AsyncBatch struct {
	IDs                   []int64
	Obs, FinalObs         []float32
	Masks                 []bool
	Rewards               []float64
	Terminated, Truncated []bool
}

// The states of a copy, as the caller's goroutine sees them.
const (
	copyNew     = iota // never reset
	copyBusy           // queued, stepping, or done and not yet received
	copyHeld           // received: the caller may send it an action
	copyFailed         // its step or reset failed; it needs a reset
	copyPending        // done and taken from the queue, in a batch not yet complete
)

// Async is N copies of a single-agent environment stepped in the background by
// worker goroutines, in the manner of EnvPool's and PufferLib's asynchronous mode:
// Send queues actions for some copies and returns at once; Recv waits for the first
// B (the batch size) copies whose step is done, in the order they finished, and
// writes their ids and results into the caller's AsyncBatch. Reset queues a reset of
// every copy.
//
// Each copy resets itself when its episode ends, in the same step, as vector.Env does
// (its final observation in the batch's FinalObs row), and its k-th episode has the
// seed vector.EpisodeSeed(seed, i, k): a copy's trajectory depends on its seed and
// its actions only, never on timing or on the number of workers, though the order
// in which copies come back does.
//
// A copy that fails (an error, a panic, recovered) comes back as a Recv error naming
// it (a *vector.CopyError); the other copies go on, and the failed one waits for
// ResetCopies. An Async is not safe for concurrent use: one goroutine calls its
// methods (Handles.Do makes sure of it). Close stops the workers and waits for them.
type Async struct {
	layout     Layout
	agent      *AgentLayout
	n, dim, ml int
	envs       []env.Env
	direct     []env.DiscreteStepper
	base       uint64

	// Each copy's rows, written by the worker that steps it and read by the caller
	// after the copy's id has come back through ready (which orders the two).
	obs, final []float32
	masks      []bool
	rewards    []float64
	term       []bool
	trunc      []bool
	episodes   []int
	actions    []int64
	resets     []bool
	errs       []error

	state   []uint8
	busy    int
	pending []int
	out     AsyncBatch
	batch   int

	jobs, ready chan int
	quit        chan struct{}
	wg          sync.WaitGroup
	timer       *time.Timer
	closed      bool
}

// NewAsync makes n copies of the named single-agent environment stepped by workers
// goroutines (0 means 1), whose Recv returns batches of batch copies (0 means n)
// written into out, whose lengths must fit batch copies. The copies must be reset
// (Reset) before their first Send.
func NewAsync(reg *runners.Registry, name string, config []byte, n, workers, batch int, out AsyncBatch) (*Async, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	if l.Kind != KindSingle {
		return nil, fmt.Errorf("%w: %s is a multi-agent environment (agents %s); the asynchronous mode takes single-agent ones", ErrArgument, name, names(l))
	}
	if batch == 0 {
		batch = n
	}
	if workers == 0 {
		workers = 1
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	case batch < 1 || batch > n:
		return nil, fmt.Errorf("%w: batch of %d for %d copies; want 1 to %d", ErrArgument, batch, n, n)
	case workers < 1:
		return nil, fmt.Errorf("%w: %d workers; want 0 or more", ErrArgument, workers)
	}
	a := &Async{layout: l, n: n, batch: batch, out: out}
	a.agent = &a.layout.Agents[0]
	a.dim, a.ml = a.agent.ObsDim, a.agent.MaskLen
	if err := errors.Join(
		sameSize("ids", len(out.IDs), batch), sameSize("obs", len(out.Obs), batch*a.dim),
		sameSize("final_obs", len(out.FinalObs), batch*a.dim), sameSize("masks", len(out.Masks), batch*a.ml),
		sameSize("rewards", len(out.Rewards), batch), sameSize("terminated", len(out.Terminated), batch),
		sameSize("truncated", len(out.Truncated), batch)); err != nil {
		return nil, err
	}
	a.envs = make([]env.Env, n)
	direct := true
	for i := range n {
		m, err := f.NewEnv(runners.EnvOptions{})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: copy %d: %w", ErrConfig, name, i, err)
		}
		e, ok := single(m)
		if !ok {
			return nil, fmt.Errorf("%w: %s: copy %d is not a single-agent environment", ErrConfig, name, i)
		}
		a.envs[i] = e
		_, ok = e.(env.DiscreteStepper)
		direct = direct && ok
	}
	if direct {
		a.direct = make([]env.DiscreteStepper, n)
		for i, e := range a.envs {
			a.direct[i] = e.(env.DiscreteStepper)
		}
	}
	a.obs, a.final = make([]float32, n*a.dim), make([]float32, n*a.dim)
	a.masks = make([]bool, n*a.ml)
	a.rewards, a.term, a.trunc = make([]float64, n), make([]bool, n), make([]bool, n)
	a.episodes, a.actions, a.resets = make([]int, n), make([]int64, n), make([]bool, n)
	a.errs, a.state = make([]error, n), make([]uint8, n)
	a.pending = make([]int, 0, batch)
	a.jobs, a.ready, a.quit = make(chan int, n), make(chan int, n), make(chan struct{})
	a.timer = time.NewTimer(time.Hour)
	a.timer.Stop()
	a.wg.Add(workers)
	for range workers {
		go a.work()
	}
	return a, nil
}

// Layout returns the environment's layout.
func (a *Async) Layout() Layout { return a.layout }

// Len returns the number of copies.
func (a *Async) Len() int { return a.n }

// BatchSize returns the number of copies that Recv returns.
func (a *Async) BatchSize() int { return a.batch }

// Agent returns the agent's name, for Failures.
func (a *Async) Agent(int) string { return a.agent.Name }

// Reset waits for the copies still stepping (dropping their results and those
// received into an incomplete batch) and queues a reset of every copy, copy i with
// vector.EpisodeSeed(seed, i, 0); Recv returns them as they come. It returns
// ctx.Err() if ctx ends while it waits (the copies it waited for are dropped).
func (a *Async) Reset(ctx context.Context, seed uint64) error {
	if a.closed {
		return vector.ErrClosed
	}
	for a.busy > 0 {
		select {
		case i := <-a.ready:
			a.busy--
			a.state[i] = copyHeld
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, i := range a.pending {
		a.state[i] = copyHeld
	}
	a.pending = a.pending[:0]
	a.base = seed
	for i := range a.n {
		a.episodes[i] = -1
		a.queue(i, true)
	}
	return nil
}

// ResetCopies queues a reset of the given copies, each received (or failed) and not
// stepping, into its next episode: copy i's k-th reset since Reset has the seed
// vector.EpisodeSeed(seed, i, k). Bad ids change nothing: an id out of range or given
// twice wraps ErrArgument, a copy that is stepping or was never reset ErrCopyState.
func (a *Async) ResetCopies(ids []int64) error {
	if err := a.check(ids, true); err != nil {
		return err
	}
	for _, i := range ids {
		a.queue(int(i), true)
	}
	return nil
}

// Send queues actions[j] for copy ids[j], each a copy that Recv returned and that has
// not been sent an action since, and returns at once. Nothing is queued when an id is
// bad (ErrArgument out of range or twice, ErrCopyState not received) or an action is
// (an *ActionError naming the copy, checked against the copy's mask).
func (a *Async) Send(actions, ids []int64) error {
	if err := sameSize("actions", len(actions), len(ids)); err != nil {
		return err
	}
	if err := a.check(ids, false); err != nil {
		return err
	}
	for j, id := range ids {
		i := int(id)
		var mask []bool
		if a.ml > 0 {
			mask = a.masks[i*a.ml : (i+1)*a.ml]
		}
		if err := a.agent.check(i, actions[j], mask); err != nil {
			return err
		}
	}
	for j, id := range ids {
		a.actions[id] = actions[j]
		a.queue(int(id), false)
	}
	return nil
}

// check checks ids for Send (reset false) or ResetCopies (true), restoring the states
// it marks to find duplicates.
func (a *Async) check(ids []int64, reset bool) error {
	if a.closed {
		return vector.ErrClosed
	}
	var err error
	seen := 0
	for _, id := range ids {
		if id < 0 || id >= int64(a.n) {
			err = fmt.Errorf("%w: copy %d of %d copies", ErrArgument, id, a.n)
			break
		}
		i := int(id)
		switch s := a.state[i]; {
		case s == copyHeld || (reset && s == copyFailed):
			a.state[i] |= 0x80
			seen++
			continue
		case s&0x80 != 0:
			err = fmt.Errorf("%w: copy %d given twice", ErrArgument, i)
		case s == copyNew:
			err = fmt.Errorf("%w: copy %d: not reset (Reset first)", ErrCopyState, i)
		case s == copyFailed:
			err = fmt.Errorf("%w: copy %d (agent %s): failed; reset it first", ErrCopyState, i, a.agent.Name)
		default:
			err = fmt.Errorf("%w: copy %d (agent %s): still stepping (Recv it first)", ErrCopyState, i, a.agent.Name)
		}
		break
	}
	for _, id := range ids[:seen] {
		a.state[id] &^= 0x80
	}
	return err
}

func (a *Async) queue(i int, reset bool) {
	a.state[i] = copyBusy
	a.resets[i] = reset
	a.errs[i] = nil
	a.busy++
	a.jobs <- i
}

// Recv waits up to wait for the batch: the first BatchSize copies whose step or reset
// is done, in the order they finished (with the ones received by earlier calls whose
// batch was not complete). When it is complete, Recv writes it into the AsyncBatch
// and returns true; when wait runs out first, it returns false and keeps what it
// received for the next call. So a caller in another language waits in slices,
// handling its interrupts between them.
//
// A copy that failed ends the wait: Recv returns its *vector.CopyError and keeps the
// others it received; the copy needs ResetCopies. Recv returns ErrCopyState when
// fewer copies are stepping than the batch lacks (it would wait forever), and ctx.Err()
// when ctx ends.
func (a *Async) Recv(ctx context.Context, wait time.Duration) (bool, error) {
	if a.closed {
		return false, vector.ErrClosed
	}
	if len(a.pending)+a.busy < a.batch {
		return false, fmt.Errorf("%w: a batch of %d, and %d copies received and %d stepping", ErrCopyState, a.batch, len(a.pending), a.busy)
	}
	armed := false
	defer func() {
		if armed {
			a.timer.Stop()
		}
	}()
	for len(a.pending) < a.batch {
		var i int
		select {
		case i = <-a.ready:
		default:
			if !armed {
				if wait <= 0 {
					return false, nil
				}
				a.timer.Reset(wait)
				armed = true
			}
			select {
			case i = <-a.ready:
			case <-a.timer.C:
				armed = false
				return false, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		a.busy--
		if err := a.errs[i]; err != nil {
			a.state[i] = copyFailed
			return false, err
		}
		a.state[i] = copyPending
		a.pending = append(a.pending, i)
	}
	a.gather()
	return true, nil
}

// gather writes the pending copies into the batch.
func (a *Async) gather() {
	o, d, m := &a.out, a.dim, a.ml
	for r, i := range a.pending {
		o.IDs[r] = int64(i)
		copy(o.Obs[r*d:(r+1)*d], a.obs[i*d:(i+1)*d])
		copy(o.FinalObs[r*d:(r+1)*d], a.final[i*d:(i+1)*d])
		if m > 0 {
			copy(o.Masks[r*m:(r+1)*m], a.masks[i*m:(i+1)*m])
		}
		o.Rewards[r], o.Terminated[r], o.Truncated[r] = a.rewards[i], a.term[i], a.trunc[i]
		a.state[i] = copyHeld
	}
	a.pending = a.pending[:0]
}

// Close stops the workers, after the steps in progress, and waits for them. It is
// idempotent; the other methods return vector.ErrClosed afterwards.
func (a *Async) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	close(a.quit)
	a.wg.Wait()
	a.timer.Stop()
	return nil
}

func (a *Async) work() {
	defer a.wg.Done()
	for {
		select {
		case <-a.quit:
			return
		case i := <-a.jobs:
			a.errs[i] = a.run(i)
			a.ready <- i
		}
	}
}

// run resets or steps copy i, a panic recovered into a *vector.CopyError.
func (a *Async) run(i int) (err error) {
	op := vector.OpStep
	if a.resets[i] {
		op = vector.OpReset
	}
	defer func() {
		if r := recover(); r != nil {
			err = &vector.CopyError{Copy: i, Op: op, Err: &vector.PanicError{Value: r, Stack: debug.Stack()}}
		}
	}()
	if op == vector.OpReset {
		a.rewards[i], a.term[i], a.trunc[i] = 0, false, false
		return a.restart(i)
	}
	d := a.dim
	obs := a.obs[i*d : (i+1)*d : (i+1)*d]
	var mask []bool
	if m := a.ml; m > 0 {
		mask = a.masks[i*m : (i+1)*m : (i+1)*m]
	}
	var r float64
	var term, trunc bool
	if a.direct != nil {
		r, term, trunc, err = a.direct[i].StepDiscrete(a.actions[i], obs, mask)
		if err != nil {
			return &vector.CopyError{Copy: i, Op: op, Err: err}
		}
	} else {
		st, err := a.envs[i].Step(agent.Discrete(a.actions[i]))
		if err != nil {
			return &vector.CopyError{Copy: i, Op: op, Err: err}
		}
		if err := a.put(i, op, st.Obs, st.Mask); err != nil {
			return err
		}
		r, term, trunc = st.Reward, st.Terminated, st.Truncated
	}
	a.rewards[i], a.term[i], a.trunc[i] = r, term, trunc
	if term || trunc {
		copy(a.final[i*d:(i+1)*d], obs)
		return a.restart(i)
	}
	return nil
}

// restart resets copy i into its next episode.
func (a *Async) restart(i int) error {
	k := a.episodes[i] + 1
	st, err := a.envs[i].Reset(vector.EpisodeSeed(a.base, i, k))
	if err != nil {
		return &vector.CopyError{Copy: i, Op: vector.OpReset, Err: err}
	}
	a.episodes[i] = k
	return a.put(i, vector.OpReset, st.Obs, st.Mask)
}

func (a *Async) put(i int, op vector.Op, obs []float32, mask []bool) error {
	d, m := a.dim, a.ml
	if len(obs) != d || len(mask) != m {
		return &vector.CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: observation of %d (want %d), mask of %d (want %d)", vector.ErrShape, len(obs), d, len(mask), m)}
	}
	copy(a.obs[i*d:(i+1)*d], obs)
	copy(a.masks[i*m:(i+1)*m], mask)
	return nil
}
