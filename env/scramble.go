package env

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// Permutation is how Scramble reorders one agent's slots. Both slices map a position
// the learner sees to the inner environment's: the scrambled action i is the inner
// action Actions[i] (counted from the Discrete space's Start), and the scrambled
// observation's feature j is the inner observation's feature Observation[j]. A nil
// slice leaves its slots as they are: Actions for an action space that is not
// Discrete, Observation for an observation space that is not a Box.
type Permutation struct {
	Actions     []int `json:"actions,omitempty"`
	Observation []int `json:"observation,omitempty"`
}

// InfoKeyScramble is the key under which Scrambled's Info records its seed and its
// permutations, by agent name: {"seed": 7, "agents": {"motion": {"actions": [...],
// "observation": [...]}}}.
const InfoKeyScramble = "scramble"

// Scrambled is a MultiAgent whose agents' discrete actions and observation features
// are permuted, as CommAI's scrambled mode does, so that a learner cannot rely on what
// a slot means: a policy that learns the scrambled environment learns it from
// experience, not from the layout of the plain one. Build it with Scramble.
//
// Each agent has a permutation of its own (Permutation), drawn from the seed and the
// agent's name, fixed for the life of the environment: Reset's seed does not change
// it. An action mask as long as the Discrete action space is permuted with the
// actions; a mask of another length is left as it is. The observation space is the
// inner Box with its bounds permuted, flattened to one dimension.
//
// Scrambled keeps the inner environment's error semantics (a refused action is
// refused as the inner action it stands for, and leaves the environment as it was).
// The Obs and Mask of its Turns are its own buffers, valid until the next Reset or
// Step. It is not safe for concurrent use; Unwrap returns the inner environment.
type Scrambled struct {
	m       MultiAgent
	seed    uint64
	specs   []Spec
	perms   map[string]*scrambleAgent
	info    map[string]Permutation
	turn    Turn
	reports []Report      // turn's reports, the wrapper's own
	bufs    []scrambleBuf // per report slot
	byName  []string
}

type scrambleAgent struct {
	Permutation
	start   int64 // the Discrete space's Start
	maskLen int
}

type scrambleBuf struct {
	obs  []float32
	mask []bool
}

// Scramble returns m with each agent's discrete actions and observation features
// permuted by permutations drawn from seed (see Scrambled).
func Scramble(m MultiAgent, seed uint64) (*Scrambled, error) {
	if m == nil {
		return nil, fmt.Errorf("env: Scramble: nil environment")
	}
	inner := m.Agents()
	s := &Scrambled{m: m, seed: seed, perms: map[string]*scrambleAgent{}, info: map[string]Permutation{}}
	for _, sp := range inner {
		rng := rand.New(rand.NewPCG(seed, nameHash(sp.Name)))
		a := &scrambleAgent{maskLen: sp.MaskLen}
		out := sp
		if d, ok := sp.ActionSpace.(spaces.Discrete); ok {
			a.Actions = rng.Perm(int(d.N))
			a.start = d.Start
		}
		if b, ok := sp.ObservationSpace.(*spaces.Box); ok {
			a.Observation = rng.Perm(b.FlatDim())
			lo, hi := b.Low(), b.High()
			plo, phi := make([]float32, len(lo)), make([]float32, len(hi))
			for j, k := range a.Observation {
				plo[j], phi[j] = lo[k], hi[k]
			}
			box, err := spaces.NewBoxBounds([]int{len(plo)}, plo, phi)
			if err != nil {
				return nil, fmt.Errorf("env: Scramble: agent %s: %w", sp.Name, err)
			}
			out.ObservationSpace = box
		}
		s.perms[sp.Name] = a
		s.info[sp.Name] = a.Permutation
		s.specs = append(s.specs, out)
		s.byName = append(s.byName, sp.Name)
	}
	return s, nil
}

// nameHash is the stream of an agent's permutation.
func nameHash(name string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64()
}

// Unwrap returns the inner environment.
func (s *Scrambled) Unwrap() MultiAgent { return s.m }

// Seed returns the seed the permutations were drawn from.
func (s *Scrambled) Seed() uint64 { return s.seed }

// Permutation returns the permutation of the named agent; ok is false for an agent the
// environment does not have. The slices are the caller's.
func (s *Scrambled) Permutation(agentName string) (p Permutation, ok bool) {
	a, ok := s.perms[agentName]
	if !ok {
		return Permutation{}, false
	}
	return Permutation{Actions: slices.Clone(a.Actions), Observation: slices.Clone(a.Observation)}, true
}

// Agents returns the scrambled specs: the observation spaces permuted.
func (s *Scrambled) Agents() []Spec { return slices.Clone(s.specs) }

// Info returns the inner Info with the seed and permutations under InfoKeyScramble.
func (s *Scrambled) Info() any {
	info := infoMap(s.m.Info())
	info[InfoKeyScramble] = map[string]any{"seed": s.seed, "agents": s.info}
	return info
}

// Reset resets the inner environment with seed and scrambles its turn.
func (s *Scrambled) Reset(seed uint64) (Turn, error) {
	t, err := s.m.Reset(seed)
	if err != nil {
		return t, err
	}
	return s.scramble(t), nil
}

// Step takes the scrambled action a of the agent id: the inner action it stands for.
func (s *Scrambled) Step(id string, a agent.RawAction) (Turn, error) {
	name, ok := agentName(id)
	if p := s.perms[name]; ok && p != nil && p.Actions != nil {
		// An action outside the space goes in as it is, for the inner environment
		// to refuse: the range is the same.
		if j := a.Int - p.start; j >= 0 && j < int64(len(p.Actions)) {
			a.Int = p.start + int64(p.Actions[j])
		}
	}
	t, err := s.m.Step(id, a)
	if err != nil {
		return t, err
	}
	return s.scramble(t), nil
}

// agentName is the name in an agent id "NAME_K".
func agentName(id string) (string, bool) {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '_' {
			return id[:i], i > 0
		}
	}
	return "", false
}

// scramble rewrites t's observations and masks into the wrapper's buffers.
func (s *Scrambled) scramble(t Turn) Turn {
	// The reports are copied into the wrapper's own slice: t's belong to the wrapped
	// environment, which may keep them from step to step (they are read-only to callers).
	s.reports = append(s.reports[:0], t.Reports...)
	s.turn = t
	s.turn.Reports = s.reports
	for len(s.bufs) < len(t.Reports) {
		s.bufs = append(s.bufs, scrambleBuf{})
	}
	for i := range s.turn.Reports {
		r := &s.turn.Reports[i]
		p := s.perms[r.Agent]
		if p == nil {
			continue
		}
		b := &s.bufs[i]
		if p.Observation != nil && r.Obs != nil {
			b.obs = slices.Grow(b.obs[:0], len(r.Obs))[:len(r.Obs)]
			for j, k := range p.Observation {
				b.obs[j] = r.Obs[k]
			}
			r.Obs = b.obs
		}
		if p.Actions != nil && r.Mask != nil && len(r.Mask) == len(p.Actions) {
			b.mask = slices.Grow(b.mask[:0], len(r.Mask))[:len(r.Mask)]
			for j, k := range p.Actions {
				b.mask[j] = r.Mask[k]
			}
			r.Mask = b.mask
		}
	}
	return s.turn
}
