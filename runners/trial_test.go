package runners_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// runOne runs spec as a campaign of one trial on one worker, recording its events.
func runOne(t *testing.T, reg *registry.Registry, spec runners.Spec) (runners.Result, *recorder) {
	t.Helper()
	rec := newRecorder()
	var res runners.Result
	c, err := runners.NewCampaign(reg, spec, runners.WithSinks(rec), runners.WithWorkers(1),
		runners.WithProgress(func(p runners.Progress) { res = *p.Result }))
	require.NoError(t, err)
	_, err = c.Run(t.Context())
	require.NoError(t, err)
	return res, rec
}

// The oracle with a motion agent that only moves forward reaches the goal in seven
// decisions and 20 ticks (docs/getting-started.md, "Swap a policy"): every agent step is an event, with
// the action its reward scores and the span of the decision.
func TestTrialMazeOracleForward(t *testing.T) {
	defer goleak.VerifyNone(t)
	res, rec := runOne(t, testRegistry(t), mazeSpec("forward"))
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	require.NoError(t, res.Err)

	const ( // the strategy's directions
		up, down, left = "0", "2", "3"
	)
	want := []string{
		"e0 t0 strategy_0<- start acting",
		"e0 t1 motion_0<-strategy_0 start acting",
		"e0 t2 motion_0<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t2 strategy_0<- a=" + left + " r=0 env:0 span=2 acting",
		"e0 t3 motion_1<-strategy_0 start acting",
		"e0 t4 motion_1<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t5 motion_1<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t5 strategy_0<- a=" + down + " r=0 env:0 span=3 acting",
		"e0 t6 motion_2<-strategy_0 start acting",
		"e0 t7 motion_2<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t8 motion_2<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t9 motion_2<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t9 strategy_0<- a=" + left + " r=0 env:0 span=4 acting",
		"e0 t10 motion_3<-strategy_0 start acting",
		"e0 t11 motion_3<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t12 motion_3<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t12 strategy_0<- a=" + up + " r=0 env:0 span=3 acting",
		"e0 t13 motion_4<-strategy_0 start acting",
		"e0 t14 motion_4<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t15 motion_4<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t16 motion_4<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t16 strategy_0<- a=" + up + " r=0 env:0 span=4 acting",
		"e0 t17 motion_5<-strategy_0 start acting",
		"e0 t18 motion_5<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t18 strategy_0<- a=" + left + " r=0 env:0 span=2 acting",
		"e0 t19 motion_6<-strategy_0 start acting",
		"e0 t20 motion_6<-strategy_0 a=1 r=1 env:1 span=1 terminated",
		"e0 t20 strategy_0<- a=" + up + " r=1 env:1 span=2 terminated",
	}
	assert.Equal(t, want, lines(rec.steps("maze-0")))

	// The events around the steps: state, episode begin and end.
	events := rec.events("maze-0")
	first, last := events[0], events[len(events)-1]
	require.Equal(t, event.KindState, first.Kind)
	assert.Equal(t, event.Running, first.State.State)
	info := first.State.Info
	require.NotNil(t, info)
	assert.Equal(t, "maze-0", info.ID)
	assert.Equal(t, "maze", info.Env)
	assert.Equal(t, []string{"oracle", "forward"}, info.Policies)
	assert.Equal(t, []string{"strategy", "motion"}, []string{info.Agents[0].Name, info.Agents[1].Name})
	assert.True(t, info.DefinesSuccess)
	require.Equal(t, event.KindEpisode, events[1].Kind)
	assert.Equal(t, event.EpisodeEvent{Episode: 0, Seed: 0}, *events[1].Episode)
	end := events[len(events)-2]
	require.Equal(t, event.KindEpisode, end.Kind)
	assert.Equal(t, event.EpisodeEvent{Episode: 0, Seed: 0, End: true, Ticks: 20, Success: true, Returns: []float64{1, 13}}, *end.Episode)
	require.Equal(t, event.KindState, last.Kind)
	assert.Equal(t, event.Ended, last.State.State)

	// The result.
	require.Len(t, res.Episodes, 1)
	assert.Equal(t, runners.EpisodeResult{Seed: 0, Ticks: 20, Complete: true, Success: true, Returns: []float64{1, 13}}, res.Episodes[0])
	assert.EqualValues(t, 20, res.Steps)
	assert.Empty(t, res.Retro)
}

