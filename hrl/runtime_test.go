package hrl_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const seed = 11

// roll is the number every test environment draws at a reset with seed.
func roll(t *testing.T) float32 {
	t.Helper()
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	mustReset(t, rt, seed)
	return float32(rt.State().Roll)
}

// ck is a clock.
func ck(steps, tick, sub int) agent.Clock {
	return agent.Clock{Steps: steps, Tick: tick, SubEpisode: sub}
}

// rep builds an expected report. flags holds "start", "term" and "trunc" as they apply.
func rep(id, parent string, obs []float32, reward float64, span int, c agent.Clock, flags string) rec {
	return rec{
		ID: id, Agent: id[:strings.LastIndexByte(id, '_')], Parent: parent, Obs: obs, Reward: reward,
		Term: strings.Contains(flags, "term"), Trunc: strings.Contains(flags, "trunc"),
		Start: strings.Contains(flags, "start"), Span: span, Clock: c,
	}
}

// obsOf returns a function building the test agents' flat observations for a roll.
func obsOf(roll float32) func(pos, target, steps int) []float32 {
	return func(pos, target, steps int) []float32 {
		return []float32{float32(pos), float32(target), roll, float32(steps)}
	}
}

func TestReset(t *testing.T) {
	o := obsOf(roll(t))
	tests := []struct {
		name  string
		env   func() *testEnv
		first string
	}{
		{"corridor", corridorEnv, "planner_0"},
		{"top-level lateral", topLateralEnv, "a_0"},
		{"three levels", threeLevelEnv, "top_0"},
		{"box actions", boxEnv, "box_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{})
			assert.Equal(t, "", rt.Acting(), "before the first reset")
			assert.False(t, rt.Over())
			res := mustReset(t, rt, seed)
			want := frame{
				Reports: []rec{rep(tt.first, "", o(0, 0, 0), 0, 0, ck(0, 0, 0), "start")},
				Next:    tt.first,
				State:   world{Roll: rt.State().Roll},
			}
			assert.Equal(t, want, snap(rt, res))
			assert.Equal(t, tt.first, rt.Acting())
			assert.Equal(t, 0, rt.Tick())
			assert.False(t, rt.Over())
			require.NotNil(t, res.Acting())
			assert.Equal(t, tt.first, res.Acting().AgentID)
			assert.Same(t, res.Acting(), res.Report(tt.first))
			assert.Nil(t, res.Report("nobody_0"))
		})
	}
}

func TestResetStartsOver(t *testing.T) {
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	first := mustReset(t, rt, seed)
	want := snap(rt, first)
	script := []move{d("planner_0", 0), d("walker_0", 1), d("planner_0", 0), d("walker_1", 1), d("planner_0", 0)}
	played := playMoves(t, rt, script)
	require.Equal(t, "walker_2", played[len(played)-1].Next)

	// A reset mid-episode forgets the sub-episodes: the walker is walker_0 again.
	again := mustReset(t, rt, seed)
	assert.Equal(t, want, snap(rt, again))
	assert.Equal(t, played, playMoves(t, rt, script))

	// Resets with other seeds in between change nothing for this seed.
	playRandom(t, rt, 99, 1)
	playRandom(t, rt, 5, 2)
	mustReset(t, rt, seed)
	assert.Equal(t, played, playMoves(t, rt, script))
}

func TestSeeds(t *testing.T) {
	envs := map[string]func() *testEnv{
		"corridor": corridorEnv, "lateral": lateralEnv, "three levels": threeLevelEnv,
		"procedure": procedureEnv, "hooks": hookedEnv, "masked": maskedEnv,
		"box": boxEnv, "multi": multiEnv, "bits": bitsEnv,
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			x, y := newRuntime(t, env(), hrl.Config{}), newRuntime(t, env(), hrl.Config{})
			for s := range uint64(5) {
				a, b := playRandom(t, x, s, s+100), playRandom(t, y, s, s+100)
				require.Equal(t, a, b, "seed %d", s)
			}
		})
	}

	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	mustReset(t, rt, 1)
	r1 := rt.State().Roll
	mustReset(t, rt, 2)
	assert.NotEqual(t, r1, rt.State().Roll, "seeds 1 and 2 draw the same initial state")
	mustReset(t, rt, 1)
	assert.Equal(t, r1, rt.State().Roll)
}

