package maze

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Strategy is the initial agent: at each decision it picks a walkable direction, which
// hands control to the motion agent. It is done at the goal (terminated) or after
// MaxSteps decisions (truncated), and rewarded GoalReward when the decision ends on the
// goal.
type Strategy struct {
	cfg        StrategyConfig
	obs, act   spaces.Space
	rows, cols int // of the map in the observation
}

// NewStrategy returns the strategy agent for a maze; zero fields of cfg take defaults.
func NewStrategy(m *Maze, cfg StrategyConfig) *Strategy { return newStrategy(m.rows, m.cols, cfg) }

// newStrategy returns the strategy agent observing maps padded to rows x cols.
func newStrategy(rows, cols int, cfg StrategyConfig) *Strategy {
	return &Strategy{cfg: cfg.withDefaults(), obs: obsSpace(rows, cols, 4), act: spaces.Discrete{N: 4}, rows: rows, cols: cols}
}

// Name returns "strategy".
func (*Strategy) Name() string { return StrategyName }

// ObservationSpace is a Box of the map, the position and four direction-mask entries.
func (s *Strategy) ObservationSpace() spaces.Space { return s.obs }

// ActionSpace is Discrete(4): UP, RIGHT, DOWN, LEFT.
func (s *Strategy) ActionSpace() spaces.Space { return s.act }

// TranslateState pairs the state with the strategy's decision count.
func (*Strategy) TranslateState(s State, c agent.Clock) View { return View{State: s, Steps: c.Steps} }

// Observe returns the map, the position and which directions are walkable.
func (*Strategy) Observe(v View) StrategyObs {
	o := StrategyObs{Maze: v.Maze, Pos: v.Pos}
	directionMask(v.State, o.Mask[:])
	return o
}

// EncodeObservation writes the map, the position and the 4-entry direction mask.
func (s *Strategy) EncodeObservation(dst []float32, o StrategyObs) {
	encode(dst, s.rows, s.cols, o.Maze, o.Pos, o.Mask[:])
}

// ActionMask marks the walkable directions.
func (*Strategy) ActionMask(v View, dst []bool) { directionMask(v.State, dst) }

// EncodeView writes the observation and the mask in one pass (agent.ViewEncoder).
func (s *Strategy) EncodeView(v View, obs []float32, mask []bool) {
	directionMask(v.State, mask)
	encode(obs, s.rows, s.cols, v.Maze, v.Pos, mask)
}

func directionMask(s State, dst []bool) {
	for d := range Direction(4) {
		dst[d] = s.Maze.Walkable(s.Pos.Move(d))
	}
}

// DecodeAction turns a direction into a Choose action; a direction into a wall is an
// error wrapping ErrWall.
func (*Strategy) DecodeAction(v View, raw int64) (Action, error) {
	d := Direction(raw)
	if !v.Maze.Walkable(v.Pos.Move(d)) {
		return Action{}, fmt.Errorf("%w: strategy chose %s at %v", ErrWall, d, v.Pos)
	}
	return Action{Kind: Choose, Dir: d}, nil
}

// Done: terminated on the goal, truncated after MaxSteps decisions.
func (s *Strategy) Done(v View) (terminated, truncated bool) {
	if v.Pos == v.Maze.goal {
		return true, false
	}
	return false, v.Steps >= s.cfg.MaxSteps
}

// Reward is GoalReward when the decision ends on the goal, else 0.
func (s *Strategy) Reward(_ View, _ Action, next View) float64 {
	if next.Pos == next.Maze.goal {
		return *s.cfg.GoalReward
	}
	return 0
}

// ObserveTo, SettleTo and DecodeAt are the strategy's step path on views by pointer
// (agent.InPlace): the bodies of its own methods, called directly so that they inline.
// TestInPlaceMatchesAgent checks them against those methods.

// ObserveTo writes the strategy's view, its observation and its mask.
func (s *Strategy) ObserveTo(v *View, st *State, c *agent.Clock, out *agent.Out) {
	s.observeTo(v, st, c, out)
}

// SettleTo writes the view, observation and mask of a decision's end and scores it.
func (s *Strategy) SettleTo(next *View, st *State, c *agent.Clock, _ *View, _ *Action, out *agent.Out) (float64, bool, bool) {
	s.observeTo(next, st, c, out)
	if next.Pos == next.Maze.goal { // Done and Reward
		return *s.cfg.GoalReward, true, false
	}
	return 0, false, c.Steps >= s.cfg.MaxSteps
}

// observeTo is TranslateState, then EncodeView, with the mask kept in the view for
// DecodeAt.
func (s *Strategy) observeTo(v *View, st *State, c *agent.Clock, out *agent.Out) {
	v.State, v.Steps = *st, c.Steps
	m, p := st.Maze, st.Pos
	for d := range Direction(4) {
		v.open[d] = m.Walkable(p.Move(d))
	}
	copy(out.Mask[:4], v.open[:])
	n := encodeMap(out.Obs, s.rows, s.cols, m)
	t := out.Obs[n : n+6]
	t[0], t[1] = float32(p.Row), float32(p.Col)
	t[2], t[3], t[4], t[5] = b2f(v.open[0]), b2f(v.open[1]), b2f(v.open[2]), b2f(v.open[3])
}

