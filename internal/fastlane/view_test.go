package fastlane_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/internal/fastlane"
)

func viewBuffers(n, dim, mlen int) (vector.Buffers, []int64) {
	return vector.Buffers{Obs: make([]float32, n*dim), FinalObs: make([]float32, n*dim), Masks: make([]bool, n*mlen),
		Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n)}, make([]int64, n)
}

// The maze's strategy agent with the motion agent walking forward reaches the goal with
// the reference's decisions (reference/maze.md), one Step a decision.
func TestViewMazeStrategy(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	b, spans := viewBuffers(1, 106, 4)
	v, err := fastlane.NewView(ctx, testRegistry(t), "maze", nil, "strategy", map[string]string{"motion": "forward"}, nil, 1, 1, b, spans)
	require.NoError(t, err)
	defer v.Close()
	require.NoError(t, v.Restart(ctx, 0))
	assert.Equal(t, []float32{4, 9}, b.Obs[100:102])
	const up, down, left = 0, 2, 3
	want := [][2]float32{{4, 8}, {6, 8}, {6, 5}, {4, 5}, {1, 5}, {1, 4}, {0, 4}}
	for k, a := range []int64{left, down, left, up, up, left, up} {
		require.NoError(t, v.Step(ctx, []int64{a}))
		last := k == len(want)-1
		obs := b.Obs
		if last {
			obs = b.FinalObs // the copy was reset in the same step
		}
		assert.Equal(t, want[k][:], obs[100:102], "decision %d", k)
		assert.Equal(t, last, b.Terminated[0])
		assert.GreaterOrEqual(t, spans[0], int64(2), "the decision and the motion agent's moves")
		if last {
			assert.Equal(t, 1.0, b.Rewards[0])
		} else {
			assert.Zero(t, b.Rewards[0])
		}
	}
	// A masked action changes nothing.
	err = v.Step(ctx, []int64{1})
	var ae *fastlane.ActionError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "strategy", ae.Agent)
}

// A policy value drives the other agent; its failure fails the step.
func TestViewPolicyValue(t *testing.T) {
	ctx := context.Background()
	b, spans := viewBuffers(2, 106, 4)
	calls := 0
	forward := agent.PolicyFunc(func(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
		calls++
		if len(mask) != 2 {
			return agent.RawAction{}, errors.New("no mask")
		}
		return agent.Discrete(1), nil
	})
	v, err := fastlane.NewView(ctx, testRegistry(t), "maze", nil, "strategy", nil, map[string]agent.Policy{"motion": forward}, 2, 1, b, spans)
	require.NoError(t, err)
	defer v.Close()
	require.NoError(t, v.Reset(ctx, 1))
	require.NoError(t, v.Step(ctx, []int64{3, 3}))
	assert.Equal(t, []float32{4, 8}, b.Obs[100:102])
	assert.Equal(t, 2, calls)
	assert.Equal(t, []int64{2, 2}, spans)
}

func TestViewErrors(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	b, spans := viewBuffers(1, 106, 4)
	p := agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(1), nil })
	for _, tc := range []struct {
		name, env, agent string
		named            map[string]string
		funcs            map[string]agent.Policy
		want             error
	}{
		{"unknown env", "labyrinth", "strategy", nil, nil, fastlane.ErrConfig},
		{"unknown agent", "maze", "pilot", nil, nil, fastlane.ErrConfig},
		{"unknown policy", "maze", "strategy", map[string]string{"motion": "oracle"}, nil, fastlane.ErrConfig},
		{"policy of the viewed agent", "maze", "strategy", map[string]string{"strategy": "oracle"}, nil, fastlane.ErrConfig},
		{"named and value", "maze", "strategy", map[string]string{"motion": "forward"}, map[string]agent.Policy{"motion": p}, fastlane.ErrConfig},
		{"value of an unknown agent", "maze", "strategy", nil, map[string]agent.Policy{"pilot": p}, fastlane.ErrConfig},
		{"wrong buffers", "maze", "motion", nil, nil, fastlane.ErrArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := spans
			if tc.want == fastlane.ErrArgument {
				sp = nil
			}
			_, err := fastlane.NewView(ctx, reg, tc.env, nil, tc.agent, tc.named, tc.funcs, 1, 1, b, sp)
			require.ErrorIs(t, err, tc.want)
		})
	}
}
