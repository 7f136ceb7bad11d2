package hrltest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// Options tune Run. The zero value means defaults.
type Options struct {
	// Episodes is how many episodes to play; 0 means 20.
	Episodes int
	// Seed seeds the episodes and the random policies; episodes use Seed, Seed+1, ...
	Seed uint64
	// MaxTicks cuts an episode that has not ended; 0 means 10000.
	MaxTicks int
	// Config is passed to hrl.New.
	Config hrl.Config
}

// Check runs Run and reports its problems as test errors.
func Check[S, A any](t testing.TB, newEnv func() hrl.HierarchicalEnv[S, A], opts Options) {
	t.Helper()
	if err := Run(newEnv, opts); err != nil {
		t.Error(err)
	}
}

// Run checks the environments newEnv builds and returns every problem found, joined,
// or nil. newEnv is called more than once; each call must build an equal environment.
func Run[S, A any](newEnv func() hrl.HierarchicalEnv[S, A], opts Options) error {
	if opts.Episodes == 0 {
		opts.Episodes = 20
	}
	if opts.MaxTicks == 0 {
		opts.MaxTicks = 10000
	}
	var errs []error
	for ep := range opts.Episodes {
		seed := opts.Seed + uint64(ep)
		fatal, err := episode(newEnv, opts, seed)
		if fatal != nil {
			return errors.Join(append(errs, fatal)...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("hrltest: seed %d: %w", seed, err))
		}
	}
	return errors.Join(errs...)
}

// episode checks one seeded episode. fatal reports a problem that ends the check: an
// environment hrl.New rejects, or a panic in the environment's code, recovered with its
// stack.
func episode[S, A any](newEnv func() hrl.HierarchicalEnv[S, A], opts Options, seed uint64) (fatal, err error) {
	defer func() {
		if v := recover(); v != nil {
			fatal = fmt.Errorf("hrltest: seed %d: panic: %v\n%s", seed, v, debug.Stack())
		}
	}()
	// a steps with bad actions interleaved, b without; both must agree. a steps every
	// agent through its Agent methods, whose results the checks judge, and b through its
	// agent.InPlace where it has one, so that an InPlace that disagrees shows.
	general := opts
	general.Config.NoInPlace = true
	a, err := newPlayer(newEnv, general, seed)
	if err != nil {
		return fmt.Errorf("hrltest: hrl.New: %w", err), nil
	}
	b, err := newPlayer(newEnv, opts, seed)
	if err != nil {
		return fmt.Errorf("hrltest: hrl.New (second environment): %w", err), nil
	}
	return nil, compare(a, b, true)
}

type player[S, A any] struct {
	rt       *hrl.Runtime[S, A]
	specs    map[string]env.Spec
	policies map[string]agent.Policy
	maxTicks int
	seed     uint64
	// what the checks keep track of within an episode
	ended     map[string]int  // sub-episodes ended per agent
	inControl map[string]bool // ids in control
	advisory  map[string]bool // agents whose environment accepted a masked-out action
}

func newPlayer[S, A any](newEnv func() hrl.HierarchicalEnv[S, A], opts Options, seed uint64) (*player[S, A], error) {
	rt, err := hrl.New(newEnv(), opts.Config)
	if err != nil {
		return nil, err
	}
	p := &player[S, A]{rt: rt, specs: map[string]env.Spec{}, policies: map[string]agent.Policy{}, maxTicks: opts.MaxTicks, seed: seed}
	for i, spec := range rt.Agents() {
		p.specs[spec.Name] = spec
		pol, err := agent.Random(spec.ActionSpace, rand.New(rand.NewPCG(seed, uint64(i))))
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", spec.Name, err)
		}
		p.policies[spec.Name] = pol
	}
	return p, nil
}

// snapshot is a deep copy of a result, to compare two runs.
type snapshot struct {
	next    string
	over    bool
	tick    int
	reports []env.Report
}

func snap(res env.Turn) snapshot {
	s := snapshot{next: res.Next, over: res.Over, tick: res.Tick}
	for _, r := range res.Reports {
		r.Obs, r.Mask = slices.Clone(r.Obs), slices.Clone(r.Mask)
		s.reports = append(s.reports, r)
	}
	return s
}

