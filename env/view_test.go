package env_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/multierr"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// playView plays episodes of a view with a learner policy, one Reset per seed, and
// returns what the view reported as reports: a Start per Reset, then one per Step.
func playView(t *testing.T, v *env.View, learner agent.Policy, seeds ...uint64) []report {
	t.Helper()
	var out []report
	for _, seed := range seeds {
		st, err := v.Reset(seed)
		require.NoError(t, err, "reset %d", seed)
		out = append(out, viewReport(v, st, true))
		for !st.Done() {
			a, err := learner.Act(t.Context(), st.Obs, st.Mask)
			require.NoError(t, err)
			st, err = v.Step(a)
			require.NoError(t, err)
			out = append(out, viewReport(v, st, false))
		}
	}
	return out
}

func viewReport(v *env.View, st env.Step, start bool) report {
	return report{ID: v.AgentID(), Agent: v.Spec().Name, Obs: append([]float32(nil), st.Obs...), Mask: append([]bool(nil), st.Mask...),
		Reward: st.Reward, Term: st.Terminated, Trunc: st.Truncated, Start: start, Span: v.SpanTicks()}
}

func TestViewStrategy(t *testing.T) {
	rt, m := newMaze(t, hrl.Config{})
	rec := &recorder{MultiAgent: rt}
	v, err := env.NewView(t.Context(), rec, maze.StrategyName, map[string]agent.Policy{maze.MotionName: random(t, 2, 7)})
	require.NoError(t, err)
	assert.Equal(t, rt.Agents()[0], v.Spec())

	got := playView(t, v, maze.NewOracle(m), 1, 2, 3)
	assert.Equal(t, rec.of(maze.StrategyName), got, "the view reports what the strategy is reported")
	assert.Equal(t, []uint64{1, 2, 3}, rec.seeds, "every episode of the strategy is an underlying episode")
	assert.Greater(t, len(got), 6)
	spans := 0
	for _, r := range got {
		spans += r.Span
	}
	assert.Greater(t, spans, len(got), "a decision spans the motion agent's moves")

	info, ok := v.Info().(map[string]any)
	require.True(t, ok)
	assert.Equal(t, "strategy_0", info["agent_id"])
	assert.Equal(t, got[len(got)-1].Span, info["span_ticks"])
	assert.Equal(t, rt.Tick(), info["tick"])
	assert.IsType(t, maze.Info{}, info[env.InfoKeyEnv])

	inner, ok := env.As[*hrl.Runtime[maze.State, maze.Action]](v)
	require.True(t, ok)
	assert.Same(t, rt, inner)
}

func TestViewMotion(t *testing.T) {
	seeds := make([]uint64, 40)
	for i := range seeds {
		seeds[i] = uint64(100 + i)
	}
	run := func(t *testing.T) ([]report, *recorder) {
		rt, m := newMaze(t, hrl.Config{})
		rec := &recorder{MultiAgent: rt}
		v, err := env.NewView(t.Context(), rec, maze.MotionName, map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
		require.NoError(t, err)
		return playView(t, v, random(t, 2, 3), seeds...), rec
	}
	got, rec := run(t)
	assert.Equal(t, rec.of(maze.MotionName), got, "each sub-episode of the motion agent is an episode of the view")

	// The sub-episodes go motion_0, motion_1, ... within an underlying episode, and the
	// underlying episode is reset (with the seed of the view's Reset) only when over.
	var ids []string
	for _, r := range got {
		if r.Start {
			ids = append(ids, r.ID)
		}
	}
	require.Len(t, ids, len(seeds))
	assert.Equal(t, "motion_0", ids[0])
	restarts := 0
	for i := 1; i < len(ids); i++ {
		var k, prev int
		fmt.Sscanf(ids[i], "motion_%d", &k)
		fmt.Sscanf(ids[i-1], "motion_%d", &prev)
		if k == 0 {
			restarts++
		} else {
			assert.Equal(t, prev+1, k, "episode %d", i)
		}
	}
	assert.Len(t, rec.seeds, restarts+1)
	assert.Greater(t, restarts, 0, "the strategy ended some underlying episodes")
	assert.Subset(t, seeds, rec.seeds)

	again, _ := run(t)
	assert.Equal(t, got, again, "the same seeds give the same episodes")
}

func TestViewOverSequential(t *testing.T) {
	// alice plays rock, paper, scissors, ...; bob always the winning hand.
	alice := agent.Scripted(agent.Discrete(rock), agent.Discrete(paper), agent.Discrete(scissors))
	alice.Loop = true
	bob := agent.Scripted(agent.Discrete(paper), agent.Discrete(scissors), agent.Discrete(rock))
	bob.Loop = true
	tests := []struct {
		name    string
		viewed  string
		learner *agent.Script
		other   *agent.Script
		reward  float64
	}{
		{"bob, who acts last", "bob", bob, alice, 1},
		{"alice, who acts first", "alice", alice, bob, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.learner.Rewind()
			tt.other.Rewind()
			others := map[string]agent.Policy{"alice": tt.other, "bob": tt.other}
			delete(others, tt.viewed)
			v, err := env.NewView(t.Context(), env.Sequential(&rps{target: 3, rounds: 10}), tt.viewed, others)
			require.NoError(t, err)
			got := playView(t, v, tt.learner, 1)
			id := tt.viewed + "_0"
			r := tt.reward
			assert.Equal(t, []report{
				{ID: id, Agent: tt.viewed, Obs: []float32{0, 0, 0, 0, 0}, Mask: []bool{true, true, true}, Start: true},
				{ID: id, Agent: tt.viewed, Obs: obsAfter(tt.viewed, 0, 1), Mask: maskAfter(tt.viewed, 0), Reward: r, Span: 1},
				{ID: id, Agent: tt.viewed, Obs: obsAfter(tt.viewed, 1, 2), Mask: maskAfter(tt.viewed, 1), Reward: r, Span: 1},
				{ID: id, Agent: tt.viewed, Obs: obsAfter(tt.viewed, 2, 3), Mask: maskAfter(tt.viewed, 2), Reward: r, Span: 1, Term: true},
			}, got)
		})
	}
}

