package maze_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
)

// The reference map's shortest path, a tile a step: 13 moves from (4, 9) to (0, 4).
var flatPath = []maze.Direction{
	maze.Left, maze.Down, maze.Down, maze.Left, maze.Left, maze.Left,
	maze.Up, maze.Up, maze.Up, maze.Up, maze.Up, maze.Left, maze.Up,
}

func newFlat(t *testing.T, cfg maze.FlatConfig) *maze.Flat {
	t.Helper()
	f, err := maze.NewFlat(cfg)
	require.NoError(t, err)
	return f
}

// pos reads the position from a flat observation: after the 100 map values.
func pos(obs []float32) [2]int { return [2]int{int(obs[100]), int(obs[101])} }

func TestFlatEpisodes(t *testing.T) {
	tests := []struct {
		name      string
		cfg       maze.FlatConfig
		moves     []maze.Direction
		reward    float64 // of the last move
		term      bool
		trunc     bool
		finalPos  [2]int
		finalMask []bool
	}{
		{name: "scripted shortest path", moves: flatPath, reward: 1, term: true, finalPos: [2]int{0, 4}, finalMask: []bool{false, false, true, false}},
		{name: "goal reward", cfg: maze.FlatConfig{GoalReward: ptr(2.5)}, moves: flatPath, reward: 2.5, term: true, finalPos: [2]int{0, 4}, finalMask: []bool{false, false, true, false}},
		{name: "truncated at max_steps", cfg: maze.FlatConfig{MaxSteps: 3}, moves: []maze.Direction{maze.Left, maze.Right, maze.Left},
			trunc: true, finalPos: [2]int{4, 8}, finalMask: []bool{false, true, true, true}},
		{name: "the goal on the last allowed step terminates", cfg: maze.FlatConfig{MaxSteps: len(flatPath)}, moves: flatPath,
			reward: 1, term: true, finalPos: [2]int{0, 4}, finalMask: []bool{false, false, true, false}},
		{name: "the dead end above the start", moves: []maze.Direction{maze.Up}, finalPos: [2]int{3, 9}, finalMask: []bool{false, false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlat(t, tt.cfg)
			st, err := f.Reset(7)
			require.NoError(t, err)
			assert.Equal(t, [2]int{4, 9}, pos(st.Obs))
			assert.Equal(t, []bool{true, false, false, true}, st.Mask, "UP and LEFT from the start")
			assert.Equal(t, []float32{1, 0, 0, 1}, st.Obs[102:])
			for i, d := range tt.moves {
				require.True(t, st.Mask[d], "move %d (%s) is masked", i, d)
				st, err = f.Step(agent.Discrete(int64(d)))
				require.NoError(t, err)
				if i < len(tt.moves)-1 {
					require.False(t, st.Done(), "move %d ended the episode", i)
					require.Zero(t, st.Reward)
				}
			}
			assert.Equal(t, tt.reward, st.Reward)
			assert.Equal(t, tt.term, st.Terminated)
			assert.Equal(t, tt.trunc, st.Truncated)
			assert.Equal(t, tt.finalPos, pos(st.Obs))
			assert.Equal(t, tt.finalMask, st.Mask)
			if st.Done() {
				_, err = f.Step(agent.Discrete(int64(maze.Down)))
				require.ErrorIs(t, err, maze.ErrEpisodeOver)
			}
		})
	}
}

func TestFlatBadActions(t *testing.T) {
	tests := []struct {
		name   string
		action agent.RawAction
		want   error
	}{
		{name: "into a wall", action: agent.Discrete(int64(maze.Down)), want: maze.ErrWall},
		{name: "off the map", action: agent.Discrete(int64(maze.Right)), want: maze.ErrWall},
		{name: "outside Discrete(4)", action: agent.Discrete(4), want: spaces.ErrOutside},
		{name: "negative", action: agent.Discrete(-1), want: spaces.ErrOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlat(t, maze.FlatConfig{})
			_, err := f.Step(agent.Discrete(int64(maze.Left)))
			require.ErrorIs(t, err, maze.ErrEpisodeOver, "before the first Reset")
			_, err = f.Reset(0)
			require.NoError(t, err)
			_, err = f.Step(tt.action)
			require.ErrorIs(t, err, tt.want)
			obs := make([]float32, 106)
			mask := make([]bool, 4)
			_, _, _, err = f.StepDiscrete(tt.action.Int, obs, mask)
			require.ErrorIs(t, err, tt.want)
			assert.Equal(t, maze.Info{Position: [2]int{4, 9}, Heading: "LEFT"}, f.Info(), "nothing moved")
			st, err := f.Step(agent.Discrete(int64(maze.Left)))
			require.NoError(t, err, "the episode goes on")
			assert.Equal(t, [2]int{4, 8}, pos(st.Obs))
		})
	}
}

// StepDiscrete gives what Step gives, written into the caller's buffers.
func TestFlatStepDiscrete(t *testing.T) {
	a, b := newFlat(t, maze.FlatConfig{}), newFlat(t, maze.FlatConfig{})
	_, err := a.Reset(1)
	require.NoError(t, err)
	_, err = b.Reset(1)
	require.NoError(t, err)
	obs := make([]float32, 106)
	mask := make([]bool, 4)
	for _, d := range flatPath {
		st, err := a.Step(agent.Discrete(int64(d)))
		require.NoError(t, err)
		r, term, trunc, err := b.StepDiscrete(int64(d), obs, mask)
		require.NoError(t, err)
		assert.Equal(t, st.Obs, obs)
		assert.Equal(t, st.Mask, mask)
		assert.Equal(t, st.Reward, r)
		assert.Equal(t, [2]bool{st.Terminated, st.Truncated}, [2]bool{term, trunc})
	}
}

