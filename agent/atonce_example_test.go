package agent_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
)

// A line of tiles 0 to 3: a planner names the tile to go to and a walker moves a tile a
// tick towards it, done on it.
type line struct{ Pos, Target int }

// move is the planner's tile (To >= 0) or the walker's step (By).
type move struct{ To, By int }

type goPlanner struct{}

func (goPlanner) Name() string                              { return "planner" }
func (goPlanner) ObservationSpace() spaces.Space            { return spaces.Must(spaces.NewBox([]int{2}, 0, 3)) }
func (goPlanner) ActionSpace() spaces.Space                 { return spaces.Discrete{N: 4} }
func (goPlanner) TranslateState(s line, _ agent.Clock) line { return s }
func (goPlanner) Observe(s line) line                       { return s }
func (goPlanner) EncodeObservation(dst []float32, s line) {
	dst[0], dst[1] = float32(s.Pos), float32(s.Target)
}
func (goPlanner) DecodeAction(_ line, raw int64) (move, error) { return move{To: int(raw)}, nil }
func (goPlanner) Done(line) (bool, bool)                       { return false, false }
func (goPlanner) Reward(line, move, line) float64              { return 0 }

// stepper is the walker; atOnce says what its ReturnsAtOnce reports.
type stepper struct{ atOnce bool }

func (stepper) Name() string                              { return "walker" }
func (stepper) ObservationSpace() spaces.Space            { return spaces.Must(spaces.NewBox([]int{2}, 0, 3)) }
func (stepper) ActionSpace() spaces.Space                 { return spaces.Discrete{N: 1} }
func (stepper) TranslateState(s line, _ agent.Clock) line { return s }
func (stepper) Observe(s line) line                       { return s }
func (stepper) EncodeObservation(dst []float32, s line) {
	dst[0], dst[1] = float32(s.Pos), float32(s.Target)
}
func (stepper) Done(s line) (bool, bool)        { return s.Pos == s.Target, false }
func (stepper) Reward(line, move, line) float64 { return -0.1 }
func (w stepper) ReturnsAtOnce() bool           { return w.atOnce }
func (stepper) DecodeAction(s line, _ int64) (move, error) {
	switch {
	case s.Target > s.Pos:
		return move{To: -1, By: 1}, nil
	case s.Target < s.Pos:
		return move{To: -1, By: -1}, nil
	}
	return move{To: -1}, nil // on its target already: a wasted tick
}

type lineEnv struct{ walker stepper }

func (e lineEnv) Agents() []hrl.Binding[line, move] {
	return []hrl.Binding[line, move]{hrl.Bind(goPlanner{}), hrl.Bind(e.walker)}
}
func (lineEnv) Machine() transitions.Machine[line, move] {
	return transitions.Machine[line, move]{
		Initial:  "planner",
		OnDone:   map[string]string{"planner": transitions.End, "walker": transitions.Parent},
		Triggers: []transitions.Trigger[line, move]{{Name: "go", From: "planner", To: "walker"}},
	}
}
func (lineEnv) InitialState(*rand.Rand) line { return line{} }
func (lineEnv) Step(s line, m move) (line, error) {
	if m.To >= 0 {
		s.Target = m.To
	} else {
		s.Pos += m.By
	}
	return s, nil
}

// The planner sends the walker to tile 0, where it stands, then to tile 1. By default
// the walker takes control not done and wastes a tick; one that returns at once hands
// control back in the planner's own step, and the planner's decision spans 1 tick.
func ExampleAtOnceReturner() {
	for _, atOnce := range []bool{false, true} {
		fmt.Println("ReturnsAtOnce:", atOnce)
		rt, err := hrl.New(hrl.HierarchicalEnv[line, move](lineEnv{stepper{atOnce}}), hrl.Config{})
		if err != nil {
			panic(err)
		}
		res, _ := rt.Reset(1)
		for _, tile := range []int64{0, 1} {
			if res, err = rt.Step("planner_0", agent.Discrete(tile)); err != nil {
				panic(err)
			}
			for {
				for _, r := range res.Reports {
					fmt.Printf("  tick %d %-9s start %-5v done %-5v span %d\n", res.Tick, r.AgentID, r.Start, r.Done(), r.SpanTicks)
				}
				if res.Next == "planner_0" {
					break
				}
				if res, err = rt.Step(res.Next, agent.Discrete(0)); err != nil {
					panic(err)
				}
			}
		}
	}
	// Output:
	// ReturnsAtOnce: false
	//   tick 1 walker_0  start true  done false span 0
	//   tick 2 walker_0  start false done true  span 1
	//   tick 2 planner_0 start false done false span 2
	//   tick 3 walker_1  start true  done false span 0
	//   tick 4 walker_1  start false done true  span 1
	//   tick 4 planner_0 start false done false span 2
	// ReturnsAtOnce: true
	//   tick 1 walker_0  start true  done true  span 0
	//   tick 1 planner_0 start false done false span 1
	//   tick 2 walker_1  start true  done false span 0
	//   tick 3 walker_1  start false done true  span 1
	//   tick 3 planner_0 start false done false span 2
}
