package maze_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
)

func TestDistance(t *testing.T) {
	m, err := maze.Parse(maze.Reference)
	require.NoError(t, err)
	tests := []struct {
		at   maze.Pos
		want int
	}{
		{m.StartPos(), 13}, // the reference map's shortest path
		{m.GoalPos(), 0},
		{maze.Pos{Row: 4, Col: 8}, 12},
		{maze.Pos{Row: 0, Col: 0}, -1},  // a wall
		{maze.Pos{Row: -1, Col: 3}, -1}, // off the map
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, m.Distance(tt.at), "at %v", tt.at)
	}
}

// TestFlatProgressReward walks the shortest path, then back and forth, with the
// progress shaping: the path earns the distance covered and the goal, the to-and-fro
// nothing.
func TestFlatProgressReward(t *testing.T) {
	tests := []struct {
		name  string
		moves []maze.Direction
		want  float64
	}{
		{"shortest path", flatPath, 0.1*13 + 1},
		{"back and forth", []maze.Direction{maze.Left, maze.Right, maze.Left, maze.Right, maze.Up, maze.Down}, 0},
		{"away and back", []maze.Direction{maze.Up, maze.Down}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlat(t, maze.FlatConfig{ProgressReward: ptr(0.1)})
			_, err := f.Reset(1)
			require.NoError(t, err)
			sum := 0.0
			for _, d := range tt.moves {
				st, err := f.Step(agent.Discrete(int64(d)))
				require.NoError(t, err)
				sum += st.Reward
			}
			assert.InDelta(t, tt.want, sum, 1e-9)
		})
	}
}

// TestMotionProgressReward sends the motion agent back and forth between the start
// and the intersection beside it: the reference rewards pay every move, the progress
// shaping nothing.
func TestMotionProgressReward(t *testing.T) {
	tests := []struct {
		name   string
		motion maze.MotionConfig
		want   float64
	}{
		{"reference rewards pay the to-and-fro", maze.MotionConfig{}, 6},
		{"progress pays nothing for it", maze.MotionConfig{ProgressReward: ptr(0.5)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, maze.Config{Motion: tt.motion})
			mustReset(t, rt, 1)
			sum := 0.0
			for k := range 6 {
				dir := maze.Left
				if k%2 == 1 {
					dir = maze.Right
				}
				_, err := rt.Step("strategy_0", agent.Discrete(int64(dir)))
				require.NoError(t, err)
				res, err := rt.Step(fmt.Sprintf("motion_%d", k), agent.Discrete(int64(maze.Forward)))
				require.NoError(t, err)
				for _, r := range res.Reports {
					if r.Agent == maze.MotionName {
						sum += r.Reward
					}
				}
			}
			assert.Equal(t, maze.Pos{Row: 4, Col: 9}, rt.State().Pos, "back on the start")
			assert.InDelta(t, tt.want, sum, 1e-9)
		})
	}
}
