package env

import (
	"unsafe"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Spec describes one agent of an environment: its name, its spaces and the length of
// its action mask (0 without one).
type Spec struct {
	Name             string
	ObservationSpace spaces.Space
	ActionSpace      spaces.Space
	// MaskLen is the length of the agent's action mask, 0 without one.
	MaskLen int
	// ReturnsAtOnce tells whether the agent returns control at once when it is done as
	// it takes control (agent.AtOnceReturner); only an agent of a hierarchy does.
	ReturnsAtOnce bool
}

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

// Report is what one agent sees in one step of a MultiAgent. Obs and Mask belong to the
// environment and stay valid until its next Step or Reset.
type Report struct {
	// AgentID is "<name>_<k>", k counting the agent's sub-episodes ended this episode.
	AgentID string
	// Agent is the agent's name.
	Agent string
	// ParentID is the id of the agent whose action started this sub-episode, "" for a
	// sub-episode that no action started (the initial agent's, or one begun by the
	// on-done table at the top level of a hierarchy).
	ParentID string
	// Obs is the flat observation.
	Obs []float32
	// Mask holds which actions are valid, for agents with an action mask; else nil.
	Mask []bool
	// Reward scores the agent's last decision; 0 when Start is set.
	Reward float64
	// Terminated and Truncated report the end of the agent's sub-episode, apart.
	Terminated, Truncated bool
	// Start marks the first observation of a sub-episode: the agent has not acted yet.
	// A Start report is done when the sub-episode ended before the agent acted: the
	// agent returned control at once (agent.AtOnceReturner), or the tick limit fell.
	Start bool
	// SpanTicks is how many environment steps the decision scored by Reward took: 1 for
	// a plain action, the length of the child's sub-episode for an action that handed
	// control down; 0 when Start is set. A trainer discounts by gamma^SpanTicks.
	SpanTicks int
	// Clock is the agent's clock at this report.
	Clock agent.Clock
}

// Done reports whether the agent's sub-episode ended in this step.
func (r *Report) Done() bool { return r.Terminated || r.Truncated }

// Turn is what a multi-agent environment returns from Reset and Step: the agents
// reported, who acts next and whether the episode is over. Its slices belong to the
// environment and stay valid until its next Step or Reset; its reports are read-only
// (an environment may write only what changed into the next turn's).
type Turn struct {
	// Reports lists every agent reported in the step: normally one; when a sub-episode
	// ends, the finishing agent and then the agent that takes control; when an agent
	// returns control at once, its one report (Start and done) before the agent that
	// takes control after it.
	Reports []Report
	// Next is the id of the agent that acts next, "" when the episode is over.
	Next string
	// Over reports the end of the episode: every agent reported is done.
	Over bool
	// Tick counts environment steps since the reset.
	Tick int
	// TypedObs, when not nil, returns the observation of Reports[i] in the agent's own
	// type, built from the same state as its flat observation, or nil when i is out of
	// range. *hrl.Runtime sets it, and hrl.Obs is its typed accessor; an environment
	// without typed observations leaves it nil. It allocates and is not meant for the
	// step path; call it before the environment's next Step or Reset. A single func
	// value keeps a Turn small enough to be returned in registers.
	TypedObs func(i int) any
}

// Report returns the report of the agent with the given id, or nil.
func (t *Turn) Report(id string) *Report {
	for i := range t.Reports {
		if sameID(t.Reports[i].AgentID, id) {
			return &t.Reports[i]
		}
	}
	return nil
}

// sameID reports whether two agent ids are equal. The ids of a runtime's results are the
// strings it keeps, so most comparisons are of a string with itself: those are settled
// by the pointers, without reading the bytes.
func sameID(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// Acting returns the report of the agent that acts next, or nil when the episode is over.
func (t *Turn) Acting() *Report {
	if t.Over {
		return nil
	}
	if n := len(t.Reports); n > 0 && t.Reports[n-1].AgentID == t.Next {
		return &t.Reports[n-1] // environments usually report the acting agent last
	}
	return t.Report(t.Next)
}

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
// was; *hrl.Runtime and Sequential return a *StepError, which errors.Is matches
// against this package's sentinels (ErrNotActing, ErrOutsideSpace, ...).
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
