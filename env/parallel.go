package env

import (
	"fmt"
	"iter"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Parallel is a multi-agent environment whose agents act simultaneously, PettingZoo's
// parallel API: every live agent chooses an action from the same observation round, and
// one Step applies them all.
//
// An agent is live from its report with Start set until its report that is done. The
// actions a Step takes are positional, so that stepping allocates nothing: actions[i] is
// the action of the i-th live agent of the latest Round, the i-th of its reports that is
// not done (Round.Live lists them). A Round reports, after Reset, each agent that starts
// the episode (Start set); after Step, each agent that acted, with its reward and whether
// it is done, then each agent that joins in this round (Start set).
//
// Each report sets AgentID and Agent (a name from Agents; conventionally the id is
// "<name>_0", one sub-episode per episode); ParentID and SpanTicks are not used.
//
// Reset returns an error, as MultiAgent's does, when the episode cannot start; the
// Round is then empty and the caller must not step the environment until a Reset
// succeeds. Step returns an error, never panics, for a wrong number of actions or an
// action outside its agent's space, forbidden by its mask or rejected by the
// environment, and then leaves the environment as it was. Neither method blocks nor
// takes a context.Context, as with MultiAgent; a Parallel is not safe for concurrent
// use.
type Parallel interface {
	// Agents describes every agent the environment may report, in a fixed order.
	Agents() []Spec
	// Reset starts a new episode; the same seed gives the same episode.
	Reset(seed uint64) (Round, error)
	// Step applies one action per live agent, in the order of Round.Live.
	Step(actions []agent.RawAction) (Round, error)
	// Info describes the current state for humans and logs, or nil.
	Info() any
}

// Round is what a Parallel environment returns from Reset and Step. Its slices belong to
// the environment and stay valid until its next Step or Reset.
type Round struct {
	// Reports lists the agents of the round: see Parallel.
	Reports []Report
	// Over reports the end of the episode: no agent is live.
	Over bool
}

// Live yields the agents that act in the next Step, in the order Step takes their
// actions: the index into the actions and the agent's report.
func (r *Round) Live() iter.Seq2[int, *Report] {
	return func(yield func(int, *Report) bool) {
		n := 0
		for i := range r.Reports {
			if rep := &r.Reports[i]; !rep.Done() {
				if !yield(n, rep) {
					return
				}
				n++
			}
		}
	}
}

// Sequential presents a Parallel environment in the turn-taking form of MultiAgent, as
// PettingZoo's parallel_to_aec does: it asks each live agent in turn, in the order of
// Round.Live, for its action, keeps the actions, and steps the parallel environment when
// the last live agent's action is in. One parallel step is one tick.
//
// The Turns are:
//
//   - Reset: the parallel environment's first round, every starting agent with Start
//     set; Next is the first live agent.
//   - Step by an agent that is not the last live one: nothing happens in the
//     environment, and Tick does not advance. The Turn reports only the next live agent,
//     repeating the observation and mask of the latest round with Reward 0 and
//     SpanTicks 0 (and Start false), so that Turn.Acting works as with any MultiAgent. A
//     learner must not record a transition for such a report: it is recognised by
//     SpanTicks 0 without Start, or by a Turn whose Tick did not advance.
//   - Step by the last live agent: the parallel step. The Turn reports every agent of
//     the new round (every agent that acted, with its reward and end, and every agent
//     that joins), SpanTicks 1 for each report that is not a Start; Next is the first
//     live agent, and Over is set when none is left.
//
// Step checks the action before keeping it and returns a *StepError, leaving
// everything as it was: ErrNotReset, ErrEpisodeOver, ErrNotActing for an agent that
// is not the one asked, ErrOutsideSpace for an action outside the agent's action
// space, ErrInvalidAction for a Discrete action the agent's mask forbids, and
// ErrRejected, wrapping the parallel environment's
// error, when the parallel step fails (the last agent may then retry; the actions of the
// others are kept). Actions are copied, so a policy may reuse its buffers.
//
// The returned MultiAgent is not safe for concurrent use; its Unwrap method returns p.
// Stepping allocates nothing in steady state if p's Step does not.
func Sequential(p Parallel) MultiAgent {
	s := &sequential{p: p, specs: p.Agents()}
	s.byName = make(map[string]int, len(s.specs))
	for i, sp := range s.specs {
		s.byName[sp.Name] = i
	}
	return s
}

type sequential struct {
	p      Parallel
	specs  []Spec
	byName map[string]int

	started bool
	reports []Report // the latest round's reports with SpanTicks set: the round's Turn
	live    []int    // indices into reports of the live agents, in order
	pos     int      // the live agent asked now
	actions []agent.RawAction
	repeat  [1]Report
	tick    int
}

// Unwrap returns the parallel environment.
func (s *sequential) Unwrap() Parallel { return s.p }

func (s *sequential) Agents() []Spec { return s.p.Agents() }

func (s *sequential) Info() any { return s.p.Info() }

func (s *sequential) Reset(seed uint64) (Turn, error) {
	round, err := s.p.Reset(seed)
	if err != nil {
		return Turn{}, err
	}
	s.started, s.tick = true, 0
	return s.take(round), nil
}

// take makes round the latest and returns its Turn.
func (s *sequential) take(round Round) Turn {
	s.reports = append(s.reports[:0], round.Reports...)
	s.live = s.live[:0]
	for i := range s.reports {
		r := &s.reports[i]
		r.SpanTicks = 0
		if !r.Start {
			r.SpanTicks = 1
		}
		if !r.Done() {
			s.live = append(s.live, i)
		}
	}
	for len(s.actions) < len(s.live) {
		s.actions = append(s.actions, agent.RawAction{})
	}
	s.pos = 0
	t := Turn{Reports: s.reports, Over: len(s.live) == 0, Tick: s.tick}
	if !t.Over {
		t.Next = s.reports[s.live[0]].AgentID
	}
	return t
}

func (s *sequential) Step(id string, a agent.RawAction) (Turn, error) {
	switch {
	case !s.started:
		return Turn{}, s.fail(id, a, ErrNotReset, nil)
	case len(s.live) == 0:
		return Turn{}, s.fail(id, a, ErrEpisodeOver, nil)
	}
	rep := &s.reports[s.live[s.pos]]
	if id != rep.AgentID {
		return Turn{}, s.fail(id, a, ErrNotActing, nil)
	}
	if i, ok := s.byName[rep.Agent]; ok {
		if err := a.Check(s.specs[i].ActionSpace); err != nil {
			return Turn{}, s.fail(id, a, ErrOutsideSpace, err)
		}
		if err := checkMask(s.specs[i], rep.Mask, a); err != nil {
			return Turn{}, s.fail(id, a, ErrInvalidAction, err)
		}
	}
	// Keep a copy: the caller's slices may be a policy's buffers.
	k := &s.actions[s.pos]
	k.Int = a.Int
	k.Ints = cloneInto(k.Ints, a.Ints)
	k.Floats = cloneInto(k.Floats, a.Floats)
	if s.pos < len(s.live)-1 {
		s.pos++
		next := s.reports[s.live[s.pos]]
		next.Reward, next.Terminated, next.Truncated, next.Start, next.SpanTicks = 0, false, false, false, 0
		s.repeat[0] = next
		return Turn{Reports: s.repeat[:], Next: next.AgentID, Tick: s.tick}, nil
	}
	round, err := s.p.Step(s.actions[:len(s.live)])
	if err != nil {
		return Turn{}, s.fail(id, a, ErrRejected, err)
	}
	s.tick++
	return s.take(round), nil
}

// fail builds the error of a rejected step; nothing changes.
func (s *sequential) fail(id string, a agent.RawAction, kind, cause error) error {
	acting := ""
	if s.started && len(s.live) > 0 {
		acting = s.reports[s.live[s.pos]].AgentID
	}
	a.Ints, a.Floats = cloneInto(nil, a.Ints), cloneInto(nil, a.Floats)
	return &StepError{AgentID: id, Acting: acting, Action: a, Kind: kind, Err: cause}
}

// checkMask reports an error when the mask of an agent with a Discrete action space
// forbids a; mask[i] refers to the action Start+i.
func checkMask(sp Spec, mask []bool, a agent.RawAction) error {
	if sp.MaskLen == 0 || mask == nil {
		return nil
	}
	var start int64
	switch d := sp.ActionSpace.(type) {
	case spaces.Discrete:
		start = d.Start
	case *spaces.Discrete:
		start = d.Start
	default:
		return nil // masks are for Discrete action spaces only
	}
	if i := a.Int - start; i >= 0 && i < int64(len(mask)) && !mask[i] {
		return fmt.Errorf("the action mask forbids action %d", a.Int)
	}
	return nil
}

// cloneInto copies src into dst's storage, growing it when needed; nil stays nil.
func cloneInto[T any](dst, src []T) []T {
	if src == nil {
		return nil
	}
	return append(dst[:0], src...)
}