// obsAfter is the rps observation of the viewed player after the round in which alice
// showed hand h and bob the hand that beats it, when bob has won n rounds.
func obsAfter(viewed string, h int64, n int) []float32 {
	o := make([]float32, 5)
	if viewed == "bob" {
		o[h], o[3] = 1, float32(n)
	} else {
		o[(h+1)%3], o[4] = 1, float32(n)
	}
	return o
}

func maskAfter(viewed string, h int64) []bool {
	m := []bool{true, true, true}
	if viewed == "bob" {
		h = (h + 1) % 3
	}
	m[h] = false
	return m
}

func TestNewViewErrors(t *testing.T) {
	rt, _ := newMaze(t, hrl.Config{})
	p := maze.AlwaysForward()
	tests := []struct {
		name   string
		viewed string
		others map[string]agent.Policy
		want   []string // one per error, in order
		is     []error
	}{
		{"unknown viewed agent", "pilot", map[string]agent.Policy{"strategy": p, "motion": p},
			[]string{`env: unknown agent: the viewed agent "pilot" (agents: [strategy motion])`}, []error{env.ErrUnknownAgent}},
		{"missing policy", "motion", nil,
			[]string{`env: no policy for agent "strategy"`}, []error{env.ErrMissingPolicy}},
		{"nil policy", "motion", map[string]agent.Policy{"strategy": nil},
			[]string{`env: no policy for agent "strategy": the policy is nil`}, []error{env.ErrMissingPolicy}},
		{"unknown policy name", "strategy", map[string]agent.Policy{"motion": p, "pilot": p},
			[]string{`env: unknown agent "pilot" has a policy (agents: [strategy motion])`}, []error{env.ErrUnknownAgent}},
		{"a policy for the viewed agent", "strategy", map[string]agent.Policy{"motion": p, "strategy": p},
			[]string{`env: view of "strategy": a policy is given for the viewed agent itself`}, nil},
		{"everything at once", "motion", map[string]agent.Policy{"motion": p, "zed": p, "pilot": p},
			[]string{
				`env: view of "motion": a policy is given for the viewed agent itself`,
				`env: no policy for agent "strategy"`,
				`env: unknown agent "pilot" has a policy (agents: [strategy motion])`,
				`env: unknown agent "zed" has a policy (agents: [strategy motion])`,
			}, []error{env.ErrMissingPolicy, env.ErrUnknownAgent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := env.NewView(t.Context(), rt, tt.viewed, tt.others)
			require.Error(t, err)
			assert.Nil(t, v)
			var msgs []string
			for _, e := range multierr.Errors(err) {
				msgs = append(msgs, e.Error())
			}
			assert.Equal(t, tt.want, msgs)
			for _, target := range tt.is {
				assert.ErrorIs(t, err, target)
			}
		})
	}

	t.Run("nil context", func(t *testing.T) {
		var ctx context.Context
		_, err := env.NewView(ctx, rt, "strategy", map[string]agent.Policy{"motion": p})
		require.ErrorContains(t, err, "nil context")
	})

	t.Run("the map is copied", func(t *testing.T) {
		others := map[string]agent.Policy{"strategy": maze.NewOracle(mustMaze(t))}
		v, err := env.NewView(t.Context(), rt, "motion", others)
		require.NoError(t, err)
		delete(others, "strategy")
		_, err = v.Reset(1)
		require.NoError(t, err)
	})
}

