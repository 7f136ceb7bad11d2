package runners

import (
	"encoding/json"
	"fmt"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// Spec describes a trial: which environment, configured how, which policy each agent
// plays, the seed, how many episodes and the tick limit. The zero values of Episodes
// and MaxTicks mean one episode and no limit beyond the environment's own.
type Spec struct {
	// ID names the trial. A Controller makes one up when it is "" ("trial-1", ...); a
	// campaign names its trials ID-i, or ENV-i when ID is "".
	ID string
	// Env is the registered environment's name.
	Env string
	// Config is the environment's JSON configuration; nil or empty means its defaults.
	Config json.RawMessage
	// Actors chooses the policy of agents by name; an agent left out plays its
	// entry's default policy. Swapping a learned agent for a scripted one is a change
	// here and nowhere else.
	Actors map[string]Actor
	// Seed seeds the trial: episode e resets with env.DeriveSeed(Seed, e), and agent i of
	// the environment draws from rand.New(rand.NewPCG(Seed, i)). In a campaign it is
	// the campaign's seed, and trial i gets env.DeriveSeed(Seed, i).
	Seed uint64
	// Episodes is how many episodes the trial plays; 0 means 1.
	Episodes int
	// MaxTicks truncates each episode after this many environment steps; 0 means no
	// limit beyond the environment's. The environment's factory applies it where it
	// can (the hrl runtime then reports every agent in control truncated); for an
	// environment that ignores it, the runner stops the episode at the limit, marks
	// the reports of that last tick truncated (EpisodeEvent.Truncated tells), and the
	// agents waiting for control get no final report.
	MaxTicks int
	// Task names the task of a schedule that the trial plays (see WithSchedule); ""
	// outside a schedule. TrialInfo and the activity log carry it.
	Task string
}

// Actor chooses an agent's policy: exactly one field is set. Build it with Named,
// Value or PerTrial.
type Actor struct {
	// Policy is the name of one of the agent's registered policies.
	Policy string
	// Value is a policy used as it is. Every trial of a campaign uses the same value:
	// with several workers it must be safe for concurrent use.
	Value agent.Policy
	// New builds a policy for each trial, from the trial and agent's generator (see
	// PolicyFactory).
	New func(rng *rand.Rand) (agent.Policy, error)
}

// Named chooses a registered policy by name.
func Named(policy string) Actor { return Actor{Policy: policy} }

// Value chooses a policy value, used as it is by every trial it is given to.
func Value(p agent.Policy) Actor { return Actor{Value: p} }

// PerTrial chooses a policy built for each trial by f, from the trial and agent's
// seeded generator.
func PerTrial(f func(rng *rand.Rand) (agent.Policy, error)) Actor { return Actor{New: f} }

func (a Actor) count() int {
	n := 0
	if a.Policy != "" {
		n++
	}
	if a.Value != nil {
		n++
	}
	if a.New != nil {
		n++
	}
	return n
}

// clone returns a copy of s that shares nothing mutable with it.
func (s Spec) clone() Spec {
	s.Config = slices.Clone(s.Config)
	s.Actors = maps.Clone(s.Actors)
	return s
}

// opened is an environment entry with a configuration opened: what every trial of that
// configuration shares.
type opened struct {
	entry   *registry.Entry
	config  json.RawMessage
	factory registry.Factory
	agents  []env.Spec
	names   []string // the agents' names
	sources []string // per agent, the source of its actor's rewards: "actor:NAME"
	// first is the environment built to learn the agents, built with the tick limit
	// firstTicks, for a first trial to use.
	first      env.MultiAgent
	firstTicks int
}

// open looks the spec's environment up, opens its configuration and builds one
// environment to learn its agents.
func open(reg *registry.Registry, name string, config []byte, maxTicks int) (*opened, error) {
	found, err := reg.Lookup(name)
	if err != nil {
		return nil, err
	}
	entry := &found
	f, err := entry.Open(config)
	if err != nil {
		return nil, fmt.Errorf("%w for %s: %w", ErrEnvConfig, name, err)
	}
	if f == nil {
		return nil, fmt.Errorf("%w: %s: Open returned a nil Factory", ErrEnv, name)
	}
	m, err := f.NewEnv(registry.EnvOptions{MaxTicks: maxTicks})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrEnv, name, err)
	}
	o := &opened{entry: entry, config: slices.Clone(config), factory: f, agents: m.Agents(), first: m, firstTicks: maxTicks}
	for _, a := range o.agents {
		o.names = append(o.names, a.Name)
		o.sources = append(o.sources, event.SourceActorPrefix+a.Name)
	}
	return o, nil
}

