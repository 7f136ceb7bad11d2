package cli

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/registry"
	"github.com/spf13/cobra"
)

// environments is what the command knows of the environments it runs: the registry
// the shipped environments (envs/) register into, whose entries also say how to show their actions and
// states to people (registry.Look), and the program's name. newEnvironments builds it;
// tests build their own. It is passed down to every command, never kept in a global.
type environments struct {
	reg *registry.Registry
	// prog heads the help and the error messages: "baton", or a program of the user's.
	prog string
	// shipped: the registry is the shipped catalog's (no register function given).
	shipped bool
}

// newEnvironments registers the environments of the register functions, in order, or
// with none those baton ships (catalog.New): the maze, the flat maze, the cart-pole,
// the web tester and rock-paper-scissors.
func newEnvironments(prog string, register []func(*registry.Registry) error) (*environments, error) {
	if len(register) == 0 {
		reg, err := catalog.New()
		if err != nil {
			return nil, err
		}
		return &environments{reg: reg, prog: prog, shipped: true}, nil
	}
	reg := registry.New()
	for _, r := range register {
		if r == nil {
			return nil, errors.New("a register function is nil")
		}
		if err := r(reg); err != nil {
			return nil, err
		}
	}
	return &environments{reg: reg, prog: prog}, nil
}

// names returns the registered environments' names, in registration order.
func (e *environments) names() []string { return e.reg.Names() }

// lookup returns the entry of the named environment; an unknown name is a usage error
// naming the choices.
func (e *environments) lookup(name string) (registry.Entry, error) {
	entry, err := e.reg.Lookup(name)
	if err != nil {
		return registry.Entry{}, usageErr(err)
	}
	return entry, nil
}

// opened is an environment opened for a command: its entry, the factory of its
// configuration, and one environment built from it.
type opened struct {
	entry   registry.Entry
	config  []byte
	factory registry.Factory
	env     env.MultiAgent
	agents  []env.Spec
}

// open opens the named environment with a configuration (nil: the defaults) and builds
// one environment with the tick limit. A configuration the environment rejects is a
// usage error that lists the fields it takes.
func (e *environments) open(name string, config []byte, maxTicks int) (*opened, error) {
	entry, err := e.lookup(name)
	if err != nil {
		return nil, err
	}
	f, err := entry.Open(config)
	if err != nil {
		return nil, usagef("bad --env-config for %s: %v (%s)", name, err, configHelp(entry))
	}
	if f == nil {
		return nil, fmt.Errorf("%s: the registry entry opened no factory", name)
	}
	m, err := f.NewEnv(registry.EnvOptions{MaxTicks: maxTicks})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &opened{entry: entry, config: config, factory: f, env: m, agents: m.Agents()}, nil
}

// agent is the spec of the agent named name, nil if the environment has none.
func (o *opened) agent(name string) *env.Spec {
	for i := range o.agents {
		if o.agents[i].Name == name {
			return &o.agents[i]
		}
	}
	return nil
}

// agentNames returns the names of the opened environment's agents, in its order.
func (o *opened) agentNames() []string {
	names := make([]string, len(o.agents))
	for i, a := range o.agents {
		names[i] = a.Name
	}
	return names
}

// choosePolicies reads --policy AGENT=POLICY flags against the agents of o and returns
// the policy of every agent, in the environment's order: the one a flag names, or the
// entry's default. Every problem with the flags is a usage error naming the choices.
func choosePolicies(o *opened, flags []string) ([]string, error) {
	names := o.agentNames()
	chosen := make(map[string]string, len(names))
	for _, p := range flags {
		name, policy, ok := strings.Cut(p, "=")
		if !ok || name == "" || policy == "" {
			return nil, usagef("--policy %q: want AGENT=POLICY (agents of %s: %s)", p, o.entry.Name, strings.Join(names, ", "))
		}
		if !slices.Contains(names, name) {
			return nil, usageErr(&registry.NameError{Kind: registry.ErrUnknownAgent, Name: name, Env: o.entry.Name, Choices: names}, "--policy "+p)
		}
		if _, err := o.entry.Policy(name, policy); err != nil {
			return nil, usageErr(err, "--policy "+p)
		}
		if prev, ok := chosen[name]; ok && prev != policy {
			return nil, usagef("--policy gives agent %q two policies, %s and %s (choose one)", name, prev, policy)
		}
		chosen[name] = policy
	}
	policies := make([]string, len(names))
	for i, name := range names {
		if p, ok := chosen[name]; ok {
			policies[i] = p
			continue
		}
		a, err := o.entry.Agent(name)
		if err != nil {
			return nil, fmt.Errorf("%s: agent %s has no registered policy", o.entry.Name, name)
		}
		policies[i] = a.Default
	}
	return policies, nil
}

// readConfig reads --env-config: JSON, or @FILE for the contents of a file. "" means
// the environment's defaults.
func readConfig(flag string) ([]byte, error) {
	path, ok := strings.CutPrefix(flag, "@")
	if !ok {
		if flag == "" {
			return nil, nil
		}
		return []byte(flag), nil
	}
	data, err := registry.ReadConfigFile("--env-config", path)
	if err != nil {
		return nil, usageErr(err)
	}
	return data, nil
}

// configHelp says what --env-config accepts for an environment.
func configHelp(e registry.Entry) string {
	if e.Config == nil {
		return "it takes no configuration"
	}
	return "fields: " + jsonFields(reflect.TypeOf(e.Config))
}

// envHelp lists, for help, each environment with its policies and configuration.
func envHelp(envs *environments) string {
	var b strings.Builder
	for e := range envs.reg.All() {
		fmt.Fprintf(&b, "\n  %s: %s\n", e.Name, e.Description)
		for _, a := range e.Agents {
			fmt.Fprintf(&b, "    --policy %s=%s (default %s)\n", a.Name, strings.Join(a.PolicyNames(), "|"), a.Default)
		}
		fmt.Fprintf(&b, "    --env-config %s\n", configHelp(e))
	}
	return b.String()
}

// oneEnv checks that a command was given exactly one registered environment.
func oneEnv(envs *environments, cmd string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("%s needs an environment (%s)", cmd, choices(envs.names()))
		case len(args) > 1:
			return usagef("%s takes one environment, got %q (%s)", cmd, args, choices(envs.names()))
		}
		_, err := envs.lookup(args[0])
		return err
	}
}

// usageErr makes a usage error of err, prefixed with context when given. A
// *registry.NameError keeps its text, which names the choices, without the package
// prefix.
func usageErr(err error, context ...string) error {
	msg := err.Error()
	_, named := errors.AsType[*registry.NameError](err)
	_, file := errors.AsType[*registry.FileError](err)
	if named || file {
		msg = strings.TrimPrefix(msg, "registry: ")
	}
	if len(context) > 0 {
		msg = strings.Join(context, ": ") + ": " + msg
	}
	return &usageError{msg: msg, err: err}
}

// jsonFields lists the JSON field names of a struct type, nested structs in braces:
// "map, generate{rows, cols}". It is for error messages, so that the list of accepted
// fields never goes stale.
func jsonFields(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return t.String()
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
