package webtest_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/hrl/hrltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type runtime = hrl.Runtime[webtest.State, webtest.Action]

func newRuntime(t testing.TB, cfg webtest.Config) (*runtime, *webtest.Env) {
	t.Helper()
	e, err := webtest.NewEnv(cfg)
	require.NoError(t, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[webtest.State, webtest.Action](e), hrl.Config{})
	require.NoError(t, err)
	return rt, e
}

// slot returns the strategy agent's slot of the target id on the current page.
func slot(t *testing.T, rt *runtime, id string) int64 {
	t.Helper()
	s := rt.State()
	k := slices.Index(s.Targets(), id)
	require.GreaterOrEqual(t, k, 0, "no %q on %s (targets %v)", id, s.Page(), s.Targets())
	return int64(k)
}

// act steps the acting agent with raw.
func act(t *testing.T, rt *runtime, raw int64) env.Turn {
	t.Helper()
	res, err := rt.Step(rt.Acting(), agent.Discrete(raw))
	require.NoError(t, err, "%s plays %d on %s", rt.Acting(), raw, rt.State().URL())
	return res
}

// visit has the strategy pick a link or button and the motion agent click it.
func visit(t *testing.T, rt *runtime, id string) env.Turn {
	t.Helper()
	res := act(t, rt, slot(t, rt, id))
	require.True(t, res.Reports[0].Start && res.Reports[0].Agent == webtest.MotionName, "the motion agent takes control")
	return act(t, rt, webtest.MotionClick)
}

func TestLoginProcedure(t *testing.T) {
	rt, e := newRuntime(t, webtest.Config{})
	res := mustReset(t, rt, 1)
	o, err := hrl.Obs[webtest.StrategyObs](res, "strategy_0")
	require.NoError(t, err)
	k := slot(t, rt, "nav-account")
	assert.True(t, o.Slots[k].NeedsLogin)
	assert.False(t, o.Slots[slot(t, rt, "nav-cart")].NeedsLogin)
	assert.Equal(t, float32(1), res.Reports[0].Obs[int(k)*7+6], "the flat observation says so too")

	// Picking a link into the account page while logged out runs the procedure: no
	// motion agent, one tick, logged in and on the account page, the login page
	// not in the history.
	res = act(t, rt, k)
	require.Len(t, res.Reports, 1)
	rep := res.Reports[0]
	assert.Equal(t, "strategy_0", rep.AgentID)
	assert.False(t, rep.Start)
	assert.Equal(t, 1, rep.SpanTicks)
	s := rt.State()
	assert.True(t, s.LoggedIn())
	assert.Equal(t, "account", s.Page())
	assert.Equal(t, []string{"home"}, s.History())
	assert.True(t, s.Visited("login"))
	assert.Equal(t, webtest.DefaultBudget-6, s.Budget(), "focus and type two fields, submit, click")
	// Covered: the login page, the login form, its two fields' valid values, the
	// link and the account page.
	assert.Equal(t, 1+6, s.Covered())
	assert.InDelta(t, 6.0/float64(e.Site().Units()), rep.Reward, 1e-12)

	// Logged in, a link into a page that requires login goes to the motion agent.
	res = visit(t, rt, "orders")
	assert.Equal(t, "orders", rt.State().Page())

	// Log out from the account page, then go back into it: the procedure logs in
	// again and goes back.
	act(t, rt, webtest.StrategyBack)
	require.Equal(t, "account", rt.State().Page())
	visit(t, rt, "log-out")
	require.False(t, rt.State().LoggedIn())
	require.Equal(t, []string{"account", "home"}, rt.State().History())
	res = act(t, rt, webtest.StrategyBack)
	require.Len(t, res.Reports, 1)
	assert.Equal(t, "strategy_0", res.Reports[0].AgentID)
	assert.True(t, rt.State().LoggedIn())
	assert.Equal(t, "account", rt.State().Page())
	assert.Equal(t, []string{"home"}, rt.State().History())

	// The machine names the procedure.
	assert.Contains(t, rt.Mermaid(), "login")
	tr := e.Machine().Triggers
	require.Len(t, tr, 2)
	assert.Equal(t, "login", tr[0].Name)
	assert.NotNil(t, tr[0].Run)
	assert.Equal(t, webtest.MotionName, tr[1].To)
}

