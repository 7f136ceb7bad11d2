package fastlane

//go:generate go tool stringer -type=Kind -linecomment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// Errors of the package.
var (
	// ErrConfig: the environment's name is unknown or its configuration bad.
	ErrConfig = errors.New("fastlane: bad environment or configuration")
	// ErrUnsupported: an agent's action space is not Discrete.
	ErrUnsupported = errors.New("fastlane: unsupported environment")
	// ErrArgument: a buffer or an action slice has the wrong length, or a count is bad.
	ErrArgument = errors.New("fastlane: bad argument")
	// ErrAction is wrapped by *ActionError.
	ErrAction = errors.New("fastlane: bad action")
)

// Kind says how a vector is stepped. Its String names it: "single" or "multi".
type Kind int

// The kinds of vectors. The zero Kind is none of them.
const (
	// KindSingle is a vector.Env of a single-agent environment.
	KindSingle Kind = 1 + iota // single
	// KindMulti is a vector.Multi, batched per acting agent name.
	KindMulti // multi
)

// MarshalJSON writes the kind's name.
func (k Kind) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }

// Layout describes what a vector of an environment needs from its caller.
type Layout struct {
	Kind   Kind          `json:"kind"`
	Agents []AgentLayout `json:"agents"`
}

// AgentLayout describes one agent: its observation and mask lengths, its Discrete
// action space (Actions values from Start) and its spaces' JSON specs.
type AgentLayout struct {
	Name             string          `json:"name"`
	ObsDim           int             `json:"obs_dim"`
	MaskLen          int             `json:"mask_len"`
	Actions          int64           `json:"actions"`
	Start            int64           `json:"start"`
	ObservationSpace json.RawMessage `json:"observation_space"`
	ActionSpace      json.RawMessage `json:"action_space"`
}

