package hrltest_test

import (
	"errors"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
)

// A key-and-door corridor of tiles 0 to 5: a planner picks a subgoal (the key on tile
// 1, the door on tile 3, the exit on tile 5) and a walker moves a tile a tick towards
// it. The planner refuses the exit until the walker has picked up the key. Nothing
// stops the planner from picking the tile the walker stands on: the walker then takes
// control already done. Each knob changes how the environment deals with that.
type keyKnobs struct {
	atOnce      bool // the walker (and the relay) return control at once
	refuseHere  bool // the planner refuses, and masks, the subgoal the walker stands on
	startAtExit bool // episodes start on the exit, where the planner is done
	relay       bool // the walker's on-done rule hands control to a relay, another walker
	cycle       bool // the walker and the relay hand control to each other
}

const (
	keyTile  = 1
	doorTile = 3
	exitTile = 5
)

var subgoals = [3]int{keyTile, doorTile, exitTile}

type keyState struct {
	Pos, Target int
	Key         bool
}

type keyAction struct {
	Planner bool
	Target  int // the planner's subgoal
	Move    int // the walker's step
}

type keyView struct {
	keyState
	agent.Clock
}

var keyObs = spaces.Must(spaces.NewBox([]int{3}, 0, exitTile))

func encodeKeys(dst []float32, s keyState) {
	dst[0], dst[1], dst[2] = float32(s.Pos), float32(s.Target), 0
	if s.Key {
		dst[2] = 1
	}
}

var (
	errLocked = errors.New("the door is locked: fetch the key first")
	errHere   = errors.New("the walker stands on that subgoal")
)

type keyPlanner struct{ k *keyKnobs }

func (keyPlanner) Name() string                                     { return "planner" }
func (keyPlanner) ObservationSpace() spaces.Space                   { return keyObs }
func (keyPlanner) ActionSpace() spaces.Space                        { return spaces.Discrete{N: 3} }
func (keyPlanner) TranslateState(s keyState, c agent.Clock) keyView { return keyView{s, c} }
func (keyPlanner) Observe(v keyView) keyState                       { return v.keyState }
func (keyPlanner) EncodeObservation(dst []float32, s keyState)      { encodeKeys(dst, s) }
func (keyPlanner) Done(v keyView) (bool, bool)                      { return v.Pos == exitTile, v.Steps >= 12 }
func (keyPlanner) Reward(_ keyView, _ keyAction, next keyView) float64 {
	if next.Pos == exitTile {
		return 1
	}
	return 0
}

func (p keyPlanner) DecodeAction(v keyView, raw int64) (keyAction, error) {
	switch goal := subgoals[raw]; {
	case goal == exitTile && !v.Key:
		return keyAction{}, errLocked
	case p.k.refuseHere && goal == v.Pos:
		return keyAction{}, errHere
	default:
		return keyAction{Planner: true, Target: goal}, nil
	}
}

func (p keyPlanner) ActionMask(v keyView, dst []bool) {
	for i, goal := range subgoals {
		dst[i] = (goal != exitTile || v.Key) && (!p.k.refuseHere || goal != v.Pos)
	}
}

// keyWalker steps towards the target; it is done on it.
type keyWalker struct {
	name string
	k    *keyKnobs
}

func (w keyWalker) Name() string                                    { return w.name }
func (keyWalker) ObservationSpace() spaces.Space                    { return keyObs }
func (keyWalker) ActionSpace() spaces.Space                         { return spaces.Discrete{N: 1} }
func (keyWalker) TranslateState(s keyState, _ agent.Clock) keyState { return s }
func (keyWalker) Observe(s keyState) keyState                       { return s }
func (keyWalker) EncodeObservation(dst []float32, s keyState)       { encodeKeys(dst, s) }
func (keyWalker) Done(s keyState) (bool, bool)                      { return s.Pos == s.Target, false }
func (keyWalker) Reward(keyState, keyAction, keyState) float64      { return -0.1 }
func (w keyWalker) ReturnsAtOnce() bool                             { return w.k.atOnce }
func (keyWalker) DecodeAction(s keyState, _ int64) (keyAction, error) {
	switch {
	case s.Target > s.Pos:
		return keyAction{Move: 1}, nil
	case s.Target < s.Pos:
		return keyAction{Move: -1}, nil
	}
	return keyAction{}, nil
}

type keyEnv struct{ k *keyKnobs }

func (e keyEnv) Agents() []hrl.Binding[keyState, keyAction] {
	agents := []hrl.Binding[keyState, keyAction]{hrl.Bind(keyPlanner{e.k}), hrl.Bind(keyWalker{"walker", e.k})}
	if e.k.relay || e.k.cycle {
		agents = append(agents, hrl.Bind(keyWalker{"relay", e.k}))
	}
	if e.k.cycle {
		agents = append(agents, hrl.Bind(keyWalker{"porter", e.k}))
	}
	return agents
}

func (e keyEnv) Machine() transitions.Machine[keyState, keyAction] {
	m := transitions.Machine[keyState, keyAction]{
		Initial:   "planner",
		OnDone:    map[string]string{"planner": transitions.End, "walker": transitions.Parent},
		Triggers:  []transitions.Trigger[keyState, keyAction]{{Name: "go", From: "planner", To: "walker"}},
		Switching: []string{"planner"},
	}
	switch {
	case e.k.cycle:
		// The porter, never called, is the walker's path to the end that the machine needs.
		m.OnDone["walker"], m.OnDone["relay"], m.OnDone["porter"] = "relay", "walker", transitions.End
		m.Triggers = append(m.Triggers, transitions.Trigger[keyState, keyAction]{
			Name: "porter", From: "walker", To: "porter", When: func(keyAction) bool { return false }})
	case e.k.relay:
		m.OnDone["walker"], m.OnDone["relay"] = "relay", transitions.Parent
	}
	return m
}

func (e keyEnv) InitialState(*rand.Rand) keyState {
	if e.k.startAtExit {
		return keyState{Pos: exitTile, Key: true}
	}
	return keyState{}
}

func (keyEnv) Step(s keyState, a keyAction) (keyState, error) {
	if a.Planner {
		s.Target = a.Target
		return s, nil
	}
	if s.Pos+a.Move > doorTile && !s.Key {
		return s, errLocked
	}
	s.Pos += a.Move
	if s.Pos == keyTile {
		s.Key = true
	}
	return s, nil
}

func newKeyEnv(k keyKnobs) func() hrl.HierarchicalEnv[keyState, keyAction] {
	return func() hrl.HierarchicalEnv[keyState, keyAction] { return keyEnv{&k} }
}