func mustMaze(t *testing.T) *maze.Maze {
	m, err := maze.Parse(maze.Reference)
	require.NoError(t, err)
	return m
}

func TestViewStepErrors(t *testing.T) {
	newView := func(t *testing.T) *env.View {
		rt, m := newMaze(t, hrl.Config{})
		v, err := env.NewView(t.Context(), rt, maze.MotionName, map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
		require.NoError(t, err)
		return v
	}
	t.Run("not reset", func(t *testing.T) {
		_, err := newView(t).Step(agent.Discrete(1))
		require.ErrorIs(t, err, env.ErrNotReset)
	})

	tests := []struct {
		name string
		a    agent.RawAction
		is   []error
	}{
		{"outside the space", agent.Discrete(2), []error{env.ErrOutsideSpace, spaces.ErrOutside}},
		{"floats", agent.Continuous([]float32{1}), []error{env.ErrOutsideSpace}},
		// From the start, heading LEFT, backward is into the wall.
		{"into a wall", agent.Discrete(int64(maze.Backward)), []error{env.ErrInvalidAction, maze.ErrWall}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, twin := newView(t), newView(t)
			_, err := v.Reset(1)
			require.NoError(t, err)
			_, err = twin.Reset(1)
			require.NoError(t, err)
			_, err = v.Step(tt.a)
			for _, target := range tt.is {
				require.ErrorIs(t, err, target)
			}
			// Nothing changed: the view goes on as its twin does.
			forward := agent.Discrete(int64(maze.Forward))
			for {
				got, err := v.Step(forward)
				require.NoError(t, err)
				want, err := twin.Step(forward)
				require.NoError(t, err)
				require.Equal(t, want, got)
				if got.Done() {
					break
				}
			}
			_, err = v.Step(forward)
			require.ErrorIs(t, err, env.ErrEpisodeOver)
		})
	}
}

