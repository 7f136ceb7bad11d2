package fastlane

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
)

// AsyncBatch is where an Async's Recv writes a batch of B copies: their ids, and the
// rows of their results in that order (B rows of ObsDim for Obs and FinalObs, of
// MaskLen for Masks, nil without a mask; B elements for the rest). As with
// vector.Buffers, the memory may be the caller's C memory; it must stay valid until
// the Async is closed.
type AsyncBatch struct {
	IDs                   []int64
	Obs, FinalObs         []float32
	Masks                 []bool
	Rewards               []float64
	Terminated, Truncated []bool
}

// Async is N copies of a single-agent environment stepped in the background by
// worker goroutines, in the manner of EnvPool's and PufferLib's asynchronous mode:
// Send queues actions for some copies and returns at once; Recv waits for the first
// B (the batch size) copies whose step is done, in the order they finished, and
// writes their ids and results into the caller's AsyncBatch. Reset queues a reset of
// every copy.
//
// Each copy resets itself when its episode ends, in the same step, as vector.Env does
// (its final observation in the batch's FinalObs row), and its k-th episode has the
// seed vector.EpisodeSeed(seed, i, k): a copy's trajectory depends on its seed and
// its actions only, never on timing or on the number of workers, though the order
// in which copies come back does.
//
// A copy that fails (an error, a panic, recovered) comes back as a Recv error naming
// it (a *vector.CopyError); the other copies go on, and the failed one waits for
// ResetCopies. An Async is not safe for concurrent use: one goroutine calls its
// methods (Handles.Do makes sure of it). Close stops the workers and waits for them.
type Async struct {
	async
	layout  Layout
	agent   *AgentLayout
	dim, ml int
	envs    []env.Env
	direct  []env.DiscreteStepper

	// Each copy's rows (see async).
	obs, final []float32
	masks      []bool
	rewards    []float64
	term       []bool
	trunc      []bool
	out        AsyncBatch
}

// NewAsync makes n copies of the named single-agent environment stepped by workers
// goroutines (0 means 1), whose Recv returns batches of batch copies (0 means n)
// written into out, whose lengths must fit batch copies. The copies must be reset
// (Reset) before their first Send.
func NewAsync(reg *registry.Registry, name string, config []byte, n, workers, batch int, out AsyncBatch) (*Async, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	if l.Kind != KindSingle {
		return nil, fmt.Errorf("%w: %s is a multi-agent environment (agents %s); make it with NewAsyncMulti", ErrArgument, name, names(l))
	}
	workers, batch, err = asyncArgs(n, workers, batch)
	if err != nil {
		return nil, err
	}
	a := &Async{layout: l, out: out}
	a.agent = &a.layout.Agents[0]
	a.dim, a.ml = a.agent.ObsDim, a.agent.MaskLen
	if err := errors.Join(
		sameSize("ids", len(out.IDs), batch), sameSize("obs", len(out.Obs), batch*a.dim),
		sameSize("final_obs", len(out.FinalObs), batch*a.dim), sameSize("masks", len(out.Masks), batch*a.ml),
		sameSize("rewards", len(out.Rewards), batch), sameSize("terminated", len(out.Terminated), batch),
		sameSize("truncated", len(out.Truncated), batch)); err != nil {
		return nil, err
	}
	a.envs = make([]env.Env, n)
	direct := true
	for i := range n {
		m, err := f.NewEnv(registry.EnvOptions{})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: copy %d: %w", ErrConfig, name, i, err)
		}
		e, ok := single(m)
		if !ok {
			return nil, fmt.Errorf("%w: %s: copy %d is not a single-agent environment", ErrConfig, name, i)
		}
		a.envs[i] = e
		_, ok = e.(env.DiscreteStepper)
		direct = direct && ok
	}
	if direct {
		a.direct = make([]env.DiscreteStepper, n)
		for i, e := range a.envs {
			a.direct[i] = e.(env.DiscreteStepper)
		}
	}
	a.obs, a.final = make([]float32, n*a.dim), make([]float32, n*a.dim)
	a.masks = make([]bool, n*a.ml)
	a.rewards, a.term, a.trunc = make([]float64, n), make([]bool, n), make([]bool, n)
	a.stepOne, a.resetOne, a.act, a.gather = a.stepCopy, a.resetCopy, a.check, a.gatherRows
	a.start(n, workers, batch)
	return a, nil
}

// Layout returns the environment's layout.
func (a *Async) Layout() Layout { return a.layout }

// Agent returns the agent's name, for Failures.
func (a *Async) Agent(int) string { return a.agent.Name }

func (a *Async) check(i int, x int64) error {
	var mask []bool
	if a.ml > 0 {
		mask = a.masks[i*a.ml : (i+1)*a.ml]
	}
	return a.agent.check(i, x, mask)
}

// gatherRows writes the pending copies into the batch.
func (a *Async) gatherRows(pending []int) {
	o, d, m := &a.out, a.dim, a.ml
	for r, i := range pending {
		o.IDs[r] = int64(i)
		copy(o.Obs[r*d:(r+1)*d], a.obs[i*d:(i+1)*d])
		copy(o.FinalObs[r*d:(r+1)*d], a.final[i*d:(i+1)*d])
		if m > 0 {
			copy(o.Masks[r*m:(r+1)*m], a.masks[i*m:(i+1)*m])
		}
		o.Rewards[r], o.Terminated[r], o.Truncated[r] = a.rewards[i], a.term[i], a.trunc[i]
	}
}

func (a *Async) resetCopy(i int) error {
	a.rewards[i], a.term[i], a.trunc[i] = 0, false, false
	return a.restart(i)
}

func (a *Async) stepCopy(i int) (err error) {
	op := vector.OpStep
	d := a.dim
	obs := a.obs[i*d : (i+1)*d : (i+1)*d]
	var mask []bool
	if m := a.ml; m > 0 {
		mask = a.masks[i*m : (i+1)*m : (i+1)*m]
	}
	var r float64
	var term, trunc bool
	if a.direct != nil {
		r, term, trunc, err = a.direct[i].StepDiscrete(a.actions[i], obs, mask)
		if err != nil {
			return &vector.CopyError{Copy: i, Op: op, Err: err}
		}
	} else {
		st, err := a.envs[i].Step(agent.Discrete(a.actions[i]))
		if err != nil {
			return &vector.CopyError{Copy: i, Op: op, Err: err}
		}
		if err := a.put(i, op, st.Obs, st.Mask); err != nil {
			return err
		}
		r, term, trunc = st.Reward, st.Terminated, st.Truncated
	}
	a.rewards[i], a.term[i], a.trunc[i] = r, term, trunc
	if term || trunc {
		copy(a.final[i*d:(i+1)*d], obs)
		return a.restart(i)
	}
	return nil
}

// restart resets copy i into its next episode.
func (a *Async) restart(i int) error {
	k := a.episodes[i] + 1
	st, err := a.envs[i].Reset(vector.EpisodeSeed(a.base, i, k))
	if err != nil {
		return &vector.CopyError{Copy: i, Op: vector.OpReset, Err: err}
	}
	a.episodes[i] = k
	return a.put(i, vector.OpReset, st.Obs, st.Mask)
}

func (a *Async) put(i int, op vector.Op, obs []float32, mask []bool) error {
	d, m := a.dim, a.ml
	if len(obs) != d || len(mask) != m {
		return &vector.CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: observation of %d (want %d), mask of %d (want %d)", vector.ErrShape, len(obs), d, len(mask), m)}
	}
	copy(a.obs[i*d:(i+1)*d], obs)
	copy(a.masks[i*m:(i+1)*m], mask)
	return nil
}
