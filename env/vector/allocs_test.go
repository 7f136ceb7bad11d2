package vector_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
)

// TestStepAllocs asserts that a tick (the batched policy and Step, auto-resets
// included) allocates nothing once warm, synchronously and with workers, with a
// cancellable context. The measure is 10 runs of 100 ticks (AllocsPerRun divides by
// the number of runs in integers): anything that allocates once in 100 ticks fails the
// test, a lone allocation elsewhere in the process (seen under load) does not.
func TestStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const warmup, ticks = 2000, 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	single := []struct {
		name    string
		factory func(int) (env.Env, error)
		n       int
	}{
		{"cartpole", cartpoles(cartpole.Config{}), 64},
		{"line", lines(5, 8), 16},
	}
	for _, e := range single {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/W=%d", e.name, w), func(t *testing.T) {
				noLeaks(t)
				v := newVector(t, e.n, e.factory, vector.WithWorkers(w))
				p, err := vector.RandomPerCopy(v.Spec().ActionSpace, e.n, 1)
				require.NoError(t, err)
				actions := make([]agent.RawAction, e.n)
				require.NoError(t, v.Reset(ctx, 1))
				episodes := func() (k int) {
					for _, e := range v.Episodes() {
						k += e
					}
					return k
				}
				play := func(k int) {
					for range k {
						if err := p.ActBatch(ctx, v.Batch(), actions); err != nil {
							t.Fatal(err)
						}
						if err := v.Step(ctx, actions); err != nil {
							t.Fatal(err)
						}
					}
				}
				play(warmup)
				before := episodes()
				assert.Zero(t, testing.AllocsPerRun(10, func() { play(ticks) }), "allocations in %d ticks", ticks)
				assert.Greater(t, episodes(), before, "the measured ticks include auto-resets")
			})
		}
	}
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("maze/W=%d", w), func(t *testing.T) {
			noLeaks(t)
			const n = 16
			m := newMulti(t, n, mazes(testMaze), vector.WithWorkers(w))
			policies := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, n, policySeed(j))
				require.NoError(t, err)
				policies[s.Name] = p
			}
			require.NoError(t, m.Reset(ctx, 1))
			play := func(k int) {
				for range k {
					if err := m.Act(ctx, policies); err != nil {
						t.Fatal(err)
					}
					if err := m.Step(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			play(warmup)
			before := m.Episodes()[0]
			assert.Zero(t, testing.AllocsPerRun(10, func() { play(ticks) }), "allocations in %d ticks", ticks)
			assert.Greater(t, m.Episodes()[0], before, "the measured ticks include auto-resets")
		})
	}
}
