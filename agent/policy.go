package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/spaces"
)

// Policy chooses raw actions. Act receives the agent's flat observation and, when the
// agent has an action mask, which actions are valid (nil otherwise). Neither slice may be
// retained after Act returns. A slice in the returned action belongs to the policy and
// stays valid until its next call.
//
// A Policy is used by one trial at a time unless its documentation says otherwise.
type Policy interface {
	Act(ctx context.Context, obs []float32, mask []bool) (RawAction, error)
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(ctx context.Context, obs []float32, mask []bool) (RawAction, error)

// Act calls f.
func (f PolicyFunc) Act(ctx context.Context, obs []float32, mask []bool) (RawAction, error) {
	return f(ctx, obs, mask)
}

// Errors of the built-in policies and of raw actions.
var (
	// ErrActionSpace: the space cannot be an action space (only Discrete,
	// MultiDiscrete, MultiBinary and Box can).
	ErrActionSpace = errors.New("agent: not an action space")
	// ErrScriptEnded: a scripted policy was asked for more actions than it holds.
	ErrScriptEnded = errors.New("agent: scripted policy has no more actions")
)

// Random returns a policy that draws uniformly from an action space with rng (Box
// elements as spaces.Box.SampleTo draws them). For a Discrete space it honours the action
// mask: Act draws among the allowed actions, and fails with an error wrapping
// spaces.ErrEmptyMask when the mask allows none, or spaces.ErrMaskLength when its
// length is not N. For the other spaces it ignores the mask.
//
// Act allocates nothing. For Box, MultiDiscrete and MultiBinary spaces the slice of the
// action it returns is a buffer the policy owns and overwrites on its next call: copy it
// (slices.Clone) to keep it longer.
//
// Random returns an error wrapping ErrActionSpace for a space that is not an action
// space, and an error for an invalid Discrete space or a nil rng. Not safe for
// concurrent use: give each trial its own, seeded.
func Random(space spaces.Space, rng *rand.Rand) (Policy, error) {
	if rng == nil {
		return nil, errors.New("agent: random policy: nil *rand.Rand")
	}
	if d, ok := space.(*spaces.Discrete); ok && d != nil {
		space = *d
	}
	switch sp := space.(type) {
	case spaces.Discrete:
		if err := sp.Validate(); err != nil {
			return nil, fmt.Errorf("agent: random policy: %w", err)
		}
		return &randomDiscrete{space: sp, rng: rng}, nil
	case *spaces.Box:
		return &randomBox{space: sp, rng: rng, buf: make([]float32, sp.FlatDim())}, nil
	case *spaces.MultiDiscrete:
		return &randomMultiDiscrete{space: sp, rng: rng, buf: make([]int64, len(sp.Nvec()))}, nil
	case *spaces.MultiBinary:
		return &randomMultiBinary{rng: rng, buf: make([]int64, sp.FlatDim())}, nil
	default:
		return nil, fmt.Errorf("%w: %v", ErrActionSpace, space)
	}
}

type randomDiscrete struct {
	space spaces.Discrete
	rng   *rand.Rand
}

func (p *randomDiscrete) Act(_ context.Context, _ []float32, mask []bool) (RawAction, error) {
	if mask == nil {
		return RawAction{Int: p.space.Start + p.rng.Int64N(p.space.N)}, nil
	}
	v, err := p.space.SampleMasked(p.rng, mask)
	if err != nil {
		return RawAction{}, fmt.Errorf("agent: random policy: %w", err)
	}
	return RawAction{Int: v}, nil
}

type randomBox struct {
	space *spaces.Box
	rng   *rand.Rand
	buf   []float32
}

func (p *randomBox) Act(context.Context, []float32, []bool) (RawAction, error) {
	p.space.SampleTo(p.buf, p.rng)
	return RawAction{Floats: p.buf}, nil
}

type randomMultiDiscrete struct {
	space *spaces.MultiDiscrete
	rng   *rand.Rand
	buf   []int64
}

func (p *randomMultiDiscrete) Act(context.Context, []float32, []bool) (RawAction, error) {
	p.space.SampleTo(p.buf, p.rng)
	return RawAction{Ints: p.buf}, nil
}

type randomMultiBinary struct {
	rng *rand.Rand
	buf []int64
}

func (p *randomMultiBinary) Act(context.Context, []float32, []bool) (RawAction, error) {
	for i := range p.buf {
		p.buf[i] = int64(p.rng.IntN(2))
	}
	return RawAction{Ints: p.buf}, nil
}

// Scripted returns a policy that plays actions in order and then fails with
// ErrScriptEnded, or, with Loop, starts over. It ignores observations, masks and the
// context: a script that plays an invalid action gets the runtime's error for it.
// The script keeps actions as given, without copying them or their slices.
// Not safe for concurrent use.
func Scripted(actions ...RawAction) *Script {
	return &Script{actions: actions}
}

// Script is the policy Scripted returns.
type Script struct {
	actions []RawAction
	next    int
	// Loop makes the script start over after its last action instead of failing.
	Loop bool
}

// Act returns the next action of the script.
func (s *Script) Act(context.Context, []float32, []bool) (RawAction, error) {
	if s.next >= len(s.actions) {
		if !s.Loop || len(s.actions) == 0 {
			return RawAction{}, fmt.Errorf("%w (played %d)", ErrScriptEnded, s.next)
		}
		s.next = 0
	}
	a := s.actions[s.next]
	s.next++
	return a, nil
}

// Rewind makes the script start again from its first action.
func (s *Script) Rewind() { s.next = 0 }
