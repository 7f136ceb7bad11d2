package maze

import (
	"fmt"
	"strings"

	"github.com/batonrl/baton/env"
)

// Scene is the maze's state as data for a page to draw: the Scene of the env.Frame
// that State.Render returns, in JSON with the grid as rows.
type Scene struct {
	// Kind is "maze".
	Kind string `json:"kind"`
	// Grid holds the map's rows, each a row of tiles with the values of the map text:
	// 0 a wall, 1 a corridor, 2 the start, 3 the goal.
	Grid [][]int `json:"grid"`
	// Position is the agent's [row, col], Heading its heading ("LEFT").
	Position [2]int `json:"position"`
	Heading  string `json:"heading"`
	// Start and Goal are the [row, col] of the start and the goal.
	Start [2]int `json:"start"`
	Goal  [2]int `json:"goal"`
}

// arrows draws the agent by its heading, indexed by Direction.
var arrows = [4]string{"↑", "→", "↓", "←"}

// glyphs draws the tiles, indexed by Tile.
var glyphs = [4]string{"█", "·", "S", "G"}

// Render draws the state (State implements env.Renderer): as text, the map in a box
// with its row and column numbers (units), walls █, corridors ·, the start S, the goal
// G and the agent as an arrow of its heading, then its position and heading; as a
// Scene; and as an SVG picture. The zero State, before a reset, draws nothing.
func (s State) Render() env.Frame {
	m := s.Maze
	if m == nil {
		return env.Frame{}
	}
	sc := Scene{
		Kind:     "maze",
		Grid:     make([][]int, m.rows),
		Position: [2]int{s.Pos.Row, s.Pos.Col},
		Heading:  s.Heading.String(),
		Start:    [2]int{m.start.Row, m.start.Col},
		Goal:     [2]int{m.goal.Row, m.goal.Col},
	}
	for r := range m.rows {
		row := make([]int, m.cols)
		for c := range m.cols {
			row[c] = int(m.tiles[r*m.cols+c])
		}
		sc.Grid[r] = row
	}
	return env.Frame{Text: s.text(), Scene: sc, SVG: s.svg()}
}

func (s State) text() string {
	m := s.Maze
	var b strings.Builder
	b.WriteString("    ")
	for c := range m.cols {
		fmt.Fprintf(&b, " %d", c%10)
	}
	b.WriteString("\n    ┌" + strings.Repeat("─", 2*m.cols+1) + "┐\n")
	for r := range m.rows {
		fmt.Fprintf(&b, "%3d │", r)
		for c := range m.cols {
			g := glyphs[m.tiles[r*m.cols+c]&3]
			if (Pos{r, c}) == s.Pos {
				g = arrows[s.Heading&3]
			}
			b.WriteString(" " + g)
		}
		b.WriteString(" │\n")
	}
	b.WriteString("    └" + strings.Repeat("─", 2*m.cols+1) + "┘\n")
	fmt.Fprintf(&b, "position [%d %d] heading %s, goal [%d %d]\n", s.Pos.Row, s.Pos.Col, s.Heading, m.goal.Row, m.goal.Col)
	return b.String()
}

// cell is the side of a tile in the SVG picture, in pixels.
const cell = 24

// svgFills colours the tiles, indexed by Tile.
var svgFills = [4]string{"#333333", "#ffffff", "#9ecae1", "#74c476"}

func (s State) svg() string {
	m := s.Maze
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n",
		m.cols*cell, m.rows*cell, m.cols*cell, m.rows*cell)
	for r := range m.rows {
		for c := range m.cols {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n",
				c*cell, r*cell, cell, cell, svgFills[m.tiles[r*m.cols+c]&3])
		}
	}
	// The agent: a triangle pointing along its heading, drawn for UP and rotated.
	cx, cy := s.Pos.Col*cell+cell/2, s.Pos.Row*cell+cell/2
	fmt.Fprintf(&b, `<polygon points="%d,%d %d,%d %d,%d" fill="#de2d26" transform="rotate(%d %d %d)"/>`+"\n",
		cx, cy-cell/3, cx+cell/3, cy+cell/3, cx-cell/3, cy+cell/3, 90*int(s.Heading&3), cx, cy)
	b.WriteString("</svg>\n")
	return b.String()
}
