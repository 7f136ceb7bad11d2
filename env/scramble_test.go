package env_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// inverse returns the inverse of the permutation p.
func inverse(p []int) []int {
	inv := make([]int, len(p))
	for i, k := range p {
		inv[k] = i
	}
	return inv
}

// TestScrambleUnscrambles plays the plain maze and a scrambled one side by side with
// a random policy on the plain one, each action translated into the scrambled one's
// slot: unscrambling every observation and mask gives the plain trajectory, rewards
// and ends alike, for many scramble and episode seeds.
func TestScrambleUnscrambles(t *testing.T) {
	for scrambleSeed := range uint64(8) {
		for resetSeed := range uint64(3) {
			t.Run(fmt.Sprintf("scramble=%d/reset=%d", scrambleSeed, resetSeed), func(t *testing.T) {
				plain, _ := newMaze(t, hrl.Config{MaxTicks: 200})
				inner, _ := newMaze(t, hrl.Config{MaxTicks: 200})
				s, err := env.Scramble(inner, scrambleSeed)
				require.NoError(t, err)
				perms := map[string]env.Permutation{}
				for _, sp := range plain.Agents() {
					p, ok := s.Permutation(sp.Name)
					require.True(t, ok)
					require.Len(t, p.Actions, int(sp.ActionSpace.(spaces.Discrete).N))
					require.Len(t, p.Observation, sp.ObservationSpace.FlatDim())
					perms[sp.Name] = p
				}
				rng := rand.New(rand.NewPCG(scrambleSeed, resetSeed))
				want := mustReset(t, plain, resetSeed)
				got := mustReset(t, s, resetSeed)
				for step := 0; ; step++ {
					require.Equal(t, copyReports(want.Reports), unscramble(t, s, perms, got.Reports), "step %d", step)
					require.Equal(t, want.Over, got.Over)
					require.Equal(t, want.Next, got.Next)
					if want.Over {
						return
					}
					rep := want.Acting()
					var allowed []int
					for i, ok := range rep.Mask {
						if ok {
							allowed = append(allowed, i)
						}
					}
					a := allowed[rng.IntN(len(allowed))]
					id := rep.AgentID
					scrambled := inverse(perms[rep.Agent].Actions)[a]
					want, err = plain.Step(id, agent.Discrete(int64(a)))
					require.NoError(t, err)
					got, err = s.Step(id, agent.Discrete(int64(scrambled)))
					require.NoError(t, err)
				}
			})
		}
	}
}

// unscramble copies reports out of the scrambled environment, each observation and
// mask put back in the plain order, after checking the observation is in the
// scrambled space.
func unscramble(t *testing.T, s *env.Scrambled, perms map[string]env.Permutation, reps []env.Report) []report {
	t.Helper()
	out := copyReports(reps)
	for i := range out {
		p := perms[out[i].Agent]
		for _, sp := range s.Agents() {
			if sp.Name == out[i].Agent {
				require.NoError(t, sp.ObservationSpace.Check(out[i].Obs))
			}
		}
		obs := make([]float32, len(out[i].Obs))
		for j, k := range p.Observation {
			obs[k] = out[i].Obs[j]
		}
		out[i].Obs = obs
		if out[i].Mask != nil {
			mask := make([]bool, len(out[i].Mask))
			for j, k := range p.Actions {
				mask[k] = out[i].Mask[j]
			}
			out[i].Mask = mask
		}
	}
	return out
}

// The permutations depend on the seed, differ between agents, and are the same for
// the same seed; Info records them; a refused action leaves the environment as it was.
func TestScramblePermutations(t *testing.T) {
	rt, _ := newMaze(t, hrl.Config{})
	a, err := env.Scramble(rt, 1)
	require.NoError(t, err)
	rt2, _ := newMaze(t, hrl.Config{})
	b, err := env.Scramble(rt2, 1)
	require.NoError(t, err)
	rt3, _ := newMaze(t, hrl.Config{})
	c, err := env.Scramble(rt3, 2)
	require.NoError(t, err)
	pa, _ := a.Permutation("strategy")
	pb, _ := b.Permutation("strategy")
	pc, _ := c.Permutation("strategy")
	assert.Equal(t, pa, pb)
	assert.NotEqual(t, pa.Observation, pc.Observation)
	for _, p := range []env.Permutation{pa, pc} {
		assert.Equal(t, []int{0, 1, 2, 3}, slices.Sorted(slices.Values(p.Actions)))
	}
	_, ok := a.Permutation("ghost")
	assert.False(t, ok)

	info, ok := a.Info().(map[string]any)
	require.True(t, ok)
	rec := info[env.InfoKeyScramble].(map[string]any)
	assert.Equal(t, uint64(1), rec["seed"])
	assert.Equal(t, pa, rec["agents"].(map[string]env.Permutation)["strategy"])

	turn := mustReset(t, a, 3)
	id := turn.Acting().AgentID
	_, err = a.Step(id, agent.Discrete(9))
	require.Error(t, err)
	mustReset(t, b, 3)
	allowed := slices.Index(turn.Acting().Mask, true)
	ta, err := a.Step(id, agent.Discrete(int64(allowed)))
	require.NoError(t, err)
	tb, err := b.Step(id, agent.Discrete(int64(allowed)))
	require.NoError(t, err)
	assert.Equal(t, copyReports(tb.Reports), copyReports(ta.Reports))

	got, ok := env.As[*hrl.Runtime[maze.State, maze.Action]](a)
	assert.True(t, ok)
	assert.Same(t, rt, got)
}
