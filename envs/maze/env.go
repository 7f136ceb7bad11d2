package maze

//go:generate go tool stringer -type=ActionKind -linecomment

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
)

// State is the environment state both agents share. The Maze is shared and immutable;
// the rest is copied with the state.
type State struct {
	Maze    *Maze
	Pos     Pos
	Heading Direction
}

// ActionKind tells the two agents' actions apart. Its String names it: "choose" or
// "step".
type ActionKind int

// The kinds of maze actions.
const (
	// Choose is the strategy agent's action: a direction to go.
	Choose ActionKind = 1 + iota // choose
	// Step is the motion agent's action: one move backward or forward.
	Step // step
)

// Move is the motion agent's action.
type Move int64

// The motion agent's actions.
const (
	Backward Move = 0
	Forward  Move = 1
)

// String names the move.
func (m Move) String() string {
	if m == Forward {
		return "FORWARD"
	}
	return "BACKWARD"
}

// Action is a decoded action of either agent.
type Action struct {
	Kind ActionKind
	Dir  Direction // when Kind is Choose
	Move Move      // when Kind is Step
}

// ErrWall is wrapped by the error for an action that would walk into a wall.
var ErrWall = errors.New("maze: direction leads into a wall")

// Info describes a state for people and logs (the --json output of baton play).
type Info struct {
	Position [2]int `json:"position"`
	Heading  string `json:"heading"`
}

// Env is the reference maze as a hierarchical environment: a strategy agent picks
// directions at intersections and a motion agent walks them, or, in the procedure
// variant, a non-learned procedure walks them within one step. Safe for concurrent use:
// it holds configuration only.
type Env struct {
	cfg  Config
	maze *Maze // nil when each episode draws its map
	// rows and cols are the size of the map in the observations.
	rows, cols int
	strategy   *Strategy
	motion     *Motion
	agents     []hrl.Binding[State, Action]
}

// NewEnv builds the environment a configuration describes.
func NewEnv(cfg Config) (*Env, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m, err := cfg.build()
	if err != nil {
		return nil, err
	}
	rows, cols := 0, 0
	if m != nil {
		rows, cols = m.rows, m.cols
	} else {
		rows, cols = cfg.Generate.Rows, cfg.Generate.Cols
	}
	if rows, cols, err = cfg.observed(rows, cols); err != nil {
		return nil, err
	}
	e := &Env{cfg: cfg, maze: m, rows: rows, cols: cols, strategy: newStrategy(rows, cols, cfg.Strategy)}
	e.agents = []hrl.Binding[State, Action]{hrl.Bind(e.strategy)}
	if !cfg.Procedure {
		e.motion = newMotion(rows, cols, cfg.Motion)
		e.agents = append(e.agents, hrl.Bind(e.motion))
	}
	return e, nil
}

// Config returns the configuration with its defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// Maze returns the environment's map; nil when each episode draws its own
// (GenerateConfig.PerEpisode): State.Maze has the episode's.
func (e *Env) Maze() *Maze { return e.maze }

// ObservedSize returns the size of the map in the agents' observations: the map's,
// or Config.ObsSide on both sides.
func (e *Env) ObservedSize() (rows, cols int) { return e.rows, e.cols }

// Agents returns the strategy agent, then the motion agent unless this is the procedure
// variant.
func (e *Env) Agents() []hrl.Binding[State, Action] { return e.agents }

// Machine returns the switching rules: every strategy direction hands control to the
// motion agent (or runs the walk procedure), the motion agent's end returns control to
// the strategy, and the strategy's end ends the episode.
func (e *Env) Machine() transitions.Machine[State, Action] {
	if e.cfg.Procedure {
		return transitions.Machine[State, Action]{
			Initial:   StrategyName,
			OnDone:    map[string]string{StrategyName: transitions.End},
			Triggers:  []transitions.Trigger[State, Action]{{Name: "walk", From: StrategyName, When: isChoice, Run: Walk}},
			Switching: []string{StrategyName},
		}
	}
	return transitions.Machine[State, Action]{
		Initial:   StrategyName,
		OnDone:    map[string]string{StrategyName: transitions.End, MotionName: transitions.Parent},
		Triggers:  []transitions.Trigger[State, Action]{{Name: "direction", From: StrategyName, When: isChoice, To: MotionName}},
		Switching: []string{StrategyName},
	}
}

func isChoice(a Action) bool { return a.Kind == Choose }

// InitialState puts the agent on the start tile, heading LEFT. When each episode
// draws its map (GenerateConfig.PerEpisode), it draws it with rng, which the runtime
// seeds with the episode's seed.
func (e *Env) InitialState(rng *rand.Rand) State {
	m := e.maze
	if m == nil {
		g := e.cfg.Generate
		var err error
		if m, err = Generate(rng, g.Rows, g.Cols); err != nil {
			panic(fmt.Sprintf("maze: the configuration's sides were checked: %v", err)) // broken invariant
		}
	}
	return State{Maze: m, Pos: m.start, Heading: Left}
}

