package rps_test

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/rps"
)

// Two rounds: paper beats rock, then a draw ends the episode, truncated.
func Example() {
	g, _ := rps.New(rps.Config{MaxCycles: 2})
	g.Reset(0)
	for _, hands := range [][2]int64{{rps.Paper, rps.Rock}, {rps.Scissors, rps.Scissors}} {
		r, _ := g.Step([]agent.RawAction{agent.Discrete(hands[0]), agent.Discrete(hands[1])})
		fmt.Println(r.Reports[0].Reward, r.Reports[1].Reward, r.Reports[0].Obs, r.Over, r.Reports[0].Truncated)
	}
	// Output:
	// 1 -1 [1 0 0 0] false false
	// 0 0 [0 0 1 0] true true
}
