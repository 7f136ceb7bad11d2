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
// The queues are two slices under a mutex: todo, the copies queued, which the
// workers take in chunks, and done, the copies stepped in the order they finished,
// which Recv takes; a token on work wakes a worker, one on note wakes Recv. So a
// batch costs a few lock operations, not a channel operation per copy. A copy's rows
// are written by the worker that steps it before it appends the copy to done, and
// read by the caller after it takes it from there, which orders the two.
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

	mu          sync.Mutex
	todo, done  []int // guarded by mu: the queued copies and the finished ones,
	first, next int   // from todo[first] and done[next] on
	workers     int
	work, note  chan struct{}
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
	a.todo, a.done, a.workers = make([]int, 0, n), make([]int, 0, n), workers
	a.work, a.note, a.quit = make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	a.timer = time.NewTimer(time.Hour)
	a.timer.Stop()
	a.wg.Add(workers)
	for range workers {
		go a.loop()
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
	a.mu.Lock()
	for _, i := range a.todo[a.first:] { // not started: drop them
		a.busy--
		a.state[i] = copyHeld
	}
	a.todo, a.first = a.todo[:0], 0
	a.mu.Unlock()
	for {
		a.mu.Lock()
		for _, i := range a.done[a.next:] {
			a.busy--
			a.state[i] = copyHeld
		}
		a.done, a.next = a.done[:0], 0
		a.mu.Unlock()
		if a.busy == 0 {
			break
		}
		select {
		case <-a.note:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, i := range a.pending {
		a.state[i] = copyHeld
	}
	a.pending = a.pending[:0]
	a.base = seed
	a.mu.Lock()
	for i := range a.n {
		a.episodes[i] = -1
		a.queue(i, true)
	}
	a.mu.Unlock()
	a.wake()
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
	a.mu.Lock()
	for _, i := range ids {
		a.queue(int(i), true)
	}
	a.mu.Unlock()
	a.wake()
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
	a.mu.Lock()
	for j, id := range ids {
		a.actions[id] = actions[j]
		a.queue(int(id), false)
	}
	a.mu.Unlock()
	a.wake()
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

// queue appends copy i to todo; the caller holds mu, and wakes a worker after.
func (a *async) queue(i int, reset bool) {
	a.state[i] = copyBusy
	a.resets[i] = reset
	a.errs[i] = nil
	a.busy++
	a.todo = append(a.todo, i)
}

// wake wakes a worker, unless one is being woken already.
func (a *async) wake() {
	select {
	case a.work <- struct{}{}:
	default:
	}
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
	for {
		if err := a.take(); err != nil {
			return false, err
		}
		if len(a.pending) == a.batch {
			break
		}
		if !armed {
			if wait <= 0 {
				return false, nil
			}
			a.timer.Reset(wait)
			armed = true
		}
		select {
		case <-a.note:
		case <-a.timer.C:
			armed = false
			if err := a.take(); err != nil || len(a.pending) < a.batch {
				return false, err
			}
		case <-ctx.Done():
			return false, ctx.Err()
		}
		if len(a.pending) == a.batch {
			break
		}
	}
	a.gather(a.pending)
	for _, i := range a.pending {
		a.state[i] = copyHeld
	}
	a.pending = a.pending[:0]
	return true, nil
}

// take moves finished copies from done to pending, until the batch is complete; a
// copy that failed stops it, with its error.
func (a *async) take() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.next < len(a.done) && len(a.pending) < a.batch {
		i := a.done[a.next]
		a.next++
		a.busy--
		if err := a.errs[i]; err != nil {
			a.state[i] = copyFailed
			return err
		}
		a.state[i] = copyPending
		a.pending = append(a.pending, i)
	}
	if a.next == len(a.done) {
		a.done, a.next = a.done[:0], 0
	}
	return nil
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

// chunk bounds the copies a worker takes at once.
const chunk = 64

func (a *async) loop() {
	defer a.wg.Done()
	mine := make([]int, 0, chunk)
	for {
		select {
		case <-a.quit:
			return
		case <-a.work:
		}
		for {
			a.mu.Lock()
			k := min(len(a.todo)-a.first, max(1, (len(a.todo)-a.first)/a.workers), chunk)
			mine = append(mine[:0], a.todo[a.first:a.first+k]...)
			a.first += k
			if a.first == len(a.todo) {
				a.todo, a.first = a.todo[:0], 0
			} else {
				a.wake() // more for another worker
			}
			a.mu.Unlock()
			if k == 0 {
				break
			}
			for _, i := range mine {
				a.errs[i] = a.run(i)
			}
			a.mu.Lock()
			a.done = append(a.done, mine...)
			a.mu.Unlock()
			select {
			case a.note <- struct{}{}:
			default:
			}
			select {
			case <-a.quit:
				return
			default:
			}
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
