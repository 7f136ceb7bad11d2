package bench_test

// The vector benchmarks: BenchmarkVectorCartPole and BenchmarkVectorMaze step vectors
// of N copies (env/vector), synchronously ("sync") and on two workers ("workers=2");
// BenchmarkCartPoleBaseline is the hand-written scalar loop of the same cart-pole
// physics (bench.CartPoleLoop), with the same random policy (bench.CoinFlips), the
// same float32 observations and the same same-step auto-reset. One iteration of a
// vector benchmark is one tick: one batched policy call (per acting agent name, for
// the maze) and one Step of all N copies, auto-resets included; one iteration of the
// baseline is one step. Each reports steps/s, counting N env steps per tick, and
// ns/step, so that the vector's figures read directly against the baseline's (and
// BenchmarkVectorMaze's against BenchmarkMazeStep/ref, the runtime stepped alone):
//
//	go test -run XXX -bench 'VectorCartPole|CartPoleBaseline|VectorMaze|MazeStep' -benchmem -count 5 ./bench
//
// BenchmarkVectorCartPole passes the actions as integers (DiscretePolicy and
// StepDiscrete, the form of a policy network's output); BenchmarkVectorCartPoleRaw
// passes them as agent.RawAction values (BatchPolicy and Step). The maze's policies
// are per-copy agent.Random policies over the masks (vector.RandomPerCopy).
//
// Targets: 0 allocs per tick; VectorCartPole/N=1024/sync at 75% or more of
// the baseline's steps/s; workers=2 at 1.8 times sync or more for N >= 256.

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
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/internal/bench"
)

// vecVariants are the worker counts of the vector benchmarks.
var vecVariants = []struct {
	name    string
	workers int
}{
	{"sync", 0},
	{"workers=2", 2},
}

// vecFlips is the cart-pole benchmarks' batched policy: one coin flip per row, from
// one bench.CoinFlips for the batch, as integers (a policy network's output).
func vecFlips(flips *bench.CoinFlips) vector.DiscretePolicy {
	return vector.DiscretePolicyFunc(func(_ context.Context, b vector.Batch, actions []int64) error {
		flips.Fill(actions)
		return nil
	})
}

// vecFlipsRaw is vecFlips writing agent.RawAction values.
func vecFlipsRaw(flips *bench.CoinFlips) vector.BatchPolicy {
	return vector.BatchPolicyFunc(func(_ context.Context, b vector.Batch, actions []agent.RawAction) error {
		for r := range actions {
			actions[r] = agent.RawAction{Int: flips.Next()}
		}
		return nil
	})
}

func newCartPoleVector(tb testing.TB, n, workers int) *vector.Env {
	tb.Helper()
	v, err := vector.New(n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{}) }, vector.WithWorkers(workers))
	require.NoError(tb, err)
	tb.Cleanup(func() { v.Close() })
	return v
}

func BenchmarkVectorCartPole(b *testing.B)   { runCases(b, "VectorCartPole/") }
func BenchmarkCartPoleBaseline(b *testing.B) { runCases(b, "CartPoleBaseline") }
func BenchmarkVectorMaze(b *testing.B)       { runCases(b, "VectorMaze/") }

// BenchmarkVectorCartPoleRaw is BenchmarkVectorCartPole with the actions as
// agent.RawAction values (BatchPolicy and Step) rather than integers.
func BenchmarkVectorCartPoleRaw(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		for _, vv := range vecVariants {
			b.Run(fmt.Sprintf("N=%d/%s", n, vv.name), func(b *testing.B) {
				ctx := context.Background()
				v := newCartPoleVector(b, n, vv.workers)
				policy := vecFlipsRaw(bench.NewCoinFlips(1))
				actions := make([]agent.RawAction, n)
				if err := v.Reset(ctx, 0); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := policy.ActBatch(ctx, v.Batch(), actions); err != nil {
						b.Fatal(err)
					}
					if err := v.Step(ctx, actions); err != nil {
						b.Fatal(err)
					}
				}
				steps := float64(b.N) * float64(n)
				b.ReportMetric(steps/b.Elapsed().Seconds(), "steps/s")
			})
		}
	}
}

func newMazeVector(tb testing.TB, n, workers int) (*vector.Multi, map[string]vector.BatchPolicy) {
	tb.Helper()
	m, err := vector.NewMulti(n, func(int) (env.MultiAgent, error) {
		e, err := maze.NewEnv(maze.Config{})
		if err != nil {
			return nil, err
		}
		return hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	}, vector.WithWorkers(workers))
	require.NoError(tb, err)
	tb.Cleanup(func() { m.Close() })
	policies := map[string]vector.BatchPolicy{}
	for j, s := range m.Agents() {
		p, err := vector.RandomPerCopy(s.ActionSpace, n, uint64(j+1))
		require.NoError(tb, err)
		policies[s.Name] = p
	}
	return m, policies
}