// Step applies an action: a strategy choice leaves the state as it is (the motion
// agent takes the heading when it takes control); a motion step moves one tile forward
// along the heading, or backward against it except on an intersection, where backward
// stays put.
func (e *Env) Step(s State, a Action) (State, error) {
	switch a.Kind {
	case Choose:
		return s, nil
	case Step:
		return move(s, a.Move)
	}
	return s, fmt.Errorf("maze: unknown action kind %d", a.Kind)
}

// StepInPlace is Step on the state in place (hrl.InPlaceStepper); on an error it
// leaves *s as it was.
func (e *Env) StepInPlace(s *State, a *Action) error {
	switch a.Kind {
	case Choose:
		return nil
	case Step:
		d := s.Heading
		if a.Move == Backward {
			if s.Maze.Intersection(s.Pos) {
				return nil
			}
			d = d.Opposite()
		}
		if next := s.Pos.Move(d); s.Maze.Walkable(next) {
			s.Pos = next
			return nil
		}
	}
	_, err := e.Step(*s, *a) // the error, from the value path
	return err
}

// The environment steps its state in place.
var _ hrl.InPlaceStepper[State, Action] = (*Env)(nil)

func move(s State, m Move) (State, error) {
	d := s.Heading
	if m == Backward {
		if s.Maze.Intersection(s.Pos) {
			return s, nil
		}
		d = d.Opposite()
	}
	next := s.Pos.Move(d)
	if !s.Maze.Walkable(next) {
		return s, fmt.Errorf("%w: moving %s from %v", ErrWall, d, s.Pos)
	}
	s.Pos = next
	return s, nil
}

// Walk is the procedure that replaces the motion agent: it heads in the chosen direction
// and walks until it stands on an intersection or the tile ahead is a wall.
func Walk(s State, a Action) (State, error) {
	s.Heading = a.Dir
	if !s.Maze.Walkable(s.Pos.Move(s.Heading)) {
		return s, fmt.Errorf("%w: walking %s from %v", ErrWall, s.Heading, s.Pos)
	}
	for {
		s.Pos = s.Pos.Move(s.Heading)
		if s.Maze.Intersection(s.Pos) || !s.Maze.Walkable(s.Pos.Move(s.Heading)) {
			return s, nil
		}
	}
}

// Info describes the state: position as [row, col] and heading.
func (e *Env) Info(s State) any {
	return Info{Position: [2]int{s.Pos.Row, s.Pos.Col}, Heading: s.Heading.String()}
}

// The agents' names.
const (
	StrategyName = "strategy"
	MotionName   = "motion"
)

// View is what either agent derives from the state: the state and its own step count.
type View struct {
	State
	Steps int
	// open caches the agent's action mask (indexed by Direction for the strategy, by
	// Move for the motion agent) where the agents' step path (agent.InPlace) built the
	// view, for DecodeAt; TranslateState leaves it unset.
	open [4]bool
}

// StrategyObs is the strategy agent's typed observation: the map, the position and
// which directions are walkable, indexed by Direction.
type StrategyObs struct {
	Maze *Maze
	Pos  Pos
	Mask [4]bool
}

// MotionObs is the motion agent's typed observation: the map, the position and whether
// moving backward and forward is possible, indexed by Move.
type MotionObs struct {
	Maze *Maze
	Pos  Pos
	Mask [2]bool
}

// obsSpace is a Box of a rows x cols map (0..3), the position and n mask entries
// (0..1).
func obsSpace(rows, cols, n int) *spaces.Box {
	size := rows*cols + 2 + n
	low, high := make([]float32, size), make([]float32, size)
	for i := range size {
		switch k := i - rows*cols; {
		case k < 0:
			high[i] = float32(Goal)
		case k == 0:
			high[i] = float32(rows - 1)
		case k == 1:
			high[i] = float32(cols - 1)
		default:
			high[i] = 1
		}
	}
	return spaces.Must(spaces.NewBoxBounds([]int{size}, low, high))
}

// encode writes map m padded to rows x cols with walls (m at the top left), the
// position and the mask.
func encode(dst []float32, rows, cols int, m *Maze, p Pos, mask []bool) {
	n := encodeMap(dst, rows, cols, m)
	t := dst[n : n+2+len(mask)]
	t[0], t[1] = float32(p.Row), float32(p.Col)
	for i, ok := range mask {
		t[2+i] = b2f(ok)
	}
}

// encodeMap writes map m padded to rows x cols with walls (m at the top left) and
// returns rows x cols, where the position goes.
func encodeMap(dst []float32, rows, cols int, m *Maze) int {
	n := rows * cols
	if m.rows == rows && m.cols == cols {
		copy(dst, m.floats)
	} else {
		clear(dst[:n]) // walls
		for r := range m.rows {
			copy(dst[r*cols:r*cols+m.cols], m.floats[r*m.cols:(r+1)*m.cols])
		}
	}
	return n
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
