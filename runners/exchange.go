package runners

import (
	"context"
	"fmt"
	"github.com/batonrl/baton/event"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// Interactor is implemented by policies that take part in a trial beyond choosing
// actions: they read the messages delivered to their agent, send messages, and reward
// other agents. The runner finds it once, when it builds the trial, and then calls
// Interact instead of Act. Interact must choose the action as Act would; x is valid only
// during the call.
type Interactor interface {
	agent.Policy
	Interact(ctx context.Context, x *Exchange, obs []float32, mask []bool) (agent.RawAction, error)
}

// Messenger is implemented by environments that exchange messages with the actors of
// a trial. The runner finds it once per trial. An environment reached through the hrl
// runtime cannot implement it (the runtime hides the environment); wrap the runtime
// in a type that does.
type Messenger interface {
	// Receive hands the environment a message addressed to EnvAddress on the tick it
	// is delivered, before the acting agent of that tick acts. It must not retain
	// m.Payload.
	Receive(m event.Message)
	// Outbox returns the messages the environment sent during its latest Reset or
	// Step, each addressed to an agent name; From and Sent are ignored (the runner
	// sets them). The runner copies them before the next Reset or Step.
	Outbox() []event.Message
}

// Exchange is an actor's line to its trial during one Interact call: what it has been
// told, and how to tell others. It is valid only during the call and not safe for
// concurrent use.
type Exchange struct {
	t     *trial
	agent int
	id    string
	tick  int
	turn  env.Turn // the Turn the agent acts on
}

// Trial returns the trial's id.
func (x *Exchange) Trial() string { return x.t.id }

// Episode returns the episode, counted from 0.
func (x *Exchange) Episode() int { return x.t.episode }

// Tick returns the tick the agent acts at.
func (x *Exchange) Tick() int { return x.tick }

// AgentID returns the acting agent's id.
func (x *Exchange) AgentID() string { return x.id }

// LastReward returns the reward the acting agent received for its previous turn in
// this episode: the rewards of its reports since it last acted, every source
// included (the environment's, other agents', outside ones for the next step), as
// its steps report them; retroactive rewards are not in it. ok is false at its first turn of the episode, which follows no turn of its.
func (x *Exchange) LastReward() (reward float64, ok bool) {
	a := &x.t.agents[x.agent]
	return a.sinceAct, a.acted
}

// Frame draws the trial's environment as it is now, the agent about to act, for
// people: by the registry entry's Look (Look.Frame). A person who takes an agent's
// place sees it before choosing (package human).
func (x *Exchange) Frame() env.Frame {
	return x.t.plan.open.entry.Look.Frame(x.t.env)
}

// ActionName names the action raw of the acting agent for people, as the registry
// entry's Look names it on the Turn the agent acts on (Look.ActionName): "LEFT",
// `link "Cart"`.
func (x *Exchange) ActionName(raw agent.RawAction) string {
	turn := &x.turn
	return x.t.plan.open.entry.Look.ActionName(*turn, turn.Report(x.id), raw)
}

// Inbox returns the messages delivered to the agent (addressed to its name) since its
// previous Interact call in this episode, in delivery order. The slice and the payloads
// belong to the trial: do not retain them after Interact returns. Messages not read by
// the end of an episode are dropped.
func (x *Exchange) Inbox() []event.Message { return x.t.mail.inbox(x.agent) }

// Send sends payload (copied) to an agent of the trial by name, or to the environment
// (EnvAddress); it is delivered at the next tick and recorded in that tick's step
// events. It returns an error wrapping ErrReceiver for an unknown agent name, or for
// EnvAddress when the environment is not a Messenger.
func (x *Exchange) Send(to string, payload []byte) error {
	t := x.t
	if err := t.checkReceiver(to); err != nil {
		return err
	}
	t.mail.send(x.id, to, payload, x.tick)
	return nil
}

// Reward gives value to the agent with the given id, with the source
// "actor:NAME" (NAME the rewarding agent's name). While that agent's sub-episode is
// live the reward is added to its next step, next to the environment's reward; for an
// agent id whose sub-episode has ended in this episode it is a retroactive reward for
// its last step. It returns an error wrapping ErrReward for an agent id not reported
// in this episode.
func (x *Exchange) Reward(agentID string, value float64) error {
	return x.t.reward(agentID, x.t.agents[x.agent].source, value)
}

// Now is the Tick of a Feedback for the agent's next step.
const Now = -1

// Feedback is a reward from outside a trial (a person, a script), sent through
// Controller.Reward.
type Feedback struct {
	// AgentID is the rewarded agent's id ("motion_3"). Its name must be one of the
	// trial's agents; a reward for the next step of an id that has not been reported
	// in the episode when the trial reads it is dropped.
	AgentID string
	// Episode and Tick address the step the reward is for. Tick Now (Episode is then
	// ignored) adds the reward to the agent's next step, as an actor's reward is, or,
	// when its sub-episode has ended, to its last one retroactively. A tick already
	// reported makes a retroactive reward (its step events are gone: a KindReward
	// event carries it). Ticks after the trial's current one are rejected.
	Episode, Tick int
	// Value is the reward.
	Value float64
	// Source names who gives it; "" means SourceController.
	Source string
}

// maxFeedback bounds the outside rewards that wait for a trial's next step: a trial
// that waits long (for a person) drains none meanwhile.
const maxFeedback = 4096

// feedback is a trial's queue of outside rewards; the controller fills it, the trial
// drains it between steps.
type feedback struct {
	mu     sync.Mutex
	items  []Feedback
	closed bool
	any    atomic.Bool
}

func (f *feedback) push(fb Feedback) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrNotRunning
	}
	if len(f.items) >= maxFeedback {
		return fmt.Errorf("%w: %d rewards wait for the trial's next step already, the most it takes", ErrFull, len(f.items))
	}
	f.items = append(f.items, fb)
	f.any.Store(true)
	return nil
}

