package webtest

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// The agents' names.
const (
	StrategyName = "strategy"
	MotionName   = "motion"
)

// The strategy agent's actions beyond its target slots 0 .. MaxTargets-1.
const (
	// StrategyBack navigates back.
	StrategyBack = MaxTargets
	// StrategyFinish ends the test.
	StrategyFinish = MaxTargets + 1
	// StrategyActions is the size of the strategy agent's action space.
	StrategyActions = MaxTargets + 2
)

// The motion agent's actions. MotionType(v) types value v (1 .. NumValues).
const (
	// MotionFocus moves the focus to the next field of the target form (the first
	// when none has it), wrapping around.
	MotionFocus int64 = 0
	// MotionToggle toggles the focused checkbox.
	MotionToggle int64 = NumValues + 1
	// MotionChoose chooses the next option of the focused select (wrapping around).
	MotionChoose int64 = NumValues + 2
	// MotionSubmit submits the target form.
	MotionSubmit int64 = NumValues + 3
	// MotionClick clicks the target link or button.
	MotionClick int64 = NumValues + 4
	// MotionActions is the size of the motion agent's action space.
	MotionActions = NumValues + 5
)

// MotionType is the motion agent's action that types value v into the focused text
// field.
func MotionType(v Value) int64 { return int64(v) }

// The sizes of the flat observations.
const (
	slotWidth = 7
	// StrategyObsSize is the length of the strategy agent's flat observation.
	StrategyObsSize = MaxTargets*slotWidth + 6 + 3 + 4 + 2 + MaxFlags
	fieldWidth      = 5 + 2*NumValues + 2
	// MotionObsSize is the length of the motion agent's flat observation.
	MotionObsSize = 3 + MaxFields*fieldWidth + 2
)

// View is what either agent derives from the state: the state and the agent's own
// step count in its sub-episode.
type View struct {
	State
	Steps int
}

// Slot is one target slot of the strategy agent's observation.
type Slot struct {
	// Kind is Link, Button or Form; 0 for an empty slot.
	Kind Kind
	// Coverage is the share of the target's coverage covered: 0 or 1 for a link or a
	// button (clicked or not), the share of its probes tried for a form.
	Coverage float64
	// Visited: the page the link or button leads to in this session (the current
	// page for one that reloads it) was visited; false for a form.
	Visited bool
	// NeedsLogin: the page it leads to requires login and the session is logged out,
	// so choosing it runs the login procedure.
	NeedsLogin bool
}

// StrategyObs is the strategy agent's typed observation: the current page's targets,
// the kinds of elements present, coverage so far, the session and the budget.
type StrategyObs struct {
	// Slots are the page's visible links, buttons and forms, in page order.
	Slots [MaxTargets]Slot
	// Kinds marks the kinds of elements present (visible), indexed by Kind-1: link,
	// button, form, text, select, checkbox.
	Kinds [6]bool
	// NotFound and ServerError mark the error pages; CanGoBack a history to go back to.
	NotFound, ServerError, CanGoBack bool
	// Coverage and PagesVisited are shares of the site's coverage units and pages.
	Coverage, PagesVisited float64
	// DefectsFound counts the defects found so far.
	DefectsFound int
	// BudgetLeft is the share of the budget left.
	BudgetLeft float64
	// LoggedIn, Cart and Flags are the session.
	LoggedIn bool
	Cart     int
	Flags    [MaxFlags]bool
	// State is the state observed, for code that needs more than the agent sees
	// (success and metrics read the defects planted); policies do not see it.
	State State
}

// Strategy decides what to test next: at each decision it picks a target among the
// current page's visible links, buttons and forms, which the motion agent then
// performs (or, for a link into a page that needs login, the login procedure), or
// navigates back, or finishes. Its action mask allows the targets not yet covered.
// It is rewarded for the coverage and the defects its decision gained over the whole
// span it delegated, and is done when it finishes (terminated) or the budget is spent
// (truncated). Safe for concurrent use: it holds configuration only.
type Strategy struct {
	cfg      StrategyConfig
	site     *Site
	obs, act spaces.Space
}

