package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"go.uber.org/multierr"
)

// EnvOptions are the settings of one trial that an environment is built with.
type EnvOptions struct {
	// MaxTicks truncates every episode after this many environment steps; 0 means the
	// environment's own limits only. A factory applies it where the environment can
	// (hrl.Config.MaxTicks, a single-agent step limit), so that the environment itself
	// reports who is truncated; where it does not, the runner stops the episode at the
	// limit (see runners.Spec.MaxTicks).
	MaxTicks int
}

// Factory builds the environments of one configuration, one per trial (a campaign's
// worker reuses one for the trials it runs with the same configuration and limits:
// an environment's Reset must start an episode afresh). Policy factories receive it
// too, so that a policy can use what the configuration describes (the maze's oracle
// plans over the maze). A Factory must be safe for concurrent use.
type Factory interface {
	NewEnv(o EnvOptions) (env.MultiAgent, error)
}

// FactoryFunc adapts a function to a Factory.
type FactoryFunc func(o EnvOptions) (env.MultiAgent, error)

// NewEnv calls f.
func (f FactoryFunc) NewEnv(o EnvOptions) (env.MultiAgent, error) { return f(o) }

// PolicyFactory builds one agent's policy for one trial. f is the Factory of the
// trial's configuration; rng is the generator of this trial and agent, seeded from the
// trial's seed and the agent's index (see the package documentation): a policy that
// draws at random must draw from it alone, so that trials replay. rng is the trial's:
// a campaign's worker seeds it again for its next trial, so a policy must not use it
// after its trial.
type PolicyFactory func(f Factory, rng *rand.Rand) (agent.Policy, error)

// PolicyEntry is a named policy an agent can play.
type PolicyEntry struct {
	Name        string
	Description string
	New         PolicyFactory
}

// AgentEntry lists the policies one agent of an environment can play.
type AgentEntry struct {
	// Name is the agent's name, as the environment's Agents report it.
	Name string
	// Default is the policy the agent plays when a trial names none; "" means the
	// first of Policies.
	Default string
	// Policies are the agent's named policies, in the order help lists them.
	Policies []PolicyEntry
}

