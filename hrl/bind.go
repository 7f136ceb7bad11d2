package hrl

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Binding is an agent with its types erased behind the environment's state S and
// action A: the runtime steps it on flat float32 observations and raw actions, without
// reflection and without allocating. Bind is the only way to make one.
type Binding[S, A any] interface {
	// Name is the agent's name.
	Name() string
	// ObservationSpace is the space of the agent's flat observations.
	ObservationSpace() spaces.Space
	// ActionSpace is the space of the agent's raw actions.
	ActionSpace() spaces.Space

	check() error
	hooks() hooks[S, A]
	masked() int // length of the action mask, 0 without one
	instance() instance[S, A]
	typedObservation(s S, c agent.Clock) any
	info(s S, c agent.Clock) any
}

// hooks holds an agent's optional hooks, found once at bind time; nil when absent.
type hooks[S, A any] struct {
	onReset func(S) S
	onTakes func(S, agent.Switch[A]) S
	onStep  func(S, A) S
	onGives func(S) S
}

// Bind erases an agent's types so that agents of different types share one
// environment. It finds the agent's optional hooks (agent.ResetHook and the others) once.
// Problems with the agent (a raw action type that does not fit its action space, a mask
// on a space that is not Discrete) are reported by New.
func Bind[S, AS, O any, R agent.Raw, A any](a agent.Agent[S, AS, O, R, A]) Binding[S, A] {
	b := &binding[S, AS, O, R, A]{
		a:       a,
		name:    a.Name(),
		obs:     a.ObservationSpace(),
		act:     a.ActionSpace(),
		fromRaw: rawConverter[R](),
	}
	if h, ok := a.(agent.ResetHook[S]); ok {
		b.h.onReset = h.OnReset
	}
	if h, ok := a.(agent.TakesControlHook[S, A]); ok {
		b.h.onTakes = h.OnTakesControl
	}
	if h, ok := a.(agent.StepHook[S, A]); ok {
		b.h.onStep = h.OnStep
	}
	if h, ok := a.(agent.GivesControlHook[S]); ok {
		b.h.onGives = h.OnGivesControl
	}
	if m, ok := a.(agent.Masker[AS]); ok {
		b.mask = m.ActionMask
	}
	if i, ok := a.(agent.Informer[AS]); ok {
		b.inform = i.Info
	}
	if e, ok := a.(agent.ViewEncoder[AS]); ok {
		b.encodeView = e.EncodeView
	}
	return b
}

type binding[S, AS, O any, R agent.Raw, A any] struct {
	a          agent.Agent[S, AS, O, R, A]
	name       string
	obs, act   spaces.Space
	fromRaw    func(agent.RawAction) R
	h          hooks[S, A]
	mask       func(AS, []bool)
	inform     func(AS) any
	encodeView func(AS, []float32, []bool)
}

func (b *binding[S, AS, O, R, A]) Name() string                   { return b.name }
func (b *binding[S, AS, O, R, A]) ObservationSpace() spaces.Space { return b.obs }
func (b *binding[S, AS, O, R, A]) ActionSpace() spaces.Space      { return b.act }
func (b *binding[S, AS, O, R, A]) hooks() hooks[S, A]             { return b.h }

func (b *binding[S, AS, O, R, A]) check() error {
	if b.obs == nil || b.act == nil {
		return fmt.Errorf("agent %q: nil observation or action space", b.name)
	}
	if b.obs.FlatDim() < 1 {
		return fmt.Errorf("agent %q: observation space %s has no dimensions", b.name, b.obs)
	}
	var want spaces.Kind
	switch any(*new(R)).(type) {
	case int64:
		want = spaces.KindDiscrete
	case []float32:
		want = spaces.KindBox
	case []int64:
		if k := b.act.Kind(); k != spaces.KindMultiDiscrete && k != spaces.KindMultiBinary {
			return fmt.Errorf("agent %q: raw action type []int64 needs a MultiDiscrete or MultiBinary action space, not %s", b.name, b.act)
		}
		want = b.act.Kind()
	}
	if b.act.Kind() != want {
		return fmt.Errorf("agent %q: raw action type %T needs a %s action space, not %s", b.name, *new(R), want, b.act)
	}
	if b.mask != nil && want != spaces.KindDiscrete {
		return fmt.Errorf("agent %q: an action mask needs a Discrete action space, not %s", b.name, b.act)
	}
	return nil
}