func TestLoginErrors(t *testing.T) {
	spec := mini()
	spec.Login = nil
	spec.Pages[1].RequiresLogin = false
	e, err := webtest.NewEnv(webtest.Config{Site: &spec})
	require.NoError(t, err)
	_, err = webtest.Login(e.InitialState(nil), webtest.Action{Kind: webtest.Pick, Target: 0})
	assert.ErrorIs(t, err, webtest.ErrNoLogin)

	shop, err := webtest.NewEnv(webtest.Config{})
	require.NoError(t, err)
	s := shop.InitialState(nil)
	_, err = webtest.Login(s, webtest.Action{Kind: webtest.Click, Target: 0})
	assert.ErrorIs(t, err, webtest.ErrNotApplicable)
	_, err = webtest.Login(s, webtest.Action{Kind: webtest.Back})
	assert.ErrorIs(t, err, webtest.ErrNoHistory)
	_, err = webtest.Login(s, webtest.Action{Kind: webtest.Pick, Target: 9999})
	assert.ErrorIs(t, err, webtest.ErrNoTarget)
}

func TestMasks(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	res := mustReset(t, rt, 0)
	home := rt.State().Targets()
	assert.Equal(t, []string{"nav-catalogue", "nav-cart", "nav-account", "nav-login", "featured", "about", "contact", "careers", "search"}, home)
	want := make([]bool, webtest.StrategyActions)
	for k := range home {
		want[k] = true
	}
	want[webtest.StrategyFinish] = true
	assert.Equal(t, want, res.Reports[0].Mask, "the targets and finish; no history to go back to")

	// A link clicked is covered: masked out when the page shows again.
	res = act(t, rt, slot(t, rt, "nav-catalogue"))
	assert.Equal(t, []bool{false, false, false, false, false, false, false, false, false, false, true}, res.Reports[0].Mask, "the motion agent may only click a link")
	res = act(t, rt, webtest.MotionClick)
	assert.True(t, res.Acting().Mask[webtest.StrategyBack])
	res = act(t, rt, webtest.StrategyBack)
	want[slot(t, rt, "nav-catalogue")] = false
	assert.Equal(t, want, res.Acting().Mask)

	// A form stays allowed until every probe was tried.
	res = act(t, rt, slot(t, rt, "search"))
	m := res.Acting().Mask
	assert.True(t, m[webtest.MotionFocus] && m[webtest.MotionSubmit])
	assert.False(t, m[webtest.MotionClick] || m[webtest.MotionToggle] || m[webtest.MotionChoose] || m[webtest.MotionType(webtest.Valid)], "nothing to type into before a field has the focus")
	res = act(t, rt, webtest.MotionFocus)
	m = res.Acting().Mask
	for v := webtest.Valid; v <= webtest.Script; v++ {
		assert.True(t, m[webtest.MotionType(v)], "type %s into the focused text field", v)
	}
	assert.False(t, m[webtest.MotionToggle] || m[webtest.MotionChoose])
	act(t, rt, webtest.MotionType(webtest.Long))
	res = act(t, rt, webtest.MotionSubmit)
	require.Equal(t, "results", rt.State().Page())
	res = act(t, rt, webtest.StrategyBack)
	assert.True(t, res.Acting().Mask[slot(t, rt, "search")], "1 of 6 probes tried")
	o, err := hrl.Obs[webtest.StrategyObs](res, res.Next)
	require.NoError(t, err)
	assert.InDelta(t, 1.0/6, o.Slots[slot(t, rt, "search")].Coverage, 1e-12)
}

