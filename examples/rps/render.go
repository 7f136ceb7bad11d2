package rps

import (
	"fmt"

	"github.com/batonrl/baton/env"
)

// Scene is the game's state as data for a page to draw: the Scene of the env.Frame
// that Game.Render returns.
type Scene struct {
	// Kind is "rps".
	Kind string `json:"kind"`
	// Round counts the rounds played, of MaxCycles.
	Round     int `json:"round"`
	MaxCycles int `json:"max_cycles"`
	// Last holds each player's hand in the last round ("ROCK", "PAPER",
	// "SCISSORS"), "" before the first round.
	Last [2]string `json:"last"`
	// Winner is the index of the player who won the last round, -1 for a draw or
	// before the first round.
	Winner int `json:"winner"`
}

// hands names the hands, indexed by their raw actions.
var hands = [3]string{"ROCK", "PAPER", "SCISSORS"}

// Render draws the game (Game implements env.Renderer, found through env.Sequential's
// Unwrap): the round and the last round's hands and winner. Before the first reset it
// draws nothing.
func (g *Game) Render() env.Frame {
	if !g.started && g.round == 0 {
		return env.Frame{}
	}
	sc := Scene{Kind: "rps", Round: g.round, MaxCycles: g.max, Winner: -1}
	text := fmt.Sprintf("round %d of %d\n", g.round, g.max)
	if g.round > 0 {
		for i, h := range g.last {
			sc.Last[i] = hands[h]
		}
		result := "a draw"
		switch Winner(g.last[0], g.last[1]) {
		case 1:
			sc.Winner, result = 0, Players[0]+" wins"
		case -1:
			sc.Winner, result = 1, Players[1]+" wins"
		}
		text += fmt.Sprintf("last round: %s %s, %s %s: %s\n", Players[0], sc.Last[0], Players[1], sc.Last[1], result)
	}
	return env.Frame{Text: text, Scene: sc}
}
