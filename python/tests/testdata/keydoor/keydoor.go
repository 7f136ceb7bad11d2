// Package keydoor is a user's module of its own environments, for baton's Python
// tests of libraries built outside baton's tree (baton.build): "keydoor", one
// explorer that fetches a key and then opens a door along a corridor, and
// "keydoor-pair", a keeper and an opener who must pick the same door at once.
package keydoor

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// StepCost is what every step costs the explorer (the tests edit it).
const StepCost = 0.05

// The corridor: the key at Key, the door at Length; MaxSteps truncates.
const (
	Length   = 6
	Key      = 3
	MaxSteps = 40
	Rounds   = 8
)

// ErrAction: an action outside the agent's space, or a step out of an episode.
var ErrAction = errors.New("keydoor: bad action")

// Corridor is the "keydoor" environment, an env.Env of one agent, "explorer":
// actions 0 (left) and 1 (right); observation [position/Length, has key].
type Corridor struct {
	pos, steps int
	key, live  bool
	obs        [2]float32
}

// Spec describes the explorer.
func (c *Corridor) Spec() env.Spec {
	return env.Spec{Name: "explorer", ObservationSpace: spaces.Must(spaces.NewBox([]int{2}, 0, 1)), ActionSpace: spaces.Discrete{N: 2}}
}

// Reset starts at the corridor's left end, without the key.
func (c *Corridor) Reset(uint64) (env.Step, error) {
	c.pos, c.steps, c.key, c.live = 0, 0, false, true
	return env.Step{Obs: c.observe()}, nil
}

// Step moves the explorer; reaching the door with the key ends the episode.
func (c *Corridor) Step(a agent.RawAction) (env.Step, error) {
	if !c.live {
		return env.Step{}, fmt.Errorf("%w: the episode is over", ErrAction)
	}
	if a.Int != 0 && a.Int != 1 {
		return env.Step{}, fmt.Errorf("%w: %d; want 0 (left) or 1 (right)", ErrAction, a.Int)
	}
	c.pos = min(max(c.pos+int(2*a.Int-1), 0), Length)
	c.steps++
	c.key = c.key || c.pos == Key
	r := -StepCost
	term := c.key && c.pos == Length
	if term {
		r++
	}
	trunc := !term && c.steps >= MaxSteps
	c.live = !term && !trunc
	return env.Step{Obs: c.observe(), Reward: r, Terminated: term, Truncated: trunc}, nil
}

// Info is the position.
func (c *Corridor) Info() any { return map[string]any{"pos": c.pos, "key": c.key} }

func (c *Corridor) observe() []float32 {
	c.obs = [2]float32{float32(c.pos) / Length, 0}
	if c.key {
		c.obs[1] = 1
	}
	return c.obs[:]
}

// Pair is the "keydoor-pair" environment, an env.Parallel of "keeper" and "opener":
// each picks one of three doors (Discrete(3)) every round and both earn 1 when they
// pick the same one; each sees the other's last pick, one-hot (index 3: none).
type Pair struct {
	round   int
	live    bool
	last    [2]int64
	obs     [2][4]float32
	reports [2]env.Report
}

var pairNames = [2]string{"keeper", "opener"}

// Agents describes the two.
func (p *Pair) Agents() []env.Spec {
	s := make([]env.Spec, 2)
	for i, n := range pairNames {
		s[i] = env.Spec{Name: n, ObservationSpace: spaces.Must(spaces.NewBox([]int{4}, 0, 1)), ActionSpace: spaces.Discrete{N: 3}}
	}
	return s
}

// Info is the round.
func (p *Pair) Info() any { return map[string]any{"round": p.round} }

// Reset starts a game.
func (p *Pair) Reset(uint64) (env.Round, error) {
	p.round, p.live, p.last = 0, true, [2]int64{-1, -1}
	for i := range 2 {
		p.report(i, 0, true)
	}
	return env.Round{Reports: p.reports[:]}, nil
}

// Step plays a round.
func (p *Pair) Step(actions []agent.RawAction) (env.Round, error) {
	if !p.live || len(actions) != 2 {
		return env.Round{}, fmt.Errorf("%w: %d actions out of an episode, or not 2", ErrAction, len(actions))
	}
	for i, a := range actions {
		if a.Int < 0 || a.Int > 2 {
			return env.Round{}, fmt.Errorf("%w: %s picks door %d; want 0, 1 or 2", ErrAction, pairNames[i], a.Int)
		}
	}
	p.last = [2]int64{actions[0].Int, actions[1].Int}
	p.round++
	r := 0.0
	if p.last[0] == p.last[1] {
		r = 1
	}
	for i := range 2 {
		p.report(i, r, false)
	}
	p.live = p.round < Rounds
	return env.Round{Reports: p.reports[:], Over: !p.live}, nil
}

func (p *Pair) report(i int, r float64, start bool) {
	o := &p.obs[i]
	*o = [4]float32{}
	if h := p.last[1-i]; h >= 0 {
		o[h] = 1
	} else {
		o[3] = 1
	}
	p.reports[i] = env.Report{AgentID: pairNames[i] + "_0", Agent: pairNames[i], Obs: o[:], Reward: r, Start: start,
		Truncated: !start && p.round >= Rounds}
}

func random(n int64) registry.PolicyEntry {
	return registry.PolicyEntry{Name: "random", Description: "uniform", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
		return agent.Random(spaces.Discrete{N: n}, rng)
	}}
}

// Register adds "keydoor" and "keydoor-pair" to a registry; neither takes a
// configuration.
func Register(r *registry.Registry) error {
	noConfig := func(data []byte, f registry.FactoryFunc) (registry.Factory, error) {
		if err := registry.DecodeConfig(data, &struct{}{}); err != nil {
			return nil, err
		}
		return f, nil
	}
	return errors.Join(
		r.Register(registry.Entry{
			Name: "keydoor", Description: "fetch the key, then open the door",
			Open: func(data []byte) (registry.Factory, error) {
				return noConfig(data, func(registry.EnvOptions) (env.MultiAgent, error) { return registry.SingleAgent(&Corridor{}), nil })
			},
			Agents: []registry.AgentEntry{{Name: "explorer", Policies: []registry.PolicyEntry{random(2)}}},
		}),
		r.Register(registry.Entry{
			Name: "keydoor-pair", Description: "a keeper and an opener pick the same door",
			Open: func(data []byte) (registry.Factory, error) {
				return noConfig(data, func(registry.EnvOptions) (env.MultiAgent, error) { return env.Sequential(&Pair{}), nil })
			},
			Agents: []registry.AgentEntry{
				{Name: "keeper", Policies: []registry.PolicyEntry{random(3)}},
				{Name: "opener", Policies: []registry.PolicyEntry{random(3)}},
			},
		}),
	)
}
