package env

import (
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
)

// Spec describes one agent of an environment: its name, its spaces and the length of
// its action mask (0 without one). It is the same type as hrl.AgentSpec.
type Spec = hrl.AgentSpec

// Step is what a single-agent environment returns from Reset and Step, with
// Gymnasium's meaning. Obs and Mask belong to the environment and stay valid until its
// next Reset or Step; copy them to keep them longer.
type Step struct {
	// Obs is the flat observation, of length ObservationSpace().FlatDim().
	Obs []float32
	// Mask says which actions are valid, for an action space with a mask; else nil.
	Mask []bool
	// Reward scores the action just taken; 0 after Reset.
	Reward float64
	// Terminated: the episode reached a natural end. Truncated: a limit cut it short.
	Terminated, Truncated bool
}

// Done reports whether the episode ended.
func (s Step) Done() bool { return s.Terminated || s.Truncated }

// Env is a single-agent environment with Gymnasium's semantics: Reset starts an episode
// from a seed and returns the first observation; Step applies an action and returns the
// next observation, the reward, and whether the episode terminated or was truncated.
// After an episode ends, Step returns an error until the next Reset.
//
// Step returns an error, never panics, for an action outside the action space or one the
// environment rejects, and leaves the environment as it was. Neither method blocks; an
// Env is not safe for concurrent use unless it says so.
type Env interface {
	// Spec describes the environment's single agent.
	Spec() Spec
	// Reset starts a new episode; the same seed gives the same episode.
	Reset(seed uint64) (Step, error)
	// Step applies one action.
	Step(a agent.RawAction) (Step, error)
	// Info describes the current state for humans and logs (Gymnasium's info), or nil.
	// It may allocate; it is not meant for the step path.
	Info() any
}

// DiscreteStepper is an optional interface of an Env whose action space is Discrete.
// StepDiscrete is Step(agent.Discrete(action)) with the next observation and action
// mask written into the caller's slices, of the lengths the Spec gives (mask is nil
// without a mask), rather than returned in a Step. Vectors (package env/vector) look
// for it once, when they are built, and step their copies with it: it saves passing
// an agent.RawAction and a Step through every call and copying the observation out,
// about a third of a vector's own cost per step for environments as cheap as a
// cart-pole.
//
// Its results must be Step's for the same action. Its errors are Step's too: on an
// error it writes nothing and leaves the environment as it was. Wrappers do not pass
// it on; a vector of wrapped environments uses Step.
type DiscreteStepper interface {
	StepDiscrete(action int64, obs []float32, mask []bool) (reward float64, terminated, truncated bool, err error)
}

// Turn is what a multi-agent environment returns from Reset and Step: the agents
// reported, who acts next and whether the episode is over. It is the same type as
// hrl.Result.
type Turn = hrl.Result

// Report is what one agent sees in one step; the same type as hrl.Report.
type Report = hrl.Report

// MultiAgent is an environment of several agents keyed by agent id, in the turn-taking
// form (PettingZoo's AEC API): after Reset and each Step, Turn.Next names the agent that
// acts next, and every agent whose observation, reward or end is new is reported.
// *hrl.Runtime is a MultiAgent. Environments whose agents move simultaneously
// (PettingZoo's parallel API) implement Parallel and become a MultiAgent through
// Sequential, which collects one action per live agent before stepping.
//
// Reset returns an error when the episode cannot start: an environment of another
// process that cannot be reached or refuses, a single-agent environment whose own Reset
// fails. The Turn is then empty, and the caller must not step the environment until a
// Reset succeeds.
//
// Step returns an error, never panics, for an action of an agent that is not acting,
// outside its space or rejected by the environment, and leaves the environment as it
// was; *hrl.Runtime and Sequential return a *hrl.StepError, which errors.Is matches
// against hrl's sentinels (hrl.ErrNotActing, hrl.ErrOutsideSpace, ...).
//
// Neither method takes a context.Context, because neither blocks on anything the
// caller could cancel: a local environment computes and returns. An environment that
// crosses a process (remote.Env) bounds each call with the deadline of its own options
// and offers context-taking variants beside these; the caller of a MultiAgent, a trial
// between two steps, is where cancellation is checked. A MultiAgent is not safe for
// concurrent use.
type MultiAgent interface {
	// Agents describes every agent the environment may report, in a fixed order.
	Agents() []Spec
	// Reset starts a new episode; the same seed gives the same episode.
	Reset(seed uint64) (Turn, error)
	// Step applies the action of the acting agent id.
	Step(id string, a agent.RawAction) (Turn, error)
	// Info describes the current state for humans and logs, or nil.
	Info() any
}
