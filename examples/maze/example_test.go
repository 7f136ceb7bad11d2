package maze_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/hrl"
)

// Example plays one episode of the reference maze with the hrl runtime: the oracle
// picks a direction at each decision point and the motion agent walks it by always
// moving forward, so the strategy reaches the goal.
func Example() {
	e, err := maze.NewEnv(maze.Config{}) // the zero Config is the reference maze
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	policies := map[string]agent.Policy{
		maze.StrategyName: maze.NewOracle(e.Maze()),
		maze.MotionName:   maze.AlwaysForward(),
	}
	returns := map[string]float64{}
	decisions := 0
	res := rt.Reset(1)
	for !res.Over {
		acting := res.Acting()
		if acting.Agent == maze.StrategyName {
			decisions++
		}
		raw, err := policies[acting.Agent].Act(context.Background(), acting.Obs, acting.Mask)
		if err != nil {
			fmt.Println(err)
			return
		}
		if res, err = rt.Step(acting.AgentID, raw); err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range res.Reports {
			returns[r.Agent] += r.Reward
		}
	}
	fmt.Printf("start %v, goal %v\n", e.Maze().StartPos(), e.Maze().GoalPos())
	fmt.Printf("over after %d ticks and %d decisions, at %v\n", rt.Tick(), decisions, rt.State().Pos)
	fmt.Printf("return of strategy %.1f, of motion %.1f\n", returns[maze.StrategyName], returns[maze.MotionName])
	// Output:
	// start (4, 9), goal (0, 4)
	// over after 20 ticks and 7 decisions, at (0, 4)
	// return of strategy 1.0, of motion 13.0
}
