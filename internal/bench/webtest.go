package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/hrl"
)

// The web-testing cases step the hrl runtime over envs/webtest with its default
// policies (the heuristic strategy, the scripted motion), and compare it with
// WebtestLoop, the same agents' and environment's methods called by hand with the
// switching written out: their ratio is what the runtime costs on a messier
// environment than the maze, whose own step (coverage lookups, routes, the
// observation of every target slot) dominates.

type webtestCase struct {
	name string
	cfg  webtest.Config
}

// webtestSites are the sites of the cases: the shop, and a generated site of 200
// pages with a budget that lets the heuristic cover it.
func webtestSites() []webtestCase {
	return []webtestCase{
		{"shop", webtest.Config{}},
		{"gen200", webtest.Config{Generate: &webtest.GenerateConfig{Pages: 200, Seed: 1}, Strategy: webtest.StrategyConfig{Budget: 20000}}},
	}
}

func webtestCases() []Case {
	var cs []Case
	for _, w := range webtestSites() {
		cs = append(cs,
			Case{Name: "WebtestStep/" + w.name, Baseline: "WebtestLoop/" + w.name, Unit: "step", Run: webtestStep(w.cfg)},
			Case{Name: "WebtestLoop/" + w.name, Unit: "step", Run: webtestLoop(w.cfg)},
		)
	}
	return cs
}

// WebtestPolicies returns the default policies of the web-testing environment, the
// heuristic drawing its ties from rand.NewPCG(seed, 0), by agent name.
func WebtestPolicies(seed uint64) (map[string]agent.Policy, error) {
	h, err := webtest.NewHeuristic(rand.New(rand.NewPCG(seed, 0)))
	if err != nil {
		return nil, err
	}
	return map[string]agent.Policy{webtest.StrategyName: h, webtest.MotionName: webtest.Scripted{}}, nil
}

// webtestStep steps the runtime, resetting with the next seed when an episode ends.
// One iteration is one step.
func webtestStep(cfg webtest.Config) func(b *testing.B) {
	return func(b *testing.B) {
		e, err := webtest.NewEnv(cfg)
		if err != nil {
			b.Fatal(err)
		}
		rt, err := hrl.New(hrl.HierarchicalEnv[webtest.State, webtest.Action](e), hrl.Config{})
		if err != nil {
			b.Fatal(err)
		}
		pols, err := WebtestPolicies(1)
		if err != nil {
			b.Fatal(err)
		}
		strategy, motion := pols[webtest.StrategyName], pols[webtest.MotionName]
		runtimeLoop(b, rt, webtest.StrategyName, strategy, motion)
	}
}

