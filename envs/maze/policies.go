package maze

import (
	"context"
	"fmt"
	"slices"

	"github.com/batonrl/baton/agent"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"
)

// Oracle is a strategy policy that follows shortest paths to the goal. Where a straight
// walk (what the motion agent does when it only moves forward) can stop — intersections,
// corners, dead ends, the start and the goal — it plans over the graph of those decision
// points, weighted by corridor length, with Dijkstra's algorithm (gonum/graph); anywhere
// else (a motion agent cut short in a corridor) it steps along a shortest tile path.
// It reads the position from the observation, so it serves any environment with the
// maze's observation layout. An oracle of a fixed map (NewOracle, NewEnvOracle of
// such an environment) is safe for concurrent use and allocates nothing per call; one
// that reads the map from the observation (NewEnvOracle of an environment whose
// episodes draw their maps) plans again whenever the map changes and serves one
// trial at a time.
type Oracle struct {
	maze *Maze
	best []Direction // per tile: the direction to take; -1 where the goal is unreachable
	// rows and cols are the size of the map in the observations.
	rows, cols int
	// observed: the map is read from each observation; seen is the one planned.
	observed bool
	seen     []float32
}

// NewOracle plans every tile's best direction for a maze observed as it is.
func NewOracle(m *Maze) *Oracle {
	o := &Oracle{rows: m.rows, cols: m.cols}
	o.plan(m)
	return o
}

// NewEnvOracle returns the oracle of an environment's observations: planned once for
// its map, or, when each episode draws its map (GenerateConfig.PerEpisode), reading
// the map from the observation (padded or not, Config.ObsSide) and planning again
// when it changes; such an oracle is not safe for concurrent use.
func NewEnvOracle(e *Env) *Oracle {
	if e.maze != nil {
		o := &Oracle{rows: e.rows, cols: e.cols}
		o.plan(e.maze)
		return o
	}
	return newObservedOracle(e.rows, e.cols)
}

// newObservedOracle returns an oracle that reads the map of rows x cols from each
// observation and plans again when it changes; it is not safe for concurrent use.
func newObservedOracle(rows, cols int) *Oracle {
	o := &Oracle{rows: rows, cols: cols, observed: true, seen: make([]float32, rows*cols)}
	for i := range o.seen {
		o.seen[i] = -1 // no map yet
	}
	return o
}

// plan plans every tile's best direction for m.
func (o *Oracle) plan(m *Maze) {
	o.maze, o.best = m, make([]Direction, len(m.tiles))
	tileDist := m.dist
	for i := range o.best {
		o.best[i] = bestStep(m, m.pos(i), tileDist)
	}
	// Decision points: plan over straight walks with Dijkstra.
	g := simple.NewWeightedUndirectedGraph(0, 0)
	for i := range m.tiles {
		if m.decisionPoint(m.pos(i)) {
			g.AddNode(simple.Node(i))
		}
	}
	for i := range m.tiles {
		p := m.pos(i)
		if !m.decisionPoint(p) {
			continue
		}
		for d := range Direction(4) {
			if q, n, ok := m.walk(p, d); ok && q != p && !g.HasEdgeBetween(int64(i), int64(m.index(q))) {
				g.SetWeightedEdge(g.NewWeightedEdge(simple.Node(i), simple.Node(m.index(q)), float64(n)))
			}
		}
	}
	goal := m.index(m.goal)
	shortest := path.DijkstraFrom(simple.Node(goal), g)
	for i := range m.tiles {
		p := m.pos(i)
		if !m.decisionPoint(p) || i == goal {
			continue
		}
		bestCost, bestDir := 0.0, Direction(-1)
		for d := range Direction(4) {
			q, n, ok := m.walk(p, d)
			if !ok || q == p {
				continue
			}
			cost := float64(n) + shortest.WeightTo(int64(m.index(q)))
			if bestDir < 0 || cost < bestCost {
				bestCost, bestDir = cost, d
			}
		}
		if bestDir >= 0 && bestCost < float64(len(m.tiles))*4 {
			o.best[i] = bestDir
		}
	}
}