// PolicyNames returns the names of the agent's policies, sorted.
func (a *AgentEntry) PolicyNames() []string {
	names := make([]string, len(a.Policies))
	for i, p := range a.Policies {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

func (a *AgentEntry) policy(name string) *PolicyEntry {
	for i := range a.Policies {
		if a.Policies[i].Name == name {
			return &a.Policies[i]
		}
	}
	return nil
}

// Entry is an environment registered by name, with the policies of its agents.
type Entry struct {
	// Name identifies the environment (`baton run maze`): not empty, no white space.
	Name string
	// Description is one line for help.
	Description string
	// Config is a value of the environment's configuration type (its zero value will
	// do), for help: a command lists its JSON fields. nil when there is none.
	Config any
	// Open checks a JSON configuration (nil or empty means the defaults) and returns
	// the Factory of its environments. An error means the configuration is bad; the
	// runner wraps it with runners.ErrEnvConfig.
	Open func(config []byte) (Factory, error)
	// OpenRemote opens, in Open's place, a configuration that arrived over the network
	// (a server's caller; see Registry.Remote): it reads a file the configuration
	// names with o.ReadFile only (confined to the folder the server's operator
	// allows), and refuses with o.Check what asks for more than a limit of Limits.
	// nil means Open opens those configurations too: right for an environment whose
	// configuration names no file and cannot ask for much memory.
	OpenRemote func(config []byte, o Remote) (Factory, error)
	// Limits are the bounds OpenRemote applies to configurations from the network
	// (a maze's side, a site's pages), each with its default; servers' operators
	// change them by name (Remote.Limits) and help lists them.
	Limits []Limit
	// Agents lists the agents that have named policies, normally every agent of the
	// environment. An agent of the environment missing here must be given a policy
	// value by each trial (runners.Value or runners.PerTrial).
	Agents []AgentEntry
	// Success reports whether an episode succeeded, from the Turn that ended it (the
	// last Turn of an episode the runner cut at runners.Spec.MaxTicks). nil means the
	// environment defines no success; summaries then show no success rate.
	Success func(final env.Turn) bool
	// Metrics are figures of an episode the environment defines beyond returns and
	// success (the web-testing example's coverage and defects found), each measured,
	// as Success judges, from the Turn that ended the episode. Trials record them per
	// complete episode (runners.EpisodeResult.Metrics) and campaign summaries sum them up
	// (runners.Summary.Metrics). nil means none.
	Metrics []Metric
	// Look says how to show the environment's actions and states to people (baton
	// play). Its zero value shows raw actions and the Info as JSON.
	Look Look

	// origin names the code that registered the entry (set by Register).
	origin string
}

// Look says how to show an environment to people: what an agent's action means, a
// one-line description of the environment's state, and the state drawn (Frame).
// Displays such as baton play ask the registry entry's Look, so that a new environment
// reads well without changes to them. The zero Look shows an action as
// agent.RawAction.String does ("3", "[1 0]"), a state as its Info's JSON, and draws
// the environment's own env.Renderer; each field left nil keeps its default. A Look holds
// functions only: copy it freely. Its functions must be safe for concurrent use.
type Look struct {
	// Action names the action raw that the agent of acting took on turn: "LEFT",
	// "FORWARD", `link "Cart"`. turn is the Turn the agent acted on, before its step,
	// and acting its report in it (turn.Acting()), so the name may depend on what
	// the agent saw: the runtime's typed observations (hrl.Obs) of turn are valid
	// while Action runs. "" means the default.
	Action func(turn env.Turn, acting *env.Report, raw agent.RawAction) string
	// Info describes the environment's Info (env.MultiAgent.Info) in one line for
	// people: "[4 8] LEFT" for the maze. It is called with nil for an environment that
	// has no Info. nil means the Info's JSON.
	Info func(info any) string
	// Render draws the current state of m, an environment of the entry built by its
	// Factory, for people (see env.Frame): the maze's grid, the web tester's page. It is
	// called between steps. nil, or a zero Frame, means what Frame falls back to: the
	// environment's own env.Renderer. RenderState makes one for the hrl runtime of a
	// hierarchical environment whose state draws itself.
	Render func(m env.MultiAgent) env.Frame
}

// Frame draws the current state of m for people: by l.Render; else, when that is nil
// or draws nothing, by the first env.Renderer that env.As finds from m (an
// environment, or one it wraps: cartpole's behind SingleAgent); else as a
// Frame whose Text is the one line of Describe and whose Scene is m's Info.
func (l Look) Frame(m env.MultiAgent) env.Frame {
	if l.Render != nil {
		if f := l.Render(m); !f.IsZero() {
			return f
		}
	}
	if r, ok := env.As[env.Renderer](m); ok {
		if f := r.Render(); !f.IsZero() {
			return f
		}
	}
	info := m.Info()
	return env.Frame{Text: l.Describe(info) + "\n", Scene: info}
}

// RenderState returns a Look.Render for the environments of an entry built on the
// hrl runtime (*hrl.Runtime[S, A], found with env.As) whose state S draws itself: it
// renders the runtime's current state, and draws nothing for another environment or
// before the first reset.
func RenderState[S env.Renderer, A any]() func(m env.MultiAgent) env.Frame {
	return func(m env.MultiAgent) env.Frame {
		rt, ok := env.As[*hrl.Runtime[S, A]](m)
		if !ok || (rt.Acting() == "" && !rt.Over()) {
			return env.Frame{}
		}
		return rt.State().Render()
	}
}

// ActionName names the action raw of the agent of acting on turn, by l.Action or, when
// that is nil or says "", as raw.String() does. See Look.Action.
func (l Look) ActionName(turn env.Turn, acting *env.Report, raw agent.RawAction) string {
	if l.Action != nil {
		if name := l.Action(turn, acting, raw); name != "" {
			return name
		}
	}
	return raw.String()
}

// Describe describes an environment's Info in one line, by l.Info or, when that is
// nil, as the Info's JSON ("null" for nil), or its %v when it has no JSON form.
func (l Look) Describe(info any) string {
	if l.Info != nil {
		return l.Info(info)
	}
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Sprint(info)
	}
	return string(b)
}

// Metric is a named figure of an episode, measured from the Turn that ended it.
type Metric struct {
	// Name identifies the metric in summaries and their JSON: not empty, without
	// white space, unique within the entry.
	Name string
	// Description is one line for help.
	Description string
	// Value measures the episode; ok false means the episode does not tell, and it is
	// left out of the metric's summary.
	Value func(final env.Turn) (v float64, ok bool)
}

// Agent returns the entry of the named agent, or a *NameError listing the choices.
func (e *Entry) Agent(name string) (*AgentEntry, error) {
	for i := range e.Agents {
		if e.Agents[i].Name == name {
			return &e.Agents[i], nil
		}
	}
	return nil, &NameError{Kind: ErrUnknownAgent, Name: name, Env: e.Name, Choices: e.AgentNames()}
}

// Policy returns the named policy of the named agent, or a *NameError listing the
// choices.
func (e *Entry) Policy(agentName, policy string) (*PolicyEntry, error) {
	a, err := e.Agent(agentName)
	if err != nil {
		return nil, err
	}
	if p := a.policy(policy); p != nil {
		return p, nil
	}
	return nil, &NameError{Kind: ErrUnknownPolicy, Name: policy, Env: e.Name, Agent: agentName, Choices: a.PolicyNames()}
}

// AgentNames returns the names of the entry's agents, in its order.
func (e *Entry) AgentNames() []string {
	names := make([]string, len(e.Agents))
	for i, a := range e.Agents {
		names[i] = a.Name
	}
	return names
}

// clone copies the entry's slices, so that the registry's copy cannot change.
func (e Entry) clone() *Entry {
	e.Metrics = slices.Clone(e.Metrics)
	e.Limits = slices.Clone(e.Limits)
	e.Agents = slices.Clone(e.Agents)
	for i := range e.Agents {
		a := &e.Agents[i]
		a.Policies = slices.Clone(a.Policies)
		if a.Default == "" && len(a.Policies) > 0 {
			a.Default = a.Policies[0].Name
		}
	}
	return &e
}

// check reports every problem of an entry at once.
func (e *Entry) check() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w %q: %s", ErrInvalidEntry, e.Name, fmt.Sprintf(format, args...)))
	}
	if e.Name == "" || strings.ContainsFunc(e.Name, unicode.IsSpace) {
		bad("the name must be non-empty without white space")
	}
	if e.Open == nil {
		bad("Open is nil")
	}
	agents := map[string]bool{}
	for i, a := range e.Agents {
		switch {
		case a.Name == "":
			bad("agent #%d has no name", i)
		case agents[a.Name]:
			bad("agent %q is listed twice", a.Name)
		}
		agents[a.Name] = true
		if len(a.Policies) == 0 {
			bad("agent %q has no policy", a.Name)
		}
		policies := map[string]bool{}
		for j, p := range a.Policies {
			switch {
			case p.Name == "" || strings.ContainsFunc(p.Name, unicode.IsSpace) || strings.Contains(p.Name, "="):
				bad("policy #%d of agent %q: the name must be non-empty without white space or '='", j, a.Name)
			case policies[p.Name]:
				bad("agent %q lists policy %q twice", a.Name, p.Name)
			}
			policies[p.Name] = true
			if p.New == nil {
				bad("policy %q of agent %q: New is nil", p.Name, a.Name)
			}
		}
		if a.Default != "" && !policies[a.Default] {
			bad("the default policy %q of agent %q is not one of its policies (%s)", a.Default, a.Name, strings.Join(a.PolicyNames(), ", "))
		}
	}
	checkLimits(e.Limits, bad)
	if len(e.Limits) > 0 && e.OpenRemote == nil {
		bad("Limits are given without OpenRemote, which applies them")
	}
	metrics := map[string]bool{}
	for i, m := range e.Metrics {
		switch {
		case m.Name == "" || strings.ContainsFunc(m.Name, unicode.IsSpace):
			bad("metric #%d: the name must be non-empty without white space", i)
		case metrics[m.Name]:
			bad("metric %q is listed twice", m.Name)
		}
		metrics[m.Name] = true
		if m.Value == nil {
			bad("metric %q: Value is nil", m.Name)
		}
	}
	return multierr.Combine(errs...)
}

