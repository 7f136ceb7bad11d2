package hrltest_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/hrl/hrltest"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The environment under check: a corridor whose exit is tile 6. A planner picks legs of
// 1 to 3 tiles, masking those that pass the exit (but accepting them: a mask is advice);
// a walker walks them, masking a move back from tile 0, which the environment refuses.
// Each knob breaks one contract.
type knobs struct {
	wideObs  bool   // the walker's observation leaves its space
	counter  *int   // InitialState reads and bumps a counter shared by every environment
	mapOrder bool   // InitialState takes the first key of a map: random order
	mutate   bool   // Step changes the state's slice in place, even when it refuses the move
	panicAt  int    // Step panics on reaching this tile (0: never)
	badMask  string // "allows refused": the walker's mask allows the move back from 0;
	// "too long": it writes past its end; "empty": it allows nothing
	nanReward bool // the walker's reward is NaN
	machine   func(*transitions.Machine[state, action])
}

const exit = 6

type state struct {
	Pos, Target int
	Noise       int
	Visits      []int // shared by the copies of a state: Step must not change it in place
}

type action struct {
	By        string
	Move, Leg int
}

var errBlocked = errors.New("test: the corridor ends here")

var obsSpace = spaces.Must(spaces.NewBox([]int{4}, 0, 1000))

func encode(dst []float32, s state, scale int) {
	dst[0], dst[1], dst[2], dst[3] = float32(s.Pos*scale), float32(s.Target), float32(s.Noise), float32(s.Visits[0])
}

type view struct {
	state
	agent.Clock
}

type planner struct{}

func (planner) Name() string                               { return "planner" }
func (planner) ObservationSpace() spaces.Space             { return obsSpace }
func (planner) ActionSpace() spaces.Space                  { return spaces.Discrete{N: 3} }
func (planner) TranslateState(s state, c agent.Clock) view { return view{s, c} }
func (planner) Observe(v view) state                       { return v.state }
func (planner) EncodeObservation(dst []float32, s state)   { encode(dst, s, 1) }
func (planner) Done(v view) (bool, bool)                   { return v.Pos >= exit, v.Steps >= 6 }
func (planner) Reward(_ view, _ action, next view) float64 { return float64(next.Pos) }
func (planner) DecodeAction(_ view, raw int64) (action, error) {
	return action{By: "planner", Leg: int(raw) + 1}, nil
}

func (planner) ActionMask(v view, dst []bool) {
	for i := range dst {
		dst[i] = v.Pos+i+1 <= exit
	}
}

type walker struct{ k *knobs }

func (walker) Name() string                               { return "walker" }
func (walker) ObservationSpace() spaces.Space             { return obsSpace }
func (walker) ActionSpace() spaces.Space                  { return spaces.Discrete{N: 2} }
func (walker) TranslateState(s state, c agent.Clock) view { return view{s, c} }
func (walker) Observe(v view) state                       { return v.state }
func (w walker) EncodeObservation(dst []float32, s state) {
	scale := 1
	if w.k.wideObs {
		scale = 1000
	}
	encode(dst, s, scale)
}
func (walker) Done(v view) (bool, bool) { return v.Pos >= v.Target, v.Steps >= 8 }
func (w walker) Reward(_ view, a action, _ view) float64 {
	if w.k.nanReward {
		return math.NaN()
	}
	return float64(a.Move)
}
func (walker) DecodeAction(_ view, raw int64) (action, error) {
	return action{By: "walker", Move: 2*int(raw) - 1}, nil
}

func (w walker) ActionMask(v view, dst []bool) {
	switch w.k.badMask {
	case "allows refused":
		dst[0], dst[1] = true, true
	case "too long":
		for i := range 3 {
			dst[i] = true
		}
	case "empty":
		dst[0], dst[1] = false, false
	default:
		dst[0], dst[1] = v.Pos > 0, true
	}
}

type env struct{ k *knobs }

func (e env) Agents() []hrl.Binding[state, action] {
	return []hrl.Binding[state, action]{hrl.Bind(planner{}), hrl.Bind(walker{e.k})}
}

func (e env) Machine() transitions.Machine[state, action] {
	m := transitions.Machine[state, action]{
		Initial:   "planner",
		OnDone:    map[string]string{"planner": transitions.End, "walker": transitions.Parent},
		Triggers:  []transitions.Trigger[state, action]{{Name: "leg", From: "planner", To: "walker"}},
		Switching: []string{"planner"},
	}
	if e.k.machine != nil {
		e.k.machine(&m)
	}
	return m
}