// TestTrajectories checks every report of scripted episodes, tick by tick.
func TestTrajectories(t *testing.T) {
	r := roll(t)
	o := obsOf(r)
	R := int(r)
	tests := []struct {
		name  string
		env   func() *testEnv
		moves []move
		want  []frame
	}{
		{
			name:  "corridor",
			env:   corridorEnv,
			moves: []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1), d("planner_0", 2), d("walker_1", 1), d("walker_1", 1), d("walker_1", 1)},
			want: []frame{
				{Tick: 1, Next: "walker_0", State: world{0, 3, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(0, 3, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "walker_0", State: world{1, 3, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(1, 3, 1), 1, 1, ck(1, 2, 0), "")}},
				{Tick: 3, Next: "walker_0", State: world{2, 3, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(2, 3, 2), 1, 1, ck(2, 3, 0), "")}},
				{Tick: 4, Next: "planner_0", State: world{3, 3, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(3, 3, 3), 1, 1, ck(3, 4, 0), "term"),
					rep("planner_0", "", o(3, 3, 1), 303, 4, ck(1, 4, 0), ""),
				}},
				{Tick: 5, Next: "walker_1", State: world{3, 6, R, ""}, Reports: []rec{rep("walker_1", "planner_0", o(3, 6, 0), 0, 0, ck(0, 5, 1), "start")}},
				{Tick: 6, Next: "walker_1", State: world{4, 6, R, ""}, Reports: []rec{rep("walker_1", "planner_0", o(4, 6, 1), 1, 1, ck(1, 6, 1), "")}},
				{Tick: 7, Next: "walker_1", State: world{5, 6, R, ""}, Reports: []rec{rep("walker_1", "planner_0", o(5, 6, 2), 1, 1, ck(2, 7, 1), "")}},
				{Tick: 8, Over: true, State: world{6, 6, R, ""}, Reports: []rec{
					rep("walker_1", "planner_0", o(6, 6, 3), 1, 1, ck(3, 8, 1), "term"),
					rep("planner_0", "", o(6, 6, 2), 633, 4, ck(2, 8, 0), "term"),
				}},
			},
		},
		{
			name:  "lateral hand-over under a parent",
			env:   lateralEnv,
			moves: []move{d("planner_0", 1), d("a_0", 1), d("a_0", 1), d("b_0", 1), d("b_0", 1)},
			want: []frame{
				{Tick: 1, Next: "a_0", State: world{0, 2, R, ""}, Reports: []rec{rep("a_0", "planner_0", o(0, 2, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "a_0", State: world{1, 2, R, ""}, Reports: []rec{rep("a_0", "planner_0", o(1, 2, 1), 1, 1, ck(1, 2, 0), "")}},
				{Tick: 3, Next: "b_0", State: world{2, 2, R, ""}, Reports: []rec{
					rep("a_0", "planner_0", o(2, 2, 2), 1, 1, ck(2, 3, 0), "term"),
					rep("b_0", "planner_0", o(2, 2, 0), 0, 0, ck(0, 3, 0), "start"),
				}},
				{Tick: 4, Next: "b_0", State: world{3, 2, R, ""}, Reports: []rec{rep("b_0", "planner_0", o(3, 2, 1), 1, 1, ck(1, 4, 0), "")}},
				{Tick: 5, Next: "planner_0", State: world{4, 2, R, ""}, Reports: []rec{
					rep("b_0", "planner_0", o(4, 2, 2), 1, 1, ck(2, 5, 0), "term"),
					rep("planner_0", "", o(4, 2, 1), 402, 5, ck(1, 5, 0), ""),
				}},
			},
		},
		{
			name:  "lateral hand-over at the top level, Parent ends the episode",
			env:   topLateralEnv,
			moves: []move{d("a_0", 1), d("a_0", 1), d("b_0", 0)},
			want: []frame{
				{Tick: 1, Next: "a_0", State: world{1, 0, R, ""}, Reports: []rec{rep("a_0", "", o(1, 0, 1), 1, 1, ck(1, 1, 0), "")}},
				{Tick: 2, Next: "b_0", State: world{2, 0, R, ""}, Reports: []rec{
					rep("a_0", "", o(2, 0, 2), 1, 1, ck(2, 2, 0), "term"),
					rep("b_0", "", o(2, 0, 0), 0, 0, ck(0, 2, 0), "start"),
				}},
				{Tick: 3, Over: true, State: world{1, 0, R, ""}, Reports: []rec{rep("b_0", "", o(1, 0, 1), -1, 1, ck(1, 3, 0), "term")}},
			},
		},
		{
			name: "three levels, on-done returns to a waiting ancestor",
			env:  threeLevelEnv,
			moves: []move{
				d("top_0", 2), d("mid_0", 0), d("low_0", 1),
				d("top_0", 2), d("mid_1", 2), d("low_1", 1), d("low_1", 1), d("low_1", 1),
				d("top_0", 1), d("mid_2", 1), d("low_2", 1), d("low_2", 1),
			},
			want: []frame{
				{Tick: 1, Next: "mid_0", State: world{0, 3, R, ""}, Reports: []rec{rep("mid_0", "top_0", o(0, 3, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "low_0", State: world{0, 1, R, ""}, Reports: []rec{rep("low_0", "mid_0", o(0, 1, 0), 0, 0, ck(0, 2, 0), "start")}},
				{Tick: 3, Next: "top_0", State: world{1, 1, R, ""}, Reports: []rec{
					rep("low_0", "mid_0", o(1, 1, 1), 1, 1, ck(1, 3, 0), "term"),
					rep("mid_0", "top_0", o(1, 1, 1), 101, 2, ck(1, 3, 0), "trunc"),
					rep("top_0", "", o(1, 1, 1), 103, 3, ck(1, 3, 0), ""),
				}},
				{Tick: 4, Next: "mid_1", State: world{1, 4, R, ""}, Reports: []rec{rep("mid_1", "top_0", o(1, 4, 0), 0, 0, ck(0, 4, 1), "start")}},
				{Tick: 5, Next: "low_1", State: world{1, 4, R, ""}, Reports: []rec{rep("low_1", "mid_1", o(1, 4, 0), 0, 0, ck(0, 5, 1), "start")}},
				{Tick: 6, Next: "low_1", State: world{2, 4, R, ""}, Reports: []rec{rep("low_1", "mid_1", o(2, 4, 1), 1, 1, ck(1, 6, 1), "")}},
				{Tick: 7, Next: "low_1", State: world{3, 4, R, ""}, Reports: []rec{rep("low_1", "mid_1", o(3, 4, 2), 1, 1, ck(2, 7, 1), "")}},
				{Tick: 8, Next: "top_0", State: world{4, 4, R, ""}, Reports: []rec{
					rep("low_1", "mid_1", o(4, 4, 3), 1, 1, ck(3, 8, 1), "term"),
					rep("mid_1", "top_0", o(4, 4, 1), 413, 4, ck(1, 8, 1), "trunc"),
					rep("top_0", "", o(4, 4, 2), 413, 5, ck(2, 8, 0), ""),
				}},
				{Tick: 9, Next: "mid_2", State: world{4, 6, R, ""}, Reports: []rec{rep("mid_2", "top_0", o(4, 6, 0), 0, 0, ck(0, 9, 2), "start")}},
				{Tick: 10, Next: "low_2", State: world{4, 6, R, ""}, Reports: []rec{rep("low_2", "mid_2", o(4, 6, 0), 0, 0, ck(0, 10, 2), "start")}},
				{Tick: 11, Next: "low_2", State: world{5, 6, R, ""}, Reports: []rec{rep("low_2", "mid_2", o(5, 6, 1), 1, 1, ck(1, 11, 2), "")}},
				// mid is cut short at the exit, where its own Done says terminated.
				{Tick: 12, Over: true, State: world{6, 6, R, ""}, Reports: []rec{
					rep("low_2", "mid_2", o(6, 6, 2), 1, 1, ck(2, 12, 2), "term"),
					rep("mid_2", "top_0", o(6, 6, 1), 642, 3, ck(1, 12, 2), "term"),
					rep("top_0", "", o(6, 6, 3), 642, 4, ck(3, 12, 0), "term"),
				}},
			},
		},
		{
			name:  "End from a child closes its parent",
			env:   endFromChildEnv,
			moves: []move{d("planner_0", 1), d("walker_0", 1), d("walker_0", 1)},
			want: []frame{
				{Tick: 1, Next: "walker_0", State: world{0, 2, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(0, 2, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "walker_0", State: world{1, 2, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(1, 2, 1), 1, 1, ck(1, 2, 0), "")}},
				{Tick: 3, Over: true, State: world{2, 2, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(2, 2, 2), 1, 1, ck(2, 3, 0), "term"),
					rep("planner_0", "", o(2, 2, 1), 202, 3, ck(1, 3, 0), "trunc"),
				}},
			},
		},
		{
			name:  "procedure within one step, then a child",
			env:   procedureEnv,
			moves: []move{d("planner_0", 2), d("planner_0", 0), d("walker_0", 1)},
			want: []frame{
				{Tick: 1, Next: "planner_0", State: world{3, 3, R, ""}, Reports: []rec{rep("planner_0", "", o(3, 3, 1), 303, 1, ck(1, 1, 0), "")}},
				{Tick: 2, Next: "walker_0", State: world{3, 4, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(3, 4, 0), 0, 0, ck(0, 2, 0), "start")}},
				{Tick: 3, Next: "planner_0", State: world{4, 4, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(4, 4, 1), 1, 1, ck(1, 3, 0), "term"),
					rep("planner_0", "", o(4, 4, 2), 431, 2, ck(2, 3, 0), ""),
				}},
			},
		},
		{
			name:  "procedure reaches the exit",
			env:   procedureEnv,
			moves: []move{d("planner_0", 2), d("planner_0", 2)},
			want: []frame{
				{Tick: 1, Next: "planner_0", State: world{3, 3, R, ""}, Reports: []rec{rep("planner_0", "", o(3, 3, 1), 303, 1, ck(1, 1, 0), "")}},
				{Tick: 2, Over: true, State: world{6, 6, R, ""}, Reports: []rec{rep("planner_0", "", o(6, 6, 2), 633, 1, ck(2, 2, 0), "term")}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{})
			mustReset(t, rt, seed)
			got := playMoves(t, rt, tt.moves)
			require.Len(t, got, len(tt.want))
			for i := range tt.want {
				require.Equal(t, tt.want[i], got[i], "step %d", i+1)
			}
			last := tt.want[len(tt.want)-1]
			assert.Equal(t, last.Over, rt.Over())
			assert.Equal(t, last.Next, rt.Acting())
			assert.Equal(t, last.Tick, rt.Tick())
		})
	}
}

func TestResultAtTheEnd(t *testing.T) {
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	res := mustReset(t, rt, seed)
	for _, m := range corridorEpisode {
		var err error
		res, err = rt.Step(m.id, m.raw)
		require.NoError(t, err)
	}
	require.True(t, res.Over)
	assert.Nil(t, res.Acting())
	assert.Equal(t, "", res.Next)
	for _, id := range []string{"walker_1", "planner_0"} {
		r := res.Report(id)
		require.NotNil(t, r, id)
		assert.True(t, r.Done(), id)
	}
}

// TestTruncatedWalkerReturnsControl plays a walker into its step limit.
func TestTruncatedWalkerReturnsControl(t *testing.T) {
	o := obsOf(roll(t))
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	mustReset(t, rt, seed)
	got := playMoves(t, rt, []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 0), d("walker_0", 1), d("walker_0", 0), d("walker_0", 1)})
	assert.Equal(t, []rec{
		rep("walker_0", "planner_0", o(1, 3, 5), 1, 1, ck(5, 6, 0), "trunc"),
		rep("planner_0", "", o(1, 3, 1), 103, 6, ck(1, 6, 0), ""),
	}, got[len(got)-1].Reports)
	assert.Equal(t, "planner_0", rt.Acting())
}