// webtestLoop steps WebtestLoop with the same policies.
func webtestLoop(cfg webtest.Config) func(b *testing.B) {
	return func(b *testing.B) {
		l, err := NewWebtestLoop(cfg)
		if err != nil {
			b.Fatal(err)
		}
		pols, err := WebtestPolicies(1)
		if err != nil {
			b.Fatal(err)
		}
		strategy, motion := pols[webtest.StrategyName], pols[webtest.MotionName]
		ctx := context.Background()
		r := l.Reset()
		b.ReportAllocs()
		for b.Loop() {
			p := strategy
			if r.Motion {
				p = motion
			}
			raw, err := p.Act(ctx, r.Obs, r.Mask)
			if err != nil {
				b.Fatal(err)
			}
			if r, err = l.Step(raw.Int); err != nil {
				b.Fatal(err)
			}
			if r.Over {
				r = l.Reset()
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	}
}

// WebtestLoop plays the web-testing environment without the hrl runtime: the agents'
// TranslateState, DecodeAction, Done, Reward and EncodeView, the environment's Step
// and the Login procedure, called in the order the runtime calls them, with the
// switching of webtest.Env.Machine written out (a pick that needs login runs Login, any
// other pick hands control to the motion agent, whose end returns it). It does the
// work a step needs and no more, so the runtime's cost is the difference.
// Not safe for concurrent use.
type WebtestLoop struct {
	env      *webtest.Env
	strategy *webtest.Strategy
	motion   *webtest.Motion
	state    webtest.State
	inMotion bool
	// the strategy's decision count, its view when it handed control down and the
	// action it did so with; the motion agent's step count
	sSteps, mSteps int
	pending        webtest.View
	pendAct        webtest.Action
	tick           int
	obs            []float32
	mask           []bool
	res            WebtestResult
}

// WebtestResult is what a WebtestLoop step reports: the acting agent's observation
// and mask (owned by the loop, valid until its next Step or Reset), whether it is the
// motion agent, the last reward of each agent and whether the episode is over.
type WebtestResult struct {
	Obs              []float32
	Mask             []bool
	Motion           bool
	Tick             int
	StrategyReward   float64
	MotionReward     float64
	StrategyReported bool // the strategy agent was settled in this step
	MotionReported   bool // the motion agent acted in this step
	Over             bool
}

// NewWebtestLoop builds the loop of a configuration.
func NewWebtestLoop(cfg webtest.Config) (*WebtestLoop, error) {
	e, err := webtest.NewEnv(cfg)
	if err != nil {
		return nil, err
	}
	c := e.Config()
	n := max(webtest.StrategyObsSize, webtest.MotionObsSize)
	return &WebtestLoop{env: e, strategy: webtest.NewStrategy(e.Site(), c.Strategy), motion: webtest.NewMotion(c.Motion),
		obs: make([]float32, n), mask: make([]bool, max(webtest.StrategyActions, webtest.MotionActions))}, nil
}

// Reset starts an episode.
func (l *WebtestLoop) Reset() WebtestResult {
	l.state = l.env.InitialState(nil)
	l.inMotion, l.sSteps, l.mSteps, l.tick = false, 0, 0, 0
	l.res = WebtestResult{}
	l.encodeStrategy()
	return l.res
}

func (l *WebtestLoop) strategyView() webtest.View {
	return l.strategy.TranslateState(l.state, agent.Clock{Steps: l.sSteps, Tick: l.tick})
}

func (l *WebtestLoop) motionView() webtest.View {
	return l.motion.TranslateState(l.state, agent.Clock{Steps: l.mSteps, Tick: l.tick})
}

func (l *WebtestLoop) encodeStrategy() {
	l.res.Obs, l.res.Mask, l.res.Motion = l.obs[:webtest.StrategyObsSize], l.mask[:webtest.StrategyActions], false
	l.strategy.EncodeView(l.strategyView(), l.res.Obs, l.res.Mask)
}

func (l *WebtestLoop) encodeMotion() {
	l.res.Obs, l.res.Mask, l.res.Motion = l.obs[:webtest.MotionObsSize], l.mask[:webtest.MotionActions], true
	l.motion.EncodeView(l.motionView(), l.res.Obs, l.res.Mask)
}

// settleStrategy scores the strategy's decision a, taken in view prev, now that it
// has completed, and reports whether the episode is over.
func (l *WebtestLoop) settleStrategy(prev webtest.View, a webtest.Action) {
	l.sSteps++
	next := l.strategyView()
	l.res.StrategyReward = l.strategy.Reward(prev, a, next)
	l.res.StrategyReported = true
	term, trunc := l.strategy.Done(next)
	l.encodeStrategy()
	l.res.Over = term || trunc
}

// Step applies the acting agent's raw action.
func (l *WebtestLoop) Step(raw int64) (WebtestResult, error) {
	if l.res.Over {
		return l.res, fmt.Errorf("bench: webtest loop: the episode is over")
	}
	l.res.StrategyReported, l.res.MotionReported = false, false
	if l.inMotion {
		prev := l.motionView()
		a, err := l.motion.DecodeAction(prev, raw)
		if err != nil {
			return l.res, err
		}
		s, err := l.env.Step(l.state, a)
		if err != nil {
			return l.res, err
		}
		l.state = s
		l.tick++
		l.mSteps++
		next := l.motionView()
		l.res.MotionReward = l.motion.Reward(prev, a, next)
		l.res.MotionReported = true
		term, trunc := l.motion.Done(next)
		l.encodeMotion()
		if term || trunc {
			l.inMotion = false
			l.settleStrategy(l.pending, l.pendAct)
		}
		l.res.Tick = l.tick
		return l.res, nil
	}
	prev := l.strategyView()
	a, err := l.strategy.DecodeAction(prev, raw)
	if err != nil {
		return l.res, err
	}
	s, err := l.env.Step(l.state, a)
	if err != nil {
		return l.res, err
	}
	login := a.Login && (a.Kind == webtest.Pick || a.Kind == webtest.Back)
	if login {
		if s, err = webtest.Login(s, a); err != nil {
			return l.res, err
		}
	}
	l.state = s
	l.tick++
	l.res.Tick = l.tick
	if a.Kind == webtest.Pick && !login {
		l.inMotion, l.mSteps, l.pending, l.pendAct = true, 0, prev, a
		l.encodeMotion()
		return l.res, nil
	}
	l.settleStrategy(prev, a)
	return l.res, nil
}
