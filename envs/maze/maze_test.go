package maze_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/hrl/hrltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRuntime(t *testing.T, cfg maze.Config) *hrl.Runtime[maze.State, maze.Action] {
	t.Helper()
	env, err := maze.NewEnv(cfg)
	require.NoError(t, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](env), hrl.Config{})
	require.NoError(t, err)
	return rt
}

// step is what one report says, copied out of the runtime's buffers.
type step struct {
	ID, Parent  string
	Pos         maze.Pos
	Reward      float64
	Term, Trunc bool
	Start       bool
	Span        int
	Mask        []bool
}

func record(rt *hrl.Runtime[maze.State, maze.Action], res env.Turn) []step {
	var out []step
	for _, r := range res.Reports {
		n := len(r.Obs)
		mask := 4
		if r.Agent == maze.MotionName {
			mask = 2
		}
		pos := maze.Pos{Row: int(r.Obs[n-mask-2]), Col: int(r.Obs[n-mask-1])}
		out = append(out, step{r.AgentID, r.ParentID, pos, r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks, slices.Clone(r.Mask)})
	}
	return out
}

// play drives an episode with one policy per agent and returns every report.
func play(t *testing.T, rt *hrl.Runtime[maze.State, maze.Action], policies map[string]agent.Policy) ([]step, env.Turn) {
	t.Helper()
	res := mustReset(t, rt, 1)
	steps := record(rt, res)
	for !res.Over {
		acting := res.Acting()
		require.NotNil(t, acting)
		raw, err := policies[acting.Agent].Act(context.Background(), acting.Obs, acting.Mask)
		require.NoError(t, err)
		res, err = rt.Step(acting.AgentID, raw)
		require.NoError(t, err, "tick %d", rt.Tick())
		steps = append(steps, record(rt, res)...)
	}
	return steps, res
}

func dirs(ds ...maze.Direction) *agent.Script {
	raws := make([]agent.RawAction, len(ds))
	for i, d := range ds {
		raws[i] = agent.Discrete(int64(d))
	}
	return agent.Scripted(raws...)
}

func moves(ms ...maze.Move) *agent.Script {
	raws := make([]agent.RawAction, len(ms))
	for i, m := range ms {
		raws[i] = agent.Discrete(int64(m))
	}
	return agent.Scripted(raws...)
}

func TestReferenceMap(t *testing.T) {
	m, err := maze.Parse(maze.Reference)
	require.NoError(t, err)
	assert.Equal(t, 10, m.Rows())
	assert.Equal(t, 10, m.Cols())
	assert.Equal(t, maze.Pos{Row: 4, Col: 9}, m.StartPos())
	assert.Equal(t, maze.Pos{Row: 0, Col: 4}, m.GoalPos())
	assert.Equal(t, maze.Reference, m.String())

	tests := []struct {
		pos          maze.Pos
		walkable     bool
		intersection bool
	}{
		{maze.Pos{Row: 4, Col: 9}, true, true},    // start, border: 2 walkable neighbours
		{maze.Pos{Row: 0, Col: 4}, true, false},   // goal, border: 1 walkable neighbour
		{maze.Pos{Row: 4, Col: 8}, true, true},    // 3 walkable neighbours
		{maze.Pos{Row: 5, Col: 8}, true, false},   // corridor: 2
		{maze.Pos{Row: 6, Col: 0}, true, false},   // border, 1 neighbour
		{maze.Pos{Row: 1, Col: 9}, true, false},   // border, 1 neighbour ((2,9) is a wall)
		{maze.Pos{Row: 0, Col: 0}, false, false},  // wall
		{maze.Pos{Row: -1, Col: 4}, false, false}, // outside is a wall
		{maze.Pos{Row: 10, Col: 0}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.pos.String(), func(t *testing.T) {
			assert.Equal(t, tt.walkable, m.Walkable(tt.pos))
			assert.Equal(t, tt.intersection, m.Intersection(tt.pos))
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
	}{
		{"empty", "", 0},
		{"ragged", "0 2\n3 0 0", 2},
		{"bad tile", "2 3\n0 4", 2},
		{"no start", "1 3", 0},
		{"two goals", "2 3 3", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := maze.Parse(tt.text)
			require.ErrorIs(t, err, maze.ErrMap)
			var me *maze.MapError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.line, me.Line, err.Error())
		})
	}
	big := make([]maze.Tile, 102*3)
	big[0], big[1] = maze.Start, maze.Goal
	_, err := maze.New(102, 3, big)
	require.ErrorIs(t, err, maze.ErrMap)
}

