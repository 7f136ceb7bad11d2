package fastlane_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/internal/fastlane"
)

// Holds: a copy that stays is not stepped (reward 0, rows kept, its action neither
// checked nor used); a copy that ends is truncated where it is, its final observation
// its current one, and reset with its next episode seed, as a copy whose episode
// ended is.
func TestHold(t *testing.T) {
	ctx := context.Background()
	const n = 3
	cases := []struct {
		name string
		// act is a valid first action; fresh whether a new episode starts elsewhere
		// than the last (the maze's start is its map's).
		act   int64
		fresh bool
		make  func(hold []fastlane.Hold) (fastlane.Vector, func([]int64) error, []float32, []float32, []float64, []bool)
	}{
		{"single", 1, true, func(hold []fastlane.Hold) (fastlane.Vector, func([]int64) error, []float32, []float32, []float64, []bool) {
			b := buffers(n, 4, 0)
			s, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, n, 1, b, fastlane.WithHold(hold))
			require.NoError(t, err)
			return s, func(a []int64) error { return s.Step(ctx, a) }, b.Obs, b.FinalObs, b.Rewards, b.Truncated
		}},
		{"view", 3, false, func(hold []fastlane.Hold) (fastlane.Vector, func([]int64) error, []float32, []float32, []float64, []bool) {
			b, spans := viewBuffers(n, 106, 4)
			v, err := fastlane.NewView(ctx, testRegistry(t), "maze", nil, "strategy", map[string]string{"motion": "forward"}, nil, n, 1, b, spans,
				fastlane.WithHold(hold))
			require.NoError(t, err)
			return v, func(a []int64) error { return v.Step(ctx, a) }, b.Obs, b.FinalObs, b.Rewards, b.Truncated
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hold := make([]fastlane.Hold, n)
			v, step, obs, final, rewards, trunc := tc.make(hold)
			defer v.Close()
			dim := len(obs) / n
			require.NoError(t, v.Reset(ctx, 7))
			start := append([]float32(nil), obs...)
			hold[0], hold[1] = fastlane.HoldStay, fastlane.HoldEnd
			// Copy 0's action is out of range: a held copy's action is not checked.
			require.NoError(t, step([]int64{99, 99, tc.act}))
			assert.Equal(t, start[:dim], obs[:dim], "copy 0 stayed")
			assert.Zero(t, rewards[0])
			assert.False(t, trunc[0])
			assert.True(t, trunc[1], "copy 1 ended")
			assert.Equal(t, start[dim:2*dim], final[dim:2*dim], "where it was")
			if tc.fresh {
				assert.NotEqual(t, start[dim:2*dim], obs[dim:2*dim], "and started its next episode")
			}
			assert.NotEqual(t, start[2*dim:], obs[2*dim:], "copy 2 stepped")
			hold[0], hold[1] = fastlane.HoldStep, fastlane.HoldStep
			require.NoError(t, step([]int64{tc.act, tc.act, tc.act}))
			assert.NotEqual(t, start[:dim], obs[:dim], "copy 0 steps again")
		})
	}
	_, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, 2, 1, buffers(2, 4, 0), fastlane.WithHold(make([]fastlane.Hold, 3)))
	assert.ErrorIs(t, err, fastlane.ErrArgument, "a hold per copy")
	s, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, 2, 1, buffers(2, 4, 0), fastlane.WithHold(make([]fastlane.Hold, 2)))
	require.NoError(t, err)
	defer s.Close()
	assert.ErrorIs(t, s.Record(fastlane.Recording{Dir: t.TempDir()}), fastlane.ErrArgument, "held vectors do not record")
}

// Every kind of vector draws its copies; a vector with holds keeps the frame of
// each episode's last state while asked to.
func TestFrames(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	hold := make([]fastlane.Hold, 2)
	s, err := fastlane.NewSingle(reg, "cartpole", []byte(`{"max_steps": 3}`), 2, 1, buffers(2, 4, 0), fastlane.WithHold(hold))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Reset(ctx, 1))
	f, err := s.Frame(1)
	require.NoError(t, err)
	assert.Contains(t, f.SVG, "<svg")
	_, err = s.Frame(2)
	assert.ErrorIs(t, err, fastlane.ErrArgument)
	_, err = s.FinalFrame(0)
	assert.ErrorIs(t, err, fastlane.ErrArgument, "none kept yet")
	require.NoError(t, s.KeepFinalFrames(true))
	for range 3 {
		require.NoError(t, s.Step(ctx, []int64{1, 1}))
	}
	final, err := s.FinalFrame(0)
	require.NoError(t, err)
	now, err := s.Frame(0)
	require.NoError(t, err)
	assert.Contains(t, final.Text, "step 3", "the episode's last state")
	assert.Contains(t, now.Text, "step 0", "the copy was reset")
	require.NoError(t, s.KeepFinalFrames(false))
	_, err = s.FinalFrame(0)
	assert.ErrorIs(t, err, fastlane.ErrArgument, "dropped")

	plain, err := fastlane.NewSingle(reg, "cartpole", nil, 1, 1, buffers(1, 4, 0))
	require.NoError(t, err)
	defer plain.Close()
	assert.ErrorIs(t, plain.KeepFinalFrames(true), fastlane.ErrArgument, "only with holds")

	ml, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	m, err := fastlane.NewMulti(reg, "maze", nil, 2, 1, multiBuffers(2, ml))
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, m.Reset(ctx, 1))
	f, err = m.Frame(1)
	require.NoError(t, err)
	assert.Contains(t, f.SVG, "<svg")

	tl, err := fastlane.Describe(reg, "rps", nil)
	require.NoError(t, err)
	tu, err := fastlane.NewTurns(reg, "rps", nil, turnBuffers(tl))
	require.NoError(t, err)
	require.NoError(t, tu.Reset(ctx, 1))
	f, err = tu.Frame(0)
	require.NoError(t, err)
	assert.Contains(t, f.Text, "round 0")
}
