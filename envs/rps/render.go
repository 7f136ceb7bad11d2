package rps

import (
	"fmt"
	"strings"

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
// Unwrap): the round and the last round's hands and winner, as text, as a Scene and as
// an SVG picture (each player's panel with their last hand drawn and named, the
// winner's green). Before the first reset it draws nothing.
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
	return env.Frame{Text: text, Scene: sc, SVG: picture(sc)}
}

// The SVG picture's size in pixels, and each player's panel.
const (
	svgWidth  = 480
	svgHeight = 240
	panelW    = 190
	panelH    = 160
	panelY    = 56
)

func picture(sc Scene) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="34" font-size="20" text-anchor="middle" fill="#333333">round %d of %d</text>`+"\n", svgWidth/2, sc.Round, sc.MaxCycles)
	for i, player := range Players {
		x := 30 + i*(svgWidth-60-panelW)
		fill := "#f4f4f4"
		if sc.Winner == i {
			fill = "#c7e9c0"
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="10" fill="%s" stroke="#333333" stroke-width="2"/>`+"\n", x, panelY, panelW, panelH, fill)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="16" text-anchor="middle" fill="#333333">%s</text>`+"\n", x+panelW/2, panelY+24, player)
		cx, cy := x+panelW/2, panelY+82
		switch sc.Last[i] {
		case "ROCK":
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="30" fill="#8c8c8c" stroke="#333333" stroke-width="2"/>`+"\n", cx, cy)
		case "PAPER":
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="48" height="60" fill="#ffffff" stroke="#333333" stroke-width="2"/>`+"\n", cx-24, cy-30)
		case "SCISSORS":
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#de2d26" stroke-width="6" stroke-linecap="round"/>`+"\n", cx-26, cy-26, cx+26, cy+26)
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#de2d26" stroke-width="6" stroke-linecap="round"/>`+"\n", cx+26, cy-26, cx-26, cy+26)
		}
		hand := sc.Last[i]
		if hand == "" {
			hand = "-"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="18" text-anchor="middle" fill="#333333">%s</text>`+"\n", cx, panelY+panelH-14, hand)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
