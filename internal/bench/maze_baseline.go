package bench

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/envs/maze"
)

// Errors of MazeLoop.Step.
var (
	// ErrEpisodeOver: Step was called before Reset or after the episode ended.
	ErrEpisodeOver = errors.New("bench: episode is over")
	// ErrInvalidAction: the action is outside the acting agent's action space or walks
	// into a wall.
	ErrInvalidAction = errors.New("bench: invalid action")
)

// MazeReport is what one agent sees in one step of a MazeLoop; its fields mean what
// the fields of the same names in env.Report mean. Obs and Mask belong to the loop and
// stay valid until its next Step or Reset.
type MazeReport struct {
	AgentID, Agent, ParentID string
	Obs                      []float32
	Mask                     []bool
	Reward                   float64
	Terminated, Truncated    bool
	Start                    bool
	SpanTicks                int
}

// MazeResult is what a MazeLoop's Reset or Step returns, laid out as env.Turn.
// Its slices belong to the loop and stay valid until its next Step or Reset.
type MazeResult struct {
	// Reports lists the agents reported in the step: one, or, when a motion
	// sub-episode ends, the motion agent and then the strategy agent it returns to.
	Reports []MazeReport
	// Next is the id of the agent that acts next, "" when the episode is over.
	Next string
	// Over reports the end of the episode.
	Over bool
	// Tick counts steps since the reset.
	Tick int
}

// Acting returns the report of the agent that acts next (always the last one), or nil
// when the episode is over.
func (r *MazeResult) Acting() *MazeReport {
	if r.Over || len(r.Reports) == 0 {
		return nil
	}
	return &r.Reports[len(r.Reports)-1]
}

// MazeLoop is the maze example's strategy-and-motion environment (reference/maze.md)
// written by hand, without the hrl runtime: one struct, one switch on the acting agent,
// the rules inlined. It is the baseline the maze benchmarks measure the framework
// against, so it does the work the runtime does for maze.Env in every step: it checks
// the action, moves, counts steps, scores the motion move and, when a motion
// sub-episode ends, the strategy's whole decision with its span, and writes the flat
// observation and action mask of every agent reported (the acting agent, and the
// motion agent's last observation when its sub-episode ends) into buffers it reuses.
// It uses the maze package only for the map (maze.Maze's Walkable and Intersection, as
// the maze agents do).
//
// A MazeLoop is not safe for concurrent use.
type MazeLoop struct {
	maze        *maze.Maze
	floats      []float32 // the map, row-major, as the agents encode it
	strategyMax int
	motionMax   int
	goalReward  float64
	rightReward float64
	wrongReward float64
	motionIDs   []string // "motion_k", grown as episodes need

	started, over bool
	motion        bool // the motion agent acts; else the strategy agent
	pos           maze.Pos
	heading       maze.Direction
	strategySteps int
	motionSteps   int
	motionK       int // motion sub-episodes ended this episode
	tick          int
	actedTick     int // tick of the strategy's pending decision

	reports [2]MazeReport
	obs     [2][]float32
	mask    [2][]bool
}