// Registry maps environment names to entries. Commands and services build one, have
// the shipped environments register into it (maze.Register, cartpole.Register), and look
// environments up by name. The zero Registry is empty and ready to use; it is safe for
// concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries []*Entry

	// A view made by Remote: base holds the entries, remote how they open.
	base   *Registry
	remote *Remote
}

// New returns an empty registry.
func New() *Registry { return &Registry{} }

// Register adds an entry. It returns an error wrapping ErrInvalidEntry, listing every
// problem, for an invalid entry, and a *DuplicateError (matching ErrDuplicate) that
// names both registrations for a name already registered. The registry keeps a copy: later changes to e do not reach it.
func (r *Registry) Register(e Entry) error {
	return r.register(e, registrar())
}

// register is Register, origin naming its caller.
func (r *Registry) register(e Entry, origin string) error {
	if r.remote != nil {
		return r.base.register(e, origin)
	}
	c := e.clone()
	if err := c.check(); err != nil {
		return err
	}
	c.origin = origin
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, old := range r.entries {
		if old.Name == c.Name {
			return &DuplicateError{Name: c.Name, First: old.origin, Second: c.origin}
		}
	}
	r.entries = append(r.entries, c)
	return nil
}

// registrar names the code that called Register, and the code that called that: a
// register function and what ran it ("…/envs/rps.Register (register.go:20) from
// …/envs/catalog.Register (catalog.go:18)"), for the message of a name registered
// twice.
func registrar() string {
	var pcs [2]uintptr
	n := runtime.Callers(3, pcs[:]) // runtime.Callers, registrar, Register
	frames := runtime.CallersFrames(pcs[:n])
	var where []string
	for {
		f, more := frames.Next()
		if f.Function != "" {
			where = append(where, fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line))
		}
		if !more {
			break
		}
	}
	if len(where) == 0 {
		return "an unknown caller"
	}
	return strings.Join(where, " from ")
}

