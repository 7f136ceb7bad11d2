package runners_test

import (
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
	reg := registry(t)
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
