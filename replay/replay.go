package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// Run re-runs each trial of the log in dir from its logged environment name,
// configuration, seed, episodes and tick limit, each agent playing the actions the log
// holds for it in order (the n-th action of agent id I in episode e is the action of
// the n-th row of I in e that is not a Start row), and compares every step with the
// log: observation, action mask, the environment's reward, the end flags, the span
// and the order of the reports. It returns every difference; a deterministic
// environment replayed from an intact log has none. Rewards from other sources
// (actors, a controller, retroactive ones) are not replayed.
//
// The trials run in one campaign of one worker, whose trials are the log's (in the
// order datalog.Compare gives: trials with an end record first, in the order they
// started, then those without); the comparison, the report and its errors are
// datalog.Compare's. Run fails for a log it cannot read (datalog.ErrCorrupt,
// datalog.ErrNotLog, each naming the file), for an environment or configuration that
// reg cannot run (datalog.ErrReplay), and for a log whose steps name trials that its
// trials table lacks, or that has steps and no trials table (datalog.ErrUnlisted,
// with the report of what could be replayed).
func Run(ctx context.Context, dir string, reg *registry.Registry, opts ...datalog.ReplayOption) (*datalog.ReplayReport, error) {
	return datalog.Compare(ctx, dir, func(ctx context.Context, p *datalog.Playback) error {
		return play(ctx, reg, p)
	}, opts...)
}

// play runs the trials of p in a campaign of one worker.
func play(ctx context.Context, reg *registry.Registry, p *datalog.Playback) error {
	trials := p.Trials()
	for _, t := range trials {
		if _, err := reg.Lookup(t.Env); err != nil {
			return fmt.Errorf("%w: trial %s: %w", datalog.ErrReplay, t.ID, err)
		}
	}
	s := &specs{p: p, policies: map[string]*policy{}}
	pre := func(_ context.Context, k int, spec *runners.Spec) error {
		p.Begin(k)
		*spec = s.spec(trials[k])
		return nil
	}
	c, err := runners.NewCampaign(reg, s.spec(trials[0]), runners.WithTrials(len(trials)), runners.WithWorkers(1),
		runners.WithPreTrial(pre), runners.WithSinks(p))
	if err != nil {
		return fmt.Errorf("%w: trial %s: %w", datalog.ErrReplay, trials[0].ID, err)
	}
	_, err = c.Run(ctx)
	return err
}

// specs makes the specs that replay the log's trials.
type specs struct {
	p        *datalog.Playback
	policies map[string]*policy
	actors   map[string]runners.Actor
}

// spec is the spec that replays trial t.
func (s *specs) spec(t datalog.Trial) runners.Spec {
	// The trials of a log mostly have the same agents: their actors are made once.
	actors := s.actors
	same := len(actors) == len(t.Agents)
	for _, a := range t.Agents {
		if _, ok := actors[a.Name]; !ok {
			same = false
		}
	}
	if !same {
		actors = make(map[string]runners.Actor, len(t.Agents))
		for _, a := range t.Agents {
			p := s.policies[a.Name]
			if p == nil {
				p = &policy{p: s.p, name: a.Name}
				s.policies[a.Name] = p
			}
			actors[a.Name] = runners.Value(p)
		}
		s.actors = actors
	}
	return runners.Spec{ID: t.ID, Env: t.Env, Config: t.Config, Seed: t.Seed, Episodes: t.Episodes, MaxTicks: t.MaxTicks, Actors: actors, Task: t.Task}
}

// policy plays an agent's logged actions in the trial replayed now. It is a
// runners.Interactor, to learn the episode, the tick and the agent id it acts for.
type policy struct {
	p    *datalog.Playback
	name string
}

func (p *policy) Act(context.Context, []float32, []bool) (agent.RawAction, error) {
	return agent.RawAction{}, errors.New("replay: the replay policy acts only through Interact")
}

func (p *policy) Interact(_ context.Context, x *runners.Exchange, _ []float32, _ []bool) (agent.RawAction, error) {
	return p.p.Action(p.name, x.Episode(), x.Tick(), x.AgentID())
}

var _ runners.Interactor = (*policy)(nil)
