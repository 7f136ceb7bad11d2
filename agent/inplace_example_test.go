package agent_test

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/transitions"
)

// inPlaceWalker is the walker of ExampleAtOnceReturner with agent.InPlace: the same
// methods, called directly on views passed by pointer.
type inPlaceWalker struct{ stepper }

func (w inPlaceWalker) ObserveTo(v *line, s *line, c *agent.Clock, out *agent.Out) {
	*v = w.TranslateState(*s, *c)
	w.EncodeObservation(out.Obs, w.Observe(*v))
}

func (w inPlaceWalker) SettleTo(next *line, s *line, c *agent.Clock, prev *line, a *move, out *agent.Out) (float64, bool, bool) {
	w.ObserveTo(next, s, c, out)
	terminated, truncated := w.Done(*next)
	return w.Reward(*prev, *a, *next), terminated, truncated
}

func (w inPlaceWalker) DecodeAt(v *line, raw int64) (move, error) { return w.DecodeAction(*v, raw) }

type inPlaceLineEnv struct{ lineEnv }

func (inPlaceLineEnv) Agents() []hrl.Binding[line, move] {
	return []hrl.Binding[line, move]{hrl.Bind(goPlanner{}), hrl.Bind(inPlaceWalker{})}
}

func (e inPlaceLineEnv) Machine() transitions.Machine[line, move] { return e.lineEnv.Machine() }

// The runtime steps the walker through its InPlace; with hrl.Config.NoInPlace, through
// its Agent methods. The results are the same.
func ExampleInPlace() {
	for _, noInPlace := range []bool{false, true} {
		rt, err := hrl.New(hrl.HierarchicalEnv[line, move](inPlaceLineEnv{}), hrl.Config{NoInPlace: noInPlace})
		if err != nil {
			panic(err)
		}
		res, _ := rt.Reset(1)
		if res, err = rt.Step("planner_0", agent.Discrete(2)); err != nil {
			panic(err)
		}
		for res.Next != "planner_0" {
			if res, err = rt.Step(res.Next, agent.Discrete(0)); err != nil {
				panic(err)
			}
		}
		for _, r := range res.Reports {
			fmt.Printf("NoInPlace %-5v tick %d %-9s obs %v reward %.1f done %v\n", noInPlace, res.Tick, r.AgentID, r.Obs, r.Reward, r.Done())
		}
	}
	// Output:
	// NoInPlace false tick 3 walker_0  obs [2 2] reward -0.1 done true
	// NoInPlace false tick 3 planner_0 obs [2 2] reward 0.0 done false
	// NoInPlace true  tick 3 walker_0  obs [2 2] reward -0.1 done true
	// NoInPlace true  tick 3 planner_0 obs [2 2] reward 0.0 done false
}

// stepperWalker is inPlaceWalker with an agent.Stepper: its InPlace methods on the views
// the stepper keeps.
type stepperWalker struct{ inPlaceWalker }

func (w stepperWalker) NewStepper() agent.Stepper[line, move] {
	return &walkerStepper{w: w.inPlaceWalker}
}

type walkerStepper struct {
	w     inPlaceWalker
	views agent.Views[line]
}

func (s *walkerStepper) Observe(st *line, c *agent.Clock, out *agent.Out) {
	next, _ := s.views.Report()
	s.w.ObserveTo(next, st, c, out)
}

func (s *walkerStepper) Settle(st *line, c *agent.Clock, a *move, out *agent.Out) (float64, bool, bool) {
	next, prev := s.views.Report()
	return s.w.SettleTo(next, st, c, prev, a, out)
}

func (s *walkerStepper) DecodeInt(raw int64, dst *move) (err error) {
	*dst, err = s.w.DecodeAt(s.views.Decide(), raw)
	return err
}

type stepperLineEnv struct{ lineEnv }

func (stepperLineEnv) Agents() []hrl.Binding[line, move] {
	return []hrl.Binding[line, move]{hrl.Bind(goPlanner{}), hrl.Bind(stepperWalker{})}
}

func (e stepperLineEnv) Machine() transitions.Machine[line, move] { return e.lineEnv.Machine() }

// The runtime steps the walker through the Stepper it makes; with hrl.Config.NoInPlace,
// through its Agent methods. The results are the same.
func ExampleStepperMaker() {
	for _, noInPlace := range []bool{false, true} {
		rt, err := hrl.New(hrl.HierarchicalEnv[line, move](stepperLineEnv{}), hrl.Config{NoInPlace: noInPlace})
		if err != nil {
			panic(err)
		}
		res, _ := rt.Reset(1)
		if res, err = rt.Step("planner_0", agent.Discrete(2)); err != nil {
			panic(err)
		}
		for res.Next != "planner_0" {
			if res, err = rt.Step(res.Next, agent.Discrete(0)); err != nil {
				panic(err)
			}
		}
		for _, r := range res.Reports {
			fmt.Printf("NoInPlace %-5v tick %d %-9s obs %v reward %.1f done %v\n", noInPlace, res.Tick, r.AgentID, r.Obs, r.Reward, r.Done())
		}
	}
	// Output:
	// NoInPlace false tick 3 walker_0  obs [2 2] reward -0.1 done true
	// NoInPlace false tick 3 planner_0 obs [2 2] reward 0.0 done false
	// NoInPlace true  tick 3 walker_0  obs [2 2] reward -0.1 done true
	// NoInPlace true  tick 3 planner_0 obs [2 2] reward 0.0 done false
}
