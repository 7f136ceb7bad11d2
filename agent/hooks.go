package agent

//go:generate go tool stringer -type=Cause -linecomment

// The optional hooks. An agent implements any of them as extra methods; the runtime
// finds them once, when the agent is bound, not on every step.

// ResetHook is implemented by agents that prepare the environment state at reset. The
// runtime calls OnReset for every agent, in the environment's agent order, after the
// environment's InitialState.
type ResetHook[S any] interface {
	OnReset(s S) S
}

// TakesControlHook is implemented by agents that adjust the environment state when a
// sub-episode of theirs starts: the maze's motion agent takes its heading from the
// strategy's action.
type TakesControlHook[S, A any] interface {
	OnTakesControl(s S, sw Switch[A]) S
}

// StepHook is implemented by agents that see the state after each of their own actions
// has been applied by the environment, before any trigger is checked.
type StepHook[S, A any] interface {
	OnStep(s S, a A) S
}

// GivesControlHook is implemented by agents that adjust the environment state when a
// sub-episode of theirs ends.
type GivesControlHook[S any] interface {
	OnGivesControl(s S) S
}

// AtOnceReturner is implemented by agents whose sub-episode may be over the moment it
// starts: a walker sent to the tile it stands on, a login agent handed control on a page
// where the session is already open.
//
// By default a sub-episode takes at least one action, as in the reference maze: the
// runtime asks Done after each of the agent's actions and never before the first one.
// An agent that is done as it takes control therefore acts once anyway, and its Done is
// asked again only after that action: a walker on its target must step away and back.
// The parent's reward then scores a detour its action did not ask for.
//
// When ReturnsAtOnce reports true, the runtime asks Done in the agent's first view of
// every sub-episode begun by a trigger or by the on-done table. If the agent is done,
// its sub-episode ends there, in the same environment step, without an action: it is
// reported once, with Start set, its Done flags, reward 0 and SpanTicks 0; it gives
// control (GivesControlHook) right after taking it (TakesControlHook), its id's k
// counts the sub-episode, and the on-done table passes control on as for any other end:
// a parent waiting for it is settled, its span being the tick of its own action. An
// agent that returns at once cannot return at once again in the same step (an on-done
// cycle of such agents would not end): the second time, it acts. The initial agent's
// sub-episode begun by a reset always takes an action, so that an episode is never over
// when it starts.
//
// The runtime asks ReturnsAtOnce once, when the agent is bound; false keeps the default.
type AtOnceReturner interface {
	ReturnsAtOnce() bool
}

// Masker is implemented by agents with a Discrete action space that tell policies which
// actions are valid in a state. ActionMask writes one entry per action into dst
// (len N of the space); dst[i] refers to the action Start+i.
type Masker[AS any] interface {
	ActionMask(as AS, dst []bool)
}

// ViewEncoder is implemented by agents that write their flat observation, and their
// action mask if they have one, straight from their view in one call. The runtime then
// uses EncodeView on the step path instead of Observe, EncodeObservation and
// ActionMask, which saves building the typed observation and computing what the
// observation and the mask share twice. EncodeView must write exactly what those would
// (test it against them, as the maze does); mask is nil for an agent without a Masker. Observe is still used
// for typed observations (hrl.Obs).
type ViewEncoder[AS any] interface {
	EncodeView(as AS, obs []float32, mask []bool)
}

// InPlace is implemented by agents that do the runtime's work of a step in three calls
// on views held in place, passed by pointer, instead of one call through the Agent
// interface per method with the view copied in and out of each. It adds no behaviour:
// each method must do exactly what the Agent methods it names do (test it against them,
// as the maze does; hrltest.Check does too). The methods are the same on every agent,
// so they are a few lines that call the agent's own methods directly, which the
// compiler can then inline (see the maze's agents):
//
//	func (x *Mine) ObserveTo(view *View, s *State, c *agent.Clock, out *agent.Out) {
//		*view = x.TranslateState(*s, *c)
//		x.EncodeView(*view, out.Obs, out.Mask) // or EncodeObservation(out.Obs, Observe(*view)), ActionMask
//	}
//
// Every argument is a pointer, so that a call passes them all in registers.
//
// The runtime uses InPlace on the step path instead of TranslateState, DecodeAction,
// Done, Reward and the encoders; it still calls those for everything else (typed
// observations, AgentDone, Info, an AtOnceReturner's first Done). The pointers it passes
// are valid for the call only, and the methods must not retain them or out's slices.
type InPlace[S, AS any, R Raw, A any] interface {
	// ObserveTo writes TranslateState(*s, *c) into *view, and the observation and the
	// mask of that view into out (out.Mask is nil for an agent without a Masker), as
	// EncodeView, or EncodeObservation(out.Obs, Observe(*view)) and ActionMask, would.
	ObserveTo(view *AS, s *S, c *Clock, out *Out)
	// SettleTo does what ObserveTo does with next, and returns Reward(*prev, *a, *next)
	// and Done(*next).
	SettleTo(next *AS, s *S, c *Clock, prev *AS, a *A, out *Out) (reward float64, terminated, truncated bool)
	// DecodeAt returns DecodeAction(*as, raw).
	DecodeAt(as *AS, raw R) (A, error)
}

