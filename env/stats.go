package env

import "github.com/batonrl/baton/agent"

// Episode sums up a finished episode (or sub-episode). Its JSON form has Gymnasium's
// RecordEpisodeStatistics keys: {"r": return, "l": length, ...}.
type Episode struct {
	// Return is the sum of the rewards.
	Return float64 `json:"r"`
	// Length counts the steps (the agent's scored decisions, in a multi-agent episode).
	Length int `json:"l"`
	// Terminated and Truncated tell how it ended.
	Terminated bool `json:"terminated"`
	Truncated  bool `json:"truncated"`
}

// InfoKeyEpisode is the Info key of the statistics of an episode that just ended.
const InfoKeyEpisode = "episode"

// EpisodeStats records the return and length of e's episodes, as Gymnasium's
// RecordEpisodeStatistics does. An episode that a Reset cuts short is not recorded.
// It keeps e's error semantics: errors from e are returned as they are, and a failed
// step is not counted. Step allocates nothing.
func EpisodeStats(e Env) *Stats {
	return &Stats{e: e}
}

// Stats is the Env that EpisodeStats returns. Not safe for concurrent use, including its
// accessors while another goroutine steps it.
type Stats struct {
	e        Env
	cur      Episode
	last     Episode
	episodes int
	steps    int
	ended    bool // the latest Step ended an episode
}

// Unwrap returns the inner environment.
func (s *Stats) Unwrap() Env { return s.e }

// Spec describes the inner environment's agent.
func (s *Stats) Spec() Spec { return s.e.Spec() }

// Reset starts an episode of the inner environment.
func (s *Stats) Reset(seed uint64) (Step, error) {
	st, err := s.e.Reset(seed)
	if err != nil {
		return st, err
	}
	s.cur, s.ended = Episode{}, false
	return st, nil
}

// Step steps the inner environment and records the step.
func (s *Stats) Step(a agent.RawAction) (Step, error) {
	st, err := s.e.Step(a)
	if err != nil {
		return st, err
	}
	s.steps++
	s.cur.Return += st.Reward
	s.cur.Length++
	s.ended = st.Done()
	if s.ended {
		s.cur.Terminated, s.cur.Truncated = st.Terminated, st.Truncated
		s.last = s.cur
		s.episodes++
		s.cur = Episode{}
	}
	return st, nil
}

// Info returns the inner Info (see InfoKeyEnv); when the latest Step ended an episode, a
// map that also holds its Episode under InfoKeyEpisode.
func (s *Stats) Info() any {
	inner := s.e.Info()
	if !s.ended {
		return inner
	}
	info := infoMap(inner)
	info[InfoKeyEpisode] = s.last
	return info
}

// Last returns the statistics of the last finished episode; the zero Episode before any.
func (s *Stats) Last() Episode { return s.last }

// Current returns the statistics of the episode in progress so far.
func (s *Stats) Current() Episode { return s.cur }

// Episodes counts the finished episodes.
func (s *Stats) Episodes() int { return s.episodes }

// Steps counts every successful Step, in any episode.
func (s *Stats) Steps() int { return s.steps }

// AgentStats sums up the sub-episodes of one agent (by name) in a MultiStats.
type AgentStats struct {
	// Episodes counts its finished sub-episodes.
	Episodes int
	// Steps counts its scored decisions, in any sub-episode.
	Steps int
	// Last is its last finished sub-episode, and LastID that sub-episode's agent id.
	Last   Episode
	LastID string
}

// Ended is a sub-episode that ended in the latest step of a MultiStats.
type Ended struct {
	AgentID, Agent string
	Episode
}

// EpisodeStatsMulti records, for m, each agent's sub-episodes (per agent id: return and
// length of each sub-episode when it ends; per agent name: running counts and the last
// sub-episode) and the number and length in ticks of whole episodes.
//
// A sub-episode runs from an agent id's report with Start set to its report that is
// done; its return sums the rewards of its reports, its length counts the reports that
// score a decision (SpanTicks above 0: not a Start, nor a repeated observation of
// Sequential). It keeps m's error semantics: errors are returned as they are and a failed
// step changes nothing. Step allocates nothing in steady state.
func EpisodeStatsMulti(m MultiAgent) *MultiStats {
	s := &MultiStats{m: m, byName: map[string]*AgentStats{}}
	for _, sp := range m.Agents() {
		s.byName[sp.Name] = &AgentStats{}
	}
	return s
}