func TestMaxTicks(t *testing.T) {
	r := roll(t)
	o := obsOf(r)
	tests := []struct {
		name     string
		env      func() *testEnv
		maxTicks int
		moves    []move
		want     []rec // the last step's reports
	}{
		{
			name: "the child's first observation", env: corridorEnv, maxTicks: 1,
			moves: []move{d("planner_0", 2)},
			want: []rec{
				rep("walker_0", "planner_0", o(0, 3, 0), 0, 0, ck(0, 1, 0), "start trunc"),
				rep("planner_0", "", o(0, 3, 1), 3, 1, ck(1, 1, 0), "trunc"),
			},
		},
		{
			name: "the child acting", env: corridorEnv, maxTicks: 3,
			moves: []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 1)},
			want: []rec{
				rep("walker_0", "planner_0", o(2, 3, 2), 1, 1, ck(2, 3, 0), "trunc"),
				rep("planner_0", "", o(2, 3, 1), 203, 3, ck(1, 3, 0), "trunc"),
			},
		},
		{
			name: "the child terminates on the last tick", env: corridorEnv, maxTicks: 4,
			moves: []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1)},
			want: []rec{
				rep("walker_0", "planner_0", o(3, 3, 3), 1, 1, ck(3, 4, 0), "term"),
				rep("planner_0", "", o(3, 3, 1), 303, 4, ck(1, 4, 0), "trunc"),
			},
		},
		{
			name: "the episode ends by itself on the last tick", env: corridorEnv, maxTicks: 8,
			moves: []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1), d("planner_0", 2), d("walker_1", 1), d("walker_1", 1), d("walker_1", 1)},
			want: []rec{
				rep("walker_1", "planner_0", o(6, 6, 3), 1, 1, ck(3, 8, 1), "term"),
				rep("planner_0", "", o(6, 6, 2), 633, 4, ck(2, 8, 0), "term"),
			},
		},
		{
			name: "three levels", env: threeLevelEnv, maxTicks: 3,
			moves: []move{d("top_0", 2), d("mid_0", 2), d("low_0", 1)},
			want: []rec{
				rep("low_0", "mid_0", o(1, 3, 1), 1, 1, ck(1, 3, 0), "trunc"),
				rep("mid_0", "top_0", o(1, 3, 1), 103, 2, ck(1, 3, 0), "trunc"),
				rep("top_0", "", o(1, 3, 1), 103, 3, ck(1, 3, 0), "trunc"),
			},
		},
		{
			name: "a lateral hand-over on the last tick", env: lateralEnv, maxTicks: 3,
			moves: []move{d("planner_0", 1), d("a_0", 1), d("a_0", 1)},
			want: []rec{
				rep("a_0", "planner_0", o(2, 2, 2), 1, 1, ck(2, 3, 0), "term"),
				rep("b_0", "planner_0", o(2, 2, 0), 0, 0, ck(0, 3, 0), "start trunc"),
				rep("planner_0", "", o(2, 2, 1), 202, 3, ck(1, 3, 0), "trunc"),
			},
		},
		{
			name: "a procedure", env: procedureEnv, maxTicks: 1,
			moves: []move{d("planner_0", 2)},
			want:  []rec{rep("planner_0", "", o(3, 3, 1), 303, 1, ck(1, 1, 0), "trunc")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{MaxTicks: tt.maxTicks})
			for range 2 { // the limit counts from each reset
				mustReset(t, rt, seed)
				got := playMoves(t, rt, tt.moves)
				last := got[len(got)-1]
				assert.Equal(t, tt.want, last.Reports)
				assert.True(t, last.Over)
				assert.Equal(t, "", last.Next)
				assert.Equal(t, tt.maxTicks, last.Tick)
				assert.True(t, rt.Over())
				assert.Equal(t, "", rt.Acting())
				_, err := rt.Step(tt.moves[len(tt.moves)-1].id, agent.Discrete(0))
				assert.ErrorIs(t, err, env.ErrEpisodeOver)
			}
		})
	}
}

