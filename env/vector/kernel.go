package vector

import "github.com/batonrl/baton/env"

// Batcher is an optional interface of an env.Env whose copies can be stepped together,
// in one call for a run of copies, by a Kernel it makes. New asks copy 0 once, when
// the action space is Discrete, every copy is an env.DiscreteStepper and
// WithFinalInfo is off; StepDiscrete then steps the copies through the Kernel,
// auto-resets included, with no interface call per copy. Step (raw actions) and
// Reset still go through each copy's own methods, so a Kernel and its copies must
// share their state: whichever way a copy is stepped, the results are the same.
//
// The cart-pole (envs/cartpole) is one: its Kernel keeps the copies' states in
// one contiguous array and steps it in a loop that the compiler sees whole.
type Batcher interface {
	// NewKernel returns a Kernel over copies, the vector's copies in order (the
	// receiver is copies[0]), or nil when it cannot step them together (a copy of
	// another type or configuration, a copy that appears twice or is already in a
	// Kernel); the vector then steps each copy on its own.
	NewKernel(copies []env.Env) Kernel
}

// Kernel steps a run of a vector's copies in one call (see Batcher).
type Kernel interface {
	// Step steps copies s.Lo to s.Hi-1, copy i with action s.Actions[i], and fills
	// their rows of s's buffers as the vector's Step documents, auto-resets included:
	// a copy whose episode ends gets its next episode, s.Episodes[i]+1, with seed
	// EpisodeSeed(s.Seed, i, s.Episodes[i]+1), and Step updates s.Episodes[i] and
	// s.Seeds[i]. Its results must be those of the copies' StepDiscrete followed by
	// Reset with that seed. For a copy that fails, it sets s.Errs[i] to the error
	// StepDiscrete would return (the vector wraps it in a *CopyError), changes
	// nothing of that copy and goes on with the others; it returns how many failed.
	// It must not retain s's slices. Several goroutines may call Step at once, for
	// runs of copies that do not overlap.
	Step(s KernelStep) (failed int)
}

// KernelStep is what Kernel.Step works on: a run of copies and the vector's buffers,
// indexed by copy (the flags at copy + Shift, see Terminated).
type KernelStep struct {
	// Lo and Hi bound the copies to step: Lo to Hi-1.
	Lo, Hi int
	// Actions holds every copy's action, copy i's at Actions[i].
	Actions []int64
	// Obs and Final are the observation and final-observation rows, ObsDim values a
	// copy, copy i's at [i*ObsDim, (i+1)*ObsDim); Masks the mask rows, MaskLen a copy
	// (nil without a mask).
	Obs, Final []float32
	Masks      []bool
	ObsDim     int
	MaskLen    int
	// Rewards holds copy i's reward at Rewards[i].
	Rewards []float64
	// Terminated and Truncated hold copy i's flags at index i+Shift.
	Terminated, Truncated []bool
	Shift                 int
	// Seed is the seed of the vector's last Reset; Episodes and Seeds are each copy's
	// current episode index and seed (Env.Episodes, Env.Seeds).
	Seed     uint64
	Episodes []int
	Seeds    []uint64
	// Errs receives copy i's error at Errs[i].
	Errs []error
}
