package hrl_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
	"github.com/stretchr/testify/require"
)

// The test environments: a corridor of tiles 0, 1, 2, ... with the exit at tile 6.
// Planning agents choose how long the next leg is; walking agents walk it. Variants
// rearrange the same agents into the shapes the runtime must handle: a lateral on-done
// hand-over, three levels, End from a child, procedures, hooks, other raw action types.

// exit is the tile a planner wants to reach.
const exit = 6

// world is the state of the test environments.
type world struct {
	Pos    int    // where the walker stands
	Target int    // the end of the current leg
	Roll   int    // drawn from the reset's generator, 0..999
	Trace  string // what the hooks of hooked agents saw, in order
}

// view is what every test agent derives from the state: the state and its clock.
type view struct {
	world
	agent.Clock
}

// botObs is the typed observation of every test agent.
type botObs struct{ Pos, Target, Roll, Steps int }

// act is the decoded action of every test agent.
type act struct {
	By   string // the name of the agent that acted
	Move int    // tiles to move (negative: back)
	Leg  int    // a planning decision: the length of the next leg; 0 for none
	Here bool   // a planning decision of a leg of 0 tiles: the target is where the walker stands
}

// The errors the test environments reject actions with.
var (
	errStumble   = errors.New("test: the walker stumbles")      // from DecodeAction
	errBlocked   = errors.New("test: the corridor ends here")   // from the environment's Step
	errOvershoot = errors.New("test: the jump overshoots exit") // from the jump procedure
)

var obsSpace spaces.Space = spaces.Must(spaces.NewBox([]int{4}, 0, 1000))

// bot is a test agent put together from functions; R is its raw action type.
type bot[R agent.Raw] struct {
	name   string
	obs    spaces.Space // the observation space; nil means obsSpace
	space  spaces.Space // the action space
	decode func(v view, raw R) (act, error)
	done   func(v view) (terminated, truncated bool)
	reward func(prev view, a act, next view) float64
}

func (b *bot[R]) Name() string                               { return b.name }
func (b *bot[R]) ObservationSpace() spaces.Space             { return cmp.Or(b.obs, obsSpace) }
func (b *bot[R]) ActionSpace() spaces.Space                  { return b.space }
func (b *bot[R]) TranslateState(s world, c agent.Clock) view { return view{s, c} }
func (b *bot[R]) Observe(v view) botObs                      { return botObs{v.Pos, v.Target, v.Roll, v.Steps} }
func (b *bot[R]) EncodeObservation(dst []float32, o botObs)  { encodeObs(dst, o) }
func (b *bot[R]) DecodeAction(v view, raw R) (act, error)    { return b.decode(v, raw) }
func (b *bot[R]) Done(v view) (bool, bool)                   { return b.done(v) }
func (b *bot[R]) Reward(prev view, a act, next view) float64 { return b.reward(prev, a, next) }

func encodeObs(dst []float32, o botObs) {
	dst[0], dst[1], dst[2], dst[3] = float32(o.Pos), float32(o.Target), float32(o.Roll), float32(o.Steps)
}

func bind[R agent.Raw](b *bot[R]) hrl.Binding[world, act] { return hrl.Bind(b) }

func bindAll(bs ...hrl.Binding[world, act]) []hrl.Binding[world, act] { return bs }

// newPlanner returns a switching agent: action n plans a leg of n+1 tiles. It is
// terminated at the exit and truncated after 4 decisions. Its reward encodes what it is
// given, 100*next.Pos + 10*prev.Pos + leg, so tests read back both ends of a decision's
// span.
func newPlanner(name string) *bot[int64] {
	return &bot[int64]{
		name:   name,
		space:  spaces.Discrete{N: 3},
		decode: func(_ view, raw int64) (act, error) { return act{By: name, Leg: int(raw) + 1}, nil },
		done:   func(v view) (bool, bool) { return v.Pos >= exit, v.Steps >= 4 },
		reward: func(prev view, a act, next view) float64 { return float64(100*next.Pos + 10*prev.Pos + a.Leg) },
	}
}

// newWalker returns an agent that walks: action 0 moves back, 1 forward, and 2 stumbles
// (DecodeAction rejects it). It is terminated at its leg's target and truncated after
// maxSteps moves; a move earns its length.
func newWalker(name string, maxSteps int) *bot[int64] {
	return &bot[int64]{
		name:  name,
		space: spaces.Discrete{N: 3},
		decode: func(_ view, raw int64) (act, error) {
			switch raw {
			case 0:
				return act{By: name, Move: -1}, nil
			case 1:
				return act{By: name, Move: 1}, nil
			}
			return act{}, fmt.Errorf("%w (action %d)", errStumble, raw)
		},
		done:   func(v view) (bool, bool) { return v.Pos >= v.Target, v.Steps >= maxSteps },
		reward: func(_ view, a act, _ view) float64 { return float64(a.Move) },
	}
}

