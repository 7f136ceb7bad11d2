package runners_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/require"
)

// nop is a sink that does nothing, so that events are built.
var nop = event.SinkFunc(func(context.Context, *event.Event) error { return nil })

// BenchmarkTrialMaze plays maze episodes (oracle strategy, random motion, the default
// policies) through the runner, in trials of up to 1000 episodes on one worker, with no
// sink (events not built) and with a sink that does nothing, against a hand-written
// loop over the hrl runtime with the same policies and seeds. One op is one episode;
// steps/s, ns/step and allocs/step are reported.
func BenchmarkTrialMaze(b *testing.B) {
	reg := testRegistry(b)
	for _, bench := range []struct {
		name string
		run  func(b *testing.B, episodes int) int64 // returns the steps played
	}{
		{"hand", handLoop},
		{"runner", func(b *testing.B, episodes int) int64 { return runTrial(b, reg, episodes) }},
		{"runner+sink", func(b *testing.B, episodes int) int64 { return runTrial(b, reg, episodes, runners.WithSinks(nop)) }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			steps := bench.run(b, b.N)
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(steps), "allocs/step")
		})
	}
}

// trialEpisodes is the most episodes runTrial plays in one trial.
const trialEpisodes = 1000

// runTrial plays episodes in trials of up to trialEpisodes on one worker.
func runTrial(tb testing.TB, reg *registry.Registry, episodes int, opts ...runners.CampaignOption) int64 {
	trials := (episodes + trialEpisodes - 1) / trialEpisodes
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1, Episodes: min(episodes, trialEpisodes)},
		append(opts, runners.WithWorkers(1), runners.WithTrials(trials))...)
	require.NoError(tb, err)
	s, err := c.Run(context.Background())
	require.NoError(tb, err)
	require.Equal(tb, trials, s.Ended, "%v", s.Failures)
	return s.EnvSteps
}

// handLoop plays as many episodes as runTrial by hand, in one trial.
func handLoop(b *testing.B, episodes int) int64 {
	e, err := maze.NewEnv(maze.Config{})
	require.NoError(b, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	require.NoError(b, err)
	strategy := agent.Policy(maze.NewOracle(e.Maze()))
	motion, err := agent.Random(rt.Agents()[1].ActionSpace, rand.New(rand.NewPCG(1, 1)))
	require.NoError(b, err)
	ctx := context.Background()
	var steps int64
	for ep := range episodes {
		res := mustReset(b, rt, env.DeriveSeed(1, ep))
		for !res.Over {
			rep := res.Acting()
			p := strategy
			if rep.Agent != maze.StrategyName {
				p = motion
			}
			raw, err := p.Act(ctx, rep.Obs, rep.Mask)
			if err != nil {
				b.Fatal(err)
			}
			if res, err = rt.Step(rep.AgentID, raw); err != nil {
				b.Fatal(err)
			}
		}
		steps += int64(res.Tick)
	}
	return steps
}
