package env_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

// The maze's strategy agent as a single-agent environment: the motion agent always
// moves forward, the strategy follows the oracle. Each step of the strategy spans the
// motion agent's walk; wrappers add a time limit and episode statistics.
func ExampleNewView() {
	e, err := maze.NewEnv(maze.Config{})
	if err != nil {
		panic(err)
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	view, err := env.NewView(ctx, rt, maze.StrategyName, map[string]agent.Policy{
		maze.MotionName: maze.AlwaysForward(),
	})
	if err != nil {
		panic(err)
	}
	strategy := env.EpisodeStats(env.TimeLimit(view, 100))

	learner := maze.NewOracle(e.Maze())
	st, err := strategy.Reset(1)
	if err != nil {
		panic(err)
	}
	for !st.Done() {
		a, err := learner.Act(ctx, st.Obs, st.Mask)
		if err != nil {
			panic(err)
		}
		if st, err = strategy.Step(a); err != nil {
			panic(err)
		}
		fmt.Printf("%s reward %.0f over %d ticks, done %v\n", view.AgentID(), st.Reward, view.SpanTicks(), st.Done())
	}
	fmt.Printf("episode: %+v\n", strategy.Last())
	// Output:
	// strategy_0 reward 0 over 2 ticks, done false
	// strategy_0 reward 0 over 3 ticks, done false
	// strategy_0 reward 0 over 4 ticks, done false
	// strategy_0 reward 0 over 3 ticks, done false
	// strategy_0 reward 0 over 4 ticks, done false
	// strategy_0 reward 0 over 2 ticks, done false
	// strategy_0 reward 1 over 2 ticks, done true
	// episode: {Return:1 Length:7 Terminated:true Truncated:false}
}

// The maze with its agents' actions and observation features scrambled by seed 7:
// the strategy's action 1 now means DOWN (the maze's action 2), and its observation is
// reordered. The
// permutations are fixed by the seed, and Info records them.
func ExampleScramble() {
	e, err := maze.NewEnv(maze.Config{})
	if err != nil {
		panic(err)
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	if err != nil {
		panic(err)
	}
	s, err := env.Scramble(rt, 7)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{maze.StrategyName, maze.MotionName} {
		p, _ := s.Permutation(name)
		fmt.Printf("%s: actions %v, first observation features %v\n", name, p.Actions, p.Observation[:4])
	}
	// Output:
	// strategy: actions [0 2 3 1], first observation features [42 96 23 87]
	// motion: actions [0 1], first observation features [102 88 101 4]
}
