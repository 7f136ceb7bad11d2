package runners_test

import (
	"context"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/stretchr/testify/require"
	"testing"

	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

// The step path allocates nothing in steady state, with or without a sink: a trial of
// many more episodes costs no more allocations per step than a short one, apart from
// the growth of its result (its returns, amortised).
func TestTrialAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	for _, sink := range []bool{false, true} {
		var opts []runners.CampaignOption
		if sink {
			opts = append(opts, runners.WithSinks(nop))
		}
		var steps [2]int64
		allocs := func(i, episodes int) float64 {
			return testing.AllocsPerRun(3, func() { steps[i] = runTrial(t, reg, episodes, opts...) })
		}
		short, long := allocs(0, 10), allocs(1, 1000)
		perStep := (long - short) / float64(steps[1]-steps[0])
		t.Logf("sink %v: %.0f allocations for %d steps, %.0f for %d: %.5f per step", sink, short, steps[0], long, steps[1], perStep)
		assert.Less(t, perStep, 0.001, "sink %v", sink)
	}
}

// counting is a Learner that counts what it is told, allocating nothing.
type counting struct {
	agent.Policy
	n [4]int
}

func (c *counting) Learn(_ context.Context, o *runners.Outcome) error {
	c.n[o.Kind]++
	return nil
}

// Telling Learners what came of their steps allocates nothing per step either.
func TestLearnerAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	strategy := &counting{Policy: maze.NewOracle(m.Maze())}
	random, err := agent.Random(m.Agents()[1].ActionSpace(), rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	motion := &counting{Policy: random}
	chosen := map[string]runners.Actor{maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Value(motion)}
	actors := runners.WithPreTrial(func(_ context.Context, _ int, s *runners.Spec) error {
		s.Actors = chosen
		return nil
	})
	for _, sink := range []bool{false, true} {
		opts := []runners.CampaignOption{actors}
		if sink {
			opts = append(opts, runners.WithSinks(nop))
		}
		var steps [2]int64
		allocs := func(i, episodes int) float64 {
			return testing.AllocsPerRun(3, func() { steps[i] = runTrial(t, reg, episodes, opts...) })
		}
		short, long := allocs(0, 10), allocs(1, 1000)
		perStep := (long - short) / float64(steps[1]-steps[0])
		t.Logf("sink %v: %.0f allocations for %d steps, %.0f for %d: %.5f per step", sink, short, steps[0], long, steps[1], perStep)
		assert.Less(t, perStep, 0.001, "sink %v", sink)
	}
	assert.Positive(t, motion.n[runners.OutcomeStep])
	assert.Positive(t, strategy.n[runners.OutcomeEpisodeEnd])
}
