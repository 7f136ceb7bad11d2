package webtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestRegister(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, webtest.Register(reg))
	require.ErrorIs(t, webtest.Register(reg), registry.ErrDuplicate)
	e, err := reg.Lookup("webtest")
	require.NoError(t, err)
	assert.Equal(t, []string{webtest.StrategyName, webtest.MotionName}, e.AgentNames())
	for _, tt := range []struct{ agent, def string }{{webtest.StrategyName, "heuristic"}, {webtest.MotionName, "scripted"}} {
		a, err := e.Agent(tt.agent)
		require.NoError(t, err)
		assert.Equal(t, tt.def, a.Default)
		assert.Equal(t, []string{tt.def, "random"}, []string{a.Policies[0].Name, a.Policies[1].Name})
	}

	tests := []struct {
		name             string
		config           string
		strategy, motion string
		check            func(t *testing.T, s runners.Summary)
	}{
		{"defaults", "", "heuristic", "scripted", func(t *testing.T, s runners.Summary) {
			assert.Equal(t, 1.0, *s.SuccessRate)
			assert.Equal(t, runners.MetricSummary{Name: "defects_found", Episodes: 8, Mean: 5, Min: 5, Max: 5}, s.Metrics[1])
			assert.Greater(t, s.Metrics[0].Mean, 0.9)
		}},
		{"random", "", "random", "random", func(t *testing.T, s runners.Summary) {
			assert.Less(t, *s.SuccessRate, 1.0)
			assert.Less(t, s.Metrics[0].Mean, 0.9)
		}},
		{"small budget", `{"strategy": {"budget": 50}}`, "heuristic", "scripted", func(t *testing.T, s runners.Summary) {
			assert.Equal(t, 0.0, *s.SuccessRate)
			assert.Equal(t, 8, s.Metrics[1].Episodes)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{Env: "webtest", Config: []byte(tt.config), Seed: 3, Episodes: 2,
				Actors: map[string]runners.Actor{webtest.StrategyName: runners.Named(tt.strategy), webtest.MotionName: runners.Named(tt.motion)}}
			run := func(workers int) runners.Summary {
				c, err := runners.NewCampaign(reg, spec, runners.WithTrials(4), runners.WithWorkers(workers))
				require.NoError(t, err)
				s, err := c.Run(context.Background())
				require.NoError(t, err)
				require.Equal(t, 4, s.Ended, "%v", s.Failures)
				return s
			}
			s := run(2)
			assert.Equal(t, 8, s.Episodes)
			require.NotNil(t, s.SuccessRate)
			require.Len(t, s.Metrics, 2)
			assert.Equal(t, "coverage", s.Metrics[0].Name)
			assert.Equal(t, "defects_found", s.Metrics[1].Name)
			tt.check(t, s)
			// The same seed gives the same summary, whatever the workers.
			one := run(1)
			s.Wall, s.WallSeconds, s.StepsPerSecond = 0, 0, 0
			one.Wall, one.WallSeconds, one.StepsPerSecond = 0, 0, 0
			assert.Equal(t, s, one)
		})
	}

	_, err = runners.NewCampaign(reg, runners.Spec{Env: "webtest", Config: []byte(`{"strategy": {"budgets": 3}}`)})
	require.ErrorIs(t, err, runners.ErrEnvConfig)
	require.ErrorIs(t, err, webtest.ErrConfig)
}

