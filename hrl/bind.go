package hrl

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
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
	returnsAtOnce() bool
	instance(inPlace bool) instance[S, A]
	stepper(inPlace bool) agent.Stepper[S, A]
	typedObservation(s S, c agent.Clock) any
	info(s S, c agent.Clock) any
	done(s S, c agent.Clock) (terminated, truncated bool)
}

// hooks holds an agent's optional hooks, found once at bind time; nil when absent.
// They are kept as the agent's interfaces, not as method values, so that calling one
// is a single call through the agent's method table.
type hooks[S, A any] struct {
	onReset agent.ResetHook[S]
	onTakes agent.TakesControlHook[S, A]
	onStep  agent.StepHook[S, A]
	onGives agent.GivesControlHook[S]
}

// Bind erases an agent's types so that agents of different types share one
// environment. It finds the agent's optional hooks (agent.ResetHook and the others) once,
// and asks an agent.AtOnceReturner's ReturnsAtOnce once.
// Problems with the agent (a raw action type that does not fit its action space, a mask
// on a space that is not Discrete) are reported by New.
func Bind[S, AS, O any, R agent.Raw, A any](a agent.Agent[S, AS, O, R, A]) Binding[S, A] {
	b := &binding[S, AS, O, R, A]{
		a:    a,
		name: a.Name(),
		obs:  a.ObservationSpace(),
		act:  a.ActionSpace(),
	}
	if h, ok := a.(agent.ResetHook[S]); ok {
		b.h.onReset = h
	}
	if h, ok := a.(agent.TakesControlHook[S, A]); ok {
		b.h.onTakes = h
	}
	if h, ok := a.(agent.StepHook[S, A]); ok {
		b.h.onStep = h
	}
	if h, ok := a.(agent.GivesControlHook[S]); ok {
		b.h.onGives = h
	}
	if m, ok := a.(agent.Masker[AS]); ok {
		b.mask = m
	}
	if i, ok := a.(agent.Informer[AS]); ok {
		b.inform = i
	}
	if e, ok := a.(agent.ViewEncoder[AS]); ok {
		b.encodeView = e
	}
	if p, ok := a.(agent.InPlace[S, AS, R, A]); ok {
		b.inPlace = p
	}
	if r, ok := a.(agent.AtOnceReturner); ok {
		b.atOnce = r.ReturnsAtOnce()
	}
	return b
}

type binding[S, AS, O any, R agent.Raw, A any] struct {
	a          agent.Agent[S, AS, O, R, A]
	name       string
	obs, act   spaces.Space
	h          hooks[S, A]
	mask       agent.Masker[AS]
	inform     agent.Informer[AS]
	encodeView agent.ViewEncoder[AS]
	inPlace    agent.InPlace[S, AS, R, A]
	atOnce     bool // the agent returns control at once when it is done as it takes it
}

func (b *binding[S, AS, O, R, A]) Name() string                   { return b.name }
func (b *binding[S, AS, O, R, A]) ObservationSpace() spaces.Space { return b.obs }
func (b *binding[S, AS, O, R, A]) ActionSpace() spaces.Space      { return b.act }
func (b *binding[S, AS, O, R, A]) hooks() hooks[S, A]             { return b.h }
func (b *binding[S, AS, O, R, A]) returnsAtOnce() bool            { return b.atOnce }

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

// instance binds the agent into one runtime, through its agent.InPlace when it has one
// and inPlace is set.
func (b *binding[S, AS, O, R, A]) instance(inPlace bool) instance[S, A] {
	if inPlace && b.inPlace != nil {
		return &boundInPlace[S, AS, O, R, A]{binding: b, p: b.inPlace}
	}
	return &bound[S, AS, O, R, A]{binding: b}
}

// stepper returns a new agent.Stepper of an agent.InPlace that is an
// agent.StepperMaker with a Discrete action space when inPlace is set, else nil: an agent
// that hides its InPlace hides its Stepper too.
func (b *binding[S, AS, O, R, A]) stepper(inPlace bool) agent.Stepper[S, A] {
	m, ok := b.a.(agent.StepperMaker[S, A])
	if _, discrete := any(*new(R)).(int64); !inPlace || b.inPlace == nil || !ok || !discrete {
		return nil
	}
	return m.NewStepper()
}

// instance is an agent bound into one runtime. It keeps the agent's view at its latest
// report, and at its pending decision, so that each view is translated once: the
// view an agent is reported in is the view it decides in, since nothing changes the
// state or the agent's clock between its report and its next action (an agent is
// reported whenever it takes control or its decision settles, and the runtime reports
// the acting agent last, after every hook). An agent is at most once in a runtime's
// stack (transitions rejects trigger cycles and the runtime refuses a trigger into an
// agent in control), so one pending view each suffices.
type instance[S, A any] interface {
	// decide decodes raw in the view of the agent's latest report into *dst, and keeps
	// that view as the pending one. The view of a decision that fails is never settled:
	// the next decide replaces it.
	decide(raw agent.RawAction, dst *A) error
	// decideInt is decide for the raw action v of a Discrete action space.
	decideInt(v int64, dst *A) error
	// observe translates s at rep's clock and writes the first observation of a
	// sub-episode into rep.
	observe(s *S, rep *env.Report)
	// settle translates s at rep's clock, scores the pending decision, whose action
	// was a, and writes the reward, the end of the sub-episode and the observation
	// into rep.
	settle(a *A, s *S, rep *env.Report)
	// doneNow reports what Done says in the view of the agent's latest report.
	doneNow() (terminated, truncated bool)
}

type bound[S, AS, O any, R agent.Raw, A any] struct {
	*binding[S, AS, O, R, A]
	view    AS // at the agent's latest report
	pending AS // at the agent's pending decision
}

