package hrl_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/stretchr/testify/require"
)

// record plays an episode with seeded random policies that honour the masks and
// returns its moves, so that a replay measures the runtime alone.
func record[S, A any](t *testing.T, rt *hrl.Runtime[S, A], seed uint64) []move {
	t.Helper()
	policies := map[string]agent.Policy{}
	for i, spec := range rt.Agents() {
		p, err := agent.Random(spec.ActionSpace, rand.New(rand.NewPCG(seed, uint64(i))))
		require.NoError(t, err)
		policies[spec.Name] = p
	}
	var moves []move
	res := mustReset(t, rt, seed)
	for !res.Over {
		acting := res.Acting()
		id := acting.AgentID // acting points into the runtime's buffers, which Step reuses
		raw, err := policies[acting.Agent].Act(context.Background(), acting.Obs, acting.Mask)
		require.NoError(t, err)
		next, err := rt.Step(id, raw)
		if err != nil {
			continue // a move the mask allows but the environment refuses; draw again
		}
		moves = append(moves, move{id, raw})
		res = next
	}
	return moves
}

// TestStepDoesNotAllocate replays long episodes: once the runtime has seen an episode,
// Reset and Step allocate nothing.
func TestStepDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	mazeRuntime := func(cfg maze.Config) func(t *testing.T) (replay func() error, steps int) {
		return func(t *testing.T) (func() error, int) {
			env, err := maze.NewEnv(cfg)
			require.NoError(t, err)
			rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](env), hrl.Config{})
			require.NoError(t, err)
			return replayer(t, rt)
		}
	}
	long := maze.StrategyConfig{MaxSteps: 400}
	tests := []struct {
		name  string
		setup func(t *testing.T) (replay func() error, steps int)
	}{
		{"maze", mazeRuntime(maze.Config{Strategy: long})},
		{"maze with the walk procedure", mazeRuntime(maze.Config{Procedure: true, Strategy: long})},
		{"generated maze", mazeRuntime(maze.Config{Generate: &maze.GenerateConfig{Rows: 21, Cols: 21, Seed: 4}, Strategy: long})},
		{"three levels", func(t *testing.T) (func() error, int) {
			return replayer(t, newRuntime(t, threeLevelEnv(), hrl.Config{MaxTicks: 200}))
		}},
		{"lateral", func(t *testing.T) (func() error, int) {
			return replayer(t, newRuntime(t, lateralEnv(), hrl.Config{}))
		}},
		{"returns at once", func(t *testing.T) (func() error, int) {
			return replayer(t, newRuntime(t, stayEnv(true)(), hrl.Config{}))
		}},
		{"an on-done cycle returning at once", func(t *testing.T) (func() error, int) {
			e := cycleEnv()
			e.agents[1], e.agents[2] = hrl.Bind(returner{newWalker("a", 5)}), hrl.Bind(returner{newWalker("b", 5)}) // no trace
			return replayer(t, newRuntime(t, e, hrl.Config{MaxTicks: 200}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replay, steps := tt.setup(t)
			require.Greater(t, steps, 5)
			t.Logf("episode of %d steps", steps)
			var err error
			allocs := testing.AllocsPerRun(10, func() {
				if e := replay(); e != nil {
					err = e
				}
			})
			require.NoError(t, err)
			require.Zero(t, allocs, "allocations per episode of %d steps", steps)
		})
	}
}

// replayer records the longest of a few episodes and returns a function replaying it.
func replayer[S, A any](t *testing.T, rt *hrl.Runtime[S, A]) (func() error, int) {
	t.Helper()
	var moves []move
	var seed uint64
	for s := range uint64(8) {
		if m := record(t, rt, s); len(m) > len(moves) {
			moves, seed = m, s
		}
	}
	return func() error {
		if _, err := rt.Reset(seed); err != nil {
			return err
		}
		for _, m := range moves {
			if _, err := rt.Step(m.id, m.raw); err != nil {
				return err
			}
		}
		return nil
	}, len(moves)
}