// TestIDs checks that k in "<name>_<k>" counts the agent's sub-episodes ended in the
// episode, in the clock too, and starts again at every reset.
func TestIDs(t *testing.T) {
	rt := newRuntime(t, lateralEnv(), hrl.Config{})
	for range 2 {
		res := mustReset(t, rt, seed)
		var ids []string
		for len(ids) < 18 {
			// The planner plans legs of 1 tile, a walks it, b goes forward and back.
			acting := res.Acting()
			raw := int64(1)
			if acting.Agent == "planner" || acting.Agent == "b" && acting.Clock.Steps > 0 {
				raw = 0
			}
			var err error
			res, err = rt.Step(acting.AgentID, agent.Discrete(raw))
			require.NoError(t, err)
			for _, r := range res.Reports {
				ids = append(ids, r.AgentID)
				assert.Equal(t, r.AgentID, r.Agent+"_"+strconv.Itoa(r.Clock.SubEpisode))
			}
		}
		assert.Equal(t, []string{
			"a_0", "a_0", "b_0", "b_0", "b_0", "planner_0",
			"a_1", "a_1", "b_1", "b_1", "b_1", "planner_0",
			"a_2", "a_2", "b_2", "b_2", "b_2", "planner_0",
		}, ids)
		assert.False(t, res.Over)
	}
}

