package rps

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// The hands, the actions of Discrete(3).
const (
	Rock int64 = iota
	Paper
	Scissors
)

// DefaultMaxCycles is the number of rounds of an episode when Config.MaxCycles is 0.
const DefaultMaxCycles = 15

// The players' names.
var Players = [2]string{"player_0", "player_1"}

var ids = [2]string{"player_0_0", "player_1_0"}

// Errors of the package.
var (
	// ErrConfig: a bad configuration.
	ErrConfig = errors.New("rps: bad configuration")
	// ErrAction: a wrong number of actions, or a hand outside Discrete(3).
	ErrAction = errors.New("rps: bad action")
	// ErrNotReset: Step before Reset, or after the episode ended.
	ErrNotReset = errors.New("rps: no episode in progress (call Reset)")
)

// Config configures the game; its zero value means the defaults.
type Config struct {
	// MaxCycles is the number of rounds of an episode; 0 means DefaultMaxCycles.
	MaxCycles int `json:"max_cycles"`
}

// ParseConfig reads a JSON Config (nil or empty: the defaults); unknown fields and a
// negative MaxCycles are errors wrapping ErrConfig.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if err := registry.DecodeConfig(data, &c); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.MaxCycles < 0 {
		return Config{}, fmt.Errorf("%w: max_cycles is %d; want 0 (the default) or more", ErrConfig, c.MaxCycles)
	}
	if c.MaxCycles == 0 {
		c.MaxCycles = DefaultMaxCycles
	}
	return c, nil
}

// Game is rock-paper-scissors, an env.Parallel. Create it with New. It is not safe for
// concurrent use; it steps without allocating.
type Game struct {
	max     int
	started bool
	round   int
	last    [2]int64 // each player's last hand, -1 before the first round
	obs     [2][4]float32
	reports [2]env.Report
}

// New returns a game of the configuration (its zero value: the defaults).
func New(c Config) (*Game, error) {
	if c.MaxCycles < 0 {
		return nil, fmt.Errorf("%w: max_cycles is %d; want 0 (the default) or more", ErrConfig, c.MaxCycles)
	}
	if c.MaxCycles == 0 {
		c.MaxCycles = DefaultMaxCycles
	}
	return &Game{max: c.MaxCycles}, nil
}

// ObservationSpace is Box(0, 1, (4,)): the other player's last hand, one-hot, index 3
// for none.
func ObservationSpace() spaces.Space { return spaces.Must(spaces.NewBox([]int{4}, 0, 1)) }

// ActionSpace is Discrete(3): Rock, Paper, Scissors.
func ActionSpace() spaces.Discrete { return spaces.Discrete{N: 3} }

// Agents describes the two players.
func (g *Game) Agents() []env.Spec {
	specs := make([]env.Spec, 2)
	for i, name := range Players {
		specs[i] = env.Spec{Name: name, ObservationSpace: ObservationSpace(), ActionSpace: ActionSpace()}
	}
	return specs
}

// Info is the round and the players' last hands (-1 before the first round).
type Info struct {
	Round int      `json:"round"`
	Last  [2]int64 `json:"last"`
}

// Info returns the game's Info.
func (g *Game) Info() any { return Info{Round: g.round, Last: g.last} }

// Reset starts an episode; the seed is unused (the game is deterministic).
func (g *Game) Reset(uint64) (env.Round, error) {
	g.started, g.round, g.last = true, 0, [2]int64{-1, -1}
	for i := range 2 {
		g.report(i, 0, true)
	}
	return env.Round{Reports: g.reports[:]}, nil
}

// Step plays one round: actions[i] is player i's hand.
func (g *Game) Step(actions []agent.RawAction) (env.Round, error) {
	switch {
	case !g.started:
		return env.Round{}, ErrNotReset
	case len(actions) != 2:
		return env.Round{}, fmt.Errorf("%w: %d actions; want 2, one per player", ErrAction, len(actions))
	}
	for i, a := range actions {
		if a.Int < Rock || a.Int > Scissors {
			return env.Round{}, fmt.Errorf("%w: %s shows %d; want 0 (rock), 1 (paper) or 2 (scissors)", ErrAction, Players[i], a.Int)
		}
	}
	g.last = [2]int64{actions[0].Int, actions[1].Int}
	g.round++
	w := Winner(g.last[0], g.last[1])
	g.report(0, float64(w), false)
	g.report(1, float64(-w), false) // -w, not -1 * w: a draw is 0, not -0
	over := g.round >= g.max
	g.started = !over
	return env.Round{Reports: g.reports[:], Over: over}, nil
}

// Winner returns 1 when hand a beats hand b, -1 when b beats a, 0 on a draw.
func Winner(a, b int64) int {
	switch {
	case a == b:
		return 0
	case (a-b+3)%3 == 1: // paper beats rock, scissors paper, rock scissors
		return 1
	}
	return -1
}

func (g *Game) report(i int, reward float64, start bool) {
	o := &g.obs[i]
	*o = [4]float32{}
	if h := g.last[1-i]; h >= 0 {
		o[h] = 1
	} else {
		o[3] = 1
	}
	g.reports[i] = env.Report{AgentID: ids[i], Agent: Players[i], Obs: o[:], Reward: reward, Start: start,
		Truncated: !start && g.round >= g.max}
}