// NewStrategy returns the strategy agent for a site; zero fields of cfg take defaults.
func NewStrategy(site *Site, cfg StrategyConfig) *Strategy {
	high := make([]float32, StrategyObsSize)
	for i := range high {
		high[i] = 1
	}
	base := MaxTargets*slotWidth + 6 + 3
	high[base+2] = MaxDefects
	high[base+4+1] = math.MaxUint8
	obs := spaces.Must(spaces.NewBoxBounds([]int{StrategyObsSize}, make([]float32, StrategyObsSize), high))
	return &Strategy{cfg: cfg.withDefaults(), site: site, obs: obs, act: spaces.Discrete{N: StrategyActions}}
}

// Name returns "strategy".
func (*Strategy) Name() string { return StrategyName }

// ObservationSpace is a Box of StrategyObsSize values: for each of the MaxTargets
// slots [present, link, button, form, coverage, visited, needs login]; the kinds
// present [link, button, form, text, select, checkbox]; [not found, server error,
// can go back]; [coverage, pages visited, defects found, budget left]; [logged in,
// cart, flag 0 .. MaxFlags-1]. All in [0, 1] but the defects found (up to MaxDefects)
// and the cart (up to 255).
func (s *Strategy) ObservationSpace() spaces.Space { return s.obs }

// ActionSpace is Discrete(StrategyActions): a target slot, StrategyBack or
// StrategyFinish.
func (s *Strategy) ActionSpace() spaces.Space { return s.act }

// TranslateState pairs the state with the strategy's decision count.
func (*Strategy) TranslateState(s State, c agent.Clock) View { return View{s, c.Steps} }

// Observe builds the observation of the view.
func (s *Strategy) Observe(v View) StrategyObs {
	var o StrategyObs
	st := &v.State
	site := st.site
	pg := &site.pages[st.page]
	k := 0
	for _, t := range pg.targets {
		if !st.visible(t) {
			continue
		}
		tg := &site.targets[t]
		sl := &o.Slots[k]
		k++
		sl.Kind = tg.kind
		o.Kinds[tg.kind-1] = true
		if tg.kind == Form {
			f := &site.forms[tg.form]
			sl.Coverage = float64(st.triedProbes(f)) / float64(max(f.probes, 1))
			for _, fdi := range f.fields {
				o.Kinds[site.fields[fdi].kind-1] = true
			}
			continue
		}
		if st.isCovered(tg.unit) {
			sl.Coverage = 1
		}
		if tg.defect < 0 || site.defects[tg.defect].Kind == DefectDeadElement {
			to := st.dest(&tg.nav)
			if to < 0 {
				to = st.page
			}
			sl.Visited = st.isCovered(site.pages[to].unit)
		}
		sl.NeedsLogin = st.needsLogin(t)
	}
	o.NotFound = st.page == site.notFound
	o.ServerError = st.page == site.serverError
	o.CanGoBack = st.hist >= 0
	o.Coverage = st.Coverage()
	o.PagesVisited = float64(st.visited) / float64(max(site.userPages, 1))
	o.DefectsFound = bits.OnesCount64(st.found)
	o.BudgetLeft = float64(st.budget) / float64(max(s.cfg.Budget, 1))
	o.LoggedIn = st.loggedIn
	o.Cart = int(st.cart)
	for i := range MaxFlags {
		o.Flags[i] = st.flags&(1<<i) != 0
	}
	o.State = v.State
	return o
}

// triedProbes counts the probes of form f tried.
func (s *State) triedProbes(f *form) int32 {
	n := int32(0)
	for _, fdi := range f.fields {
		fd := &s.site.fields[fdi]
		for u := fd.probe; u < fd.probe+fd.nprobes; u++ {
			if s.isCovered(u) {
				n++
			}
		}
	}
	return n
}