func (b *bound[S, AS, O, R, A]) decide(raw agent.RawAction, dst *A) (err error) {
	*dst, err = b.a.DecodeAction(b.view, rawOf[R](&raw))
	b.pending = b.view
	return err
}

func (b *bound[S, AS, O, R, A]) decideInt(v int64, dst *A) (err error) {
	*dst, err = b.a.DecodeAction(b.view, rawInt[R](v))
	b.pending = b.view
	return err
}

func (b *bound[S, AS, O, R, A]) doneNow() (bool, bool) { return b.a.Done(b.view) }

// observe and settle keep the view they translate only after the calls that read it:
// the view comes back in registers and is spilled to the stack, and a copy made at once
// would stall on those stores.

func (b *bound[S, AS, O, R, A]) observe(s *S, rep *env.Report) {
	v := b.a.TranslateState(*s, rep.Clock)
	if e := b.encodeView; e != nil {
		e.EncodeView(v, rep.Obs, rep.Mask)
	} else {
		b.encode(&v, rep.Obs, rep.Mask)
	}
	b.view = v
}

func (b *bound[S, AS, O, R, A]) settle(a *A, s *S, rep *env.Report) {
	v := b.a.TranslateState(*s, rep.Clock)
	rep.Terminated, rep.Truncated = b.a.Done(v)
	rep.Reward = b.a.Reward(b.pending, *a, v)
	if e := b.encodeView; e != nil {
		e.EncodeView(v, rep.Obs, rep.Mask)
	} else {
		b.encode(&v, rep.Obs, rep.Mask)
	}
	b.view = v
}

// boundInPlace is the instance of an agent.InPlace: the step path makes one call to the
// agent per decision and per report, passes views by pointer, and keeps the view of the
// latest report and that of the pending decision in two slots it switches between rather
// than copying one into the other. The view of the pending decision stays in its slot
// until the decision is settled: a report writes the other slot. An agent is reported
// again only after it decided (its view then is the pending one) or when it takes
// control, with no decision pending.
type boundInPlace[S, AS, O any, R agent.Raw, A any] struct {
	*binding[S, AS, O, R, A]
	p       agent.InPlace[S, AS, R, A]
	out     agent.Out // the buffers of the report slot last written
	views   [2]AS
	latest  uint8 // the slot of the view at the agent's latest report
	pending uint8 // the slot of the view at the agent's pending decision
}

func (b *boundInPlace[S, AS, O, R, A]) decide(raw agent.RawAction, dst *A) (err error) {
	b.pending = b.latest
	*dst, err = b.p.DecodeAt(&b.views[b.latest&1], rawOf[R](&raw))
	return err
}

func (b *boundInPlace[S, AS, O, R, A]) decideInt(v int64, dst *A) (err error) {
	b.pending = b.latest
	*dst, err = b.p.DecodeAt(&b.views[b.latest&1], rawInt[R](v))
	return err
}

func (b *boundInPlace[S, AS, O, R, A]) doneNow() (bool, bool) {
	return b.a.Done(b.views[b.latest&1])
}

func (b *boundInPlace[S, AS, O, R, A]) observe(s *S, rep *env.Report) {
	n := b.pending ^ 1
	b.p.ObserveTo(&b.views[n&1], s, &rep.Clock, b.outOf(rep))
	b.latest = n
}

func (b *boundInPlace[S, AS, O, R, A]) settle(a *A, s *S, rep *env.Report) {
	n := b.pending ^ 1
	rep.Reward, rep.Terminated, rep.Truncated = b.p.SettleTo(&b.views[n&1], s, &rep.Clock, &b.views[b.pending&1], a, b.outOf(rep))
	b.latest = n
}

// outOf returns the agent's Out for rep's buffers. A report slot's buffers stay the
// same, and an agent is mostly reported in the same slot, so this is a comparison.
func (b *boundInPlace[S, AS, O, R, A]) outOf(rep *env.Report) *agent.Out {
	if len(b.out.Obs) == 0 || &b.out.Obs[0] != &rep.Obs[0] {
		b.out.Obs, b.out.Mask = rep.Obs, rep.Mask
	}
	return &b.out
}

// encode writes the observation and the mask of an agent without a ViewEncoder (observe
// and settle call EncodeView themselves, which saves a call on the step path).
func (b *binding[S, AS, O, R, A]) encode(as *AS, obs []float32, mask []bool) {
	b.a.EncodeObservation(obs, b.a.Observe(*as))
	if b.mask != nil {
		b.mask.ActionMask(*as, mask)
	}
}

func (b *binding[S, AS, O, R, A]) typedObservation(s S, c agent.Clock) any {
	return b.a.Observe(b.a.TranslateState(s, c))
}

func (b *binding[S, AS, O, R, A]) done(s S, c agent.Clock) (bool, bool) {
	return b.a.Done(b.a.TranslateState(s, c))
}

func (b *binding[S, AS, O, R, A]) info(s S, c agent.Clock) any {
	if b.inform == nil {
		return nil
	}
	return b.inform.Info(b.a.TranslateState(s, c))
}

// rawOf reads an R out of raw. The switch is on the type of a pointer to R, which the
// instantiation knows: it is a comparison with no call and no boxing on the step path.
func rawOf[R agent.Raw](raw *agent.RawAction) (r R) {
	switch p := any(&r).(type) {
	case *int64:
		*p = raw.Int
	case *[]int64:
		*p = raw.Ints
	case *[]float32:
		*p = raw.Floats
	}
	return r
}

// rawInt is the R of a Discrete action v; the runtime calls it only for agents whose
// action space is Discrete, whose R is int64.
func rawInt[R agent.Raw](v int64) (r R) {
	if p, ok := any(&r).(*int64); ok {
		*p = v
	}
	return r
}
