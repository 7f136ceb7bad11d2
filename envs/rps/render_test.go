package rps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/internal/golden"
	"github.com/batonrl/baton/registry"
)

// TestRender draws games through the registry entry, as displays do: the game is
// found behind env.Sequential.
func TestRender(t *testing.T) {
	reg := registry.New()
	require.NoError(t, rps.Register(reg))
	e, err := reg.Lookup("rps")
	require.NoError(t, err)
	f, err := e.Open([]byte(`{"max_cycles": 3}`))
	require.NoError(t, err)
	tests := []struct {
		name   string
		rounds [][2]int64
	}{
		{"reset", nil},
		{"paper-wins", [][2]int64{{rps.Paper, rps.Rock}}},
		{"draw", [][2]int64{{rps.Rock, rps.Scissors}, {rps.Scissors, rps.Scissors}}},
		{"over", [][2]int64{{rps.Rock, rps.Rock}, {rps.Rock, rps.Rock}, {rps.Rock, rps.Paper}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := f.NewEnv(registry.EnvOptions{})
			require.NoError(t, err)
			turn, err := m.Reset(1)
			require.NoError(t, err)
			for _, r := range tt.rounds {
				for _, h := range r {
					turn, err = m.Step(turn.Next, agent.Discrete(h))
					require.NoError(t, err)
				}
			}
			fr := e.Look.Frame(m)
			require.IsType(t, rps.Scene{}, fr.Scene)
			golden.Frame(t, "render-"+tt.name, fr)
		})
	}
	t.Run("before reset", func(t *testing.T) {
		g, err := rps.New(rps.Config{})
		require.NoError(t, err)
		assert.True(t, g.Render().IsZero())
	})
}