// FinalState and FoundAll read the strategy agent's report of the Turn that ended an
// episode.
func TestFoundAllFromTurn(t *testing.T) {
	rt, _ := newRuntime(t, webtest.Config{})
	res := mustReset(t, rt, 2)
	assert.False(t, webtest.FoundAll(res))
	pols := policies(t, 2, true)
	for !res.Over {
		rep := res.Acting()
		raw, err := pols[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		res, err = rt.Step(rep.AgentID, raw)
		require.NoError(t, err)
		if rep.Agent == webtest.MotionName && !res.Over {
			_, ok := webtest.FinalState(res)
			assert.Equal(t, res.Report("strategy_0") != nil, ok)
		}
	}
	assert.True(t, webtest.FoundAll(res))
	s, ok := webtest.FinalState(res)
	require.True(t, ok)
	assert.Equal(t, 5, s.DefectsFound())
	assert.True(t, s.Finished())
	_, ok = webtest.FinalState(env.Turn{})
	assert.False(t, ok, "a Turn that does not report the strategy agent")
	assert.False(t, webtest.FoundAll(env.Turn{}))
}

// The registry entry's Look names the strategy's slots by the element in them, as the
// strategy saw the page, and the motion agent's operations.
func TestLook(t *testing.T) {
	reg := registry.New()
	require.NoError(t, webtest.Register(reg))
	e, err := reg.Lookup("webtest")
	require.NoError(t, err)
	rt, _ := newRuntime(t, webtest.Config{})
	res := mustReset(t, rt, 1)
	acting := res.Acting()
	require.NotNil(t, acting)
	require.Equal(t, webtest.StrategyName, acting.Agent)
	require.Equal(t, []string{"nav-catalogue", "nav-cart", "nav-account", "nav-login", "featured", "about", "contact", "careers", "search"},
		rt.State().Targets())

	tests := []struct {
		name string
		raw  int64
		want string
	}{
		{"link", 0, `link "Catalogue"`},
		{"link behind the login", 2, `link "My account" (login)`},
		{"form", 8, `form "Search the shop"`},
		{"empty slot", 9, "slot 9 (empty)"},
		{"back", webtest.StrategyBack, "back"},
		{"finish", webtest.StrategyFinish, "finish"},
		{"outside the space", webtest.StrategyActions, fmt.Sprint(webtest.StrategyActions)},
		{"negative", -1, "-1"},
	}
	for _, tt := range tests {
		t.Run("strategy/"+tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, e.Look.ActionName(res, acting, agent.Discrete(tt.raw)))
		})
	}

	motion := []struct {
		raw  int64
		want string
	}{
		{webtest.MotionFocus, "focus"},
		{webtest.MotionType(webtest.Valid), "type valid"},
		{webtest.MotionType(webtest.Unicode), "type unicode"},
		{webtest.MotionType(webtest.Script), "type script"},
		{webtest.MotionToggle, "toggle"},
		{webtest.MotionChoose, "choose"},
		{webtest.MotionSubmit, "submit"},
		{webtest.MotionClick, "click"},
		{webtest.MotionActions, ""},
	}
	for _, tt := range motion {
		t.Run(fmt.Sprintf("motion/%d", tt.raw), func(t *testing.T) {
			assert.Equal(t, tt.want, webtest.ActionName(webtest.State{}, webtest.MotionName, tt.raw))
		})
	}

	// A Turn the runtime did not make has no typed observation: the raw slot shows.
	plain := env.Turn{Reports: []env.Report{{AgentID: "strategy_0", Agent: webtest.StrategyName}}, Next: "strategy_0"}
	assert.Equal(t, "4", e.Look.ActionName(plain, plain.Acting(), agent.Discrete(4)))
	assert.Empty(t, webtest.ActionName(rt.State(), "walker", 0), "an agent of another name")
	assert.Empty(t, webtest.ActionName(webtest.State{}, webtest.StrategyName, 0), "a state of no site")

	// After the login, the same slot is the account link itself; back is named too.
	res, err = rt.Step("strategy_0", agent.Discrete(2))
	require.NoError(t, err)
	require.True(t, rt.State().LoggedIn())
	acting = res.Acting()
	require.Equal(t, "strategy_0", acting.AgentID)
	assert.Equal(t, "back", e.Look.ActionName(res, acting, agent.Discrete(webtest.StrategyBack)))
	assert.Equal(t, rt.State().Targets()[0], "nav-home")
	assert.Equal(t, `link "Home"`, e.Look.ActionName(res, acting, agent.Discrete(0)))
}
