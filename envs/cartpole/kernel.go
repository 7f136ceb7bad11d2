package cartpole

import (
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
)

var _ vector.Batcher = (*Env)(nil)

// NewKernel returns a vector.Kernel that steps copies, which must all be distinct
// *Env of one configuration with e among them, none already in a Kernel; otherwise it
// returns nil. A vector (env/vector) calls it once, when it is built, and then steps
// the cart-poles in runs: the Kernel keeps their slots (state, step count, whether an
// episode runs) in one contiguous array, streamed in copy order, and each copy's
// Env reads and writes its slot there from then on, so that the copies' own Reset,
// Step, State and Render see what the Kernel did. Stepping through the Kernel gives
// the results StepDiscrete and Reset give, to the bit.
//
// A copy stays in its Kernel for its life; an Env is not safe for concurrent use,
// and a Kernel steps copies only when the vector holding it is stepped.
func (e *Env) NewKernel(copies []env.Env) vector.Kernel {
	k := &kernel{envs: make([]*Env, len(copies)), slots: make([]slot, len(copies)), cfg: e.cfg}
	seen := make(map[*Env]bool, len(copies))
	for i, c := range copies {
		ce, ok := c.(*Env)
		if !ok || ce.cfg != e.cfg || ce.inBatch || seen[ce] {
			return nil
		}
		seen[ce] = true
		k.envs[i] = ce
	}
	if !seen[e] {
		return nil
	}
	for i, ce := range k.envs {
		k.slots[i] = *ce.sl
		ce.sl, ce.inBatch = &k.slots[i], true
	}
	return k
}

// kernel steps cart-poles whose slots it holds, copy i's at slots[i].
type kernel struct {
	envs  []*Env
	slots []slot
	cfg   Config
}

// block is how many copies Step takes at a time: it computes their sines and cosines
// in one loop, then the rest of their steps in another. Each loop's iterations are
// independent and short, so the processor overlaps several of them (the polynomials,
// the divisions of the physics), which one long loop body does not let it do.
const block = 64

// Step steps copies s.Lo to s.Hi-1: see vector.Kernel.
func (k *kernel) Step(s vector.KernelStep) (failed int) {
	for lo := s.Lo; lo < s.Hi; lo += block {
		failed += k.step(&s, lo, min(lo+block, s.Hi))
	}
	return failed
}

// step steps copies lo to hi-1, at most block of them.
func (k *kernel) step(s *vector.KernelStep, lo, hi int) (failed int) {
	slots := k.slots[lo:hi:hi]
	actions := s.Actions[lo:hi:hi]
	obs := s.Obs[4*lo : 4*hi : 4*hi]
	rewards := s.Rewards[lo:hi:hi]
	term := s.Terminated[lo+s.Shift : hi+s.Shift : hi+s.Shift]
	trunc := s.Truncated[lo+s.Shift : hi+s.Shift : hi+s.Shift]
	in, limit := k.cfg.Integrator, k.cfg.MaxSteps
	var sins, coss [block]float64
	for j := range slots {
		sins[j], coss[j] = sincos(slots[j].state.Theta)
	}
	for j := range slots {
		sl, a := &slots[j], actions[j]
		if !sl.live || uint64(a) > 1 {
			s.Errs[lo+j] = k.invalid(lo+j, a)
			failed++
			continue
		}
		st := dynamics(sl.state, sins[j], coss[j], a, in)
		steps := sl.steps + 1
		te := st.Terminated()
		tr := !te && steps >= limit
		o := obs[4*j : 4*j+4 : 4*j+4]
		st.Obs(o)
		rewards[j] = 1
		term[j], trunc[j] = te, tr
		if !te && !tr {
			sl.state, sl.steps = st, steps
			continue
		}
		i := lo + j
		copy(s.Final[4*i:4*i+4], o)
		ep := s.Episodes[i] + 1
		seed := vector.EpisodeSeed(s.Seed, i, ep)
		st = firstState(seed)
		*sl = slot{state: st, live: true}
		st.Obs(o)
		s.Episodes[i], s.Seeds[i] = ep, seed
	}
	return failed
}

// invalid returns the error of StepDiscrete for copy i and action a.
func (k *kernel) invalid(i int, a int64) error {
	e := k.envs[i]
	if !e.sl.live {
		return ErrEpisodeOver
	}
	return e.invalid(agent.Discrete(a))
}
