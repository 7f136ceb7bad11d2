package hrl_test

import (
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/stretchr/testify/require"
)

// TestDecisionsSeeTheReportedView: the runtime decodes an action in the view the agent
// was last reported in, without translating the state again, so that view must be the
// one the current state and the agent's clock give, whatever the hooks did since.
func TestDecisionsSeeTheReportedView(t *testing.T) {
	tests := []struct {
		name string
		env  func(bots ...*bot[int64]) *testEnv
		bots func() []*bot[int64]
	}{
		{"hooked corridor", func(bs ...*bot[int64]) *testEnv { return hookAll(hookedEnv(), bs...) },
			func() []*bot[int64] { return []*bot[int64]{newPlanner("planner"), newWalker("walker", 5)} }},
		{"hooked lateral", func(bs ...*bot[int64]) *testEnv { return hookAll(lateralEnv(), bs...) },
			func() []*bot[int64] {
				return []*bot[int64]{newPlanner("planner"), newWalker("a", 5), doneAfter(newWalker("b", 5), 2)}
			}},
		{"hooked three levels", func(bs ...*bot[int64]) *testEnv { return hookAll(threeLevelEnv(), bs...) },
			func() []*bot[int64] {
				return []*bot[int64]{newPlanner("top"), newPlanner("mid"), newWalker("low", 5)}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen view
			bots := tt.bots()
			for _, b := range bots {
				decode := b.decode
				b.decode = func(v view, raw int64) (act, error) {
					seen = v
					return decode(v, raw)
				}
			}
			rt := newRuntime(t, tt.env(bots...), hrl.Config{MaxTicks: 40})
			rng := rand.New(rand.NewPCG(7, 8))
			decisions := 0
			for seed := range uint64(5) {
				res := mustReset(t, rt, seed)
				for !res.Over {
					acting := res.Acting()
					require.NotNil(t, acting)
					want := view{rt.State(), acting.Clock}
					next, err := rt.Step(acting.AgentID, agent.RawAction{Int: rng.Int64N(3)})
					require.Equal(t, want, seen, "decision of %s at tick %d", acting.AgentID, res.Tick)
					decisions++
					if err == nil {
						res = next
					}
				}
			}
			require.Greater(t, decisions, 20)
		})
	}
}

// TestReportsHoldValues: a report holds values, not the runtime that made it, so two
// runtimes fed the same seed and actions report equal reports (compared deeply, as
// tests and callers compare them).
func TestReportsHoldValues(t *testing.T) {
	a := newRuntime(t, hookedEnv(), hrl.Config{MaxTicks: 30})
	b := newRuntime(t, hookedEnv(), hrl.Config{MaxTicks: 30})
	ra, rb := mustReset(t, a, 3), mustReset(t, b, 3)
	require.Equal(t, ra.Reports, rb.Reports)
	steps := 0
	for i := 0; !ra.Over && i < 200; i++ {
		id, raw := ra.Acting().AgentID, agent.RawAction{Int: int64(i % 2)}
		na, errA := a.Step(id, raw)
		nb, errB := b.Step(id, raw)
		require.Equal(t, errA, errB)
		if errA != nil {
			continue
		}
		ra, rb = na, nb
		require.Equal(t, ra.Reports, rb.Reports, "tick %d", ra.Tick)
		steps++
	}
	require.True(t, ra.Over)
	require.Greater(t, steps, 5)
}
