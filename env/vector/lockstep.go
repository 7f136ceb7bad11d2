package vector

import (
	"context"
	"errors"
	"fmt"
)

// lockstep is what Env and Multi share: the worker pool, each copy's error of the call
// in progress, what the workers read of that call, and the vector's life (reset,
// broken, closed).
type lockstep struct {
	pool *pool
	errs []error // copy i's error in the call in progress

	// The call in progress, read by the workers.
	op   Op
	base uint64 // the seed of the last Reset
	done <-chan struct{}

	ready, closed bool

	seeds    []uint64
	episodes []int
}

func newLockstep(n, workers int, run func(w, lo, hi int)) lockstep {
	return lockstep{pool: newPool(n, workers, run), errs: make([]error, n), seeds: make([]uint64, n), episodes: make([]int, n)}
}

// Seeds returns the seed each copy's current episode was reset with: EpisodeSeed(seed,
// i, Episodes()[i]).
func (l *lockstep) Seeds() []uint64 { return l.seeds }

// Episodes returns the index k of each copy's current episode: 0 after Reset, plus one
// for each auto-reset.
func (l *lockstep) Episodes() []int { return l.episodes }

// start begins a call of op: it returns the error of a vector that cannot take it
// (usable), else bad, the error of the call's arguments, if any, else ctx.Err() if ctx
// is already done; in all these cases the call changes nothing. Otherwise it returns
// ctx's Done channel, for do.
func (l *lockstep) start(ctx context.Context, op Op, bad error) (<-chan struct{}, error) {
	if err := l.usable(op); err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	return begin(ctx)
}

// usable returns the error of a call of op on a vector that cannot take it: ErrClosed
// after Close; ErrNotReset for any call but a Reset before the first Reset and after
// a failure.
func (l *lockstep) usable(op Op) error {
	switch {
	case l.closed:
		return ErrClosed
	case op != OpReset && !l.ready:
		return ErrNotReset
	}
	return nil
}

// begin returns ctx's Done channel for a call that may start, or ctx.Err() when ctx is
// already done: the call then changes nothing.
func begin(ctx context.Context) (<-chan struct{}, error) {
	done := ctx.Done()
	if done != nil {
		select {
		case <-done:
			return nil, ctx.Err()
		default:
		}
	}
	return done, nil
}

// do runs op over every copy, on the workers, and returns when all are done; done is
// ctx's Done channel, which the workers check before each copy.
func (l *lockstep) do(op Op, done <-chan struct{}) {
	l.op, l.done = op, done
	l.pool.do()
	l.done = nil
}

// outcome turns the workers' reports of the last do into its error, in copy order,
// and breaks the vector (ErrNotReset until the next Reset) on failure.
func (l *lockstep) outcome(ctx context.Context) error {
	failed, cancelled := l.pool.outcome()
	if !failed && !cancelled {
		return nil
	}
	l.ready = false
	var errs []error
	for i, err := range l.errs {
		if err != nil {
			errs = append(errs, err)
			l.errs[i] = nil
		}
	}
	if cancelled {
		errs = append(errs, fmt.Errorf("vector: %v cut short: %w", l.op, ctx.Err()))
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// close stops the workers and waits for them to exit. It is idempotent.
func (l *lockstep) close() {
	l.closed = true
	l.pool.close()
}
