package transitions_test

import (
	"fmt"

	"github.com/batonrl/baton/transitions"
)

// Action is the action type of the examples: a strategy agent's choice of direction.
type Action int

func isMove(a Action) bool { return a >= 0 && a < 4 }

// The maze's machine: every direction the strategy agent picks hands control to the
// motion agent, which hands it back when its sub-episode ends.
func ExampleCompile() {
	m := transitions.Machine[struct{}, Action]{
		Initial: "strategy",
		OnDone: map[string]string{
			"strategy": transitions.End,
			"motion":   transitions.Parent,
		},
		Triggers: []transitions.Trigger[struct{}, Action]{
			{Name: "direction", From: "strategy", When: isMove, To: "motion"},
		},
		Switching: []string{"strategy"},
	}
	tab, err := transitions.Compile(m, []string{"strategy", "motion"})
	if err != nil {
		fmt.Println(err)
		return
	}
	agents := tab.Agents()
	fmt.Println("agents:", agents)
	fmt.Println("initial:", agents[tab.Initial()])
	for i, name := range agents {
		switch next := tab.OnDone(i); next {
		case transitions.DoneEnd:
			fmt.Printf("%s done: end\n", name)
		case transitions.DoneParent:
			fmt.Printf("%s done: parent\n", name)
		default:
			fmt.Printf("%s done: %s\n", name, agents[next])
		}
	}
	tr, to, ok := tab.Match(tab.Index("strategy"), 2)
	fmt.Println("action 2:", tr.Name, agents[to], ok)
	// Output:
	// agents: [strategy motion]
	// initial: strategy
	// strategy done: end
	// motion done: parent
	// action 2: direction motion true
}

// Compile reports every problem at once; Errors splits them.
func ExampleErrors() {
	m := transitions.Machine[struct{}, Action]{
		Initial: "strategy",
		OnDone:  map[string]string{"strategy": transitions.End}, // motion is missing
		Triggers: []transitions.Trigger[struct{}, Action]{
			{Name: "direction", From: "strategy", When: isMove, To: "motor"}, // a typo
		},
	}
	_, err := transitions.Compile(m, []string{"strategy", "motion"})
	for _, e := range transitions.Errors(err) {
		fmt.Println(e)
	}
	// Output:
	// transitions: rule "on-done": agent "motion": no on-done entry: say which agent takes control when its sub-episode ends, Parent or End
	// transitions: rule "direction": agent "strategy": target "motor" is not an agent of the environment
}

func ExampleMachine_Mermaid() {
	m := transitions.Machine[struct{}, Action]{
		Initial: "strategy",
		OnDone: map[string]string{
			"strategy": transitions.End,
			"motion":   transitions.Parent,
		},
		Triggers: []transitions.Trigger[struct{}, Action]{
			{Name: "direction", From: "strategy", When: isMove, To: "motion"},
		},
	}
	fmt.Print(m.Mermaid())
	// Output:
	// stateDiagram-v2
	//     state "motion" as s_motion
	//     state "strategy" as s_strategy
	//     [*] --> s_strategy
	//     s_strategy --> s_motion: direction
	//     s_motion --> s_strategy: done (return)
	//     s_strategy --> [*]: done
}