// replan plans for the map of an observation, as the observations lay it out (walls
// pad it to the observed size, which changes no walk on it: a generated map's border
// is walls).
func (o *Oracle) replan(floats []float32) error {
	tiles := make([]Tile, len(floats))
	for i, v := range floats {
		if v != float32(int(v)) || v < 0 || v > float32(Goal) {
			return fmt.Errorf("maze: oracle: map value %v at %v is not a tile", v, Pos{i / o.cols, i % o.cols})
		}
		tiles[i] = Tile(v)
	}
	m, err := build(o.rows, o.cols, tiles)
	if err != nil {
		return fmt.Errorf("maze: oracle: the observed map: %w", err)
	}
	o.plan(m)
	copy(o.seen, floats)
	return nil
}

// Act returns the planned direction for the position in obs; where no plan exists it
// returns the first valid direction of the mask.
func (o *Oracle) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	n := o.rows * o.cols
	if len(obs) < n+2 {
		return agent.RawAction{}, fmt.Errorf("maze: oracle: observation has %d values; want at least %d", len(obs), n+2)
	}
	if o.observed && !slices.Equal(obs[:n], o.seen) {
		if err := o.replan(obs[:n]); err != nil {
			return agent.RawAction{}, err
		}
	}
	p := Pos{int(obs[n]), int(obs[n+1])}
	if !o.maze.Inside(p) {
		return agent.RawAction{}, fmt.Errorf("maze: oracle: position %v is off the map", p)
	}
	if d := o.best[o.maze.index(p)]; d >= 0 && (mask == nil || mask[d]) {
		return agent.Discrete(int64(d)), nil
	}
	for d, ok := range mask {
		if ok {
			return agent.Discrete(int64(d)), nil
		}
	}
	return agent.RawAction{}, fmt.Errorf("maze: oracle: no walkable direction at %v", p)
}

// Direction returns the oracle's direction at p, and false where it has none.
func (o *Oracle) Direction(p Pos) (Direction, bool) {
	if !o.maze.Inside(p) || o.best[o.maze.index(p)] < 0 {
		return 0, false
	}
	return o.best[o.maze.index(p)], true
}

// AlwaysForward is the motion policy that always moves forward.
func AlwaysForward() agent.Policy {
	return agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
		return agent.Discrete(int64(Forward)), nil
	})
}

func (m *Maze) index(p Pos) int { return p.Row*m.cols + p.Col }

// decisionPoint reports whether a straight walk can stop at p.
func (m *Maze) decisionPoint(p Pos) bool {
	if !m.Walkable(p) {
		return false
	}
	if p == m.start || p == m.goal || m.Intersection(p) {
		return true
	}
	for d := range Direction(4) {
		if m.Walkable(p.Move(d.Opposite())) && !m.Walkable(p.Move(d)) {
			return true // arriving heading d, the tile ahead is a wall
		}
	}
	return false
}

// walk follows d from p as the Walk procedure does and returns where it stops and how
// many tiles it took; ok is false when the first tile is a wall.
func (m *Maze) walk(p Pos, d Direction) (Pos, int, bool) {
	s, err := Walk(State{Maze: m, Pos: p}, Action{Kind: Choose, Dir: d})
	if err != nil {
		return p, 0, false
	}
	return s.Pos, abs(s.Pos.Row-p.Row) + abs(s.Pos.Col-p.Col), true
}

// distances returns every tile's distance in tiles to the goal, -1 where unreachable.
func (m *Maze) distances() []int {
	dist := make([]int, len(m.tiles))
	for i := range dist {
		dist[i] = -1
	}
	queue := []Pos{m.goal}
	dist[m.index(m.goal)] = 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for d := range Direction(4) {
			q := p.Move(d)
			if m.Walkable(q) && dist[m.index(q)] < 0 {
				dist[m.index(q)] = dist[m.index(p)] + 1
				queue = append(queue, q)
			}
		}
	}
	return dist
}

func bestStep(m *Maze, p Pos, dist []int) Direction {
	best := Direction(-1)
	if !m.Walkable(p) || dist[m.index(p)] <= 0 {
		return best
	}
	for d := range Direction(4) {
		q := p.Move(d)
		if m.Walkable(q) && dist[m.index(q)] >= 0 && (best < 0 || dist[m.index(q)] < dist[m.index(p.Move(best))]) {
			best = d
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