// The full successful path of reference/maze.md with the oracle and a motion agent that
// always moves forward.
func TestReferencePathWithMotionAgent(t *testing.T) {
	rt := newRuntime(t, maze.Config{})
	m, _ := maze.Parse(maze.Reference)
	steps, res := play(t, rt, map[string]agent.Policy{
		maze.StrategyName: maze.NewOracle(m),
		maze.MotionName:   maze.AlwaysForward(),
	})
	require.True(t, res.Over)

	// The first report: strategy_0 with mask [1, 0, 0, 1].
	require.Equal(t, step{ID: "strategy_0", Pos: maze.Pos{Row: 4, Col: 9}, Start: true, Mask: []bool{true, false, false, true}}, steps[0])

	// The motion sub-episodes: ids, where each ends, and the strategy's span rewards.
	wantEnds := []maze.Pos{{4, 8}, {6, 8}, {6, 5}, {4, 5}, {1, 5}, {1, 4}, {0, 4}}
	var ends []maze.Pos
	var motionIDs []string
	var strategyRewards []float64
	for i, s := range steps {
		if s.ID == "strategy_0" && !s.Start {
			prev := steps[i-1]
			require.True(t, prev.Term, "the motion agent ends before the strategy is settled")
			ends = append(ends, s.Pos)
			strategyRewards = append(strategyRewards, s.Reward)
			assert.Equal(t, "", s.Parent)
		}
		if s.Start && s.ID != "strategy_0" {
			motionIDs = append(motionIDs, s.ID)
			assert.Equal(t, "strategy_0", s.Parent)
			assert.Zero(t, s.Reward, "no reward on the motion agent's first observation")
		}
		if !s.Start && s.ID != "strategy_0" {
			assert.Equal(t, 1.0, s.Reward, "forward moves earn reward_for_right_direction")
			assert.Equal(t, 1, s.Span)
		}
	}
	assert.Equal(t, wantEnds, ends)
	assert.Equal(t, []string{"motion_0", "motion_1", "motion_2", "motion_3", "motion_4", "motion_5", "motion_6"}, motionIDs)
	assert.Equal(t, []float64{0, 0, 0, 0, 0, 0, 1}, strategyRewards)

	last := steps[len(steps)-1]
	assert.Equal(t, step{ID: "strategy_0", Pos: maze.Pos{Row: 0, Col: 4}, Reward: 1, Term: true, Span: 2, Mask: []bool{false, false, true, false}}, last,
		"the last decision (UP from (1,4)) spans its own tick and the motion move")
}

func TestProcedurePath(t *testing.T) {
	rt := newRuntime(t, maze.Config{Procedure: true})
	steps, res := play(t, rt, map[string]agent.Policy{
		maze.StrategyName: dirs(maze.Left, maze.Down, maze.Left, maze.Up, maze.Up, maze.Left, maze.Up),
	})
	require.True(t, res.Over)
	require.Len(t, steps, 8)
	want := []maze.Pos{{4, 8}, {6, 8}, {6, 5}, {4, 5}, {1, 5}, {1, 4}, {0, 4}}
	for i, s := range steps[1:] {
		assert.Equal(t, want[i], s.Pos, "decision %d", i)
		assert.Equal(t, "strategy_0", s.ID)
		assert.Equal(t, 1, s.Span)
		assert.Equal(t, i == 6, s.Term)
		assert.False(t, s.Trunc)
		assert.Equal(t, map[bool]float64{true: 1}[i == 6], s.Reward)
	}
	assert.Equal(t, 7, res.Tick)
}

