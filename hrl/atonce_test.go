package hrl_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/transitions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Agents that are done when they take control: a planner that may plan a leg of 0
// tiles sends its walker to the tile the walker stands on.

// newStayPlanner returns a planner whose action 0 plans a leg of 0 tiles and action n
// a leg of n tiles.
func newStayPlanner(name string) *bot[int64] {
	p := newPlanner(name)
	p.decode = func(_ view, raw int64) (act, error) { return act{By: name, Leg: int(raw), Here: raw == 0}, nil }
	return p
}

// returner is a test agent that returns control at once when it is done as it takes it.
type returner struct{ *bot[int64] }

func (returner) ReturnsAtOnce() bool { return true }

// traced is a returner whose hooks append to the state's Trace and change nothing else.
type traced struct{ returner }

func (h traced) OnTakesControl(s world, sw agent.Switch[act]) world {
	s.Trace += fmt.Sprintf("takes:%s(%s,%s) ", h.name, sw.Cause, sw.From)
	return s
}

func (h traced) OnGivesControl(s world) world {
	s.Trace += "gives:" + h.name + " "
	return s
}

// stayEnv is the corridor with a planner that may plan legs of 0 tiles; the walker
// returns at once when returns is set.
func stayEnv(returns bool) func() *testEnv {
	return func() *testEnv {
		e := corridorEnv()
		e.agents[0] = bind(newStayPlanner("planner"))
		if returns {
			e.agents[1] = hrl.Bind(returner{newWalker("walker", 5)})
		}
		return e
	}
}

// stayLateralEnv is lateralEnv with a planner that may plan legs of 0 tiles and an agent
// a that returns at once; b, its on-done successor, acts.
func stayLateralEnv() *testEnv {
	e := lateralEnv()
	e.agents[0] = bind(newStayPlanner("planner"))
	e.agents[1] = hrl.Bind(returner{newWalker("a", 5)})
	return e
}

// stayEndEnv is endFromChildEnv with a planner that may plan legs of 0 tiles and a
// walker that returns at once.
func stayEndEnv() *testEnv {
	e := stayEnv(true)()
	e.machine.OnDone["walker"] = transitions.End
	return e
}

// stayThreeLevelEnv is threeLevelEnv with a mid planner that may plan legs of 0 tiles
// and a low walker that returns at once.
func stayThreeLevelEnv() *testEnv {
	e := threeLevelEnv()
	e.agents[1] = bind(newStayPlanner("mid"))
	e.agents[2] = hrl.Bind(returner{newWalker("low", 5)})
	return e
}

// cycleEnv: the planner hands a leg to a; a's on-done rule hands over to b and b's to a,
// both returning at once; a's trigger to x (never fired) is the path that ends the
// episode, which the machine needs.
func cycleEnv() *testEnv {
	return &testEnv{
		agents: bindAll(bind(newStayPlanner("planner")), hrl.Bind(traced{returner{newWalker("a", 5)}}),
			hrl.Bind(traced{returner{newWalker("b", 5)}}), bind(newWalker("x", 5))),
		machine: transitions.Machine[world, act]{
			Initial: "planner",
			OnDone:  map[string]string{"planner": transitions.End, "a": "b", "b": "a", "x": transitions.End},
			Triggers: []trigger{
				{Name: "leg", From: "planner", To: "a"},
				{Name: "out", From: "a", To: "x", When: func(a act) bool { return a.Leg > 0 }},
			},
			Switching: []string{"planner"},
		},
	}
}