// MultiStats is the MultiAgent that EpisodeStatsMulti returns. Not safe for concurrent
// use, including its accessors while another goroutine steps it.
type MultiStats struct {
	m        MultiAgent
	byName   map[string]*AgentStats
	running  []Ended // sub-episodes in progress
	ended    []Ended // sub-episodes that ended in the latest step
	episodes int
	ticks    int
	lastLen  int
	lastTick int // the Tick of the latest Turn
}

// Unwrap returns the inner environment.
func (s *MultiStats) Unwrap() MultiAgent { return s.m }

// Agents describes the inner environment's agents.
func (s *MultiStats) Agents() []Spec { return s.m.Agents() }

// Reset starts an episode of the inner environment.
func (s *MultiStats) Reset(seed uint64) (Turn, error) {
	t, err := s.m.Reset(seed)
	if err != nil {
		return t, err
	}
	s.running, s.ended = s.running[:0], s.ended[:0]
	s.record(t)
	return t, nil
}

// Step steps the inner environment and records the step.
func (s *MultiStats) Step(id string, a agent.RawAction) (Turn, error) {
	t, err := s.m.Step(id, a)
	if err != nil {
		return t, err
	}
	s.ended = s.ended[:0]
	s.ticks += t.Tick - s.lastTick
	s.record(t)
	return t, nil
}

func (s *MultiStats) record(t Turn) {
	for i := range t.Reports {
		r := &t.Reports[i]
		k := -1
		for j := range s.running {
			if s.running[j].AgentID == r.AgentID {
				k = j
				break
			}
		}
		if k < 0 || r.Start {
			if k < 0 {
				s.running = append(s.running, Ended{})
				k = len(s.running) - 1
			}
			s.running[k] = Ended{AgentID: r.AgentID, Agent: r.Agent}
		}
		e := &s.running[k]
		if r.SpanTicks > 0 {
			e.Return += r.Reward
			e.Length++
			if a := s.byName[r.Agent]; a != nil {
				a.Steps++
			}
		}
		if r.Done() {
			e.Terminated, e.Truncated = r.Terminated, r.Truncated
			s.ended = append(s.ended, *e)
			if a := s.byName[r.Agent]; a != nil {
				a.Episodes++
				a.Last, a.LastID = e.Episode, e.AgentID
			}
			s.running[k] = s.running[len(s.running)-1]
			s.running = s.running[:len(s.running)-1]
		}
	}
	s.lastTick = t.Tick
	if t.Over {
		s.episodes++
		s.lastLen = t.Tick
		s.running = s.running[:0]
	}
}

// Info returns the inner Info (see InfoKeyEnv); when sub-episodes ended in the latest
// step, a map that also holds, under InfoKeyEpisode, a map from each one's agent id to
// its Episode.
func (s *MultiStats) Info() any {
	inner := s.m.Info()
	if len(s.ended) == 0 {
		return inner
	}
	eps := make(map[string]Episode, len(s.ended))
	for _, e := range s.ended {
		eps[e.AgentID] = e.Episode
	}
	info := infoMap(inner)
	info[InfoKeyEpisode] = eps
	return info
}

// Agent returns the statistics of the agent called name, and false for a name that is
// not one of the environment's agents.
func (s *MultiStats) Agent(name string) (AgentStats, bool) {
	a := s.byName[name]
	if a == nil {
		return AgentStats{}, false
	}
	return *a, true
}

// Ended lists the sub-episodes that ended in the latest Reset or Step. The slice belongs
// to the wrapper and is valid until its next Reset or Step.
func (s *MultiStats) Ended() []Ended { return s.ended }

// Episodes counts the finished episodes.
func (s *MultiStats) Episodes() int { return s.episodes }

// Ticks counts the environment ticks of every successful Step, in any episode.
func (s *MultiStats) Ticks() int { return s.ticks }

// LastTicks returns the length in ticks of the last finished episode; 0 before any.
func (s *MultiStats) LastTicks() int { return s.lastLen }