// NewMazeLoop returns a loop over the map m with the agents' configuration; zero
// fields take the defaults maze.NewEnv gives them. Call Reset before the first Step.
func NewMazeLoop(m *maze.Maze, strategy maze.StrategyConfig, motion maze.MotionConfig) (*MazeLoop, error) {
	if m == nil {
		return nil, errors.New("bench: nil maze")
	}
	if strategy.MaxSteps < 0 || motion.MaxSteps < 0 {
		return nil, fmt.Errorf("bench: max steps %d (strategy) and %d (motion); want 0 (default) or more", strategy.MaxSteps, motion.MaxSteps)
	}
	l := &MazeLoop{
		maze:        m,
		floats:      make([]float32, m.Rows()*m.Cols()),
		strategyMax: orDefault(strategy.MaxSteps, maze.DefaultStrategyMaxSteps),
		motionMax:   orDefault(motion.MaxSteps, maze.DefaultMotionMaxSteps),
		goalReward:  deref(strategy.GoalReward, maze.DefaultGoalReward),
		rightReward: deref(motion.RightReward, maze.DefaultRightReward),
		wrongReward: deref(motion.WrongReward, maze.DefaultWrongReward),
	}
	for r := range m.Rows() {
		for c := range m.Cols() {
			l.floats[r*m.Cols()+c] = float32(m.At(maze.Pos{Row: r, Col: c}))
		}
	}
	for i := range l.obs {
		l.obs[i] = make([]float32, len(l.floats)+2+4)
		l.mask[i] = make([]bool, 4)
	}
	return l, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// Maze returns the loop's map.
func (l *MazeLoop) Maze() *maze.Maze { return l.maze }

const strategyID = maze.StrategyName + "_0"

// Reset starts an episode on the start tile heading LEFT and reports the strategy
// agent's first observation. The maze's initial state is fixed, so there is no seed.
func (l *MazeLoop) Reset() MazeResult {
	l.started, l.over, l.motion = true, false, false
	l.pos, l.heading = l.maze.StartPos(), maze.Left
	l.strategySteps, l.motionSteps, l.motionK, l.tick = 0, 0, 0, 0
	rep := l.observeStrategy(0)
	rep.Start = true
	return l.result(1)
}

// Step applies the acting agent's action: a direction (0..3) for the strategy agent,
// 0 (backward) or 1 (forward) for the motion agent. An action outside the space or
// into a wall returns an error wrapping ErrInvalidAction and changes nothing.
func (l *MazeLoop) Step(action int64) (MazeResult, error) {
	if !l.started || l.over {
		return MazeResult{}, ErrEpisodeOver
	}
	if !l.motion {
		// The strategy hands control to the motion agent with the chosen heading.
		d := maze.Direction(action)
		if action < 0 || action >= 4 || !l.maze.Walkable(l.pos.Move(d)) {
			return MazeResult{}, fmt.Errorf("%w: strategy direction %d at %v", ErrInvalidAction, action, l.pos)
		}
		l.tick++
		l.actedTick = l.tick - 1
		l.motion, l.heading, l.motionSteps = true, d, 0
		rep := l.observeMotion(0)
		rep.Start = true
		return l.result(1), nil
	}

	// A motion move: forward along the heading, backward against it, except that
	// backward stands still on an intersection.
	d := l.heading
	if action == int64(maze.Backward) {
		d = d.Opposite()
	}
	if action < 0 || action >= 2 || !l.maze.Walkable(l.pos.Move(d)) {
		return MazeResult{}, fmt.Errorf("%w: motion move %d at %v", ErrInvalidAction, action, l.pos)
	}
	if action == int64(maze.Forward) || !l.maze.Intersection(l.pos) {
		l.pos = l.pos.Move(d)
	}
	l.tick++
	l.motionSteps++
	rep := l.observeMotion(0)
	rep.SpanTicks = 1
	rep.Reward = l.wrongReward
	if action == int64(maze.Forward) {
		rep.Reward = l.rightReward
	}
	if l.maze.Intersection(l.pos) || !l.maze.Walkable(l.pos.Move(l.heading)) {
		rep.Terminated = true
	} else {
		rep.Truncated = l.motionSteps >= l.motionMax
	}
	if !rep.Terminated && !rep.Truncated {
		return l.result(1), nil
	}

	// The motion sub-episode is over: control returns to the strategy, whose decision
	// is scored over the whole span.
	l.motion = false
	l.motionK++
	l.strategySteps++
	srep := l.observeStrategy(1)
	srep.SpanTicks = l.tick - l.actedTick
	if l.pos == l.maze.GoalPos() {
		srep.Reward, srep.Terminated = l.goalReward, true
	} else {
		srep.Truncated = l.strategySteps >= l.strategyMax
	}
	l.over = srep.Terminated || srep.Truncated
	return l.result(2), nil
}

func (l *MazeLoop) result(n int) MazeResult {
	res := MazeResult{Reports: l.reports[:n], Over: l.over, Tick: l.tick}
	if !l.over {
		res.Next = l.reports[n-1].AgentID
	}
	return res
}

// observeStrategy fills report slot n with the strategy agent's observation: the map,
// the position and which of the four directions are walkable, also its action mask.
func (l *MazeLoop) observeStrategy(n int) *MazeReport {
	mask := l.mask[n][:4]
	for d := range maze.Direction(4) {
		mask[d] = l.maze.Walkable(l.pos.Move(d))
	}
	l.reports[n] = MazeReport{AgentID: strategyID, Agent: maze.StrategyName, Obs: l.encode(n, mask), Mask: mask}
	return &l.reports[n]
}

// observeMotion fills report slot n with the motion agent's observation: the map, the
// position and whether backward and forward are walkable, also its action mask.
func (l *MazeLoop) observeMotion(n int) *MazeReport {
	mask := l.mask[n][:2]
	mask[maze.Backward] = l.maze.Walkable(l.pos.Move(l.heading.Opposite()))
	mask[maze.Forward] = l.maze.Walkable(l.pos.Move(l.heading))
	for len(l.motionIDs) <= l.motionK {
		l.motionIDs = append(l.motionIDs, fmt.Sprintf("%s_%d", maze.MotionName, len(l.motionIDs)))
	}
	l.reports[n] = MazeReport{AgentID: l.motionIDs[l.motionK], Agent: maze.MotionName, ParentID: strategyID, Obs: l.encode(n, mask), Mask: mask}
	return &l.reports[n]
}

// encode writes the map, the position and the mask as floats into slot n's buffer.
func (l *MazeLoop) encode(n int, mask []bool) []float32 {
	obs := l.obs[n][:len(l.floats)+2+len(mask)]
	k := copy(obs, l.floats)
	obs[k], obs[k+1] = float32(l.pos.Row), float32(l.pos.Col)
	for i, ok := range mask {
		obs[k+2+i] = 0
		if ok {
			obs[k+2+i] = 1
		}
	}
	return obs
}
