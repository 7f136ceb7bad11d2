package registry

import (
	"slices"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// SingleAgent presents a single-agent environment as a MultiAgent with one agent, named
// as e.Spec names it and always of id "<name>_0": each episode is one sub-episode, so a
// single-agent environment can be registered and run like any other. Reports carry
// SpanTicks 1 and the agent's Clock (Steps and Tick both count the episode's steps).
//
// Step returns e's errors as they are, and an *env.StepError wrapping env.ErrNotActing
// for another id or env.ErrEpisodeOver after the episode ended. Reset returns e's Reset
// error as it is, with an empty Turn; Step then fails with env.ErrNotReset until a Reset
// succeeds. The adapter allocates
// nothing per step and is not safe for concurrent use; Unwrap returns e.
func SingleAgent(e env.Env) env.MultiAgent {
	spec := e.Spec()
	return &single{e: e, spec: spec, id: spec.Name + "_0"}
}

type single struct {
	e      env.Env
	spec   env.Spec
	id     string
	rep    [1]env.Report
	tick   int
	live   bool
	failed bool // the latest Reset failed
}

// Unwrap returns the single-agent environment.
func (s *single) Unwrap() env.Env { return s.e }

func (s *single) Agents() []env.Spec { return []env.Spec{s.spec} }

func (s *single) Info() any { return s.e.Info() }

func (s *single) Reset(seed uint64) (env.Turn, error) {
	st, err := s.e.Reset(seed)
	s.tick, s.failed, s.live = 0, err != nil, err == nil
	if err != nil {
		return env.Turn{}, err
	}
	s.rep[0] = env.Report{AgentID: s.id, Agent: s.spec.Name, Obs: st.Obs, Mask: st.Mask, Start: true}
	return env.Turn{Reports: s.rep[:], Next: s.id}, nil
}

func (s *single) Step(id string, a agent.RawAction) (env.Turn, error) {
	switch {
	case !s.live:
		kind := env.ErrEpisodeOver
		if s.failed {
			kind = env.ErrNotReset
		}
		return env.Turn{}, &env.StepError{AgentID: id, Action: cloneAction(a), Kind: kind}
	case id != s.id:
		return env.Turn{}, &env.StepError{AgentID: id, Acting: s.id, Action: cloneAction(a), Kind: env.ErrNotActing}
	}
	st, err := s.e.Step(a)
	if err != nil {
		return env.Turn{}, err
	}
	s.tick++
	s.live = !st.Done()
	s.rep[0] = env.Report{
		AgentID:    s.id,
		Agent:      s.spec.Name,
		Obs:        st.Obs,
		Mask:       st.Mask,
		Reward:     st.Reward,
		Terminated: st.Terminated,
		Truncated:  st.Truncated,
		SpanTicks:  1,
		Clock:      agent.Clock{Steps: s.tick, Tick: s.tick},
	}
	t := env.Turn{Reports: s.rep[:], Over: !s.live, Tick: s.tick}
	if s.live {
		t.Next = s.id
	}
	return t, nil
}

func cloneAction(a agent.RawAction) agent.RawAction {
	a.Ints, a.Floats = slices.Clone(a.Ints), slices.Clone(a.Floats)
	return a
}
