package rps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/registry"
)

func TestWinner(t *testing.T) {
	for _, tc := range []struct {
		a, b int64
		want int
	}{
		{rps.Rock, rps.Rock, 0}, {rps.Paper, rps.Rock, 1}, {rps.Rock, rps.Paper, -1},
		{rps.Scissors, rps.Paper, 1}, {rps.Paper, rps.Scissors, -1},
		{rps.Rock, rps.Scissors, 1}, {rps.Scissors, rps.Rock, -1}, {rps.Paper, rps.Paper, 0},
	} {
		t.Run("", func(t *testing.T) { assert.Equal(t, tc.want, rps.Winner(tc.a, tc.b)) })
	}
}

func hands(a, b int64) []agent.RawAction {
	return []agent.RawAction{agent.Discrete(a), agent.Discrete(b)}
}

func TestEpisode(t *testing.T) {
	g, err := rps.New(rps.Config{MaxCycles: 2})
	require.NoError(t, err)
	r, err := g.Reset(1)
	require.NoError(t, err)
	require.Len(t, r.Reports, 2)
	for i, rep := range r.Reports {
		assert.True(t, rep.Start)
		assert.Equal(t, rps.Players[i], rep.Agent)
		assert.Equal(t, []float32{0, 0, 0, 1}, rep.Obs, "no hand yet")
	}
	r, err = g.Step(hands(rps.Paper, rps.Rock))
	require.NoError(t, err)
	assert.False(t, r.Over)
	assert.Equal(t, 1.0, r.Reports[0].Reward)
	assert.Equal(t, -1.0, r.Reports[1].Reward)
	assert.Equal(t, []float32{1, 0, 0, 0}, r.Reports[0].Obs, "player_1 showed rock")
	assert.Equal(t, []float32{0, 1, 0, 0}, r.Reports[1].Obs, "player_0 showed paper")
	r, err = g.Step(hands(rps.Rock, rps.Rock))
	require.NoError(t, err)
	assert.True(t, r.Over)
	for _, rep := range r.Reports {
		assert.True(t, rep.Truncated)
		assert.False(t, rep.Terminated)
		assert.Zero(t, rep.Reward)
	}
	_, err = g.Step(hands(rps.Rock, rps.Rock))
	require.ErrorIs(t, err, rps.ErrNotReset)
}

func TestErrors(t *testing.T) {
	g, err := rps.New(rps.Config{})
	require.NoError(t, err)
	_, err = g.Step(hands(rps.Rock, rps.Rock))
	require.ErrorIs(t, err, rps.ErrNotReset)
	_, err = g.Reset(0)
	require.NoError(t, err)
	for _, actions := range [][]agent.RawAction{hands(rps.Rock, 3), hands(-1, rps.Rock), {agent.Discrete(0)}} {
		_, err = g.Step(actions)
		require.ErrorIs(t, err, rps.ErrAction)
	}
	assert.Equal(t, rps.Info{Round: 0, Last: [2]int64{-1, -1}}, g.Info(), "nothing changed")
	_, err = rps.New(rps.Config{MaxCycles: -1})
	require.ErrorIs(t, err, rps.ErrConfig)
	for _, cfg := range []string{`{"max_cycles": -2}`, `{"rounds": 3}`} {
		_, err = rps.ParseConfig([]byte(cfg))
		require.ErrorIs(t, err, rps.ErrConfig, cfg)
	}
	c, err := rps.ParseConfig(nil)
	require.NoError(t, err)
	assert.Equal(t, rps.DefaultMaxCycles, c.MaxCycles)
}

// The registered game plays a trial turn by turn: the default episode lasts 15 rounds,
// each player acting once a round.
func TestRegister(t *testing.T) {
	reg := registry.New()
	require.NoError(t, rps.Register(reg))
	e, err := reg.Lookup("rps")
	require.NoError(t, err)
	f, err := e.Open([]byte(`{"max_cycles": 3}`))
	require.NoError(t, err)
	m, err := f.NewEnv(registry.EnvOptions{})
	require.NoError(t, err)
	turn, err := m.Reset(0)
	require.NoError(t, err)
	steps := 0
	for !turn.Over {
		turn, err = m.Step(turn.Next, agent.Discrete(rps.Scissors))
		require.NoError(t, err)
		steps++
	}
	assert.Equal(t, 6, steps)
	assert.Equal(t, 3, turn.Tick)
	_, err = e.Policy("player_1", "rock")
	require.NoError(t, err)
	f, err = e.Open(nil)
	require.NoError(t, err)
	m, err = f.NewEnv(registry.EnvOptions{MaxTicks: 2})
	require.NoError(t, err)
	g, ok := env.As[*rps.Game](m)
	require.True(t, ok)
	_, err = g.Reset(0)
	require.NoError(t, err)
	r, err := g.Step(hands(0, 0))
	require.NoError(t, err)
	require.False(t, r.Over)
	r, err = g.Step(hands(0, 0))
	require.NoError(t, err)
	assert.True(t, r.Over, "the tick limit lowers max_cycles")
}
