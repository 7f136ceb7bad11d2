package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/models/onnx"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
)

// modelPrefix starts a --policy that names a trained model: model:NAME[@VERSION] in
// the model registry, or model:FILE.onnx.
const modelPrefix = "model:"

// modelPolicies are the agents of a run played by ONNX policies.
type modelPolicies struct {
	policies  map[string]agent.Policy   // by agent name
	followers map[string]*onnx.Follower // by agent name, with --follow-models
	refs      map[string]string         // what --policy named, for the summary
}

// actor returns the actor of an agent played by a model.
func (mp *modelPolicies) actor(name string) (runners.Actor, bool) {
	if f, ok := mp.followers[name]; ok {
		return runners.PerTrial(func(*rand.Rand) (agent.Policy, error) { return f.Policy(), nil }), true
	}
	if p, ok := mp.policies[name]; ok {
		return runners.Value(p), true
	}
	return runners.Actor{}, false
}

func (mp *modelPolicies) close() {
	for _, f := range mp.followers {
		_ = f.Close()
	}
}

// followPoll is how often a followed model's directory is looked at for versions
// that other processes put.
const followPoll = time.Second

// loadModelPolicies takes the --policy AGENT=model:... flags out of flags, loads each
// model (from the registry under dir, "" for the default, or from a file), checks it
// against the agent's spaces, and returns the other flags.
//
// With follow, a model named NAME or NAME@latest is followed: each trial takes the
// newest version between episodes (onnx.Follow).
func loadModelPolicies(ctx context.Context, o *opened, flags []string, dir string, follow bool, opts ...onnx.Option) (_ []string, _ *modelPolicies, err error) {
	mp := &modelPolicies{policies: map[string]agent.Policy{}, followers: map[string]*onnx.Follower{}, refs: map[string]string{}}
	defer func() {
		if err != nil {
			mp.close()
		}
	}()
	var local []string
	var store *models.Dir
	for _, p := range flags {
		name, target, ok := strings.Cut(p, "=")
		if !ok || !strings.HasPrefix(target, modelPrefix) {
			local = append(local, p)
			continue
		}
		spec := o.agent(name)
		if spec == nil {
			return nil, nil, usageErr(&registry.NameError{Kind: registry.ErrUnknownAgent, Name: name, Env: o.entry.Name, Choices: o.agentNames()}, "--policy "+p)
		}
		if _, dup := mp.policies[name]; dup {
			return nil, nil, usagef("--policy gives agent %q two models", name)
		}
		ref := strings.TrimPrefix(target, modelPrefix)
		var (
			data []byte
			meta *models.Meta
			err  error
		)
		if strings.HasSuffix(ref, ".onnx") || strings.ContainsRune(ref, os.PathSeparator) {
			if data, err = os.ReadFile(ref); err != nil {
				return nil, nil, usageErr(err, "--policy "+p)
			}
		} else {
			mname, version, err := models.ParseRef(ref)
			if err != nil {
				return nil, nil, usageErr(err, "--policy "+p)
			}
			if store == nil {
				if dir == "" {
					if dir, err = models.DefaultDir(); err != nil {
						return nil, nil, err
					}
				}
				if store, err = models.OpenDir(dir); err != nil {
					return nil, nil, err
				}
			}
			if follow && version == models.Latest {
				f, err := onnx.Follow(ctx, models.NewRegistry(store, models.WithPoll(followPoll)), mname, func(m models.Meta) error {
					return m.CheckSpaces(name, spec.ObservationSpace, spec.ActionSpace)
				}, opts...)
				if err != nil {
					if errors.Is(err, models.ErrNotFound) || errors.Is(err, models.ErrSpaces) || errors.Is(err, onnx.ErrModel) {
						return nil, nil, usageErr(err, "--policy "+p)
					}
					return nil, nil, fmt.Errorf("--policy %s: %w", p, err)
				}
				mp.followers[name] = f
				mp.policies[name] = f.Policy()
				mp.refs[name] = modelPrefix + mname + "@latest"
				continue
			}
			m, d, err := store.Get(ctx, mname, version)
			if err != nil {
				if errors.Is(err, models.ErrNotFound) {
					return nil, nil, usageErr(err, "--policy "+p)
				}
				return nil, nil, fmt.Errorf("--policy %s: %w", p, err)
			}
			if err := m.CheckSpaces(name, spec.ObservationSpace, spec.ActionSpace); err != nil {
				return nil, nil, usageErr(err, "--policy "+p)
			}
			data, meta = d, &m
		}
		pol, err := onnx.New(data, opts...)
		if err != nil {
			return nil, nil, usageErr(err, "--policy "+p)
		}
		if err := checkGraph(pol, name, spec); err != nil {
			return nil, nil, usageErr(err, "--policy "+p)
		}
		mp.policies[name] = pol
		mp.refs[name] = target
		if meta != nil {
			mp.refs[name] = modelPrefix + meta.Ref()
		}
	}
	for _, p := range local {
		if name, _, _ := strings.Cut(p, "="); mp.policies[name] != nil {
			return nil, nil, usagef("--policy gives agent %q a model and %s (choose one)", name, p)
		}
	}
	return local, mp, nil
}

// checkGraph checks a graph's input and output sizes against the agent's spaces.
func checkGraph(p *onnx.Policy, agentName string, spec *env.Spec) error {
	d, ok := spec.ActionSpace.(spaces.Discrete)
	if !ok {
		return fmt.Errorf("agent %q has a %v action space: ONNX policies play Discrete ones", agentName, spec.ActionSpace.Kind())
	}
	if obs := spec.ObservationSpace.FlatDim(); p.ObsDim() != obs || p.Actions() != int(d.N) {
		return fmt.Errorf("the graph takes %d observation values and gives %d logits; agent %q has %d and %d actions",
			p.ObsDim(), p.Actions(), agentName, obs, d.N)
	}
	return nil
}
