package maze

import (
	"errors"
	"fmt"
	"strings"
)

// Tile is one cell of a maze map, with the values the map text uses.
type Tile uint8

// The tiles of a maze map.
const (
	Wall     Tile = 0
	Corridor Tile = 1
	Start    Tile = 2
	Goal     Tile = 3
)

// Walkable reports whether an agent may stand on the tile.
func (t Tile) Walkable() bool { return t != Wall }

// Pos is a position (row, col); row 0 is the top.
type Pos struct{ Row, Col int }

// String formats the position as "(row, col)".
func (p Pos) String() string { return fmt.Sprintf("(%d, %d)", p.Row, p.Col) }

// Move returns the neighbouring position in direction d.
func (p Pos) Move(d Direction) Pos { return Pos{p.Row + dRow[d&3], p.Col + dCol[d&3]} }

// Direction is a heading in the maze. The values are the strategy agent's actions.
type Direction int64

// The four directions: UP decreases the row, LEFT decreases the column.
const (
	Up    Direction = 0
	Right Direction = 1
	Down  Direction = 2
	Left  Direction = 3
)

var (
	dRow = [4]int{-1, 0, 1, 0}
	dCol = [4]int{0, 1, 0, -1}
)

// Opposite returns the direction pointing the other way.
func (d Direction) Opposite() Direction { return (d + 2) & 3 }

// String names the direction: "UP", "RIGHT", "DOWN" or "LEFT".
func (d Direction) String() string {
	switch d {
	case Up:
		return "UP"
	case Right:
		return "RIGHT"
	case Down:
		return "DOWN"
	case Left:
		return "LEFT"
	}
	return fmt.Sprintf("Direction(%d)", int64(d))
}

// Maze is an immutable map with its start and goal and what the agents derive from it
// (walkable tiles, intersections, the map as floats). Safe for concurrent use.
type Maze struct {
	rows, cols   int
	tiles        []Tile
	start, goal  Pos
	floats       []float32
	intersection []bool
	dist         []int // shortest walk to the goal in moves, -1 where none
}

// Reference is the map of the reference maze (reference/maze.md).
const Reference = `0 0 1 0 3 0 0 0 0 0
0 0 1 1 1 1 1 1 1 1
0 1 1 0 0 1 0 0 1 0
0 0 1 0 0 1 0 0 0 1
0 0 1 1 1 1 0 1 1 2
0 0 1 0 0 1 0 0 1 0
1 1 1 1 1 1 1 1 1 0
0 1 0 0 1 0 0 0 1 0
0 1 1 1 1 1 1 1 1 0
0 1 0 0 0 0 0 0 1 0`

// MaxSide is the largest number of rows or columns a maze may have.
const MaxSide = 101

// ErrMap is wrapped by every error about a map.
var ErrMap = errors.New("maze: invalid map")

// MapError says what is wrong with a map and where; Line and Col count from 1, 0 when
// the problem is not at one place.
type MapError struct {
	Line, Col int
	Reason    string
}

func (e *MapError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("maze: invalid map: line %d, column %d: %s", e.Line, e.Col, e.Reason)
	}
	return "maze: invalid map: " + e.Reason
}

// Unwrap returns ErrMap.
func (e *MapError) Unwrap() error { return ErrMap }

// Parse reads a map: one line per row, one digit per tile (0 wall, 1 corridor, 2 start,
// 3 goal), the digits separated by spaces or not at all. Blank lines at either end are
// ignored. A map needs equal-length rows, exactly one start and one goal.
func Parse(text string) (*Maze, error) {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")), "\n")
	var tiles []Tile
	cols := -1
	for i, line := range lines {
		row := strings.ReplaceAll(strings.TrimSpace(line), " ", "")
		row = strings.ReplaceAll(row, "\t", "")
		if cols == -1 {
			cols = len(row)
		}
		if len(row) != cols {
			return nil, &MapError{Line: i + 1, Reason: fmt.Sprintf("row has %d tiles, the first row %d", len(row), cols)}
		}
		for j := range len(row) {
			c := row[j]
			if c < '0' || c > '3' {
				return nil, &MapError{Line: i + 1, Col: j + 1, Reason: fmt.Sprintf("tile %q is not one of 0 (wall), 1 (corridor), 2 (start), 3 (goal)", c)}
			}
			tiles = append(tiles, Tile(c-'0'))
		}
	}
	return build(len(lines), cols, tiles)
}