// doneAfter makes b terminate after n own steps.
func doneAfter[R agent.Raw](b *bot[R], n int) *bot[R] {
	b.done = func(v view) (bool, bool) { return v.Steps >= n, false }
	return b
}

// hooked adds every optional hook and an Informer to a bot. The hooks append to the
// state's Trace; OnTakesControl by a trigger lengthens the leg by one tile and
// OnGivesControl clears the target, so the tests see hooks change the state.
type hooked struct{ *bot[int64] }

// agentInfo is what a hooked agent's Info returns.
type agentInfo struct {
	Agent      string
	Pos, Steps int
}

func (h hooked) OnReset(s world) world {
	s.Trace += "reset:" + h.name + " "
	return s
}

func (h hooked) OnTakesControl(s world, sw agent.Switch[act]) world {
	s.Trace += fmt.Sprintf("takes:%s(%s,%s,%s,%d) ", h.name, sw.Cause, sw.Rule, sw.From, sw.Action.Leg)
	if sw.Cause == agent.ByTrigger {
		s.Target++
	}
	return s
}

func (h hooked) OnStep(s world, a act) world {
	s.Trace += fmt.Sprintf("step:%s(%d,%d) ", h.name, a.Leg, a.Move)
	return s
}

func (h hooked) OnGivesControl(s world) world {
	s.Trace += "gives:" + h.name + " "
	s.Target = 0
	return s
}

func (h hooked) Info(v view) any { return agentInfo{h.name, v.Pos, v.Steps} }

// masked adds an action mask to a planner: the legs that end within the corridor.
type masked struct{ *bot[int64] }

func (masked) ActionMask(v view, dst []bool) {
	for i := range dst {
		dst[i] = v.Pos+i+1 <= exit
	}
}

// maskedBox puts a mask on a Box action space, which New must reject.
type maskedBox struct{ *bot[[]float32] }

func (maskedBox) ActionMask(view, []bool) {}

// testEnv is a test environment: agents and machine as given, the corridor's dynamics.
type testEnv struct {
	agents  []hrl.Binding[world, act]
	machine transitions.Machine[world, act]
}

func (e *testEnv) Agents() []hrl.Binding[world, act]        { return e.agents }
func (e *testEnv) Machine() transitions.Machine[world, act] { return e.machine }
func (e *testEnv) InitialState(rng *rand.Rand) world        { return world{Roll: rng.IntN(1000)} }

// Step applies a planning decision (the leg's target) and a move. A move back from tile 0
// is rejected, and the state returned with the error is changed on purpose: the runtime
// must ignore it.
func (e *testEnv) Step(w world, a act) (world, error) {
	if a.Leg > 0 || a.Here {
		w.Target = w.Pos + a.Leg
	}
	w.Trace += "!"
	if w.Pos+a.Move < 0 {
		return w, fmt.Errorf("%w: tile %d", errBlocked, w.Pos+a.Move)
	}
	w.Trace = w.Trace[:len(w.Trace)-1]
	w.Pos += a.Move
	return w, nil
}

// envInfo is what testEnv's Info returns.
type envInfo struct{ Pos, Target int }

func (e *testEnv) Info(w world) any { return envInfo{w.Pos, w.Target} }

// plainEnv is a testEnv without an Informer.
type plainEnv struct{ e *testEnv }

func (p plainEnv) Agents() []hrl.Binding[world, act]        { return p.e.Agents() }
func (p plainEnv) Machine() transitions.Machine[world, act] { return p.e.Machine() }
func (p plainEnv) InitialState(rng *rand.Rand) world        { return p.e.InitialState(rng) }
func (p plainEnv) Step(w world, a act) (world, error)       { return p.e.Step(w, a) }

type trigger = transitions.Trigger[world, act]

// corridorEnv: the planner hands each leg to the walker, which returns control when done.
func corridorEnv() *testEnv {
	return &testEnv{
		agents: bindAll(bind(newPlanner("planner")), bind(newWalker("walker", 5))),
		machine: transitions.Machine[world, act]{
			Initial:   "planner",
			OnDone:    map[string]string{"planner": transitions.End, "walker": transitions.Parent},
			Triggers:  []trigger{{Name: "leg", From: "planner", To: "walker"}},
			Switching: []string{"planner"},
		},
	}
}

// maskedEnv is the corridor with a masked planner.
func maskedEnv() *testEnv {
	e := corridorEnv()
	e.agents[0] = hrl.Bind(masked{newPlanner("planner")})
	return e
}

