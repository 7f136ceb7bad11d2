package fastlane

import (
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
)

// Framer is a vector whose copies draw their state for people: Single, View, Multi
// and Turns.
type Framer interface {
	// Frame draws copy i's current state as its registry entry's Look says
	// (registry.Look.Frame): the environment's own env.Renderer, else its Info.
	Frame(i int) (env.Frame, error)
	// FinalFrame returns the frame of copy i's last state before its last
	// auto-reset, kept while the vector keeps final frames (Single.KeepFinalFrames);
	// an error wrapping ErrArgument for a vector or copy that kept none.
	FinalFrame(i int) (env.Frame, error)
}

// frames is what a vector keeps to draw its copies: each copy's environment and its
// entry's Look and, for a Single with held copies, each copy's final frame.
type frames struct {
	ms   []env.MultiAgent
	look registry.Look
	// keep is whether the copies keep their final frames (finals), which only copies
	// with hold flags do.
	keep   bool
	finals []env.Frame
}

func (f *frames) frame(i int) (env.Frame, error) {
	if i < 0 || i >= len(f.ms) {
		return env.Frame{}, fmt.Errorf("%w: copy %d of %d", ErrArgument, i, len(f.ms))
	}
	return f.look.Frame(f.ms[i]), nil
}

func (f *frames) final(i int) (env.Frame, error) {
	if i < 0 || i >= len(f.ms) {
		return env.Frame{}, fmt.Errorf("%w: copy %d of %d", ErrArgument, i, len(f.ms))
	}
	if i >= len(f.finals) || f.finals[i].IsZero() {
		return env.Frame{}, fmt.Errorf("%w: copy %d kept no final frame (the vector keeps them while KeepFinalFrames is on, from the step that ends an episode)", ErrArgument, i)
	}
	return f.finals[i], nil
}

// ended keeps copy i's final frame, when the vector keeps them: its episode just
// ended and it is not reset yet.
func (f *frames) ended(i int) {
	if f.keep {
		f.finals[i] = f.look.Frame(f.ms[i])
	}
}

// Frame draws copy i's current state (see Framer).
func (s *Single) Frame(i int) (env.Frame, error) { return s.frames.frame(i) }

// FinalFrame returns copy i's final frame (see Framer).
func (s *Single) FinalFrame(i int) (env.Frame, error) { return s.frames.final(i) }

// KeepFinalFrames makes the copies keep, from the next step on, the frame of their
// state at the end of each episode, taken before the auto-reset (FinalFrame), when
// on; off (the default) keeps none, and drops those kept. Drawing a frame may
// allocate, so a vector that is not drawn keeps none. Only a vector with hold flags
// (WithHold) keeps frames; another returns an error wrapping ErrArgument.
func (s *Single) KeepFinalFrames(on bool) error {
	if !s.held {
		return fmt.Errorf("%w: only a vector made with hold flags (WithHold) keeps final frames", ErrArgument)
	}
	s.frames.keep = on
	if s.frames.finals == nil {
		s.frames.finals = make([]env.Frame, len(s.frames.ms))
	}
	if !on {
		clear(s.frames.finals)
	}
	return nil
}

// Frame draws copy i's current state (see Framer).
func (x *Multi) Frame(i int) (env.Frame, error) { return x.frames.frame(i) }

// FinalFrame returns an error: a Multi keeps no final frames.
func (x *Multi) FinalFrame(i int) (env.Frame, error) { return x.frames.final(i) }

// Frame draws the environment's current state (see Framer); i is 0.
func (t *Turns) Frame(i int) (env.Frame, error) { return t.frames.frame(i) }

// FinalFrame returns an error: Turns do not auto-reset, and keep no final frames.
func (t *Turns) FinalFrame(i int) (env.Frame, error) { return t.frames.final(i) }

// look returns the Look of the named entry, the zero Look when there is none.
func look(reg *registry.Registry, name string) registry.Look {
	e, err := reg.Lookup(name)
	if err != nil {
		return registry.Look{}
	}
	return e.Look
}

// Option configures NewSingle and NewView.
type Option interface{ apply(*options) }

