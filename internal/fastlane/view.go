package fastlane

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
)

// View is a vector of one agent of a multi-agent environment, each copy an env.View
// in which the registry's named policies drive the other agents: what a single-agent
// learner of one agent of a hierarchy steps (Python's baton.make). Its results are a
// Single's, with auto-reset, plus the span of each step (Spans). It is not safe for
// concurrent use.
type View struct {
	Single
	spans []int64
	fresh bool // the Reset in progress starts new underlying episodes
}

// NewView makes n copies of the view of the agent called agentName in the named
// environment, writing into b (see vector.Buffers) and, after each Step, each copy's
// env.View.SpanTicks into spans (n elements). funcs gives other agents a policy value
// (one shared by every copy: it is called from the vector's workers, so it must be
// safe for concurrent use when workers > 1); policies names the policy of each other
// agent (the registry's policy names); an agent that neither names plays its
// default. ctx is passed to the policies, for the vector's life.
//
// The policies of copy i draw from generators seeded again at each of its resets,
// from the reset's seed and the agent's index, so that the same seeds give the same
// episodes.
func NewView(ctx context.Context, reg *registry.Registry, name string, config []byte, agentName string, policies map[string]string,
	funcs map[string]agent.Policy, n, workers int, b vector.Buffers, spans []int64, opts ...Option) (*View, error) {
	entry, err := reg.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	f, err := entry.Open(config)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	probe, err := f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	specs := probe.Agents()
	i := slices.IndexFunc(specs, func(s env.Spec) bool { return s.Name == agentName })
	if i < 0 {
		return nil, fmt.Errorf("%w: %s has no agent %q (agents: %s)", ErrConfig, name, agentName, specNames(specs))
	}
	a, err := agentLayout(specs[i])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	chosen := map[string]*registry.PolicyEntry{}
	for other, p := range policies {
		if other == agentName {
			return nil, fmt.Errorf("%w: a policy (%q) is given for the viewed agent %q itself", ErrConfig, p, agentName)
		}
		pe, err := entry.Policy(other, p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
		}
		chosen[other] = pe
	}
	for other := range funcs {
		switch {
		case other == agentName:
			return nil, fmt.Errorf("%w: a policy is given for the viewed agent %q itself", ErrConfig, agentName)
		case chosen[other] != nil:
			return nil, fmt.Errorf("%w: agent %q is given both a named policy and a policy value", ErrConfig, other)
		case !slices.ContainsFunc(specs, func(s env.Spec) bool { return s.Name == other }):
			return nil, fmt.Errorf("%w: %s has no agent %q (agents: %s)", ErrConfig, name, other, specNames(specs))
		}
	}
	for _, s := range specs {
		if s.Name == agentName || chosen[s.Name] != nil || funcs[s.Name] != nil {
			continue
		}
		ae, err := entry.Agent(s.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: agent %q has no named policy: %w", ErrConfig, name, s.Name, err)
		}
		pe, err := entry.Policy(s.Name, ae.Default)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
		}
		chosen[s.Name] = pe
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	}
	if err := sameSize("spans", len(spans), n); err != nil {
		return nil, err
	}
	o, err := newOptions(n, opts)
	if err != nil {
		return nil, err
	}
	v := &View{spans: spans}
	fr := &frames{ms: make([]env.MultiAgent, n), look: entry.Look}
	vec, err := vector.New(n, func(k int) (env.Env, error) {
		c, err := newViewCopy(ctx, f, specs, agentName, chosen, funcs, &v.fresh, &spans[k])
		if err != nil {
			return nil, err
		}
		fr.ms[k] = c.m
		if o.hold != nil {
			c.hold, c.i, c.frames = &o.hold[k], k, fr
		}
		return c, nil
	}, vector.WithWorkers(workers), vector.WithBuffers(b))
	if err != nil {
		return nil, err
	}
	v.Single = Single{v: vec, layout: Layout{Kind: KindSingle, Agents: []AgentLayout{a}}, frames: fr, held: o.hold != nil, hold: o.hold}
	return v, nil
}

func specNames(specs []env.Spec) string {
	s := make([]string, len(specs))
	for i, sp := range specs {
		s[i] = sp.Name
	}
	return strings.Join(s, ", ")
}

// Reset resets every copy, copy i with vector.EpisodeSeed(seed, i, 0); a copy whose
// underlying episode can go on (the viewed agent's sub-episode ended, the episode did
// not) goes on with it, as env.View.Reset does.
func (v *View) Reset(ctx context.Context, seed uint64) error {
	clear(v.spans)
	return v.Single.Reset(ctx, seed)
}

// Restart is Reset with every copy starting a new underlying episode, so that the
// copies' episodes depend on seed alone.
func (v *View) Restart(ctx context.Context, seed uint64) error {
	v.fresh = true
	defer func() { v.fresh = false }()
	return v.Reset(ctx, seed)
}

// viewCopy is one copy of a View: an env.View with the policies' generators, seeded
// again at each reset.
type viewCopy struct {
	ctx    context.Context
	m      env.MultiAgent
	name   string
	others map[string]agent.Policy
	pcgs   []*rand.PCG
	view   *env.View
	fresh  *bool
	span   *int64
	// hold is the copy's Hold (WithHold), nil without; cur its current observation
	// and mask, which a held Step returns; i its index in frames, which keeps its
	// final frames.
	hold   *Hold
	cur    current
	i      int
	frames *frames
}

func newViewCopy(ctx context.Context, f registry.Factory, specs []env.Spec, name string, chosen map[string]*registry.PolicyEntry,
	funcs map[string]agent.Policy, fresh *bool, span *int64) (*viewCopy, error) {
	m, err := f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return nil, err
	}
	c := &viewCopy{ctx: ctx, m: m, name: name, others: map[string]agent.Policy{}, fresh: fresh, span: span}
	for j, s := range specs {
		if s.Name == name {
			continue
		}
		if p := funcs[s.Name]; p != nil {
			c.others[s.Name] = p
			continue
		}
		pcg := rand.NewPCG(0, uint64(j))
		p, err := chosen[s.Name].New(f, rand.New(pcg))
		if err != nil {
			return nil, fmt.Errorf("%w: policy %q of agent %q: %w", ErrConfig, chosen[s.Name].Name, s.Name, err)
		}
		c.others[s.Name] = p
		c.pcgs = append(c.pcgs, pcg)
	}
	if c.view, err = env.NewView(ctx, m, name, c.others); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c, nil
}

func (c *viewCopy) Spec() env.Spec { return c.view.Spec() }

func (c *viewCopy) Info() any { return c.view.Info() }

func (c *viewCopy) Reset(seed uint64) (env.Step, error) {
	if *c.fresh {
		v, err := env.NewView(c.ctx, c.m, c.name, c.others)
		if err != nil {
			return env.Step{}, err
		}
		c.view = v
	}
	for j, p := range c.pcgs {
		p.Seed(seed, uint64(j))
	}
	st, err := c.view.Reset(seed)
	if err == nil && c.hold != nil {
		c.cur.keep(st)
	}
	return st, err
}

func (c *viewCopy) Step(a agent.RawAction) (env.Step, error) {
	if c.hold != nil {
		if st, ok := c.cur.held(*c.hold); ok {
			*c.span = 0
			if st.Truncated {
				c.frames.ended(c.i)
			}
			return st, nil
		}
	}
	st, err := c.view.Step(a)
	if err == nil {
		*c.span = int64(c.view.SpanTicks())
		if c.hold != nil {
			c.cur.keep(st)
			if st.Done() {
				c.frames.ended(c.i)
			}
		}
	}
	return st, err
}
