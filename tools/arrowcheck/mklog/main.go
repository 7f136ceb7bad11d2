// Command mklog writes a baton log with small record batches and parts, so that the
// cross-language check (../check.mjs) also sees what a short "baton run --log" does
// not produce: many batches per part, dictionaries that grow by deltas between
// batches, and parts that roll over by size.
//
//	go run ./tools/arrowcheck/mklog -dir DIR [-env maze] [-trials 20] [-episodes 2]
//		[-workers 2] [-seed 1] [-compression none|lz4|zstd] [-batch-rows 64] [-part-bytes 65536]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

func main() {
	dir := flag.String("dir", "", "write the log into `DIR` (required)")
	envName := flag.String("env", "maze", "environment: maze, cartpole or webtest")
	trials := flag.Int("trials", 20, "number of trials")
	episodes := flag.Int("episodes", 2, "episodes per trial")
	workers := flag.Int("workers", 2, "workers, each with its own writer")
	seed := flag.Uint64("seed", 1, "seed of the campaign")
	compression := flag.String("compression", "none", "body compression: none, lz4 or zstd")
	batchRows := flag.Int("batch-rows", 64, "rows per record batch")
	partBytes := flag.Int64("part-bytes", 64<<10, "roll parts over at about this many bytes")
	flag.Parse()
	if err := run(*dir, *envName, *trials, *episodes, *workers, *seed, *compression, *batchRows, *partBytes); err != nil {
		fmt.Fprintln(os.Stderr, "mklog:", err)
		os.Exit(1)
	}
}

func run(dir, envName string, trials, episodes, workers int, seed uint64, compression string, batchRows int, partBytes int64) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	comp, err := datalog.ParseCompression(compression)
	if err != nil {
		return err
	}
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		return err
	}
	if err := cartpole.Register(reg); err != nil {
		return err
	}
	if err := webtest.Register(reg); err != nil {
		return err
	}
	ds, err := datalog.NewDataset(dir, datalog.WithCompression(comp),
		datalog.WithBatchRows(batchRows), datalog.WithMaxPartBytes(partBytes))
	if err != nil {
		return err
	}
	c, err := runners.NewCampaign(reg, runners.Spec{Env: envName, Seed: seed, Episodes: episodes},
		runners.WithTrials(trials), runners.WithWorkers(workers), runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		return err
	}
	s, err := c.Run(context.Background())
	if cerr := ds.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mklog: %s: %d trials, %d episodes, %d env steps logged in %s (%s)\n",
		envName, s.Trials, s.Episodes, s.EnvSteps, dir, comp)
	return nil
}