// DecodeAt is DecodeAction on a view by pointer, with the mask ObserveTo or SettleTo
// kept in it; the error comes from DecodeAction.
func (s *Strategy) DecodeAt(v *View, raw int64) (Action, error) {
	if d := Direction(raw); d >= 0 && d < 4 && v.open[d] {
		return Action{Kind: Choose, Dir: d}, nil
	}
	return s.DecodeAction(*v, raw)
}

// Motion walks the heading the strategy chose, one tile per action: forward along it or
// backward against it (standing still on an intersection). It is done after MaxSteps
// moves (truncated), or (terminated) on an intersection after at least one move or when
// the tile ahead is a wall. Forward earns RightReward, backward WrongReward.
type Motion struct {
	cfg        MotionConfig
	obs, act   spaces.Space
	rows, cols int // of the map in the observation
}

// NewMotion returns the motion agent for a maze; zero fields of cfg take defaults.
func NewMotion(m *Maze, cfg MotionConfig) *Motion { return newMotion(m.rows, m.cols, cfg) }

// newMotion returns the motion agent observing maps padded to rows x cols.
func newMotion(rows, cols int, cfg MotionConfig) *Motion {
	return &Motion{cfg: cfg.withDefaults(), obs: obsSpace(rows, cols, 2), act: spaces.Discrete{N: 2}, rows: rows, cols: cols}
}

// Name returns "motion".
func (*Motion) Name() string { return MotionName }

// ObservationSpace is a Box of the map, the position and the [backward, forward] mask.
func (m *Motion) ObservationSpace() spaces.Space { return m.obs }

// ActionSpace is Discrete(2): 0 backward, 1 forward.
func (m *Motion) ActionSpace() spaces.Space { return m.act }

// TranslateState pairs the state with the motion agent's move count.
func (*Motion) TranslateState(s State, c agent.Clock) View { return View{State: s, Steps: c.Steps} }

// Observe returns the map, the position and whether backward and forward are walkable.
func (*Motion) Observe(v View) MotionObs {
	o := MotionObs{Maze: v.Maze, Pos: v.Pos}
	moveMask(v.State, o.Mask[:])
	return o
}

// EncodeObservation writes the map, the position and the 2-entry move mask.
func (m *Motion) EncodeObservation(dst []float32, o MotionObs) {
	encode(dst, m.rows, m.cols, o.Maze, o.Pos, o.Mask[:])
}

// ActionMask marks the walkable moves.
func (*Motion) ActionMask(v View, dst []bool) { moveMask(v.State, dst) }

// EncodeView writes the observation and the mask in one pass (agent.ViewEncoder).
func (m *Motion) EncodeView(v View, obs []float32, mask []bool) {
	moveMask(v.State, mask)
	encode(obs, m.rows, m.cols, v.Maze, v.Pos, mask)
}

func moveMask(s State, dst []bool) {
	dst[Backward] = s.Maze.Walkable(s.Pos.Move(s.Heading.Opposite()))
	dst[Forward] = s.Maze.Walkable(s.Pos.Move(s.Heading))
}

// DecodeAction turns 0 and 1 into backward and forward moves; a move into a wall is an
// error wrapping ErrWall.
func (*Motion) DecodeAction(v View, raw int64) (Action, error) {
	m := Move(raw)
	d := v.Heading
	if m == Backward {
		d = d.Opposite()
	}
	if !v.Maze.Walkable(v.Pos.Move(d)) {
		return Action{}, fmt.Errorf("%w: motion moved %s (%s) at %v", ErrWall, m, d, v.Pos)
	}
	return Action{Kind: Step, Move: m}, nil
}

// OnTakesControl takes the heading from the strategy's choice.
func (*Motion) OnTakesControl(s State, sw agent.Switch[Action]) State {
	if sw.Action.Kind == Choose {
		s.Heading = sw.Action.Dir
	}
	return s
}

// Done: terminated on an intersection after a move or facing a wall; truncated after
// MaxSteps moves.
func (m *Motion) Done(v View) (terminated, truncated bool) {
	if v.Steps >= 1 && v.Maze.Intersection(v.Pos) || !v.Maze.Walkable(v.Pos.Move(v.Heading)) {
		return true, false
	}
	return false, v.Steps >= m.cfg.MaxSteps
}

// Reward is RightReward for a forward move and WrongReward for a backward one, or, with
// ProgressReward set, ProgressReward times the moves the step took off the distance to
// the goal.
func (m *Motion) Reward(v View, a Action, next View) float64 {
	if p := m.cfg.ProgressReward; p != nil {
		return progress(*p, v.Maze, v.Pos, next.Pos)
	}
	if a.Move == Forward {
		return *m.cfg.RightReward
	}
	return *m.cfg.WrongReward
}

