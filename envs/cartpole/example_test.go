package cartpole_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
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

// A vector of cart-poles steps them through their Kernel (Env.NewKernel, found by
// vector.New): one call per run of copies, auto-resets included, with the results of
// stepping each copy on its own.
func ExampleEnv_NewKernel() {
	ctx := context.Background()
	v, err := vector.New(4096, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{}) })
	if err != nil {
		panic(err)
	}
	if err := v.Reset(ctx, 7); err != nil {
		panic(err)
	}
	actions := make([]int64, v.Len())
	ended := 0
	for range 100 {
		for i := range actions {
			actions[i] = int64(i % 2)
		}
		if err := v.StepDiscrete(ctx, actions); err != nil {
			panic(err)
		}
		for i := range v.Len() {
			if v.Done(i) {
				ended++
			}
		}
	}
	fmt.Println("episodes ended:", ended > 0, "rows:", len(v.Obs())/v.ObsDim())
	// Output:
	// episodes ended: true rows: 4096
}