// EncodeObservation writes the observation's flat form (see ObservationSpace).
func (*Strategy) EncodeObservation(dst []float32, o StrategyObs) {
	clear(dst[:StrategyObsSize])
	for i := range o.Slots {
		sl := &o.Slots[i]
		if sl.Kind == 0 {
			continue
		}
		d := dst[i*slotWidth:]
		d[0] = 1
		d[sl.Kind] = 1 // link 1, button 2, form 3
		d[4] = float32(sl.Coverage)
		d[5] = b2f(sl.Visited)
		d[6] = b2f(sl.NeedsLogin)
	}
	d := dst[MaxTargets*slotWidth:]
	for i, ok := range o.Kinds {
		d[i] = b2f(ok)
	}
	d = d[6:]
	d[0], d[1], d[2] = b2f(o.NotFound), b2f(o.ServerError), b2f(o.CanGoBack)
	d = d[3:]
	d[0], d[1], d[2], d[3] = float32(o.Coverage), float32(o.PagesVisited), float32(o.DefectsFound), float32(o.BudgetLeft)
	d = d[4:]
	d[0], d[1] = b2f(o.LoggedIn), float32(o.Cart)
	for i, ok := range o.Flags {
		d[2+i] = b2f(ok)
	}
}

// ActionMask allows the visible targets not yet covered (a form until every probe of
// its fields was tried), back when there is a history, and finish.
func (s *Strategy) ActionMask(v View, dst []bool) {
	o := s.Observe(v)
	strategyMask(&o, dst)
}

func strategyMask(o *StrategyObs, dst []bool) {
	for i := range o.Slots {
		dst[i] = o.Slots[i].Kind != 0 && o.Slots[i].Coverage < 1
	}
	dst[StrategyBack] = o.CanGoBack
	dst[StrategyFinish] = true
}

// EncodeView writes the observation and the mask (agent.ViewEncoder).
func (s *Strategy) EncodeView(v View, obs []float32, mask []bool) {
	o := s.Observe(v)
	s.EncodeObservation(obs, o)
	strategyMask(&o, mask)
}

// slotTarget returns the site target in slot k of the current page, or -1.
func (s *State) slotTarget(k int) int32 {
	for _, t := range s.site.pages[s.page].targets {
		if !s.visible(t) {
			continue
		}
		if k == 0 {
			return t
		}
		k--
	}
	return -1
}

// DecodeAction turns a slot into a Pick of its target, or back or finish; Login is
// set when the pick or the back leads into a page that requires login while the
// session is logged out, for the login procedure. An empty slot is an error wrapping
// ErrNoTarget, back without a history one wrapping ErrNoHistory. A covered target is
// accepted: the mask is advice.
func (*Strategy) DecodeAction(v View, raw int64) (Action, error) {
	switch {
	case raw == StrategyBack:
		if v.hist < 0 {
			return Action{}, fmt.Errorf("%w: on %s", ErrNoHistory, v.URL())
		}
		return Action{Kind: Back, Target: -1, Login: v.backNeedsLogin()}, nil
	case raw == StrategyFinish:
		return Action{Kind: Finish, Target: -1}, nil
	}
	t := v.slotTarget(int(raw))
	if t < 0 {
		return Action{}, fmt.Errorf("%w: slot %d is empty on %s", ErrNoTarget, raw, v.URL())
	}
	return Action{Kind: Pick, Target: t, Login: v.needsLogin(t)}, nil
}

// Done: terminated when the strategy finished, truncated when the budget is spent.
func (*Strategy) Done(v View) (terminated, truncated bool) {
	return v.finished, v.budget <= 0
}

// Reward is CoverageReward times the share of the site's units the decision covered
// plus DefectReward per defect it found, over its whole span.
func (s *Strategy) Reward(prev View, _ Action, next View) float64 {
	cov := float64(next.covered-prev.covered) / float64(max(next.site.units, 1))
	found := bits.OnesCount64(next.found &^ prev.found)
	return *s.cfg.CoverageReward*cov + *s.cfg.DefectReward*float64(found)
}

// FieldObs is one field slot of the motion agent's observation.
type FieldObs struct {
	// Kind is Text, Select or Checkbox; 0 for an empty slot.
	Kind Kind
	// Focused: the field has the focus.
	Focused bool
	// Value is the field's value: a Value for a text (Empty when untouched), an
	// option (1 .. n; 0 for none chosen) for a select, 0 or 1 for a checkbox.
	Value uint8
	// Valid: the field's rules accept the value.
	Valid bool
	// Tried marks the probes of the field tried in a submission: by Value-1 for a
	// text, by option-1 for a select, [unchecked, checked] for a checkbox.
	Tried [NumValues]bool
	// Probes is the number of the field's probes: NumValues for a text, its options
	// for a select, 2 for a checkbox.
	Probes int
}

