package vector

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
	"go.uber.org/multierr"
)

// Env steps N copies of a single-agent env.Env in lockstep into contiguous buffers,
// resetting each copy whose episode ends in the same step (see the package
// documentation, "Auto-reset"). Create it with New; Close it when done if it has
// workers.
//
// The slices its accessors return belong to the Env: they are the same buffers for the
// Env's life, overwritten by every Reset and Step, and the caller must not write to
// them. An Env is not safe for concurrent use: one goroutine calls Reset, Step and
// Close, whatever the number of workers.
type Env struct {
	n, dim, mlen int
	spec         env.Spec
	cfg          config
	envs         []env.Env
	// direct holds the copies as env.DiscreteStepper when the action space is
	// Discrete and every copy is one; nil otherwise.
	direct []env.DiscreteStepper
	// kernel steps the copies in runs for StepDiscrete when copy 0 is a Batcher
	// that made one; nil otherwise. ks holds what every call of it shares.
	kernel Kernel
	ks     KernelStep
	fns    [OpReset + 1]func(i int) error
	lockstep

	copies  []int
	obs     []float32
	final   []float32
	masks   []bool
	rewards []float64
	term    []bool
	trunc   []bool
	// With workers, each worker writes its copies' flags apart, worker w's part of
	// termW and truncW padded to 64 bytes: copy i's flags at termW[i+shift[w]] and
	// truncW[i+shift[w]]. The caller gathers them into term and trunc after each
	// Step. A []bool holds 64 copies to a cache line, which the workers would
	// otherwise share, at the cost of the line moving between CPUs at every write.
	// A synchronous vector writes term and trunc directly (termW and truncW are
	// them, shift is 0).
	termW, truncW []bool
	shift         []int
	infos         []any

	// The actions of the Step in progress, read by the workers.
	actions []agent.RawAction
	ints    []int64 // StepDiscrete's actions, instead of actions
}

// New makes n copies with factory (called with 0 to n-1, in order, from the calling
// goroutine) and returns their vector; call Reset before the first Step. Every copy
// must describe the same agent: the same name, observation length and mask length.
// New reports every problem at once: a factory error (as a *CopyError), copies that
// differ (ErrMismatch), a bad option.
func New(n int, factory func(i int) (env.Env, error), opts ...Option) (*Env, error) {
	cfg, err := newConfig(n, opts)
	if err != nil {
		return nil, err
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("vector: %d copies; want 1 or more", n)
	case factory == nil:
		return nil, errors.New("vector: nil factory")
	case cfg.ended != nil:
		return nil, fmt.Errorf("%w: WithEpisodeEnd is for NewMulti; an Env's episodes end with an env.Step", ErrOption)
	}
	v := &Env{n: n, cfg: cfg, envs: make([]env.Env, n)}
	var errs []error
	for i := range n {
		e, err := factory(i)
		switch {
		case err != nil:
			errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: fmt.Errorf("factory: %w", err)})
			continue
		case e == nil:
			errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: errors.New("factory returned a nil env")})
			continue
		}
		v.envs[i] = e
		s := e.Spec()
		if s.ObservationSpace == nil {
			errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: errors.New("spec has no observation space")})
			continue
		}
		if v.spec.ObservationSpace == nil {
			v.spec = s
			v.dim, v.mlen = s.ObservationSpace.FlatDim(), s.MaskLen
			continue
		}
		if s.Name != v.spec.Name || s.ObservationSpace.FlatDim() != v.dim || s.MaskLen != v.mlen {
			errs = append(errs, fmt.Errorf("%w: copy %d is agent %q with observations of %d and masks of %d; the first is %q with %d and %d",
				ErrMismatch, i, s.Name, s.ObservationSpace.FlatDim(), s.MaskLen, v.spec.Name, v.dim, v.mlen))
		}
	}
	if err := multierr.Combine(errs...); err != nil {
		return nil, err
	}
	v.direct = discreteSteppers(v.spec, v.envs)
	v.copies = make([]int, n)
	for i := range v.copies {
		v.copies[i] = i
	}
	if b := cfg.buffers; b != nil {
		if err := b.check(n, v.dim, v.mlen); err != nil {
			return nil, err
		}
		v.obs, v.final, v.rewards, v.term, v.trunc = b.Obs, b.FinalObs, b.Rewards, b.Terminated, b.Truncated
		if v.mlen > 0 {
			v.masks = b.Masks
		}
	} else {
		v.obs = make([]float32, n*v.dim)
		v.final = make([]float32, n*v.dim)
		if v.mlen > 0 {
			v.masks = make([]bool, n*v.mlen)
		}
		v.rewards = make([]float64, n)
		v.term = make([]bool, n)
		v.trunc = make([]bool, n)
	}
	v.termW, v.truncW = v.term, v.trunc
	v.infos = make([]any, n)
	v.fns[OpReset] = v.resetOne
	v.lockstep = newLockstep(n, cfg.workers, v.run)
	v.pool.timing = cfg.timing
	v.shift = make([]int, cfg.workers)
	if cfg.workers > 1 {
		const line = 64
		off := 0
		for w := range cfg.workers {
			lo, hi := v.pool.lo[w], v.pool.lo[w+1]
			v.shift[w] = off - lo
			off += (hi - lo + line - 1) / line * line
		}
		v.termW, v.truncW = make([]bool, off), make([]bool, off)
	}
	v.bindKernel()
	return v, nil
}