func TestProcedureMatchesOracleWithForwardMotion(t *testing.T) {
	m, _ := maze.Parse(maze.Reference)
	_, res := play(t, newRuntime(t, maze.Config{Procedure: true}), map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
	assert.Equal(t, 7, res.Tick, "seven decisions, one tick each")
}

func TestStrategyTimeout(t *testing.T) {
	for _, procedure := range []bool{false, true} {
		t.Run(map[bool]string{false: "motion", true: "procedure"}[procedure], func(t *testing.T) {
			rt := newRuntime(t, maze.Config{Procedure: procedure})
			back := dirs(maze.Left, maze.Right)
			back.Loop = true
			steps, res := play(t, rt, map[string]agent.Policy{maze.StrategyName: back, maze.MotionName: maze.AlwaysForward()})
			require.True(t, res.Over)
			last := steps[len(steps)-1]
			assert.Equal(t, "strategy_0", last.ID)
			assert.True(t, last.Trunc)
			assert.False(t, last.Term)
			assert.Equal(t, maze.Pos{Row: 4, Col: 9}, last.Pos, "20 decisions: back at the start")
			if !procedure {
				assert.Equal(t, "motion_19", steps[len(steps)-2].ID)
				assert.Equal(t, 40, res.Tick, "each decision: one tick to choose, one to move")
			} else {
				assert.Equal(t, 20, res.Tick)
			}
		})
	}
}

func TestMotionTimeout(t *testing.T) {
	rt := newRuntime(t, maze.Config{})
	// To (4,8), down to (6,8), then left into the corridor (6,7)-(6,6) and back and
	// forth there: ten moves without reaching an intersection.
	motion := moves(maze.Forward, maze.Forward, maze.Forward, maze.Forward, maze.Forward,
		maze.Backward, maze.Forward, maze.Backward, maze.Forward, maze.Backward, maze.Forward, maze.Backward, maze.Forward)
	strategy := dirs(maze.Left, maze.Down, maze.Left, maze.Right)
	res := mustReset(t, rt, 1)
	var all []step
	for range 16 {
		acting := res.Acting()
		p := map[string]agent.Policy{maze.StrategyName: strategy, maze.MotionName: motion}[acting.Agent]
		raw, err := p.Act(context.Background(), acting.Obs, acting.Mask)
		require.NoError(t, err)
		res, err = rt.Step(acting.AgentID, raw)
		require.NoError(t, err)
		all = append(all, record(rt, res)...)
		if res.Next == "strategy_0" && len(res.Reports) == 2 && res.Reports[0].AgentID == "motion_2" {
			break
		}
	}
	end := all[len(all)-2]
	require.Equal(t, "motion_2", end.ID)
	assert.True(t, end.Trunc, "ten moves truncate the motion agent")
	assert.False(t, end.Term)
	assert.Equal(t, maze.Pos{Row: 6, Col: 6}, end.Pos)
	settled := all[len(all)-1]
	assert.Equal(t, "strategy_0", settled.ID)
	assert.Equal(t, 11, settled.Span, "the decision: its own tick and ten moves")
	var rewards []float64
	for _, s := range all {
		if s.ID == "motion_2" && !s.Start {
			rewards = append(rewards, s.Reward)
		}
	}
	assert.Equal(t, []float64{1, 1, -0.1, 1, -0.1, 1, -0.1, 1, -0.1, 1}, rewards)
}

func TestInvalidDirections(t *testing.T) {
	rt := newRuntime(t, maze.Config{})
	res := mustReset(t, rt, 1)
	before := rt.State()

	// The strategy agent at the start: DOWN is a wall.
	_, err := rt.Step("strategy_0", agent.Discrete(int64(maze.Down)))
	require.ErrorIs(t, err, env.ErrInvalidAction)
	require.ErrorIs(t, err, maze.ErrWall)
	var se *env.StepError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "strategy_0", se.AgentID)
	assert.Contains(t, err.Error(), "DOWN")
	assert.Equal(t, before, rt.State(), "a rejected action leaves the state as it was")
	assert.Equal(t, "strategy_0", rt.Acting())

	// A valid direction then works: LEFT, and the motion agent takes control.
	res, err = rt.Step("strategy_0", agent.Discrete(int64(maze.Left)))
	require.NoError(t, err)
	require.Equal(t, "motion_0", res.Next)
	// Go to (4,8), then DOWN: there, moving backward (UP) runs into a wall.
	res, err = rt.Step("motion_0", agent.Discrete(int64(maze.Forward)))
	require.NoError(t, err)
	res, err = rt.Step("strategy_0", agent.Discrete(int64(maze.Down)))
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true}, res.Acting().Mask, "[backward, forward] at (4,8) heading DOWN")
	before = rt.State()
	_, err = rt.Step("motion_1", agent.Discrete(int64(maze.Backward)))
	require.ErrorIs(t, err, env.ErrInvalidAction)
	require.ErrorIs(t, err, maze.ErrWall)
	assert.Equal(t, before, rt.State())

	// Out of the action space, and not the acting agent.
	_, err = rt.Step("motion_1", agent.Discrete(2))
	require.ErrorIs(t, err, env.ErrOutsideSpace)
	_, err = rt.Step("strategy_0", agent.Discrete(0))
	require.ErrorIs(t, err, env.ErrNotActing)
	assert.Contains(t, err.Error(), "motion_1")
	assert.Equal(t, before, rt.State())
}