func (b *binding[S, AS, O, R, A]) masked() int {
	if b.mask == nil {
		return 0
	}
	return int(b.act.(spaces.Discrete).N)
}

func (b *binding[S, AS, O, R, A]) instance() instance[S, A] {
	return &bound[S, AS, O, R, A]{binding: b}
}

// instance is an agent bound into one runtime: it keeps the agent's view at its pending
// decision, so that settling the decision translates only the state it ends in. An
// agent is at most once in a runtime's stack (transitions rejects trigger cycles and
// the runtime refuses a trigger into an agent in control), so one pending view each
// suffices.
type instance[S, A any] interface {
	// decide translates s and decodes raw, and keeps the view as the pending one. The
	// view of a decision that fails is never settled: the next decide replaces it.
	decide(s *S, c agent.Clock, raw agent.RawAction) (A, error)
	// observe writes the first observation of a sub-episode.
	observe(s *S, c agent.Clock, obs []float32, mask []bool)
	// settle scores the pending decision, whose action was a, in state s, and writes the
	// observation there.
	settle(a *A, s *S, c agent.Clock, obs []float32, mask []bool) (reward float64, terminated, truncated bool)
}

type bound[S, AS, O any, R agent.Raw, A any] struct {
	*binding[S, AS, O, R, A]
	pending AS
}

func (b *bound[S, AS, O, R, A]) decide(s *S, c agent.Clock, raw agent.RawAction) (A, error) {
	b.pending = b.a.TranslateState(*s, c)
	return b.a.DecodeAction(b.pending, b.fromRaw(raw))
}

func (b *bound[S, AS, O, R, A]) observe(s *S, c agent.Clock, obs []float32, mask []bool) {
	b.encode(b.a.TranslateState(*s, c), obs, mask)
}

func (b *bound[S, AS, O, R, A]) settle(a *A, s *S, c agent.Clock, obs []float32, mask []bool) (float64, bool, bool) {
	next := b.a.TranslateState(*s, c)
	reward := b.a.Reward(b.pending, *a, next)
	term, trunc := b.a.Done(next)
	b.encode(next, obs, mask)
	return reward, term, trunc
}

func (b *binding[S, AS, O, R, A]) encode(as AS, obs []float32, mask []bool) {
	if b.encodeView != nil {
		b.encodeView(as, obs, mask)
		return
	}
	b.a.EncodeObservation(obs, b.a.Observe(as))
	if b.mask != nil {
		b.mask(as, mask)
	}
}

func (b *binding[S, AS, O, R, A]) typedObservation(s S, c agent.Clock) any {
	return b.a.Observe(b.a.TranslateState(s, c))
}

func (b *binding[S, AS, O, R, A]) info(s S, c agent.Clock) any {
	if b.inform == nil {
		return nil
	}
	return b.inform(b.a.TranslateState(s, c))
}

// rawConverter picks, once, the function that reads an R out of a RawAction; the
// assertion on a function value is what lets a generic R avoid boxing on the step path.
func rawConverter[R agent.Raw]() func(agent.RawAction) R {
	var f any
	switch any(*new(R)).(type) {
	case int64:
		f = func(r agent.RawAction) int64 { return r.Int }
	case []int64:
		f = func(r agent.RawAction) []int64 { return r.Ints }
	case []float32:
		f = func(r agent.RawAction) []float32 { return r.Floats }
	}
	return f.(func(agent.RawAction) R)
}
