package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
)

// Case is one benchmark of the suite: a framework path, or the hand-written baseline
// another case is compared with. The Benchmark functions of this package's tests and
// `baton bench` run the same cases.
type Case struct {
	// Name is the benchmark's name under Benchmark, e.g. "MazeStep/ref".
	Name string
	// Baseline names the case this one is compared with; "" for a baseline.
	Baseline string
	// Unit is what one benchmark iteration is: "step" or "trial".
	Unit string
	// Run is the benchmark body. It reports allocations and a "<unit>s/s" metric.
	Run func(b *testing.B)
}

// Suite returns the cases in the order `baton bench` prints them.
func Suite() []Case {
	var cs []Case
	for _, m := range mazes() {
		cs = append(cs,
			Case{Name: "MazeStep/" + m.name, Baseline: "MazeBaseline/" + m.name, Unit: "step", Run: mazeStep(m.cfg)},
			Case{Name: "MazeBaseline/" + m.name, Unit: "step", Run: mazeBaseline(m.cfg)},
		)
	}
	cs = append(cs,
		Case{Name: "CampaignMaze/runner", Baseline: "CampaignMaze/hrl", Unit: "trial", Run: campaignMaze},
		Case{Name: "CampaignMaze/hrl", Baseline: "CampaignMaze/baseline", Unit: "trial", Run: campaignMazeHRL},
		Case{Name: "CampaignMaze/baseline", Unit: "trial", Run: campaignMazeBaseline},
	)
	cs = append(cs, logCases()...)
	cs = append(cs, webtestCases()...)
	cs = append(cs, remoteCases()...)
	return append(cs, vectorCases()...)
}

