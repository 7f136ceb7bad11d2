package event

//go:generate go tool stringer -type=State -linecomment
//go:generate go tool stringer -type=Kind -linecomment

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// State is the state of a trial: Pending, then Running, then one of Ended, Stopped
// and Failed. Its String is the state's name in lower case: "pending", "running", ...
type State int

// The states of a trial.
const (
	// Pending: the trial waits for a worker.
	Pending State = 1 + iota // pending
	// Running: the trial is playing its episodes.
	Running // running
	// Ended: every episode was played.
	Ended // ended
	// Stopped: the trial was cancelled (runners.Controller.Stop, or its context) before it
	// ended.
	Stopped // stopped
	// Failed: the trial could not go on; runners.Result.Err and StateChange.Err say why.
	Failed // failed
)

// MarshalText writes the state's name, for JSON.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Done reports whether s is final: Ended, Stopped or Failed.
func (s State) Done() bool { return s == Ended || s == Stopped || s == Failed }

// Kind says which field of an Event is set. Its String names it: "state", "episode",
// "step" or "reward".
type Kind int

// The kinds of events.
const (
	// KindState: a trial changed state (Event.State).
	KindState Kind = 1 + iota // state
	// KindEpisode: an episode began or ended (Event.Episode).
	KindEpisode // episode
	// KindStep: an agent was reported in a step (Event.Step).
	KindStep // step
	// KindReward: a retroactive reward arrived for a step already reported
	// (Event.Reward).
	KindReward // reward
)

// Event is what a trial tells its sinks. Kind says which one of State, Episode, Step
// and Reward is set; the others are nil.
//
// An Event and everything it points to belong to the trial, which reuses them for its
// next event: a sink must not retain them after Handle returns (as an io.Writer must
// not retain p). Copy what must live longer, or keep e.Clone().
type Event struct {
	Kind Kind
	// Trial is the trial's id.
	Trial   string
	State   *StateChange
	Episode *EpisodeEvent
	Step    *StepEvent
	Reward  *RetroReward
}

// Clone returns a deep copy of the event, which the caller owns.
func (e *Event) Clone() *Event {
	c := *e
	if e.State != nil {
		s := *e.State
		c.State = &s
	}
	if e.Episode != nil {
		ep := *e.Episode
		ep.Returns = slices.Clone(ep.Returns)
		ep.Metrics = slices.Clone(ep.Metrics)
		c.Episode = &ep
	}
	if e.Step != nil {
		s := *e.Step
		s.Obs = slices.Clone(s.Obs)
		s.Mask = slices.Clone(s.Mask)
		s.Action.Ints = slices.Clone(s.Action.Ints)
		s.Action.Floats = slices.Clone(s.Action.Floats)
		s.Sources = slices.Clone(s.Sources)
		s.Messages = cloneMessages(s.Messages)
		c.Step = &s
	}
	if e.Reward != nil {
		r := *e.Reward
		c.Reward = &r
	}
	return &c
}

func cloneMessages(ms []Message) []Message {
	ms = slices.Clone(ms)
	for i := range ms {
		ms[i].Payload = bytes.Clone(ms[i].Payload)
	}
	return ms
}

// StateChange is a trial's change of state, sent to sinks (KindState) and yielded by
// runners.Controller.Watch.
type StateChange struct {
	// Trial is the trial's id.
	Trial string
	// State is the new state.
	State State
	// Err says why a trial failed or stopped; nil otherwise.
	Err error
	// Info describes the trial: set on every change once the trial's spec is checked
	// (for a trial whose spec is rejected, only on the Failed change, if at all).
	// Treat it as read-only; it does not change during the trial.
	Info *TrialInfo
}

// TrialInfo describes a trial as it runs, after pre-trial hooks: what a log needs to
// describe the data and to replay the trial.
type TrialInfo struct {
	// ID is the trial's id; Index its index in its campaign (-1 outside one).
	ID    string
	Index int
	// Env is the registered environment's name; Config its JSON configuration (nil
	// for the defaults).
	Env    string
	Config json.RawMessage
	// Seed is the trial's seed, from which its episode and policy seeds derive.
	Seed uint64
	// Episodes is how many episodes the trial plays; MaxTicks its tick limit (0: none).
	Episodes, MaxTicks int
	// Agents describes the environment's agents in its order; per-agent slices
	// (returns, policies) follow this order.
	Agents []env.Spec
	// Policies names each agent's policy: the registered policy name, or "" for a
	// policy given as a value or built by the spec.
	Policies []string
	// DefinesSuccess reports whether the environment defines the success of an
	// episode (runners.EpisodeResult.Success is meaningful).
	DefinesSuccess bool
	// Metrics names the environment's metrics (Entry.Metrics), in its order, which
	// runners.EpisodeResult.Metrics follows; nil when it defines none.
	Metrics []string
	// Task is the name of the schedule's task the trial plays (runners.Spec.Task); ""
	// outside a schedule.
	Task string
}

// EpisodeEvent marks the beginning (End false) or the end (End true) of an episode.
type EpisodeEvent struct {
	// Episode counts the trial's episodes from 0; Seed is its reset seed.
	Episode int
	Seed    uint64
	End     bool
	// The fields below are set at the end.

	// Ticks is the episode's length in environment steps.
	Ticks int
	// Truncated reports that the runner stopped the episode at the tick limit because
	// the environment did not end it (see runners.Spec.MaxTicks).
	Truncated bool
	// Success reports a successful episode, where the environment defines success.
	Success bool
	// Returns is each agent's return in the episode (TrialInfo.Agents order): the sum
	// of the rewards of all the agent's reports, every source included, and of the
	// retroactive rewards received so far for them.
	Returns []float64
	// Metrics are the environment's metrics of the episode (TrialInfo.Metrics order):
	// NaN for one the episode did not tell; nil for an environment that defines none.
	Metrics []float64
}