// plan is a checked spec: how to build the trial's environment and policies.
type plan struct {
	spec    Spec
	index   int // in the campaign, -1 outside one
	open    *opened
	choices []Actor // per agent of the environment, the spec's choice or the default
	info    *event.TrialInfo
	// watched starts the trial watched from its first step, waiting watchPace after
	// each step drawn (Controller.StartWatched).
	watched   bool
	watchPace time.Duration
}

// copyFor makes dst a copy of p for another trial of the same spec; it allocates the
// trial's TrialInfo only.
func (p *plan) copyFor(dst *plan, id string, seed uint64, index int) {
	*dst = *p
	dst.spec.ID, dst.spec.Seed, dst.index = id, seed, index
	info := *p.info
	info.ID, info.Seed, info.Index = id, seed, index
	dst.info = &info
}

// checkSpec reports the problems of a spec that need no registry.
func checkSpec(s *Spec) error {
	bad := false
	for _, a := range s.Actors {
		bad = bad || a.count() != 1
	}
	if !bad && s.Episodes >= 0 && s.MaxTicks >= 0 {
		return nil // the common case, checked without sorting the agents' names
	}
	var errs []string
	if s.Episodes < 0 {
		errs = append(errs, fmt.Sprintf("Episodes is %d; want 0 (for 1) or more", s.Episodes))
	}
	if s.MaxTicks < 0 {
		errs = append(errs, fmt.Sprintf("MaxTicks is %d; want 0 (no limit) or more", s.MaxTicks))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Actors)) {
		if n := s.Actors[name].count(); n != 1 {
			errs = append(errs, fmt.Sprintf("the actor of agent %s sets %d of Policy, Value and New; want exactly one", name, n))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidSpec, strings.Join(errs, "; "))
	}
	return nil
}

// newPlan checks a spec against an opened environment.
func newPlan(s Spec, index int, o *opened) (*plan, error) {
	if err := checkSpec(&s); err != nil {
		return nil, err
	}
	names := o.names
	for name := range s.Actors {
		if slices.Contains(names, name) {
			continue
		}
		// Name the first unknown agent in sorted order, whatever the map's order.
		for _, name := range slices.Sorted(maps.Keys(s.Actors)) {
			if !slices.Contains(names, name) {
				return nil, &registry.NameError{Kind: registry.ErrUnknownAgent, Name: name, Env: o.entry.Name, Choices: slices.Clone(names)}
			}
		}
	}
	p := &plan{spec: s, index: index, open: o, choices: make([]Actor, len(o.agents))}
	if p.spec.Episodes == 0 {
		p.spec.Episodes = 1
	}
	policies := make([]string, len(o.agents))
	for i, name := range names {
		choice, ok := s.Actors[name]
		if !ok {
			a, err := o.entry.Agent(name)
			if err != nil {
				return nil, fmt.Errorf("%w: agent %s of %s has no registered policy: the spec must give it one", ErrInvalidSpec, name, o.entry.Name)
			}
			choice = Named(a.Default)
		}
		if choice.Policy != "" {
			if _, err := o.entry.Policy(name, choice.Policy); err != nil {
				return nil, err
			}
		}
		p.choices[i] = choice
		policies[i] = choice.Policy
	}
	p.info = &event.TrialInfo{
		ID:             s.ID,
		Index:          index,
		Env:            o.entry.Name,
		Config:         o.config,
		Seed:           s.Seed,
		Episodes:       p.spec.Episodes,
		MaxTicks:       s.MaxTicks,
		Agents:         o.agents,
		Policies:       policies,
		DefinesSuccess: o.entry.Success != nil,
		Metrics:        metricNames(o.entry),
		Task:           s.Task,
	}
	return p, nil
}

// policy builds the policy of agent i for the trial, with rng seeded for it.
func (p *plan) policy(i int, rng *rand.Rand) (agent.Policy, error) {
	c := p.choices[i]
	var pol agent.Policy
	var err error
	switch {
	case c.Value != nil:
		pol = c.Value
	case c.New != nil:
		pol, err = c.New(rng)
	default:
		var pe *registry.PolicyEntry
		if pe, err = p.open.entry.Policy(p.open.agents[i].Name, c.Policy); err == nil {
			pol, err = pe.New(p.open.factory, rng)
		}
	}
	if err == nil && pol == nil {
		err = fmt.Errorf("no policy built")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: building the policy of agent %s: %w", ErrPolicy, p.open.agents[i].Name, err)
	}
	return pol, nil
}

// metricNames returns the names of the entry's metrics, nil when it has none.
func metricNames(e *registry.Entry) []string {
	if len(e.Metrics) == 0 {
		return nil
	}
	names := make([]string, len(e.Metrics))
	for i, m := range e.Metrics {
		names[i] = m.Name
	}
	return names
}
