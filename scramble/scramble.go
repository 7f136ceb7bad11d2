// Package scramble registers scrambled variants of environments (CommAI's scrambled
// mode): the same environment with each agent's discrete actions and observation
// features permuted by a seed (env.Scramble), so that a learner cannot rely on what a
// slot means.
//
// A scrambled entry is named after its environment with the suffix "-scrambled"
// ("maze-scrambled") and takes the environment's configuration with one more field,
// "scramble": the seed of the permutations (0 when absent). Everything that opens
// registry entries opens it: the command line (baton run maze-scrambled --config
// '{"scramble": 7}'), the servers, and Python through the fast lane
// (baton.vector.make("maze-scrambled", config={"scramble": 7})). An activity log
// records the configuration, the seed with it, in its metadata (baton.env_config), and
// env.Scrambled's Info holds the permutations.
//
// The entry keeps its environment's success rule; its agents get a "random" policy
// (uniform over the allowed actions) and nothing else, since a scripted policy reads
// slots whose meaning the scramble hides; it has no pictures or action names.
package scramble

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
)

// Suffix ends the name of a scrambled entry.
const Suffix = "-scrambled"

// ConfigKey is the field of the configuration that holds the seed.
const ConfigKey = "scramble"

// Entry returns the scrambled variant of e (see the package documentation).
func Entry(e registry.Entry) registry.Entry {
	out := registry.Entry{
		Name:        e.Name + Suffix,
		Description: e.Description + ` (scrambled: actions and observation features permuted by the config's "scramble" seed)`,
		Config:      e.Config,
		Limits:      e.Limits,
		Success:     e.Success,
	}
	inner := e.Open
	out.Open = func(config []byte) (registry.Factory, error) {
		seed, rest, err := split(config)
		if err != nil {
			return nil, err
		}
		f, err := inner(rest)
		if err != nil {
			return nil, err
		}
		return &factory{inner: f, seed: seed}, nil
	}
	if e.OpenRemote != nil {
		innerRemote := e.OpenRemote
		out.OpenRemote = func(config []byte, o registry.Remote) (registry.Factory, error) {
			seed, rest, err := split(config)
			if err != nil {
				return nil, err
			}
			f, err := innerRemote(rest, o)
			if err != nil {
				return nil, err
			}
			return &factory{inner: f, seed: seed}, nil
		}
	}
	for _, a := range e.Agents {
		out.Agents = append(out.Agents, registry.AgentEntry{Name: a.Name, Default: "random", Policies: []registry.PolicyEntry{
			{Name: "random", Description: "uniform over the allowed actions", New: randomPolicy(a.Name)},
		}})
	}
	return out
}

// Register returns a register function that adds the scrambled variant of each named
// entry of the registry it is given (registered before it).
func Register(names ...string) func(*registry.Registry) error {
	return func(reg *registry.Registry) error {
		for _, name := range names {
			e, err := reg.Lookup(name)
			if err != nil {
				return fmt.Errorf("scramble: %w", err)
			}
			if err := reg.Register(Entry(e)); err != nil {
				return err
			}
		}
		return nil
	}
}

// split takes the seed out of a configuration and returns the rest, nil when nothing
// is left.
func split(config []byte) (seed uint64, rest []byte, err error) {
	config = bytes.TrimSpace(config)
	if len(config) == 0 || bytes.Equal(config, []byte("null")) {
		return 0, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return 0, nil, fmt.Errorf("scramble: the configuration is not a JSON object: %w", err)
	}
	if raw, ok := fields[ConfigKey]; ok {
		if err := json.Unmarshal(raw, &seed); err != nil {
			return 0, nil, fmt.Errorf("scramble: %q is %s: want a seed, an integer from 0 to 2^64-1", ConfigKey, raw)
		}
		delete(fields, ConfigKey)
	}
	if len(fields) == 0 {
		return seed, nil, nil
	}
	rest, err = json.Marshal(fields)
	return seed, rest, err
}

// factory builds scrambled environments of an inner factory.
type factory struct {
	inner registry.Factory
	seed  uint64

	once  sync.Once
	specs []env.Spec
	err   error
}

// NewEnv builds an inner environment and scrambles it.
func (f *factory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	m, err := f.inner.NewEnv(o)
	if err != nil {
		return nil, err
	}
	return env.Scramble(m, f.seed)
}

// agents returns the scrambled specs, from an environment built once.
func (f *factory) agents() ([]env.Spec, error) {
	f.once.Do(func() {
		m, err := f.NewEnv(registry.EnvOptions{})
		if err != nil {
			f.err = err
			return
		}
		f.specs = m.Agents()
	})
	return f.specs, f.err
}

// randomPolicy is uniform over the allowed actions of the named agent.
func randomPolicy(name string) registry.PolicyFactory {
	return func(f registry.Factory, rng *rand.Rand) (agent.Policy, error) {
		sf, ok := f.(*factory)
		if !ok {
			return nil, fmt.Errorf("scramble: the random %s policy needs a scrambled factory, not %T", name, f)
		}
		specs, err := sf.agents()
		if err != nil {
			return nil, err
		}
		for _, s := range specs {
			if s.Name == name {
				return agent.Random(s.ActionSpace, rng)
			}
		}
		return nil, fmt.Errorf("scramble: no agent %s in this configuration", name)
	}
}
