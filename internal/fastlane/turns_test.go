package fastlane_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/internal/fastlane"
)

func turnBuffers(l fastlane.Layout) fastlane.TurnBuffers {
	a := len(l.Agents)
	b := fastlane.TurnBuffers{Obs: make([][]float32, a), Masks: make([][]bool, a), Reported: make([]bool, a), Started: make([]bool, a),
		Rewards: make([]float64, a), Spans: make([]int64, a), Terminated: make([]bool, a), Truncated: make([]bool, a),
		IDs: make([]int64, a), State: make([]int64, 3)}
	for j, ag := range l.Agents {
		b.Obs[j], b.Masks[j] = make([]float32, ag.ObsDim), make([]bool, ag.MaskLen)
	}
	return b
}

// The maze turn by turn: the strategy hands over to motion_0, which walks forward to
// the intersection and gives control back, rewarding the strategy for the span.
func TestTurnsMaze(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	l, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	b := turnBuffers(l)
	tr, err := fastlane.NewTurns(reg, "maze", nil, b)
	require.NoError(t, err)
	defer tr.Close()
	const strategy, motion = 0, 1
	require.ErrorIs(t, tr.Step(ctx, 0), fastlane.ErrArgument, "before Reset")
	require.NoError(t, tr.Reset(ctx, 0))
	assert.Equal(t, []int64{strategy, 0, 0}, b.State)
	assert.Equal(t, []bool{true, false}, b.Reported)
	assert.Equal(t, []int64{0, -1}, b.IDs)
	assert.Equal(t, []bool{true, false, false, true}, b.Masks[strategy])
	var ae *fastlane.ActionError
	require.ErrorAs(t, tr.Step(ctx, 1), &ae, "a wall")
	assert.Equal(t, "strategy", ae.Agent)
	require.NoError(t, tr.Step(ctx, 3)) // LEFT
	assert.Equal(t, []int64{motion, 0, 1}, b.State)
	assert.True(t, b.Started[motion])
	assert.Equal(t, []int64{0, 0}, b.IDs)
	require.NoError(t, tr.Step(ctx, 1)) // forward: (4,8) is an intersection
	assert.Equal(t, []bool{true, true}, b.Reported)
	assert.True(t, b.Terminated[motion] || b.Truncated[motion])
	assert.Equal(t, 1.0, b.Rewards[motion])
	assert.Equal(t, int64(2), b.Spans[strategy], "the decision and the move")
	assert.Equal(t, []float32{4, 8}, b.Obs[strategy][100:102])
	assert.Equal(t, int64(strategy), b.State[0])
}

// Rock-paper-scissors turn by turn: a round is stepped when both players have acted.
func TestTurnsRPS(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	l, err := fastlane.Describe(reg, "rps", []byte(`{"max_cycles": 1}`))
	require.NoError(t, err)
	b := turnBuffers(l)
	tr, err := fastlane.NewTurns(reg, "rps", []byte(`{"max_cycles": 1}`), b)
	require.NoError(t, err)
	require.NoError(t, tr.Reset(ctx, 0))
	assert.Equal(t, []bool{true, true}, b.Started)
	require.NoError(t, tr.Step(ctx, 1)) // paper
	assert.Equal(t, []int64{1, 0, 0}, b.State, "player_1's turn, no tick")
	require.NoError(t, tr.Step(ctx, 0)) // rock
	assert.Equal(t, []int64{-1, 1, 1}, b.State, "over")
	assert.Equal(t, []float64{1, -1}, b.Rewards)
	assert.Equal(t, []bool{true, true}, b.Truncated)
	assert.Equal(t, []float32{1, 0, 0, 0}, b.Obs[0])
	require.ErrorIs(t, tr.Step(ctx, 0), fastlane.ErrArgument, "over")
	require.ErrorIs(t, func() error { _, err := fastlane.NewTurns(reg, "rps", nil, fastlane.TurnBuffers{}); return err }(), fastlane.ErrArgument)
}
