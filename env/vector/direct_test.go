package vector_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/spaces"
)

// TestDirectMatchesStep steps vectors of env.DiscreteStepper copies (which Env steps on
// its direct path) and vectors of the same environments stepped through env.Env.Step,
// with the same seed and actions, through Step and StepDiscrete in turn, and compares
// every buffer after every call.
func TestDirectMatchesStep(t *testing.T) {
	envs := []struct {
		name          string
		direct, plain func(int) (env.Env, error)
		n             int64
	}{
		{"cartpole", cartpoles(cartpole.Config{MaxSteps: 30}), plainCartpoles(cartpole.Config{MaxSteps: 30}), 2},
		{"line", directLines(5, 8), lines(5, 8), 3}, // with masks
	}
	for _, e := range envs {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/W=%d", e.name, w), func(t *testing.T) {
				noLeaks(t)
				const n = 150
				direct := newVector(t, n, e.direct, vector.WithWorkers(w), vector.WithFinalInfo(true))
				plain := newVector(t, n, e.plain, vector.WithWorkers(w), vector.WithFinalInfo(true))
				require.NoError(t, direct.Reset(bg, 3))
				require.NoError(t, plain.Reset(bg, 3))
				src := newActions(9)
				actions := make([]agent.RawAction, n)
				ints := make([]int64, n)
				ended := 0
				for tick := range 200 {
					src.fill(actions, e.n, plain.Masks())
					for i, a := range actions {
						ints[i] = a.Int
					}
					require.NoError(t, plain.Step(bg, actions))
					if tick%2 == 0 {
						require.NoError(t, direct.StepDiscrete(bg, ints))
					} else {
						require.NoError(t, direct.Step(bg, actions))
					}
					require.Equal(t, snap(plain), snap(direct), "tick %d", tick)
					for i := range n {
						if plain.Done(i) {
							ended++
						}
					}
				}
				assert.Greater(t, ended, n, "episodes ended and were reset")
			})
		}
	}
}

// TestDirectErrors checks the direct path's errors: a copy's error, a panic, and an
// action with stray fields, which goes to Step.
func TestDirectErrors(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			const n = 7
			v := newVector(t, n, func(i int) (env.Env, error) {
				return directLine{&line{goal: 100, maxSteps: 100, panicky: i == 4}}, nil
			}, vector.WithWorkers(w))
			require.NoError(t, v.Reset(bg, 1))
			stay := slices.Repeat([]int64{1}, n)
			require.NoError(t, v.StepDiscrete(bg, stay))

			// Copy 2 acts outside the space, copy 4 panics.
			ints := slices.Clone(stay)
			ints[2], ints[4] = 7, 2
			err := v.StepDiscrete(bg, ints)
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			assert.ErrorIs(t, err, vector.ErrPanic)
			ces := copyErrors(t, err)
			require.Len(t, ces, 2)
			assert.Equal(t, []int{2, 4}, []int{ces[0].Copy, ces[1].Copy})
			assert.Equal(t, vector.OpStep, ces[0].Op)
			for _, i := range []int{0, 1, 3, 5, 6} {
				assert.Equal(t, float32(2), v.Obs()[2*i+1], "copy %d stepped twice", i)
			}
			assert.Equal(t, float32(1), v.Obs()[2*2+1], "copy 2 left as it was")
			require.ErrorIs(t, v.StepDiscrete(bg, stay), vector.ErrNotReset)

			// A RawAction with a stray field is not a Discrete action: Step, which
			// rejects it.
			require.NoError(t, v.Reset(bg, 1))
			actions := slices.Repeat([]agent.RawAction{agent.Discrete(1)}, n)
			actions[6] = agent.RawAction{Int: 1, Floats: []float32{1}}
			err = v.Step(bg, actions)
			ces = copyErrors(t, err)
			require.Len(t, ces, 1)
			assert.Equal(t, 6, ces[0].Copy)
			assert.ErrorIs(t, err, spaces.ErrOutside)
		})
	}
}
