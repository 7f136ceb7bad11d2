package cartpole_test

import (
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/internal/golden"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		state cartpole.State
		steps int // pushes right after the reset
	}{
		{name: "upright", state: cartpole.State{}},
		{name: "leaning-right", state: cartpole.State{X: 1.2, XDot: 0.3, Theta: 0.15, ThetaDot: 0.4}},
		{name: "leaning-left-at-edge", state: cartpole.State{X: -2.35, XDot: -0.5, Theta: -0.2, ThetaDot: -0.1}},
		{name: "after-pushes", state: cartpole.State{X: 0.01, Theta: 0.01}, steps: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := cartpole.NewEnv(cartpole.Config{})
			require.NoError(t, err)
			assert.True(t, e.Render().IsZero(), "before the first reset")
			_, err = e.ResetTo(tt.state)
			require.NoError(t, err)
			for range tt.steps {
				_, err = e.Step(agent.Discrete(cartpole.PushRight))
				require.NoError(t, err)
			}
			f := e.Render()
			sc, ok := f.Scene.(cartpole.Scene)
			require.True(t, ok)
			assert.Equal(t, e.State(), sc.State)
			assert.Equal(t, tt.steps, sc.Steps)
			golden.Frame(t, "render-"+tt.name, f)
		})
	}
}

// TestLookFrame checks that a display asking the registry entry draws the cart-pole
// behind its registry.SingleAgent adapter.
func TestLookFrame(t *testing.T) {
	reg := registry.New()
	require.NoError(t, cartpole.Register(reg))
	e, err := reg.Lookup("cartpole")
	require.NoError(t, err)
	f, err := e.Open(nil)
	require.NoError(t, err)
	m, err := f.NewEnv(registry.EnvOptions{})
	require.NoError(t, err)
	_, err = m.Reset(7)
	require.NoError(t, err)
	got := e.Look.Frame(m)
	require.IsType(t, cartpole.Scene{}, got.Scene)
	assert.Contains(t, got.Text, "[#]")
	assert.Contains(t, got.SVG, "<svg")
}
