package fastlane

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
)

// TurnBuffers are the caller's buffers of a Turns of A agents, filled after every
// Reset and Step with the Turn, per agent name:
//
//	Obs, Masks  [A]          each agent's latest observation (ObsDim) and mask
//	                         (MaskLen; nil without one): those of its last report, kept
//	                         while it is not reported
//	Reported    [A]bool      whether the Turn reports an agent of that name
//	Started     [A]bool      ... whose report starts a sub-episode (Start)
//	Rewards     [A]float64   the sum of the rewards of its reports
//	Spans       [A]int64     the sum of their span ticks
//	Terminated  [A]bool      whether its report ended its sub-episode, terminated
//	Truncated   [A]bool      ... or truncated
//	IDs         [A]int64     the sub-episode k of its latest id "<name>_<k>", -1 before any
//	State       [3]int64     the index of the agent that acts next (-1 when none), 1 when
//	                         the episode is over (else 0), and the Turn's tick
type TurnBuffers struct {
	Obs                   [][]float32
	Masks                 [][]bool
	Reported, Started     []bool
	Rewards               []float64
	Spans                 []int64
	Terminated, Truncated []bool
	IDs                   []int64
	State                 []int64
}

func (b *TurnBuffers) check(l Layout) error {
	a := len(l.Agents)
	if len(b.Obs) != a || len(b.Masks) != a {
		return fmt.Errorf("%w: observation and mask buffers of %d and %d agents; the environment has %d", ErrArgument, len(b.Obs), len(b.Masks), a)
	}
	checks := []error{
		sameSize("Reported", len(b.Reported), a), sameSize("Started", len(b.Started), a), sameSize("Rewards", len(b.Rewards), a),
		sameSize("Spans", len(b.Spans), a), sameSize("Terminated", len(b.Terminated), a), sameSize("Truncated", len(b.Truncated), a),
		sameSize("IDs", len(b.IDs), a), sameSize("State", len(b.State), 3),
	}
	for j, ag := range l.Agents {
		checks = append(checks, sameSize(ag.Name+" Obs", len(b.Obs[j]), ag.ObsDim), sameSize(ag.Name+" Masks", len(b.Masks[j]), ag.MaskLen))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// Turns is one environment stepped turn by turn, the acting agent's action at a time,
// with every Turn written into the caller's buffers per agent name: what PettingZoo's
// AEC and parallel APIs step (Python's baton.pettingzoo). It is not safe for
// concurrent use.
type Turns struct {
	m      env.MultiAgent
	layout Layout
	b      TurnBuffers
	index  map[string]int
	turn   env.Turn
	next   int // the index of the agent acting next, -1 when none
	reset  bool
	*frames
}

// NewTurns makes the named environment, with its JSON configuration, over b.
func NewTurns(reg *registry.Registry, name string, config []byte, b TurnBuffers) (*Turns, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	if err := b.check(l); err != nil {
		return nil, err
	}
	m, err := f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	t := &Turns{m: m, layout: l, b: b, index: make(map[string]int, len(l.Agents)), next: -1,
		frames: &frames{ms: []env.MultiAgent{m}, look: look(reg, name)}}
	for j, a := range l.Agents {
		t.index[a.Name] = j
	}
	return t, nil
}

// Layout returns the environment's layout.
func (t *Turns) Layout() Layout { return t.layout }

// Len returns 1: a Turns is one environment.
func (t *Turns) Len() int { return 1 }

// Agent returns the name of the agent acting now, for Failures.
func (t *Turns) Agent(int) string {
	if t.next < 0 {
		return ""
	}
	return t.layout.Agents[t.next].Name
}

// Reset starts an episode from seed and fills the buffers; every agent's observation
// and mask are zero until it is reported, and its IDs -1.
func (t *Turns) Reset(_ context.Context, seed uint64) error {
	for j := range t.layout.Agents {
		clear(t.b.Obs[j])
		clear(t.b.Masks[j])
		t.b.IDs[j] = -1
	}
	turn, err := t.m.Reset(seed)
	t.reset = err == nil
	if err != nil {
		t.next = -1
		return err
	}
	t.publish(turn)
	return nil
}

// Step applies the action of the acting agent, checked first (an *ActionError for an
// action outside its space or masked, changing nothing), and fills the buffers.
func (t *Turns) Step(_ context.Context, action int64) error {
	if !t.reset || t.next < 0 {
		return fmt.Errorf("%w: no agent acts (reset first, or the episode is over)", ErrArgument)
	}
	a := &t.layout.Agents[t.next]
	r := t.turn.Acting()
	if err := a.check(0, action, r.Mask); err != nil {
		return err
	}
	turn, err := t.m.Step(t.turn.Next, agent.Discrete(action))
	if err != nil {
		return fmt.Errorf("%w: copy 0: agent %s: %w", ErrAction, a.Name, err)
	}
	t.publish(turn)
	return nil
}

func (t *Turns) publish(turn env.Turn) {
	t.turn = turn
	b := &t.b
	clear(b.Reported)
	clear(b.Started)
	clear(b.Rewards)
	clear(b.Spans)
	clear(b.Terminated)
	clear(b.Truncated)
	t.next = -1
	for i := range turn.Reports {
		r := &turn.Reports[i]
		j, ok := t.index[r.Agent]
		if !ok {
			continue
		}
		copy(b.Obs[j], r.Obs)
		copy(b.Masks[j], r.Mask)
		b.Reported[j] = true
		b.Started[j] = b.Started[j] || r.Start
		b.Rewards[j] += r.Reward
		b.Spans[j] += int64(r.SpanTicks)
		b.Terminated[j] = b.Terminated[j] || r.Terminated
		b.Truncated[j] = b.Truncated[j] || r.Truncated
		b.IDs[j] = subEpisode(r.AgentID)
		if r.AgentID == turn.Next && !turn.Over {
			t.next = j
		}
	}
	b.State[0], b.State[1], b.State[2] = int64(t.next), 0, int64(turn.Tick)
	if turn.Over {
		b.State[1] = 1
	}
}

// subEpisode returns the k of the id "<name>_<k>", -1 when it has none.
func subEpisode(id string) int64 {
	i := strings.LastIndexByte(id, '_')
	if i < 0 {
		return -1
	}
	k, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return k
}

// Close does nothing: a Turns holds no goroutine.
func (t *Turns) Close() error { return nil }
