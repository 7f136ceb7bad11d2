package cartpole_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perCopy hides the cart-pole's Kernel (vector.Batcher) and keeps StepDiscrete, so
// that a vector of them steps each copy on its own.
type perCopy struct {
	env.Env
	env.DiscreteStepper
}

func perCopyFactory(cfg cartpole.Config, keep []*cartpole.Env) func(int) (env.Env, error) {
	return func(i int) (env.Env, error) {
		e, err := cartpole.NewEnv(cfg)
		if err != nil {
			return nil, err
		}
		if keep != nil {
			keep[i] = e
		}
		return perCopy{e, e}, nil
	}
}

func kernelFactory(cfg cartpole.Config, keep []*cartpole.Env) func(int) (env.Env, error) {
	return func(i int) (env.Env, error) {
		e, err := cartpole.NewEnv(cfg)
		if keep != nil {
			keep[i] = e
		}
		return e, err
	}
}

// TestKernelLockstep steps a vector of cart-poles through their Kernel and one that
// steps each copy on its own, in lockstep from one seed with the same random
// actions, and checks that every buffer, seed, episode index and copy's state agrees
// to the bit after every step, auto-resets included, synchronously and on workers.
func TestKernelLockstep(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		n, workers int
		cfg        cartpole.Config
	}{
		{1, 1, cartpole.Config{MaxSteps: 7}},
		{300, 1, cartpole.Config{MaxSteps: 25}},
		{300, 2, cartpole.Config{MaxSteps: 25}},
		{517, 2, cartpole.Config{Integrator: cartpole.SemiImplicitEuler}},
		{1000, 1, cartpole.Config{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("N=%d/W=%d/%d/%v", c.n, c.workers, c.cfg.MaxSteps, c.cfg.Integrator), func(t *testing.T) {
			ke, pe := make([]*cartpole.Env, c.n), make([]*cartpole.Env, c.n)
			kv, err := vector.New(c.n, kernelFactory(c.cfg, ke), vector.WithWorkers(c.workers))
			require.NoError(t, err)
			defer kv.Close()
			pv, err := vector.New(c.n, perCopyFactory(c.cfg, pe), vector.WithWorkers(c.workers))
			require.NoError(t, err)
			defer pv.Close()
			require.NoError(t, kv.Reset(ctx, 42))
			require.NoError(t, pv.Reset(ctx, 42))
			rng := rand.New(rand.NewPCG(7, 7))
			actions := make([]int64, c.n)
			ended := 0
			for step := range 300 {
				for i := range actions {
					actions[i] = rng.Int64N(2)
				}
				require.NoError(t, kv.StepDiscrete(ctx, actions))
				require.NoError(t, pv.StepDiscrete(ctx, actions))
				require.Equal(t, pv.Obs(), kv.Obs(), "obs at step %d", step)
				require.Equal(t, pv.Rewards(), kv.Rewards(), "rewards at step %d", step)
				require.Equal(t, pv.Terminated(), kv.Terminated(), "terminated at step %d", step)
				require.Equal(t, pv.Truncated(), kv.Truncated(), "truncated at step %d", step)
				require.Equal(t, pv.Seeds(), kv.Seeds(), "seeds at step %d", step)
				require.Equal(t, pv.Episodes(), kv.Episodes(), "episodes at step %d", step)
				for i := range c.n {
					if pv.Done(i) {
						ended++
						require.Equal(t, pv.FinalObs()[4*i:4*i+4], kv.FinalObs()[4*i:4*i+4], "final obs of copy %d at step %d", i, step)
					}
					require.Equal(t, pe[i].State(), ke[i].State(), "state of copy %d at step %d", i, step)
					require.Equal(t, pe[i].Steps(), ke[i].Steps(), "steps of copy %d at step %d", i, step)
				}
			}
			assert.Positive(t, ended, "episodes ended")
		})
	}
}

