package webtest

import (
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
)

// Register adds the web-testing environment to a registry under the name "webtest",
// configured by the JSON that ParseConfig reads. Its agents and policies:
//
//	strategy  heuristic (default): Heuristic, least-covered target first;
//	          random: Monkey, uniform over the allowed targets and back
//	motion    scripted (default): Scripted, valid values, then one edge case per
//	          submission; random: uniform over the applicable UI operations
//
// An episode succeeds when it found every planted defect (FoundAll). Its metrics are
// coverage (the share of the site's coverage units covered) and defects_found.
func Register(r *runners.Registry) error {
	return r.Register(runners.Entry{
		Name:        "webtest",
		Description: "testing a web application: a strategy agent picks what to test, a motion agent performs the UI operations",
		Config:      Config{},
		Open:        openFactory,
		Agents: []runners.AgentEntry{
			{Name: StrategyName, Default: "heuristic", Policies: []runners.PolicyEntry{
				{Name: "heuristic", Description: "least-covered target first: a depth-first search of the site", New: func(_ runners.Factory, rng *rand.Rand) (agent.Policy, error) {
					return NewHeuristic(rng)
				}},
				{Name: "random", Description: "monkey testing: uniform over the allowed targets and back", New: func(_ runners.Factory, rng *rand.Rand) (agent.Policy, error) {
					return NewMonkey(rng)
				}},
			}},
			{Name: MotionName, Default: "scripted", Policies: []runners.PolicyEntry{
				{Name: "scripted", Description: "valid values first, then one edge case per submission", New: func(runners.Factory, *rand.Rand) (agent.Policy, error) {
					return Scripted{}, nil
				}},
				{Name: "random", Description: "uniform over the applicable UI operations", New: func(_ runners.Factory, rng *rand.Rand) (agent.Policy, error) {
					return agent.Random(spaces.Discrete{N: MotionActions}, rng)
				}},
			}},
		},
		Success: FoundAll,
		Metrics: []runners.Metric{
			{Name: "coverage", Description: "share of the site's coverage units covered", Value: func(final env.Turn) (float64, bool) {
				s, ok := FinalState(final)
				return s.Coverage(), ok
			}},
			{Name: "defects_found", Description: "planted defects found", Value: func(final env.Turn) (float64, bool) {
				s, ok := FinalState(final)
				return float64(s.DefectsFound()), ok
			}},
		},
	})
}

// FinalState returns the state the strategy agent observed in a Turn of the
// environment's runtime (the one that ended an episode, say), and false when the
// strategy agent is not reported in it or the Turn does not come from the runtime.
func FinalState(final env.Turn) (State, bool) {
	for i := range final.Reports {
		if r := &final.Reports[i]; r.Agent == StrategyName {
			if o, err := hrl.Obs[StrategyObs](final, r.AgentID); err == nil {
				return o.State, true
			}
		}
	}
	return State{}, false
}

// FoundAll reports whether the episode ending with final found every planted defect.
// It is the environment's success.
func FoundAll(final env.Turn) bool {
	s, ok := FinalState(final)
	return ok && s.FoundAll()
}

// factory is the runners.Factory of one configuration: the environment, which holds
// configuration only and is safe for concurrent use.
type factory struct {
	env *Env
}

func openFactory(config []byte) (runners.Factory, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	e, err := NewEnv(cfg)
	if err != nil {
		return nil, err
	}
	return &factory{env: e}, nil
}

// NewEnv returns a runtime of the environment with the tick limit.
func (f *factory) NewEnv(o runners.EnvOptions) (env.MultiAgent, error) {
	return hrl.New(hrl.HierarchicalEnv[State, Action](f.env), hrl.Config{MaxTicks: o.MaxTicks})
}
