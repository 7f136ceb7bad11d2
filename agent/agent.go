package agent

import (
	"fmt"

	"github.com/batonrl/baton/spaces"
)

// Agent is one learnable decision maker of a hierarchical environment, fully typed.
//
// Its type parameters are:
//
//	S  the environment state, shared by every agent of the environment
//	AS the agent's own view of that state (what TranslateState derives)
//	O  the agent's typed observation
//	R  the raw action a policy produces: int64 for a Discrete action space,
//	   []int64 for MultiDiscrete and MultiBinary, []float32 for Box
//	A  the environment's decoded action type, shared by every agent
//
// An Agent holds configuration only; everything that changes during an episode lives
// in S or in the Clock the runtime passes, so the same Agent value serves any number of
// environments at once. Every method must be a pure function of its arguments.
type Agent[S, AS, O any, R Raw, A any] interface {
	// Name identifies the agent in its environment; agent ids are "<name>_<k>".
	Name() string
	// ObservationSpace is the space of the flat observations EncodeObservation writes.
	ObservationSpace() spaces.Space
	// ActionSpace is the space of the raw actions DecodeAction accepts: Discrete,
	// MultiDiscrete, MultiBinary or Box.
	ActionSpace() spaces.Space
	// TranslateState derives the agent's view from the environment state and the
	// agent's clock.
	TranslateState(s S, c Clock) AS
	// Observe builds the agent's typed observation.
	Observe(as AS) O
	// EncodeObservation writes o as flat float32 into dst, whose length is
	// ObservationSpace().FlatDim(). It must not retain dst.
	EncodeObservation(dst []float32, o O)
	// DecodeAction turns a raw action that lies inside ActionSpace into the
	// environment's action, or returns an error saying why the action is invalid in
	// this state (a direction into a wall, say). The runtime checks the space first.
	DecodeAction(as AS, raw R) (A, error)
	// Done reports whether the agent's sub-episode is over: terminated when it
	// reached a natural end, truncated when a limit cut it short. The runtime asks it
	// after each of the agent's actions, not before the first: a sub-episode takes at
	// least one action unless the agent implements AtOnceReturner.
	Done(as AS) (terminated, truncated bool)
	// Reward scores one decision: prev is the agent's view when it acted, a the
	// decoded action, next its view when control came back to it. For an action that
	// handed control to a child agent, next is taken when the child's sub-episode ended,
	// so the reward covers the whole span.
	Reward(prev AS, a A, next AS) float64
}

// Clock tells an agent where it stands. The runtime keeps it; agents only read it.
type Clock struct {
	// Steps counts the agent's own completed decisions in its current sub-episode; it
	// is 0 when the agent takes control. A decision that hands control to a child
	// completes when control comes back.
	Steps int
	// Tick counts environment steps since the episode's reset.
	Tick int
	// SubEpisode is k in the agent id "<name>_<k>": how many sub-episodes of this agent
	// have ended in this episode.
	SubEpisode int
}

// Raw is the set of raw action types an Agent may use.
type Raw interface {
	int64 | []int64 | []float32
}

// RawAction is a raw action in the form policies produce and the runtime, the logs and
// the wire carry, whatever the agent: Int for a Discrete action space, Ints for
// MultiDiscrete and MultiBinary, Floats for Box. The zero value is the Discrete action 0.
type RawAction struct {
	Int    int64
	Ints   []int64
	Floats []float32
}

// Discrete returns the raw action of a Discrete action space.
func Discrete(v int64) RawAction { return RawAction{Int: v} }

// Continuous returns the raw action of a Box action space. It does not copy v.
func Continuous(v []float32) RawAction { return RawAction{Floats: v} }

// MultiInts returns the raw action of a MultiDiscrete or MultiBinary action space.
// It does not copy v.
func MultiInts(v []int64) RawAction { return RawAction{Ints: v} }

// String formats the action by the field in use.
func (r RawAction) String() string {
	switch {
	case r.Floats != nil:
		return fmt.Sprint(r.Floats)
	case r.Ints != nil:
		return fmt.Sprint(r.Ints)
	default:
		return fmt.Sprint(r.Int)
	}
}

// Value returns the action as the Go value the action space's Check accepts, for
// diagnostics and tests; it boxes, so the step path does not use it.
func (r RawAction) Value(s spaces.Space) any {
	switch s.Kind() {
	case spaces.KindBox:
		return r.Floats
	case spaces.KindMultiDiscrete, spaces.KindMultiBinary:
		return r.Ints
	default:
		return r.Int
	}
}

// Check reports whether r is a member of the action space s without allocating on
// success. Only Discrete, MultiDiscrete, MultiBinary and Box are action spaces; for any
// other space Check returns an error wrapping ErrActionSpace. An action outside s, or
// one that sets a field the space does not read (Floats for a Discrete space, Int for a
// Box), gets a *spaces.ValueError, which wraps spaces.ErrOutside and names the value
// and the bound or the stray field.
func (r RawAction) Check(s spaces.Space) error {
	switch sp := s.(type) {
	case spaces.Discrete:
		return r.checkDiscrete(s, sp)
	case *spaces.Discrete:
		if sp != nil {
			return r.checkDiscrete(s, *sp)
		}
	case *spaces.Box:
		if err := r.stray(s, true, true, false); err != nil {
			return err
		}
		return sp.CheckFloats(r.Floats)
	case *spaces.MultiDiscrete:
		if err := r.stray(s, true, false, true); err != nil {
			return err
		}
		return sp.CheckInts(r.Ints)
	case *spaces.MultiBinary:
		if err := r.stray(s, true, false, true); err != nil {
			return err
		}
		return sp.CheckInts(r.Ints)
	}
	return fmt.Errorf("%w: %v", ErrActionSpace, s)
}

// checkDiscrete checks r against d, which s holds.
func (r RawAction) checkDiscrete(s spaces.Space, d spaces.Discrete) error {
	if err := r.stray(s, false, true, true); err != nil {
		return err
	}
	return d.CheckInt(r.Int)
}

// stray returns an error if r sets one of the fields the space s does not read: Int
// (when it is not 0), Ints or Floats, as flagged.
func (r RawAction) stray(s spaces.Space, noInt, noInts, noFloats bool) error {
	var field string
	var value any
	switch {
	case noInt && r.Int != 0:
		field, value = "Int", r.Int
	case noInts && r.Ints != nil:
		field, value = "Ints", r.Ints
	case noFloats && r.Floats != nil:
		field, value = "Floats", r.Floats
	default:
		return nil
	}
	return &spaces.ValueError{Space: s, Reason: fmt.Sprintf("the action sets %s (%v), which a %s action space does not read", field, value, s.Kind())}
}