// Lookup returns the entry registered under name, or a *NameError (wrapping
// ErrUnknownEnv) that lists the registered names. The entry's slices are shared with
// the registry: treat them as read-only.
func (r *Registry) Lookup(name string) (Entry, error) {
	e, err := r.lookup(name)
	if err != nil {
		return Entry{}, err
	}
	return *e, nil
}

func (r *Registry) lookup(name string) (*Entry, error) {
	if r.remote != nil {
		e, err := r.base.lookup(name)
		if err != nil {
			return nil, err
		}
		return r.remoteEntry(e), nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, e := range r.entries {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, &NameError{Kind: ErrUnknownEnv, Name: name, Choices: r.names()}
}

// Names returns the registered names in the order they were registered.
func (r *Registry) Names() []string {
	if r.remote != nil {
		return r.base.Names()
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.names()
}

func (r *Registry) names() []string {
	names := make([]string, len(r.entries))
	for i, e := range r.entries {
		names[i] = e.Name
	}
	return names
}

// All iterates over the entries in the order they were registered, as Lookup returns
// them. Registering during the iteration does not disturb it.
func (r *Registry) All() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		src := r
		if r.remote != nil {
			src = r.base
		}
		src.mu.RLock()
		entries := slices.Clone(src.entries)
		src.mu.RUnlock()
		for _, e := range entries {
			if r.remote != nil {
				e = r.remoteEntry(e)
			}
			if !yield(*e) {
				return
			}
		}
	}
}

// NameError is the error for a name that is not registered: an environment, an agent
// of an environment, a policy of an agent or a limit (ENV.LIMIT) of an environment. Its message is one line that names the
// valid choices; errors.Is matches Kind.
type NameError struct {
	// Kind is ErrUnknownEnv, ErrUnknownAgent, ErrUnknownPolicy or ErrUnknownLimit.
	Kind error
	// Name is the unknown name.
	Name string
	// Env is the environment of an unknown agent or policy; Agent the agent of an
	// unknown policy.
	Env, Agent string
	// Choices are the valid names.
	Choices []string
}

func (e *NameError) Error() string {
	var b strings.Builder
	switch {
	case errors.Is(e.Kind, ErrUnknownPolicy):
		fmt.Fprintf(&b, "registry: unknown policy %q for agent %s of %s", e.Name, e.Agent, e.Env)
	case errors.Is(e.Kind, ErrUnknownAgent):
		fmt.Fprintf(&b, "registry: unknown agent %q of %s", e.Name, e.Env)
	case errors.Is(e.Kind, ErrUnknownLimit):
		fmt.Fprintf(&b, "registry: unknown limit %q", e.Name)
	default:
		fmt.Fprintf(&b, "registry: unknown environment %q", e.Name)
	}
	if len(e.Choices) == 0 {
		b.WriteString(" (there are none)")
	} else {
		b.WriteString(" (choices: " + strings.Join(e.Choices, ", ") + ")")
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *NameError) Unwrap() error { return e.Kind }

// DecodeConfig reads an environment's JSON configuration into v strictly: unknown
// fields and data after the JSON value are errors; empty or blank input leaves v as it
// is (usually the zero configuration). The registered environments' Open functions
// read --env-config with it, so every environment takes its configuration the same
// way.
func DecodeConfig(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}