func TestBackwardMoves(t *testing.T) {
	rt := newRuntime(t, maze.Config{})
	mustReset(t, rt, 1)
	for _, a := range []struct {
		id  string
		raw int64
	}{{"strategy_0", int64(maze.Left)}, {"motion_0", int64(maze.Forward)}, {"strategy_0", int64(maze.Down)}, {"motion_1", int64(maze.Forward)}} {
		_, err := rt.Step(a.id, agent.Discrete(a.raw))
		require.NoError(t, err)
	}
	require.Equal(t, maze.Pos{Row: 5, Col: 8}, rt.State().Pos)
	// Off an intersection, backward moves against the heading: back to (4,8), an
	// intersection, where the motion agent is done.
	res, err := rt.Step("motion_1", agent.Discrete(int64(maze.Backward)))
	require.NoError(t, err)
	assert.Equal(t, maze.Pos{Row: 4, Col: 8}, rt.State().Pos)
	require.Len(t, res.Reports, 2)
	assert.True(t, res.Reports[0].Terminated)
	assert.InDelta(t, -0.1, res.Reports[0].Reward, 1e-12)

	// On an intersection, backward stays put (and, after that move, the motion agent is
	// done): LEFT from (4,8) heading LEFT, backward is RIGHT, walkable.
	_, err = rt.Step("strategy_0", agent.Discrete(int64(maze.Left)))
	require.NoError(t, err)
	res, err = rt.Step("motion_2", agent.Discrete(int64(maze.Backward)))
	require.NoError(t, err)
	assert.Equal(t, maze.Pos{Row: 4, Col: 8}, rt.State().Pos)
	assert.True(t, res.Reports[0].Terminated)
}