// MotionObs is the motion agent's typed observation: its target and, for a form, its
// fields.
type MotionObs struct {
	// Target is the target's kind: Link, Button or Form.
	Target Kind
	// Fields are the target form's fields, in focus order.
	Fields [MaxFields]FieldObs
	// Steps is the share of the motion agent's step limit used.
	Steps float64
	// TargetCoverage is the target's Slot.Coverage.
	TargetCoverage float64
}

// Motion performs the strategy's target with UI operations: focus the next field,
// type a value from the vocabulary, toggle a checkbox, choose an option, submit the
// form, click the link or button. Its sub-episode ends (terminated) when the target
// interaction is done, whatever the application answers, and is truncated after
// MaxSteps actions or when the budget is spent. Each action earns ActionReward, the
// one that completes the interaction (every outcome but a refused form) also
// CompletionReward. Safe for concurrent use: it holds configuration only.
type Motion struct {
	cfg      MotionConfig
	obs, act spaces.Space
}

// NewMotion returns the motion agent; zero fields of cfg take defaults.
func NewMotion(cfg MotionConfig) *Motion {
	obs := spaces.Must(spaces.NewBox([]int{MotionObsSize}, 0, 1))
	return &Motion{cfg: cfg.withDefaults(), obs: obs, act: spaces.Discrete{N: MotionActions}}
}

// Name returns "motion".
func (*Motion) Name() string { return MotionName }

// ObservationSpace is a Box of MotionObsSize values in [0, 1]: the target's kind
// [link, button, form]; for each of the MaxFields field slots [present, text, select,
// checkbox, focused, value one-hot (NumValues), valid, tried (NumValues), probes /
// NumValues]; [steps used, target coverage].
func (m *Motion) ObservationSpace() spaces.Space { return m.obs }

// ActionSpace is Discrete(MotionActions): MotionFocus, MotionType(v) for each value,
// MotionToggle, MotionChoose, MotionSubmit, MotionClick.
func (m *Motion) ActionSpace() spaces.Space { return m.act }

// TranslateState pairs the state with the motion agent's step count.
func (*Motion) TranslateState(s State, c agent.Clock) View { return View{s, c.Steps} }

// Observe builds the observation of the view.
func (m *Motion) Observe(v View) MotionObs {
	var o MotionObs
	st := &v.State
	o.Steps = min(float64(v.Steps)/float64(m.cfg.MaxSteps), 1)
	if st.target < 0 {
		return o
	}
	site := st.site
	tg := &site.targets[st.target]
	o.Target = tg.kind
	if tg.kind != Form {
		if st.isCovered(tg.unit) {
			o.TargetCoverage = 1
		}
		return o
	}
	f := &site.forms[tg.form]
	tried := 0
	for i, fdi := range f.fields {
		fd := &site.fields[fdi]
		fo := &o.Fields[i]
		fo.Kind = fd.kind
		fo.Focused = int(st.focus) == i
		fo.Value = st.fieldValue(fd)
		fo.Valid = fd.ok[fo.Value]
		for p := range fd.nprobes {
			if st.isCovered(fd.probe + p) {
				fo.Tried[p] = true
				tried++
			}
		}
		fo.Probes = int(fd.nprobes)
	}
	o.TargetCoverage = float64(tried) / float64(max(f.probes, 1))
	return o
}

// EncodeObservation writes the observation's flat form (see ObservationSpace).
func (*Motion) EncodeObservation(dst []float32, o MotionObs) {
	clear(dst[:MotionObsSize])
	if o.Target != 0 {
		dst[o.Target-1] = 1
	}
	for i := range o.Fields {
		fo := &o.Fields[i]
		if fo.Kind == 0 {
			continue
		}
		d := dst[3+i*fieldWidth:]
		d[0] = 1
		d[1+fo.Kind-Text] = 1
		d[4] = b2f(fo.Focused)
		switch {
		case fo.Kind == Checkbox:
			d[5+int(fo.Value)] = 1
		case fo.Value > 0:
			d[5+int(fo.Value)-1] = 1
		}
		d[5+NumValues] = b2f(fo.Valid)
		for p, ok := range fo.Tried {
			d[6+NumValues+p] = b2f(ok)
		}
		d[6+2*NumValues] = float32(fo.Probes) / NumValues
	}
	d := dst[3+MaxFields*fieldWidth:]
	d[0], d[1] = float32(o.Steps), float32(o.TargetCoverage)
}