// ObserveTo, SettleTo and DecodeAt are the motion agent's step path on views by pointer
// (agent.InPlace): the bodies of its own methods, called directly so that they inline.

// ObserveTo writes the motion agent's view, its observation and its mask.
func (m *Motion) ObserveTo(v *View, st *State, c *agent.Clock, out *agent.Out) {
	m.observeTo(v, st, c, out)
}

// SettleTo writes the view, observation and mask after a move and scores the move.
func (m *Motion) SettleTo(next *View, st *State, c *agent.Clock, prev *View, a *Action, out *agent.Out) (float64, bool, bool) {
	m.observeTo(next, st, c, out)
	reward := *m.cfg.WrongReward // Reward
	if p := m.cfg.ProgressReward; p != nil {
		reward = progress(*p, prev.Maze, prev.Pos, next.Pos)
	} else if a.Move == Forward {
		reward = *m.cfg.RightReward
	}
	// Done, with the tile ahead the mask found.
	if c.Steps >= 1 && st.Maze.Intersection(st.Pos) || !next.open[Forward] {
		return reward, true, false
	}
	return reward, false, c.Steps >= m.cfg.MaxSteps
}

// observeTo is TranslateState, then EncodeView, with the mask kept in the view for
// DecodeAt and Done.
func (m *Motion) observeTo(v *View, st *State, c *agent.Clock, out *agent.Out) {
	v.State, v.Steps = *st, c.Steps
	mz, p, h := st.Maze, st.Pos, st.Heading
	behind, ahead := mz.Walkable(p.Move(h.Opposite())), mz.Walkable(p.Move(h))
	v.open[Backward], v.open[Forward] = behind, ahead
	mask := out.Mask[:2]
	mask[Backward], mask[Forward] = behind, ahead
	n := encodeMap(out.Obs, m.rows, m.cols, mz)
	t := out.Obs[n : n+4]
	t[0], t[1], t[2], t[3] = float32(p.Row), float32(p.Col), b2f(behind), b2f(ahead)
}

// DecodeAt is DecodeAction on a view by pointer, with the mask ObserveTo or SettleTo
// kept in it; the error comes from DecodeAction.
func (m *Motion) DecodeAt(v *View, raw int64) (Action, error) {
	if mv := Move(raw); mv >= 0 && mv < 2 && v.open[mv] {
		return Action{Kind: Step, Move: mv}, nil
	}
	return m.DecodeAction(*v, raw)
}

// NewStepper returns the strategy's step path bound into one runtime
// (agent.StepperMaker): its InPlace methods on views it keeps.
func (s *Strategy) NewStepper() agent.Stepper[State, Action] { return &strategyStepper{s: s} }

type strategyStepper struct {
	s     *Strategy
	views agent.Views[View]
}

func (t *strategyStepper) Observe(st *State, c *agent.Clock, out *agent.Out) {
	next, _ := t.views.Report()
	t.s.observeTo(next, st, c, out)
}

func (t *strategyStepper) Settle(st *State, c *agent.Clock, a *Action, out *agent.Out) (float64, bool, bool) {
	next, prev := t.views.Report()
	return t.s.SettleTo(next, st, c, prev, a, out)
}

func (t *strategyStepper) DecodeInt(raw int64, dst *Action) (err error) {
	*dst, err = t.s.DecodeAt(t.views.Decide(), raw)
	return err
}

// NewStepper returns the motion agent's step path bound into one runtime
// (agent.StepperMaker): its InPlace methods on views it keeps.
func (m *Motion) NewStepper() agent.Stepper[State, Action] { return &motionStepper{m: m} }

type motionStepper struct {
	m     *Motion
	views agent.Views[View]
}

func (t *motionStepper) Observe(st *State, c *agent.Clock, out *agent.Out) {
	next, _ := t.views.Report()
	t.m.observeTo(next, st, c, out)
}

func (t *motionStepper) Settle(st *State, c *agent.Clock, a *Action, out *agent.Out) (float64, bool, bool) {
	next, prev := t.views.Report()
	return t.m.SettleTo(next, st, c, prev, a, out)
}

func (t *motionStepper) DecodeInt(raw int64, dst *Action) (err error) {
	*dst, err = t.m.DecodeAt(t.views.Decide(), raw)
	return err
}

// The agents do the step path's work in place.
var (
	_ agent.InPlace[State, View, int64, Action] = (*Strategy)(nil)
	_ agent.InPlace[State, View, int64, Action] = (*Motion)(nil)
	_ agent.StepperMaker[State, Action]         = (*Strategy)(nil)
	_ agent.StepperMaker[State, Action]         = (*Motion)(nil)
)

// progress is reward times the moves a step from p to q took off the distance to the
// goal: +reward, -reward, or 0 where either end cannot reach the goal.
func progress(reward float64, m *Maze, p, q Pos) float64 {
	dp, dq := m.Distance(p), m.Distance(q)
	if dp < 0 || dq < 0 {
		return 0
	}
	return reward * float64(dp-dq)
}