// bindKernel asks copy 0 for a Kernel, where Batcher says it may.
func (v *Env) bindKernel() {
	b, ok := v.envs[0].(Batcher)
	if !ok || v.direct == nil || v.cfg.finalInfo {
		return
	}
	if v.kernel = b.NewKernel(v.envs); v.kernel == nil {
		return
	}
	v.ks = KernelStep{Obs: v.obs, Final: v.final, Masks: v.masks, ObsDim: v.dim, MaskLen: v.mlen,
		Rewards: v.rewards, Terminated: v.termW, Truncated: v.truncW,
		Episodes: v.episodes, Seeds: v.seeds, Errs: v.errs}
}

// Len returns N, the number of copies.
func (v *Env) Len() int { return v.n }

// Workers returns the number of workers, 1 when synchronous.
func (v *Env) Workers() int { return v.cfg.workers }

// Spec describes the copies' agent (copy 0's Spec).
func (v *Env) Spec() env.Spec { return v.spec }

// ObsDim returns the length of one copy's observation.
func (v *Env) ObsDim() int { return v.dim }

// MaskLen returns the length of one copy's action mask, 0 without one.
func (v *Env) MaskLen() int { return v.mlen }

// Batch returns the copies' observations and masks as a batched policy reads them:
// every copy, in order.
func (v *Env) Batch() Batch {
	return Batch{Copies: v.copies, Obs: v.obs, Masks: v.masks, ObsDim: v.dim, MaskLen: v.mlen}
}

// Obs returns the observations, N rows of ObsDim: each copy's current observation,
// which after an auto-reset is the first observation of its new episode.
func (v *Env) Obs() []float32 { return v.obs }

// Masks returns the action masks that go with Obs, N rows of MaskLen, or nil when the
// agent has no mask.
func (v *Env) Masks() []bool { return v.masks }

// Rewards returns each copy's reward for the last step; 0 after Reset.
//
// Rewards are float64, as env.Step and Gymnasium's vector environments give them:
// the value each copy returned, unrounded, in the type of the activity log's reward
// column.
func (v *Env) Rewards() []float64 { return v.rewards }

// Terminated returns which copies' episodes terminated in the last step.
func (v *Env) Terminated() []bool { return v.term }

// Truncated returns which copies' episodes were truncated in the last step.
func (v *Env) Truncated() []bool { return v.trunc }

// Done reports whether copy i's episode ended in the last step (and the copy was
// reset).
func (v *Env) Done(i int) bool { return v.term[i] || v.trunc[i] }

// FinalObs returns the final observations, N rows of ObsDim: row i is the last
// observation of copy i's episode where Done(i), the observation a learner
// bootstraps from after a truncation. Rows of the other copies hold what they held
// (the final observation of an earlier episode, or zeros): read a row only where
// Done(i).
func (v *Env) FinalObs() []float32 { return v.final }

// FinalInfo returns, with WithFinalInfo(true), each copy's Info taken just before its
// auto-reset where Done(i), nil elsewhere; without it, nil.
func (v *Env) FinalInfo() []any {
	if !v.cfg.finalInfo {
		return nil
	}
	return v.infos
}

// Reset starts episode 0 of every copy, copy i with EpisodeSeed(seed, i, 0), and
// fills Obs and Masks with their first observations; Rewards, Terminated and Truncated
// are cleared. If ctx is done before Reset starts, it returns ctx.Err() and changes
// nothing. Errors are described in the package documentation.
func (v *Env) Reset(ctx context.Context, seed uint64) error {
	done, err := v.start(ctx, OpReset, nil)
	if err != nil {
		return err
	}
	clear(v.term)
	clear(v.trunc)
	v.base = seed
	v.do(OpReset, done)
	v.ready = true
	return v.outcome(ctx)
}

