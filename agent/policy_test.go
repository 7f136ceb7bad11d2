package agent_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

var (
	_ agent.Policy = agent.PolicyFunc(nil)
	_ agent.Policy = (*agent.Script)(nil)
)

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func TestRandomErrors(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Space
		rng   *rand.Rand
		is    error // nil: only an error is required
		msg   string
	}{
		{"Dict", dict, seeded(1), agent.ErrActionSpace, "agent: not an action space: Dict("},
		{"Tuple", tuple, seeded(1), agent.ErrActionSpace, "agent: not an action space: Tuple("},
		{"Text", text, seeded(1), agent.ErrActionSpace, "agent: not an action space: Text("},
		{"nil space", nil, seeded(1), agent.ErrActionSpace, "agent: not an action space: <nil>"},
		{"nil *Discrete", (*spaces.Discrete)(nil), seeded(1), agent.ErrActionSpace, "agent: not an action space"},
		{"zero Discrete", spaces.Discrete{}, seeded(1), spaces.ErrInvalid, "agent: random policy: spaces: invalid space parameters: Discrete n is 0"},
		{"negative Discrete", spaces.Discrete{N: -3}, seeded(1), spaces.ErrInvalid, "Discrete n is -3"},
		{"nil rng", moves, nil, nil, "agent: random policy: nil *rand.Rand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := agent.Random(tt.space, tt.rng)
			require.Error(t, err)
			assert.Nil(t, p)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// draw returns n actions of p, their slices copied.
func draw(t *testing.T, p agent.Policy, n int, mask []bool) []agent.RawAction {
	t.Helper()
	out := make([]agent.RawAction, n)
	for i := range out {
		a, err := p.Act(t.Context(), nil, mask)
		require.NoError(t, err)
		out[i] = agent.RawAction{Int: a.Int, Ints: slices.Clone(a.Ints), Floats: slices.Clone(a.Floats)}
	}
	return out
}

func TestRandomSamples(t *testing.T) {
	wide := spaces.Must(spaces.NewMultiBinary(70)) // more bits than one Uint64
	tests := []struct {
		name     string
		space    spaces.Space
		distinct int // how many distinct actions 2000 draws must show at least
	}{
		{"Discrete", moves, 4},
		{"Discrete with Start", offset, 3},
		{"pointer to Discrete", &offset, 3},
		{"Box", box, 2000},
		{"Box with an infinite bound", halfOpen, 2000},
		{"MultiDiscrete", multiDisc, 6},
		{"MultiBinary", multiBin, 8},
		{"wide MultiBinary", wide, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := agent.Random(tt.space, seeded(7))
			require.NoError(t, err)
			actions := draw(t, p, 2000, nil)
			seen := map[string]bool{}
			for _, a := range actions {
				require.NoError(t, a.Check(tt.space), "%v", a)
				seen[a.String()] = true
			}
			assert.GreaterOrEqual(t, len(seen), tt.distinct)

			// The same seed gives the same actions, another seed others.
			again, err := agent.Random(tt.space, seeded(7))
			require.NoError(t, err)
			assert.Equal(t, actions, draw(t, again, 2000, nil))
			other, err := agent.Random(tt.space, seeded(8))
			require.NoError(t, err)
			assert.NotEqual(t, actions, draw(t, other, 2000, nil))

			// The mask is ignored except for Discrete spaces.
			if tt.space.Kind() != spaces.KindDiscrete {
				_, err := p.Act(t.Context(), nil, []bool{false})
				assert.NoError(t, err)
			}
		})
	}
}

func TestRandomMask(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Discrete
		mask  []bool
		want  []int64 // the allowed actions
	}{
		{"all allowed", moves, []bool{true, true, true, true}, []int64{0, 1, 2, 3}},
		{"two allowed", moves, []bool{true, false, true, false}, []int64{0, 2}},
		{"last only", moves, []bool{false, false, false, true}, []int64{3}},
		{"first only", moves, []bool{true, false, false, false}, []int64{0}},
		{"Start offset", offset, []bool{false, true, true}, []int64{0, 1}},
		{"Start offset, first only", offset, []bool{true, false, false}, []int64{-1}},
		{"no mask", offset, nil, []int64{-1, 0, 1}},
	}
	const draws = 4000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := agent.Random(tt.space, seeded(3))
			require.NoError(t, err)
			counts := map[int64]int{}
			for _, a := range draw(t, p, draws, tt.mask) {
				counts[a.Int]++
			}
			for v, n := range counts {
				assert.Contains(t, tt.want, v, "drew %d, which the mask forbids (%d times)", v, n)
			}
			for _, v := range tt.want {
				// Uniform among the allowed actions, within a loose margin.
				expect := draws / len(tt.want)
				assert.InDelta(t, expect, counts[v], float64(expect)/5, "action %d", v)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name string
			mask []bool
			is   error
			msg  string
		}{
			{"all false", []bool{false, false, false, false}, spaces.ErrEmptyMask, "agent: random policy: spaces: mask allows no value"},
			{"short", []bool{true, true}, spaces.ErrMaskLength, "mask has 2 entries, Discrete(4) has 4 values"},
			{"long", []bool{true, true, true, true, true}, spaces.ErrMaskLength, "mask has 5 entries"},
			{"empty", []bool{}, spaces.ErrMaskLength, "mask has 0 entries"},
		}
		p, err := agent.Random(moves, seeded(4))
		require.NoError(t, err)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a, err := p.Act(t.Context(), nil, tt.mask)
				require.ErrorIs(t, err, tt.is)
				assert.Contains(t, err.Error(), tt.msg)
				assert.Equal(t, agent.RawAction{}, a)

				// The policy still works afterwards.
				a, err = p.Act(t.Context(), nil, []bool{false, true, false, false})
				require.NoError(t, err)
				assert.Equal(t, agent.Discrete(1), a)
			})
		}
	})
}