// The motion agent's mask follows the focused field's kind.
func TestMotionMaskByField(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	mustReset(t, rt, 0)
	act(t, rt, slot(t, rt, "nav-account")) // the login procedure
	visit(t, rt, "nav-home")
	visit(t, rt, "featured")
	visit(t, rt, "add-to-cart")
	visit(t, rt, "checkout")
	res := act(t, rt, slot(t, rt, "order"))
	require.Equal(t, webtest.MotionName, res.Acting().Agent)
	kinds := []string{"text", "text", "text", "text", "select", "checkbox"}
	for i, kind := range kinds {
		res = act(t, rt, webtest.MotionFocus)
		m := res.Acting().Mask
		assert.Equal(t, kind == "text", m[webtest.MotionType(webtest.Unicode)], "field %d", i)
		assert.Equal(t, kind == "select", m[webtest.MotionChoose], "field %d", i)
		assert.Equal(t, kind == "checkbox", m[webtest.MotionToggle], "field %d", i)
		o, err := hrl.Obs[webtest.MotionObs](res, res.Next)
		require.NoError(t, err)
		assert.True(t, o.Fields[i].Focused)
		assert.Equal(t, kind, o.Fields[i].Kind.String())
	}
	o, err := hrl.Obs[webtest.MotionObs](res, res.Next)
	require.NoError(t, err)
	assert.Equal(t, webtest.Form, o.Target)
	assert.Equal(t, 2, o.Fields[4].Probes, "two shipping options")
	assert.Equal(t, webtest.Kind(0), o.Fields[6].Kind, "six fields")
}

// Actions that do not apply are errors that name the reason and change nothing.
func TestDecodeErrors(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	mustReset(t, rt, 0)
	check := func(raw int64, kind, cause error) {
		t.Helper()
		before, tick := rt.State(), rt.Tick()
		_, err := rt.Step(rt.Acting(), agent.Discrete(raw))
		require.ErrorIs(t, err, kind)
		if cause != nil {
			require.ErrorIs(t, err, cause)
		}
		assert.Equal(t, before, rt.State())
		assert.Equal(t, tick, rt.Tick())
	}
	check(webtest.StrategyBack, env.ErrInvalidAction, webtest.ErrNoHistory)
	check(12, env.ErrInvalidAction, webtest.ErrNoTarget) // nine targets on the home page
	check(webtest.StrategyActions, env.ErrOutsideSpace, nil)
	act(t, rt, slot(t, rt, "search"))
	check(webtest.MotionClick, env.ErrInvalidAction, webtest.ErrNotApplicable)
	check(webtest.MotionType(webtest.Valid), env.ErrInvalidAction, webtest.ErrNotApplicable)
	check(webtest.MotionToggle, env.ErrInvalidAction, webtest.ErrNotApplicable)
	act(t, rt, webtest.MotionFocus)
	check(webtest.MotionChoose, env.ErrInvalidAction, webtest.ErrNotApplicable)
	act(t, rt, webtest.MotionSubmit) // refused: the query is empty
	act(t, rt, slot(t, rt, "featured"))
	check(webtest.MotionSubmit, env.ErrInvalidAction, webtest.ErrNotApplicable)
	check(webtest.MotionFocus, env.ErrInvalidAction, webtest.ErrNotApplicable)

	// Env.Step checks the actions it is given directly, too.
	e, err := webtest.NewEnv(webtest.Config{})
	require.NoError(t, err)
	s := e.InitialState(nil)
	for _, a := range []webtest.Action{
		{Kind: webtest.Click, Target: 0},
		{Kind: webtest.Pick, Target: -1},
		{Kind: webtest.Type, Target: 0, Value: 42},
		{Kind: 99},
	} {
		_, err := e.Step(s, a)
		assert.Error(t, err, "%+v", a)
	}
	s, err = e.Step(s, webtest.Action{Kind: webtest.Pick, Target: e.Site().TargetIndex("home", "careers")})
	require.NoError(t, err)
	_, err = e.Step(s, webtest.Action{Kind: webtest.Click, Target: e.Site().TargetIndex("home", "about")})
	assert.ErrorIs(t, err, webtest.ErrNotApplicable, "not the current target")
	s, err = e.Step(s, webtest.Action{Kind: webtest.Click, Target: e.Site().TargetIndex("home", "careers")})
	require.NoError(t, err)
	_, err = e.Step(s, webtest.Action{Kind: webtest.Click, Target: e.Site().TargetIndex("home", "careers")})
	assert.ErrorIs(t, err, webtest.ErrNotApplicable, "the interaction is over")
}

