package maze

import (
	"fmt"
	"math/rand/v2"
)

// Generate draws a random maze of the given size with rng: a spanning tree of corridors
// carved by a randomised depth-first search over the cells at odd coordinates, with some
// extra openings so that paths cross at intersections. The start is a random corridor
// tile and the goal the dead end farthest from it (a straight walk stops there, as it
// does on the reference map's goal). Both sides must be odd, between 5
// and MaxSide. The same rng state gives the same maze.
func Generate(rng *rand.Rand, rows, cols int) (*Maze, error) {
	if err := checkSides(rows, cols); err != nil {
		return nil, err
	}
	tiles := make([]Tile, rows*cols)
	at := func(r, c int) *Tile { return &tiles[r*cols+c] }
	type cell struct{ r, c int }
	start := cell{1 + 2*rng.IntN(rows/2), 1 + 2*rng.IntN(cols/2)}
	*at(start.r, start.c) = Corridor
	stack := []cell{start}
	var dirs [4]Direction
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		n := 0
		for d := range Direction(4) {
			r, c := cur.r+2*dRow[d], cur.c+2*dCol[d]
			if r > 0 && r < rows-1 && c > 0 && c < cols-1 && *at(r, c) == Wall {
				dirs[n] = d
				n++
			}
		}
		if n == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		d := dirs[rng.IntN(n)]
		*at(cur.r+dRow[d], cur.c+dCol[d]) = Corridor
		next := cell{cur.r + 2*dRow[d], cur.c + 2*dCol[d]}
		*at(next.r, next.c) = Corridor
		stack = append(stack, next)
	}
	// Open some inner walls between two corridors to make loops and intersections.
	for range rows * cols / 12 {
		r, c := 1+rng.IntN(rows-2), 1+rng.IntN(cols-2)
		if *at(r, c) != Wall {
			continue
		}
		vertical := *at(r-1, c) != Wall && *at(r+1, c) != Wall && *at(r, c-1) == Wall && *at(r, c+1) == Wall
		horizontal := *at(r, c-1) != Wall && *at(r, c+1) != Wall && *at(r-1, c) == Wall && *at(r+1, c) == Wall
		if vertical || horizontal {
			*at(r, c) = Corridor
		}
	}
	// The goal is the dead end farthest from the start (breadth-first), or, when loops
	// left no dead end, the farthest tile where a straight walk stops (a corner or an
	// intersection: not the middle of a straight corridor, which a walk passes over).
	dist := make([]int, len(tiles))
	for i := range dist {
		dist[i] = -1
	}
	origin := start.r*cols + start.c
	queue := []int{origin}
	dist[origin] = 0
	far, farDeadEnd := -1, -1
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		open, dirs := 0, 0
		for d := range Direction(4) {
			r, c := i/cols+dRow[d], i%cols+dCol[d]
			j := r*cols + c
			if tiles[j] == Wall {
				continue
			}
			open++
			dirs |= 1 << d
			if dist[j] < 0 {
				dist[j] = dist[i] + 1
				queue = append(queue, j)
			}
		}
		if i == origin {
			continue
		}
		straight := dirs == 1<<Up|1<<Down || dirs == 1<<Left|1<<Right
		if !straight && (far < 0 || dist[i] > dist[far]) {
			far = i
		}
		if open == 1 && (farDeadEnd < 0 || dist[i] > dist[farDeadEnd]) {
			farDeadEnd = i
		}
	}
	if farDeadEnd >= 0 {
		far = farDeadEnd
	}
	tiles[start.r*cols+start.c] = Start
	tiles[far] = Goal
	return build(rows, cols, tiles)
}

// checkSides reports whether Generate draws mazes of rows x cols.
func checkSides(rows, cols int) error {
	for _, side := range []int{rows, cols} {
		if side < 5 || side > MaxSide || side%2 == 0 {
			return &MapError{Reason: fmt.Sprintf("generated mazes need odd sides from 5 to %d; got %d x %d", MaxSide, rows, cols)}
		}
	}
	return nil
}
