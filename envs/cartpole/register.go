package cartpole

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
)

// Register adds the cart-pole to a registry under the name "cartpole", configured by
// the JSON of Config (`{"max_steps": 200}`; unknown fields are errors), as a
// multi-agent environment of one agent (registry.SingleAgent; its id is
// "cartpole_0"). A trial's tick limit lowers Config.MaxSteps, so that the environment
// itself truncates. Its policies:
//
//	cartpole  random (default): uniform pushes; balance: Balance, a PD rule
//
// An episode succeeds when the pole is still up at the time limit (truncated, not
// terminated). People see the actions as LEFT and RIGHT, the state in one line as its
// Info's JSON, and drawn as Env.Render draws it (through the adapter's Unwrap).
func Register(r *registry.Registry) error {
	return r.Register(registry.Entry{
		Name:        "cartpole",
		Description: "Gymnasium's CartPole-v1: push a cart to keep its pole upright",
		Config:      Config{},
		Open:        openFactory,
		Agents: []registry.AgentEntry{{Name: Name, Default: "random", Policies: []registry.PolicyEntry{
			{Name: "random", Description: "uniform pushes", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
				return agent.Random(ActionSpace(), rng)
			}},
			{Name: "balance", Description: "push toward where the pole falls (theta + 0.5 theta_dot)", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
				return Balance(), nil
			}},
		}}},
		Success: Balanced,
		Look: registry.Look{Action: func(_ env.Turn, _ *env.Report, raw agent.RawAction) string {
			switch raw.Int {
			case PushLeft:
				return "LEFT"
			case PushRight:
				return "RIGHT"
			}
			return ""
		}},
	})
}

// Balance is the policy that pushes the cart toward the side the pole is falling to:
// right when theta + 0.5·theta_dot > 0, else left. It keeps CartPole-v1 up for its 500
// steps from most starts. Safe for concurrent use; it allocates nothing.
func Balance() agent.Policy {
	return agent.PolicyFunc(func(_ context.Context, obs []float32, _ []bool) (agent.RawAction, error) {
		if len(obs) < 4 {
			return agent.RawAction{}, fmt.Errorf("cartpole: balance: observation has %d values; want 4", len(obs))
		}
		if obs[2]+0.5*obs[3] > 0 {
			return agent.Discrete(PushRight), nil
		}
		return agent.Discrete(PushLeft), nil
	})
}

// Balanced reports whether the episode ending with final kept the pole up to the end:
// truncated, not terminated. It is the cart-pole's success.
func Balanced(final env.Turn) bool {
	for i := range final.Reports {
		if r := &final.Reports[i]; r.Terminated {
			return false
		}
	}
	return len(final.Reports) > 0
}

type factory struct{ cfg Config }

func openFactory(config []byte) (registry.Factory, error) {
	var cfg Config
	if err := registry.DecodeConfig(config, &cfg); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &factory{cfg: cfg}, nil
}

// NewEnv returns a cart-pole whose time limit is the configuration's, or the trial's
// tick limit when lower.
func (f *factory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	cfg := f.cfg
	if o.MaxTicks > 0 && o.MaxTicks < cfg.MaxSteps {
		cfg.MaxSteps = o.MaxTicks
	}
	e, err := NewEnv(cfg)
	if err != nil {
		return nil, err
	}
	return registry.SingleAgent(e), nil
}
