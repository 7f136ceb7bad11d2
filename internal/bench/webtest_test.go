package bench_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/internal/bench"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The web-testing benchmarks: BenchmarkWebtestStep steps the hrl runtime over
// envs/webtest with its default policies (heuristic strategy, scripted motion),
// BenchmarkWebtestLoop the same agents and environment by hand (bench.WebtestLoop),
// on the shop site and on a generated site of 200 pages. One iteration is one step,
// a reset when the episode ends included:
//
//	go test -run XXX -bench 'Webtest' -benchmem ./bench

func BenchmarkWebtestStep(b *testing.B) { runCases(b, "WebtestStep/") }
func BenchmarkWebtestLoop(b *testing.B) { runCases(b, "WebtestLoop/") }

// TestWebtestLoopMatchesRuntime plays the runtime and the hand-written loop in
// lockstep with the same policies and checks that they agree on every step: the
// acting agent's observation and mask, the rewards of the agents reported, the end.
func TestWebtestLoopMatchesRuntime(t *testing.T) {
	cfgs := []webtest.Config{
		{},
		{Strategy: webtest.StrategyConfig{Budget: 120}}, // budget runs out mid-test
		{Generate: &webtest.GenerateConfig{Pages: 30, Seed: 2}, Strategy: webtest.StrategyConfig{Budget: 3000}},
	}
	ctx := context.Background()
	for _, cfg := range cfgs {
		e, err := webtest.NewEnv(cfg)
		require.NoError(t, err)
		rt, err := hrl.New(hrl.HierarchicalEnv[webtest.State, webtest.Action](e), hrl.Config{})
		require.NoError(t, err)
		loop, err := bench.NewWebtestLoop(cfg)
		require.NoError(t, err)
		for seed := range uint64(3) {
			pols, err := bench.WebtestPolicies(seed)
			require.NoError(t, err)
			res := mustReset(t, rt, seed)
			lr := loop.Reset()
			for step := 0; ; step++ {
				acting := res.Acting()
				require.NotNil(t, acting)
				assert.Equal(t, acting.Agent == webtest.MotionName, lr.Motion, "step %d", step)
				require.Equal(t, acting.Obs, lr.Obs, "step %d", step)
				require.Equal(t, acting.Mask, lr.Mask, "step %d", step)
				raw, err := pols[acting.Agent].Act(ctx, acting.Obs, acting.Mask)
				require.NoError(t, err)
				res, err = rt.Step(acting.AgentID, raw)
				require.NoError(t, err)
				lr, err = loop.Step(raw.Int)
				require.NoError(t, err)
				require.Equal(t, res.Tick, lr.Tick)
				for _, rep := range res.Reports {
					switch {
					case rep.Start:
					case rep.Agent == webtest.StrategyName:
						assert.True(t, lr.StrategyReported, "step %d", step)
						assert.InDelta(t, rep.Reward, lr.StrategyReward, 1e-12, "step %d", step)
					default:
						assert.True(t, lr.MotionReported, "step %d", step)
						assert.InDelta(t, rep.Reward, lr.MotionReward, 1e-12, "step %d", step)
					}
				}
				require.Equal(t, res.Over, lr.Over, "step %d", step)
				if res.Over {
					break
				}
			}
			assert.Positive(t, res.Tick)
		}
	}
}

// The suite holds the web-testing cases, each compared with its loop.
func TestWebtestCases(t *testing.T) {
	var names []string
	for _, c := range bench.Suite() {
		if strings.HasPrefix(c.Name, "Webtest") {
			names = append(names, c.Name+" against "+c.Baseline)
		}
	}
	assert.True(t, slices.Contains(names, "WebtestStep/shop against WebtestLoop/shop"), "%v", names)
	assert.True(t, slices.Contains(names, "WebtestLoop/gen200 against "), "%v", names)
}