// open opens the named environment's factory and builds one environment to learn its
// agents.
func open(reg *registry.Registry, name string, config []byte) (registry.Factory, Layout, error) {
	entry, err := reg.Lookup(name)
	if err != nil {
		return nil, Layout{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	f, err := entry.Open(config)
	if err != nil {
		return nil, Layout{}, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	probe, err := f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return nil, Layout{}, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	l, err := LayoutOf(name, probe)
	if err != nil {
		return nil, Layout{}, err
	}
	return f, l, nil
}

// LayoutOf returns the layout of the environments like probe, an environment of the
// environment name: ErrUnsupported, for each agent, when an agent's actions are not
// Discrete.
func LayoutOf(name string, probe env.MultiAgent) (Layout, error) {
	l := Layout{Kind: KindMulti}
	if _, ok := single(probe); ok {
		l.Kind = KindSingle
	}
	var errs []error
	for _, s := range probe.Agents() {
		a, err := agentLayout(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		l.Agents = append(l.Agents, a)
	}
	if err := errors.Join(errs...); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// single returns the single-agent environment under m, when m presents one
// (registry.SingleAgent).
func single(m env.MultiAgent) (env.Env, bool) {
	if len(m.Agents()) != 1 {
		return nil, false
	}
	u, ok := m.(interface{ Unwrap() env.Env })
	if !ok {
		return nil, false
	}
	return u.Unwrap(), true
}

func agentLayout(s env.Spec) (AgentLayout, error) {
	d, ok := s.ActionSpace.(spaces.Discrete)
	if !ok {
		return AgentLayout{}, fmt.Errorf("%w: agent %q acts in %v; the fast lane takes Discrete actions", ErrUnsupported, s.Name, s.ActionSpace)
	}
	obs, err := json.Marshal(s.ObservationSpace)
	if err != nil {
		return AgentLayout{}, fmt.Errorf("agent %q: observation space: %w", s.Name, err)
	}
	act, err := json.Marshal(d)
	if err != nil {
		return AgentLayout{}, fmt.Errorf("agent %q: action space: %w", s.Name, err)
	}
	return AgentLayout{Name: s.Name, ObsDim: s.ObservationSpace.FlatDim(), MaskLen: s.MaskLen,
		Actions: d.N, Start: d.Start, ObservationSpace: obs, ActionSpace: act}, nil
}

// Describe returns the layout of the named environment with a JSON configuration
// (nil or empty: the defaults). An unknown name or a bad configuration wraps
// ErrConfig; an agent whose actions are not Discrete, ErrUnsupported.
func Describe(reg *registry.Registry, name string, config []byte) (Layout, error) {
	_, l, err := open(reg, name, config)
	return l, err
}

// ActionError is an action that the fast lane rejected before stepping any copy.
type ActionError struct {
	// Copy is the copy's index; Agent the acting agent's name.
	Copy  int
	Agent string
	// Action is the action; Reason says what is wrong with it.
	Action int64
	Reason string
}

func (e *ActionError) Error() string {
	return fmt.Sprintf("%v: copy %d: agent %s: action %d: %s", ErrAction, e.Copy, e.Agent, e.Action, e.Reason)
}

// Unwrap returns ErrAction.
func (e *ActionError) Unwrap() error { return ErrAction }

// check returns the *ActionError of action a of copy i for agent l with the copy's
// mask row (nil without a mask), or nil.
func (l *AgentLayout) check(i int, a int64, mask []bool) error {
	k := uint64(a) - uint64(l.Start)
	switch {
	case a < l.Start || k >= uint64(l.Actions):
		return &ActionError{Copy: i, Agent: l.Name, Action: a, Reason: fmt.Sprintf("outside Discrete(%d, start=%d)", l.Actions, l.Start)}
	case mask != nil && !mask[k]:
		return &ActionError{Copy: i, Agent: l.Name, Action: a, Reason: "masked (the action mask forbids it)"}
	}
	return nil
}

// Failure is one copy's failure, as a caller in another language reports it.
type Failure struct {
	// Copy is the copy's index, -1 when the error is of no copy.
	Copy int `json:"copy"`
	// Agent is the agent that acted in the copy, "" when unknown.
	Agent string `json:"agent,omitempty"`
	// Op is what failed: "reset", "step", "action", or "" when of no copy.
	Op string `json:"op,omitempty"`
	// Reason is the error's message.
	Reason string `json:"reason"`
	// Panic holds the stack of a copy that panicked.
	Panic string `json:"panic,omitempty"`
}

// Failures lists the copies that err names (its *ActionError and *vector.CopyError
// values, found through joined errors), with agent(i), when not nil, naming the
// agent of copy i. An error that names no copy is one Failure of copy -1.
func Failures(err error, agent func(i int) string) []Failure {
	var out []Failure
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if ae, ok := errors.AsType[*ActionError](e); ok {
			out = append(out, Failure{Copy: ae.Copy, Agent: ae.Agent, Op: "action", Reason: ae.Reason})
			return
		}
		if ce, ok := errors.AsType[*vector.CopyError](e); ok {
			f := Failure{Copy: ce.Copy, Op: ce.Op.String(), Reason: ce.Err.Error()}
			if agent != nil {
				f.Agent = agent(ce.Copy)
			}
			if pe, ok := errors.AsType[*vector.PanicError](ce.Err); ok {
				f.Panic = string(pe.Stack)
			}
			out = append(out, f)
			return
		}
		out = append(out, Failure{Copy: -1, Reason: e.Error()})
	}
	walk(err)
	return out
}

// sameSize returns an ErrArgument naming the buffer if len(b) is not want.
func sameSize(name string, got, want int) error {
	if got != want {
		return fmt.Errorf("%w: %s has %d elements, want %d", ErrArgument, name, got, want)
	}
	return nil
}

// Single is a vector of a single-agent environment over the caller's buffers.
// It is not safe for concurrent use.
type Single struct {
	v      *vector.Env
	layout Layout
	src    source
	// rec records the steps into dir; nil when not recording.
	rec *recorder
	dir string
	*frames
	// held is whether the copies have holds (WithHold), hold the holds.
	held bool
	hold []Hold
}

// NewSingle makes n copies of the named single-agent environment (KindSingle) with
// the given number of workers, writing into b (see vector.Buffers for the lengths),
// with the options (WithHold).
func NewSingle(reg *registry.Registry, name string, config []byte, n, workers int, b vector.Buffers, opts ...Option) (*Single, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	if l.Kind != KindSingle {
		return nil, fmt.Errorf("%w: %s is a multi-agent environment (agents %s); make it with NewMulti", ErrArgument, name, names(l))
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	}
	o, err := newOptions(n, opts)
	if err != nil {
		return nil, err
	}
	fr := &frames{ms: make([]env.MultiAgent, n), look: look(reg, name)}
	v, err := vector.New(n, func(i int) (env.Env, error) {
		m, err := f.NewEnv(registry.EnvOptions{})
		if err != nil {
			return nil, err
		}
		fr.ms[i] = m
		e, _ := single(m)
		return o.holding(i, e, fr), nil
	}, vector.WithWorkers(workers), vector.WithBuffers(b))
	if err != nil {
		return nil, err
	}
	return &Single{v: v, layout: l, src: source{reg: reg, name: name, config: config, f: f}, frames: fr, held: o.hold != nil, hold: o.hold}, nil
}

func names(l Layout) string {
	s := make([]string, len(l.Agents))
	for i, a := range l.Agents {
		s[i] = a.Name
	}
	return strings.Join(s, ", ")
}

// Layout returns the vector's layout.
func (s *Single) Layout() Layout { return s.layout }

// Len returns the number of copies.
func (s *Single) Len() int { return s.v.Len() }

// Reset resets every copy, copy i with vector.EpisodeSeed(seed, i, 0).
func (s *Single) Reset(ctx context.Context, seed uint64) error {
	err := s.v.Reset(ctx, seed)
	if s.rec == nil {
		return err
	}
	s.rec.afterReset(err, s.v.Seeds(), s.logStart)
	return cmp.Or(err, s.rec.err())
}

// Step checks every action (an *ActionError for the first bad one, changing nothing)
// and steps every copy with its action. With holds (WithHold), the action of a copy
// held (HoldStay, HoldEnd) is neither checked nor used.
func (s *Single) Step(ctx context.Context, actions []int64) error {
	if err := sameSize("actions", len(actions), s.v.Len()); err != nil {
		return err
	}
	a := &s.layout.Agents[0]
	masks, m := s.v.Masks(), a.MaskLen
	if m == 0 {
		// The common case, a pass without branches: is any action out of range?
		var out uint64
		start, n := uint64(a.Start), uint64(a.Actions)
		for _, x := range actions {
			out |= boolBit(uint64(x)-start >= n)
		}
		if out == 0 {
			return s.step(ctx, actions)
		}
	}
	for i, x := range actions {
		if s.hold != nil && (s.hold[i] == HoldStay || s.hold[i] == HoldEnd) {
			continue
		}
		var mask []bool
		if m > 0 {
			mask = masks[i*m : (i+1)*m]
		}
		if err := a.check(i, x, mask); err != nil {
			return err
		}
	}
	return s.step(ctx, actions)
}

// step steps every copy with its checked action, and records the step.
func (s *Single) step(ctx context.Context, actions []int64) error {
	err := s.v.StepDiscrete(ctx, actions)
	if s.rec == nil {
		return err
	}
	if err == nil {
		s.logStep(actions)
	}
	s.rec.afterStep(err)
	return cmp.Or(err, s.rec.err())
}

// Agent returns the agent's name, for Failures.
func (s *Single) Agent(int) string { return s.layout.Agents[0].Name }

// Close ends the recording (CloseLog, whose error it returns) and stops the
// vector's workers. It is idempotent.
func (s *Single) Close() error {
	err := s.CloseLog()
	return cmp.Or(s.v.Close(), err)
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
