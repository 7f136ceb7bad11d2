package webtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
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
// coverage (the share of the site's coverage units covered) and defects_found. People
// see the actions as ActionName names them (`link "Cart"`, back, finish, type
// unicode), the state in one line as its Info's JSON, and the page as State.Render
// draws it.
//
// A configuration from the network (a server's caller; registry.Registry.Remote) is
// opened with two bounds: its site_file is a name inside the folder the server's
// operator allows (registry.Remote.ReadFile; none without one), and its site, generated,
// inline or in that file, has at most webtest.pages pages (LimitPages,
// DefaultRemotePages unless the operator raises it).
func Register(r *registry.Registry) error {
	return r.Register(registry.Entry{
		Name:        "webtest",
		Description: "testing a web application: a strategy agent picks what to test, a motion agent performs the UI operations",
		Config:      Config{},
		Open:        openFactory,
		OpenRemote:  openRemoteFactory,
		Limits: []registry.Limit{
			{Name: LimitPages, Description: "pages of a site, generated, inline or in a site file", Default: DefaultRemotePages},
		},
		Agents: []registry.AgentEntry{
			{Name: StrategyName, Default: "heuristic", Policies: []registry.PolicyEntry{
				{Name: "heuristic", Description: "least-covered target first: a depth-first search of the site", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
					return NewHeuristic(rng)
				}},
				{Name: "random", Description: "monkey testing: uniform over the allowed targets and back", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
					return NewMonkey(rng)
				}},
			}},
			{Name: MotionName, Default: "scripted", Policies: []registry.PolicyEntry{
				{Name: "scripted", Description: "valid values first, then one edge case per submission", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
					return Scripted{}, nil
				}},
				{Name: "random", Description: "uniform over the applicable UI operations", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
					return agent.Random(spaces.Discrete{N: MotionActions}, rng)
				}},
			}},
		},
		Success: FoundAll,
		Metrics: []registry.Metric{
			{Name: "coverage", Description: "share of the site's coverage units covered", Value: func(final env.Turn) (float64, bool) {
				s, ok := FinalState(final)
				return s.Coverage(), ok
			}},
			{Name: "defects_found", Description: "planted defects found", Value: func(final env.Turn) (float64, bool) {
				s, ok := FinalState(final)
				return float64(s.DefectsFound()), ok
			}},
		},
		Look: registry.Look{Render: registry.RenderState[State, Action](), Action: func(turn env.Turn, acting *env.Report, raw agent.RawAction) string {
			if acting.Agent != StrategyName {
				return ActionName(State{}, acting.Agent, raw.Int)
			}
			o, err := hrl.Obs[StrategyObs](turn, acting.AgentID)
			if err != nil {
				return ""
			}
			return ActionName(o.State, acting.Agent, raw.Int)
		}},
	})
}

// ActionName says for people what the raw action of the agent named agentName means in
// state s, the state it acted in. The strategy agent's: the element in the target slot
// by its kind and label, `link "Featured: the widget"` (its id when it has no label),
// with " (login)" when the login procedure runs first; "back" (with " (login)" too),
// "finish", and "slot 7 (empty)" for a slot that holds no target. The motion agent's,
// which do not depend on s: "focus", "type valid", "type unicode", ..., "toggle",
// "choose", "submit", "click". "" for an action outside the agent's action space or an
// agent of another name.
func ActionName(s State, agentName string, raw int64) string {
	switch agentName {
	case StrategyName:
		return strategyActionName(&s, raw)
	case MotionName:
		return motionActionName(raw)
	}
	return ""
}

func strategyActionName(s *State, raw int64) string {
	if raw < 0 || raw >= StrategyActions || s.site == nil {
		return ""
	}
	login := ""
	switch raw {
	case StrategyBack:
		if s.backNeedsLogin() {
			login = " (login)"
		}
		return "back" + login
	case StrategyFinish:
		return "finish"
	}
	t := s.slotTarget(int(raw))
	if t < 0 {
		return fmt.Sprintf("slot %d (empty)", raw)
	}
	tg := &s.site.targets[t]
	label := tg.label
	if label == "" {
		label = tg.id
	}
	if s.needsLogin(t) {
		login = " (login)"
	}
	return fmt.Sprintf("%s %q%s", tg.kind, label, login)
}

func motionActionName(raw int64) string {
	switch {
	case raw == MotionFocus:
		return Focus.String()
	case raw >= MotionType(Valid) && raw <= MotionType(Script):
		return Type.String() + " " + Value(raw).String()
	case raw == MotionToggle:
		return Toggle.String()
	case raw == MotionChoose:
		return Choose.String()
	case raw == MotionSubmit:
		return Submit.String()
	case raw == MotionClick:
		return Click.String()
	}
	return ""
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

// factory is the registry.Factory of one configuration: the environment, which holds
// configuration only and is safe for concurrent use.
type factory struct {
	env *Env
}

func openFactory(config []byte) (registry.Factory, error) {
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

// openRemoteFactory opens a configuration from the network: its site file is read
// inside the folder the server allows, and its site has at most the limit LimitPages
// of pages.
func openRemoteFactory(config []byte, o registry.Remote) (registry.Factory, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	e, err := newEnv(cfg, &o)
	if err != nil {
		return nil, err
	}
	return &factory{env: e}, nil
}

// Size estimates the memory of the site (some 3 KB a page, measured on generated
// sites, with room to spare) and of each environment (its episode's record of
// coverage, some 150 bytes a page, and its observations).
func (f *factory) Size() (shared, each int64) {
	pages := int64(f.env.site.Pages())
	return 4096 * pages, 256*pages + 4*(StrategyObsSize+MotionObsSize) + 4096
}

// NewEnv returns a runtime of the environment with the tick limit.
func (f *factory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	return hrl.New(hrl.HierarchicalEnv[State, Action](f.env), hrl.Config{MaxTicks: o.MaxTicks})
}