func (s snapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tick %d next %q over %v:", s.tick, s.next, s.over)
	for _, r := range s.reports {
		fmt.Fprintf(&b, " [%s reward %g term %v trunc %v span %d obs %v]", r.AgentID, r.Reward, r.Terminated, r.Truncated, r.SpanTicks, r.Obs)
	}
	return b.String()
}

func equalSnapshots(x, y snapshot) bool {
	if x.next != y.next || x.over != y.over || x.tick != y.tick || len(x.reports) != len(y.reports) {
		return false
	}
	for i := range x.reports {
		a, b := x.reports[i], y.reports[i]
		if a.AgentID != b.AgentID || a.ParentID != b.ParentID || a.Terminated != b.Terminated || a.Truncated != b.Truncated ||
			a.Start != b.Start || a.SpanTicks != b.SpanTicks || a.Clock != b.Clock || !sameFloat(a.Reward, b.Reward) ||
			!slices.Equal(a.Obs, b.Obs) || !slices.Equal(a.Mask, b.Mask) {
			return false
		}
	}
	return true
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// compare plays one episode on a (with bad actions tried before every valid one when
// probe is set) and on b, checking a's results and that both runs agree at every step.
func compare[S, A any](a, b *player[S, A], probe bool) error {
	ra, err := a.rt.Reset(a.seed)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	rb, err := b.rt.Reset(b.seed)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	a.ended, a.inControl, a.advisory = map[string]int{}, map[string]bool{}, map[string]bool{}
	if err := a.check(ra, ""); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if err := a.checkEntry(ra, "", agent.RawAction{}); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if sa, sb := snap(ra), snap(rb); !equalSnapshots(sa, sb) {
		return fmt.Errorf("reset: two resets with the same seed differ:\n  %s\n  %s", sa, sb)
	}
	for !ra.Over {
		if ra.Tick >= a.maxTicks {
			return nil
		}
		acting := ra.Acting()
		if acting == nil {
			return fmt.Errorf("tick %d: next agent %q is not among the reports", ra.Tick, ra.Next)
		}
		raw, err := a.policies[acting.Agent].Act(context.Background(), acting.Obs, acting.Mask)
		if err != nil {
			return fmt.Errorf("tick %d: agent %s: no valid action to play: %w", ra.Tick, acting.AgentID, err)
		}
		raw = clone(raw)
		id := acting.AgentID
		played := false
		if probe {
			if err := a.probe(acting, raw); err != nil {
				return fmt.Errorf("tick %d: %w", ra.Tick, err)
			}
			var x agent.RawAction
			var rx env.Turn
			if x, rx, played, err = a.probeMasked(acting); err != nil {
				return fmt.Errorf("tick %d: %w", ra.Tick, err)
			}
			if played {
				// The environment accepted a masked-out action: b plays it too.
				raw, ra = x, rx
			}
		}
		if !played {
			if ra, err = a.rt.Step(id, raw); err != nil {
				return fmt.Errorf("tick %d: agent %s, action %v from its mask was rejected: %w", a.rt.Tick(), id, raw, err)
			}
		}
		if rb, err = b.rt.Step(id, raw); err != nil {
			return fmt.Errorf("tick %d: the same action was accepted once and rejected once: %w", a.rt.Tick(), err)
		}
		if err := a.check(ra, id); err != nil {
			return fmt.Errorf("tick %d: %w", ra.Tick, err)
		}
		if err := a.checkEntry(ra, id, raw); err != nil {
			return fmt.Errorf("tick %d: %w", ra.Tick, err)
		}
		if sa, sb := snap(ra), snap(rb); !equalSnapshots(sa, sb) {
			return fmt.Errorf("tick %d: the same seed and actions gave different results (or a rejected action changed the state), or an agent's agent.InPlace disagrees with its methods:\n  %s\n  %s", ra.Tick, sa, sb)
		}
	}
	if _, err := a.rt.Step(ra.Next, agent.RawAction{}); !errors.Is(err, env.ErrEpisodeOver) {
		return fmt.Errorf("a step after the end of the episode returned %v; want env.ErrEpisodeOver", err)
	}
	return nil
}

// probe tries actions that must be rejected, each with the sentinel named.
func (p *player[S, A]) probe(acting *env.Report, valid agent.RawAction) error {
	space := p.specs[acting.Agent].ActionSpace
	tries := []struct {
		id   string
		raw  agent.RawAction
		want error
	}{
		{"nobody_0", valid, env.ErrNotActing},
		{acting.Agent + "_" + strconv.Itoa(acting.Clock.SubEpisode+1), valid, env.ErrNotActing},
	}
	if bad, ok := outside(space); ok {
		tries = append(tries, struct {
			id   string
			raw  agent.RawAction
			want error
		}{acting.AgentID, bad, env.ErrOutsideSpace})
	}
	for _, tr := range tries {
		_, err := p.rt.Step(tr.id, tr.raw)
		var se *env.StepError
		switch {
		case err == nil:
			return fmt.Errorf("step(%s, %v) was accepted; want %v", tr.id, tr.raw, tr.want)
		case !errors.Is(err, tr.want) || !errors.As(err, &se):
			return fmt.Errorf("step(%s, %v) returned %v; want a *env.StepError wrapping %v", tr.id, tr.raw, err, tr.want)
		case se.AgentID != tr.id:
			return fmt.Errorf("step(%s, %v): the error names agent %q", tr.id, tr.raw, se.AgentID)
		}
	}
	return nil
}

// probeMasked tries the actions the acting agent's mask rules out. A mask is advice to
// policies, so the environment may accept such an action: then it is the one played
// this tick (played is set, with its result) and the agent's masked-out actions are not
// tried again this episode. An action the environment rejects must leave no trace, which
// the comparison with the run that never saw it checks.
func (p *player[S, A]) probeMasked(acting *env.Report) (raw agent.RawAction, res env.Turn, played bool, err error) {
	d, ok := p.specs[acting.Agent].ActionSpace.(spaces.Discrete)
	if !ok || len(acting.Mask) == 0 || p.advisory[acting.Agent] {
		return raw, res, false, nil
	}
	id := acting.AgentID
	for i, allowed := range acting.Mask {
		if allowed {
			continue
		}
		raw = agent.Discrete(d.Start + int64(i))
		res, err = p.rt.Step(id, raw)
		if err == nil {
			p.advisory[acting.Agent] = true
			return raw, res, true, nil
		}
		if se := (*env.StepError)(nil); !errors.As(err, &se) || se.AgentID != id {
			return raw, res, false, fmt.Errorf("step(%s, %v), an action its mask rules out, returned %v; want a *env.StepError naming the agent", id, raw, err)
		}
	}
	return raw, res, false, nil
}

// outside returns a raw action outside the space, if one can be made.
func outside(s spaces.Space) (agent.RawAction, bool) {
	switch sp := s.(type) {
	case spaces.Discrete:
		return agent.Discrete(sp.Start + sp.N), true
	case *spaces.Box:
		return agent.Continuous(make([]float32, sp.FlatDim()+1)), true
	case *spaces.MultiDiscrete:
		return agent.MultiInts(make([]int64, len(sp.Nvec())+1)), true
	case *spaces.MultiBinary:
		return agent.MultiInts(make([]int64, sp.FlatDim()+1)), true
	}
	return agent.RawAction{}, false
}

func clone(r agent.RawAction) agent.RawAction {
	r.Ints, r.Floats = slices.Clone(r.Ints), slices.Clone(r.Floats)
	return r
}

// checkEntry reports an agent that takes control in res, the runtime's latest result,
// already done by its own Done and yet acts: it will act once before its Done is asked
// again (a walker on its target steps away and back). actor played raw ("" at reset).
func (p *player[S, A]) checkEntry(res env.Turn, actor string, raw agent.RawAction) error {
	for i := range res.Reports {
		r := &res.Reports[i]
		if !r.Start || r.Done() {
			continue // not taking control, or returned at once, or cut by the tick limit
		}
		term, trunc, ok := p.rt.AgentDone(r.AgentID)
		if !ok {
			return fmt.Errorf("agent %s is reported but Runtime.AgentDone does not find it", r.AgentID)
		}
		if !term && !trunc {
			continue
		}
		how := "terminated"
		if !term {
			how = "truncated"
		}
		what := fmt.Sprintf("agent %s is already done (%s by its Done) when it takes control", r.AgentID, how)
		const acts = "it acts at least once before its Done is asked again, so a walker on its target steps away and back"
		switch {
		case actor == "":
			return fmt.Errorf("%s at reset: %s; the initial agent always acts after a reset, even one that returns at once (agent.AtOnceReturner): "+
				"start episodes where it is not done (InitialState, OnReset)", what, acts)
		case p.specs[r.Agent].ReturnsAtOnce:
			return fmt.Errorf("%s after %s played %v, and acts: it returned at once earlier in this step, and an agent returns at once "+
				"only once a step, to end an on-done cycle of agents that return at once; break the cycle in the machine's OnDone", what, actor, raw)
		case r.ParentID == actor:
			parent := actor[:strings.LastIndexByte(actor, '_')]
			return fmt.Errorf("%s after %s played %v: %s. Either refuse that action in %s's DecodeAction (and rule it out in its "+
				"action mask) when %s would be done, or let %s return control at once (implement agent.AtOnceReturner)",
				what, actor, raw, acts, parent, r.Agent, r.Agent)
		default:
			return fmt.Errorf("%s from the on-done table after %s played %v: %s. Either hand control to %s only when it is not done, "+
				"or let it return control at once (implement agent.AtOnceReturner)", what, actor, raw, acts, r.Agent)
		}
	}
	return nil
}

// check verifies one result on its own; actor is the id that acted ("" at reset).
func (p *player[S, A]) check(res env.Turn, actor string) error {
	if len(res.Reports) == 0 {
		return errors.New("no agent reported")
	}
	allDone := true
	for i := range res.Reports {
		r := &res.Reports[i]
		spec, ok := p.specs[r.Agent]
		if !ok {
			return fmt.Errorf("report names agent %q, which the environment does not have", r.Agent)
		}
		if want := r.Agent + "_" + strconv.Itoa(p.ended[r.Agent]); r.AgentID != want {
			return fmt.Errorf("agent id %q; want %q (%d sub-episodes of %s ended so far)", r.AgentID, want, p.ended[r.Agent], r.Agent)
		}
		if r.Clock.SubEpisode != p.ended[r.Agent] {
			return fmt.Errorf("agent %s: clock says sub-episode %d", r.AgentID, r.Clock.SubEpisode)
		}
		if v, err := spec.ObservationSpace.Unflatten(r.Obs); err != nil {
			return fmt.Errorf("agent %s: observation is not a flat encoding of %s: %w", r.AgentID, spec.ObservationSpace, err)
		} else if err := spec.ObservationSpace.Check(v); err != nil {
			return fmt.Errorf("agent %s: observation outside its space: %w", r.AgentID, err)
		}
		if len(r.Mask) != spec.MaskLen {
			return fmt.Errorf("agent %s: mask of %d entries; want %d", r.AgentID, len(r.Mask), spec.MaskLen)
		}
		if math.IsNaN(r.Reward) || math.IsInf(r.Reward, 0) {
			return fmt.Errorf("agent %s: reward %v is not finite", r.AgentID, r.Reward)
		}
		if r.Start && (r.Reward != 0 || r.SpanTicks != 0) {
			return fmt.Errorf("agent %s: first observation with reward %v and span %d; want 0 and 0", r.AgentID, r.Reward, r.SpanTicks)
		}
		if !r.Start && r.SpanTicks < 1 {
			return fmt.Errorf("agent %s: decision with span %d ticks; want at least 1", r.AgentID, r.SpanTicks)
		}
		if r.Start {
			if r.ParentID != "" && !p.inControl[r.ParentID] && r.ParentID != actor {
				return fmt.Errorf("agent %s: parent %q is not in control", r.AgentID, r.ParentID)
			}
			p.inControl[r.AgentID] = true
		} else if !p.inControl[r.AgentID] {
			return fmt.Errorf("agent %s reported a decision but was not in control", r.AgentID)
		}
		if r.Done() {
			p.ended[r.Agent]++
			delete(p.inControl, r.AgentID)
		} else {
			allDone = false
		}
	}
	switch {
	case res.Over != allDone:
		return fmt.Errorf("Over is %v but every reported agent done is %v", res.Over, allDone)
	case res.Over && res.Next != "":
		return fmt.Errorf("episode over, yet agent %q acts next", res.Next)
	case !res.Over && res.Acting() == nil:
		return fmt.Errorf("agent %q acts next but is not among the reports", res.Next)
	case !res.Over && res.Acting().Done():
		return fmt.Errorf("agent %q acts next but is done", res.Next)
	}
	if !res.Over && len(res.Acting().Mask) > 0 && !slices.Contains(res.Acting().Mask, true) {
		return fmt.Errorf("agent %s must act but its mask allows no action", res.Next)
	}
	return nil
}