func (e env) InitialState(rng *rand.Rand) state {
	s := state{Noise: rng.IntN(100), Visits: []int{0}}
	if e.k.counter != nil {
		*e.k.counter++
		s.Noise = *e.k.counter % 100
	}
	if e.k.mapOrder {
		for k := range map[int]bool{10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true} {
			s.Noise = k
			break
		}
	}
	return s
}

func (e env) Step(s state, a action) (state, error) {
	if a.Leg > 0 {
		s.Target = s.Pos + a.Leg
	}
	if e.k.mutate {
		s.Visits[0]++ // wrong: the slice is shared with the runtime's copies of the state
	} else {
		s.Visits = []int{s.Visits[0]}
	}
	if s.Pos+a.Move < 0 {
		return s, errBlocked
	}
	s.Pos += a.Move
	if e.k.panicAt > 0 && s.Pos == e.k.panicAt {
		panic(fmt.Sprintf("test: tile %d is on fire", s.Pos))
	}
	return s, nil
}

func newEnv(k knobs) func() hrl.HierarchicalEnv[state, action] {
	return func() hrl.HierarchicalEnv[state, action] { return env{&k} }
}

func TestRunAcceptsGoodEnvironments(t *testing.T) {
	tests := []struct {
		name string
		run  func() error
	}{
		{"corridor", func() error { return hrltest.Run(newEnv(knobs{}), hrltest.Options{}) }},
		{"corridor, other seeds", func() error { return hrltest.Run(newEnv(knobs{}), hrltest.Options{Episodes: 50, Seed: 1000}) }},
		{"corridor with a tick limit", func() error {
			return hrltest.Run(newEnv(knobs{}), hrltest.Options{Config: hrl.Config{MaxTicks: 5}})
		}},
		{"corridor cut by Options.MaxTicks", func() error { return hrltest.Run(newEnv(knobs{}), hrltest.Options{MaxTicks: 3}) }},
		{"maze", func() error { return hrltest.Run(mazeEnv(maze.Config{}), hrltest.Options{Episodes: 10}) }},
		{"maze with the walk procedure", func() error {
			return hrltest.Run(mazeEnv(maze.Config{Procedure: true}), hrltest.Options{Episodes: 10})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.run())
		})
	}
}

func mazeEnv(cfg maze.Config) func() hrl.HierarchicalEnv[maze.State, maze.Action] {
	return func() hrl.HierarchicalEnv[maze.State, maze.Action] {
		e, err := maze.NewEnv(cfg)
		if err != nil {
			panic(err)
		}
		return e
	}
}

func TestRunCatchesBrokenEnvironments(t *testing.T) {
	tests := []struct {
		name  string
		knobs knobs
		want  []string // substrings of the error
	}{
		{
			name:  "an observation outside its space",
			knobs: knobs{wideObs: true},
			want:  []string{"agent walker_0: observation is not a flat encoding of Box(", "[0]: 2000 is above the high bound 1000"},
		},
		{
			name:  "a counter shared between environments",
			knobs: knobs{counter: new(int)},
			want:  []string{"reset: two resets with the same seed differ"},
		},
		{
			name:  "map iteration order",
			knobs: knobs{mapOrder: true},
			want:  []string{"reset: two resets with the same seed differ"},
		},
		{
			name:  "a refused action changes the state in place",
			knobs: knobs{mutate: true},
			want:  []string{"the same seed and actions gave different results (or a rejected action changed the state)"},
		},
		{
			name:  "an invalid switching machine",
			knobs: knobs{machine: func(m *transitions.Machine[state, action]) { delete(m.OnDone, "walker") }},
			want:  []string{"hrltest: hrl.New: ", `agent "walker": no on-done entry`},
		},
		{
			name:  "a trigger to an unknown agent",
			knobs: knobs{machine: func(m *transitions.Machine[state, action]) { m.Triggers[0].To = "runner" }},
			want:  []string{"hrltest: hrl.New: ", `target "runner" is not an agent of the environment`},
		},
		{
			name:  "a panic in Step",
			knobs: knobs{panicAt: 2},
			want:  []string{"hrltest: seed 0: panic: test: tile 2 is on fire", "hrltest_test.env.Step"},
		},
		{
			name:  "a mask that allows an action the environment refuses",
			knobs: knobs{badMask: "allows refused"},
			want:  []string{"agent walker_0, action 0 from its mask was rejected", "test: the corridor ends here"},
		},
		{
			name:  "a mask longer than the action space",
			knobs: knobs{badMask: "too long"},
			want:  []string{"panic: runtime error: index out of range [2] with length 2", "ActionMask"},
		},
		{
			name:  "a mask that allows nothing",
			knobs: knobs{badMask: "empty"},
			want:  []string{"agent walker_0 must act but its mask allows no action"},
		},
		{
			name:  "a reward that is not a number",
			knobs: knobs{nanReward: true},
			want:  []string{"agent walker_0: reward NaN is not finite"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = hrltest.Run(newEnv(tt.knobs), hrltest.Options{}) })
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestRunStopsAtThePanic: a panic ends the check, reporting the problems found before.
func TestRunStopsAtThePanic(t *testing.T) {
	err := hrltest.Run(newEnv(knobs{panicAt: 5}), hrltest.Options{Episodes: 30})
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "panic:"), "one panic reported:\n%s", err)
}