// StepEvent is one agent reported in one step: one per env.Report. The slices belong to
// the trial and the environment; see Event.
//
// A transition of an agent id is two consecutive step events of that id: the first
// one's Obs and Mask are what the agent acted on, the second one's Action is what it
// did, its Reward what it earned and its Obs where it got to.
type StepEvent struct {
	// Episode counts the trial's episodes from 0; Tick counts environment steps since
	// the episode's reset (0 for the reset's reports).
	Episode, Tick int
	// Index is the position of the report among those of its tick, from 0.
	Index int
	// Agent is the agent's name, AgentID its id ("motion_3"), ParentID the id of the
	// agent whose action started this sub-episode ("" for none).
	Agent, AgentID, ParentID string
	// Start marks the first observation of a sub-episode: the agent has not acted, so
	// Action, Reward and SpanTicks are zero.
	Start bool
	// Acting reports that this agent acts next, on Obs and Mask.
	Acting bool
	// Obs is the agent's flat observation; Mask its action mask, nil without one.
	Obs  []float32
	Mask []bool
	// Action is the raw action that Reward scores: the agent's last action or, for a
	// parent agent settled when its child's sub-episode ends, the action that handed
	// control down SpanTicks ago.
	Action agent.RawAction
	// Reward is the total of Sources.
	Reward float64
	// Sources lists every reward of this step: the environment's first (source
	// SourceEnv, even when 0), then the others in the order they arrived.
	Sources []RewardSource
	// Terminated and Truncated report the end of the agent's sub-episode, apart.
	Terminated, Truncated bool
	// SpanTicks is how many environment steps the scored decision took (0 at Start).
	SpanTicks int
	// Messages lists the messages delivered at this tick. Every step event of the tick
	// carries the same list; a consumer that wants each message once takes them where
	// Index is 0.
	Messages []Message
}

// The reward sources the runner names.
const (
	// SourceEnv is the source of the environment's rewards.
	SourceEnv = "env"
	// SourceController is the source of a runners.Controller reward given without one.
	SourceController = "controller"
	// SourceActorPrefix starts the source of a reward given by an actor:
	// "actor:strategy" for the strategy agent's actor.
	SourceActorPrefix = "actor:"
)

// RewardSource is one reward of a step, with where it came from.
type RewardSource struct {
	Source string
	Value  float64
}

// RetroReward is a reward for a step that was already reported: an outside reward
// addressed to a past tick, or a reward for an agent id whose sub-episode had ended.
// The trial sends it to its sinks (KindReward) when it arrives, keeps it in
// runners.Result.Retro, and adds it to the return of the episode it addresses.
type RetroReward struct {
	// Episode, Tick and AgentID address the step the reward is for; Agent is the
	// agent's name.
	Episode, Tick int
	AgentID       string
	Agent         string
	// Source and Value are the reward.
	Source string
	Value  float64
	// ArrivedEpisode and ArrivedTick say where the trial was when it arrived.
	ArrivedEpisode, ArrivedTick int
}

// EnvAddress is the address of the environment in messages.
const EnvAddress = "env"

// Message is a message between the actors of a trial and its environment. A message
// sent at tick t, by the actor acting at tick t or by the environment while stepping
// from t, is delivered at tick t+1 (messages the environment sends in Reset at tick 0).
type Message struct {
	// From is the sender: an agent id, or EnvAddress.
	From string
	// To is the receiver: an agent name (its actor, whichever sub-episode is live), or
	// EnvAddress.
	To string
	// Payload is the message; the runner copies it when it is sent.
	Payload []byte
	// Sent is the tick the message was sent at.
	Sent int
}

// Sink receives a trial's events. The trial calls Handle synchronously, from its own
// goroutine, for every event in order; Handle must not retain e or anything it points
// to (see Event). An error fails the trial (wrapped with runners.ErrSink), and so does
// a panic. The final state change of a trial is sent even after a sink failed; errors
// from that call are then ignored.
//
// A sink given to a runners.Controller, or to a runners.Campaign with more than one
// worker, is called by several trials at once and must be safe for concurrent use;
// runners.WithWorkerSinks gives each campaign worker a sink of its own instead.
type Sink interface {
	Handle(ctx context.Context, e *Event) error
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, e *Event) error

// Handle calls f.
func (f SinkFunc) Handle(ctx context.Context, e *Event) error { return f(ctx, e) }

// MultiSink returns a Sink that hands each event to every sink in order, stopping at
// the first error, as io.MultiWriter does. nil sinks are skipped.
func MultiSink(sinks ...Sink) Sink {
	var all []Sink
	for _, s := range sinks {
		switch s := s.(type) {
		case nil:
		case multiSink:
			all = append(all, s...)
		default:
			all = append(all, s)
		}
	}
	if len(all) == 1 {
		return all[0]
	}
	return multiSink(all)
}

type multiSink []Sink

func (m multiSink) Handle(ctx context.Context, e *Event) error {
	for _, s := range m {
		if err := s.Handle(ctx, e); err != nil {
			return err
		}
	}
	return nil
}
