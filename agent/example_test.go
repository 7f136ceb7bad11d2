package agent_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// A random policy over four moves, with a mask that leaves only two of them open.
func ExampleRandom() {
	ctx := context.Background()
	moves := spaces.Discrete{N: 4} // 0 up, 1 right, 2 down, 3 left
	p, err := agent.Random(moves, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	open := []bool{false, true, false, true} // only right and left are open

	counts := make([]int, moves.N)
	for range 1000 {
		a, err := p.Act(ctx, nil, open)
		if err != nil {
			panic(err)
		}
		counts[a.Int]++
	}
	fmt.Println("up:", counts[0], "right:", counts[1] > 0, "down:", counts[2], "left:", counts[3] > 0)

	// The same seed plays the same actions.
	a, _ := agent.Random(moves, rand.New(rand.NewPCG(9, 9)))
	b, _ := agent.Random(moves, rand.New(rand.NewPCG(9, 9)))
	same := true
	for range 100 {
		x, _ := a.Act(ctx, nil, nil)
		y, _ := b.Act(ctx, nil, nil)
		same = same && x.Int == y.Int
	}
	fmt.Println("same seed, same actions:", same)

	_, err = p.Act(ctx, nil, []bool{false, false, false, false})
	fmt.Println(err)
	fmt.Println(errors.Is(err, spaces.ErrEmptyMask))
	// Output:
	// up: 0 right: true down: 0 left: true
	// same seed, same actions: true
	// agent: random policy: spaces: mask allows no value
	// true
}

func ExampleScripted() {
	ctx := context.Background()
	s := agent.Scripted(agent.Discrete(1), agent.Discrete(1), agent.Discrete(3))
	for range 4 {
		a, err := s.Act(ctx, nil, nil)
		if errors.Is(err, agent.ErrScriptEnded) {
			fmt.Println(err)
			break
		}
		fmt.Println(a)
	}

	s.Rewind()
	s.Loop = true
	var played []string
	for range 5 {
		a, _ := s.Act(ctx, nil, nil)
		played = append(played, a.String())
	}
	fmt.Println(played)
	// Output:
	// 1
	// 1
	// 3
	// agent: scripted policy has no more actions (played 3)
	// [1 1 3 1 1]
}

// A greedy policy: the allowed action with the highest score in the observation.
func ExamplePolicyFunc() {
	greedy := agent.PolicyFunc(func(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
		best := -1
		for i, score := range obs {
			if (mask == nil || mask[i]) && (best < 0 || score > obs[best]) {
				best = i
			}
		}
		if best < 0 {
			return agent.RawAction{}, errors.New("no allowed action")
		}
		return agent.Discrete(int64(best)), nil
	})

	ctx := context.Background()
	scores := []float32{0.1, 0.7, 0.4, 0.9}
	for _, mask := range [][]bool{nil, {true, true, true, false}, slices.Repeat([]bool{false}, 4)} {
		a, err := greedy.Act(ctx, scores, mask)
		fmt.Println(a, err)
	}
	// Output:
	// 3 <nil>
	// 1 <nil>
	// 0 no allowed action
}
