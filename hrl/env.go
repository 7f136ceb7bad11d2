package hrl

import (
	"math/rand/v2"

	"github.com/batonrl/baton/transitions"
)

// HierarchicalEnv is what a user implements to describe a hierarchical environment:
// its agents, how control passes between them, where an episode starts and how an
// action changes the state. S is the environment state, A the decoded action type that
// all its agents share.
//
// The runtime treats S as a value: it keeps copies (the state a parent acted in, the
// state before a rejected action), so Step and the hooks must return a new S rather than
// change memory an earlier S shares. Immutable shared data (a map of the maze) is fine.
// Randomness during an episode comes from a generator kept in S (a rand.PCG value is
// copied with the state, so replays and rejected actions stay exact).
type HierarchicalEnv[S, A any] interface {
	// Agents lists the bound agents (see Bind); their order is the environment's agent
	// order.
	Agents() []Binding[S, A]
	// Machine describes how control passes between the agents.
	Machine() transitions.Machine[S, A]
	// InitialState draws the state an episode starts in.
	InitialState(rng *rand.Rand) S
	// Step applies a decoded action of the acting agent. An error rejects the action;
	// the runtime then keeps the state it had.
	Step(s S, a A) (S, error)
}

// Informer is implemented by environments that describe their state for humans and
// logs (the maze: position and heading). The runtime calls it only when asked.
type Informer[S any] interface {
	Info(s S) any
}

// InPlaceStepper is implemented by environments that can step their state in place, so
// that the runtime does not pass the state by value on every step. StepInPlace does
// what Step does, on *s and with the action at a: it changes *s into the state Step
// would return. An error rejects the action, and then *s must be left as it was (the
// runtime steps its own state in place where nothing can reject the action later).
// It must not retain s or a.
//
// The runtime finds it once, in New; Config.NoInPlace makes it call Step instead, and
// hrltest plays a runtime with and one without in lockstep, so that a StepInPlace that
// disagrees with Step shows. hrltest offers its invalid actions to the runtime without:
// test that a rejected StepInPlace leaves the state as it was apart (as the maze's
// TestStepInPlaceMatchesStep does).
type InPlaceStepper[S, A any] interface {
	StepInPlace(s *S, a *A) error
}