// Step applies actions[i] to copy i, for every copy, and fills the buffers: Rewards,
// Terminated, Truncated, and Obs and Masks with each copy's next observation. A copy
// whose episode ends is reset in the same step with its next episode seed; its last
// observation goes to FinalObs (and its Info to FinalInfo with WithFinalInfo(true)).
// Step does not retain actions.
//
// Step returns an error wrapping ErrActions, and changes nothing, when len(actions)
// is not Len(); ctx.Err(), changing nothing, when ctx is done before Step starts; and
// ErrNotReset before the first Reset and after a failure. The failures (a copy's
// error, a cancellation during the step) are described in the package documentation.
func (v *Env) Step(ctx context.Context, actions []agent.RawAction) error {
	if len(actions) != v.n {
		return v.step(ctx, fmt.Errorf("%w: %d actions for %d copies", ErrActions, len(actions), v.n))
	}
	v.actions = actions
	err := v.step(ctx, nil)
	v.actions = nil
	return err
}

// StepDiscrete is Step for a Discrete action space, with the actions as integers:
// copy i gets agent.Discrete(actions[i]). It is the form of a policy network's output
// (an integer tensor, DiscretePolicy), and the lighter one with workers: the actions
// go from the caller's CPU to the workers', 8 bytes a copy where an agent.RawAction
// takes 56. Step's documentation applies.
func (v *Env) StepDiscrete(ctx context.Context, actions []int64) error {
	if len(actions) != v.n {
		return v.step(ctx, fmt.Errorf("%w: %d actions for %d copies", ErrActions, len(actions), v.n))
	}
	v.ints = actions
	err := v.step(ctx, nil)
	v.ints = nil
	return err
}

// step runs one Step; bad is the error of bad arguments, if any, which Step returns
// after the checks that come first.
func (v *Env) step(ctx context.Context, bad error) error {
	done, err := v.start(ctx, OpStep, bad)
	if err != nil {
		return err
	}
	v.do(OpStep, done)
	if len(v.shift) > 1 {
		for w, shift := range v.shift {
			lo, hi := v.pool.lo[w], v.pool.lo[w+1]
			copy(v.term[lo:hi], v.termW[lo+shift:hi+shift])
			copy(v.trunc[lo:hi], v.truncW[lo+shift:hi+shift])
		}
	}
	return v.outcome(ctx)
}

// Close stops the workers and waits for them to exit. It is idempotent; Reset and
// Step return ErrClosed afterwards. It does not close the copies (env.Env has no
// Close); the factory's caller owns what they hold.
func (v *Env) Close() error {
	v.close()
	return nil
}

func (v *Env) run(w, lo, hi int) {
	if v.op != OpStep {
		each(v.pool, w, lo, hi, v.done, v.errs, v.op, v.fns[v.op])
		return
	}
	if v.kernel != nil && v.ints != nil {
		v.stepKernel(w, lo, hi)
		return
	}
	for i := lo; i < hi; {
		i = v.stepFrom(w, i, hi)
	}
}

// stepFrom is each for Step, written out so that the hottest loop calls stepOne
// directly.
func (v *Env) stepFrom(w, i, hi int) (next int) {
	defer func() {
		if r := recover(); r != nil {
			v.errs[i] = panicError(i, OpStep, r)
			v.pool.state[w].failed.Store(true)
			next = i + 1
		}
	}()
	st := &v.pool.state[w]
	done := v.done
	shift := v.shift[w]
	for ; i < hi; i++ {
		if done != nil {
			select {
			case <-done:
				st.cancelled.Store(true)
				return hi
			default:
			}
		}
		if err := v.stepOne(i, i+shift); err != nil {
			v.errs[i] = err
			st.failed.Store(true)
		}
	}
	return hi
}

// kernelRun is how many copies a Kernel steps per call: the vector looks at the
// context between calls.
const kernelRun = 256

// stepKernel steps copies lo to hi-1 through the Kernel, kernelRun at a time. Several
// goroutines may step runs of one range w at once, each with its own KernelStep.
func (v *Env) stepKernel(w, lo, hi int) {
	st := &v.pool.state[w]
	ks := v.ks
	ks.Actions, ks.Seed, ks.Shift = v.ints, v.base, v.shift[w]
	for i := lo; i < hi; i += kernelRun {
		if done := v.done; done != nil {
			select {
			case <-done:
				st.cancelled.Store(true)
				return
			default:
			}
		}
		ks.Lo, ks.Hi = i, min(i+kernelRun, hi)
		if v.kernelStep(&ks) {
			st.failed.Store(true)
		}
	}
}

// kernelStep makes one Kernel call and reports whether a copy failed, wrapping the
// copies' errors; a panic is the error of the run's first copy.
func (v *Env) kernelStep(ks *KernelStep) (failed bool) {
	defer func() {
		if r := recover(); r != nil {
			v.errs[ks.Lo] = panicError(ks.Lo, OpStep, r)
			failed = true
		}
	}()
	if v.kernel.Step(*ks) == 0 {
		return false
	}
	for i := ks.Lo; i < ks.Hi; i++ {
		if err := v.errs[i]; err != nil {
			v.errs[i] = &CopyError{Copy: i, Op: OpStep, Err: err}
		}
	}
	return true
}