// Stepper is an agent's step path bound into one runtime, for agents with a Discrete
// action space: a value of the agent's own (non-generic) type that keeps the agent's
// views itself, so that the runtime calls it directly, once per decision and once per
// report, with nothing between. An agent offers one through NewStepper (StepperMaker);
// each method does what the InPlace method it names does (hrltest compares them with
// the agent's methods):
//
//   - Observe is ObserveTo into the view of the next report;
//   - Settle is SettleTo into the view of the next report, with prev the view of the
//     pending decision;
//   - DecodeInt is DecodeAt in the view of the latest report, with the result written
//     to *dst; that view becomes the pending decision's.
//
// Views keeps the two views and says which is which; the maze's agents show the few
// lines each method takes. The pointers the runtime passes are valid for the call only.
type Stepper[S, A any] interface {
	Observe(s *S, c *Clock, out *Out)
	Settle(s *S, c *Clock, a *A, out *Out) (reward float64, terminated, truncated bool)
	DecodeInt(raw int64, dst *A) error
}

// StepperMaker is implemented by InPlace agents with a Discrete action space that give
// the runtime a Stepper: NewStepper returns a new one for each runtime the agent is
// bound into (it holds views, which an Agent must not).
type StepperMaker[S, A any] interface {
	NewStepper() Stepper[S, A]
}

// Views holds an agent's view at its latest report and its view at its pending
// decision, in two slots it switches between rather than copying one into the other. The
// pending decision's view stays in its slot until the decision is settled: a report
// writes the other slot. The zero value is ready to use.
type Views[AS any] struct {
	v       [2]AS
	latest  uint8
	pending uint8
}

// Latest returns the view of the latest report.
func (w *Views[AS]) Latest() *AS { return &w.v[w.latest&1] }

// Decide makes the view of the latest report the pending decision's, and returns it.
func (w *Views[AS]) Decide() *AS {
	w.pending = w.latest
	return &w.v[w.latest&1]
}

// Report returns the slot the next report writes its view into, and the view of the
// pending decision, and makes the first the latest.
func (w *Views[AS]) Report() (next, pending *AS) {
	n := w.pending ^ 1
	w.latest = n
	return &w.v[n&1], &w.v[w.pending&1]
}

// Out is where an InPlace agent writes an observation: the runtime's buffers for it.
type Out struct {
	// Obs is the flat observation, of length ObservationSpace().FlatDim().
	Obs []float32
	// Mask is the action mask, nil for an agent without a Masker.
	Mask []bool
}

// Informer is implemented by agents that describe their view for humans and logs
// (the runtime calls it only when asked, never on the step path).
type Informer[AS any] interface {
	Info(as AS) any
}

// Switch says why an agent takes control.
type Switch[A any] struct {
	// Cause is how the hand-over happened.
	Cause Cause
	// Rule names the trigger or on-done rule that fired; "" at reset.
	Rule string
	// From is the id of the agent that handed over; "" at reset.
	From string
	// Action is the switching action when Cause is ByTrigger, else the zero value.
	Action A
}

// Cause is how an agent came to take control. Its String names it: "reset", "trigger"
// or "done".
type Cause int

const (
	// ByReset: the agent is the environment's initial agent.
	ByReset Cause = 1 + iota // reset
	// ByTrigger: an action of its parent matched an action trigger.
	ByTrigger // trigger
	// ByDone: the previous agent's sub-episode ended and the on-done table named it.
	ByDone // done
)