func TestObservation(t *testing.T) {
	rt := newRuntime(t, maze.Config{})
	res := mustReset(t, rt, 1)
	obs := res.Reports[0].Obs
	require.Len(t, obs, 106)
	m, _ := maze.Parse(maze.Reference)
	for i := range 100 {
		assert.Equal(t, float32(m.At(maze.Pos{Row: i / 10, Col: i % 10})), obs[i])
	}
	assert.Equal(t, []float32{4, 9, 1, 0, 0, 1}, obs[100:])

	typed, err := hrl.Obs[maze.StrategyObs](res, "strategy_0")
	require.NoError(t, err)
	assert.Equal(t, maze.Pos{Row: 4, Col: 9}, typed.Pos)
	assert.Equal(t, [4]bool{true, false, false, true}, typed.Mask)
	_, err = hrl.Obs[maze.MotionObs](res, "strategy_0")
	require.Error(t, err)

	res, err = rt.Step("strategy_0", agent.Discrete(int64(maze.Left)))
	require.NoError(t, err)
	mo, err := hrl.Obs[maze.MotionObs](res, "motion_0")
	require.NoError(t, err)
	assert.Equal(t, [2]bool{false, true}, mo.Mask, "heading LEFT at the start: backward is off the map")
	assert.Equal(t, maze.Info{Position: [2]int{4, 9}, Heading: "LEFT"}, rt.Info())
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		cfg  maze.Config
	}{
		{"reference", maze.Config{}},
		{"procedure", maze.Config{Procedure: true}},
		{"generated", maze.Config{Generate: &maze.GenerateConfig{Rows: 15, Cols: 21, Seed: 7}}},
		{"generated per episode, padded", maze.Config{Generate: &maze.GenerateConfig{Rows: 9, Cols: 7, PerEpisode: true}, ObsSide: 11}},
		{"reference padded", maze.Config{ObsSide: 12, Procedure: true}},
		{"short limits", maze.Config{Strategy: maze.StrategyConfig{MaxSteps: 3}, Motion: maze.MotionConfig{MaxSteps: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hrltest.Check(t, func() hrl.HierarchicalEnv[maze.State, maze.Action] {
				env, err := maze.NewEnv(tt.cfg)
				require.NoError(t, err)
				return env
			}, hrltest.Options{Episodes: 30, Seed: 3})
		})
	}
}

func TestGenerate(t *testing.T) {
	for _, size := range [][2]int{{5, 5}, {11, 31}, {51, 51}, {101, 101}} {
		for seed := range uint64(5) {
			a, err := maze.Generate(rand.New(rand.NewPCG(seed, 1)), size[0], size[1])
			require.NoError(t, err)
			b, _ := maze.Generate(rand.New(rand.NewPCG(seed, 1)), size[0], size[1])
			require.Equal(t, a.String(), b.String(), "same seed, same maze")
			_, err = maze.Parse(a.String())
			require.NoError(t, err)
			// The oracle walks from start to goal with the procedure.
			cfg := maze.Config{Map: a.String(), Procedure: true, Strategy: maze.StrategyConfig{MaxSteps: size[0] * size[1]}}
			_, res := play(t, newRuntime(t, cfg), map[string]agent.Policy{maze.StrategyName: maze.NewOracle(a)})
			require.True(t, res.Over)
			assert.True(t, res.Reports[0].Terminated, "size %v seed %d: the oracle reaches the goal", size, seed)
		}
	}
	for _, bad := range [][2]int{{4, 5}, {5, 103}, {3, 3}} {
		_, err := maze.Generate(rand.New(rand.NewPCG(1, 1)), bad[0], bad[1])
		require.ErrorIs(t, err, maze.ErrMap)
	}
}

func TestConfig(t *testing.T) {
	cfg, err := maze.ParseConfig([]byte(`{"motion": {"max_steps": 5, "reward_for_wrong_direction": 0}, "procedure": false}`))
	require.NoError(t, err)
	env, err := maze.NewEnv(cfg)
	require.NoError(t, err)
	got := env.Config()
	assert.Equal(t, 5, got.Motion.MaxSteps)
	assert.Equal(t, 0.0, *got.Motion.WrongReward, "an explicit zero is kept")
	assert.Equal(t, 1.0, *got.Motion.RightReward)
	assert.Equal(t, 20, got.Strategy.MaxSteps)

	for _, bad := range []string{`{"moton": {}}`, `{"strategy": {"max_steps": -1}}`, `[1]`, `{} {}`, `{"map": "2 3", "generate": {"rows": 5, "cols": 5}}`} {
		_, err := maze.ParseConfig([]byte(bad))
		require.ErrorIs(t, err, maze.ErrConfig, bad)
	}
	_, err = maze.NewEnv(maze.Config{Map: "2 0 0"})
	require.ErrorIs(t, err, maze.ErrMap)
}