func (v *Env) resetOne(i int) error {
	v.episodes[i] = 0
	v.seeds[i] = EpisodeSeed(v.base, i, 0)
	v.rewards[i] = 0
	v.infos[i] = nil
	st, err := v.envs[i].Reset(v.seeds[i])
	if err != nil {
		return &CopyError{Copy: i, Op: OpReset, Err: err}
	}
	return v.put(i, OpReset, st.Obs, st.Mask)
}

// discreteSteppers returns the copies as env.DiscreteStepper if the action space is
// Discrete and every copy is one, else nil.
func discreteSteppers(spec env.Spec, envs []env.Env) []env.DiscreteStepper {
	if _, ok := spec.ActionSpace.(spaces.Discrete); !ok {
		return nil
	}
	ds := make([]env.DiscreteStepper, len(envs))
	for i, e := range envs {
		d, ok := e.(env.DiscreteStepper)
		if !ok {
			return nil
		}
		ds[i] = d
	}
	return ds
}

// stepOne steps copy i. It is the hot path: the action is passed field by field and
// the result taken apart into locals, so that the compiler moves them in registers
// (copying the structs through the stack costs store-forwarding stalls, a quarter of
// the vector's own time per step on cart-poles).
func (v *Env) stepOne(i, flag int) error {
	var n int64
	var ints []int64
	var floats []float32
	if v.ints != nil {
		n = v.ints[i]
	} else {
		a := &v.actions[i]
		n, ints, floats = a.Int, a.Ints, a.Floats
	}
	if v.direct != nil && ints == nil && floats == nil {
		return v.stepDirect(i, flag, n)
	}
	st, err := v.envs[i].Step(agent.RawAction{Int: n, Ints: ints, Floats: floats})
	if err != nil {
		return &CopyError{Copy: i, Op: OpStep, Err: err}
	}
	obs, mask, term, trunc := st.Obs, st.Mask, st.Terminated, st.Truncated
	v.rewards[i] = st.Reward
	v.termW[flag] = term
	v.truncW[flag] = trunc
	if term || trunc {
		if len(obs) != v.dim {
			return v.shape(i, OpStep, obs, nil)
		}
		copy(v.final[i*v.dim:(i+1)*v.dim], obs)
		return v.restart(i)
	}
	if v.cfg.finalInfo {
		v.infos[i] = nil
	}
	return v.put(i, OpStep, obs, mask)
}

// stepDirect steps copy i, an env.DiscreteStepper, which writes its observation and
// mask into the copy's rows.
func (v *Env) stepDirect(i, flag int, n int64) error {
	d := v.dim
	obs := v.obs[i*d : i*d+d : i*d+d]
	var mask []bool
	if m := v.mlen; m > 0 {
		mask = v.masks[i*m : i*m+m : i*m+m]
	}
	r, term, trunc, err := v.direct[i].StepDiscrete(n, obs, mask)
	if err != nil {
		return &CopyError{Copy: i, Op: OpStep, Err: err}
	}
	v.rewards[i] = r
	v.termW[flag] = term
	v.truncW[flag] = trunc
	if term || trunc {
		copy(v.final[i*d:i*d+d], obs)
		return v.restart(i)
	}
	if v.cfg.finalInfo {
		v.infos[i] = nil
	}
	return nil
}

// restart resets copy i, whose episode ended and whose final observation is in its
// FinalObs row, with its next episode seed.
func (v *Env) restart(i int) error {
	e := v.envs[i]
	if v.cfg.finalInfo {
		v.infos[i] = e.Info()
	}
	k := v.episodes[i] + 1
	seed := EpisodeSeed(v.base, i, k)
	st, err := e.Reset(seed)
	if err != nil {
		return &CopyError{Copy: i, Op: OpReset, Err: err}
	}
	v.episodes[i], v.seeds[i] = k, seed
	return v.put(i, OpReset, st.Obs, st.Mask)
}

// put copies an observation and a mask into copy i's rows.
func (v *Env) put(i int, op Op, obs []float32, mask []bool) error {
	d := v.dim
	if len(obs) != d || (v.mlen > 0 && len(mask) != v.mlen) {
		return v.shape(i, op, obs, mask)
	}
	copy(v.obs[i*d:i*d+d], obs)
	if m := v.mlen; m > 0 {
		copy(v.masks[i*m:i*m+m], mask)
	}
	return nil
}

func (v *Env) shape(i int, op Op, obs []float32, mask []bool) error {
	return &CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: observation of %d (want %d), mask of %d (want %d)", ErrShape, len(obs), v.dim, len(mask), v.mlen)}
}
