package human_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/human"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// A person plays rock-paper-scissors against the random policy for two rounds, typing
// "paper" and then "3".
func Example() {
	reg := registry.New()
	if err := rps.Register(reg); err != nil {
		panic(err)
	}
	in := human.NewInput(strings.NewReader("paper\n3\n"))
	defer in.Close()
	player, err := human.New((&rps.Game{}).Agents()[0], in, os.Stdout)
	if err != nil {
		panic(err)
	}
	c, err := runners.NewCampaign(reg, runners.Spec{
		Env:    "rps",
		Config: []byte(`{"max_cycles": 2}`),
		Actors: map[string]runners.Actor{rps.Players[0]: runners.Value(player)},
	}, runners.WithWorkers(1))
	if err != nil {
		panic(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("\nreturn of %s: %.0f\n", s.Agents[0].Name, s.Agents[0].Mean)
	// Output:
	// player_0_0 to act at tick 0:
	// round 0 of 2
	//   1) ROCK
	//   2) PAPER
	//   3) SCISSORS
	// choice [1-3]: player_0_0: reward +1.000 over 1 tick
	//
	// player_0_0 to act at tick 1:
	// round 1 of 2
	// last round: player_0 PAPER, player_1 ROCK: player_0 wins
	//   1) ROCK
	//   2) PAPER
	//   3) SCISSORS
	// choice [1-3]: player_0_0: reward -1.000 over 1 tick, truncated
	// episode 0 over after 2 ticks
	//
	// return of player_0: 0
}