func TestOracleErrors(t *testing.T) {
	m, _ := maze.Parse(maze.Reference)
	o := maze.NewOracle(m)
	_, err := o.Act(context.Background(), make([]float32, 10), nil)
	require.Error(t, err)
	obs := make([]float32, 106)
	obs[100], obs[101] = 40, 0
	_, err = o.Act(context.Background(), obs, nil)
	require.Error(t, err)
	d, ok := o.Direction(m.StartPos())
	require.True(t, ok)
	assert.Equal(t, maze.Left, d)
	_, ok = o.Direction(m.GoalPos())
	assert.False(t, ok)
	assert.True(t, errors.Is(maze.ErrWall, maze.ErrWall))
}

// TestEncodeViewMatchesObserve checks the agents' fused EncodeView, which the runtime
// uses on the step path, against Observe, EncodeObservation and ActionMask, which the
// typed observations use, on every walkable tile, heading and step count.
func TestEncodeViewMatchesObserve(t *testing.T) {
	m, err := maze.Parse(maze.Reference)
	require.NoError(t, err)
	strategy := maze.NewStrategy(m, maze.StrategyConfig{})
	motion := maze.NewMotion(m, maze.MotionConfig{})
	tests := []struct {
		name    string
		obsDim  int
		maskLen int
		view    func(v maze.View, obs []float32, mask []bool)
		slow    func(v maze.View, obs []float32, mask []bool)
	}{
		{"strategy", strategy.ObservationSpace().FlatDim(), 4, strategy.EncodeView, func(v maze.View, obs []float32, mask []bool) {
			strategy.EncodeObservation(obs, strategy.Observe(v))
			strategy.ActionMask(v, mask)
		}},
		{"motion", motion.ObservationSpace().FlatDim(), 2, motion.EncodeView, func(v maze.View, obs []float32, mask []bool) {
			motion.EncodeObservation(obs, motion.Observe(v))
			motion.ActionMask(v, mask)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fastObs, slowObs := make([]float32, tt.obsDim), make([]float32, tt.obsDim)
			fastMask, slowMask := make([]bool, tt.maskLen), make([]bool, tt.maskLen)
			views := 0
			for r := range m.Rows() {
				for c := range m.Cols() {
					p := maze.Pos{Row: r, Col: c}
					if !m.Walkable(p) {
						continue
					}
					for h := range maze.Direction(4) {
						v := maze.View{State: maze.State{Maze: m, Pos: p, Heading: h}, Steps: int(h)}
						tt.view(v, fastObs, fastMask)
						tt.slow(v, slowObs, slowMask)
						require.Equal(t, slowObs, fastObs, "%v heading %v", p, h)
						require.Equal(t, slowMask, fastMask, "%v heading %v", p, h)
						views++
					}
				}
			}
			require.Greater(t, views, 100)
		})
	}
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}

