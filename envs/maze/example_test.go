package maze_test

import (
	"fmt"

	"github.com/batonrl/baton/envs/maze"
)

// Example walks the reference maze as its procedure variant does: at each decision
// point the oracle picks the direction of a shortest path to the goal, and Walk follows
// it to the next intersection or wall.
func Example() {
	m, err := maze.Parse(maze.Reference)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d x %d, start %v, goal %v\n", m.Rows(), m.Cols(), m.StartPos(), m.GoalPos())
	oracle := maze.NewOracle(m)
	s := maze.State{Maze: m, Pos: m.StartPos(), Heading: maze.Left}
	for s.Pos != m.GoalPos() {
		d, ok := oracle.Direction(s.Pos)
		if !ok {
			fmt.Println("no way to the goal from", s.Pos)
			return
		}
		if s, err = maze.Walk(s, maze.Action{Kind: maze.Choose, Dir: d}); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-5v to %v\n", d, s.Pos)
	}
	// Output:
	// 10 x 10, start (4, 9), goal (0, 4)
	// LEFT  to (4, 8)
	// DOWN  to (6, 8)
	// LEFT  to (6, 5)
	// UP    to (4, 5)
	// UP    to (1, 5)
	// LEFT  to (1, 4)
	// UP    to (0, 4)
}