func TestHooks(t *testing.T) {
	r := roll(t)
	o := obsOf(r)
	tests := []struct {
		name     string
		env      func() *testEnv
		maxTicks int
		moves    []move
		trace    string // the state's Trace after the moves
		last     []rec  // the last step's reports
		reset    string // the Trace right after the reset
		check    func(*testing.T, []frame)
	}{
		{
			name:  "corridor",
			env:   hookedEnv,
			moves: []move{d("planner_0", 1), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1)},
			reset: "reset:planner reset:walker takes:planner(reset,,,0) ",
			trace: "reset:planner reset:walker takes:planner(reset,,,0) " +
				"step:planner(2,0) takes:walker(trigger,leg,planner_0,2) " +
				"step:walker(0,1) step:walker(0,1) step:walker(0,1) gives:walker ",
			// OnTakesControl lengthened the leg to 3 tiles; OnGivesControl cleared the
			// target after the walker's last observation and before the planner's.
			last: []rec{
				rep("walker_0", "planner_0", o(3, 3, 3), 1, 1, ck(3, 4, 0), "term"),
				rep("planner_0", "", o(3, 0, 1), 302, 4, ck(1, 4, 0), ""),
			},
			check: func(t *testing.T, f []frame) {
				assert.Equal(t, o(0, 3, 0), f[0].Reports[0].Obs, "the walker's first observation shows the target its hook moved")
			},
		},
		{
			name:  "lateral",
			env:   hookedLateralEnv,
			moves: []move{d("planner_0", 0), d("a_0", 1), d("a_0", 1), d("b_0", 1), d("b_0", 1)},
			reset: "reset:planner reset:a reset:b takes:planner(reset,,,0) ",
			trace: "reset:planner reset:a reset:b takes:planner(reset,,,0) " +
				"step:planner(1,0) takes:a(trigger,leg,planner_0,1) " +
				"step:a(0,1) step:a(0,1) gives:a takes:b(done,on-done,a_0,0) " +
				"step:b(0,1) step:b(0,1) gives:b ",
			last: []rec{
				rep("b_0", "planner_0", o(4, 0, 2), 1, 1, ck(2, 5, 0), "term"),
				rep("planner_0", "", o(4, 0, 1), 401, 5, ck(1, 5, 0), ""),
			},
			check: func(t *testing.T, f []frame) {
				assert.Equal(t, []rec{
					rep("a_0", "planner_0", o(2, 2, 2), 1, 1, ck(2, 3, 0), "term"),
					rep("b_0", "planner_0", o(2, 0, 0), 0, 0, ck(0, 3, 0), "start"),
				}, f[2].Reports)
			},
		},
		{
			name:  "episode end",
			env:   hookedEnv,
			moves: []move{d("planner_0", 1), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1), d("planner_0", 1), d("walker_1", 1), d("walker_1", 1), d("walker_1", 1)},
			reset: "reset:planner reset:walker takes:planner(reset,,,0) ",
			trace: "reset:planner reset:walker takes:planner(reset,,,0) " +
				"step:planner(2,0) takes:walker(trigger,leg,planner_0,2) " +
				"step:walker(0,1) step:walker(0,1) step:walker(0,1) gives:walker " +
				"step:planner(2,0) takes:walker(trigger,leg,planner_0,2) " +
				"step:walker(0,1) step:walker(0,1) step:walker(0,1) gives:walker gives:planner ",
			last: []rec{
				rep("walker_1", "planner_0", o(6, 6, 3), 1, 1, ck(3, 8, 1), "term"),
				rep("planner_0", "", o(6, 0, 2), 632, 4, ck(2, 8, 0), "term"),
			},
		},
		{
			// The parent's sub-episode ends with the episode: it gives control too.
			name:  "End from a child",
			env:   hookedEndFromChildEnv,
			moves: []move{d("planner_0", 0), d("walker_0", 1), d("walker_0", 1)},
			reset: "reset:planner reset:walker takes:planner(reset,,,0) ",
			trace: "reset:planner reset:walker takes:planner(reset,,,0) " +
				"step:planner(1,0) takes:walker(trigger,leg,planner_0,1) " +
				"step:walker(0,1) step:walker(0,1) gives:walker gives:planner ",
			last: []rec{
				rep("walker_0", "planner_0", o(2, 2, 2), 1, 1, ck(2, 3, 0), "term"),
				rep("planner_0", "", o(2, 0, 1), 201, 3, ck(1, 3, 0), "trunc"),
			},
		},
		{
			// Truncation ends every sub-episode in control, innermost first, and the
			// parent sees what the child's OnGivesControl left, as on a normal return.
			name:     "tick limit",
			env:      hookedEnv,
			maxTicks: 3,
			moves:    []move{d("planner_0", 0), d("walker_0", 1), d("walker_0", 0)},
			reset:    "reset:planner reset:walker takes:planner(reset,,,0) ",
			trace: "reset:planner reset:walker takes:planner(reset,,,0) " +
				"step:planner(1,0) takes:walker(trigger,leg,planner_0,1) " +
				"step:walker(0,1) step:walker(0,-1) gives:walker gives:planner ",
			last: []rec{
				rep("walker_0", "planner_0", o(0, 2, 2), -1, 1, ck(2, 3, 0), "trunc"),
				rep("planner_0", "", o(0, 0, 1), 1, 3, ck(1, 3, 0), "trunc"),
			},
		},
		{
			name:  "three levels, the agent between cut short",
			env:   hookedThreeLevelEnv,
			moves: []move{d("top_0", 2), d("mid_0", 0), d("low_0", 1), d("low_0", 1)},
			reset: "reset:top reset:mid reset:low takes:top(reset,,,0) ",
			trace: "reset:top reset:mid reset:low takes:top(reset,,,0) " +
				"step:top(3,0) takes:mid(trigger,plan,top_0,3) " +
				"step:mid(1,0) takes:low(trigger,order,mid_0,1) " +
				"step:low(0,1) step:low(0,1) gives:low gives:mid ",
			last: []rec{
				rep("low_0", "mid_0", o(2, 2, 2), 1, 1, ck(2, 4, 0), "term"),
				rep("mid_0", "top_0", o(2, 0, 1), 201, 3, ck(1, 4, 0), "trunc"),
				rep("top_0", "", o(2, 0, 1), 203, 4, ck(1, 4, 0), ""),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{MaxTicks: tt.maxTicks})
			res := mustReset(t, rt, seed)
			assert.Equal(t, tt.reset, rt.State().Trace)
			first := res.Reports[0].AgentID
			assert.Equal(t, []rec{rep(first, "", o(0, 0, 0), 0, 0, ck(0, 0, 0), "start")}, snap(rt, res).Reports)
			got := playMoves(t, rt, tt.moves)
			assert.Equal(t, tt.trace, rt.State().Trace)
			assert.Equal(t, tt.last, got[len(got)-1].Reports)
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// TestEveryTakesHasItsGives plays random episodes of the hooked environments, with and
// without tick limits: when an episode is over, every agent that took control has
// given it back once per sub-episode, whichever way the sub-episode ended.
func TestEveryTakesHasItsGives(t *testing.T) {
	envs := map[string]func() *testEnv{
		"corridor": hookedEnv, "lateral": hookedLateralEnv, "end from a child": hookedEndFromChildEnv,
		"three levels": hookedThreeLevelEnv,
	}
	for name, env := range envs {
		for _, limit := range []int{0, 1, 2, 3, 5, 8, 13} {
			t.Run(fmt.Sprintf("%s/MaxTicks=%d", name, limit), func(t *testing.T) {
				rt := newRuntime(t, env(), hrl.Config{MaxTicks: limit})
				for s := range uint64(6) {
					frames := playRandom(t, rt, s, s)
					trace := frames[len(frames)-1].State.Trace
					for _, spec := range rt.Agents() {
						takes := strings.Count(trace, "takes:"+spec.Name+"(")
						gives := strings.Count(trace, "gives:"+spec.Name+" ")
						assert.Equal(t, takes, gives, "seed %d, agent %s:\n%s", s, spec.Name, trace)
					}
				}
			})
		}
	}
}

// TestMaskIsAdvice: the runtime reports each agent's mask, but enforces only the action
// space and DecodeAction; an environment that must refuse a masked-out action says so
// in DecodeAction or Step.
func TestMaskIsAdvice(t *testing.T) {
	rt := newRuntime(t, maskedEnv(), hrl.Config{})
	assert.Equal(t, []int{3, 0}, []int{rt.Agents()[0].MaskLen, rt.Agents()[1].MaskLen})
	res := mustReset(t, rt, seed)
	assert.Equal(t, []bool{true, true, true}, res.Reports[0].Mask)
	got := playMoves(t, rt, []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1), d("planner_0", 0), d("walker_1", 1)})
	last := got[len(got)-1]
	require.Equal(t, "planner_0", last.Next)
	assert.Equal(t, []bool{true, true, false}, last.Reports[1].Mask, "at tile 4, a leg of 3 overshoots the exit")
	assert.Nil(t, last.Reports[0].Mask, "the walker has no mask")

	res, err := rt.Step("planner_0", agent.Discrete(2))
	require.NoError(t, err)
	assert.Equal(t, "walker_2", res.Next)
}

func TestAgentsAndMachine(t *testing.T) {
	rt := newRuntime(t, procedureEnv(), hrl.Config{})
	specs := rt.Agents()
	require.Len(t, specs, 2)
	assert.Equal(t, "planner", specs[0].Name)
	assert.Equal(t, "walker", specs[1].Name)
	assert.True(t, obsSpace.Equal(specs[0].ObservationSpace))
	assert.Equal(t, "Discrete(3)", specs[1].ActionSpace.String())
	specs[0].Name = "changed"
	assert.Equal(t, "planner", rt.Agents()[0].Name, "Agents returns a copy")

	m := rt.Machine()
	assert.Equal(t, "planner", m.Initial)
	require.Len(t, m.Triggers, 2)
	assert.Equal(t, "jump", m.Triggers[0].Name)
	m.OnDone["walker"] = "changed"
	assert.Equal(t, "$parent", rt.Machine().OnDone["walker"], "Machine returns a copy")
	assert.Equal(t, rt.Machine().Mermaid(), rt.Mermaid())
	assert.Equal(t, rt.Machine().DOT(), rt.DOT())
	assert.Contains(t, rt.Mermaid(), "jump")
}
