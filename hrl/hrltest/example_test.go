package hrltest_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/batonrl/baton/envs/maze"
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

// Example_doneWhenTakingControl checks a key-and-door corridor (see keys_test.go) whose
// planner may send its walker to the tile the walker stands on. The walker takes control
// already done, and would step away and back; Run reports it with the remedies. Either
// remedy passes: the walker returns control at once, or the planner refuses that subgoal.
func Example_doneWhenTakingControl() {
	err := hrltest.Run(newKeyEnv(keyKnobs{}), hrltest.Options{})
	fmt.Println(strings.SplitN(err.Error(), "\n", 2)[0]) // the first problem of those found

	if err := hrltest.Run(newKeyEnv(keyKnobs{atOnce: true}), hrltest.Options{}); err == nil {
		fmt.Println("the walker returns at once: every contract kept")
	}
	if err := hrltest.Run(newKeyEnv(keyKnobs{refuseHere: true}), hrltest.Options{}); err == nil {
		fmt.Println("the planner refuses the walker's own tile: every contract kept")
	}
	// Output:
	// hrltest: seed 5: tick 5: agent walker_1 is already done (terminated by its Done) when it takes control after planner_0 played 1: it acts at least once before its Done is asked again, so a walker on its target steps away and back. Either refuse that action in planner's DecodeAction (and rule it out in its action mask) when walker would be done, or let walker return control at once (implement agent.AtOnceReturner)
	// the walker returns at once: every contract kept
	// the planner refuses the walker's own tile: every contract kept
}
