package maze_test

import (
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestPerEpisodeMaps(t *testing.T) {
	rt := newRuntime(t, maze.Config{Generate: &maze.GenerateConfig{Rows: 7, Cols: 9, PerEpisode: true}})
	maps := map[string]bool{}
	for seed := range uint64(20) {
		res := mustReset(t, rt, seed)
		m := rt.State().Maze
		assert.Equal(t, 7, m.Rows())
		assert.Equal(t, 9, m.Cols())
		require.Len(t, res.Reports[0].Obs, 7*9+2+4)
		assert.Equal(t, float32(m.StartPos().Row), res.Reports[0].Obs[63])
		text := m.String()
		maps[text] = true
		mustReset(t, rt, seed+100)
		mustReset(t, rt, seed)
		assert.Equal(t, text, rt.State().Maze.String(), "seed %d: the same episode seed draws the same map", seed)
	}
	assert.Greater(t, len(maps), 10, "different episode seeds draw different maps")
	e, err := maze.NewEnv(maze.Config{Generate: &maze.GenerateConfig{Rows: 7, Cols: 9, PerEpisode: true}})
	require.NoError(t, err)
	assert.Nil(t, e.Maze(), "no map of the configuration")
}

func TestObsSide(t *testing.T) {
	tests := []struct {
		name string
		cfg  maze.Config
		side int
	}{
		{"reference padded", maze.Config{ObsSide: 13}, 13},
		{"reference at its size", maze.Config{ObsSide: 10}, 10},
		{"per episode padded", maze.Config{Generate: &maze.GenerateConfig{Rows: 5, Cols: 7, PerEpisode: true}, ObsSide: 9}, 9},
		{"fixed generated padded", maze.Config{Generate: &maze.GenerateConfig{Rows: 7, Cols: 5, Seed: 3}, ObsSide: 11}, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := maze.NewEnv(tt.cfg)
			require.NoError(t, err)
			rows, cols := e.ObservedSize()
			assert.Equal(t, [2]int{tt.side, tt.side}, [2]int{rows, cols})
			rt := newRuntime(t, tt.cfg)
			for seed := range uint64(5) {
				res := mustReset(t, rt, seed)
				m, obs := rt.State().Maze, res.Reports[0].Obs
				n := tt.side * tt.side
				require.Len(t, obs, n+2+4)
				for r := range tt.side {
					for c := range tt.side {
						want := float32(maze.Wall)
						if r < m.Rows() && c < m.Cols() {
							want = float32(m.At(maze.Pos{Row: r, Col: c}))
						}
						require.Equal(t, want, obs[r*tt.side+c], "tile (%d, %d)", r, c)
					}
				}
				start := m.StartPos()
				assert.Equal(t, []float32{float32(start.Row), float32(start.Col)}, obs[n:n+2], "the position is the map's")
				assert.NoError(t, e.Agents()[0].ObservationSpace().Check(obs), "the observation is in its space")
				// The motion agent's observation has the same layout.
				for _, b := range e.Agents()[1:] {
					assert.Equal(t, n+2+2, b.ObservationSpace().FlatDim())
				}
			}
		})
	}
}

func TestCurriculumConfigErrors(t *testing.T) {
	for _, bad := range []string{
		`{"generate": {"rows": 5, "cols": 5, "seed": 2, "per_episode": true}}`,
		`{"generate": {"rows": 4, "cols": 5, "per_episode": true}}`,
		`{"obs_side": -1}`,
		`{"obs_side": 102}`,
	} {
		_, err := maze.ParseConfig([]byte(bad))
		require.ErrorIs(t, err, maze.ErrConfig, bad)
	}
	for _, bad := range []maze.Config{
		{ObsSide: 9}, // the reference map is 10 x 10
		{Generate: &maze.GenerateConfig{Rows: 9, Cols: 11, PerEpisode: true}, ObsSide: 10},
	} {
		_, err := maze.NewEnv(bad)
		require.ErrorIs(t, err, maze.ErrConfig, "%+v", bad)
	}
	_, err := maze.NewEnv(maze.Config{Generate: &maze.GenerateConfig{Rows: 5, Cols: 103}})
	require.ErrorIs(t, err, maze.ErrMap, "a map of the configuration is drawn at once")
}

// The oracle, reading each episode's map from its observation, reaches the goal of
// every map drawn, padded or not, with the motion agent walking forward or the walk
// procedure.
func TestOracleReachesGoalPerEpisode(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	tests := []struct {
		name   string
		config string
	}{
		{"5x5", `{"generate": {"rows": 5, "cols": 5, "per_episode": true}, "strategy": {"max_steps": 100}, "motion": {"max_steps": 100}}`},
		{"9x9 padded to 15", `{"generate": {"rows": 9, "cols": 9, "per_episode": true}, "obs_side": 15, "strategy": {"max_steps": 100}, "motion": {"max_steps": 100}}`},
		{"15x21 procedure", `{"generate": {"rows": 15, "cols": 21, "per_episode": true}, "procedure": true, "strategy": {"max_steps": 200}}`},
		{"21x21 procedure padded", `{"generate": {"rows": 21, "cols": 21, "per_episode": true}, "procedure": true, "obs_side": 25, "strategy": {"max_steps": 200}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{Env: "maze", Config: []byte(tt.config), Seed: 5, Episodes: 5}
			if cfg, err := maze.ParseConfig(spec.Config); err == nil && !cfg.Procedure {
				spec.Actors = map[string]runners.Actor{maze.MotionName: runners.Named("forward")}
			}
			c, err := runners.NewCampaign(reg, spec, runners.WithTrials(20), runners.WithWorkers(2))
			require.NoError(t, err)
			s, err := c.Run(t.Context())
			require.NoError(t, err)
			require.Equal(t, 0, s.Failed, "%v", s.Failures)
			require.Equal(t, 100, s.Episodes)
			require.NotNil(t, s.SuccessRate)
			assert.Equal(t, 1.0, *s.SuccessRate)
		})
	}
}

// A straight walk reaches the goal of every generated map: the goal is a dead end, or,
// when loops left none, a corner or an intersection, never the middle of a straight
// corridor that a walk passes over.
func TestGeneratedGoalsReachable(t *testing.T) {
	for _, size := range [][2]int{{5, 5}, {7, 7}, {9, 9}, {7, 11}} {
		for seed := range uint64(200) {
			m, err := maze.Generate(rand.New(rand.NewPCG(seed, 1)), size[0], size[1])
			require.NoError(t, err)
			cfg := maze.Config{Map: m.String(), Procedure: true, Strategy: maze.StrategyConfig{MaxSteps: size[0] * size[1]}}
			_, res := play(t, newRuntime(t, cfg), map[string]agent.Policy{maze.StrategyName: maze.NewOracle(m)})
			require.True(t, res.Reports[0].Terminated, "size %v seed %d: the oracle reaches the goal of\n%s", size, seed, m)
		}
	}
}