// TestInPlaceMatchesAgent plays the runtime twice in lockstep, once through the agents'
// agent.InPlace (the step path's default) and once through their Agent methods
// (hrl.Config.NoInPlace), with the same seeded random policies, and checks that every
// reset and step gives the same result: agents, ids, observations, masks, rewards, ends,
// spans and clocks. Before each valid action both sides are also offered every action
// the mask rules out, which both must reject with the same error.
func TestInPlaceMatchesAgent(t *testing.T) {
	tests := []struct {
		name  string
		cfg   maze.Config
		steps int
	}{
		{"reference", maze.Config{}, 5000},
		{"generated 21 with limits and rewards", maze.Config{
			Generate: &maze.GenerateConfig{Rows: 21, Cols: 21, Seed: 3},
			Strategy: maze.StrategyConfig{MaxSteps: 6, GoalReward: ptr(5)},
			Motion:   maze.MotionConfig{MaxSteps: 3, RightReward: ptr(0.5), WrongReward: ptr(-2)},
		}, 5000},
		{"a map per episode, padded", maze.Config{Generate: &maze.GenerateConfig{Rows: 9, Cols: 9, PerEpisode: true}, ObsSide: 13}, 5000},
		{"the walk procedure", maze.Config{Procedure: true}, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sides := [2]*hrl.Runtime[maze.State, maze.Action]{}
			policies := [2]map[string]agent.Policy{}
			for i, noInPlace := range []bool{false, true} {
				e, err := maze.NewEnv(tt.cfg)
				require.NoError(t, err)
				sides[i], err = hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{NoInPlace: noInPlace})
				require.NoError(t, err)
				rng := rand.New(rand.NewPCG(7, 8))
				policies[i] = map[string]agent.Policy{}
				for _, spec := range sides[i].Agents() {
					policies[i][spec.Name], err = agent.Random(spec.ActionSpace, rng)
					require.NoError(t, err)
				}
			}
			same := func(step int, a, b env.Turn) {
				t.Helper()
				require.Equal(t, b.Reports, a.Reports, "step %d", step)
				require.Equal(t, []any{b.Next, b.Over, b.Tick}, []any{a.Next, a.Over, a.Tick}, "step %d", step)
			}
			var res [2]env.Turn
			seed, episodes := uint64(0), 0
			for i := range sides {
				res[i] = mustReset(t, sides[i], seed)
			}
			same(-1, res[0], res[1])
			for step := range tt.steps {
				acting := res[0].Acting()
				id := acting.AgentID
				for a, ok := range acting.Mask {
					if ok {
						continue
					}
					_, errFast := sides[0].Step(id, agent.Discrete(int64(a)))
					_, errSlow := sides[1].Step(id, agent.Discrete(int64(a)))
					require.Error(t, errFast, "step %d, masked-out action %d", step, a)
					require.EqualError(t, errFast, errSlow.Error(), "step %d", step)
				}
				var raws [2]agent.RawAction
				for i := range sides {
					rep := res[i].Acting()
					var err error
					raws[i], err = policies[i][rep.Agent].Act(ctx, rep.Obs, rep.Mask)
					require.NoError(t, err)
				}
				require.Equal(t, raws[1], raws[0], "step %d", step)
				for i := range sides {
					var err error
					res[i], err = sides[i].Step(id, raws[i])
					require.NoError(t, err, "step %d", step)
				}
				same(step, res[0], res[1])
				if res[0].Over {
					seed++
					episodes++
					for i := range sides {
						res[i] = mustReset(t, sides[i], seed)
					}
					same(step, res[0], res[1])
				}
			}
			assert.GreaterOrEqual(t, episodes, 10, "episodes")
		})
	}
}

// TestStepInPlaceMatchesStep steps every walkable tile, heading and action both ways:
// StepInPlace changes the state into what Step returns, and on an error (a move into a
// wall, an unknown kind) returns the same error and leaves the state as it was.
func TestStepInPlaceMatchesStep(t *testing.T) {
	e, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	m := e.Maze()
	actions := []maze.Action{{Kind: maze.Step, Move: maze.Forward}, {Kind: maze.Step, Move: maze.Backward}, {Kind: maze.Choose, Dir: maze.Up}, {Kind: 0}}
	steps, walls := 0, 0
	for r := range m.Rows() {
		for c := range m.Cols() {
			p := maze.Pos{Row: r, Col: c}
			if !m.Walkable(p) {
				continue
			}
			for h := range maze.Direction(4) {
				for _, a := range actions {
					s := maze.State{Maze: m, Pos: p, Heading: h}
					want, wantErr := e.Step(s, a)
					got := s
					gotErr := e.StepInPlace(&got, &a)
					if wantErr != nil {
						require.EqualError(t, gotErr, wantErr.Error(), "%v heading %v action %+v", p, h, a)
						require.Equal(t, s, got, "a rejected step changed the state")
						walls++
						continue
					}
					require.NoError(t, gotErr)
					require.Equal(t, want, got, "%v heading %v action %+v", p, h, a)
					steps++
				}
			}
		}
	}
	require.Positive(t, steps)
	require.Positive(t, walls)
}
