package env_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
)

// move is one Step of a MultiAgent.
type move struct {
	id string
	a  agent.RawAction
}

// turnString formats a Turn for comparisons.
func turnString(t env.Turn) string {
	s := fmt.Sprintf("tick %d next %q over %v:", t.Tick, t.Next, t.Over)
	for _, r := range copyReports(t.Reports) {
		s += " [" + r.String() + "]"
	}
	return s
}

// A truncated game: bob wins round 1, alice round 2, round 3 is a tie.
var rpsGame = []move{
	{"alice_0", agent.Discrete(rock)}, {"bob_0", agent.Discrete(paper)},
	{"alice_0", agent.Discrete(paper)}, {"bob_0", agent.Discrete(rock)},
	{"alice_0", agent.Discrete(scissors)}, {"bob_0", agent.Discrete(scissors)},
}

var rpsTrace = []string{
	`tick 0 next "alice_0" over false: [alice_0 r=0 term=false trunc=false start=true span=0] [bob_0 r=0 term=false trunc=false start=true span=0]`,
	`tick 0 next "bob_0" over false: [bob_0 r=0 term=false trunc=false start=false span=0]`,
	`tick 1 next "alice_0" over false: [alice_0 r=-1 term=false trunc=false start=false span=1] [bob_0 r=1 term=false trunc=false start=false span=1]`,
	`tick 1 next "bob_0" over false: [bob_0 r=0 term=false trunc=false start=false span=0]`,
	`tick 2 next "alice_0" over false: [alice_0 r=1 term=false trunc=false start=false span=1] [bob_0 r=-1 term=false trunc=false start=false span=1]`,
	`tick 2 next "bob_0" over false: [bob_0 r=0 term=false trunc=false start=false span=0]`,
	`tick 3 next "" over true: [alice_0 r=0 term=false trunc=true start=false span=1] [bob_0 r=0 term=false trunc=true start=false span=1]`,
}

func TestSequentialTrace(t *testing.T) {
	g := &rps{target: 3, rounds: 3}
	m := env.Sequential(g)
	assert.Equal(t, g.Agents(), m.Agents())

	turn := mustReset(t, m, 1)
	got := []string{turnString(turn)}
	for i, mv := range rpsGame {
		require.Equal(t, mv.id, turn.Next, "move %d", i)
		require.NotNil(t, turn.Acting(), "move %d: the acting agent is reported", i)
		next, err := m.Step(mv.id, mv.a)
		require.NoError(t, err, "move %d", i)
		if next.Tick == turn.Tick {
			// A repeated observation: the same as in the round's Turn.
			r := next.Reports[0]
			assert.Equal(t, g.obs[1][:], r.Obs)
			assert.Equal(t, g.mask[1][:], r.Mask)
		}
		turn = next
		got = append(got, turnString(turn))
	}
	assert.Equal(t, rpsTrace, got)
	assert.Equal(t, map[string]any{"round": 3}, m.Info())

	t.Run("masks", func(t *testing.T) {
		turn := mustReset(t, m, 2)
		assert.Equal(t, []bool{true, true, true}, turn.Acting().Mask)
		turn, err := m.Step("alice_0", agent.Discrete(rock))
		require.NoError(t, err)
		turn, err = m.Step("bob_0", agent.Discrete(paper))
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true, true}, turn.Report("alice_0").Mask)
		assert.Equal(t, []bool{true, false, true}, turn.Report("bob_0").Mask)
	})
}

