package replay_test

import (
	"context"
	"fmt"
	"os"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/replay"
	"github.com/batonrl/baton/runners"
)

// Log a maze campaign, then replay the log: every step comes out as it was logged.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "baton-replay-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	ds, err := datalog.NewDataset(dir)
	if err != nil {
		panic(err)
	}
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 3, Episodes: 2}, runners.WithTrials(3),
		runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		panic(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		panic(err)
	}
	if err := ds.Close(); err != nil {
		panic(err)
	}

	rep, err := replay.Run(context.Background(), dir, reg, datalog.WithMaxMismatches(10))
	if err != nil {
		panic(err)
	}
	fmt.Printf("replayed %d trials: %d mismatches, %d diverged\n", rep.Trials, len(rep.Mismatches), len(rep.Diverged))
	// Output:
	// replayed 3 trials: 0 mismatches, 0 diverged
}
