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
	cfg      Config
	maze     *Maze
	strategy *Strategy
	motion   *Motion
	agents   []hrl.Binding[State, Action]
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
	e := &Env{cfg: cfg, maze: m, strategy: NewStrategy(m, cfg.Strategy)}
	e.agents = []hrl.Binding[State, Action]{hrl.Bind(e.strategy)}
	if !cfg.Procedure {
		e.motion = NewMotion(m, cfg.Motion)
		e.agents = append(e.agents, hrl.Bind(e.motion))
	}
	return e, nil
}

// Config returns the configuration with its defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// Maze returns the environment's map.
func (e *Env) Maze() *Maze { return e.maze }

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

// InitialState puts the agent on the start tile, heading LEFT.
func (e *Env) InitialState(*rand.Rand) State {
	return State{Maze: e.maze, Pos: e.maze.start, Heading: Left}
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

// obsSpace is a Box of the map (0..3), the position and n mask entries (0..1).
func obsSpace(m *Maze, n int) *spaces.Box {
	size := m.rows*m.cols + 2 + n
	low, high := make([]float32, size), make([]float32, size)
	for i := range size {
		switch k := i - m.rows*m.cols; {
		case k < 0:
			high[i] = float32(Goal)
		case k == 0:
			high[i] = float32(m.rows - 1)
		case k == 1:
			high[i] = float32(m.cols - 1)
		default:
			high[i] = 1
		}
	}
	return spaces.Must(spaces.NewBoxBounds([]int{size}, low, high))
}

func encode(dst []float32, m *Maze, p Pos, mask []bool) {
	n := copy(dst, m.floats)
	dst[n], dst[n+1] = float32(p.Row), float32(p.Col)
	for i, ok := range mask {
		dst[n+2+i] = b2f(ok)
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
