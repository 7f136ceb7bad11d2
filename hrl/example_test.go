package hrl_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
)

// A corridor of tiles 0..6: a planner picks how far the next leg goes (1 to 3 tiles)
// and a walker steps there. The planner is rewarded when a leg ends at the exit.
type corridor struct{ Pos, Target int }

// leg is the decoded action: the planner's leg length, or 0 for a walker's step.
type leg struct{ N int }

type planner struct{}

func (planner) Name() string                                 { return "planner" }
func (planner) ObservationSpace() spaces.Space               { return spaces.Must(spaces.NewBox([]int{1}, 0, 6)) }
func (planner) ActionSpace() spaces.Space                    { return spaces.Discrete{N: 3} }
func (planner) TranslateState(s corridor, _ agent.Clock) int { return s.Pos }
func (planner) Observe(pos int) int                          { return pos }
func (planner) EncodeObservation(dst []float32, pos int)     { dst[0] = float32(pos) }
func (planner) DecodeAction(_ int, a int64) (leg, error)     { return leg{int(a) + 1}, nil }
func (planner) Done(pos int) (bool, bool)                    { return pos == 6, false }
func (planner) Reward(_ int, _ leg, pos int) float64 {
	if pos == 6 {
		return 1 // the leg ended at the exit
	}
	return 0
}

type walker struct{}

func (walker) Name() string                                      { return "walker" }
func (walker) ObservationSpace() spaces.Space                    { return spaces.Must(spaces.NewBox([]int{2}, 0, 9)) }
func (walker) ActionSpace() spaces.Space                         { return spaces.Discrete{N: 1} }
func (walker) TranslateState(s corridor, _ agent.Clock) corridor { return s }
func (walker) Observe(s corridor) corridor                       { return s }
func (walker) EncodeObservation(dst []float32, s corridor) {
	dst[0], dst[1] = float32(s.Pos), float32(s.Target)
}
func (walker) DecodeAction(corridor, int64) (leg, error) { return leg{}, nil }
func (walker) Done(s corridor) (bool, bool)              { return s.Pos >= s.Target, false }
func (walker) Reward(corridor, leg, corridor) float64    { return -0.1 }
func (walker) OnTakesControl(s corridor, sw agent.Switch[leg]) corridor {
	s.Target = min(s.Pos+sw.Action.N, 6)
	return s
}

type hall struct{}

func (hall) Agents() []hrl.Binding[corridor, leg] {
	return []hrl.Binding[corridor, leg]{hrl.Bind(planner{}), hrl.Bind(walker{})}
}
func (hall) Machine() transitions.Machine[corridor, leg] {
	return transitions.Machine[corridor, leg]{
		Initial:  "planner",
		OnDone:   map[string]string{"planner": transitions.End, "walker": transitions.Parent},
		Triggers: []transitions.Trigger[corridor, leg]{{Name: "leg", From: "planner", To: "walker"}},
	}
}
func (hall) InitialState(*rand.Rand) corridor { return corridor{} }
func (hall) Step(s corridor, a leg) (corridor, error) {
	if a.N == 0 {
		s.Pos++
	}
	return s, nil
}

func Example() {
	rt, err := hrl.New(hrl.HierarchicalEnv[corridor, leg](hall{}), hrl.Config{})
	if err != nil {
		panic(err)
	}
	res, err := rt.Reset(1)
	if err != nil {
		panic(err)
	}
	for !res.Over {
		a := agent.Discrete(0)
		if res.Next == "planner_0" {
			a = agent.Discrete(2) // legs of 3 tiles
		}
		if res, err = rt.Step(res.Next, a); err != nil {
			panic(err)
		}
		for _, r := range res.Reports {
			fmt.Printf("tick %d %-9s reward %4.1f span %d done %v\n", res.Tick, r.AgentID, r.Reward, r.SpanTicks, r.Done())
		}
	}
	// Output:
	// tick 1 walker_0  reward  0.0 span 0 done false
	// tick 2 walker_0  reward -0.1 span 1 done false
	// tick 3 walker_0  reward -0.1 span 1 done false
	// tick 4 walker_0  reward -0.1 span 1 done true
	// tick 4 planner_0 reward  0.0 span 4 done false
	// tick 5 walker_1  reward  0.0 span 0 done false
	// tick 6 walker_1  reward -0.1 span 1 done false
	// tick 7 walker_1  reward -0.1 span 1 done false
	// tick 8 walker_1  reward -0.1 span 1 done true
	// tick 8 planner_0 reward  1.0 span 4 done true
}

// AgentDone asks an agent's Done in the view it is reported in: here, whether each
// walker is already done as it takes control, the check hrltest makes.
func ExampleRuntime_AgentDone() {
	rt, err := hrl.New(hrl.HierarchicalEnv[corridor, leg](hall{}), hrl.Config{})
	if err != nil {
		panic(err)
	}
	res, _ := rt.Reset(1)
	for !res.Over {
		a := agent.Discrete(0)
		if res.Next == "planner_0" {
			a = agent.Discrete(2)
		}
		if res, err = rt.Step(res.Next, a); err != nil {
			panic(err)
		}
		for _, r := range res.Reports {
			if r.Start {
				term, trunc, _ := rt.AgentDone(r.AgentID)
				fmt.Printf("tick %d %s takes control, done: %v\n", res.Tick, r.AgentID, term || trunc)
			}
		}
	}
	term, _, ok := rt.AgentDone("planner_0")
	fmt.Println("planner_0 terminated at the end:", term, ok)
	// Output:
	// tick 1 walker_0 takes control, done: false
	// tick 5 walker_1 takes control, done: false
	// planner_0 terminated at the end: true true
}
