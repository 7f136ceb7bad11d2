package rps

import (
	"context"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
)

// Register adds the game to a registry under the name "rps", configured by the JSON
// that ParseConfig reads (`{"max_cycles": 100}`), its rounds taken turn by turn
// (env.Sequential). A trial's tick limit lowers MaxCycles. Each player's policies:
//
//	random (default): uniform over the hands; rock: always Rock
//
// People see the hands as ROCK, PAPER and SCISSORS, and the game as Game.Render
// draws it.
func Register(r *registry.Registry) error {
	policies := []registry.PolicyEntry{
		{Name: "random", Description: "uniform over the hands", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
			return agent.Random(ActionSpace(), rng)
		}},
		{Name: "rock", Description: "always rock", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
			return agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(Rock), nil }), nil
		}},
	}
	return r.Register(registry.Entry{
		Name:        "rps",
		Description: "rock-paper-scissors, two players moving at once (PettingZoo's rps_v2)",
		Config:      Config{},
		Open:        openFactory,
		Agents: []registry.AgentEntry{
			{Name: Players[0], Default: "random", Policies: policies},
			{Name: Players[1], Default: "random", Policies: policies},
		},
		Look: registry.Look{Action: func(_ env.Turn, _ *env.Report, raw agent.RawAction) string {
			if raw.Int >= Rock && raw.Int <= Scissors {
				return [3]string{"ROCK", "PAPER", "SCISSORS"}[raw.Int]
			}
			return ""
		}},
	})
}

type factory struct{ cfg Config }

func openFactory(config []byte) (registry.Factory, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	return &factory{cfg: cfg}, nil
}

// NewEnv returns a game, turn by turn, whose rounds are the configuration's, or the
// trial's tick limit when lower.
func (f *factory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	cfg := f.cfg
	if o.MaxTicks > 0 && o.MaxTicks < cfg.MaxCycles {
		cfg.MaxCycles = o.MaxTicks
	}
	g, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return env.Sequential(g), nil
}
