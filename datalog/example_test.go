package datalog_test

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/replay"
	"github.com/batonrl/baton/runners"
)

// Log a maze campaign on two workers, read the motion agent's transitions back, and
// replay the log.
func Example() {
	dir, err := os.MkdirTemp("", "baton-log-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}

	ds, err := datalog.NewDataset(dir, datalog.WithCompression(datalog.LZ4))
	if err != nil {
		panic(err)
	}
	spec := runners.Spec{Env: "maze", Seed: 1, Episodes: 2}
	c, err := runners.NewCampaign(reg, spec, runners.WithTrials(4), runners.WithWorkers(2),
		runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		panic(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	if err := ds.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("%d env steps logged\n", s.EnvSteps)

	l, err := datalog.Open(dir)
	if err != nil {
		panic(err)
	}
	for _, name := range l.Agents() {
		info, err := l.Agent(name)
		if err != nil {
			panic(err)
		}
		rows, transitions := 0, 0
		for r, err := range l.Rows(name) {
			if err != nil {
				panic(err)
			}
			rows++
			if !r.Start { // the end of a transition begun on the previous row of r.AgentID
				transitions++
			}
		}
		fmt.Printf("%s: %d rows, %d transitions, observations %v, actions %v\n", name, rows, transitions, info.ObservationSpace.FlatDim(), info.ActionSpace)
	}

	rep, err := replay.Run(context.Background(), dir, reg)
	if err != nil {
		panic(err)
	}
	fmt.Printf("replayed %d trials, %d steps: %d mismatches\n", rep.Trials, rep.Steps, len(rep.Mismatches))
	// Output:
	// 442 env steps logged
	// motion: 442 rows, 297 transitions, observations 104, actions Discrete(2)
	// strategy: 153 rows, 145 transitions, observations 106, actions Discrete(4)
	// replayed 4 trials, 595 steps: 0 mismatches
}

// Log a campaign whose workers fill the machine's cores, each worker's writer
// encoding and writing its own batches rather than handing them to a goroutine of
// its own: the same files, for less CPU time where no core is spare.
func ExampleWithInlineWrites() {
	dir, err := os.MkdirTemp("", "baton-log-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	workers := runtime.GOMAXPROCS(0)
	ds, err := datalog.NewDataset(dir, datalog.WithInlineWrites(true))
	if err != nil {
		panic(err)
	}
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1}, runners.WithTrials(8),
		runners.WithWorkers(workers), runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		panic(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	if err := ds.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("%d trials, %d rows logged\n", s.Ended, ds.Stats().Rows)
	// Output:
	// 8 trials, 611 rows logged
}