func TestParseFlatConfig(t *testing.T) {
	tests := []struct {
		name string
		json string
		want maze.FlatConfig
		err  error
	}{
		{name: "empty", json: ""},
		{name: "limit and reward", json: `{"max_steps": 50, "reward_for_reaching_goal": 2}`, want: maze.FlatConfig{MaxSteps: 50, GoalReward: ptr(2)}},
		{name: "generated map", json: `{"generate": {"rows": 9, "cols": 11, "seed": 3}}`, want: maze.FlatConfig{Generate: &maze.GenerateConfig{Rows: 9, Cols: 11, Seed: 3}}},
		{name: "unknown field", json: `{"max_step": 5}`, err: maze.ErrConfig},
		{name: "negative limit", json: `{"max_steps": -1}`, err: maze.ErrConfig},
		{name: "map and generate", json: `{"map": "2 3", "generate": {"rows": 9, "cols": 9, "seed": 1}}`, err: maze.ErrConfig},
		{name: "per-episode maps", json: `{"generate": {"rows": 9, "cols": 9, "per_episode": true}, "reward_for_progress": 0.1}`,
			want: maze.FlatConfig{Generate: &maze.GenerateConfig{Rows: 9, Cols: 9, PerEpisode: true}, ProgressReward: ptr(0.1)}},
		{name: "per-episode maps with a seed", json: `{"generate": {"rows": 9, "cols": 9, "seed": 2, "per_episode": true}}`, err: maze.ErrConfig},
		{name: "per-episode maps of even sides", json: `{"generate": {"rows": 8, "cols": 9, "per_episode": true}}`, err: maze.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := maze.ParseFlatConfig([]byte(tt.json))
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
	f := newFlat(t, maze.FlatConfig{})
	assert.Equal(t, maze.DefaultFlatMaxSteps, f.Config().MaxSteps)
	assert.Equal(t, 200, maze.DefaultFlatMaxSteps)
	_, err := maze.NewFlat(maze.FlatConfig{Map: "2 1 1"})
	require.ErrorIs(t, err, maze.ErrMap, "no goal")
}

func TestRegisterFlat(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, maze.RegisterFlat(reg))
	e, err := reg.Lookup("maze-flat")
	require.NoError(t, err)
	assert.Equal(t, []string{maze.FlatName}, e.AgentNames())

	tests := []struct {
		name     string
		config   string
		policy   string
		maxTicks int
		success  float64 // the success rate; -1 to skip
		steps    int64   // env steps of the 6 episodes; 0 to skip
	}{
		{name: "oracle", policy: "oracle", success: 1, steps: 6 * 13},
		{name: "oracle on a generated map", config: `{"generate": {"rows": 11, "cols": 11, "seed": 5}}`, policy: "oracle", success: 1},
		{name: "oracle on per-episode maps", config: `{"generate": {"rows": 13, "cols": 13, "per_episode": true}}`, policy: "oracle", success: 1},
		{name: "tick limit below the path", policy: "oracle", maxTicks: 5, success: 0, steps: 6 * 5},
		{name: "random", policy: "random", success: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{
				Env: "maze-flat", Config: []byte(tt.config), Seed: 2, Episodes: 3, MaxTicks: tt.maxTicks,
				Actors: map[string]runners.Actor{maze.FlatName: runners.Named(tt.policy)},
			}
			c, err := runners.NewCampaign(reg, spec, runners.WithTrials(2))
			require.NoError(t, err)
			s, err := c.Run(context.Background())
			require.NoError(t, err)
			require.Equal(t, 2, s.Ended, "%v", s.Failures)
			assert.Equal(t, 6, s.Episodes)
			require.NotNil(t, s.SuccessRate)
			if tt.success >= 0 {
				assert.Equal(t, tt.success, *s.SuccessRate)
			}
			if tt.steps > 0 {
				assert.EqualValues(t, tt.steps, s.EnvSteps)
			}
		})
	}
	_, err = runners.NewCampaign(reg, runners.Spec{Env: "maze-flat", Config: []byte(`{"max_step": 3}`)})
	require.ErrorIs(t, err, maze.ErrConfig)
}

func ptr(v float64) *float64 { return &v }

// TestFlatPerEpisodeMaps draws a map from each episode's seed: the same seed the same
// map, other seeds others.
func TestFlatPerEpisodeMaps(t *testing.T) {
	f := newFlat(t, maze.FlatConfig{Generate: &maze.GenerateConfig{Rows: 9, Cols: 9, PerEpisode: true}})
	assert.Nil(t, f.Maze(), "no map before the first Reset")
	maps := map[string]bool{}
	for seed := range uint64(8) {
		_, err := f.Reset(seed)
		require.NoError(t, err)
		first := f.Maze().String()
		_, err = f.Reset(seed)
		require.NoError(t, err)
		require.Equal(t, first, f.Maze().String(), "seed %d", seed)
		maps[first] = true
	}
	assert.Greater(t, len(maps), 4, "8 seeds drew %d maps", len(maps))
	assert.Equal(t, 9*9+2+4, f.Spec().ObservationSpace.FlatDim())
}
