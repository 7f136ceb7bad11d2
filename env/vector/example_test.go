package vector_test

import (
	"context"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/examples/cartpole"
)

// Eight cart-poles stepped in lockstep by two workers, with a batched policy that
// pushes each cart toward the side its pole leans to: it balances for a while, until
// the cart drifts off the track, or the 50-step time limit. Episodes that end are reset in the
// same step; their last observations are in FinalObs.
func Example() {
	ctx := context.Background()
	v, err := vector.New(8, func(int) (env.Env, error) {
		return cartpole.NewEnv(cartpole.Config{MaxSteps: 50})
	}, vector.WithWorkers(2))
	if err != nil {
		panic(err)
	}
	defer v.Close()

	lean := vector.BatchPolicyFunc(func(_ context.Context, b vector.Batch, actions []agent.RawAction) error {
		for r := range b.Len() {
			obs := b.Row(r) // x, x_dot, theta, theta_dot
			actions[r] = agent.Discrete(cartpole.PushLeft)
			if obs[2] > 0 {
				actions[r] = agent.Discrete(cartpole.PushRight)
			}
		}
		return nil
	})
	actions := make([]agent.RawAction, v.Len())
	if err := v.Reset(ctx, 1); err != nil {
		panic(err)
	}
	steps, terminated, truncated := 0, 0, 0
	for range 250 {
		if err := lean.ActBatch(ctx, v.Batch(), actions); err != nil {
			panic(err)
		}
		if err := v.Step(ctx, actions); err != nil {
			panic(err)
		}
		for i := range v.Len() {
			steps++
			switch {
			case v.Terminated()[i]:
				terminated++
			case v.Truncated()[i]:
				truncated++
			}
		}
	}
	fmt.Printf("%d steps, %d episodes terminated, %d truncated\n", steps, terminated, truncated)
	fmt.Println("copy 0 is in episode", v.Episodes()[0])
	// Output:
	// 2000 steps, 35 episodes terminated, 9 truncated
	// copy 0 is in episode 7
}