// tb records what Check reports.
type tb struct {
	testing.TB
	errs []string
}

func (r *tb) Helper()           {}
func (r *tb) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *tb) Errorf(f string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(f, args...))
}

func TestCheck(t *testing.T) {
	good := &tb{TB: t}
	hrltest.Check(good, newEnv(knobs{}), hrltest.Options{Episodes: 5})
	assert.Empty(t, good.errs)

	bad := &tb{TB: t}
	hrltest.Check(bad, newEnv(knobs{nanReward: true}), hrltest.Options{Episodes: 5})
	require.Len(t, bad.errs, 1)
	assert.Contains(t, bad.errs[0], "is not finite")
}

// mover is an agent of any raw action type that walks by move(raw) tiles a step, for
// 10 steps; its environment has no other agent.
type mover[R agent.Raw] struct {
	space spaces.Space
	move  func(R) int
}

func (mover[R]) Name() string                               { return "mover" }
func (mover[R]) ObservationSpace() spaces.Space             { return spaces.Discrete{N: 21} }
func (m mover[R]) ActionSpace() spaces.Space                { return m.space }
func (mover[R]) TranslateState(s state, c agent.Clock) view { return view{s, c} }
func (mover[R]) Observe(v view) int                         { return v.Pos + 10 }
func (mover[R]) Done(v view) (bool, bool)                   { return false, v.Steps >= 10 }
func (mover[R]) Reward(prev view, _ action, next view) float64 {
	return float64(next.Pos - prev.Pos)
}
func (mover[R]) EncodeObservation(dst []float32, o int) {
	clear(dst)
	dst[o] = 1
}
func (m mover[R]) DecodeAction(_ view, raw R) (action, error) {
	return action{By: "mover", Move: m.move(raw)}, nil
}

type moverEnv[R agent.Raw] struct{ m mover[R] }

func (e moverEnv[R]) Agents() []hrl.Binding[state, action] {
	return []hrl.Binding[state, action]{hrl.Bind(e.m)}
}
func (e moverEnv[R]) Machine() transitions.Machine[state, action] {
	return transitions.Machine[state, action]{Initial: "mover", OnDone: map[string]string{"mover": transitions.End}}
}
func (e moverEnv[R]) InitialState(*rand.Rand) state { return state{Visits: []int{0}} }
func (e moverEnv[R]) Step(s state, a action) (state, error) {
	s.Pos += a.Move
	return s, nil
}

func TestRunOtherActionSpaces(t *testing.T) {
	sign := func(x float32) int {
		if x < 0 {
			return -1
		}
		return 1
	}
	box := moverEnv[[]float32]{mover[[]float32]{spaces.Must(spaces.NewBox([]int{2}, -1, 1)), func(r []float32) int { return sign(r[0]) }}}
	multi := moverEnv[[]int64]{mover[[]int64]{spaces.Must(spaces.NewMultiDiscrete([]int64{3})), func(r []int64) int { return int(r[0]) - 1 }}}
	bits := moverEnv[[]int64]{mover[[]int64]{spaces.Must(spaces.NewMultiBinary(2)), func(r []int64) int { return int(r[0] - r[1]) }}}
	for name, e := range map[string]hrl.HierarchicalEnv[state, action]{"box": box, "multi-discrete": multi, "multi-binary": bits} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, hrltest.Run(func() hrl.HierarchicalEnv[state, action] { return e }, hrltest.Options{Episodes: 5}))
		})
	}
}

