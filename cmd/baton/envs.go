package main

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// table lists the environments baton can play, in the order help shows them. It is a
// value built by environments and passed down; tests build their own.
type table []environment

// lookup returns the environment with the given name.
func (t table) lookup(name string) (environment, bool) {
	for _, e := range t {
		if e.name == name {
			return e, true
		}
	}
	return environment{}, false
}

func (t table) names() []string {
	names := make([]string, len(t))
	for i, e := range t {
		names[i] = e.name
	}
	return names
}

// environment is an entry of the table.
type environment struct {
	name    string
	summary string
	// configFields describes what --env-config accepts, for messages.
	configFields string
	// open parses a JSON configuration ("" or whitespace means the defaults) and builds
	// a runtime with its policies. A *configError means the configuration is bad.
	open func(config []byte, cfg hrl.Config) (*episode, error)
}

// configError is an --env-config the environment rejects.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// stepper is the type-erased view of an *hrl.Runtime that play needs.
type stepper interface {
	Reset(seed uint64) hrl.Result
	Step(id string, raw agent.RawAction) (hrl.Result, error)
	Info() any
	Agents() []hrl.AgentSpec
}

// episode is an opened environment: its runtime, the policies each agent can play, and
// how to describe actions and states for people.
type episode struct {
	rt stepper
	// agents lists, in the environment's agent order, the policies of each agent.
	agents []agentPolicies
	// describe formats the runtime's Info for text output.
	describe func(info any) string
	// action names a raw action of an agent for text output; nil means raw.String().
	action func(agentName string, raw agent.RawAction) string
}

// agentPolicies is what an agent can play.
type agentPolicies struct {
	agent    string
	fallback string // the policy played when --policy names none
	policies map[string]policyFactory
}

// policyFactory builds a policy; rng is the agent's own seeded generator.
type policyFactory func(rng *rand.Rand) (agent.Policy, error)

// randomPolicy draws uniformly from an action space, honouring the action mask.
func randomPolicy(space spaces.Space) policyFactory {
	return func(rng *rand.Rand) (agent.Policy, error) { return agent.Random(space, rng) }
}

// fixed plays a policy that needs no generator.
func fixed(p agent.Policy) policyFactory {
	return func(*rand.Rand) (agent.Policy, error) { return p, nil }
}

// environments returns the table of environments baton ships.
func environments() table {
	return table{
		{
			name:         "maze",
			summary:      "the reference maze: a strategy agent picks directions, a motion agent walks them",
			configFields: "fields: " + jsonFields(reflect.TypeFor[maze.Config]()),
			open:         openMaze,
		},
	}
}

func openMaze(data []byte, cfg hrl.Config) (*episode, error) {
	mc, err := maze.ParseConfig(data)
	if err != nil {
		return nil, &configError{err}
	}
	env, err := maze.NewEnv(mc)
	if err != nil {
		return nil, &configError{err}
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](env), cfg)
	if err != nil {
		return nil, err
	}
	ep := &episode{
		rt: rt,
		describe: func(info any) string {
			if in, ok := info.(maze.Info); ok {
				return fmt.Sprintf("[%d %d] %s", in.Position[0], in.Position[1], in.Heading)
			}
			return fmt.Sprint(info)
		},
		action: func(name string, raw agent.RawAction) string {
			switch name {
			case maze.StrategyName:
				return maze.Direction(raw.Int).String()
			case maze.MotionName:
				return maze.Move(raw.Int).String()
			}
			return raw.String()
		},
	}
	for _, spec := range rt.Agents() {
		switch spec.Name {
		case maze.StrategyName:
			ep.agents = append(ep.agents, agentPolicies{agent: spec.Name, fallback: "oracle", policies: map[string]policyFactory{
				"oracle": fixed(maze.NewOracle(env.Maze())),
				"random": randomPolicy(spec.ActionSpace),
			}})
		case maze.MotionName:
			ep.agents = append(ep.agents, agentPolicies{agent: spec.Name, fallback: "random", policies: map[string]policyFactory{
				"random":  randomPolicy(spec.ActionSpace),
				"forward": fixed(maze.AlwaysForward()),
			}})
		default:
			return nil, fmt.Errorf("maze: unexpected agent %q", spec.Name)
		}
	}
	return ep, nil
}

// jsonFields lists the JSON field names of a struct type, nested structs in braces:
// "map, generate{rows, cols}". It is for error messages, so that the list of accepted
// fields never goes stale.
func jsonFields(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			name += "{" + jsonFields(ft) + "}"
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}