// take appends the queued rewards to dst and empties the queue; close also closes it.
func (f *feedback) take(dst []Feedback, close bool) []Feedback {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.items...)
	clear(f.items)
	f.items = f.items[:0]
	f.any.Store(false)
	f.closed = f.closed || close
	return dst
}

// agentName returns the name part of an agent id "<name>_<k>".
func agentName(id string) (string, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || i == len(id)-1 {
		return "", false
	}
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return id[:i], true
}

func (t *trial) checkReceiver(to string) error {
	if to == event.EnvAddress {
		if t.msgr == nil {
			return fmt.Errorf("%w: the environment of %s takes no messages", ErrReceiver, t.plan.open.entry.Name)
		}
		return nil
	}
	if t.index(to) < 0 {
		return fmt.Errorf("%w: %q (choices: %s)", ErrReceiver, to, strings.Join(t.receivers(), ", "))
	}
	return nil
}

// receivers returns the addresses a message of the trial may go to.
func (t *trial) receivers() []string {
	names := t.names()
	if t.msgr != nil {
		names = append(names, event.EnvAddress)
	}
	return names
}

// Receivers returns the addresses Send takes: the names of the trial's agents, in
// the environment's order, and EnvAddress when the environment takes messages. The
// slice is the caller's.
func (x *Exchange) Receivers() []string { return x.t.receivers() }

// RewardAs gives value to the agent with the given id as Reward does, with the source
// named by the caller instead of "actor:NAME" ("" is refused with ErrReward). A
// client actor marks the steps whose action it did not choose with a zero reward of
// its own source.
func (x *Exchange) RewardAs(source, agentID string, value float64) error {
	if source == "" {
		return fmt.Errorf("%w: empty source", ErrReward)
	}
	return x.t.reward(agentID, source, value)
}

// Spec returns the acting agent's spec: its name and spaces.
func (x *Exchange) Spec() env.Spec { return x.t.plan.open.agents[x.agent] }