// TestCartPoleLoopMatchesVector plays the baseline loop and a vector of one cart-pole
// with the same coin flips and checks that they agree at every step: observations,
// final observations, rewards, ends and episode indices. So the baseline does the
// vector's work, auto-reset included.
// TestCoinFlipsFill checks that Fill writes the flips Next returns, in order, whatever
// the lengths of the slices it fills.
func TestCoinFlipsFill(t *testing.T) {
	next, fill := bench.NewCoinFlips(5), bench.NewCoinFlips(5)
	ones := 0
	for _, n := range []int{0, 1, 63, 64, 65, 200, 3, 128, 1000, 7} {
		got := make([]int64, n)
		fill.Fill(got)
		for j, g := range got {
			want := next.Next()
			require.Equal(t, want, g, "slice of %d, flip %d", n, j)
			ones += int(g)
		}
	}
	assert.InDelta(t, 0.5, float64(ones)/1471, 0.05, "fair coins")
}

func TestCartPoleLoopMatchesVector(t *testing.T) {
	ctx := context.Background()
	v := newCartPoleVector(t, 1, 0)
	loop, err := bench.NewCartPoleLoop(0)
	require.NoError(t, err)
	vf, lf := bench.NewCoinFlips(3), bench.NewCoinFlips(3)
	policy := vecFlipsRaw(vf)
	actions := make([]agent.RawAction, 1)
	require.NoError(t, v.Reset(ctx, 11))
	loop.Reset(11)
	require.Equal(t, loop.Obs[:], v.Obs())
	ended := 0
	for step := range 20000 {
		require.NoError(t, policy.ActBatch(ctx, v.Batch(), actions))
		require.NoError(t, v.Step(ctx, actions))
		loop.Step(lf.Next())
		require.Equal(t, loop.Obs[:], v.Obs(), "step %d", step)
		require.Equal(t, loop.Reward, v.Rewards()[0], "step %d", step)
		require.Equal(t, loop.Terminated, v.Terminated()[0], "step %d", step)
		require.Equal(t, loop.Truncated, v.Truncated()[0], "step %d", step)
		require.Equal(t, loop.Episode(), v.Episodes()[0], "step %d", step)
		if v.Done(0) {
			ended++
			require.Equal(t, loop.FinalObs[:], v.FinalObs(), "step %d", step)
		}
	}
	require.Greater(t, ended, 100)
}

// TestVectorBenchAllocs asserts that the benchmarked ticks allocate nothing: 10 runs of
// 100 ticks, so that anything allocating once in 100 ticks fails the test, and a lone
// allocation elsewhere in the process (seen under load) does not.
func TestVectorBenchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	for _, vv := range vecVariants {
		t.Run("cartpole/"+vv.name, func(t *testing.T) {
			v := newCartPoleVector(t, 64, vv.workers)
			policy, raw := vecFlips(bench.NewCoinFlips(1)), vecFlipsRaw(bench.NewCoinFlips(1))
			actions, raws := make([]int64, 64), make([]agent.RawAction, 64)
			require.NoError(t, v.Reset(ctx, 0))
			tick := func() {
				if err := policy.ActDiscrete(ctx, v.Batch(), actions); err != nil {
					t.Fatal(err)
				}
				if err := v.StepDiscrete(ctx, actions); err != nil {
					t.Fatal(err)
				}
				if err := raw.ActBatch(ctx, v.Batch(), raws); err != nil {
					t.Fatal(err)
				}
				if err := v.Step(ctx, raws); err != nil {
					t.Fatal(err)
				}
			}
			play := func() {
				for range 100 {
					tick()
				}
			}
			for range 10 {
				play()
			}
			require.Zero(t, testing.AllocsPerRun(10, play), "allocations per 100 ticks")
		})
		t.Run("maze/"+vv.name, func(t *testing.T) {
			m, policies := newMazeVector(t, 16, vv.workers)
			require.NoError(t, m.Reset(ctx, 0))
			tick := func() {
				if err := m.Act(ctx, policies); err != nil {
					t.Fatal(err)
				}
				if err := m.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			play := func() {
				for range 100 {
					tick()
				}
			}
			for range 50 {
				play()
			}
			require.Zero(t, testing.AllocsPerRun(10, play), "allocations per 100 ticks")
		})
	}
}
