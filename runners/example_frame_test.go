package runners_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// Watch a trial drawn step by step: a trial started watched draws its environment
// from its reset on, and each call of Frame keeps it drawing after each step for a
// while (runners.FrameWindow), at the pace asked for; this one is drawn at every
// step, however soon it ends.
func ExampleController_Frame() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	ctrl, err := runners.NewController(reg, runners.WithWorkers(1))
	if err != nil {
		panic(err)
	}
	defer ctrl.Shutdown(context.Background())

	ref, err := maze.NewEnv(maze.Config{})
	if err != nil {
		panic(err)
	}
	oracle := maze.NewOracle(ref.Maze())
	id, err := ctrl.StartWatched(context.Background(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(oracle), maze.MotionName: runners.Named("forward"),
	}}, 0) // 0: no wait after each step
	if err != nil {
		panic(err)
	}
	if _, err := ctrl.Wait(context.Background(), id); err != nil {
		panic(err)
	}
	f, err := ctrl.Frame(id, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d frames, the last at tick %d, an SVG picture: %v\n", f.Seq, f.Tick, strings.HasPrefix(f.SVG, "<svg"))
	// Output:
	// 21 frames, the last at tick 20, an SVG picture: true
}