func TestSequentialErrors(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name   string
		at     int // the bad step comes before rpsGame[at]
		id     string
		a      agent.RawAction
		setup  func(g *rps)
		kind   error
		cause  error
		acting string
	}{
		{name: "not acting", at: 0, id: "bob_0", a: agent.Discrete(rock), kind: env.ErrNotActing, acting: "alice_0"},
		{name: "unknown id", at: 1, id: "carol_0", a: agent.Discrete(rock), kind: env.ErrNotActing, acting: "bob_0"},
		{name: "old id", at: 2, id: "bob_1", a: agent.Discrete(rock), kind: env.ErrNotActing, acting: "alice_0"},
		{name: "outside the space", at: 0, id: "alice_0", a: agent.Discrete(3), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "alice_0"},
		{name: "floats for a discrete space", at: 1, id: "bob_0", a: agent.Continuous([]float32{1}), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "bob_0"},
		{name: "masked", at: 2, id: "alice_0", a: agent.Discrete(rock), kind: env.ErrInvalidAction, acting: "alice_0"},
		{name: "masked, last agent", at: 3, id: "bob_0", a: agent.Discrete(paper), kind: env.ErrInvalidAction, acting: "bob_0"},
		{name: "rejected", at: 3, id: "bob_0", a: agent.Discrete(rock), setup: func(g *rps) { g.fail = errBoom }, kind: env.ErrRejected, cause: errBoom, acting: "bob_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &rps{target: 3, rounds: 3}
			m := env.Sequential(g)
			got := []string{turnString(mustReset(t, m, 1))}
			for i, mv := range rpsGame {
				if i == tt.at {
					if tt.setup != nil {
						tt.setup(g)
					}
					_, err := m.Step(tt.id, tt.a)
					require.ErrorIs(t, err, tt.kind)
					if tt.cause != nil {
						require.ErrorIs(t, err, tt.cause)
					}
					var se *env.StepError
					require.ErrorAs(t, err, &se)
					assert.Equal(t, tt.id, se.AgentID)
					assert.Equal(t, tt.acting, se.Acting)
					assert.Equal(t, tt.a, se.Action)
				}
				turn, err := m.Step(mv.id, mv.a)
				require.NoError(t, err, "move %d", i)
				got = append(got, turnString(turn))
			}
			assert.Equal(t, rpsTrace, got, "the bad step changed nothing")
		})
	}

	t.Run("not reset", func(t *testing.T) {
		_, err := env.Sequential(&rps{target: 3, rounds: 3}).Step("alice_0", agent.Discrete(rock))
		require.ErrorIs(t, err, env.ErrNotReset)
	})
	t.Run("over", func(t *testing.T) {
		m := env.Sequential(&rps{target: 3, rounds: 3})
		mustReset(t, m, 1)
		for _, mv := range rpsGame {
			_, err := m.Step(mv.id, mv.a)
			require.NoError(t, err)
		}
		_, err := m.Step("alice_0", agent.Discrete(rock))
		require.ErrorIs(t, err, env.ErrEpisodeOver)
	})
}

// TestSequentialLiveAgents plays echo, whose agents join and leave, with a policy that
// returns the same buffer every time and changes it after each step.
func TestSequentialLiveAgents(t *testing.T) {
	e := &echo{}
	m := env.Sequential(e)
	buf := []float32{0}
	v := float32(0)
	turn := mustReset(t, m, 1)
	var got []string
	for !turn.Over {
		v += 0.125
		buf[0] = v
		id := turn.Next
		var err error
		turn, err = m.Step(id, agent.Continuous(buf))
		require.NoError(t, err)
		buf[0] = -1 // the policy reuses its buffer
		got = append(got, id+" -> "+turnString(turn))
	}
	assert.Equal(t, [][]float32{{0.125, 0.25}, {0.375, 0.5, 0.625}, {0.75, 0.875}}, e.got, "the actions were copied")
	assert.Equal(t, []string{
		`a_0 -> tick 0 next "b_0" over false: [b_0 r=0 term=false trunc=false start=false span=0]`,
		`b_0 -> tick 1 next "a_0" over false: [a_0 r=0.125 term=false trunc=false start=false span=1] [b_0 r=0.25 term=false trunc=false start=false span=1] [c_0 r=0 term=false trunc=false start=true span=0]`,
		`a_0 -> tick 1 next "b_0" over false: [b_0 r=0 term=false trunc=false start=false span=0]`,
		`b_0 -> tick 1 next "c_0" over false: [c_0 r=0 term=false trunc=false start=false span=0]`,
		`c_0 -> tick 2 next "b_0" over false: [a_0 r=0.375 term=true trunc=false start=false span=1] [b_0 r=0.5 term=false trunc=false start=false span=1] [c_0 r=0.625 term=false trunc=false start=false span=1]`,
		`b_0 -> tick 2 next "c_0" over false: [c_0 r=0 term=false trunc=false start=false span=0]`,
		`c_0 -> tick 3 next "" over true: [b_0 r=0.75 term=false trunc=true start=false span=1] [c_0 r=0.875 term=true trunc=false start=false span=1]`,
	}, got)

	p, ok := env.As[*echo](m)
	assert.True(t, ok)
	assert.Same(t, e, p)
}