// The slice of an action Random returns is the policy's buffer: the next call
// overwrites it.
func TestRandomBuffer(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Space
		data  func(agent.RawAction) any
	}{
		{"Box", box, func(a agent.RawAction) any { return a.Floats }},
		{"MultiDiscrete", multiDisc, func(a agent.RawAction) any { return a.Ints }},
		{"MultiBinary", spaces.Must(spaces.NewMultiBinary(64)), func(a agent.RawAction) any { return a.Ints }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := agent.Random(tt.space, seeded(5))
			require.NoError(t, err)
			first, err := p.Act(t.Context(), nil, nil)
			require.NoError(t, err)
			kept := fmt.Sprint(tt.data(first))
			var second agent.RawAction
			for range 20 { // until a draw differs from the first
				second, err = p.Act(t.Context(), nil, nil)
				require.NoError(t, err)
				if fmt.Sprint(tt.data(second)) != kept {
					break
				}
			}
			require.NotEqual(t, kept, fmt.Sprint(tt.data(second)))
			assert.Equal(t, fmt.Sprint(tt.data(second)), fmt.Sprint(tt.data(first)), "first action's slice is overwritten")
			switch {
			case first.Floats != nil:
				assert.Same(t, &first.Floats[0], &second.Floats[0])
			default:
				assert.Same(t, &first.Ints[0], &second.Ints[0])
			}
		})
	}
}

func TestRandomAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx := context.Background()
	obs := []float32{1, 2}
	tests := []struct {
		name  string
		space spaces.Space
		mask  []bool
	}{
		{"Discrete with a mask", moves, []bool{true, false, true, true}},
		{"Discrete", moves, nil},
		{"Box", box, nil},
		{"MultiDiscrete", multiDisc, nil},
		{"MultiBinary", multiBin, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := agent.Random(tt.space, seeded(6))
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := p.Act(ctx, obs, tt.mask); err != nil {
					panic(err)
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

func TestScripted(t *testing.T) {
	script := []agent.RawAction{agent.Discrete(2), agent.Continuous([]float32{0.5}), agent.MultiInts([]int64{1, 0})}
	type step struct {
		op   string // "act", "rewind", "loop", "noloop"
		want string // the action's String, or "end" for ErrScriptEnded
	}
	tests := []struct {
		name    string
		actions []agent.RawAction
		loop    bool
		steps   []step
	}{
		{
			name:    "in order, then ended",
			actions: script,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "end"}, {"act", "end"}},
		},
		{
			name:    "loop",
			actions: script,
			loop:    true,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "2"}},
		},
		{
			name:    "rewind midway",
			actions: script,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"rewind", ""}, {"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "end"}},
		},
		{
			name:    "rewind after the end",
			actions: script,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "end"}, {"rewind", ""}, {"act", "2"}},
		},
		{
			name:    "loop switched on after the end",
			actions: script,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"act", "end"}, {"loop", ""}, {"act", "2"}},
		},
		{
			name:    "loop switched off",
			actions: script,
			loop:    true,
			steps:   []step{{"act", "2"}, {"act", "[0.5]"}, {"act", "[1 0]"}, {"noloop", ""}, {"act", "end"}},
		},
		{name: "empty", steps: []step{{"act", "end"}, {"rewind", ""}, {"act", "end"}}},
		{name: "empty loop", loop: true, steps: []step{{"act", "end"}, {"act", "end"}}},
		{
			name:    "one action, loop",
			actions: []agent.RawAction{agent.Discrete(7)},
			loop:    true,
			steps:   []step{{"act", "7"}, {"act", "7"}, {"act", "7"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := agent.Scripted(tt.actions...)
			s.Loop = tt.loop
			played := 0
			for i, st := range tt.steps {
				switch st.op {
				case "rewind":
					s.Rewind()
					played = 0
					continue
				case "loop", "noloop":
					s.Loop = st.op == "loop"
					continue
				}
				a, err := s.Act(t.Context(), []float32{9}, []bool{false})
				if st.want == "end" {
					require.ErrorIs(t, err, agent.ErrScriptEnded, "step %d", i)
					assert.Equal(t, fmt.Sprintf("agent: scripted policy has no more actions (played %d)", played), err.Error())
					assert.Equal(t, agent.RawAction{}, a)
					continue
				}
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, st.want, a.String(), "step %d", i)
				played = (played % max(len(tt.actions), 1)) + 1
			}
		})
	}

	t.Run("ignores the context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		a, err := agent.Scripted(agent.Discrete(1)).Act(ctx, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, agent.Discrete(1), a)
	})

	t.Run("plays the actions as given", func(t *testing.T) {
		floats := []float32{0.25}
		s := agent.Scripted(agent.Continuous(floats))
		floats[0] = 0.75
		a, err := s.Act(t.Context(), nil, nil)
		require.NoError(t, err)
		assert.Same(t, &floats[0], &a.Floats[0])
	})
}

func TestPolicyFunc(t *testing.T) {
	type key struct{}
	errBusy := errors.New("busy")
	tests := []struct {
		name    string
		obs     []float32
		mask    []bool
		wantErr error
		want    agent.RawAction
	}{
		{"first allowed action", []float32{1, 2}, []bool{false, true, true}, nil, agent.Discrete(1)},
		{"no mask", []float32{3}, nil, nil, agent.Discrete(0)},
		{"error", nil, []bool{false}, errBusy, agent.RawAction{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.WithValue(t.Context(), key{}, tt.name)
			calls := 0
			var p agent.Policy = agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
				calls++
				assert.Equal(t, tt.name, ctx.Value(key{}))
				assert.Equal(t, tt.obs, obs)
				assert.Equal(t, tt.mask, mask)
				if !slices.Contains(mask, true) && mask != nil {
					return agent.RawAction{}, errBusy
				}
				return agent.Discrete(int64(max(slices.Index(mask, true), 0))), nil
			})
			a, err := p.Act(ctx, tt.obs, tt.mask)
			assert.Equal(t, 1, calls)
			assert.ErrorIs(t, err, tt.wantErr)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.want, a)
		})
	}
}
