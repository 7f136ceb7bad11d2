package env_test

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
)

// Hands of rock-paper-scissors.
const (
	rock int64 = iota
	paper
	scissors
)

// rps is rock-paper-scissors between alice and bob, a Parallel environment: every round
// both show a hand, the winner earns 1 and the loser -1. Nobody may show the same hand
// twice in a row (the mask forbids it and Step rejects it). The episode terminates when
// a player has won target rounds and is truncated after rounds rounds. A player's
// observation is the other's last hand, one-hot (all zero before the first round), then
// its own wins and the other's.
type rps struct {
	target, rounds int
	// fail, when set, makes the next Step fail with it.
	fail error

	started bool
	round   int
	last    [2]int64
	wins    [2]int
	reports [2]env.Report
	obs     [2][5]float32
	mask    [2][3]bool
}

var (
	players   = [2]string{"alice", "bob"}
	playerIDs = [2]string{"alice_0", "bob_0"}
)

func (g *rps) Agents() []env.Spec {
	specs := make([]env.Spec, 2)
	for i, name := range players {
		specs[i] = env.Spec{Name: name, ObservationSpace: spaces.Must(spaces.NewBox([]int{5}, 0, 100)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3}
	}
	return specs
}

func (g *rps) Reset(uint64) (env.Round, error) {
	g.started, g.round, g.last, g.wins = true, 0, [2]int64{-1, -1}, [2]int{}
	for i := range 2 {
		g.report(i, 0, true)
	}
	return env.Round{Reports: g.reports[:]}, nil
}

func (g *rps) report(i int, reward float64, start bool) {
	o := &g.obs[i]
	*o = [5]float32{}
	if h := g.last[1-i]; h >= 0 {
		o[h] = 1
	}
	o[3], o[4] = float32(g.wins[i]), float32(g.wins[1-i])
	for h := range int64(3) {
		g.mask[i][h] = h != g.last[i]
	}
	term := g.wins[0] == g.target || g.wins[1] == g.target
	g.reports[i] = env.Report{
		AgentID: playerIDs[i], Agent: players[i], Obs: o[:], Mask: g.mask[i][:],
		Reward: reward, Start: start, Terminated: term, Truncated: !term && g.round >= g.rounds,
	}
}

func (g *rps) over() bool { return g.reports[0].Done() }

func (g *rps) Step(actions []agent.RawAction) (env.Round, error) {
	switch {
	case !g.started || g.over():
		return env.Round{}, errors.New("rps: no round to play")
	case len(actions) != 2:
		return env.Round{}, fmt.Errorf("rps: %d actions for 2 players", len(actions))
	case g.fail != nil:
		err := g.fail
		g.fail = nil
		return env.Round{}, err
	}
	for i, a := range actions {
		if a.Int < 0 || a.Int > 2 || a.Int == g.last[i] {
			return env.Round{}, fmt.Errorf("rps: %s may not show %d", players[i], a.Int)
		}
	}
	a, b := actions[0].Int, actions[1].Int
	var r float64
	switch {
	case (a+1)%3 == b: // b beats a
		r = -1
		g.wins[1]++
	case (b+1)%3 == a:
		r = 1
		g.wins[0]++
	}
	g.last = [2]int64{a, b}
	g.round++
	g.report(0, r, false)
	g.report(1, 0-r, false)
	return env.Round{Reports: g.reports[:], Over: g.over()}, nil
}

func (g *rps) Info() any { return map[string]any{"round": g.round} }

// echo is a Parallel environment whose agents come and go: a and b start the episode, c
// joins after the first round; a terminates after 2 actions, c after 2, b is truncated
// after 3. Actions are one float in [-1, 1], the reward of its agent; each observation
// is the sum of its agent's actions. It keeps a copy of every action it receives.
type echo struct {
	got [][]float32 // per step, the Floats[0] of each action

	round   int
	live    []int // agent indices, in report order
	sum     [3]float32
	steps   [3]int
	obs     [3][1]float32
	reports []env.Report
}

var echoNames = [3]string{"a", "b", "c"}

func (e *echo) Agents() []env.Spec {
	specs := make([]env.Spec, 3)
	for i, n := range echoNames {
		specs[i] = env.Spec{Name: n, ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -10, 10)), ActionSpace: spaces.Must(spaces.NewBox([]int{1}, -1, 1))}
	}
	return specs
}

func (e *echo) rep(i int, reward float64, start bool) env.Report {
	e.obs[i][0] = e.sum[i]
	return env.Report{AgentID: echoNames[i] + "_0", Agent: echoNames[i], Obs: e.obs[i][:], Reward: reward, Start: start,
		Terminated: i != 1 && e.steps[i] == 2, Truncated: i == 1 && e.steps[i] == 3}
}

func (e *echo) Reset(uint64) (env.Round, error) {
	e.got, e.round, e.sum, e.steps = nil, 0, [3]float32{}, [3]int{}
	e.live = append(e.live[:0], 0, 1)
	e.reports = append(e.reports[:0], e.rep(0, 0, true), e.rep(1, 0, true))
	return env.Round{Reports: e.reports}, nil
}

func (e *echo) Step(actions []agent.RawAction) (env.Round, error) {
	if len(actions) != len(e.live) {
		return env.Round{}, fmt.Errorf("echo: %d actions for %d agents", len(actions), len(e.live))
	}
	got := make([]float32, len(actions))
	e.reports = e.reports[:0]
	var live []int
	for k, i := range e.live {
		v := actions[k].Floats[0]
		got[k] = v
		e.sum[i] += v
		e.steps[i]++
		r := e.rep(i, float64(v), false)
		e.reports = append(e.reports, r)
		if !r.Done() {
			live = append(live, i)
		}
	}
	e.got = append(e.got, got)
	e.round++
	if e.round == 1 {
		e.reports = append(e.reports, e.rep(2, 0, true))
		live = append(live, 2)
	}
	e.live = live
	return env.Round{Reports: e.reports, Over: len(live) == 0}, nil
}

func (e *echo) Info() any { return nil }
