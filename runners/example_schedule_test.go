package runners_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// A curriculum of growing mazes, each episode on a new map, the observations padded
// to 9 x 9: the random strategy is promoted from 5 x 5 to 9 x 9 mazes after a window
// of 8 trials in which it reached the goal 6 times or more, and demoted after one in
// which it reached it fewer than 3 times. The tasks come out the same whatever the
// number of workers.
func ExampleWithSchedule() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	s, err := runners.ParseSchedule([]byte(`{
		"order": "success", "trials": 48,
		"promotion": {"window": 8, "threshold": 0.75, "demote_below": 0.375},
		"tasks": [
			{"name": "5x5", "env": "maze", "policies": {"strategy": "random", "motion": "forward"},
			 "config": {"generate": {"rows": 5, "cols": 5, "per_episode": true}, "obs_side": 9}},
			{"name": "9x9", "env": "maze", "policies": {"strategy": "random", "motion": "forward"},
			 "config": {"generate": {"rows": 9, "cols": 9, "per_episode": true}, "obs_side": 9}}
		]}`))
	if err != nil {
		panic(err)
	}
	c, err := runners.NewCampaign(reg, runners.Spec{Seed: 3}, runners.WithSchedule(s), runners.WithWorkers(4))
	if err != nil {
		panic(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	for _, r := range sum.Runs {
		fmt.Printf("trials %2d-%2d: %s\n", r.First, r.First+r.Trials-1, r.Task)
	}
	for _, t := range sum.Tasks {
		fmt.Printf("%s: %d trials, success rate %.2f\n", t.Name, t.Trials, t.SuccessRate)
	}
	// Output:
	// trials  0- 7: 5x5
	// trials  8-15: 9x9
	// trials 16-23: 5x5
	// trials 24-31: 9x9
	// trials 32-39: 5x5
	// trials 40-47: 9x9
	// 5x5: 24 trials, success rate 0.96
	// 9x9: 24 trials, success rate 0.17
}