// Lookup returns the case of the given name.
func Lookup(name string) (Case, bool) {
	for _, c := range Suite() {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

type mazeCase struct {
	name string
	cfg  maze.Config
}

// mazes are the maps the maze benchmarks run on: the reference map, and a generated
// 101 x 101 map (the largest maze.Generate draws).
func mazes() []mazeCase {
	return []mazeCase{
		{"ref", maze.Config{}},
		{"gen101", maze.Config{Generate: &maze.GenerateConfig{Rows: 101, Cols: 101, Seed: 1}}},
	}
}

// policyRNG returns the generator the random policies of one side share; both sides get
// one seeded alike.
func policyRNG() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// mazeStep steps the hrl runtime over the maze, one agent.Random per agent drawing from
// one generator, resetting when an episode ends. One iteration is one step.
func mazeStep(cfg maze.Config) func(b *testing.B) {
	return func(b *testing.B) {
		e, err := maze.NewEnv(cfg)
		if err != nil {
			b.Fatal(err)
		}
		rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
		if err != nil {
			b.Fatal(err)
		}
		rng := policyRNG()
		var strategy, motion agent.Policy
		for _, spec := range rt.Agents() {
			p, err := agent.Random(spec.ActionSpace, rng)
			if err != nil {
				b.Fatal(err)
			}
			if spec.Name == maze.StrategyName {
				strategy = p
			} else {
				motion = p
			}
		}
		runtimeLoop(b, rt, maze.StrategyName, strategy, motion)
	}
}

// runtimeLoop is the body of the runtime's step benchmarks: it steps rt with strategy
// (for the agent named strategyName) and motion (for the others), resetting with the
// next seed when an episode ends. One iteration is one step.
func runtimeLoop[S, A any](b *testing.B, rt *hrl.Runtime[S, A], strategyName string, strategy, motion agent.Policy) {
	ctx := context.Background()
	seed := uint64(0)
	res, err := rt.Reset(seed)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep := res.Acting()
		p := strategy
		if rep.Agent != strategyName {
			p = motion
		}
		raw, err := p.Act(ctx, rep.Obs, rep.Mask)
		if err != nil {
			b.Fatal(err)
		}
		if res, err = rt.Step(rep.AgentID, raw); err != nil {
			b.Fatal(err)
		}
		if res.Over {
			seed++
			if res, err = rt.Reset(seed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// mazeBaseline steps MazeLoop with the same driver as mazeStep: one agent.Random per
// agent, both drawing from one generator seeded alike, called through agent.Policy and
// chosen by the acting agent's name, so that the two benchmarks differ in the
// environment alone (the loop takes the raw action's Int).
func mazeBaseline(cfg maze.Config) func(b *testing.B) {
	return func(b *testing.B) {
		e, err := maze.NewEnv(cfg) // only for the map, built as the runtime's is
		if err != nil {
			b.Fatal(err)
		}
		loop, err := NewMazeLoop(e.Maze(), cfg.Strategy, cfg.Motion)
		if err != nil {
			b.Fatal(err)
		}
		rng := policyRNG()
		strategy, err := agent.Random(spaces.Discrete{N: 4}, rng)
		if err != nil {
			b.Fatal(err)
		}
		motion, err := agent.Random(spaces.Discrete{N: 2}, rng)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		res := loop.Reset()
		b.ReportAllocs()
		for b.Loop() {
			rep := res.Acting()
			p := strategy
			if rep.Agent != maze.StrategyName {
				p = motion
			}
			raw, err := p.Act(ctx, rep.Obs, rep.Mask)
			if err != nil {
				b.Fatal(err)
			}
			if res, err = loop.Step(raw.Int); err != nil {
				b.Fatal(err)
			}
			if res.Over {
				res = loop.Reset()
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	}
}

// CampaignWorkers is the number of workers of the campaign benchmarks.
const CampaignWorkers = 2

// campaignMaze runs b.N one-episode trials of the reference maze through a runners
// campaign on CampaignWorkers workers, with the registered defaults (oracle strategy,
// random motion) and no sink. One iteration is one trial.
func campaignMaze(b *testing.B) {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		b.Fatal(err)
	}
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(max(b.N, 1)), runners.WithWorkers(CampaignWorkers))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	sum, err := c.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if sum.Failed > 0 {
		b.Fatalf("%d trials failed: %v", sum.Failed, sum.Failures)
	}
	reportTrials(b, sum.EnvSteps)
}

// trialPlan is what the hand-written campaigns share with the runner: trial i of seed
// s plays one episode with seed env.DeriveSeed(s, i), the strategy plays the
// oracle and the motion agent (agent 1) draws uniformly among its valid moves from
// rand.NewPCG(trial seed, 1).
func trialSeed(i int) uint64 { return env.DeriveSeed(1, i) }

// spread runs trials 0..n-1 on CampaignWorkers goroutines, each trial by play, and
// returns the environment steps played.
func spread(n int, newWorker func() (func(i int) (int64, error), error)) (int64, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		steps int64
		first error
	)
	for w := range CampaignWorkers {
		play, err := newWorker()
		if err != nil {
			return 0, err
		}
		wg.Go(func() {
			var local int64
			for i := w; i < n; i += CampaignWorkers {
				k, err := play(i)
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				local += k
			}
			mu.Lock()
			steps += local
			mu.Unlock()
		})
	}
	wg.Wait()
	return steps, first
}

// campaignMazeHRL runs the same trials as campaignMaze by hand over the hrl runtime, on
// the same number of goroutines: the runner's overhead is the ratio of the two.
func campaignMazeHRL(b *testing.B) {
	e, err := maze.NewEnv(maze.Config{})
	if err != nil {
		b.Fatal(err)
	}
	oracle := maze.NewOracle(e.Maze())
	b.ReportAllocs()
	b.ResetTimer()
	steps, err := spread(max(b.N, 1), func() (func(int) (int64, error), error) {
		rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
		if err != nil {
			return nil, err
		}
		pcg := rand.NewPCG(0, 0)
		motion, err := agent.Random(spaces.Discrete{N: 2}, rand.New(pcg))
		if err != nil {
			return nil, err
		}
		ctx := context.Background()
		return func(i int) (int64, error) {
			seed := trialSeed(i)
			pcg.Seed(seed, 1)
			res, err := rt.Reset(env.DeriveSeed(seed, 0))
			if err != nil {
				return 0, err
			}
			var steps int64
			for !res.Over {
				rep := res.Acting()
				var p agent.Policy = oracle
				if rep.Agent != maze.StrategyName {
					p = motion
				}
				raw, err := p.Act(ctx, rep.Obs, rep.Mask)
				if err != nil {
					return steps, err
				}
				if res, err = rt.Step(rep.AgentID, raw); err != nil {
					return steps, err
				}
				steps++
			}
			return steps, nil
		}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	reportTrials(b, steps)
}

// campaignMazeBaseline runs the same trials with MazeLoop, the maze written by hand,
// and the same policies.
func campaignMazeBaseline(b *testing.B) {
	e, err := maze.NewEnv(maze.Config{})
	if err != nil {
		b.Fatal(err)
	}
	oracle := maze.NewOracle(e.Maze())
	b.ReportAllocs()
	b.ResetTimer()
	steps, err := spread(max(b.N, 1), func() (func(int) (int64, error), error) {
		loop, err := NewMazeLoop(e.Maze(), maze.StrategyConfig{}, maze.MotionConfig{})
		if err != nil {
			return nil, err
		}
		pcg := rand.NewPCG(0, 0)
		rng := rand.New(pcg)
		ctx := context.Background()
		return func(i int) (int64, error) {
			pcg.Seed(trialSeed(i), 1)
			res := loop.Reset()
			var steps int64
			for !res.Over {
				rep := res.Acting()
				var a int64
				if rep.Agent == maze.StrategyName {
					raw, err := oracle.Act(ctx, rep.Obs, rep.Mask)
					if err != nil {
						return steps, err
					}
					a = raw.Int
				} else {
					a, err = spaces.Discrete{N: int64(len(rep.Mask))}.SampleMasked(rng, rep.Mask)
					if err != nil {
						return steps, err
					}
				}
				if res, err = loop.Step(a); err != nil {
					return steps, fmt.Errorf("trial %d: %w", i, err)
				}
				steps++
			}
			return steps, nil
		}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	reportTrials(b, steps)
}

func reportTrials(b *testing.B, steps int64) {
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(max(b.N, 1))/sec, "trials/s")
	b.ReportMetric(float64(steps)/sec, "steps/s")
}
