package env

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/batonrl/baton/agent"
	"go.uber.org/multierr"
)

// MaxViewResets is how many underlying episodes one View.Reset starts, at most, waiting
// for the viewed agent to act, before it gives up with ErrNeverActs.
const MaxViewResets = 100

// View presents one agent of a multi-agent environment as a single-agent Env; policies
// drive the other agents. Create it with NewView.
//
// # Episodes
//
// Each sub-episode of the viewed agent is one episode of the view: for the maze's motion
// agent, motion_0, motion_1, ... are successive episodes. A sub-episode ends the view's
// episode, terminated or truncated as the agent is reported, because a learner must not
// bootstrap across the end of a sub-episode.
//
// Reset(seed) resets the underlying environment with seed when no underlying episode
// can go on: before the first episode, after the underlying episode ended, after a Reset
// that cut the view's episode short, and after a driven agent failed. Otherwise the
// underlying episode goes on and seed is used only if that episode ends before the
// viewed agent's next sub-episode starts. Either way Reset then drives the other agents
// until the viewed agent starts a sub-episode and is asked to act. Each time the
// underlying episode ends first, Reset resets it again: the k-th underlying reset of one
// Reset call (k = 0, 1, ...) uses DeriveSeed(seed, k); after MaxViewResets of them it
// fails with ErrNeverActs. So, unlike a plain Env, a view's episode depends on the
// episodes before it: the same seeds and actions from the view's first Reset on give
// the same episodes. A sub-episode that ends before the viewed agent acts is skipped.
//
// Step(a) applies the viewed agent's action. If its sub-episode ends, Step returns the
// terminal Step. Otherwise, if other agents act before the viewed agent again (a child
// it handed control to, or the other agents of a round of Sequential), Step drives them
// with their policies until the viewed agent is asked to act again, or its sub-episode
// ends, or the underlying episode ends (the view's episode is then truncated if the
// agent's own report did not end it). The Step's Reward is the sum of the rewards of the
// viewed agent's reports in between, normally one: for a parent agent, the reward for
// its whole decision, reported when control returns to it. SpanTicks returns how many
// environment ticks that decision took, to discount by gamma^SpanTicks; Info has it too.
//
// # Errors
//
// An error from the underlying Step of the viewed agent's action (an action outside its
// space, say) is returned as it is and leaves the view as it was. If a driven agent's
// policy fails or returns an action the environment rejects, or ctx is done while the
// view drives the others, Step or Reset returns an error wrapping ErrDriven (or the
// context's error) and the cause; the view's episode is then over, and the next Reset
// starts a new underlying episode. An error of the underlying Reset is returned by the
// view's Reset as it is; the view's episode is then over too.
//
// # Ownership and concurrency
//
// The Obs and Mask of a returned Step are the view's own copies, valid until its next
// Reset or Step (the underlying environment's buffers are overwritten while the view
// drives the others). A View is not safe for concurrent use; it steps without allocating
// in steady state when the underlying environment and the policies do not allocate.
type View struct {
	ctx    context.Context
	done   <-chan struct{}
	m      MultiAgent
	name   string
	spec   Spec
	others map[string]agent.Policy

	turn    Turn   // the latest underlying Turn
	started bool   // the underlying environment has been reset
	broken  bool   // a driven agent failed: the underlying episode cannot go on
	active  bool   // a view episode is in progress
	id      string // the viewed agent's id in the current or last sub-episode
	obs     []float32
	mask    []bool
	span    int
}

// NewView returns the view of the agent called name in m, with a policy in others for
// every other agent of m.Agents(). It reports every problem at once: a name that is not
// one of m's agents (ErrUnknownAgent), another agent without a policy or with a nil one
// (ErrMissingPolicy), a policy given for the viewed agent itself.
//
// The view keeps ctx for its whole life, as exec.CommandContext does, and passes it to
// the other agents' policies: this is the one exception to baton's rule that a context
// is never stored, since Env's methods take none. Cancelling ctx makes the next Reset or
// Step that drives another agent fail.
func NewView(ctx context.Context, m MultiAgent, name string, others map[string]agent.Policy) (*View, error) {
	if ctx == nil {
		return nil, errors.New("env: view: nil context")
	}
	specs := m.Agents()
	var errs []error
	i := slices.IndexFunc(specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		errs = append(errs, fmt.Errorf("%w: the viewed agent %q (agents: %v)", ErrUnknownAgent, name, names(specs)))
	}
	if _, ok := others[name]; ok && i >= 0 {
		errs = append(errs, fmt.Errorf("env: view of %q: a policy is given for the viewed agent itself", name))
	}
	for _, s := range specs {
		if s.Name == name {
			continue
		}
		if p, ok := others[s.Name]; !ok {
			errs = append(errs, fmt.Errorf("%w %q", ErrMissingPolicy, s.Name))
		} else if p == nil {
			errs = append(errs, fmt.Errorf("%w %q: the policy is nil", ErrMissingPolicy, s.Name))
		}
	}
	keys := make([]string, 0, len(others))
	for k := range others {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(specs, func(s Spec) bool { return s.Name == k }) {
			errs = append(errs, fmt.Errorf("%w %q has a policy (agents: %v)", ErrUnknownAgent, k, names(specs)))
		}
	}
	if err := multierr.Combine(errs...); err != nil {
		return nil, err
	}
	v := &View{ctx: ctx, done: ctx.Done(), m: m, name: name, spec: specs[i], others: make(map[string]agent.Policy, len(others))}
	for k, p := range others {
		v.others[k] = p
	}
	v.obs = make([]float32, v.spec.ObservationSpace.FlatDim())
	if v.spec.MaskLen > 0 {
		v.mask = make([]bool, v.spec.MaskLen)
	}
	return v, nil
}

