package runners_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// A campaign of maze trials with the default policies (the oracle strategy and a
// random motion agent), then the same with the motion agent swapped for one that only
// moves forward: a change of the spec, nothing else.
func ExampleCampaign() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	for _, motion := range []string{"random", "forward"} {
		spec := runners.Spec{
			Env:      "maze",
			Seed:     1,
			Episodes: 2,
			Actors:   map[string]runners.Actor{maze.MotionName: runners.Named(motion)},
		}
		c, err := runners.NewCampaign(reg, spec, runners.WithTrials(8), runners.WithWorkers(2))
		if err != nil {
			panic(err)
		}
		s, err := c.Run(context.Background())
		if err != nil {
			panic(err)
		}
		fmt.Printf("motion=%s: %d trials, %d episodes, %d env steps, success rate %.2f\n",
			motion, s.Trials, s.Episodes, s.EnvSteps, *s.SuccessRate)
		for _, a := range s.Agents {
			fmt.Printf("  %-8s return mean %6.3f std %6.3f min %6.3f max %6.3f\n", a.Name, a.Mean, a.Std, a.Min, a.Max)
		}
	}
	// Output:
	// motion=random: 8 trials, 16 episodes, 883 env steps, success rate 0.56
	//   strategy return mean  0.562 std  0.496 min  0.000 max  1.000
	//   motion   return mean 20.581 std  3.276 min 16.200 max 27.200
	// motion=forward: 8 trials, 16 episodes, 320 env steps, success rate 1.00
	//   strategy return mean  1.000 std  0.000 min  1.000 max  1.000
	//   motion   return mean 13.000 std  0.000 min 13.000 max 13.000
}

// Start a trial in the background, watch its states as they change, and read its
// result.
func ExampleController() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	ctrl, err := runners.NewController(reg, runners.WithWorkers(1))
	if err != nil {
		panic(err)
	}
	defer ctrl.Shutdown(context.Background())

	ctx := context.Background()
	id, err := ctrl.Start(ctx, runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}})
	if err != nil {
		panic(err)
	}
	changes, err := ctrl.Watch(ctx, id)
	if err != nil {
		panic(err)
	}
	for sc := range changes {
		fmt.Println(id, sc.State)
	}
	res, err := ctrl.Wait(ctx, id)
	if err != nil {
		panic(err)
	}
	ep := res.Episodes[0]
	fmt.Printf("%d ticks, success %v, returns %v\n", ep.Ticks, ep.Success, ep.Returns)
	// Output:
	// trial-1 pending
	// trial-1 running
	// trial-1 ended
	// 20 ticks, success true, returns [1 13]
}

// A registry entry's Look says what an agent's action means and describes the state
// for people; the zero Look shows the raw action and the Info's JSON.
func ExampleLook() {
	look := registry.Look{
		Action: func(_ env.Turn, _ *env.Report, raw agent.RawAction) string {
			return [...]string{"LEFT", "RIGHT"}[raw.Int]
		},
		Info: func(info any) string { return fmt.Sprintf("x=%.1f", info) },
	}
	turn := env.Turn{Reports: []env.Report{{AgentID: "cart_0", Agent: "cart"}}, Next: "cart_0"}
	fmt.Println(look.ActionName(turn, turn.Acting(), agent.Discrete(1)), look.Describe(0.5))

	var plain registry.Look
	fmt.Println(plain.ActionName(turn, turn.Acting(), agent.Discrete(1)), plain.Describe(map[string]float64{"x": 0.25}))
	// Output:
	// RIGHT x=0.5
	// 1 {"x":0.25}
}
