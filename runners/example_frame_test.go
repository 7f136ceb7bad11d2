package runners_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/runners"
)

// Watch a trial drawn step by step: each call of Frame keeps the trial drawing its
// environment after each step for a while (runners.FrameWindow), at the pace asked
// for; here the strategy waits for the watcher before its first decision, so that
// every step is drawn.
func ExampleController_Frame() {
	reg := runners.NewRegistry()
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
	watched := make(chan struct{})
	first := true
	strategy := agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
		if first {
			first = false
			<-watched
		}
		return oracle.Act(ctx, obs, mask)
	})
	id, err := ctrl.Start(context.Background(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Named("forward"),
	}})
	if err != nil {
		panic(err)
	}
	if _, err := ctrl.Frame(id, 0); err != nil { // 0: no wait after each step
		panic(err)
	}
	close(watched)
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
