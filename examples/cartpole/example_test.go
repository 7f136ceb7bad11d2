package cartpole_test

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/examples/cartpole"
)

// One episode of CartPole-v1 with a simple balancing rule: push the cart toward the
// side the pole is falling to. It lasts until the time limit.
func Example() {
	e, err := cartpole.NewEnv(cartpole.Config{})
	if err != nil {
		panic(err)
	}
	st, err := e.Reset(42)
	if err != nil {
		panic(err)
	}
	steps, ret := 0, 0.0
	for !st.Done() {
		a := cartpole.PushLeft
		if st.Obs[2]+0.5*st.Obs[3] > 0 { // pole angle and angular velocity
			a = cartpole.PushRight
		}
		if st, err = e.Step(agent.Discrete(a)); err != nil {
			panic(err)
		}
		steps++
		ret += st.Reward
	}
	fmt.Printf("length %d, return %.0f, terminated %t, truncated %t\n", steps, ret, st.Terminated, st.Truncated)
	// Output:
	// length 500, return 500, terminated false, truncated true
}

// Dynamics is the physics alone, for a hand-written loop: from rest, pushing right
// tips the pole over to the left within a few steps.
func ExampleDynamics() {
	s := cartpole.State{}
	n := 0
	for !s.Terminated() {
		s = cartpole.Dynamics(s, cartpole.PushRight, cartpole.Euler)
		n++
	}
	fmt.Printf("terminated after %d steps: x %.3f, theta %.3f\n", n, s.X, s.Theta)
	// Output:
	// terminated after 9 steps: x 0.141, theta -0.215
}
