package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

// The vector cases step vectors of N copies (env/vector) synchronously ("sync") and on
// two workers ("workers=2"). One iteration is one tick: one batched policy call (per
// acting agent name, for the maze) and one Step of all N copies, auto-resets included;
// the steps/s metric counts N environment steps per tick. A synchronous vector is
// compared with the hand-written scalar loop (CartPoleBaseline) or with the runtime
// stepped alone (MazeStep/ref); a vector on workers with the synchronous one, so its
// ratio is the speed-up.

// vectorWorkers are the worker counts of the vector cases.
var vectorWorkers = []struct {
	name    string
	workers int
}{
	{"sync", 0},
	{"workers=2", 2},
}

func vectorCases() []Case {
	var cs []Case
	for _, n := range []int{1, 64, 1024, 4096, 16384} {
		ws := vectorWorkers
		if n > 1024 {
			ws = ws[:1] // large N on one worker: where the time goes is memory's
		}
		for _, w := range ws {
			c := Case{Name: fmt.Sprintf("VectorCartPole/N=%d/%s", n, w.name), Unit: "step", Run: vectorCartPole(n, w.workers)}
			c.Baseline = "CartPoleBaseline"
			if w.workers > 0 {
				c.Baseline = fmt.Sprintf("VectorCartPole/N=%d/sync", n)
			}
			cs = append(cs, c)
		}
	}
	cs = append(cs, Case{Name: "CartPoleBaseline", Unit: "step", Run: cartPoleBaseline})
	for _, n := range []int{1, 16, 256, 1024} {
		ws := vectorWorkers
		if n == 1024 {
			ws = mazeWorkers(runtime.GOMAXPROCS(0))
		}
		for _, w := range ws {
			c := Case{Name: fmt.Sprintf("VectorMaze/N=%d/%s", n, w.name), Unit: "step", Run: vectorMaze(n, w.workers)}
			c.Baseline = "MazeStep/ref"
			if w.workers > 0 {
				c.Baseline = fmt.Sprintf("VectorMaze/N=%d/sync", n)
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// mazeWorkers are the worker counts of VectorMaze/N=1024: sync, then 2, 4, 8 ... up
// to procs (always 2), so that the speed-up is seen as far as the machine goes.
func mazeWorkers(procs int) []struct {
	name    string
	workers int
} {
	ws := vectorWorkers[:1:1]
	for w := 2; w == 2 || w <= procs; w *= 2 {
		ws = append(ws, struct {
			name    string
			workers int
		}{fmt.Sprintf("workers=%d", w), w})
	}
	return ws
}

// reportSteps reports steps/s and ns/step for perOp environment steps per iteration.
func reportSteps(b *testing.B, perOp int) {
	steps := float64(b.N) * float64(perOp)
	b.ReportMetric(steps/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
}

// vectorCartPole steps n cart-poles with one coin flip per copy as integers (the form
// of a policy network's output: DiscretePolicy and StepDiscrete).
func vectorCartPole(n, workers int) func(b *testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		v, err := vector.New(n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{}) }, vector.WithWorkers(workers))
		if err != nil {
			b.Fatal(err)
		}
		defer v.Close()
		flips := NewCoinFlips(1)
		actions := make([]int64, n)
		if err := v.Reset(ctx, 0); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			flips.Fill(actions)
			if err := v.StepDiscrete(ctx, actions); err != nil {
				b.Fatal(err)
			}
		}
		reportSteps(b, n)
	}
}

// cartPoleBaseline is the hand-written scalar loop of the same physics, policy,
// observations and auto-reset.
func cartPoleBaseline(b *testing.B) {
	loop, err := NewCartPoleLoop(0)
	if err != nil {
		b.Fatal(err)
	}
	flips := NewCoinFlips(1)
	loop.Reset(0)
	b.ReportAllocs()
	for b.Loop() {
		loop.Step(flips.Next())
	}
	reportSteps(b, 1)
}

// vectorMazeWarmup is how many ticks a maze vector plays before it is measured: each
// copy's runtime makes its agent ids ("motion_12") the first time an episode needs them.
const vectorMazeWarmup = 3000

// vectorMaze steps n maze runtimes with per-copy random masked policies, batched per
// acting agent name.
//
// The synchronous case also reports its serial fraction ("serial%"): the share of a
// tick spent outside the phases a vector with workers spreads over them (vector.Timing):
// the groups' regrouping and whatever else the caller does. By Amdahl's law it bounds
// the speed-up of W workers to 1/(s + (1-s)/W).
func vectorMaze(n, workers int) func(b *testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		var timing vector.Timing
		m, err := vector.NewMulti(n, func(int) (env.MultiAgent, error) {
			e, err := maze.NewEnv(maze.Config{})
			if err != nil {
				return nil, err
			}
			return hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
		}, vector.WithWorkers(workers), vector.WithTiming(&timing))
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		policies := map[string]vector.BatchPolicy{}
		for j, s := range m.Agents() {
			p, err := vector.RandomPerCopy(s.ActionSpace, n, uint64(j+1))
			if err != nil {
				b.Fatal(err)
			}
			policies[s.Name] = p
		}
		if err := m.Reset(ctx, 0); err != nil {
			b.Fatal(err)
		}
		tick := func() {
			if err := m.Act(ctx, policies); err != nil {
				b.Fatal(err)
			}
			if err := m.Step(ctx); err != nil {
				b.Fatal(err)
			}
		}
		for range vectorMazeWarmup {
			tick()
		}
		// A synchronous tick runs the policies in the caller; a tick with workers runs
		// RandomPerCopy's on them (vector.Multi.Act). Time them as parallel work in
		// the synchronous case too, so that its serial fraction is the one of the
		// vector with workers.
		act := func() {
			start := time.Now()
			if err := m.Act(ctx, policies); err != nil {
				b.Fatal(err)
			}
			timing.Parallel += time.Since(start)
		}
		timing = vector.Timing{}
		b.ReportAllocs()
		for b.Loop() {
			if workers > 1 {
				tick()
				continue
			}
			act()
			if err := m.Step(ctx); err != nil {
				b.Fatal(err)
			}
		}
		reportSteps(b, n)
		if workers <= 1 {
			b.ReportMetric(100*(1-timing.Parallel.Seconds()/b.Elapsed().Seconds()), "serial%")
		}
	}
}
