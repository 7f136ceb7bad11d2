package fastlane

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/batonrl/baton/env/vector"
)

// ErrCopyState: a copy was sent an action, or reset, while it is stepping, before its
// first reset, or after it failed; or Recv was called with no copy stepping that could
// complete its batch.
var ErrCopyState = errors.New("fastlane: copy not ready")

// The states of a copy, as the caller's goroutine sees them.
const (
	copyNew     = iota // never reset
	copyBusy           // queued, stepping, or done and not yet received
	copyHeld           // received: the caller may send it an action
	copyFailed         // its step or reset failed; it needs a reset
	copyPending        // done and taken from the queue, in a batch not yet complete
)

// async is what Async and AsyncMulti share: the copies' states, the queues and the
// workers; its methods are theirs. The kinds fill in stepOne (step copy i with its
// action, in a worker), resetOne (reset copy i into its next episode, in a worker),
// act (check an action for copy i, in the caller) and gather (write the pending
// copies into the caller's batch).
//
// A copy's rows are written by the worker that steps it and read by the caller after
// the copy's id has come back through ready, which orders the two.
type async struct {
	n, batch int
	base     uint64
	// Written by the caller before a copy is queued, read by its worker.
	actions  []int64
	resets   []bool
	episodes []int
	// Written by the worker, read by the caller once the copy is back.
	errs []error

	state   []uint8
	busy    int
	pending []int

	jobs, ready chan int
	quit        chan struct{}
	wg          sync.WaitGroup
	timer       *time.Timer
	closed      bool

	stepOne  func(i int) error
	resetOne func(i int) error
	act      func(i int, a int64) error
	gather   func(pending []int)
}

// asyncArgs checks the counts of NewAsync and NewAsyncMulti and returns workers and
// batch, their zeros replaced by their defaults (1 and n).
func asyncArgs(n, workers, batch int) (int, int, error) {
	if batch == 0 {
		batch = n
	}
	if workers == 0 {
		workers = 1
	}
	switch {
	case n < 1:
		return 0, 0, fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	case batch < 1 || batch > n:
		return 0, 0, fmt.Errorf("%w: batch of %d for %d copies; want 1 to %d", ErrArgument, batch, n, n)
	case workers < 1:
		return 0, 0, fmt.Errorf("%w: %d workers; want 0 or more", ErrArgument, workers)
	}
	return workers, batch, nil
}

// start allocates the state of n copies and starts the workers.
func (a *async) start(n, workers, batch int) {
	a.n, a.batch = n, batch
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
}

// Len returns the number of copies.
func (a *async) Len() int { return a.n }

// BatchSize returns the number of copies that Recv returns.
func (a *async) BatchSize() int { return a.batch }

// Reset waits for the copies still stepping (dropping their results and those
// received into an incomplete batch) and queues a reset of every copy, copy i with
// vector.EpisodeSeed(seed, i, 0); Recv returns them as they come. It returns
// ctx.Err() if ctx ends while it waits (the copies it waited for are dropped).
func (a *async) Reset(ctx context.Context, seed uint64) error {
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
func (a *async) ResetCopies(ids []int64) error {
	if err := a.ids(ids, true); err != nil {
		return err
	}
	for _, i := range ids {
		a.queue(int(i), true)
	}
	return nil
}

// Send queues actions[j] for copy ids[j] (for the agent acting in it), each a copy
// that Recv returned and that has not been sent an action since, and returns at once.
// Nothing is queued when an id is bad (ErrArgument out of range or twice,
// ErrCopyState not received) or an action is (an *ActionError naming the copy and
// the agent, checked against the copy's mask).
func (a *async) Send(actions, ids []int64) error {
	if err := sameSize("actions", len(actions), len(ids)); err != nil {
		return err
	}
	if err := a.ids(ids, false); err != nil {
		return err
	}
	for j, id := range ids {
		if err := a.act(int(id), actions[j]); err != nil {
			return err
		}
	}
	for j, id := range ids {
		a.actions[id] = actions[j]
		a.queue(int(id), false)
	}
	return nil
}

// ids checks ids for Send (reset false) or ResetCopies (true), marking the states it
// sees to find duplicates and restoring them.
func (a *async) ids(ids []int64, reset bool) error {
	if a.closed {
		return vector.ErrClosed
	}
	const seen = 0x80
	var err error
	marked := 0
	for _, id := range ids {
		if id < 0 || id >= int64(a.n) {
			err = fmt.Errorf("%w: copy %d of %d copies", ErrArgument, id, a.n)
			break
		}
		i := int(id)
		switch s := a.state[i]; {
		case s == copyHeld || (reset && s == copyFailed):
			a.state[i] |= seen
			marked++
			continue
		case s&seen != 0:
			err = fmt.Errorf("%w: copy %d given twice", ErrArgument, i)
		case s == copyNew:
			err = fmt.Errorf("%w: copy %d: not reset (Reset first)", ErrCopyState, i)
		case s == copyFailed:
			err = fmt.Errorf("%w: copy %d: failed; reset it first", ErrCopyState, i)
		default:
			err = fmt.Errorf("%w: copy %d: still stepping (Recv it first)", ErrCopyState, i)
		}
		break
	}
	for _, id := range ids[:marked] {
		a.state[id] &^= seen
	}
	return err
}

func (a *async) queue(i int, reset bool) {
	a.state[i] = copyBusy
	a.resets[i] = reset
	a.errs[i] = nil
	a.busy++
	a.jobs <- i
}

// Recv waits up to wait for the batch: the first BatchSize copies whose step or reset
// is done, in the order they finished (with the ones received by earlier calls whose
// batch was not complete). When it is complete, Recv writes it into the caller's
// batch and returns true; when wait runs out first, it returns false and keeps what
// it received for the next call. So a caller in another language waits in slices,
// handling its interrupts between them.
//
// A copy that failed ends the wait: Recv returns its *vector.CopyError and keeps the
// others it received; the copy needs ResetCopies. Recv returns ErrCopyState when
// fewer copies are stepping than the batch lacks (it would wait forever), and
// ctx.Err() when ctx ends.
func (a *async) Recv(ctx context.Context, wait time.Duration) (bool, error) {
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
	a.gather(a.pending)
	for _, i := range a.pending {
		a.state[i] = copyHeld
	}
	a.pending = a.pending[:0]
	return true, nil
}

// Close stops the workers, after the steps in progress, and waits for them. It is
// idempotent; the other methods return vector.ErrClosed afterwards.
func (a *async) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	close(a.quit)
	a.wg.Wait()
	a.timer.Stop()
	return nil
}

func (a *async) work() {
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
func (a *async) run(i int) (err error) {
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
		return a.resetOne(i)
	}
	return a.stepOne(i)
}