// TestKernelMixed steps one vector now through its Kernel (StepDiscrete) and now copy
// by copy (Step with raw actions): both work on the same state.
func TestKernelMixed(t *testing.T) {
	ctx := context.Background()
	const n = 70
	cfg := cartpole.Config{MaxSteps: 15}
	kv, err := vector.New(n, kernelFactory(cfg, nil))
	require.NoError(t, err)
	pv, err := vector.New(n, perCopyFactory(cfg, nil))
	require.NoError(t, err)
	require.NoError(t, kv.Reset(ctx, 3))
	require.NoError(t, pv.Reset(ctx, 3))
	rng := rand.New(rand.NewPCG(1, 2))
	ints := make([]int64, n)
	raw := make([]agent.RawAction, n)
	for step := range 100 {
		for i := range ints {
			ints[i] = rng.Int64N(2)
		}
		if step%3 == 0 {
			for i, a := range ints {
				raw[i] = agent.Discrete(a)
			}
			require.NoError(t, kv.Step(ctx, raw))
		} else {
			require.NoError(t, kv.StepDiscrete(ctx, ints))
		}
		require.NoError(t, pv.StepDiscrete(ctx, ints))
		require.Equal(t, pv.Obs(), kv.Obs(), "obs at step %d", step)
		require.Equal(t, pv.Episodes(), kv.Episodes(), "episodes at step %d", step)
	}
}

// TestKernelErrors checks that a bad action fails the same way through the Kernel as
// copy by copy: a *vector.CopyError naming the copy, wrapping the cart-pole's error,
// and a vector that needs a Reset.
func TestKernelErrors(t *testing.T) {
	ctx := context.Background()
	const n = 600
	kv, err := vector.New(n, kernelFactory(cartpole.Config{}, nil), vector.WithWorkers(2))
	require.NoError(t, err)
	defer kv.Close()
	pv, err := vector.New(n, perCopyFactory(cartpole.Config{}, nil), vector.WithWorkers(2))
	require.NoError(t, err)
	defer pv.Close()
	require.NoError(t, kv.Reset(ctx, 1))
	require.NoError(t, pv.Reset(ctx, 1))
	actions := make([]int64, n)
	actions[5], actions[400] = 2, -1
	kerr, perr := kv.StepDiscrete(ctx, actions), pv.StepDiscrete(ctx, actions)
	require.Error(t, kerr)
	assert.Equal(t, perr.Error(), kerr.Error())
	var ce *vector.CopyError
	require.ErrorAs(t, kerr, &ce)
	assert.Equal(t, 5, ce.Copy)
	assert.ErrorIs(t, kv.StepDiscrete(ctx, make([]int64, n)), vector.ErrNotReset)
	require.NoError(t, kv.Reset(ctx, 1))
	require.NoError(t, kv.StepDiscrete(ctx, make([]int64, n)))
}

// TestKernelRefused checks that NewKernel refuses copies it cannot step together.
func TestKernelRefused(t *testing.T) {
	a, err := cartpole.NewEnv(cartpole.Config{})
	require.NoError(t, err)
	b, err := cartpole.NewEnv(cartpole.Config{MaxSteps: 9})
	require.NoError(t, err)
	c, err := cartpole.NewEnv(cartpole.Config{})
	require.NoError(t, err)
	assert.Nil(t, a.NewKernel([]env.Env{a, b}), "two configurations")
	assert.Nil(t, a.NewKernel([]env.Env{a, a}), "a copy twice")
	assert.Nil(t, a.NewKernel([]env.Env{c}), "without the receiver")
	assert.Nil(t, a.NewKernel([]env.Env{a, perCopy{c, c}}), "another type")
	require.NotNil(t, a.NewKernel([]env.Env{a, c}))
	assert.Nil(t, c.NewKernel([]env.Env{c}), "already in a kernel")
}

// TestKernelAllocs asserts that StepDiscrete through the Kernel allocates nothing,
// auto-resets included.
func TestKernelAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, w := range []int{1, 2} {
		v, err := vector.New(1024, kernelFactory(cartpole.Config{}, nil), vector.WithWorkers(w))
		require.NoError(t, err)
		actions := make([]int64, v.Len())
		require.NoError(t, v.Reset(ctx, 1))
		play := func() {
			for i := range actions {
				actions[i] = int64(i & 1)
			}
			if err := v.StepDiscrete(ctx, actions); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			play()
		}
		assert.Zero(t, testing.AllocsPerRun(100, play), "workers=%d", w)
		require.NoError(t, v.Close())
	}
}
