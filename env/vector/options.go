package vector

import (
	"fmt"
	"time"

	"github.com/batonrl/baton/env"
)

// Option configures New and NewMulti. Options follow the one style of baton's packages
// (grpc-go's): an Option is a value that only this package's With functions make;
// the constructor applies them in the order given and ignores a nil one; an option
// left out, or given its zero value, means the default its With function documents;
// a bad value makes the constructor fail with an error wrapping the package's
// sentinel (here ErrOption).
type Option interface{ apply(*config) }

// optionFunc adapts a function to an Option.
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	workers   int
	finalInfo bool
	// buffers are the caller's (WithBuffers); nil means New allocates.
	buffers *Buffers
	// ended is WithEpisodeEnd's function; nil for none.
	ended func(i int, final env.Turn)
	// timing is WithTiming's; nil for none.
	timing *Timing
}

// WithWorkers spreads the copies over w workers, each owning a contiguous range of
// about N/w copies: worker 0 is the goroutine that calls Reset or Step, and the
// constructor starts w-1 goroutines for the others, which Close stops. 0 and 1 (the
// default) mean synchronous: no goroutine, every copy stepped by the caller. w above
// the number of copies is lowered to it; negative w is an error (ErrOption). The
// results do not depend on w.
func WithWorkers(w int) Option { return optionFunc(func(c *config) { c.workers = w }) }

// WithFinalInfo makes the vector call Info on each copy whose episode ends, before it
// resets it, and keep the value (Env.FinalInfo, Multi.FinalInfo). Info may allocate, so
// it is off by default (false): the step path then allocates nothing.
func WithFinalInfo(on bool) Option { return optionFunc(func(c *config) { c.finalInfo = on }) }

// WithEpisodeEnd makes a Multi call f with copy i and the Turn that ended its episode,
// before it resets the copy, on the goroutine that stepped the copy (a worker's,
// with WithWorkers): the Turn is the environment's own, whose typed observations
// (hrl.Obs) are valid during the call only, as they are not in Multi.Stepped once the
// copy was reset. It is how a caller judges an episode's success or metrics
// (registry.Entry.Success, Metrics) from a vector. f must be safe to call for several
// copies at once, must not keep the Turn, and must not call the vector. nil (the
// default) calls nothing. New, whose copies end their episodes with an env.Step
// rather than a Turn, rejects it (ErrOption).
func WithEpisodeEnd(f func(i int, final env.Turn)) Option {
	return optionFunc(func(c *config) { c.ended = f })
}

// Timing is where a vector adds up, with WithTiming, the wall time it spends in the
// phases it runs over its copies (stepping and resetting them, gathering the acting
// observations into groups, a Multi's per-copy policies): the work it spreads over
// its workers. Without workers, that is the work itself: the rest of a tick, the
// part a caller spends outside these phases (regrouping, a batched policy's call,
// whatever the caller does between steps), is the serial fraction that bounds the
// speed-up of more workers by Amdahl's law.
type Timing struct {
	// Parallel is the time spent in those phases; Phases counts them.
	Parallel time.Duration
	Phases   int
}

// WithTiming makes the vector add to t the time of each phase it runs over its copies
// (see Timing), reading the clock twice per phase. t is written by the goroutine that
// calls the vector, during its calls; read it between them. nil (the default) times
// nothing.
func WithTiming(t *Timing) Option { return optionFunc(func(c *config) { c.timing = t }) }

func newConfig(n int, opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.workers < 0 {
		return c, fmt.Errorf("%w: WithWorkers(%d): want 0 (synchronous) or more", ErrOption, c.workers)
	}
	c.workers = min(max(c.workers, 1), max(n, 1))
	if c.buffers != nil && c.buffers.zero() {
		c.buffers = nil
	}
	return c, nil
}