// hookedEnv is the corridor with hooked agents; the "leg" trigger fires for legs of 1
// or 2 tiles only, so a leg of 3 matches no trigger after OnStep has run.
func hookedEnv() *testEnv {
	e := corridorEnv()
	e.agents = bindAll(hrl.Bind(hooked{newPlanner("planner")}), hrl.Bind(hooked{newWalker("walker", 5)}))
	e.machine.Triggers[0].When = func(a act) bool { return a.Leg <= 2 }
	return e
}

// lateralEnv: the planner hands a leg to a, whose on-done rule hands over to b at the
// same level; b inherits a's parent and returns control to it after two moves.
func lateralEnv() *testEnv {
	return &testEnv{
		agents: bindAll(bind(newPlanner("planner")), bind(newWalker("a", 5)), bind(doneAfter(newWalker("b", 5), 2))),
		machine: transitions.Machine[world, act]{
			Initial:   "planner",
			OnDone:    map[string]string{"planner": transitions.End, "a": "b", "b": transitions.Parent},
			Triggers:  []trigger{{Name: "leg", From: "planner", To: "a"}},
			Switching: []string{"planner"},
		},
	}
}

// hookedLateralEnv is lateralEnv with hooked agents.
func hookedLateralEnv() *testEnv {
	e := lateralEnv()
	e.agents = bindAll(hrl.Bind(hooked{newPlanner("planner")}), hrl.Bind(hooked{newWalker("a", 5)}), hrl.Bind(hooked{doneAfter(newWalker("b", 5), 2)}))
	return e
}

// hookAll replaces every agent of e by its hooked version.
func hookAll(e *testEnv, bots ...*bot[int64]) *testEnv {
	e.agents = e.agents[:0]
	for _, b := range bots {
		e.agents = append(e.agents, hrl.Bind(hooked{b}))
	}
	return e
}

// hookedEndFromChildEnv is endFromChildEnv with hooked agents.
func hookedEndFromChildEnv() *testEnv {
	return hookAll(endFromChildEnv(), newPlanner("planner"), newWalker("walker", 5))
}

// hookedThreeLevelEnv is threeLevelEnv with hooked agents.
func hookedThreeLevelEnv() *testEnv {
	return hookAll(threeLevelEnv(), newPlanner("top"), newPlanner("mid"), newWalker("low", 5))
}

// topLateralEnv: a acts at the top level until tile 2, then hands over to b, whose
// Parent rule, with no parent, ends the episode after one move.
func topLateralEnv() *testEnv {
	a := newWalker("a", 5)
	a.done = func(v view) (bool, bool) { return v.Pos >= 2, false }
	return &testEnv{
		agents: bindAll(bind(a), bind(doneAfter(newWalker("b", 5), 1))),
		machine: transitions.Machine[world, act]{
			Initial: "a",
			OnDone:  map[string]string{"a": "b", "b": transitions.Parent},
		},
	}
}

// threeLevelEnv: top plans for mid, mid plans for low, and low's on-done rule returns
// control straight to top, cutting mid's decision short.
func threeLevelEnv() *testEnv {
	return &testEnv{
		agents: bindAll(bind(newPlanner("top")), bind(newPlanner("mid")), bind(newWalker("low", 5))),
		machine: transitions.Machine[world, act]{
			Initial: "top",
			OnDone:  map[string]string{"top": transitions.End, "mid": transitions.Parent, "low": "top"},
			Triggers: []trigger{
				{Name: "plan", From: "top", To: "mid"},
				{Name: "order", From: "mid", To: "low"},
			},
			Switching: []string{"top", "mid"},
		},
	}
}

// endFromChildEnv: the corridor, but the walker's end ends the episode.
func endFromChildEnv() *testEnv {
	e := corridorEnv()
	e.machine.OnDone["walker"] = transitions.End
	return e
}

// jump is a procedure: the planner's leg is jumped within one step, unless it overshoots
// the exit.
func jump(w world, a act) (world, error) {
	if w.Pos+a.Leg > exit {
		return w, fmt.Errorf("%w: from %d by %d", errOvershoot, w.Pos, a.Leg)
	}
	w.Pos += a.Leg
	return w, nil
}

// procedureEnv: a leg of 3 is jumped by a procedure, a leg of 1 is walked, and a leg of 2
// matches no trigger of the switching planner.
func procedureEnv() *testEnv {
	return &testEnv{
		agents: bindAll(bind(newPlanner("planner")), bind(newWalker("walker", 5))),
		machine: transitions.Machine[world, act]{
			Initial: "planner",
			OnDone:  map[string]string{"planner": transitions.End, "walker": transitions.Parent},
			Triggers: []trigger{
				{Name: "jump", From: "planner", When: func(a act) bool { return a.Leg == 3 }, Run: jump},
				{Name: "leg", From: "planner", When: func(a act) bool { return a.Leg == 1 }, To: "walker"},
			},
			Switching: []string{"planner"},
		},
	}
}