// TestRunCatchesAgentsDoneWhenTheyTakeControl: an agent that takes control already done
// acts once anyway, so the key-and-door walker sent to the tile it stands on steps away
// and back. Run reports it, with the remedies, unless the environment takes one.
func TestRunCatchesAgentsDoneWhenTheyTakeControl(t *testing.T) {
	tests := []struct {
		name  string
		knobs keyKnobs
		want  []string // substrings of the error; none: no error
	}{
		{
			name:  "a planner picks the tile the walker stands on",
			knobs: keyKnobs{},
			want: []string{
				"agent walker_1 is already done (terminated by its Done) when it takes control after planner_0 played 0",
				"it acts at least once before its Done is asked again",
				"Either refuse that action in planner's DecodeAction (and rule it out in its action mask) when walker would be done,",
				"or let walker return control at once (implement agent.AtOnceReturner)",
			},
		},
		{name: "the walker returns at once", knobs: keyKnobs{atOnce: true}},
		{name: "the planner refuses the tile the walker stands on", knobs: keyKnobs{refuseHere: true}},
		{
			name:  "the on-done table hands control to a relay that is done",
			knobs: keyKnobs{relay: true},
			want: []string{
				"agent relay_0 is already done (terminated by its Done) when it takes control from the on-done table after walker_0 played 0",
				"Either hand control to relay only when it is not done, or let it return control at once (implement agent.AtOnceReturner)",
			},
		},
		{name: "the walker and the relay return at once", knobs: keyKnobs{relay: true, atOnce: true}},
		{
			name:  "an on-done cycle of agents that return at once",
			knobs: keyKnobs{cycle: true, atOnce: true},
			want:  []string{"and acts: it returned at once earlier in this step", "break the cycle in the machine's OnDone"},
		},
		{
			name:  "the initial agent is done at reset",
			knobs: keyKnobs{startAtExit: true, atOnce: true},
			want: []string{
				"hrltest: seed 0: reset: agent planner_0 is already done (terminated by its Done) when it takes control at reset",
				"start episodes where it is not done (InitialState, OnReset)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cfg := range []hrl.Config{{}, {MaxTicks: 7}} {
				err := hrltest.Run(newKeyEnv(tt.knobs), hrltest.Options{Config: cfg})
				if len(tt.want) == 0 {
					require.NoError(t, err, "MaxTicks %d", cfg.MaxTicks)
					continue
				}
				require.Error(t, err, "MaxTicks %d", cfg.MaxTicks)
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w, "MaxTicks %d", cfg.MaxTicks)
				}
			}
		})
	}
}

// TestCheckReportsAgentsDoneWhenTheyTakeControl: Check, which tests call, fails on the
// trap, names the tick, and passes once the walker returns at once.
func TestCheckReportsAgentsDoneWhenTheyTakeControl(t *testing.T) {
	bad := &tb{TB: t}
	hrltest.Check(bad, newKeyEnv(keyKnobs{}), hrltest.Options{})
	require.Len(t, bad.errs, 1)
	assert.Regexp(t, `^hrltest: seed \d+: tick \d+: agent walker_\d+ is already done .* after planner_0 played \d: `, bad.errs[0])

	good := &tb{TB: t}
	hrltest.Check(good, newKeyEnv(keyKnobs{atOnce: true}), hrltest.Options{})
	assert.Empty(t, good.errs)
}

// TestRunCatchesInPlaceThatDisagrees: an agent that embeds the maze's strategy and
// overrides its Reward still has the strategy's agent.InPlace, which scores with the
// strategy's own Reward. Run steps one runtime through the methods and one through
// InPlace, and reports the difference.
func TestRunCatchesInPlaceThatDisagrees(t *testing.T) {
	newEnv := func() hrl.HierarchicalEnv[maze.State, maze.Action] {
		e, err := maze.NewEnv(maze.Config{})
		require.NoError(t, err)
		return sevenMaze{Env: e}
	}
	err := hrltest.Run(newEnv, hrltest.Options{Episodes: 2, Seed: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent.InPlace disagrees with its methods")

	// With InPlace hidden, the same agent keeps every contract.
	hidden := func() hrl.HierarchicalEnv[maze.State, maze.Action] {
		e, err := maze.NewEnv(maze.Config{})
		require.NoError(t, err)
		return sevenMaze{Env: e, hide: true}
	}
	require.NoError(t, hrltest.Run(hidden, hrltest.Options{Episodes: 2, Seed: 1}))
}

// sevenMaze is the maze with a strategy whose Reward is 7 for every decision.
type sevenMaze struct {
	*maze.Env
	hide bool // bind the strategy without its agent.InPlace
}

func (e sevenMaze) Agents() []hrl.Binding[maze.State, maze.Action] {
	strategy := sevenStrategy{maze.NewStrategy(e.Maze(), e.Config().Strategy)}
	b := hrl.Bind(strategy)
	if e.hide {
		b = hrl.Bind(methodsOnly{strategy})
	}
	return []hrl.Binding[maze.State, maze.Action]{b, e.Env.Agents()[1]}
}

type sevenStrategy struct{ *maze.Strategy }

func (sevenStrategy) Reward(maze.View, maze.Action, maze.View) float64 { return 7 }

// methodsOnly is the strategy without agent.InPlace: its ObserveTo, of another
// signature, hides the promoted one.
type methodsOnly struct{ sevenStrategy }

func (methodsOnly) ObserveTo() {}