// TestReturnAtOnce checks every report of episodes where an agent is done as it takes
// control, with and without agent.AtOnceReturner.
func TestReturnAtOnce(t *testing.T) {
	r := roll(t)
	o := obsOf(r)
	R := int(r)
	tests := []struct {
		name     string
		env      func() *testEnv
		maxTicks int
		moves    []move
		want     []frame
		done     map[int][]string // step index: ids that act though their Done says they are done
	}{
		{
			name:  "by default the walker on its target acts once",
			env:   stayEnv(false),
			moves: []move{d("planner_0", 0), d("walker_0", 1)},
			want: []frame{
				{Tick: 1, Next: "walker_0", State: world{0, 0, R, ""}, Reports: []rec{rep("walker_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "planner_0", State: world{1, 0, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(1, 0, 1), 1, 1, ck(1, 2, 0), "term"),
					rep("planner_0", "", o(1, 0, 1), 100, 2, ck(1, 2, 0), ""),
				}},
			},
			done: map[int][]string{0: {"walker_0"}},
		},
		{
			name:  "a walker that returns at once",
			env:   stayEnv(true),
			moves: []move{d("planner_0", 0), d("planner_0", 2), d("walker_1", 1), d("walker_1", 1), d("planner_0", 0)},
			want: []frame{
				{Tick: 1, Next: "planner_0", State: world{0, 0, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("planner_0", "", o(0, 0, 1), 0, 1, ck(1, 1, 0), ""),
				}},
				{Tick: 2, Next: "walker_1", State: world{0, 2, R, ""}, Reports: []rec{rep("walker_1", "planner_0", o(0, 2, 0), 0, 0, ck(0, 2, 1), "start")}},
				{Tick: 3, Next: "walker_1", State: world{1, 2, R, ""}, Reports: []rec{rep("walker_1", "planner_0", o(1, 2, 1), 1, 1, ck(1, 3, 1), "")}},
				{Tick: 4, Next: "planner_0", State: world{2, 2, R, ""}, Reports: []rec{
					rep("walker_1", "planner_0", o(2, 2, 2), 1, 1, ck(2, 4, 1), "term"),
					rep("planner_0", "", o(2, 2, 2), 202, 3, ck(2, 4, 0), ""),
				}},
				{Tick: 5, Next: "planner_0", State: world{2, 2, R, ""}, Reports: []rec{
					rep("walker_2", "planner_0", o(2, 2, 0), 0, 0, ck(0, 5, 2), "start term"),
					rep("planner_0", "", o(2, 2, 3), 220, 1, ck(3, 5, 0), ""),
				}},
			},
		},
		{
			name:  "a lateral successor takes control after it",
			env:   stayLateralEnv,
			moves: []move{d("planner_0", 0), d("b_0", 1), d("b_0", 1)},
			want: []frame{
				{Tick: 1, Next: "b_0", State: world{0, 0, R, ""}, Reports: []rec{
					rep("a_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("b_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start"),
				}},
				{Tick: 2, Next: "b_0", State: world{1, 0, R, ""}, Reports: []rec{rep("b_0", "planner_0", o(1, 0, 1), 1, 1, ck(1, 2, 0), "")}},
				{Tick: 3, Next: "planner_0", State: world{2, 0, R, ""}, Reports: []rec{
					rep("b_0", "planner_0", o(2, 0, 2), 1, 1, ck(2, 3, 0), "term"),
					rep("planner_0", "", o(2, 0, 1), 200, 3, ck(1, 3, 0), ""),
				}},
			},
		},
		{
			name:  "End from a child that returns at once",
			env:   stayEndEnv,
			moves: []move{d("planner_0", 0)},
			want: []frame{
				{Tick: 1, Over: true, State: world{0, 0, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("planner_0", "", o(0, 0, 1), 0, 1, ck(1, 1, 0), "trunc"),
				}},
			},
		},
		{
			name:     "the tick limit falls on the step it returns",
			env:      stayEnv(true),
			maxTicks: 1,
			moves:    []move{d("planner_0", 0)},
			want: []frame{
				{Tick: 1, Over: true, State: world{0, 0, R, ""}, Reports: []rec{
					rep("walker_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("planner_0", "", o(0, 0, 1), 0, 1, ck(1, 1, 0), "trunc"),
				}},
			},
		},
		{
			name:  "three levels: on-done returns to a waiting ancestor",
			env:   stayThreeLevelEnv,
			moves: []move{d("top_0", 1), d("mid_0", 0)},
			want: []frame{
				{Tick: 1, Next: "mid_0", State: world{0, 2, R, ""}, Reports: []rec{rep("mid_0", "top_0", o(0, 2, 0), 0, 0, ck(0, 1, 0), "start")}},
				{Tick: 2, Next: "top_0", State: world{0, 0, R, ""}, Reports: []rec{
					rep("low_0", "mid_0", o(0, 0, 0), 0, 0, ck(0, 2, 0), "start term"),
					rep("mid_0", "top_0", o(0, 0, 1), 0, 1, ck(1, 2, 0), "trunc"),
					rep("top_0", "", o(0, 0, 1), 2, 2, ck(1, 2, 0), ""),
				}},
			},
		},
		{
			// a and b hand control to each other: each returns at once once a step, and
			// the second time it takes control in a step, it acts.
			name:  "an on-done cycle of agents that return at once",
			env:   cycleEnv,
			moves: []move{d("planner_0", 0), d("a_1", 1)},
			want: []frame{
				{Tick: 1, Next: "a_1", State: world{0, 0, R, "takes:a(trigger,planner_0) gives:a takes:b(done,a_0) gives:b takes:a(done,b_0) "}, Reports: []rec{
					rep("a_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("b_0", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 0), "start term"),
					rep("a_1", "planner_0", o(0, 0, 0), 0, 0, ck(0, 1, 1), "start"),
				}},
				{Tick: 2, Next: "b_2", State: world{1, 0, R, "takes:a(trigger,planner_0) gives:a takes:b(done,a_0) gives:b takes:a(done,b_0) " +
					"gives:a takes:b(done,a_1) gives:b takes:a(done,b_1) gives:a takes:b(done,a_2) "}, Reports: []rec{
					rep("a_1", "planner_0", o(1, 0, 1), 1, 1, ck(1, 2, 1), "term"),
					rep("b_1", "planner_0", o(1, 0, 0), 0, 0, ck(0, 2, 1), "start term"),
					rep("a_2", "planner_0", o(1, 0, 0), 0, 0, ck(0, 2, 2), "start term"),
					rep("b_2", "planner_0", o(1, 0, 0), 0, 0, ck(0, 2, 2), "start"),
				}},
			},
			done: map[int][]string{0: {"a_1"}, 1: {"b_2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{MaxTicks: tt.maxTicks})
			for range 2 { // a reset forgets the returns of the episode before
				mustReset(t, rt, seed)
				for i, m := range tt.moves {
					res, err := rt.Step(m.id, m.raw)
					require.NoError(t, err, "move %d: %s %v", i, m.id, m.raw)
					require.Equal(t, tt.want[i], snap(rt, res), "step %d", i+1)
					for _, rep := range res.Reports {
						term, trunc, ok := rt.AgentDone(rep.AgentID)
						require.True(t, ok)
						assert.Equal(t, rep.Terminated || slices.Contains(tt.done[i], rep.AgentID), term,
							"step %d: Done of %s in the view it is reported in", i+1, rep.AgentID)
						assert.False(t, trunc)
					}
				}
			}
		})
	}
}

// TestResetAgentActs: the initial agent acts after a reset even when it returns at once
// and is done: an episode is never over at its start.
func TestResetAgentActs(t *testing.T) {
	o := obsOf(roll(t))
	rt := newRuntime(t, single(hrl.Bind(returner{newWalker("walker", 5)})), hrl.Config{})
	res := mustReset(t, rt, seed)
	assert.Equal(t, []rec{rep("walker_0", "", o(0, 0, 0), 0, 0, ck(0, 0, 0), "start")}, snap(rt, res).Reports)
	assert.Equal(t, "walker_0", res.Next)
	term, _, ok := rt.AgentDone("walker_0")
	assert.True(t, ok)
	assert.True(t, term, "its Done says it is done, yet it acts")
	assert.True(t, rt.Agents()[0].ReturnsAtOnce)
}

func TestAgentDone(t *testing.T) {
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	_, _, ok := rt.AgentDone("planner_0")
	assert.False(t, ok, "before the first reset")
	mustReset(t, rt, seed)
	term, trunc, ok := rt.AgentDone("planner_0")
	assert.Equal(t, []bool{false, false, true}, []bool{term, trunc, ok})
	_, _, ok = rt.AgentDone("walker_0")
	assert.False(t, ok, "an agent not reported")
	assert.False(t, rt.Agents()[1].ReturnsAtOnce)

	// The walker's report at its step limit: truncated by its own Done.
	playMoves(t, rt, []move{d("planner_0", 2), d("walker_0", 1), d("walker_0", 0), d("walker_0", 1), d("walker_0", 0), d("walker_0", 1)})
	term, trunc, ok = rt.AgentDone("walker_0")
	assert.Equal(t, []bool{false, true, true}, []bool{term, trunc, ok})
	term, trunc, ok = rt.AgentDone("planner_0")
	assert.Equal(t, []bool{false, false, true}, []bool{term, trunc, ok})
}

// TestReturnsAtOnceFalse: an agent whose ReturnsAtOnce says false keeps the default.
func TestReturnsAtOnceFalse(t *testing.T) {
	e := stayEnv(false)()
	e.agents[1] = hrl.Bind(notReturner{returner{newWalker("walker", 5)}})
	rt := newRuntime(t, e, hrl.Config{})
	assert.False(t, rt.Agents()[1].ReturnsAtOnce)
	mustReset(t, rt, seed)
	got := playMoves(t, rt, []move{d("planner_0", 0)})
	assert.Equal(t, "walker_0", got[0].Next)
}

type notReturner struct{ returner }

func (notReturner) ReturnsAtOnce() bool { return false }

// TestEveryTakesHasItsGivesAtOnce plays random episodes in which agents return at once,
// with and without tick limits: every sub-episode that began has ended, with its hooks.
func TestEveryTakesHasItsGivesAtOnce(t *testing.T) {
	tracedStay := func() *testEnv {
		e := stayEnv(true)()
		e.agents[1] = hrl.Bind(traced{returner{newWalker("walker", 5)}})
		return e
	}
	tests := []struct {
		name   string
		env    func() *testEnv
		limits []int
	}{
		{"corridor", tracedStay, []int{0, 1, 2, 3, 5, 8, 13}},
		{"cycle", cycleEnv, []int{1, 2, 3, 5, 8, 13, 40}}, // control never returns to the planner: only the limit ends it
	}
	for _, tt := range tests {
		for _, limit := range tt.limits {
			t.Run(fmt.Sprintf("%s/MaxTicks=%d", tt.name, limit), func(t *testing.T) {
				rt := newRuntime(t, tt.env(), hrl.Config{MaxTicks: limit})
				returned := 0
				for s := range uint64(6) {
					frames := playRandom(t, rt, s, s)
					last := frames[len(frames)-1]
					for _, spec := range rt.Agents() {
						takes := strings.Count(last.State.Trace, "takes:"+spec.Name+"(")
						gives := strings.Count(last.State.Trace, "gives:"+spec.Name+" ")
						assert.Equal(t, takes, gives, "seed %d, agent %s:\n%s", s, spec.Name, last.State.Trace)
					}
					for _, f := range frames {
						for _, r := range f.Reports {
							if r.Start && r.Term {
								returned++
							}
						}
					}
				}
				if limit != 1 {
					assert.Positive(t, returned, "no agent returned at once")
				}
			})
		}
	}
}
