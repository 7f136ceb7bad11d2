package hrl_test

import (
	"errors"
	"testing"

	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/transitions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/multierr"
)

func TestNewRejects(t *testing.T) {
	discrete := spaces.Discrete{N: 2}
	box := spaces.Must(spaces.NewBox([]int{2}, -1, 1))
	multi := spaces.Must(spaces.NewMultiDiscrete([]int64{2, 2}))
	bits := spaces.Must(spaces.NewMultiBinary(3))
	intBot := func(name string, space spaces.Space) hrl.Binding[world, act] {
		b := newWalker(name, 5)
		b.space = space
		return bind(b)
	}
	floatBot := func(name string, space spaces.Space) hrl.Binding[world, act] {
		return bind(&bot[[]float32]{name: name, space: space})
	}
	intsBot := func(name string, space spaces.Space) hrl.Binding[world, act] {
		return bind(&bot[[]int64]{name: name, space: space})
	}
	// with replaces the corridor's walker.
	with := func(walker hrl.Binding[world, act]) func(*testEnv) {
		return func(e *testEnv) { e.agents[1] = walker }
	}
	tests := []struct {
		name     string
		change   func(*testEnv)
		cfg      hrl.Config
		want     []string // every message, in any order
		machine  bool     // some of the problems are the machine's: errors.Is transitions.ErrInvalid
		problems int      // how many problems are reported, when not len(want)
	}{
		{
			name:   "int64 raw actions for a Box space",
			change: with(intBot("walker", box)),
			want:   []string{`hrl: agent "walker": raw action type int64 needs a discrete action space, not Box(`},
		},
		{
			name:   "int64 raw actions for a MultiDiscrete space",
			change: with(intBot("walker", multi)),
			want:   []string{`hrl: agent "walker": raw action type int64 needs a discrete action space, not MultiDiscrete(`},
		},
		{
			name:   "float32 raw actions for a Discrete space",
			change: with(floatBot("walker", discrete)),
			want:   []string{`hrl: agent "walker": raw action type []float32 needs a box action space, not Discrete(2)`},
		},
		{
			name:   "float32 raw actions for a MultiBinary space",
			change: with(floatBot("walker", bits)),
			want:   []string{`hrl: agent "walker": raw action type []float32 needs a box action space, not MultiBinary(`},
		},
		{
			name:   "int64 slices for a Discrete space",
			change: with(intsBot("walker", discrete)),
			want:   []string{`hrl: agent "walker": raw action type []int64 needs a MultiDiscrete or MultiBinary action space, not Discrete(2)`},
		},
		{
			name:   "int64 slices for a Box space",
			change: with(intsBot("walker", box)),
			want:   []string{`hrl: agent "walker": raw action type []int64 needs a MultiDiscrete or MultiBinary action space, not Box(`},
		},
		{
			name:   "a space that cannot be an action space",
			change: with(intsBot("walker", spaces.Must(spaces.NewDict(spaces.DictEntry{Key: "a", Space: discrete})))),
			want:   []string{`hrl: agent "walker": raw action type []int64 needs a MultiDiscrete or MultiBinary action space, not Dict(`},
		},
		{
			name:   "an action mask on a Box space",
			change: with(hrl.Bind(maskedBox{&bot[[]float32]{name: "walker", space: box}})),
			want:   []string{`hrl: agent "walker": an action mask needs a Discrete action space, not Box(`},
		},
		{
			name:   "no action space",
			change: with(intBot("walker", nil)),
			want:   []string{`hrl: agent "walker": nil observation or action space`},
		},
		{
			name: "an observation space without dimensions",
			change: func(e *testEnv) {
				b := newWalker("walker", 5)
				b.obs = spaces.Must(spaces.NewDict())
				e.agents[1] = bind(b)
			},
			want: []string{`hrl: agent "walker": observation space Dict() has no dimensions`},
		},
		{
			name:   "a nil binding",
			change: func(e *testEnv) { e.agents = append(e.agents, nil) },
			// The machine is compiled against the names that are there, so the nil
			// binding's missing name is reported too.
			want:    []string{"hrl: agent #2 is nil", `transitions: rule "agents": empty agent name`, `rule "on-done": no on-done entry`},
			machine: true,
		},
		{
			name: "a negative tick limit",
			cfg:  hrl.Config{MaxTicks: -1},
			want: []string{"hrl: Config.MaxTicks is -1; want 0 (no limit) or more"},
		},
		{
			name:    "an unknown initial agent",
			change:  func(e *testEnv) { e.machine.Initial = "boss" },
			want:    []string{`transitions: rule "initial": agent "boss": initial agent is not an agent of the environment`},
			machine: true,
		},
		{
			name:    "an unknown trigger target and a missing on-done entry",
			change:  func(e *testEnv) { e.machine.Triggers[0].To = "runner"; delete(e.machine.OnDone, "walker") },
			want:    []string{`target "runner" is not an agent of the environment`, `agent "walker": no on-done entry`},
			machine: true,
		},
		{
			name:     "no agents",
			change:   func(e *testEnv) { e.agents = nil },
			want:     []string{"the environment has no agents", `agent "planner": initial agent is not an agent of the environment`},
			machine:  true,
			problems: 7, // and every rule naming an agent
		},
		{
			name:    "a duplicate agent",
			change:  func(e *testEnv) { e.agents = append(e.agents, e.agents[1]) },
			want:    []string{`agent "walker": duplicate agent name`},
			machine: true,
		},
		{
			name: "everything at once",
			change: func(e *testEnv) {
				e.agents = append(e.agents,
					intBot("boxer", box),
					hrl.Bind(maskedBox{&bot[[]float32]{name: "masker", space: box}}))
				e.machine.OnDone["ghost"] = transitions.End
				e.machine.Triggers = append(e.machine.Triggers, trigger{Name: "leg", From: "walker", To: "planner"})
			},
			cfg: hrl.Config{MaxTicks: -5},
			want: []string{
				"hrl: Config.MaxTicks is -5",
				`hrl: agent "boxer": raw action type int64 needs a discrete action space`,
				`hrl: agent "masker": an action mask needs a Discrete action space`,
				`agent "ghost": on-done entry for an agent the environment does not have`,
				`rule "leg": agent "walker": duplicate trigger name`,
				`agent "boxer": no on-done entry`,
				`agent "masker": no on-done entry`,
			},
			machine: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := corridorEnv()
			if tt.change != nil {
				tt.change(env)
			}
			rt, err := hrl.New(hrl.HierarchicalEnv[world, act](env), tt.cfg)
			require.Error(t, err)
			assert.Nil(t, rt)
			msg := err.Error()
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			if tt.problems == 0 {
				tt.problems = len(tt.want)
			}
			assert.Len(t, multierr.Errors(err), tt.problems, "one error per problem:\n%s", msg)
			assert.Equal(t, tt.machine, errors.Is(err, transitions.ErrInvalid))
			if tt.machine {
				assert.NotEmpty(t, transitions.Errors(err))
			}
		})
	}
}

// TestNewAccepts builds every test environment.
func TestNewAccepts(t *testing.T) {
	for name, env := range map[string]func() *testEnv{
		"corridor": corridorEnv, "masked": maskedEnv, "hooks": hookedEnv, "lateral": lateralEnv,
		"hooked lateral": hookedLateralEnv, "top-level lateral": topLateralEnv, "three levels": threeLevelEnv,
		"end from a child": endFromChildEnv, "procedure": procedureEnv, "box": boxEnv, "multi": multiEnv, "bits": bitsEnv,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := hrl.New(hrl.HierarchicalEnv[world, act](env()), hrl.Config{MaxTicks: 100})
			require.NoError(t, err)
		})
	}
}
