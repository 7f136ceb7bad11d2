package maze_test

import (
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/internal/golden"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	ref, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	gen, err := maze.ParseConfig([]byte(`{"generate": {"rows": 7, "cols": 9, "seed": 3}}`))
	require.NoError(t, err)
	small, err := maze.NewEnv(gen)
	require.NoError(t, err)
	tests := []struct {
		name  string
		state maze.State
	}{
		{"start", ref.InitialState(nil)},
		{"heading-up", maze.State{Maze: ref.Maze(), Pos: maze.Pos{Row: 6, Col: 2}, Heading: maze.Up}},
		{"at-goal", maze.State{Maze: ref.Maze(), Pos: ref.Maze().GoalPos(), Heading: maze.Up}},
		{"generated", small.InitialState(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.state.Render()
			golden.Frame(t, "render-"+tt.name, f)
			sc, ok := f.Scene.(maze.Scene)
			require.True(t, ok)
			m := tt.state.Maze
			require.Len(t, sc.Grid, m.Rows())
			for r, row := range sc.Grid {
				require.Len(t, row, m.Cols())
				for c, v := range row {
					assert.Equal(t, int(m.At(maze.Pos{Row: r, Col: c})), v)
				}
			}
			assert.Equal(t, [2]int{tt.state.Pos.Row, tt.state.Pos.Col}, sc.Position)
			assert.Equal(t, tt.state.Heading.String(), sc.Heading)
		})
	}
	t.Run("zero state", func(t *testing.T) {
		assert.True(t, maze.State{}.Render().IsZero())
	})
}

// TestLookFrame checks that the registry entry draws a trial's runtime by its state,
// and only once it has been reset.
func TestLookFrame(t *testing.T) {
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	e, err := reg.Lookup("maze")
	require.NoError(t, err)
	f, err := e.Open(nil)
	require.NoError(t, err)
	m, err := f.NewEnv(registry.EnvOptions{})
	require.NoError(t, err)

	before := e.Look.Frame(m)
	assert.Equal(t, "null\n", before.Text, "before the reset: the Info's JSON")

	turn, err := m.Reset(1)
	require.NoError(t, err)
	turn, err = m.Step(turn.Next, agent.Discrete(int64(maze.Left)))
	require.NoError(t, err)
	rt, ok := env.As[*hrl.Runtime[maze.State, maze.Action]](m)
	require.True(t, ok)
	assert.Equal(t, rt.State().Render(), e.Look.Frame(m))
	assert.Contains(t, e.Look.Frame(m).Text, "heading LEFT")
}

// TestFlatFrame checks that the flat maze's registry entry draws it as the hierarchy's
// state draws itself, nothing before the first reset, the agent where it moved.
func TestFlatFrame(t *testing.T) {
	reg := registry.New()
	require.NoError(t, maze.RegisterFlat(reg))
	e, err := reg.Lookup("maze-flat")
	require.NoError(t, err)
	f, err := e.Open(nil)
	require.NoError(t, err)
	m, err := f.NewEnv(registry.EnvOptions{})
	require.NoError(t, err)
	flat, ok := env.As[*maze.Flat](m)
	require.True(t, ok)
	assert.True(t, flat.Render().IsZero(), "before the reset")

	turn, err := m.Reset(1)
	require.NoError(t, err)
	_, err = m.Step(turn.Next, agent.Discrete(int64(maze.Up)))
	require.NoError(t, err)
	got := e.Look.Frame(m)
	want := maze.State{Maze: flat.Maze(), Pos: maze.Pos{Row: 3, Col: 9}, Heading: maze.Up}.Render()
	assert.Equal(t, want, got)
	assert.NotEmpty(t, got.SVG)
	sc, ok := got.Scene.(maze.Scene)
	require.True(t, ok)
	assert.Equal(t, [2]int{3, 9}, sc.Position)
}
