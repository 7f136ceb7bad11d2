package vector

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Batch is what a batched policy acts on: one row per copy that acts, with the
// observations and masks of those copies laid out contiguously, row after row. Its
// slices belong to the vector and stay valid until its next Reset or Step; a policy
// must not retain them. Read it from the goroutine that drives the vector, between
// its calls (or from goroutines that this one waits for).
type Batch struct {
	// Copies holds the copy index of each row, in ascending order: 0 to N-1 for an Env,
	// the copies whose acting agent has this name for a Multi group. A recurrent policy
	// keys its per-copy state by it.
	Copies []int
	// Obs holds len(Copies) rows of ObsDim float32s.
	Obs []float32
	// Masks holds len(Copies) rows of MaskLen bools, or nil when MaskLen is 0.
	Masks []bool
	// ObsDim is the length of one observation; MaskLen that of one mask, 0 without one.
	ObsDim, MaskLen int
}

// Len returns the number of rows.
func (b Batch) Len() int { return len(b.Copies) }

// Row returns the observation of row r.
func (b Batch) Row(r int) []float32 { return b.Obs[r*b.ObsDim : (r+1)*b.ObsDim : (r+1)*b.ObsDim] }

// Mask returns the action mask of row r, or nil without masks.
func (b Batch) Mask(r int) []bool {
	if b.MaskLen == 0 {
		return nil
	}
	return b.Masks[r*b.MaskLen : (r+1)*b.MaskLen : (r+1)*b.MaskLen]
}

// BatchPolicy chooses the actions of a batch of copies in one call: ActBatch writes
// actions[r], for every row r of b, len(actions) being b.Len(). The slices of an
// action it writes (Ints, Floats) belong to the policy and must stay valid until the
// vector's next Step returns; the vector does not retain them. An error leaves the
// vector as it was: nothing is stepped.
//
// A BatchPolicy is called from the goroutine that drives the vector, one call at a
// time, unless its documentation says otherwise.
type BatchPolicy interface {
	ActBatch(ctx context.Context, b Batch, actions []agent.RawAction) error
}

// BatchPolicyFunc adapts a function to a BatchPolicy.
type BatchPolicyFunc func(ctx context.Context, b Batch, actions []agent.RawAction) error

// ActBatch calls f.
func (f BatchPolicyFunc) ActBatch(ctx context.Context, b Batch, actions []agent.RawAction) error {
	return f(ctx, b, actions)
}

// DiscretePolicy is BatchPolicy for a Discrete action space, with the actions as
// integers, one per row: the form of a policy network's output, which Env.StepDiscrete
// takes. Its documentation is BatchPolicy's.
type DiscretePolicy interface {
	ActDiscrete(ctx context.Context, b Batch, actions []int64) error
}

// DiscretePolicyFunc adapts a function to a DiscretePolicy.
type DiscretePolicyFunc func(ctx context.Context, b Batch, actions []int64) error

// ActDiscrete calls f.
func (f DiscretePolicyFunc) ActDiscrete(ctx context.Context, b Batch, actions []int64) error {
	return f(ctx, b, actions)
}

// PerCopy returns a BatchPolicy that asks, for each row, the policy of the row's
// copy: ps[b.Copies[r]].Act with the row's observation and mask. It is how per-copy
// policies (random ones, each with its own generator; scripted ones) drive a vector;
// the rows are asked in order, in the calling goroutine. An error of a policy, or a
// copy index without a policy, returns a *CopyError with OpAct. It allocates nothing
// when the policies do not.
//
// PerCopy keeps ps, without copying it. The returned policy is as safe for concurrent
// use as the policies in ps.
func PerCopy(ps []agent.Policy) BatchPolicy { return &perCopy{ps: ps} }

// perCopy is PerCopy's policy. own says that its policies are distinct values that
// nothing else holds (RandomPerCopy's): a Multi with workers may then ask each
// copy's on the goroutine that steps the copy.
type perCopy struct {
	ps  []agent.Policy
	own bool
}

// act asks copy c's policy, and returns its error as ActBatch does.
func (p *perCopy) act(ctx context.Context, c int, obs []float32, mask []bool) (agent.RawAction, error) {
	if c < 0 || c >= len(p.ps) || p.ps[c] == nil {
		return agent.RawAction{}, &CopyError{Copy: c, Op: OpAct, Err: fmt.Errorf("no policy among %d", len(p.ps))}
	}
	a, err := p.ps[c].Act(ctx, obs, mask)
	if err != nil {
		return agent.RawAction{}, &CopyError{Copy: c, Op: OpAct, Err: err}
	}
	return a, nil
}

func (p *perCopy) ActBatch(ctx context.Context, b Batch, actions []agent.RawAction) error {
	if len(actions) != len(b.Copies) {
		return fmt.Errorf("%w: %d actions for %d rows", ErrActions, len(actions), len(b.Copies))
	}
	for r, c := range b.Copies {
		a, err := p.act(ctx, c, b.Row(r), b.Mask(r))
		if err != nil {
			return err
		}
		actions[r] = a
	}
	return nil
}

// RandomPerCopy returns the per-copy random policies of n copies over an action space:
// copy i draws with agent.Random(space, rand.New(rand.NewPCG(seed, uint64(i)))), so
// it honours a Discrete space's action mask and allocates nothing, and its draws
// depend on its copy index and seed alone. It fails as agent.Random does.
//
// Since each copy has a generator of its own, a Multi of n copies with workers
// (Multi.Act) asks each copy's policy on a worker, in parallel, rather than the rows
// one after the other: the actions are the same.
func RandomPerCopy(space spaces.Space, n int, seed uint64) (BatchPolicy, error) {
	ps := make([]agent.Policy, n)
	for i := range ps {
		p, err := agent.Random(space, rand.New(rand.NewPCG(seed, uint64(i))))
		if err != nil {
			return nil, fmt.Errorf("vector: random policy of copy %d: %w", i, err)
		}
		ps[i] = p
	}
	return &perCopy{ps: ps, own: true}, nil
}
