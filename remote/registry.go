package remote

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// RegisteredAgent returns an Agent that serves a policy registered in reg: the
// policy named policy ("" for the agent's default) of the agent agentName of the
// environment envName opened with config (nil for its defaults). The environment
// is built once, to learn the agent's spec.
//
// Each stream and each pooled worker gets a policy of its own (Agent.New), built by
// the registered factory with a generator seeded with (seed, k), k counting the
// policies built: a random policy draws reproducibly for a given order of callers.
func RegisteredAgent(reg *registry.Registry, envName string, config []byte, agentName, policy string, seed uint64) (Agent, error) {
	entry, err := reg.Lookup(envName)
	if err != nil {
		return Agent{}, err
	}
	f, err := entry.Open(config)
	if err != nil {
		return Agent{}, fmt.Errorf("%w for %s: %w", runners.ErrEnvConfig, envName, err)
	}
	m, err := f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return Agent{}, fmt.Errorf("%w: %s: %w", runners.ErrEnv, envName, err)
	}
	var a Agent
	found := false
	var names []string
	for _, s := range m.Agents() {
		names = append(names, s.Name)
		if s.Name == agentName {
			a.Spec, found = s, true
		}
	}
	if !found {
		return Agent{}, &registry.NameError{Kind: registry.ErrUnknownAgent, Name: agentName, Env: envName, Choices: names}
	}
	if policy == "" {
		ae, err := entry.Agent(agentName)
		if err != nil {
			return Agent{}, err
		}
		policy = ae.Default
	}
	pe, err := entry.Policy(agentName, policy)
	if err != nil {
		return Agent{}, err
	}
	var mu sync.Mutex
	k := uint64(0)
	a.New = func() (agent.Policy, error) {
		mu.Lock()
		rng := rand.New(rand.NewPCG(seed, k))
		k++
		mu.Unlock()
		return pe.New(f, rng)
	}
	return a, nil
}
