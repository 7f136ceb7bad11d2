package maze_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestRegister(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	require.ErrorIs(t, maze.Register(reg), registry.ErrDuplicate)
	e, err := reg.Lookup("maze")
	require.NoError(t, err)
	assert.Equal(t, []string{maze.StrategyName, maze.MotionName}, e.AgentNames())
	for _, tt := range []struct{ agent, def string }{{maze.StrategyName, "oracle"}, {maze.MotionName, "random"}} {
		a, err := e.Agent(tt.agent)
		require.NoError(t, err)
		assert.Equal(t, tt.def, a.Default)
	}

	tests := []struct {
		name     string
		config   string
		strategy string
		motion   string
		success  bool // every episode
		ticks    int  // of the first episode, 0 to skip
	}{
		{name: "oracle and forward", strategy: "oracle", motion: "forward", success: true, ticks: 20},
		{name: "procedure", config: `{"procedure": true}`, strategy: "oracle", success: true, ticks: 7},
		{name: "random and random", strategy: "random", motion: "random"},
		{name: "oracle and random", strategy: "oracle", motion: "random"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			actors := map[string]runners.Actor{maze.StrategyName: runners.Named(tt.strategy)}
			if tt.motion != "" {
				actors[maze.MotionName] = runners.Named(tt.motion)
			}
			c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Config: []byte(tt.config), Seed: 2, Episodes: 3, Actors: actors}, runners.WithTrials(2))
			require.NoError(t, err)
			s, err := c.Run(context.Background())
			require.NoError(t, err)
			require.Equal(t, 2, s.Ended, "%v", s.Failures)
			assert.Equal(t, 6, s.Episodes)
			require.NotNil(t, s.SuccessRate)
			if tt.success {
				assert.Equal(t, 1.0, *s.SuccessRate)
			}
			if tt.ticks > 0 {
				assert.EqualValues(t, 6*tt.ticks, s.EnvSteps)
			}
		})
	}

	_, err = runners.NewCampaign(reg, runners.Spec{Env: "maze", Config: []byte(`{"motion": {"max_step": 3}}`)})
	require.ErrorIs(t, err, runners.ErrEnvConfig)
	require.ErrorIs(t, err, maze.ErrConfig)
}

// Reached is the maze's success: the strategy agent terminated, on the goal.
func TestReached(t *testing.T) {
	rt := newRuntime(t, maze.Config{Procedure: true})
	turn := mustReset(t, rt, 0)
	assert.False(t, maze.Reached(turn))
	oracle := maze.NewOracle(rt.State().Maze)
	for !turn.Over {
		rep := turn.Acting()
		raw, err := oracle.Act(context.Background(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		turn, err = rt.Step(rep.AgentID, raw)
		require.NoError(t, err)
	}
	assert.True(t, maze.Reached(turn))
}

func TestLook(t *testing.T) {
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	e, err := reg.Lookup("maze")
	require.NoError(t, err)
	tests := []struct {
		name  string
		agent string
		raw   int64
		want  string
	}{
		{"direction", maze.StrategyName, int64(maze.Left), "LEFT"},
		{"another direction", maze.StrategyName, int64(maze.Up), "UP"},
		{"forward", maze.MotionName, int64(maze.Forward), "FORWARD"},
		{"backward", maze.MotionName, int64(maze.Backward), "BACKWARD"},
		{"another agent", "walker", 3, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := env.Turn{Reports: []env.Report{{AgentID: tt.agent + "_0", Agent: tt.agent}}, Next: tt.agent + "_0"}
			assert.Equal(t, tt.want, e.Look.ActionName(turn, turn.Acting(), agent.Discrete(tt.raw)))
		})
	}
	assert.Equal(t, "[4 8] LEFT", e.Look.Describe(maze.Info{Position: [2]int{4, 8}, Heading: "LEFT"}))
	assert.Equal(t, `{"x":1}`, e.Look.Describe(map[string]int{"x": 1}), "another Info shows as JSON")
}