func TestRoundLive(t *testing.T) {
	e := &echo{}
	mustReset(t, e, 1)
	r, err := e.Step([]agent.RawAction{agent.Continuous([]float32{1}), agent.Continuous([]float32{1})})
	require.NoError(t, err)
	r, err = e.Step([]agent.RawAction{agent.Continuous([]float32{1}), agent.Continuous([]float32{1}), agent.Continuous([]float32{1})})
	require.NoError(t, err)
	var ids []string
	for i, rep := range r.Live() {
		ids = append(ids, fmt.Sprintf("%d:%s", i, rep.AgentID))
	}
	assert.Equal(t, []string{"0:b_0", "1:c_0"}, ids, "a_0 is done")
	for i := range r.Live() {
		require.Zero(t, i, "stops when the loop breaks")
		break
	}
}

func TestTimeLimitParallel(t *testing.T) {
	draw := func(round int) []agent.RawAction { // every round a tie, never the same hand twice
		h := agent.Discrete(int64(round % 3))
		return []agent.RawAction{h, h}
	}
	tests := []struct {
		name       string
		g          *rps
		limit      int
		rounds     int
		term, trnc bool
	}{
		{"the limit truncates", &rps{target: 5, rounds: 100}, 2, 2, false, true},
		{"no limit", &rps{target: 5, rounds: 4}, 0, 4, false, true},
		{"negative: no limit", &rps{target: 5, rounds: 4}, -1, 4, false, true},
		{"the environment's own limit first", &rps{target: 5, rounds: 3}, 10, 3, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := env.TimeLimitParallel(tt.g, tt.limit)
			_, err := p.Step(draw(0))
			require.ErrorIs(t, err, env.ErrNotReset)
			r := mustReset(t, p, 1)
			n := 0
			for !r.Over {
				r, err = p.Step(draw(n))
				require.NoError(t, err)
				n++
			}
			assert.Equal(t, tt.rounds, n)
			for _, rep := range r.Reports {
				assert.Equal(t, tt.term, rep.Terminated, rep.AgentID)
				assert.Equal(t, tt.trnc, rep.Truncated, rep.AgentID)
			}
			_, err = p.Step(draw(n))
			require.ErrorIs(t, err, env.ErrEpisodeOver)
		})
	}

	t.Run("terminated at the limit stays terminated", func(t *testing.T) {
		p := env.TimeLimitParallel(&rps{target: 1, rounds: 100}, 1)
		mustReset(t, p, 1)
		r, err := p.Step([]agent.RawAction{agent.Discrete(rock), agent.Discrete(scissors)})
		require.NoError(t, err)
		require.True(t, r.Over)
		for _, rep := range r.Reports {
			assert.True(t, rep.Terminated)
			assert.False(t, rep.Truncated)
		}
	})

	t.Run("through Sequential", func(t *testing.T) {
		g := &rps{target: 5, rounds: 100}
		m := env.Sequential(env.TimeLimitParallel(g, 1))
		mustReset(t, m, 1)
		_, err := m.Step("alice_0", agent.Discrete(rock))
		require.NoError(t, err)
		turn, err := m.Step("bob_0", agent.Discrete(rock))
		require.NoError(t, err)
		assert.Equal(t, `tick 1 next "" over true: [alice_0 r=0 term=false trunc=true start=false span=1] [bob_0 r=0 term=false trunc=true start=false span=1]`, turnString(turn))
		assert.False(t, g.reports[0].Truncated, "the inner environment's reports are not changed")
		_, err = m.Step("alice_0", agent.Discrete(paper))
		require.ErrorIs(t, err, env.ErrEpisodeOver)
		inner, ok := env.As[*rps](m)
		require.True(t, ok)
		assert.Same(t, g, inner)
	})

	t.Run("errors pass through and do not count", func(t *testing.T) {
		g := &rps{target: 5, rounds: 100}
		p := env.TimeLimitParallel(g, 1)
		mustReset(t, p, 1)
		_, err := p.Step([]agent.RawAction{agent.Discrete(rock)})
		require.ErrorContains(t, err, "rps: 1 actions for 2 players")
		r, err := p.Step(draw(0))
		require.NoError(t, err)
		assert.True(t, r.Over)
	})
}

func TestSequentialAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := env.Sequential(&rps{target: 1 << 30, rounds: 1 << 30})
	turn := mustReset(t, m, 1)
	n := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		var err error
		n++
		turn, err = m.Step(turn.Next, agent.Discrete(n/2%3))
		if err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
