package webtest_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Generated sites of every size pass the checks a site file does, load back from
// their JSON, and the same seed gives the same site.
func TestGenerate(t *testing.T) {
	for _, size := range []struct{ n, seeds int }{{webtest.MinGeneratedPages, 5}, {9, 5}, {30, 5}, {100, 3}, {1000, 1}} {
		n := size.n
		for seed := range uint64(size.seeds) {
			site, err := webtest.Generate(rand.New(rand.NewPCG(seed, 1)), n)
			require.NoError(t, err, "%d pages, seed %d", n, seed)
			assert.Equal(t, n, site.Pages())
			again, err := webtest.Generate(rand.New(rand.NewPCG(seed, 1)), n)
			require.NoError(t, err)
			assert.Equal(t, site.Spec(), again.Spec(), "same seed, same site")
			b, err := json.Marshal(site)
			require.NoError(t, err)
			loaded, err := webtest.Load(b)
			require.NoError(t, err, "%d pages, seed %d", n, seed)
			assert.Equal(t, site.Units(), loaded.Units())
			kinds := map[webtest.DefectKind]int{}
			for _, d := range site.Defects() {
				kinds[d.Kind]++
			}
			assert.Len(t, site.Defects(), min(max(4, n/8), webtest.MaxDefects), "%d pages, seed %d: %v", n, seed, kinds)
			assert.Equal(t, 1, kinds[webtest.DefectSequence])
			assert.Positive(t, kinds[webtest.DefectBrokenLink])
			assert.Positive(t, kinds[webtest.DefectDeadElement])
			assert.Positive(t, kinds[webtest.DefectServerError])
		}
	}
	other, err := webtest.Generate(rand.New(rand.NewPCG(99, 1)), 30)
	require.NoError(t, err)
	site, err := webtest.Generate(rand.New(rand.NewPCG(0, 1)), 30)
	require.NoError(t, err)
	assert.NotEqual(t, site.Spec(), other.Spec())

	for _, n := range []int{0, webtest.MinGeneratedPages - 1, webtest.MaxGeneratedPages + 1} {
		_, err := webtest.Generate(rand.New(rand.NewPCG(1, 1)), n)
		assert.ErrorIs(t, err, webtest.ErrSite, "%d pages", n)
	}
}

// With a budget to match its size, the heuristic finds every defect of a generated
// site: every planted defect can be reached.
func TestGeneratedDefectsReachable(t *testing.T) {
	for seed := range uint64(4) {
		cfg := webtest.Config{Generate: &webtest.GenerateConfig{Pages: 40, Seed: seed}, Strategy: webtest.StrategyConfig{Budget: 20000}}
		rt, _ := newRuntime(t, cfg)
		_, s := play(t, rt, seed, policies(t, seed, true))
		assert.True(t, s.FoundAll(), "site seed %d: found %v of %d", seed, s.FoundIDs(), len(s.Site().Defects()))
		assert.Greater(t, s.Coverage(), 0.9)
	}
}