type options struct {
	hold []Hold
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// Hold says what a Step does with a copy of a vector made WithHold. The zero Hold
// steps it.
type Hold int32

// The holds.
const (
	// HoldStep steps the copy with its action, as a vector without holds does.
	HoldStep Hold = iota
	// HoldStay leaves the copy as it is and ignores its action: its reward is 0, it
	// is neither terminated nor truncated, and its observation and mask rows keep
	// what they hold.
	HoldStay
	// HoldEnd ends the copy's episode where it is, without stepping it: its reward
	// is 0, it is truncated, its final observation is its current one, and the vector
	// resets it as it does any copy whose episode ended (auto-reset).
	HoldEnd
)

// WithHold gives the vector hold, one Hold per copy, which the caller writes between
// steps to say what the next Step does with each copy (a value outside the holds
// steps it). It is how Gymnasium's other auto-reset modes are had over the vector's
// same-step one (Python's baton.make_vec): a copy whose episode ended, and was reset
// in the same step, stays for one step (HoldStay), in which the caller shows its
// first observation (next-step auto-reset); a copy that the caller resets alone, or
// whose action the caller refused, is ended (HoldEnd). A vector with holds does not
// record (Single.Record). nil (the default) holds nothing.
func WithHold(hold []Hold) Option { return optionFunc(func(o *options) { o.hold = hold }) }

func newOptions(n int, opts []Option) (options, error) {
	var o options
	for _, op := range opts {
		if op != nil {
			op.apply(&o)
		}
	}
	if o.hold != nil {
		if err := sameSize("hold", len(o.hold), n); err != nil {
			return o, err
		}
	}
	return o, nil
}

// held is a copy under a Hold (WithHold): HoldStay returns the copy's current
// observation and mask (those of its last Reset or Step) with reward 0, HoldEnd the
// same, truncated.
type held struct {
	env.Env
	hold *Hold
	cur  current
	// i is the copy's index in frames, whose final frame it keeps at an episode's end.
	i      int
	frames *frames
}

// current keeps a copy's current observation and mask, for its holds.
type current struct{ st env.Step }

func (c *current) keep(st env.Step) {
	c.st.Obs = append(c.st.Obs[:0], st.Obs...)
	c.st.Mask = append(c.st.Mask[:0], st.Mask...)
	if st.Mask == nil {
		c.st.Mask = nil
	}
}

// held returns the Step of a copy under hold h: ok false for HoldStep.
func (c *current) held(h Hold) (env.Step, bool) {
	switch h {
	case HoldStay:
		return env.Step{Obs: c.st.Obs, Mask: c.st.Mask}, true
	case HoldEnd:
		return env.Step{Obs: c.st.Obs, Mask: c.st.Mask, Truncated: true}, true
	}
	return env.Step{}, false
}

func (h *held) Reset(seed uint64) (env.Step, error) {
	st, err := h.Env.Reset(seed)
	if err == nil {
		h.cur.keep(st)
	}
	return st, err
}

func (h *held) Step(a agent.RawAction) (env.Step, error) {
	if st, ok := h.cur.held(*h.hold); ok {
		if st.Truncated {
			h.frames.ended(h.i)
		}
		return st, nil
	}
	st, err := h.Env.Step(a)
	if err == nil {
		h.cur.keep(st)
		if st.Done() {
			h.frames.ended(h.i)
		}
	}
	return st, err
}

// Unwrap returns the copy, for env.As.
func (h *held) Unwrap() env.Env { return h.Env }

// heldDiscrete is a held env.DiscreteStepper, whose current observation and mask
// are the vector's rows: held, it writes nothing into them.
type heldDiscrete struct {
	*held
	d env.DiscreteStepper
}

func (h heldDiscrete) StepDiscrete(a int64, obs []float32, mask []bool) (float64, bool, bool, error) {
	switch *h.hold {
	case HoldStay:
		return 0, false, false, nil
	case HoldEnd:
		h.frames.ended(h.i)
		return 0, false, true, nil
	}
	r, term, trunc, err := h.d.StepDiscrete(a, obs, mask)
	if err == nil && (term || trunc) {
		h.frames.ended(h.i)
	}
	return r, term, trunc, err
}

// holding wraps copy i in its hold when the vector has them, keeping its final
// frames in f.
func (o *options) holding(i int, e env.Env, f *frames) env.Env {
	if o.hold == nil {
		return e
	}
	h := &held{Env: e, hold: &o.hold[i], i: i, frames: f}
	if d, ok := e.(env.DiscreteStepper); ok {
		return heldDiscrete{held: h, d: d}
	}
	return h
}
