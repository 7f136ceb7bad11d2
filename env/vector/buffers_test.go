package vector_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
)

// TestWithBuffers: a vector given the caller's buffers writes into them, and its
// results are those of a vector that allocates its own, synchronously and with
// workers, with masks (line) and without (cart-pole).
func TestWithBuffers(t *testing.T) {
	cases := []struct {
		name      string
		factory   func(int) (env.Env, error)
		dim, mlen int
		nActions  int64
	}{
		{"cartpole", cartpoles(cartpole.Config{MaxSteps: 30}), 4, 0, 2},
		{"line", lines(4, 9), 2, 3, 3},
	}
	for _, c := range cases {
		for _, w := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/W=%d", c.name, w), func(t *testing.T) {
				noLeaks(t)
				const n, seed = 37, 11
				b := vector.Buffers{
					Obs: make([]float32, n*c.dim), FinalObs: make([]float32, n*c.dim),
					Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n),
				}
				if c.mlen > 0 {
					b.Masks = make([]bool, n*c.mlen)
				}
				mine := newVector(t, n, c.factory, vector.WithWorkers(w), vector.WithBuffers(b))
				own := newVector(t, n, c.factory, vector.WithWorkers(w))
				assert.Same(t, &b.Obs[0], &mine.Obs()[0])
				assert.Same(t, &b.FinalObs[0], &mine.FinalObs()[0])
				assert.Same(t, &b.Rewards[0], &mine.Rewards()[0])
				assert.Same(t, &b.Terminated[0], &mine.Terminated()[0])
				assert.Same(t, &b.Truncated[0], &mine.Truncated()[0])
				require.NoError(t, mine.Reset(bg, seed))
				require.NoError(t, own.Reset(bg, seed))
				require.Equal(t, own.Obs(), b.Obs)
				src := newActions(5)
				actions := make([]int64, n)
				ended := 0
				for tick := range 60 {
					masks := own.Masks()
					for i := range actions {
						actions[i] = src.rng.Int64N(c.nActions)
						for masks != nil && !masks[i*c.mlen+int(actions[i])] {
							actions[i] = src.rng.Int64N(c.nActions)
						}
					}
					require.NoError(t, mine.StepDiscrete(bg, actions), "tick %d", tick)
					require.NoError(t, own.StepDiscrete(bg, actions), "tick %d", tick)
					require.Equal(t, own.Obs(), b.Obs, "tick %d", tick)
					require.Equal(t, own.Masks(), b.Masks, "tick %d", tick)
					require.Equal(t, own.Rewards(), b.Rewards, "tick %d", tick)
					require.Equal(t, own.Terminated(), b.Terminated, "tick %d", tick)
					require.Equal(t, own.Truncated(), b.Truncated, "tick %d", tick)
					for i := range n {
						if own.Done(i) {
							ended++
							require.Equal(t, own.FinalObs()[i*c.dim:(i+1)*c.dim], b.FinalObs[i*c.dim:(i+1)*c.dim], "tick %d copy %d", tick, i)
						}
					}
				}
				assert.Positive(t, ended)
			})
		}
	}
}

// TestWithBuffersErrors: buffers of the wrong lengths are an ErrOption naming each
// of them; NewMulti takes none.
func TestWithBuffersErrors(t *testing.T) {
	const n = 4
	good := func() vector.Buffers {
		return vector.Buffers{
			Obs: make([]float32, n*2), FinalObs: make([]float32, n*2), Masks: make([]bool, n*3),
			Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n),
		}
	}
	cases := []struct {
		name  string
		edit  func(*vector.Buffers)
		wants []string
	}{
		{"short obs", func(b *vector.Buffers) { b.Obs = b.Obs[:7] }, []string{"Obs has 7 elements, want 8"}},
		{"no masks", func(b *vector.Buffers) { b.Masks = nil }, []string{"Masks has 0 elements, want 12"}},
		{"two bad", func(b *vector.Buffers) { b.Rewards, b.Truncated = b.Rewards[:1], nil }, []string{"Rewards has 1 elements, want 4", "Truncated has 0 elements, want 4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := good()
			c.edit(&b)
			v, err := vector.New(n, lines(4, 9), vector.WithBuffers(b))
			require.ErrorIs(t, err, vector.ErrOption)
			require.Nil(t, v)
			for _, w := range c.wants {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		v, err := vector.New(n, lines(4, 9), vector.WithBuffers(good()))
		require.NoError(t, err)
		require.NoError(t, v.Close())
	})
	t.Run("multi", func(t *testing.T) {
		_, err := vector.NewMulti(n, func(int) (env.MultiAgent, error) { return nil, errors.New("not called") }, vector.WithBuffers(good()))
		require.ErrorIs(t, err, vector.ErrOption)
	})
}
