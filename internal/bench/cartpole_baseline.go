package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
)

// CoinFlips is the random policy of the cart-pole benchmarks, on both sides: fair coin
// flips, 64 from each draw of one PCG generator, so that choosing an action costs next
// to nothing next to the physics. The vector benchmarks use one CoinFlips for the whole
// batch, row after row, and the baseline one for its steps, so both draw the same
// actions in the same order. Not safe for concurrent use.
type CoinFlips struct {
	pcg  rand.PCG
	bits uint64
	left int
}

// NewCoinFlips returns coin flips seeded by seed.
func NewCoinFlips(seed uint64) *CoinFlips {
	c := &CoinFlips{}
	c.pcg.Seed(seed, 0)
	return c
}

// Next returns the next flip: cartpole.PushLeft (0) or cartpole.PushRight (1).
func (c *CoinFlips) Next() int64 {
	if c.left == 0 {
		c.bits, c.left = c.pcg.Uint64(), 64
	}
	b := int64(c.bits & 1)
	c.bits >>= 1
	c.left--
	return b
}

// Fill writes the next len(dst) flips into dst, the flips Next would return one after
// the other, a word of 64 at a time: a batched policy's cost, small next to a tick.
func (c *CoinFlips) Fill(dst []int64) {
	for len(dst) > 0 && c.left > 0 {
		dst[0] = c.Next()
		dst = dst[1:]
	}
	for len(dst) >= 64 {
		bits := c.pcg.Uint64()
		for j := range dst[:64] {
			dst[j] = int64(bits >> j & 1)
		}
		dst = dst[64:]
	}
	for j := range dst {
		dst[j] = c.Next()
	}
}

// CartPoleLoop is CartPole-v1 (cartpole.Config{}: the Euler integrator, the 500-step
// limit) written by hand: one struct, the physics called directly, no env.Env, no
// action check, no vector. It is the baseline BenchmarkVectorCartPole is measured
// against, so it does the work a copy of the vector does, as copy 0 of a vector does
// it: each Step runs cartpole.Dynamics and State.Terminated, counts the step, writes
// the float32 observation into Obs and, when the episode ends, writes the final
// observation into FinalObs and resets at once (the vector's same-step auto-reset)
// with the next seed vector.EpisodeSeed(seed, 0, k), drawing the initial state as
// cartpole.Env.Reset does. TestCartPoleLoopMatchesVector checks it against a vector of
// one copy, step by step.
type CartPoleLoop struct {
	state    cartpole.State
	steps    int
	maxSteps int
	pcg      *rand.PCG
	rng      *rand.Rand
	seed     uint64
	episode  int

	// Obs is the current observation; FinalObs the last one of the episode that ended in
	// the last step (stale otherwise).
	Obs, FinalObs [4]float32
	// Reward, Terminated and Truncated describe the last step.
	Reward                float64
	Terminated, Truncated bool
}

// ErrLoopConfig is returned by NewCartPoleLoop for a negative step limit.
var ErrLoopConfig = errors.New("bench: invalid cart-pole loop")

// NewCartPoleLoop returns a loop that truncates episodes after maxSteps steps, 0
// meaning cartpole.DefaultMaxSteps. Call Reset before Step.
func NewCartPoleLoop(maxSteps int) (*CartPoleLoop, error) {
	if maxSteps < 0 {
		return nil, fmt.Errorf("%w: %d steps", ErrLoopConfig, maxSteps)
	}
	if maxSteps == 0 {
		maxSteps = cartpole.DefaultMaxSteps
	}
	pcg := rand.NewPCG(0, 0)
	return &CartPoleLoop{maxSteps: maxSteps, pcg: pcg, rng: rand.New(pcg)}, nil
}

// Reset starts episode 0, seeded as copy 0 of a vector reset with seed.
func (l *CartPoleLoop) Reset(seed uint64) {
	l.seed, l.episode = seed, 0
	l.begin(vector.EpisodeSeed(seed, 0, 0))
}

func (l *CartPoleLoop) begin(seed uint64) {
	l.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
	const lo, hi = cartpole.ResetLow, cartpole.ResetHigh
	l.state = cartpole.State{
		X:        lo + float64((hi-lo)*l.rng.Float64()),
		XDot:     lo + float64((hi-lo)*l.rng.Float64()),
		Theta:    lo + float64((hi-lo)*l.rng.Float64()),
		ThetaDot: lo + float64((hi-lo)*l.rng.Float64()),
	}
	l.steps = 0
	l.Reward, l.Terminated, l.Truncated = 0, false, false
	l.state.Obs(l.Obs[:])
}

// Step pushes the cart (1 right, anything else left) and resets when the episode
// ends.
func (l *CartPoleLoop) Step(action int64) {
	l.state = cartpole.Dynamics(l.state, action, cartpole.Euler)
	l.steps++
	l.Reward = 1
	l.Terminated = l.state.Terminated()
	l.Truncated = !l.Terminated && l.steps >= l.maxSteps
	if !l.Terminated && !l.Truncated {
		l.state.Obs(l.Obs[:])
		return
	}
	l.state.Obs(l.FinalObs[:])
	l.episode++
	term, trunc := l.Terminated, l.Truncated
	l.begin(vector.EpisodeSeed(l.seed, 0, l.episode))
	l.Reward, l.Terminated, l.Truncated = 1, term, trunc
}

// Episode returns the index of the current episode: 0 after Reset, plus one per
// auto-reset.
func (l *CartPoleLoop) Episode() int { return l.episode }
