package webtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// One test of the shop: the heuristic strategy picks what to test, the scripted motion
// agent performs it, and the login procedure steps in at the checkout.
func Example() {
	e, err := webtest.NewEnv(webtest.Config{})
	if err != nil {
		panic(err)
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[webtest.State, webtest.Action](e), hrl.Config{})
	if err != nil {
		panic(err)
	}
	heuristic, err := webtest.NewHeuristic(rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		panic(err)
	}
	policies := map[string]agent.Policy{webtest.StrategyName: heuristic, webtest.MotionName: webtest.Scripted{}}
	res, err := rt.Reset(1)
	if err != nil {
		panic(err)
	}
	for !res.Over {
		rep := res.Acting()
		raw, err := policies[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
		if err != nil {
			panic(err)
		}
		if res, err = rt.Step(rep.AgentID, raw); err != nil {
			panic(err)
		}
	}
	s := rt.State()
	fmt.Printf("%d ticks, %d UI operations, coverage %.3f, pages %d of %d\n", res.Tick, webtest.DefaultBudget-s.Budget(), s.Coverage(), s.PagesVisited(), s.Site().Pages())
	fmt.Println("found:", s.FoundIDs())
	// Output:
	// 714 ticks, 598 UI operations, coverage 0.994, pages 16 of 16
	// found: [search-unicode careers-404 wishlist-dead order-note-script coupon-removal]
}

// The strategy baselines over 200 trials of the shop: the heuristic with the scripted
// motion finds every planted defect; random policies (monkey testing) find some.
func Example_baselines() {
	reg := registry.New()
	if err := webtest.Register(reg); err != nil {
		panic(err)
	}
	for _, p := range [][2]string{{"heuristic", "scripted"}, {"random", "scripted"}, {"random", "random"}} {
		spec := runners.Spec{Env: "webtest", Seed: 1, Actors: map[string]runners.Actor{
			webtest.StrategyName: runners.Named(p[0]), webtest.MotionName: runners.Named(p[1])}}
		c, err := runners.NewCampaign(reg, spec, runners.WithTrials(200))
		if err != nil {
			panic(err)
		}
		s, err := c.Run(context.Background())
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-9s %-8s every defect found %5.1f%%, coverage %.3f, defects found %.2f of 5\n",
			p[0], p[1], 100**s.SuccessRate, s.Metrics[0].Mean, s.Metrics[1].Mean)
	}
	// Output:
	// heuristic scripted every defect found 100.0%, coverage 0.987, defects found 5.00 of 5
	// random    scripted every defect found   0.0%, coverage 0.466, defects found 3.74 of 5
	// random    random   every defect found   0.0%, coverage 0.409, defects found 3.11 of 5
}

// A site file lists pages with their links, buttons and forms, and the defects
// planted in them; Load checks it and reports every problem at once.
func ExampleLoad() {
	site, err := webtest.Load([]byte(`{
	  "name": "tiny", "start": "home",
	  "pages": [
	    {"id": "home", "url": "/", "elements": [
	      {"id": "about", "kind": "link", "label": "About", "to": "about"},
	      {"id": "jobs", "kind": "link", "label": "Jobs"}]},
	    {"id": "about", "url": "/about", "forms": [
	      {"id": "contact", "to": "home",
	       "fields": [{"id": "email", "kind": "text", "required": true, "pattern": "[^@]+@[^@]+", "valid": "a@b.c"}],
	       "submit": {"id": "send", "label": "Send"}}]}],
	  "defects": [{"id": "jobs-404", "kind": "broken_link", "page": "home", "element": "jobs"}]
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(site.Name(), site.Pages(), "pages,", site.Units(), "coverage units, defects:", site.Defects()[0].ID)

	_, err = webtest.Load([]byte(`{"start": "home", "pages": [
	  {"id": "home", "url": "/", "elements": [{"id": "a", "kind": "link", "to": "nowhere"}],
	   "forms": [{"id": "f", "fields": [{"id": "q", "kind": "text"}]}]},
	  {"id": "home", "url": "/home"}]}`))
	for _, e := range webtest.SiteErrors(err) {
		fmt.Println(e)
	}
	// Output:
	// tiny 2 pages, 11 coverage units, defects: jobs-404
	// webtest: invalid site: page "home": duplicate page id
	// webtest: invalid site: page "home": "a": target "nowhere" is not a page of the site
	// webtest: invalid site: page "home": "f": form has no submit button
}