// The step events of a trial are the reports of a hand-written loop over the hrl
// runtime with the same seeds and policies: observations, masks, rewards, ids, ends and
// spans; the action is the one the reward scores.
func TestTrialMatchesHandLoop(t *testing.T) {
	defer goleak.VerifyNone(t)
	const seed, episodes = 7, 3
	spec := runners.Spec{Env: "maze", Seed: seed, Episodes: episodes,
		Actors: map[string]runners.Actor{maze.StrategyName: runners.Named("random")}}
	res, rec := runOne(t, testRegistry(t), spec)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	got := rec.steps("maze-0")

	e, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	require.NoError(t, err)
	policies := map[string]agent.Policy{}
	for i, spec := range rt.Agents() {
		policies[spec.Name], err = agent.Random(spec.ActionSpace, rand.New(rand.NewPCG(seed, uint64(i))))
		require.NoError(t, err)
	}
	var want []event.StepEvent
	returns := make([][]float64, episodes)
	last := map[string]agent.RawAction{}
	add := func(ep int, turn env.Turn) {
		for k, r := range turn.Reports {
			s := event.StepEvent{Episode: ep, Tick: turn.Tick, Index: k, Agent: r.Agent, AgentID: r.AgentID, ParentID: r.ParentID,
				Start: r.Start, Acting: !turn.Over && r.AgentID == turn.Next, Obs: slices.Clone(r.Obs), Mask: slices.Clone(r.Mask),
				Reward: r.Reward, Sources: []event.RewardSource{{Source: event.SourceEnv, Value: r.Reward}},
				Terminated: r.Terminated, Truncated: r.Truncated, SpanTicks: r.SpanTicks}
			if !r.Start {
				s.Action = last[r.Agent]
			}
			want = append(want, s)
			if r.Agent == maze.StrategyName {
				returns[ep][0] += r.Reward
			} else {
				returns[ep][1] += r.Reward
			}
		}
	}
	for ep := range episodes {
		returns[ep] = make([]float64, 2)
		turn := mustReset(t, rt, env.DeriveSeed(seed, ep))
		add(ep, turn)
		for !turn.Over {
			acting := turn.Acting()
			raw, err := policies[acting.Agent].Act(t.Context(), acting.Obs, acting.Mask)
			require.NoError(t, err)
			last[acting.Agent] = raw
			turn, err = rt.Step(acting.AgentID, raw)
			require.NoError(t, err)
			add(ep, turn)
		}
		assert.Equal(t, turn.Tick, res.Episodes[ep].Ticks)
		assert.Equal(t, env.DeriveSeed(seed, ep), res.Episodes[ep].Seed)
		assert.InDeltaSlice(t, returns[ep], res.Episodes[ep].Returns, 1e-12)
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], *got[i], "step event %d", i)
	}
}

// A tick limit is applied by the environment where it can be (the hrl runtime reports
// every agent in control truncated), and by the runner otherwise.
func TestTrialMaxTicks(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)

	t.Run("environment", func(t *testing.T) {
		spec := mazeSpec("forward")
		spec.MaxTicks = 4
		res, rec := runOne(t, reg, spec)
		require.Equal(t, event.Ended, res.State)
		steps := rec.steps("maze-0")
		assert.Equal(t, []string{
			"e0 t4 motion_1<-strategy_0 a=1 r=1 env:1 span=1 truncated",
			"e0 t4 strategy_0<- a=2 r=0 env:0 span=2 truncated",
		}, lines(steps[len(steps)-2:]))
		assert.Equal(t, runners.EpisodeResult{Ticks: 4, Complete: true, Returns: []float64{0, 2}}, res.Episodes[0])
	})
	t.Run("runner", func(t *testing.T) {
		spec := runners.Spec{Env: "counter", Config: []byte(`{"length": 10}`), MaxTicks: 3, Episodes: 2}
		res, rec := runOne(t, reg, spec)
		require.Equal(t, event.Ended, res.State)
		steps := rec.steps("counter-0")
		require.Len(t, steps, 8)
		assert.Equal(t, "e0 t3 counter_0<- a=1 r=1 env:1 span=1 truncated", line(steps[3]))
		assert.Equal(t, "e1 t0 counter_0<- start acting", line(steps[4]))
		for _, ep := range res.Episodes {
			assert.Equal(t, runners.EpisodeResult{Seed: ep.Seed, Ticks: 3, Complete: true, Truncated: true, Success: true, Returns: []float64{3}}, ep)
		}
		var ends []event.EpisodeEvent
		for _, e := range rec.events("counter-0") {
			if e.Kind == event.KindEpisode && e.Episode.End {
				ends = append(ends, *e.Episode)
			}
		}
		require.Len(t, ends, 2)
		assert.True(t, ends[0].Truncated)
	})
}

// A single-agent environment runs through SingleAgent: the cart-pole's balance policy
// keeps the pole up for the whole episode.
func TestTrialCartPole(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	spec := runners.Spec{Env: "cartpole", Seed: 42, Episodes: 2, Actors: map[string]runners.Actor{"cartpole": runners.Named("balance")}}
	res, rec := runOne(t, reg, spec)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	for _, ep := range res.Episodes {
		assert.Equal(t, 500, ep.Ticks)
		assert.True(t, ep.Success)
		assert.Equal(t, []float64{500}, ep.Returns)
	}
	steps := rec.steps("cartpole-0")
	require.Len(t, steps, 2*501)
	assert.Equal(t, "cartpole_0", steps[0].AgentID)
	final := steps[500]
	assert.Equal(t, 500, final.Tick)
	assert.True(t, final.Truncated)
	assert.False(t, final.Terminated)
	assert.False(t, final.Acting)

	// The cart-pole's own time limit follows the trial's.
	spec.MaxTicks = 50
	spec.Actors = nil // random: falls before 50 steps or not, the limit holds
	res, _ = runOne(t, reg, spec)
	for _, ep := range res.Episodes {
		assert.LessOrEqual(t, ep.Ticks, 50)
		assert.False(t, ep.Truncated, "the environment truncates, not the runner")
	}
}