func names(specs []Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// Spec describes the viewed agent.
func (v *View) Spec() Spec { return v.spec }

// Unwrap returns the multi-agent environment.
func (v *View) Unwrap() MultiAgent { return v.m }

// AgentID returns the viewed agent's id in the current sub-episode (or the last one), ""
// before the first Reset.
func (v *View) AgentID() string { return v.id }

// SpanTicks returns how many environment ticks the decision scored by the last Step
// took: 1 for a plain action, more for an action that handed control to other agents;
// 0 after Reset.
func (v *View) SpanTicks() int { return v.span }

// Info returns the underlying environment's Info with "agent_id" (AgentID),
// "span_ticks" (SpanTicks) and "tick" (the underlying episode's tick) added.
func (v *View) Info() any {
	info := infoMap(v.m.Info())
	info["agent_id"] = v.id
	info["span_ticks"] = v.span
	info["tick"] = v.turn.Tick
	return info
}

// Reset starts the view's next episode: see View.
func (v *View) Reset(seed uint64) (Step, error) {
	k := 0
	if !v.started || v.broken || v.active || v.turn.Over {
		if err := v.restart(seed, &k); err != nil {
			return Step{}, err
		}
	}
	v.active, v.span, v.id = false, 0, ""
	for {
		// Take the viewed agent's new sub-episode, or follow it until it acts.
		for i := range v.turn.Reports {
			r := &v.turn.Reports[i]
			switch {
			case r.Agent != v.name:
			case v.id != "" && r.AgentID == v.id:
				if r.Done() {
					v.id = "" // ended before acting: skip it
				} else {
					v.keep(r)
				}
			case r.Start && !r.Done():
				v.id = r.AgentID
				v.keep(r)
			}
		}
		if v.id != "" && v.turn.Next == v.id && !v.turn.Over {
			v.active = true
			return Step{Obs: v.obs, Mask: v.mask}, nil
		}
		if v.turn.Over {
			if k >= MaxViewResets {
				return Step{}, fmt.Errorf("%w: agent %q, %d underlying episodes from seed %d", ErrNeverActs, v.name, k, seed)
			}
			if err := v.restart(seed, &k); err != nil {
				return Step{}, err
			}
			v.id = ""
			continue
		}
		if err := v.drive(); err != nil {
			v.broken = true
			return Step{}, err
		}
	}
}

// restart resets the underlying environment with the k-th seed derived from seed. When
// the underlying Reset fails, the view's episode is over and the next Reset starts
// again.
func (v *View) restart(seed uint64, k *int) error {
	turn, err := v.m.Reset(DeriveSeed(seed, *k))
	if err != nil {
		v.active, v.broken, v.id = false, true, ""
		return err
	}
	v.turn = turn
	*k++
	v.started, v.broken = true, false
	return nil
}

// Step applies the viewed agent's action: see View.
func (v *View) Step(a agent.RawAction) (Step, error) {
	if !v.active {
		if !v.started {
			return Step{}, fmt.Errorf("%w: view of %q", ErrNotReset, v.name)
		}
		return Step{}, fmt.Errorf("%w: view of %q", ErrEpisodeOver, v.name)
	}
	turn, err := v.m.Step(v.id, a)
	if err != nil {
		return Step{}, err
	}
	v.turn = turn
	v.span = 0
	st := Step{Obs: v.obs, Mask: v.mask}
	for {
		for i := range v.turn.Reports {
			r := &v.turn.Reports[i]
			if r.AgentID != v.id || r.Start {
				continue
			}
			v.keep(r)
			st.Reward += r.Reward
			st.Terminated, st.Truncated = r.Terminated, r.Truncated
			v.span += r.SpanTicks
		}
		switch {
		case st.Done():
			v.active = false
			return st, nil
		case v.turn.Over:
			st.Truncated = true
			v.active = false
			return st, nil
		case v.turn.Next == v.id:
			return st, nil
		}
		if err := v.drive(); err != nil {
			v.active, v.broken = false, true
			return Step{}, err
		}
	}
}

// keep copies the viewed agent's observation and mask out of r.
func (v *View) keep(r *Report) {
	copy(v.obs, r.Obs)
	copy(v.mask, r.Mask)
}

// drive steps the acting agent, which is not the viewed one, with its policy.
func (v *View) drive() error {
	select {
	case <-v.done:
		return fmt.Errorf("env: view of %q: %w", v.name, v.ctx.Err())
	default:
	}
	r := v.turn.Acting()
	if r == nil {
		return fmt.Errorf("%w: the environment names %q to act next but does not report it", ErrDriven, v.turn.Next)
	}
	p := v.others[r.Agent]
	if p == nil {
		return fmt.Errorf("%w: %s: %w", ErrDriven, r.AgentID, ErrMissingPolicy)
	}
	id := r.AgentID
	raw, err := p.Act(v.ctx, r.Obs, r.Mask)
	if err != nil {
		return fmt.Errorf("%w: %s: policy: %w", ErrDriven, id, err)
	}
	turn, err := v.m.Step(id, raw)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDriven, id, err)
	}
	v.turn = turn
	return nil
}
