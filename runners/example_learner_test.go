package runners_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// tally is a motion policy that moves forward and learns nothing but its returns.
type tally struct {
	agent.Policy
	ret   float64
	ended int
}

// Learn adds each step's reward to the episode's return and prints it at the end.
func (p *tally) Learn(_ context.Context, o *runners.Outcome) error {
	switch o.Kind {
	case runners.OutcomeStep:
		p.ret += o.Reward
		if o.Last {
			p.ended++
		}
	case runners.OutcomeEpisodeEnd:
		fmt.Printf("episode %d: %d ticks, %d motion sub-episodes, return %.1f\n", o.Episode, o.Tick, p.ended, p.ret)
		p.ret, p.ended = 0, 0
	}
	return nil
}

// A policy that implements runners.Learner is told what came of its agent's steps and
// when episodes end.
func ExampleLearner() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	motion := &tally{Policy: maze.AlwaysForward()}
	spec := runners.Spec{Env: "maze", Seed: 1, Episodes: 2,
		Actors: map[string]runners.Actor{maze.MotionName: runners.Value(motion)}}
	c, err := runners.NewCampaign(reg, spec, runners.WithWorkers(1))
	if err != nil {
		panic(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// episode 0: 20 ticks, 7 motion sub-episodes, return 13.0
	// episode 1: 20 ticks, 7 motion sub-episodes, return 13.0
}
