package webtest_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// figures are what a policy pair achieved over seeded episodes.
type figures struct {
	episodes, foundAll int
	coverage, defects  float64
	budgetUsed         int // the most any episode used
}

func measure(t *testing.T, cfg webtest.Config, seeds int, heuristic bool) figures {
	t.Helper()
	rt, e := newRuntime(t, cfg)
	var f figures
	for seed := range uint64(seeds) {
		s := finalState(t, rt, seed, policies(t, seed, heuristic))
		f.episodes++
		if s.FoundAll() {
			f.foundAll++
		}
		f.coverage += s.Coverage() / float64(seeds)
		f.defects += float64(s.DefectsFound()) / float64(seeds)
		f.budgetUsed = max(f.budgetUsed, e.Config().Strategy.Budget-s.Budget())
	}
	return f
}

// finalState plays one episode and returns its final state.
func finalState(t *testing.T, rt *runtime, seed uint64, pols map[string]agent.Policy) webtest.State {
	t.Helper()
	res := mustReset(t, rt, seed)
	for !res.Over {
		rep := res.Acting()
		raw, err := pols[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		if res, err = rt.Step(rep.AgentID, raw); err != nil {
			require.NoError(t, err)
		}
	}
	return rt.State()
}

// The heuristic strategy with the scripted motion finds every planted defect of the
// shop within the default budget in at least 95% of seeds; the random policies'
// figures are logged beside it.
func TestHeuristicFindsEveryDefect(t *testing.T) {
	const seeds = 200
	h := measure(t, webtest.Config{}, seeds, true)
	r := measure(t, webtest.Config{}, seeds, false)
	t.Logf("heuristic + scripted: every defect found in %d of %d seeds (%.1f%%), mean coverage %.3f, mean defects %.2f of 5, at most %d of %d UI operations",
		h.foundAll, seeds, 100*float64(h.foundAll)/seeds, h.coverage, h.defects, h.budgetUsed, webtest.DefaultBudget)
	t.Logf("random + random:      every defect found in %d of %d seeds (%.1f%%), mean coverage %.3f, mean defects %.2f of 5",
		r.foundAll, seeds, 100*float64(r.foundAll)/seeds, r.coverage, r.defects)
	assert.GreaterOrEqual(t, float64(h.foundAll)/seeds, 0.95)
	assert.Greater(t, h.coverage, r.coverage)
	assert.Greater(t, h.defects, r.defects)
}

func TestHeuristic(t *testing.T) {
	h, err := webtest.NewHeuristic(rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	ctx := context.Background()
	obs := make([]float32, webtest.StrategyObsSize)
	slotOf := func(k int, kind webtest.Kind, coverage, visited float32) {
		d := obs[k*7:]
		d[0], d[int(kind)], d[4], d[5] = 1, 1, coverage, visited
	}
	slotOf(0, webtest.Link, 0, 1)   // a link into a visited page: 0.5
	slotOf(1, webtest.Form, 0.4, 0) // a form 40% tried: 0.4
	slotOf(2, webtest.Link, 1, 0)   // covered
	slotOf(3, webtest.Button, 0, 1) // 0.5
	raw, err := h.Act(ctx, obs, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), raw.Int, "the least covered")

	// Ties are drawn uniformly.
	slotOf(1, webtest.Form, 0.5, 0)
	counts := map[int64]int{}
	for range 3000 {
		raw, err := h.Act(ctx, obs, nil)
		require.NoError(t, err)
		counts[raw.Int]++
	}
	assert.Len(t, counts, 3)
	for k, n := range counts {
		assert.InDelta(t, 1000, n, 150, "slot %d", k)
	}

	// The mask decides what is allowed; nothing left means back, then finish.
	mask := make([]bool, webtest.StrategyActions)
	mask[3], mask[webtest.StrategyBack] = true, true
	raw, err = h.Act(ctx, obs, mask)
	require.NoError(t, err)
	assert.Equal(t, int64(3), raw.Int)
	mask[3] = false
	raw, err = h.Act(ctx, obs, mask)
	require.NoError(t, err)
	assert.Equal(t, int64(webtest.StrategyBack), raw.Int)
	mask[webtest.StrategyBack] = false
	raw, err = h.Act(ctx, obs, mask)
	require.NoError(t, err)
	assert.Equal(t, int64(webtest.StrategyFinish), raw.Int)

	_, err = h.Act(ctx, obs[:5], nil)
	assert.ErrorContains(t, err, "observation has 5 values")
	_, err = h.Act(ctx, obs, mask[:3])
	assert.ErrorContains(t, err, "mask has 3 entries")
	_, err = webtest.NewHeuristic(nil)
	assert.Error(t, err)
}

func TestMonkey(t *testing.T) {
	m, err := webtest.NewMonkey(rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	ctx := context.Background()
	obs := make([]float32, webtest.StrategyObsSize)
	mask := make([]bool, webtest.StrategyActions)
	mask[2], mask[5], mask[webtest.StrategyBack], mask[webtest.StrategyFinish] = true, true, true, true
	counts := map[int64]int{}
	for range 3000 {
		raw, err := m.Act(ctx, obs, mask)
		require.NoError(t, err)
		counts[raw.Int]++
	}
	assert.Len(t, counts, 3, "finish only when nothing else is allowed: %v", counts)
	for k, n := range counts {
		assert.InDelta(t, 1000, n, 150, "action %d", k)
	}
	raw, err := m.Act(ctx, obs, make([]bool, webtest.StrategyActions))
	require.NoError(t, err)
	assert.Equal(t, int64(webtest.StrategyFinish), raw.Int)
	_, err = m.Act(ctx, obs[:1], nil)
	assert.Error(t, err)
	_, err = webtest.NewMonkey(nil)
	assert.Error(t, err)
}

// The scripted motion submits the valid values first, then one untried probe at a
// time with the other fields valid.
func TestScripted(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	mustReset(t, rt, 0)
	ctx := context.Background()
	var p agent.Policy = webtest.Scripted{}
	submit := func() []int64 {
		t.Helper()
		res := act(t, rt, slot(t, rt, "search"))
		var ops []int64
		for res.Acting() != nil && res.Acting().Agent == webtest.MotionName {
			raw, err := p.Act(ctx, res.Acting().Obs, res.Acting().Mask)
			require.NoError(t, err)
			ops = append(ops, raw.Int)
			res = act(t, rt, raw.Int)
		}
		if rt.State().Page() != "home" {
			act(t, rt, webtest.StrategyBack)
		}
		return ops
	}
	focus, send := webtest.MotionFocus, webtest.MotionSubmit
	assert.Equal(t, []int64{focus, webtest.MotionType(webtest.Valid), send}, submit())
	assert.Equal(t, []int64{send}, submit(), "empty: the field starts empty")
	assert.Equal(t, []int64{focus, webtest.MotionType(webtest.Long), send}, submit())
	assert.Equal(t, []int64{focus, webtest.MotionType(webtest.Negative), send}, submit())
	assert.Equal(t, []int64{focus, webtest.MotionType(webtest.Unicode), send}, submit())
	assert.True(t, rt.State().Found("search-unicode"))
	assert.Equal(t, []int64{focus, webtest.MotionType(webtest.Script), send}, submit())

	// A link or a button is clicked.
	obs := make([]float32, webtest.MotionObsSize)
	obs[1] = 1
	raw, err := p.Act(ctx, obs, nil)
	require.NoError(t, err)
	assert.Equal(t, webtest.MotionClick, raw.Int)
	_, err = p.Act(ctx, make([]float32, webtest.MotionObsSize), nil)
	assert.ErrorContains(t, err, "no target")
	_, err = p.Act(ctx, obs[:3], nil)
	assert.ErrorContains(t, err, "observation has 3 values")
}

// The scripted motion sets selects and checkboxes too: every probe of the order form
// is tried, and the note's script-like value finds the server error.
func TestScriptedOrderForm(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	mustReset(t, rt, 0)
	act(t, rt, slot(t, rt, "nav-account")) // the login procedure
	visit(t, rt, "nav-home")
	visit(t, rt, "featured")
	visit(t, rt, "add-to-cart")
	ctx := context.Background()
	submissions := 0
	res := visit(t, rt, "checkout")
	for res.Acting().Mask[slot(t, rt, "order")] {
		res = act(t, rt, slot(t, rt, "order"))
		for res.Acting().Agent == webtest.MotionName {
			raw, err := webtest.Scripted{}.Act(ctx, res.Acting().Obs, res.Acting().Mask)
			require.NoError(t, err)
			res = act(t, rt, raw.Int)
		}
		submissions++
		require.Less(t, submissions, 40)
		for rt.State().Page() != "checkout" {
			res = act(t, rt, webtest.StrategyBack)
		}
	}
	// 4 texts of 6 probes, 2 options, 2 states: 28 probes, the valid ones in one go.
	assert.Equal(t, 28-6+1, submissions)
	assert.True(t, rt.State().Found("order-note-script"))
}
