package vector

import "fmt"

// Option configures New and NewMulti.
type Option func(*config)

type config struct {
	workers   int
	finalInfo bool
}

// WithWorkers spreads the copies over w workers, each owning a contiguous range of
// about N/w copies: worker 0 is the goroutine that calls Reset or Step, and the
// constructor starts w-1 goroutines for the others, which Close stops. 0 and 1 (the
// default) mean synchronous: no goroutine, every copy stepped by the caller. w above
// the number of copies is lowered to it; negative w is an error. The results do not
// depend on w.
func WithWorkers(w int) Option { return func(c *config) { c.workers = w } }

// WithFinalInfo makes the vector call Info on each copy whose episode ends, before it
// resets it, and keep the value (Env.FinalInfo, Multi.FinalInfo). Info may allocate, so
// it is off by default (false): the step path then allocates nothing.
func WithFinalInfo(on bool) Option { return func(c *config) { c.finalInfo = on } }

func newConfig(n int, opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.workers < 0 {
		return c, fmt.Errorf("vector: %d workers; want 0 (synchronous) or more", c.workers)
	}
	c.workers = min(max(c.workers, 1), max(n, 1))
	return c, nil
}