// ActionMask allows what applies to the target and the focused field: click for a
// link or a button; focus and submit for a form; type for a focused text, toggle for
// a focused checkbox, choose for a focused select.
func (m *Motion) ActionMask(v View, dst []bool) {
	o := m.Observe(v)
	motionMask(&o, dst)
}

func motionMask(o *MotionObs, dst []bool) {
	clear(dst[:MotionActions])
	switch o.Target {
	case Link, Button:
		dst[MotionClick] = true
	case Form:
		dst[MotionFocus], dst[MotionSubmit] = true, true
		for i := range o.Fields {
			if !o.Fields[i].Focused {
				continue
			}
			switch o.Fields[i].Kind {
			case Text:
				for v := Valid; v <= Script; v++ {
					dst[MotionType(v)] = true
				}
			case Checkbox:
				dst[MotionToggle] = true
			case Select:
				dst[MotionChoose] = true
			}
		}
	}
}

// EncodeView writes the observation and the mask (agent.ViewEncoder).
func (m *Motion) EncodeView(v View, obs []float32, mask []bool) {
	o := m.Observe(v)
	m.EncodeObservation(obs, o)
	motionMask(&o, mask)
}

// DecodeAction turns a raw action into a UI operation on the target. An operation
// that does not apply (click on a form, type without a focused text field, ...) is an
// error wrapping ErrNotApplicable.
func (*Motion) DecodeAction(v View, raw int64) (Action, error) {
	a, err := decodeMotion(&v.State, raw)
	if err != nil {
		return Action{}, err
	}
	return a, nil
}

func decodeMotion(s *State, raw int64) (Action, error) {
	if s.target < 0 {
		return Action{}, fmt.Errorf("%w: no target", ErrNotApplicable)
	}
	site := s.site
	tg := &site.targets[s.target]
	a := Action{Target: s.target}
	var focused *field
	if tg.kind == Form && s.focus >= 0 {
		focused = &site.fields[site.forms[tg.form].fields[s.focus]]
	}
	need := func(ok bool, what string) error {
		if ok {
			return nil
		}
		return fmt.Errorf("%w: %s (target %s %q on %s)", ErrNotApplicable, what, tg.kind, tg.id, s.URL())
	}
	var err error
	switch {
	case raw == MotionFocus:
		a.Kind = Focus
		err = need(tg.kind == Form, "focus needs a form")
	case raw >= MotionType(Valid) && raw <= MotionType(Script):
		a.Kind, a.Value = Type, Value(raw)
		err = need(focused != nil && focused.kind == Text, "type needs a focused text field")
	case raw == MotionToggle:
		a.Kind = Toggle
		err = need(focused != nil && focused.kind == Checkbox, "toggle needs a focused checkbox")
	case raw == MotionChoose:
		a.Kind = Choose
		err = need(focused != nil && focused.kind == Select, "choose needs a focused select")
	case raw == MotionSubmit:
		a.Kind = Submit
		err = need(tg.kind == Form, "submit needs a form")
	case raw == MotionClick:
		a.Kind = Click
		err = need(tg.kind != Form, "click needs a link or a button; a form is submitted")
	default:
		err = fmt.Errorf("%w: action %d", ErrNotApplicable, raw)
	}
	if err == nil && s.outcome != 0 {
		err = fmt.Errorf("%w: the interaction with %q is over (%s)", ErrNotApplicable, tg.id, s.outcome)
	}
	return a, err
}

// Done: terminated when the target interaction is done, truncated after MaxSteps
// actions or when the budget is spent.
func (m *Motion) Done(v View) (terminated, truncated bool) {
	if v.outcome != 0 {
		return true, false
	}
	return false, v.Steps >= m.cfg.MaxSteps || v.budget <= 0
}

// Reward is ActionReward, plus CompletionReward for the action that completed the
// interaction.
func (m *Motion) Reward(_ View, _ Action, next View) float64 {
	r := *m.cfg.ActionReward
	if next.outcome.Completed() {
		r += *m.cfg.CompletionReward
	}
	return r
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
