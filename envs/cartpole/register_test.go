package cartpole_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestRegister(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, cartpole.Register(reg))
	e, err := reg.Lookup("cartpole")
	require.NoError(t, err)
	a, err := e.Agent(cartpole.Name)
	require.NoError(t, err)
	assert.Equal(t, "random", a.Default)
	assert.Equal(t, []string{"balance", "random"}, a.PolicyNames())

	tests := []struct {
		name     string
		config   string
		policy   string
		maxTicks int
		ticks    int     // per episode, 0 to skip
		success  float64 // the rate
	}{
		{name: "balance", policy: "balance", ticks: 500, success: 1},
		{name: "balance, shorter", policy: "balance", config: `{"max_steps": 100}`, ticks: 100, success: 1},
		{name: "balance, tick limit", policy: "balance", maxTicks: 60, ticks: 60, success: 1},
		{name: "random", policy: "random", success: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{Env: "cartpole", Config: []byte(tt.config), Seed: 3, Episodes: 2, MaxTicks: tt.maxTicks,
				Actors: map[string]runners.Actor{cartpole.Name: runners.Named(tt.policy)}}
			c, err := runners.NewCampaign(reg, spec, runners.WithTrials(3), runners.WithWorkers(2))
			require.NoError(t, err)
			s, err := c.Run(context.Background())
			require.NoError(t, err)
			require.Equal(t, 3, s.Ended, "%v", s.Failures)
			require.NotNil(t, s.SuccessRate)
			assert.Equal(t, tt.success, *s.SuccessRate)
			if tt.ticks > 0 {
				assert.EqualValues(t, 6*tt.ticks, s.EnvSteps)
				assert.Equal(t, float64(tt.ticks), s.Agents[0].Mean)
			}
		})
	}

	for _, config := range []string{`{"max_step": 3}`, `{"max_steps": -1}`, `{} {}`, `{"kinematics_integrator": "rk4"}`} {
		_, err := runners.NewCampaign(reg, runners.Spec{Env: "cartpole", Config: []byte(config)})
		require.ErrorIs(t, err, runners.ErrEnvConfig, config)
		require.ErrorIs(t, err, cartpole.ErrConfig, config)
	}
}

func TestBalance(t *testing.T) {
	p := cartpole.Balance()
	for _, tt := range []struct {
		obs  []float32
		want int64
	}{
		{[]float32{0, 0, 0.1, 0}, cartpole.PushRight},
		{[]float32{0, 0, 0.1, -0.3}, cartpole.PushLeft},
		{[]float32{0, 0, 0, 0}, cartpole.PushLeft},
		{[]float32{0, 0, -0.01, 0.03}, cartpole.PushRight},
	} {
		raw, err := p.Act(context.Background(), tt.obs, nil)
		require.NoError(t, err)
		assert.Equal(t, agent.Discrete(tt.want), raw, "%v", tt.obs)
	}
	_, err := p.Act(context.Background(), []float32{1}, nil)
	require.Error(t, err)
}

func TestBalanced(t *testing.T) {
	assert.True(t, cartpole.Balanced(env.Turn{Reports: []env.Report{{Truncated: true}}, Over: true}))
	assert.False(t, cartpole.Balanced(env.Turn{Reports: []env.Report{{Terminated: true}}, Over: true}))
	assert.False(t, cartpole.Balanced(env.Turn{}))
}

func TestLook(t *testing.T) {
	reg := registry.New()
	require.NoError(t, cartpole.Register(reg))
	e, err := reg.Lookup("cartpole")
	require.NoError(t, err)
	turn := env.Turn{Reports: []env.Report{{AgentID: "cartpole_0", Agent: cartpole.Name}}, Next: "cartpole_0"}
	for _, tt := range []struct {
		raw  int64
		want string
	}{{cartpole.PushLeft, "LEFT"}, {cartpole.PushRight, "RIGHT"}, {7, "7"}} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, e.Look.ActionName(turn, turn.Acting(), agent.Discrete(tt.raw)))
		})
	}
	assert.Equal(t, `{"x":1}`, e.Look.Describe(map[string]int{"x": 1}), "the state shows as JSON")
}