// New builds a maze from a row-major tile slice, which it copies.
func New(rows, cols int, tiles []Tile) (*Maze, error) {
	if rows*cols != len(tiles) || rows < 1 || cols < 1 {
		return nil, &MapError{Reason: fmt.Sprintf("%d tiles do not make %d rows of %d", len(tiles), rows, cols)}
	}
	return build(rows, cols, append([]Tile(nil), tiles...))
}

func build(rows, cols int, tiles []Tile) (*Maze, error) {
	if rows < 1 || cols < 1 || len(tiles) == 0 {
		return nil, &MapError{Reason: "the map is empty"}
	}
	if rows > MaxSide || cols > MaxSide {
		return nil, &MapError{Reason: fmt.Sprintf("%d x %d is larger than %d x %d", rows, cols, MaxSide, MaxSide)}
	}
	m := &Maze{rows: rows, cols: cols, tiles: tiles, floats: make([]float32, len(tiles)), intersection: make([]bool, len(tiles))}
	starts, goals := 0, 0
	for i, t := range tiles {
		if t > Goal {
			return nil, &MapError{Reason: fmt.Sprintf("tile %d at %v is not a tile", t, m.pos(i))}
		}
		m.floats[i] = float32(t)
		switch t {
		case Start:
			starts++
			m.start = m.pos(i)
		case Goal:
			goals++
			m.goal = m.pos(i)
		}
	}
	if starts != 1 || goals != 1 {
		return nil, &MapError{Reason: fmt.Sprintf("a map needs exactly one start (2) and one goal (3); found %d and %d", starts, goals)}
	}
	for i := range tiles {
		p := m.pos(i)
		n := 0
		for d := range Direction(4) {
			if m.Walkable(p.Move(d)) {
				n++
			}
		}
		limit := 2
		if p.Row == 0 || p.Row == rows-1 || p.Col == 0 || p.Col == cols-1 {
			limit = 1
		}
		m.intersection[i] = tiles[i].Walkable() && n > limit
	}
	m.dist = m.distances()
	return m, nil
}

// Distance returns the number of moves of the shortest walk from p to the goal; -1
// for a wall, a position off the map or a tile the goal cannot be reached from.
func (m *Maze) Distance(p Pos) int {
	if !m.Inside(p) {
		return -1
	}
	return m.dist[p.Row*m.cols+p.Col]
}

func (m *Maze) pos(i int) Pos { return Pos{i / m.cols, i % m.cols} }

// Rows returns the number of rows.
func (m *Maze) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Maze) Cols() int { return m.cols }

// StartPos returns the start tile's position.
func (m *Maze) StartPos() Pos { return m.start }

// GoalPos returns the goal tile's position.
func (m *Maze) GoalPos() Pos { return m.goal }

// Inside reports whether p lies on the map.
func (m *Maze) Inside(p Pos) bool {
	return p.Row >= 0 && p.Row < m.rows && p.Col >= 0 && p.Col < m.cols
}

// At returns the tile at p; a position outside the map is a wall.
func (m *Maze) At(p Pos) Tile {
	if !m.Inside(p) {
		return Wall
	}
	return m.tiles[p.Row*m.cols+p.Col]
}

// Walkable reports whether p is a start, corridor or goal tile on the map.
func (m *Maze) Walkable(p Pos) bool { return m.At(p).Walkable() }

// Intersection reports whether p is an intersection: a walkable tile with more than 2
// walkable neighbours, or more than 1 on the border of the map.
func (m *Maze) Intersection(p Pos) bool {
	return m.Inside(p) && m.intersection[p.Row*m.cols+p.Col]
}

// String writes the map in the text form Parse reads.
func (m *Maze) String() string {
	var b strings.Builder
	for i, t := range m.tiles {
		if i > 0 {
			if i%m.cols == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('0' + byte(t))
	}
	return b.String()
}