// EncodeView writes what Observe, EncodeObservation and ActionMask write, for both
// agents, in every state of random and heuristic episodes.
func TestEncodeViewMatches(t *testing.T) {
	for _, cfg := range []webtest.Config{{}, {Generate: &webtest.GenerateConfig{Pages: 20, Seed: 5}}} {
		rt, e := newRuntime(t, cfg)
		c := e.Config()
		strategy, motion := webtest.NewStrategy(e.Site(), c.Strategy), webtest.NewMotion(c.Motion)
		for seed := range uint64(4) {
			pols := policies(t, seed, seed%2 == 0)
			res := mustReset(t, rt, seed)
			for steps := 0; !res.Over && steps < 400; steps++ {
				rep := res.Acting()
				obs := make([]float32, len(rep.Obs))
				mask := make([]bool, len(rep.Mask))
				if rep.Agent == webtest.StrategyName {
					v := strategy.TranslateState(rt.State(), rep.Clock)
					strategy.EncodeObservation(obs, strategy.Observe(v))
					strategy.ActionMask(v, mask)
				} else {
					v := motion.TranslateState(rt.State(), rep.Clock)
					motion.EncodeObservation(obs, motion.Observe(v))
					motion.ActionMask(v, mask)
				}
				require.Equal(t, obs, rep.Obs, "%s at tick %d", rep.AgentID, res.Tick)
				require.Equal(t, mask, rep.Mask, "%s at tick %d", rep.AgentID, res.Tick)
				space := e.Agents()[0].ObservationSpace()
				if rep.Agent == webtest.MotionName {
					space = e.Agents()[1].ObservationSpace()
				}
				require.NoError(t, space.Check(obs), "%s at tick %d", rep.AgentID, res.Tick)
				raw, err := pols[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
				require.NoError(t, err)
				res, err = rt.Step(rep.AgentID, raw)
				require.NoError(t, err)
			}
		}
	}
}

// policies returns the heuristic strategy and scripted motion, or the random ones.
func policies(t testing.TB, seed uint64, heuristic bool) map[string]agent.Policy {
	t.Helper()
	if heuristic {
		h, err := webtest.NewHeuristic(rand.New(rand.NewPCG(seed, 0)))
		require.NoError(t, err)
		return map[string]agent.Policy{webtest.StrategyName: h, webtest.MotionName: webtest.Scripted{}}
	}
	m, err := webtest.NewMonkey(rand.New(rand.NewPCG(seed, 0)))
	require.NoError(t, err)
	r, err := agent.Random(webtest.NewMotion(webtest.MotionConfig{}).ActionSpace(), rand.New(rand.NewPCG(seed, 1)))
	require.NoError(t, err)
	return map[string]agent.Policy{webtest.StrategyName: m, webtest.MotionName: r}
}

// step is one report, copied out of the runtime's buffers.
type step struct {
	ID, Parent  string
	Obs         []float32
	Mask        []bool
	Reward      float64
	Term, Trunc bool
	Start       bool
	Span        int
}

// play plays one episode and returns every report and the final state.
func play(t testing.TB, rt *runtime, seed uint64, pols map[string]agent.Policy) ([]step, webtest.State) {
	t.Helper()
	var out []step
	record := func(res env.Turn) {
		for _, r := range res.Reports {
			out = append(out, step{r.AgentID, r.ParentID, slices.Clone(r.Obs), slices.Clone(r.Mask), r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks})
		}
	}
	res := mustReset(t, rt, seed)
	record(res)
	for !res.Over {
		rep := res.Acting()
		raw, err := pols[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		res, err = rt.Step(rep.AgentID, raw)
		require.NoError(t, err)
		record(res)
	}
	return out, rt.State()
}

// The same seed gives the same episode; another seed (another draw of ties) another.
func TestDeterminism(t *testing.T) {
	for _, heuristic := range []bool{true, false} {
		rt1, _ := newRuntime(t, webtest.Config{})
		rt2, _ := newRuntime(t, webtest.Config{})
		a, sa := play(t, rt1, 7, policies(t, 7, heuristic))
		b, sb := play(t, rt2, 7, policies(t, 7, heuristic))
		require.Equal(t, a, b)
		assert.Equal(t, sa.FoundIDs(), sb.FoundIDs())
		assert.Equal(t, sa.Covered(), sb.Covered())
		c, _ := play(t, rt1, 8, policies(t, 8, heuristic))
		assert.NotEqual(t, a, c)
		// Replaying the first episode on a runtime that played another gives it again.
		d, _ := play(t, rt1, 7, policies(t, 7, heuristic))
		assert.Equal(t, a, d)
	}
}

// A state is a value: a step the runtime discards leaves no trace, and earlier
// states keep seeing what was covered when they were made.
func TestStateValueSemantics(t *testing.T) {
	e, err := webtest.NewEnv(webtest.Config{})
	require.NoError(t, err)
	s0 := e.InitialState(nil)
	pick := func(s webtest.State, id string) webtest.State {
		s, err := e.Step(s, webtest.Action{Kind: webtest.Pick, Target: e.Site().TargetIndex(s.Page(), id)})
		require.NoError(t, err)
		s, err = e.Step(s, webtest.Action{Kind: webtest.Click, Target: e.Site().TargetIndex(s.Page(), id)})
		require.NoError(t, err)
		return s
	}
	discarded := pick(s0, "about") // as if the runtime had rejected the step
	assert.True(t, discarded.Visited("about"))
	s1 := pick(s0, "contact")
	assert.Equal(t, 1, s0.Covered(), "the start page")
	assert.False(t, s0.Visited("contact"))
	assert.Equal(t, 3, s1.Covered(), "the start page, the link, the contact page")
	assert.True(t, s1.Visited("contact"))
	assert.False(t, s1.Visited("about"), "the discarded step left no trace")
	s2 := pick(s1, "nav-home")
	s3 := pick(s2, "about")
	assert.True(t, s3.Visited("about"))
	assert.Equal(t, 6, s3.Covered(), "and the home link of the contact page, the about link and page")
	assert.False(t, s1.Visited("about"), "s1 does not see what came after it")
	assert.Equal(t, 3, s1.Covered())
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		cfg  webtest.Config
	}{
		{"shop", webtest.Config{Strategy: webtest.StrategyConfig{Budget: 150}}},
		{"short motion", webtest.Config{Strategy: webtest.StrategyConfig{Budget: 80}, Motion: webtest.MotionConfig{MaxSteps: 2}}},
		{"generated", webtest.Config{Generate: &webtest.GenerateConfig{Pages: 15, Seed: 3}, Strategy: webtest.StrategyConfig{Budget: 150}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hrltest.Check(t, func() hrl.HierarchicalEnv[webtest.State, webtest.Action] {
				e, err := webtest.NewEnv(tt.cfg)
				require.NoError(t, err)
				return e
			}, hrltest.Options{Episodes: 10, Seed: 1})
		})
	}
}

// Once the runtime has seen an episode, stepping allocates nothing: the state is a
// small value, coverage and history live in the episode's record.
func TestStepDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt, _ := newRuntime(t, webtest.Config{})
	pols := policies(t, 1, true)
	var raws []agent.RawAction
	res := mustReset(t, rt, 1)
	for !res.Over {
		rep := res.Acting()
		raw, err := pols[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		raws = append(raws, raw)
		res, err = rt.Step(rep.AgentID, raw)
		require.NoError(t, err)
	}
	require.Greater(t, len(raws), 300)
	var failed error
	allocs := testing.AllocsPerRun(5, func() {
		res := mustReset(t, rt, 1)
		_ = res
		for _, raw := range raws {
			if _, err := rt.Step(rt.Acting(), raw); err != nil {
				failed = err
			}
		}
	})
	require.NoError(t, failed)
	t.Logf("%v allocations per episode of %d steps", allocs, len(raws))
	// The reset allocates the episode's record (the tape and its three slices).
	assert.Equal(t, 4.0, allocs, "allocations per episode of %d steps", len(raws))
}

func TestInfo(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	mustReset(t, rt, 0)
	act(t, rt, slot(t, rt, "careers"))
	info, ok := rt.Info().(webtest.Info)
	require.True(t, ok)
	assert.Equal(t, webtest.Info{URL: "/", Target: "careers", Defects: []string{}, Coverage: 0.0062, Budget: webtest.DefaultBudget}, info)
	act(t, rt, webtest.MotionClick)
	info = rt.Info().(webtest.Info)
	assert.Equal(t, "/404", info.URL)
	assert.Equal(t, "not found", info.Outcome)
	assert.Equal(t, []string{"careers-404"}, info.Defects)
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
