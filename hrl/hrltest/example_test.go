package hrltest_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/hrl/hrltest"
)

// Example checks the reference maze, which keeps every contract, and then a maze whose
// strategy agent is rewarded NaN, which does not.
func Example() {
	newMaze := func() hrl.HierarchicalEnv[maze.State, maze.Action] {
		e, err := maze.NewEnv(maze.Config{})
		if err != nil {
			panic(err)
		}
		return e
	}
	if err := hrltest.Run(newMaze, hrltest.Options{Episodes: 5, Seed: 1}); err == nil {
		fmt.Println("maze: every contract kept")
	}

	newBroken := func() hrl.HierarchicalEnv[maze.State, maze.Action] {
		e, err := maze.NewEnv(maze.Config{})
		if err != nil {
			panic(err)
		}
		return nanMaze{e}
	}
	err := hrltest.Run(newBroken, hrltest.Options{Episodes: 1, Seed: 1})
	fmt.Println(strings.SplitN(err.Error(), "\n", 2)[0]) // the first problem of those found
	// Output:
	// maze: every contract kept
	// hrltest: seed 1: tick 2: agent strategy_0: reward NaN is not finite
}

// nanMaze is the maze with a strategy agent whose reward is NaN.
type nanMaze struct{ *maze.Env }

func (e nanMaze) Agents() []hrl.Binding[maze.State, maze.Action] {
	agents := e.Env.Agents()
	strategy := maze.NewStrategy(e.Maze(), e.Config().Strategy)
	return []hrl.Binding[maze.State, maze.Action]{hrl.Bind(nanStrategy{strategy}), agents[1]}
}

type nanStrategy struct{ *maze.Strategy }

func (nanStrategy) Reward(maze.View, maze.Action, maze.View) float64 { return math.NaN() }
