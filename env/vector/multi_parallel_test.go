package vector_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/env/vector"
)

// TestMultiParallelActMatchesSerial plays a Multi without workers and Multis with
// workers side by side, with the same seeds and RandomPerCopy policies, which the
// Multis with workers run on their workers (and, in "mixed", one agent's policy
// wrapped so that the caller runs it): after every tick the groups (rows, ids,
// observations, masks, actions) and every copy's stepped turn are the same.
func TestMultiParallelActMatchesSerial(t *testing.T) {
	for _, n := range []int{7, 200, 300} { // 200, 300: ranges of several chunks, a short last chunk
		for _, w := range []int{2, 3} {
			for _, mixed := range []bool{false, true} {
				t.Run(fmt.Sprintf("N=%d/W=%d/mixed=%t", n, w, mixed), func(t *testing.T) {
					noLeaks(t)
					const seed = 9
					serial := newMulti(t, n, mazes(testMaze))
					par := newMulti(t, n, mazes(testMaze), vector.WithWorkers(w))
					policies := func() map[string]vector.BatchPolicy {
						ps := map[string]vector.BatchPolicy{}
						for j, s := range serial.Agents() {
							p, err := vector.RandomPerCopy(s.ActionSpace, n, policySeed(j))
							require.NoError(t, err)
							if mixed && j == 0 {
								p = vector.BatchPolicyFunc(p.ActBatch)
							}
							ps[s.Name] = p
						}
						return ps
					}
					sp, pp := policies(), policies()
					require.NoError(t, serial.Reset(bg, seed))
					require.NoError(t, par.Reset(bg, seed))
					requireSameGroups(t, serial, par, "reset")
					for tick := range 200 {
						where := fmt.Sprintf("tick %d", tick)
						require.NoError(t, serial.Act(bg, sp))
						require.NoError(t, par.Act(bg, pp))
						requireSameGroups(t, serial, par, where)
						require.NoError(t, serial.Step(bg))
						require.NoError(t, par.Step(bg))
						for i := range n {
							requireSameTurn(t, serial.Stepped(i), par.Stepped(i), fmt.Sprintf("%s copy %d", where, i))
							require.Equal(t, serial.Ended(i), par.Ended(i), where)
						}
						requireSameGroups(t, serial, par, where)
					}
				})
			}
		}
	}
}

// requireSameGroups checks that two Multis have the same groups.
func requireSameGroups(t *testing.T, want, got *vector.Multi, where string) {
	t.Helper()
	for j, g := range got.Groups() {
		w := want.Groups()[j]
		require.Equal(t, w.Copies, g.Copies, "%s: %s", where, g.Agent)
		require.Equal(t, w.IDs, g.IDs, "%s: %s", where, g.Agent)
		require.Equal(t, w.Obs, g.Obs, "%s: %s", where, g.Agent)
		require.Equal(t, w.Masks, g.Masks, "%s: %s", where, g.Agent)
		require.Equal(t, w.Actions, g.Actions, "%s: %s", where, g.Agent)
	}
}

// TestMultiPolicyErrorWithWorkers: a RandomPerCopy policy run on the workers that
// fails (its copy has no policy: it was made for fewer copies) is not run there, and
// its error is the one the serial call returns.
func TestMultiPolicyErrorWithWorkers(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			m := newMulti(t, 5, mazes(testMaze), vector.WithWorkers(w))
			ps := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, 3, policySeed(j))
				require.NoError(t, err)
				ps[s.Name] = p
			}
			require.NoError(t, m.Reset(bg, 1))
			err := m.Act(bg, ps)
			var ce *vector.CopyError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, 3, ce.Copy)
			assert.Equal(t, vector.OpAct, ce.Op)
			// The vector is still usable.
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, 5, policySeed(j))
				require.NoError(t, err)
				ps[s.Name] = p
			}
			require.NoError(t, m.Act(bg, ps))
			require.NoError(t, m.Step(bg))
		})
	}
}

// TestMultiTiming: WithTiming adds up the phases run over the copies, three per tick
// with workers (the policies, the step, the gather) and two without (the step, the
// gather; the caller runs the policies).
func TestMultiTiming(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			var tm vector.Timing
			m := newMulti(t, 64, mazes(testMaze), vector.WithWorkers(w), vector.WithTiming(&tm))
			ps := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, 64, policySeed(j))
				require.NoError(t, err)
				ps[s.Name] = p
			}
			require.NoError(t, m.Reset(bg, 1))
			assert.Equal(t, 2, tm.Phases, "reset and gather")
			tm = vector.Timing{}
			for range 10 {
				require.NoError(t, m.Act(bg, ps))
				require.NoError(t, m.Step(bg))
			}
			perTick := 2
			if w > 1 {
				perTick = 3
			}
			assert.Equal(t, 10*perTick, tm.Phases)
			assert.Positive(t, tm.Parallel)
		})
	}
}

// TestMultiSpread: Spread passes every copy to f once, in ranges that cover 0 to N-1,
// re-panics a panic of f in the caller once the other calls are done, and on a
// closed vector calls f from the caller.
func TestMultiSpread(t *testing.T) {
	for _, w := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			const n = 300
			m := newMulti(t, n, mazes(testMaze), vector.WithWorkers(w))
			require.NoError(t, m.Reset(bg, 1))
			seen := make([]int, n)
			m.Spread(func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
					j, r := m.Acting(i)
					require.Equal(t, i, m.Groups()[j].Copies[r])
				}
			})
			for i, k := range seen {
				require.Equal(t, 1, k, "copy %d", i)
			}
			var pe *vector.PanicError
			func() {
				defer func() { pe, _ = recover().(*vector.PanicError) }()
				m.Spread(func(lo, hi int) {
					if lo == 0 {
						panic("boom")
					}
				})
			}()
			require.NotNil(t, pe)
			assert.Equal(t, "boom", pe.Value)
			require.NoError(t, m.Close())
			calls := 0
			m.Spread(func(lo, hi int) { calls++; assert.Equal(t, [2]int{0, n}, [2]int{lo, hi}) })
			assert.Equal(t, 1, calls)
		})
	}
}
