package vector_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

// Eight cart-poles stepped in lockstep by two workers, with a batched policy that
// pushes each cart toward the side its pole leans to: it balances for a while, until
// the cart drifts off the track, or the 50-step time limit. Episodes that end are reset in the
// same step; their last observations are in FinalObs.
func Example() {
	ctx := context.Background()
	v, err := vector.New(8, func(int) (env.Env, error) {
		return cartpole.NewEnv(cartpole.Config{MaxSteps: 50})
	}, vector.WithWorkers(2))
	if err != nil {
		panic(err)
	}
	defer v.Close()

	lean := vector.BatchPolicyFunc(func(_ context.Context, b vector.Batch, actions []agent.RawAction) error {
		for r := range b.Len() {
			obs := b.Row(r) // x, x_dot, theta, theta_dot
			actions[r] = agent.Discrete(cartpole.PushLeft)
			if obs[2] > 0 {
				actions[r] = agent.Discrete(cartpole.PushRight)
			}
		}
		return nil
	})
	actions := make([]agent.RawAction, v.Len())
	if err := v.Reset(ctx, 1); err != nil {
		panic(err)
	}
	steps, terminated, truncated := 0, 0, 0
	for range 250 {
		if err := lean.ActBatch(ctx, v.Batch(), actions); err != nil {
			panic(err)
		}
		if err := v.Step(ctx, actions); err != nil {
			panic(err)
		}
		for i := range v.Len() {
			steps++
			switch {
			case v.Terminated()[i]:
				terminated++
			case v.Truncated()[i]:
				truncated++
			}
		}
	}
	fmt.Printf("%d steps, %d episodes terminated, %d truncated\n", steps, terminated, truncated)
	fmt.Println("copy 0 is in episode", v.Episodes()[0])
	// Output:
	// 2000 steps, 35 episodes terminated, 9 truncated
	// copy 0 is in episode 7
}

// The serial fraction of a tick of 256 hierarchical mazes: WithTiming adds up the
// time of the phases a vector with workers would spread over them; the rest of the
// tick (here the regrouping's pass over chunks, and the loop) is what Amdahl's law
// says no number of workers speeds up. Spread then spreads the caller's own per-copy
// work (here counting the copies where the motion agent acts) over the workers.
func ExampleWithTiming() {
	ctx := context.Background()
	var timing vector.Timing
	m, err := vector.NewMulti(256, func(int) (env.MultiAgent, error) {
		e, err := maze.NewEnv(maze.Config{})
		if err != nil {
			return nil, err
		}
		return hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	}, vector.WithTiming(&timing))
	if err != nil {
		panic(err)
	}
	defer m.Close()
	policies := map[string]vector.BatchPolicy{}
	for j, s := range m.Agents() {
		if policies[s.Name], err = vector.RandomPerCopy(s.ActionSpace, m.Len(), uint64(j)); err != nil {
			panic(err)
		}
	}
	if err := m.Reset(ctx, 1); err != nil {
		panic(err)
	}
	timing = vector.Timing{}
	start := time.Now()
	for range 100 {
		t0 := time.Now()
		if err := m.Act(ctx, policies); err != nil {
			panic(err)
		}
		timing.Parallel += time.Since(t0) // per-copy policies run on workers when there are some
		if err := m.Step(ctx); err != nil {
			panic(err)
		}
	}
	serial := 1 - timing.Parallel.Seconds()/time.Since(start).Seconds()
	fmt.Println("phases per step:", timing.Phases/100)
	fmt.Println("serial fraction measured:", serial >= 0 && serial < 1) // about 0.1% on an idle machine

	motion := make([]bool, m.Len())
	m.Spread(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			j, _ := m.Acting(i)
			motion[i] = m.Agents()[j].Name == maze.MotionName
		}
	})
	fmt.Println("motion acts in some copies:", slices.Contains(motion, true))
	// Output:
	// phases per step: 2
	// serial fraction measured: true
	// motion acts in some copies: true
}
