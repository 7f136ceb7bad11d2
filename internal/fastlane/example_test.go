package fastlane_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/internal/fastlane"
)

// A vector of four cart-poles over buffers the caller owns (in the library, numpy's
// arrays): every step lands in them; a bad action changes nothing.
func ExampleNewSingle() {
	ctx := context.Background()
	reg, err := catalog.New()
	if err != nil {
		panic(err)
	}
	const n = 4
	b := vector.Buffers{
		Obs: make([]float32, n*4), FinalObs: make([]float32, n*4),
		Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n),
	}
	s, err := fastlane.NewSingle(reg, "cartpole", nil, n, 1, b)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := s.Reset(ctx, 1); err != nil {
		panic(err)
	}
	if err := s.Step(ctx, []int64{0, 1, 0, 1}); err != nil {
		panic(err)
	}
	fmt.Println(b.Rewards, b.Terminated)
	fmt.Println(s.Step(ctx, []int64{0, 1, 5, 1}))
	// Output:
	// [1 1 1 1] [false false false false]
	// fastlane: bad action: copy 2: agent cartpole: action 5: outside Discrete(2, start=0)
}

// Four cart-poles stepped in the background by two workers. Recv returns the
// copies in the order they finished, which timing decides; a batch of all four
// holds each once.
func ExampleNewAsync() {
	ctx := context.Background()
	reg, err := catalog.New()
	if err != nil {
		panic(err)
	}
	const n = 4
	out := fastlane.AsyncBatch{
		IDs: make([]int64, n), Obs: make([]float32, n*4), FinalObs: make([]float32, n*4),
		Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n),
	}
	a, err := fastlane.NewAsync(reg, "cartpole", nil, n, 2, n, out)
	if err != nil {
		panic(err)
	}
	defer a.Close()
	recv := func() {
		for { // wait in slices, as a caller that handles interrupts does
			ok, err := a.Recv(ctx, 50*time.Millisecond)
			if err != nil {
				panic(err)
			}
			if ok {
				return
			}
		}
	}
	if err := a.Reset(ctx, 1); err != nil {
		panic(err)
	}
	recv()
	if err := a.Send([]int64{0, 1, 0, 1}, out.IDs); err != nil {
		panic(err)
	}
	recv()
	fmt.Println(slices.Sorted(slices.Values(out.IDs)), out.Rewards)
	// Output:
	// [0 1 2 3] [1 1 1 1]
}

// A vector of four cart-poles recording its steps into an activity log: each
// episode of each copy is a trial of one episode, and the log is readable once the
// recording ends.
func ExampleSingle_Record() {
	ctx := context.Background()
	reg, err := catalog.New()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "fastlog-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	const n = 4
	b := vector.Buffers{
		Obs: make([]float32, n*4), FinalObs: make([]float32, n*4),
		Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n),
	}
	s, err := fastlane.NewSingle(reg, "cartpole", nil, n, 1, b)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := s.Record(fastlane.Recording{Dir: dir, Policies: map[string]string{"cartpole": "left"}}); err != nil {
		panic(err)
	}
	if err := s.Reset(ctx, 1); err != nil {
		panic(err)
	}
	for range 30 { // always left: every pole falls within 30 steps
		if err := s.Step(ctx, make([]int64, n)); err != nil {
			panic(err)
		}
	}
	if err := s.CloseLog(); err != nil {
		panic(err)
	}
	l, err := datalog.Open(dir)
	if err != nil {
		panic(err)
	}
	episodes, err := l.Episodes()
	if err != nil {
		panic(err)
	}
	trials, err := l.Trials()
	if err != nil {
		panic(err)
	}
	fmt.Println(len(trials) > n, len(episodes) == len(trials)-n, trials[0].Policies["cartpole"])
	// Output:
	// true true left
}
