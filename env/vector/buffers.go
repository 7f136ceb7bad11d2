package vector

import (
	"fmt"
	"strings"
)

// Buffers are the buffers of an Env that its caller supplies with WithBuffers instead
// of letting New allocate them: N rows of ObsDim for Obs and FinalObs, N rows of
// MaskLen for Masks (nil when the agent has no mask), N elements for Rewards,
// Terminated and Truncated. The Env writes every Reset's and Step's results into them
// and its accessors return them (Obs returns Buffers.Obs, and so on).
//
// The memory may be Go's, or memory that Go does not manage: the arrays of a numpy
// process that steps the vector through a C call (the fast lane, Python's
// baton.vector), made into slices with unsafe.Slice. Either way the caller must keep
// it alive, and must not write to it while a Reset or Step runs, until the Env is
// closed and no longer used.
type Buffers struct {
	Obs, FinalObs         []float32
	Masks                 []bool
	Rewards               []float64
	Terminated, Truncated []bool
}

// WithBuffers makes New write into the caller's buffers b rather than allocate its
// own (see Buffers); New fails with an error wrapping ErrOption, naming the buffers,
// when one has the wrong length. The zero Buffers means New allocates them (the
// default). NewMulti rejects it (ErrOption): a Multi's groups change length with
// every tick.
func WithBuffers(b Buffers) Option {
	return optionFunc(func(c *config) { c.buffers = &b })
}

// check returns an error naming each buffer whose length is not the one of n copies
// with observations of dim and masks of mlen.
func (b *Buffers) check(n, dim, mlen int) error {
	var bad []string
	want := func(name string, got, want int) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s has %d elements, want %d", name, got, want))
		}
	}
	want("Obs", len(b.Obs), n*dim)
	want("FinalObs", len(b.FinalObs), n*dim)
	want("Masks", len(b.Masks), n*mlen)
	want("Rewards", len(b.Rewards), n)
	want("Terminated", len(b.Terminated), n)
	want("Truncated", len(b.Truncated), n)
	if bad != nil {
		return fmt.Errorf("%w: WithBuffers: %s (%d copies, observations of %d, masks of %d)", ErrOption, strings.Join(bad, "; "), n, dim, mlen)
	}
	return nil
}

func (b *Buffers) zero() bool {
	return b.Obs == nil && b.FinalObs == nil && b.Masks == nil && b.Rewards == nil && b.Terminated == nil && b.Truncated == nil
}