func TestSingleAgent(t *testing.T) {
	m := registry.SingleAgent(&counter{cfg: counterConfig{Length: 2}})
	require.Len(t, m.Agents(), 1)
	_, err := m.Step("counter_0", agent.Discrete(1))
	require.ErrorIs(t, err, env.ErrEpisodeOver)

	turn := mustReset(t, m, 1)
	require.Len(t, turn.Reports, 1)
	assert.Equal(t, "counter_0", turn.Next)
	assert.True(t, turn.Reports[0].Start)

	_, err = m.Step("other_0", agent.Discrete(1))
	require.ErrorIs(t, err, env.ErrNotActing)
	turn, err = m.Step("counter_0", agent.Discrete(2))
	require.NoError(t, err)
	assert.Equal(t, env.Report{AgentID: "counter_0", Agent: "counter", Obs: []float32{1}, Reward: 2, SpanTicks: 1, Clock: agent.Clock{Steps: 1, Tick: 1}}, turn.Reports[0])
	turn, err = m.Step("counter_0", agent.Discrete(1))
	require.NoError(t, err)
	assert.True(t, turn.Over)
	assert.Empty(t, turn.Next)
	assert.True(t, turn.Reports[0].Terminated)
	_, err = m.Step("counter_0", agent.Discrete(1))
	require.ErrorIs(t, err, env.ErrEpisodeOver)
	assert.Equal(t, 2, m.Info())

	// An error of the inner Step is returned as it is.
	m = registry.SingleAgent(&counter{cfg: counterConfig{Length: 3, FailAt: 1}})
	mustReset(t, m, 0)
	_, err = m.Step("counter_0", agent.Discrete(1))
	require.ErrorIs(t, err, errCounter)
}

// A failing Reset of a single-agent environment is SingleAgent's Reset error, and fails
// the trial with it.
func TestSingleAgentResetError(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := registry.SingleAgent(brokenReset{&counter{cfg: counterConfig{Length: 1}}})
	turn, err := m.Reset(1)
	require.ErrorIs(t, err, errCounter)
	assert.Empty(t, turn.Reports)
	_, err = m.Step("counter_0", agent.Discrete(1))
	require.ErrorIs(t, err, env.ErrNotReset)

	reg := registry.New()
	require.NoError(t, reg.Register(registry.Entry{
		Name: "broken",
		Open: func([]byte) (registry.Factory, error) {
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
				return registry.SingleAgent(brokenReset{&counter{cfg: counterConfig{Length: 1}}}), nil
			}), nil
		},
		Agents: []registry.AgentEntry{{Name: "counter", Policies: []registry.PolicyEntry{{Name: "one", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) { return constant(1), nil }}}}},
	}))
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "broken"})
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Len(t, s.Failures, 1)
	require.ErrorIs(t, s.Failures[0].Err, errCounter)
	require.ErrorIs(t, s.Failures[0].Err, runners.ErrEnv)
	assert.Contains(t, s.Failures[0].Reason, errCounter.Error())
}

type brokenReset struct{ *counter }

// refusing is a MultiAgent whose Reset fails when its factory's count of resets, from
// 0, is in fail.
type refusing struct {
	env.MultiAgent
	resets *atomic.Int64
	fail   []int64
}

var errRefused = errors.New("refusing: the map file is unreadable")

func (r refusing) Reset(seed uint64) (env.Turn, error) {
	if n := r.resets.Add(1) - 1; slices.Contains(r.fail, n) {
		return env.Turn{}, fmt.Errorf("reset %d: %w", n, errRefused)
	}
	return r.MultiAgent.Reset(seed)
}

// A failing Reset of a multi-agent environment fails its trial with the cause in the
// failure's reason, and the campaign goes on with the next trials.
func TestResetError(t *testing.T) {
	defer goleak.VerifyNone(t)
	var resets atomic.Int64
	entry := counterEntry()
	entry.Name = "refusing"
	entry.Open = func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
			return refusing{MultiAgent: registry.SingleAgent(&counter{cfg: counterConfig{Length: 2}}), resets: &resets, fail: []int64{1}}, nil
		}), nil
	}
	reg := registry.New()
	require.NoError(t, reg.Register(entry))
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "refusing", Seed: 3}, runners.WithTrials(3), runners.WithWorkers(1))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, s.Ended)
	assert.Equal(t, 1, s.Failed)
	require.Len(t, s.Failures, 1)
	f := s.Failures[0]
	assert.Equal(t, 1, f.Index)
	require.ErrorIs(t, f.Err, errRefused)
	require.ErrorIs(t, f.Err, runners.ErrEnv)
	assert.Contains(t, f.Reason, "Reset: reset 1: refusing: the map file is unreadable")
	assert.Equal(t, int64(3), resets.Load())
}

func (brokenReset) Reset(uint64) (env.Step, error) { return env.Step{}, errCounter }
