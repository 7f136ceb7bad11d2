package hrl

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"unsafe"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
	"go.uber.org/multierr"
)

// Config tunes a Runtime. The zero value means no tick limit, and agents that implement
// agent.InPlace stepped through it.
type Config struct {
	// MaxTicks truncates an episode after this many environment steps: every agent still
	// in control is reported truncated. 0 means no limit.
	MaxTicks int
	// NoInPlace steps every agent through its agent.Agent methods, ignoring
	// agent.InPlace, and the environment through its Step, ignoring InPlaceStepper. The
	// results are the same when each InPlace and InPlaceStepper does what it must;
	// hrltest plays a runtime with and one without to check that. false (the zero value)
	// uses them where the agents and the environment implement them.
	NoInPlace bool
}

// sameID reports whether two agent ids are equal. The ids of a runtime's results are the
// strings it keeps, so most comparisons are of a string with itself: those are settled
// by the pointers, without reading the bytes.
func sameID(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// Obs returns the typed observation of the agent reported with the given id, built
// from the same state as its flat observation (env.Turn.TypedObs). It is for users who
// want their agent's own observation type; it allocates and is not meant for the step
// path. The result must be used before the runtime's next Step or Reset.
func Obs[O any](res env.Turn, id string) (O, error) {
	var zero O
	slot := slices.IndexFunc(res.Reports, func(r env.Report) bool { return r.AgentID == id })
	if slot < 0 || res.TypedObs == nil {
		return zero, fmt.Errorf("hrl: no agent %q reported in this step", id)
	}
	v := res.TypedObs(slot)
	o, ok := v.(O)
	if !ok {
		return zero, fmt.Errorf("hrl: agent %q observes %T, not %T", id, v, zero)
	}
	return o, nil
}

// Runtime steps a HierarchicalEnv. It is pure and deterministic: the same seed and the
// same actions give the same results; it starts no goroutine and does no I/O.
// A Runtime is not safe for concurrent use; run one per goroutine.
type Runtime[S, A any] struct {
	env   HierarchicalEnv[S, A]
	inEnv InPlaceStepper[S, A] // env's, unless Config.NoInPlace; else nil
	info  func(S) any
	table *transitions.Table[S, A]
	// machine is the table's machine, kept for the step path's triggers.
	machine transitions.Machine[S, A]
	agents  []Binding[S, A]
	bound   []boundAgent[S, A] // what the step path needs of each agent, in one place
	specs   []env.Spec
	cfg     Config
	pcg     *rand.PCG
	rng     *rand.Rand
	ids     [][]string // ids[agent][k], grown as episodes need

	started bool
	over    bool
	state   S
	next    S // the state a step builds when a hook or a trigger may still reject it
	tick    int
	stack   []frame[S, A]
	subEp   []int
	// returned[i] is the tick of agent i's latest return at once in this episode, 0 for
	// none (a step's tick is at least 1), so that returned[i] == tick within a step
	// tells that the agent returned at once in that step.
	returned []int
	res      env.Turn
	typedObs func(int) any   // for the results, made once
	slots    []reportSlot[S] // one per report slot
	maxObs   int
	maxMask  int
	begun    uint64 // sub-episodes begun, for frame.begun
}

// reportSlot holds a report's buffers: its observation and mask, sized for the largest
// agent's, and the state they were built from: the current state while live is set,
// else state (a hook that changes the current state after the report keeps a copy
// first, see keep).
type reportSlot[S any] struct {
	obs   []float32
	mask  []bool
	state S
	live  bool
	// agent is the agent the slot's report last described.
	agent int
	// frame is the sub-episode (frame.begun) whose agent the slot's report last
	// described, 0 for none: its id, name, parent and buffers are still in the report.
	frame uint64
}

// boundAgent is an agent as the step path uses it: its instance, its hooks, the range
// of its Discrete actions, its name and the lengths of its observation and mask.
type boundAgent[S, A any] struct {
	inst instance[S, A]
	// step is the agent's agent.Stepper where it has one (and its action space is
	// Discrete, with fast set): the step path then calls it instead of inst. out holds
	// the buffers of the report slot it last wrote.
	step  agent.Stepper[S, A]
	out   agent.Out
	hooks hooks[S, A]
	fast  discreteRange // for the check on the step path
	// triggers tells whether any trigger leaves the agent (else the step path does not
	// look for one), switching whether every action of the agent must fire one, atOnce
	// whether the agent returns control at once when it is done as it takes control.
	triggers, switching, atOnce bool
	// plain tells that nothing can reject the agent's action after the environment
	// accepted it, or change the state after: no trigger leaves the agent, and it has
	// no StepHook. The runtime then steps its state in place.
	plain   bool
	name    string
	obsDim  int
	maskLen int
	// onDone is what follows the end of the agent's sub-episodes (the table's OnDone).
	onDone int
	// trig lists the triggers that leave the agent, in the machine's order, so that
	// the step path matches them without a call into the table.
	trig []boundTrigger[S, A]
}

// boundTrigger is a trigger with the index of the agent it hands control to, -1 for a
// procedure.
type boundTrigger[S, A any] struct {
	tr *transitions.Trigger[S, A]
	to int
}

// frame is an agent in control: the acting agent on top, its ancestors below, each
// waiting for its child's sub-episode to end.
type frame[S, A any] struct {
	agent int
	ag    *boundAgent[S, A] // &Runtime.bound[agent]
	// k is the agent's sub-episode count (Clock.SubEpisode) during this sub-episode.
	k int
	// begun numbers the sub-episode among those the runtime has begun, from 1.
	begun    uint64
	id       string
	parentID string
	steps    int
	// The decision that handed control to a child, for the reward over its span (the
	// agent's instance keeps its view at that decision).
	actedTick int
	action    A
}

// outOf returns the agent's Out for rep's buffers. A report slot's buffers stay the
// same, and an agent is mostly reported in the same slot, so this is a comparison.
func (ag *boundAgent[S, A]) outOf(rep *env.Report) *agent.Out {
	if unsafe.SliceData(ag.out.Obs) != unsafe.SliceData(rep.Obs) {
		ag.out.Obs, ag.out.Mask = rep.Obs, rep.Mask
	}
	return &ag.out
}

// discreteRange is the range [lo, hi) of a Discrete action space; ok is false for
// other spaces.
type discreteRange struct {
	lo, hi int64
	ok     bool
}

// inside reports whether raw is a member of the range, without calling the space.
func (d discreteRange) inside(raw *agent.RawAction) bool {
	return d.ok && raw.Ints == nil && raw.Floats == nil && raw.Int >= d.lo && raw.Int < d.hi
}

// New checks env (its agents and its machine, every problem at once) and returns a
// runtime for it. Call Reset before the first Step.
func New[S, A any](e HierarchicalEnv[S, A], cfg Config) (*Runtime[S, A], error) {
	var errs []error
	if cfg.MaxTicks < 0 {
		errs = append(errs, fmt.Errorf("hrl: Config.MaxTicks is %d; want 0 (no limit) or more", cfg.MaxTicks))
	}
	agents := e.Agents()
	names := make([]string, len(agents))
	for i, b := range agents {
		if b == nil {
			errs = append(errs, fmt.Errorf("hrl: agent #%d is nil", i))
			continue
		}
		names[i] = b.Name()
		if err := b.check(); err != nil {
			errs = append(errs, fmt.Errorf("hrl: %w", err))
		}
	}
	table, err := transitions.Compile(e.Machine(), names)
	errs = append(errs, err)
	if err := multierr.Combine(errs...); err != nil {
		return nil, err
	}
	pcg := rand.NewPCG(0, 0)
	r := &Runtime[S, A]{
		env:      e,
		table:    table,
		agents:   agents,
		cfg:      cfg,
		pcg:      pcg,
		rng:      rand.New(pcg),
		ids:      make([][]string, len(agents)),
		subEp:    make([]int, len(agents)),
		returned: make([]int, len(agents)),
	}
	if in, ok := e.(Informer[S]); ok {
		r.info = in.Info
	}
	if st, ok := e.(InPlaceStepper[S, A]); ok && !cfg.NoInPlace {
		r.inEnv = st
	}
	r.bound = make([]boundAgent[S, A], len(agents))
	for i, b := range agents {
		var fast discreteRange
		if d, ok := b.ActionSpace().(spaces.Discrete); ok {
			fast = discreteRange{lo: d.Start, hi: d.Start + d.N, ok: true}
		}
		r.bound[i] = boundAgent[S, A]{
			inst:    b.instance(!cfg.NoInPlace),
			hooks:   b.hooks(),
			fast:    fast,
			name:    b.Name(),
			obsDim:  b.ObservationSpace().FlatDim(),
			maskLen: b.masked(),
			atOnce:  b.returnsAtOnce(),
		}
		r.bound[i].switching = table.Switching(i)
		if fast.ok {
			r.bound[i].step = b.stepper(!cfg.NoInPlace)
		}
		r.specs = append(r.specs, env.Spec{Name: b.Name(), ObservationSpace: b.ObservationSpace(), ActionSpace: b.ActionSpace(),
			MaskLen: b.masked(), ReturnsAtOnce: b.returnsAtOnce()})
		r.maxObs = max(r.maxObs, b.ObservationSpace().FlatDim())
		r.maxMask = max(r.maxMask, b.masked())
	}
	r.machine = table.Machine()
	for k := range r.machine.Triggers {
		tr := &r.machine.Triggers[k]
		ag := &r.bound[table.Index(tr.From)]
		ag.triggers = true
		to := -1
		if tr.Run == nil {
			to = table.Index(tr.To)
		}
		ag.trig = append(ag.trig, boundTrigger[S, A]{tr: tr, to: to})
	}
	for i := range r.bound {
		ag := &r.bound[i]
		ag.plain = !ag.triggers && !ag.switching && ag.hooks.onStep == nil
		ag.onDone = table.OnDone(i)
	}
	r.typedObs = r.typedObservation
	return r, nil
}

// Agents describes the runtime's agents in the environment's order.
func (r *Runtime[S, A]) Agents() []env.Spec { return slices.Clone(r.specs) }

// Machine returns the environment's switching machine.
func (r *Runtime[S, A]) Machine() transitions.Machine[S, A] { return r.table.Machine() }

// Mermaid draws the environment's switching machine as a Mermaid state diagram (see
// transitions.Machine.Mermaid), for tools that hold the runtime without its types.
func (r *Runtime[S, A]) Mermaid() string { return r.table.Machine().Mermaid() }

// DOT draws the environment's switching machine in Graphviz's DOT language.
func (r *Runtime[S, A]) DOT() string { return r.table.Machine().DOT() }

// State returns the current environment state. Treat it as read-only.
func (r *Runtime[S, A]) State() S { return r.state }

// Tick returns the number of environment steps since the last reset.
func (r *Runtime[S, A]) Tick() int { return r.tick }

// Acting returns the id of the agent that acts next, "" before a reset and after the
// episode is over.
func (r *Runtime[S, A]) Acting() string {
	if !r.started || r.over {
		return ""
	}
	return r.stack[len(r.stack)-1].id
}

// Over reports whether the episode is over.
func (r *Runtime[S, A]) Over() bool { return r.over }

// Info describes the current state with the environment's Informer, or nil.
func (r *Runtime[S, A]) Info() any {
	if r.info == nil || !r.started {
		return nil
	}
	return r.info(r.state)
}

// AgentInfo describes the current state as the agent reported with id sees it, with
// the agent's agent.Informer, or nil.
func (r *Runtime[S, A]) AgentInfo(id string) any {
	for slot := range r.res.Reports {
		if rep := &r.res.Reports[slot]; rep.AgentID == id {
			return r.agents[r.slots[slot].agent].info(r.state, rep.Clock)
		}
	}
	return nil
}

// AgentDone reports what the Done of the agent reported with id in the latest result
// says in the view that report was built from: its state (before any hook that ran
// later in the same step) and its clock. For a Start report it tells whether the agent
// was already done as it took control, which hrltest checks: unless the agent returns
// at once (agent.AtOnceReturner), it then acts once anyway. The flags may differ from
// the report's, which also carry the runtime's cuts (a tick limit, a parent cut short).
// ok is false when no agent with id is reported. It translates the state again and is
// meant for checks and tools, not the step path.
func (r *Runtime[S, A]) AgentDone(id string) (terminated, truncated, ok bool) {
	for slot := range r.res.Reports {
		if rep := &r.res.Reports[slot]; rep.AgentID == id {
			terminated, truncated = r.agents[r.slots[slot].agent].done(r.stateOf(slot), rep.Clock)
			return terminated, truncated, true
		}
	}
	return false, false, false
}

// typedObservation rebuilds the typed observation of the agent reported in the given slot
// of the latest result, from the state its flat observation was built from: a hook that
// ran later in the same step (OnGivesControl, OnTakesControl) may have changed the
// current state since.
func (r *Runtime[S, A]) typedObservation(slot int) any {
	if slot < 0 || slot >= len(r.res.Reports) {
		return nil
	}
	return r.agents[r.slots[slot].agent].typedObservation(r.stateOf(slot), r.res.Reports[slot].Clock)
}

// stateOf returns the state the report in the given slot of the latest result was
// built from.
func (r *Runtime[S, A]) stateOf(slot int) S {
	if sl := &r.slots[slot]; !sl.live {
		return sl.state
	}
	return r.state
}

// keep copies the current state into the slots of this step's reports built from it,
// before a hook changes it.
func (r *Runtime[S, A]) keep() {
	for n := range r.res.Reports {
		if sl := &r.slots[n]; sl.live {
			sl.state, sl.live = r.state, false
		}
	}
}

// Reset starts a new episode from the environment's InitialState drawn with a generator
// seeded by seed, calls every agent's OnReset, and reports the initial agent's first
// observation. The error is always nil: a runtime's episode always starts. It is there
// so that a Runtime is an env.MultiAgent, whose Reset may fail.
func (r *Runtime[S, A]) Reset(seed uint64) (res env.Turn, err error) {
	r.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
	s := r.env.InitialState(r.rng)
	for i := range r.bound {
		if h := r.bound[i].hooks.onReset; h != nil {
			s = h.OnReset(s)
		}
	}
	r.state = s
	r.started, r.over, r.tick = true, false, 0
	r.stack = r.stack[:0]
	clear(r.subEp)
	clear(r.returned)
	r.res.Reports = r.res.Reports[:0]
	r.begin(r.table.Initial(), "", &agent.Switch[A]{Cause: agent.ByReset})
	r.result(&res)
	return res, nil
}

// Step applies a raw action of the acting agent with the given id and reports every
// agent concerned. A *StepError (one of the sentinels in errors.go, with the agent id,
// the action and the reason) leaves the runtime exactly as it was: the caller may retry
// with another action.
func (r *Runtime[S, A]) Step(id string, raw agent.RawAction) (res env.Turn, err error) {
	switch {
	case !r.started:
		return env.Turn{}, r.fail(id, raw, env.ErrNotReset, nil)
	case r.over:
		return env.Turn{}, r.fail(id, raw, env.ErrEpisodeOver, nil)
	}
	top := &r.stack[len(r.stack)-1]
	if !sameID(id, top.id) {
		return env.Turn{}, r.fail(id, raw, env.ErrNotActing, nil)
	}
	ag := top.ag
	// The decision is decoded into the acting frame's action: nothing reads it before
	// the step commits, so a rejected step leaves nothing behind there.
	if ag.fast.inside(&raw) {
		if st := ag.step; st != nil {
			err = st.DecodeInt(raw.Int, &top.action)
		} else {
			err = ag.inst.decideInt(raw.Int, &top.action)
		}
	} else {
		if err := raw.Check(r.specs[top.agent].ActionSpace); err != nil {
			return env.Turn{}, r.fail(id, raw, env.ErrOutsideSpace, err)
		}
		err = ag.inst.decide(raw, &top.action)
	}
	if err != nil {
		return env.Turn{}, r.fail(id, raw, env.ErrInvalidAction, err)
	}
	if !ag.plain {
		if err := r.stepSwitching(id, &raw, top, ag); err != nil {
			return env.Turn{}, err
		}
	} else {
		// Nothing after the environment can reject the action: step the state itself.
		if r.inEnv != nil {
			err = r.inEnv.StepInPlace(&r.state, &top.action)
		} else {
			err = r.stepValue(&r.state, &top.action)
		}
		if err != nil {
			return env.Turn{}, r.fail(id, raw, env.ErrRejected, err)
		}
		r.tick++
		top.steps++
		var rep *env.Report
		if len(r.res.Reports) == 1 && r.slots[0].frame == top.begun {
			// The agent acts on, reported alone in the same slot as in the last step: only
			// what a settle changes is written.
			rep = &r.res.Reports[0]
			rep.Start, rep.SpanTicks = false, 1
			rep.Clock.Steps, rep.Clock.Tick = top.steps, r.tick
			r.slots[0].live = true
		} else {
			r.res.Reports = r.res.Reports[:0]
			rep = r.slot(top)
			rep.SpanTicks = 1
		}
		if st := ag.step; st != nil {
			rep.Reward, rep.Terminated, rep.Truncated = st.Settle(&r.state, &rep.Clock, &top.action, ag.outOf(rep))
		} else {
			ag.inst.settle(&top.action, &r.state, rep)
		}
		if rep.Terminated || rep.Truncated {
			if n := len(r.stack) - 2; n >= 0 && ag.onDone == transitions.DoneParent && ag.hooks.onGives == nil {
				// The sub-episode ends and control returns to the parent, which settles the
				// decision that handed control down: finish's first round, unrolled.
				r.subEp[top.agent]++
				r.stack = r.stack[:n+1]
				p := &r.stack[n]
				p.steps++
				if r.settle(p, r.tick-p.actedTick) {
					r.finish()
				}
			} else {
				r.finish()
			}
		}
	}
	if !r.over && r.cfg.MaxTicks > 0 && r.tick >= r.cfg.MaxTicks {
		r.truncate()
	}
	res.Reports, res.Tick, res.TypedObs = r.res.Reports, r.tick, r.typedObs
	if !r.over {
		res.Next = r.stack[len(r.stack)-1].id
	} else {
		res.Over = true
	}
	return res, nil
}

// stepSwitching is the rest of Step for an agent whose action a hook or a trigger may
// still reject or change after the environment accepted it: the step builds the next
// state apart, in r.next, and commits it when nothing failed.
func (r *Runtime[S, A]) stepSwitching(id string, raw *agent.RawAction, top *frame[S, A], ag *boundAgent[S, A]) (err error) {
	// Which trigger fires depends on the action alone.
	var (
		tr *transitions.Trigger[S, A]
		to = -1
	)
	for i := range ag.trig {
		if t := &ag.trig[i]; t.tr.When == nil || t.tr.When(top.action) {
			tr, to = t.tr, t.to
			break
		}
	}
	if ag.hooks.onStep == nil && (tr == nil && !ag.switching || tr != nil && tr.Run == nil && r.level(to) < 0) {
		// Only the environment can reject the action: it steps the state itself.
		if r.inEnv != nil {
			err = r.inEnv.StepInPlace(&r.state, &top.action)
		} else {
			err = r.stepValue(&r.state, &top.action)
		}
		if err != nil {
			return r.fail(id, *raw, env.ErrRejected, err)
		}
	} else if err = r.stepApart(id, raw, top, ag, tr, to); err != nil {
		return err
	}

	// Nothing below fails: the step is committed.
	r.tick++
	r.res.Reports = r.res.Reports[:0]
	if to >= 0 {
		top.actedTick = r.tick - 1
		if r.begin(to, top.id, &agent.Switch[A]{Cause: agent.ByTrigger, Rule: tr.Name, From: top.id, Action: top.action}) {
			r.finish()
		}
	} else {
		top.steps++
		if r.settle(top, 1) {
			r.finish()
		}
	}
	return nil
}

// stepApart steps the state of a switching step in r.next, runs the agent's StepHook
// and the procedure of the trigger tr that fired, if any, and commits the state when
// nothing failed. The errors come in this order: the environment's, then a missing
// trigger, a failed procedure, a target already in control.
func (r *Runtime[S, A]) stepApart(id string, raw *agent.RawAction, top *frame[S, A], ag *boundAgent[S, A], tr *transitions.Trigger[S, A], to int) (err error) {
	s := &r.next
	*s = r.state
	if r.inEnv != nil {
		err = r.inEnv.StepInPlace(s, &top.action)
	} else {
		err = r.stepValue(s, &top.action)
	}
	if err != nil {
		return r.fail(id, *raw, env.ErrRejected, err)
	}
	if h := ag.hooks.onStep; h != nil {
		*s = h.OnStep(*s, top.action)
	}
	switch {
	case tr == nil && ag.switching:
		return r.fail(id, *raw, ErrNoTrigger, nil)
	case tr != nil && tr.Run != nil:
		if *s, err = tr.Run(*s, top.action); err != nil {
			return r.fail(id, *raw, env.ErrRejected, fmt.Errorf("procedure %q: %w", tr.Name, err))
		}
	case tr != nil && r.level(to) >= 0:
		return r.fail(id, *raw, ErrInControl, fmt.Errorf("trigger %q hands control to %s", tr.Name, r.stack[r.level(to)].id))
	}
	r.state = *s
	return nil
}

// stepValue steps *s through the environment's Step, leaving it as it was on an error.
func (r *Runtime[S, A]) stepValue(s *S, a *A) error {
	next, err := r.env.Step(*s, *a)
	if err == nil {
		*s = next
	}
	return err
}

// result fills in the result of a Reset or Step. It writes the named result field by
// field: a composite literal, or a copy of a env.Turn kept in the runtime, is built in
// memory and copied twice on its way to the registers it is returned in, and the
// copies stall on the stores just made.
func (r *Runtime[S, A]) result(res *env.Turn) {
	res.Reports = r.res.Reports
	res.Next = r.Acting()
	res.Over = r.over
	res.Tick = r.tick
	res.TypedObs = r.typedObs
}

func (r *Runtime[S, A]) id(i, k int) string {
	for len(r.ids[i]) <= k {
		r.ids[i] = append(r.ids[i], r.agents[i].Name()+"_"+strconv.Itoa(len(r.ids[i])))
	}
	return r.ids[i][k]
}

// slot returns the next report, with buffers for its observation and mask.
func (r *Runtime[S, A]) slot(f *frame[S, A]) *env.Report {
	n := len(r.res.Reports)
	if n == len(r.slots) {
		r.slots = append(r.slots, reportSlot[S]{obs: make([]float32, r.maxObs), mask: make([]bool, r.maxMask)})
	}
	sl := &r.slots[n]
	// Every caller builds the report from the current state right after taking the slot.
	sl.live = true
	if n < cap(r.res.Reports) {
		r.res.Reports = r.res.Reports[:n+1]
	} else {
		r.res.Reports = append(r.res.Reports, env.Report{})
	}
	// The report is written field by field, not as one composite value: a composite is
	// built on the stack and copied, and the copy stalls on the stores that built it.
	// What names the agent and its buffers is written only when the slot last reported
	// another sub-episode (an agent acting on is reported in the same slot step after
	// step), and the agent's name and buffers only when it reported another agent.
	rep := &r.res.Reports[n]
	if sl.frame != f.begun {
		sl.frame = f.begun
		rep.AgentID = f.id
		rep.ParentID = f.parentID
		if sl.agent != f.agent || rep.Obs == nil {
			r.describe(rep, sl, f)
		}
	}
	rep.Reward = 0
	rep.Terminated, rep.Truncated, rep.Start = false, false, false
	rep.SpanTicks = 0
	rep.Clock.Steps, rep.Clock.Tick, rep.Clock.SubEpisode = f.steps, r.tick, f.k
	return rep
}

// describe writes what names f's agent in rep, and the slot's buffers sized for it,
// when the slot last reported another agent (or none).
func (r *Runtime[S, A]) describe(rep *env.Report, sl *reportSlot[S], f *frame[S, A]) {
	ag := f.ag
	rep.Agent = ag.name
	rep.Obs = sl.obs[:ag.obsDim]
	rep.Mask = nil
	if ag.maskLen > 0 {
		rep.Mask = sl.mask[:ag.maskLen]
	}
	sl.agent = f.agent
}

// begin starts a sub-episode of agent i and reports its first observation. It returns
// whether the sub-episode is over at once: the agent returns control at once and is
// done in its first view. The caller then ends it with finish.
func (r *Runtime[S, A]) begin(i int, parentID string, sw *agent.Switch[A]) bool {
	if len(r.stack) < cap(r.stack) {
		r.stack = r.stack[:len(r.stack)+1]
	} else {
		r.stack = append(r.stack, frame[S, A]{})
	}
	f := &r.stack[len(r.stack)-1]
	r.begun++
	ag := &r.bound[i]
	f.agent, f.ag, f.k, f.begun, f.parentID, f.steps, f.actedTick = i, ag, r.subEp[i], r.begun, parentID, 0, 0
	if ids := r.ids[i]; f.k < len(ids) {
		f.id = ids[f.k]
	} else {
		f.id = r.id(i, f.k)
	}
	if h := ag.hooks.onTakes; h != nil {
		r.keep()
		r.state = h.OnTakesControl(r.state, *sw)
	}
	rep := r.slot(f)
	rep.Start = true
	if st := ag.step; st != nil {
		st.Observe(&r.state, &rep.Clock, ag.outOf(rep))
	} else {
		ag.inst.observe(&r.state, rep)
	}
	// A reset's agent always acts, and an agent returns at once at most once a step, so
	// that an on-done cycle of such agents ends.
	if !ag.atOnce || sw.Cause == agent.ByReset || r.returned[i] == r.tick {
		return false
	}
	if ag.step != nil {
		rep.Terminated, rep.Truncated = r.agents[i].done(r.state, rep.Clock)
	} else {
		rep.Terminated, rep.Truncated = ag.inst.doneNow()
	}
	if !rep.Done() {
		return false
	}
	r.returned[i] = r.tick
	return true
}

// settle scores the pending decision of the agent of frame f, whose action is in f,
// now that it has completed after span ticks, and reports it. It returns whether the
// agent's sub-episode is over.
func (r *Runtime[S, A]) settle(f *frame[S, A], span int) bool {
	rep := r.slot(f)
	rep.SpanTicks = span
	if ag := f.ag; ag.step != nil {
		rep.Reward, rep.Terminated, rep.Truncated = ag.step.Settle(&r.state, &rep.Clock, &f.action, ag.outOf(rep))
	} else {
		ag.inst.settle(&f.action, &r.state, rep)
	}
	return rep.Done()
}

// finish ends the sub-episode of the agent on top of the stack and passes control as the
// on-done table says, settling parents whose span ends with it.
func (r *Runtime[S, A]) finish() {
	for {
		agentIdx, id, parentID := r.pop()
		next := r.bound[agentIdx].onDone
		if next == transitions.DoneParent && len(r.stack) > 0 {
			next = r.stack[len(r.stack)-1].agent
		}
		if next < 0 {
			// End, or Parent with no parent (Compile rejects that for the initial agent;
			// a top-level agent begun by the on-done table has none either).
			r.end()
			return
		}
		n := r.level(next)
		if n < 0 {
			if !r.begin(next, parentID, &agent.Switch[A]{Cause: agent.ByDone, Rule: "on-done", From: id}) {
				return
			}
			continue // it returned at once: its sub-episode ends too
		}
		// Control returns to an agent already waiting in the stack; the agents between
		// are cut short.
		for len(r.stack)-1 > n {
			r.cut(len(r.stack) - 1)
			r.pop()
		}
		p := &r.stack[n]
		p.steps++
		if !r.settle(p, r.tick-p.actedTick) {
			return
		}
	}
}

// pop ends the sub-episode of the agent on top of the stack and returns the agent's
// index, id and parent's id.
func (r *Runtime[S, A]) pop() (i int, id, parentID string) {
	f := &r.stack[len(r.stack)-1]
	i, id, parentID = f.agent, f.id, f.parentID
	if h := r.bound[i].hooks.onGives; h != nil {
		r.keep()
		r.state = h.OnGivesControl(r.state)
	}
	r.subEp[i]++
	r.stack = r.stack[:len(r.stack)-1]
	return i, id, parentID
}

// level returns the stack level of agent i, or -1 when it is not in control.
func (r *Runtime[S, A]) level(i int) int {
	for n := len(r.stack) - 1; n >= 0; n-- {
		if r.stack[n].agent == i {
			return n
		}
	}
	return -1
}

// cut settles the pending decision of the waiting agent at stack level n, whose span is
// cut short, and reports it truncated unless its own Done says terminated.
func (r *Runtime[S, A]) cut(n int) {
	f := &r.stack[n]
	f.steps++
	r.settle(f, r.tick-f.actedTick)
	if rep := &r.res.Reports[len(r.res.Reports)-1]; !rep.Terminated {
		rep.Truncated = true
	}
}

// end closes the episode: every agent still waiting for a child is cut short and, as
// at the end of any sub-episode, gives control (innermost first, as on a normal return).
func (r *Runtime[S, A]) end() {
	for len(r.stack) > 0 {
		r.cut(len(r.stack) - 1)
		r.pop()
	}
	r.over = true
}

// truncate ends the episode at the tick limit: the acting agent's report of this step is
// marked truncated, it gives control, and every agent waiting below it is cut short.
func (r *Runtime[S, A]) truncate() {
	if rep := r.res.Report(r.stack[len(r.stack)-1].id); rep != nil && !rep.Terminated {
		rep.Truncated = true
	}
	r.pop()
	r.end()
}

// fail builds the error of a rejected step; the runtime is left untouched. It is kept
// out of line so that Step's frame stays small.
//
//go:noinline
func (r *Runtime[S, A]) fail(id string, raw agent.RawAction, kind, cause error) error {
	acting := ""
	if r.started && !r.over {
		acting = r.stack[len(r.stack)-1].id
	}
	raw.Ints, raw.Floats = slices.Clone(raw.Ints), slices.Clone(raw.Floats)
	return &env.StepError{AgentID: id, Acting: acting, Action: raw, Kind: kind, Err: cause}
}

// Errors of Step that only a hierarchy has, wrapped by an *env.StepError beside env's
// own (env.ErrNotReset, env.ErrEpisodeOver, env.ErrNotActing, env.ErrOutsideSpace,
// env.ErrInvalidAction, env.ErrRejected).
var (
	ErrNoTrigger = errors.New("hrl: no trigger matches the switching action")
	ErrInControl = errors.New("hrl: trigger target is already in control")
)
