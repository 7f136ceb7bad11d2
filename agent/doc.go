// Package agent defines the typed decision makers of a hierarchical environment and the
// policies that act for them.
//
// What you touch here: implement Agent for each agent of a hierarchical environment,
// with the optional hooks it needs (ResetHook, TakesControlHook, StepHook,
// GivesControlHook, Masker, Informer, AtOnceReturner, InPlace); implement Policy, or
// wrap a function in PolicyFunc, for anything that chooses raw actions; call Random and
// Scripted for the built-in policies.
//
// # Agents
//
// An Agent[S, AS, O, R, A] is fully typed: S is the environment state all agents share,
// AS the agent's own view of it, O its observation, R its raw action (int64, []int64 or
// []float32) and A the environment's decoded action. One step of an agent goes
//
//	state S ──TranslateState──▶ AS ──Observe──▶ O ──EncodeObservation──▶ []float32
//	raw R ──DecodeAction(AS, R)──▶ A ──env.Step──▶ next S
//	Done(AS) (terminated, truncated)    Reward(prev AS, a A, next AS) float64
//
// An agent holds configuration only: everything that changes during an episode lives in
// S or in the Clock the runtime passes, so one Agent value serves many environments at
// once. Package hrl binds agents of different types into one environment.
//
// # Optional hooks
//
// An agent may implement any of ResetHook, TakesControlHook, StepHook, GivesControlHook,
// Masker, ViewEncoder, Informer and AtOnceReturner, each a one-method interface, and
// InPlace, which does the step path's work on views passed by pointer in fewer calls,
// with StepperMaker, whose Stepper the runtime calls directly, with nothing between.
// The runtime finds them once, when the agent is bound (as database/sql finds optional
// driver features), and never type-asserts on the step path. TakesControlHook receives a Switch: why the agent takes
// control (Cause), the rule that fired, the agent that handed over and its action.
//
// # A sub-episode takes at least one action
//
// When an agent takes control, the runtime reports its first observation and waits for
// its action; it asks Done after each action, never before the first. So an agent that
// is already done as it takes control (a walker sent to the tile it stands on) acts
// once anyway, and is done again only after a detour: the walker steps away and back,
// and its parent's reward scores that detour. This is the reference maze's rule, and
// the maze never meets it: its strategy hands over only directions the motion agent can
// walk. Two remedies, whichever says what the environment means:
//
//   - the parent refuses the action that would hand control to an agent that is done:
//     its DecodeAction returns an error, and its Masker rules the action out so that
//     policies do not pick it (a mask alone is advice);
//   - the child implements AtOnceReturner: the runtime then asks its Done as it takes
//     control and, if it is done, hands control back in the same step, with no action
//     and a span of zero ticks.
//
// hrltest.Check (package hrl/hrltest) reports an agent that is done when it takes
// control and acts.
//
// # Raw actions and policies
//
// RawAction is the erased form of a raw action that policies produce and the runtime,
// the logs and the wire carry: Int for a Discrete action space, Ints for MultiDiscrete
// and MultiBinary, Floats for Box. RawAction.Check tells why an action is outside its
// space.
//
// A Policy maps a flat observation and an optional action mask to a raw action; it takes
// a context because a policy may be remote. PolicyFunc adapts a function. Built in:
// Random (uniform over an action space, honouring a Discrete mask, allocation-free) and
// Scripted (a fixed sequence, optionally looped). Policies are not safe for concurrent
// use unless they say so: give each trial its own.
//
// A Policy sees observations only. A policy that learns online implements
// runners.Learner as well: the trial then tells it, after every report of an agent id
// it acts for, the reward (with its sources), the end flags, the span and the next
// observation, retroactive rewards as they arrive, and the end of each episode.
//
// The package is pure: no I/O, no clock, no goroutines, no global state; randomness
// comes only from the *rand.Rand a caller passes.
package agent