func TestViewDrivenFailures(t *testing.T) {
	errBusy := errors.New("busy")
	// failing returns a policy that plays p and fails on its n-th call.
	failing := func(p agent.Policy, n int) agent.Policy {
		calls := 0
		return agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
			calls++
			if calls == n {
				return agent.RawAction{}, errBusy
			}
			return p.Act(ctx, obs, mask)
		})
	}
	t.Run("the strategy's policy fails in Reset", func(t *testing.T) {
		rt, m := newMaze(t, hrl.Config{})
		rec := &recorder{MultiAgent: rt}
		v, err := env.NewView(t.Context(), rec, maze.MotionName, map[string]agent.Policy{maze.StrategyName: failing(maze.NewOracle(m), 2)})
		require.NoError(t, err)
		got := playView(t, v, maze.AlwaysForward(), 1)
		require.Equal(t, "motion_0", got[0].ID)
		_, err = v.Reset(2)
		require.ErrorIs(t, err, env.ErrDriven)
		require.ErrorIs(t, err, errBusy)
		assert.Equal(t, "env: a driven agent failed: strategy_0: policy: busy", err.Error())
		_, err = v.Step(agent.Discrete(1))
		require.ErrorIs(t, err, env.ErrEpisodeOver)

		got = playView(t, v, maze.AlwaysForward(), 3)
		assert.Equal(t, "motion_0", got[0].ID, "a new underlying episode")
		assert.Equal(t, []uint64{1, 3}, rec.seeds)
	})

	t.Run("the motion's policy fails in Step", func(t *testing.T) {
		rt, m := newMaze(t, hrl.Config{})
		rec := &recorder{MultiAgent: rt}
		v, err := env.NewView(t.Context(), rec, maze.StrategyName, map[string]agent.Policy{maze.MotionName: failing(maze.AlwaysForward(), 1)})
		require.NoError(t, err)
		st, err := v.Reset(1)
		require.NoError(t, err)
		a, err := maze.NewOracle(m).Act(t.Context(), st.Obs, st.Mask)
		require.NoError(t, err)
		_, err = v.Step(a)
		require.ErrorIs(t, err, env.ErrDriven)
		require.ErrorIs(t, err, errBusy)
		assert.Contains(t, err.Error(), "motion_0")
		_, err = v.Step(a)
		require.ErrorIs(t, err, env.ErrEpisodeOver)
		_, err = v.Reset(5)
		require.NoError(t, err)
		assert.Equal(t, []uint64{1, 5}, rec.seeds)
	})

	t.Run("the motion's policy walks into a wall", func(t *testing.T) {
		rt, m := newMaze(t, hrl.Config{})
		backward := agent.Scripted(agent.Discrete(int64(maze.Backward)))
		v, err := env.NewView(t.Context(), rt, maze.StrategyName, map[string]agent.Policy{maze.MotionName: backward})
		require.NoError(t, err)
		st, err := v.Reset(1)
		require.NoError(t, err)
		a, err := maze.NewOracle(m).Act(t.Context(), st.Obs, st.Mask)
		require.NoError(t, err)
		_, err = v.Step(a)
		require.ErrorIs(t, err, env.ErrDriven)
		require.ErrorIs(t, err, env.ErrInvalidAction)
		require.ErrorIs(t, err, maze.ErrWall)
	})

	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		rt, m := newMaze(t, hrl.Config{})
		motion, err := env.NewView(ctx, rt, maze.MotionName, map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
		require.NoError(t, err)
		_, err = motion.Reset(1)
		require.ErrorIs(t, err, context.Canceled)

		strategy, err := env.NewView(ctx, rt, maze.StrategyName, map[string]agent.Policy{maze.MotionName: maze.AlwaysForward()})
		require.NoError(t, err)
		st, err := strategy.Reset(1)
		require.NoError(t, err, "nothing to drive")
		a, err := maze.NewOracle(m).Act(t.Context(), st.Obs, st.Mask)
		require.NoError(t, err)
		_, err = strategy.Step(a)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("the agent never acts", func(t *testing.T) {
		// With one tick per episode, the motion agent starts and is cut at once.
		rt, m := newMaze(t, hrl.Config{MaxTicks: 1})
		rec := &recorder{MultiAgent: rt}
		v, err := env.NewView(t.Context(), rec, maze.MotionName, map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
		require.NoError(t, err)
		_, err = v.Reset(5)
		require.ErrorIs(t, err, env.ErrNeverActs)
		require.Len(t, rec.seeds, env.MaxViewResets)
		for k, s := range rec.seeds {
			assert.Equal(t, env.DeriveSeed(5, k), s)
		}
		assert.Equal(t, uint64(5), rec.seeds[0])
	})
}

func TestViewResetGoesOn(t *testing.T) {
	rt, m := newMaze(t, hrl.Config{})
	oracle := maze.NewOracle(m)
	rec := &recorder{MultiAgent: rt}
	motion, err := env.NewView(t.Context(), rec, maze.MotionName, map[string]agent.Policy{maze.StrategyName: oracle})
	require.NoError(t, err)
	_, err = motion.Reset(1)
	require.NoError(t, err)
	// From the start, heading LEFT, one move forward reaches an intersection.
	st, err := motion.Step(agent.Discrete(int64(maze.Forward)))
	require.NoError(t, err)
	require.True(t, st.Terminated)
	assert.Equal(t, 1, motion.SpanTicks())
	_, err = motion.Reset(2)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1}, rec.seeds, "the underlying episode goes on")
	assert.Equal(t, "motion_1", motion.AgentID())
	assert.Zero(t, motion.SpanTicks())

	rec.seeds = nil
	strategy, err := env.NewView(t.Context(), rec, maze.StrategyName, map[string]agent.Policy{maze.MotionName: maze.AlwaysForward()})
	require.NoError(t, err)
	st, err = strategy.Reset(1)
	require.NoError(t, err)
	a, err := oracle.Act(t.Context(), st.Obs, st.Mask)
	require.NoError(t, err)
	st, err = strategy.Step(a)
	require.NoError(t, err)
	require.False(t, st.Done())
	_, err = strategy.Reset(2)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2}, rec.seeds, "a Reset in the middle of a sub-episode starts a new underlying episode")
	assert.Equal(t, "strategy_0", strategy.AgentID())
}

func TestViewAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt, m := newMaze(t, hrl.Config{})
	oracle := maze.NewOracle(m)
	tests := []struct {
		name    string
		viewed  string
		others  map[string]agent.Policy
		learner agent.Policy
	}{
		{"motion", maze.MotionName, map[string]agent.Policy{maze.StrategyName: oracle}, random(t, 2, 1)},
		{"strategy", maze.StrategyName, map[string]agent.Policy{maze.MotionName: random(t, 2, 2)}, oracle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := env.NewView(t.Context(), rt, tt.viewed, tt.others)
			require.NoError(t, err)
			ctx := t.Context()
			seed := uint64(0)
			st, err := v.Reset(seed)
			require.NoError(t, err)
			step := func() {
				a, err := tt.learner.Act(ctx, st.Obs, st.Mask)
				if err == nil {
					st, err = v.Step(a)
				}
				if err == nil && st.Done() {
					seed++
					st, err = v.Reset(seed)
				}
				if err != nil {
					panic(err)
				}
			}
			for range 2000 { // grow every buffer
				step()
			}
			assert.Zero(t, testing.AllocsPerRun(2000, step))
		})
	}
}