// single is an environment of one agent, which ends the episode when done.
func single(b hrl.Binding[world, act]) *testEnv {
	return &testEnv{
		agents:  bindAll(b),
		machine: transitions.Machine[world, act]{Initial: b.Name(), OnDone: map[string]string{b.Name(): transitions.End}},
	}
}

// boxEnv has one agent with a Box action: it moves forward when the first entry is
// positive, and is done after 3 steps.
func boxEnv() *testEnv {
	return single(bind(doneAfter(&bot[[]float32]{
		name:   "box",
		space:  spaces.Must(spaces.NewBox([]int{2}, -1, 1)),
		decode: func(_ view, raw []float32) (act, error) { return act{By: "box", Move: int(max(0, raw[0]+0.5))}, nil },
		reward: func(view, act, view) float64 { return 0 },
	}, 3)))
}

// multiEnv has one agent with a MultiDiscrete action: it moves by the first entry.
func multiEnv() *testEnv {
	return single(bind(doneAfter(&bot[[]int64]{
		name:   "multi",
		space:  spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2})),
		decode: func(_ view, raw []int64) (act, error) { return act{By: "multi", Move: int(raw[0])}, nil },
		reward: func(view, act, view) float64 { return 0 },
	}, 3)))
}

// bitsEnv has one agent with a MultiBinary action: it moves by the first bit.
func bitsEnv() *testEnv {
	return single(bind(doneAfter(&bot[[]int64]{
		name:   "bits",
		space:  spaces.Must(spaces.NewMultiBinary(2)),
		decode: func(_ view, raw []int64) (act, error) { return act{By: "bits", Move: int(raw[0])}, nil },
		reward: func(view, act, view) float64 { return 0 },
	}, 3)))
}

func newRuntime(t testing.TB, env *testEnv, cfg hrl.Config) *hrl.Runtime[world, act] {
	t.Helper()
	rt, err := hrl.New(hrl.HierarchicalEnv[world, act](env), cfg)
	require.NoError(t, err)
	return rt
}

// rec is a report copied out of the runtime's buffers, for comparisons.
type rec struct {
	ID, Agent, Parent string
	Obs               []float32
	Mask              []bool
	Reward            float64
	Term, Trunc       bool
	Start             bool
	Span              int
	Clock             agent.Clock
}

// frame is a result copied out of the runtime's buffers, with the state after it.
type frame struct {
	Reports []rec
	Next    string
	Over    bool
	Tick    int
	State   world
}

func snap(rt *hrl.Runtime[world, act], res env.Turn) frame {
	f := frame{Next: res.Next, Over: res.Over, Tick: res.Tick, State: rt.State()}
	for _, r := range res.Reports {
		f.Reports = append(f.Reports, rec{r.AgentID, r.Agent, r.ParentID, slices.Clone(r.Obs), slices.Clone(r.Mask),
			r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks, r.Clock})
	}
	return f
}

// move is one step: the id that acts and its raw action.
type move struct {
	id  string
	raw agent.RawAction
}

func d(id string, v int64) move { return move{id, agent.Discrete(v)} }

// playMoves plays moves in order, failing the test on an error, and returns every frame.
func playMoves(t testing.TB, rt *hrl.Runtime[world, act], moves []move) []frame {
	t.Helper()
	var out []frame
	for i, m := range moves {
		res, err := rt.Step(m.id, m.raw)
		require.NoError(t, err, "move %d: %s %v", i, m.id, m.raw)
		out = append(out, snap(rt, res))
	}
	return out
}

// playRandom plays an episode with seeded random policies, one per agent, that retry
// when the runtime rejects an action, and returns every frame (ticks are capped).
func playRandom(t testing.TB, rt *hrl.Runtime[world, act], seed, policySeed uint64) []frame {
	t.Helper()
	policies := map[string]agent.Policy{}
	for i, spec := range rt.Agents() {
		p, err := agent.Random(spec.ActionSpace, rand.New(rand.NewPCG(policySeed, uint64(i))))
		require.NoError(t, err)
		policies[spec.Name] = p
	}
	res := mustReset(t, rt, seed)
	out := []frame{snap(rt, res)}
	for tries := 0; !res.Over && tries < 1000; tries++ {
		acting := res.Acting()
		require.NotNil(t, acting)
		raw, err := policies[acting.Agent].Act(context.Background(), acting.Obs, acting.Mask)
		require.NoError(t, err)
		next, err := rt.Step(acting.AgentID, raw)
		if err != nil {
			var se *env.StepError
			require.ErrorAs(t, err, &se)
			continue
		}
		res = next
		out = append(out, snap(rt, res))
	}
	require.True(t, res.Over, "the episode did not end")
	return out
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
