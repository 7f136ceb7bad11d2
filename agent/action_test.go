package agent_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/spaces"
)

// The action spaces of the tests.
var (
	moves      = spaces.Discrete{N: 4}            // {0, 1, 2, 3}
	offset     = spaces.Discrete{N: 3, Start: -1} // {-1, 0, 1}
	box        = spaces.Must(spaces.NewBox([]int{2}, -1, 1))
	halfOpen   = spaces.Must(spaces.NewBoxBounds([]int{2}, []float32{0, float32(math.Inf(-1))}, []float32{1, 5}))
	multiDisc  = spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2}))
	multiBin   = spaces.Must(spaces.NewMultiBinary(3))
	dict       = spaces.Must(spaces.NewDict(spaces.DictEntry{Key: "a", Space: moves}))
	tuple      = spaces.Must(spaces.NewTuple(moves))
	text       = spaces.Must(spaces.NewText(0, 4, "ab"))
	nonActions = []spaces.Space{dict, tuple, text}
)

func TestConstructors(t *testing.T) {
	floats, ints := []float32{0.5, -1}, []int64{2, 0}
	tests := []struct {
		name   string
		got    agent.RawAction
		want   agent.RawAction
		str    string
		space  spaces.Space
		value  any
		member bool // of space
	}{
		{"zero value", agent.RawAction{}, agent.RawAction{Int: 0}, "0", moves, int64(0), true},
		{"Discrete", agent.Discrete(3), agent.RawAction{Int: 3}, "3", moves, int64(3), true},
		{"negative Discrete", agent.Discrete(-1), agent.RawAction{Int: -1}, "-1", offset, int64(-1), true},
		{"Continuous", agent.Continuous(floats), agent.RawAction{Floats: floats}, "[0.5 -1]", box, floats, true},
		{"empty Continuous", agent.Continuous([]float32{}), agent.RawAction{Floats: []float32{}}, "[]", box, []float32{}, false},
		{"MultiInts for MultiDiscrete", agent.MultiInts(ints), agent.RawAction{Ints: ints}, "[2 0]", multiDisc, ints, true},
		{"MultiInts for MultiBinary", agent.MultiInts([]int64{1, 0, 1}), agent.RawAction{Ints: []int64{1, 0, 1}}, "[1 0 1]", multiBin, []int64{1, 0, 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
			assert.Equal(t, tt.str, tt.got.String())
			assert.Equal(t, tt.value, tt.got.Value(tt.space))
			// Value is what the space's own Check takes.
			assert.Equal(t, tt.member, tt.space.Check(tt.got.Value(tt.space)) == nil)
			assert.Equal(t, tt.member, tt.got.Check(tt.space) == nil)
		})
	}

	t.Run("no copy", func(t *testing.T) {
		f := []float32{0.25}
		c := agent.Continuous(f)
		f[0] = 0.75
		assert.Equal(t, []float32{0.75}, c.Floats)
		i := []int64{1}
		m := agent.MultiInts(i)
		i[0] = 2
		assert.Equal(t, []int64{2}, m.Ints)
	})
}

func TestCheck(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name   string
		action agent.RawAction
		space  spaces.Space
		want   []string // substrings of the error; nil: a member
	}{
		{"Discrete low", agent.Discrete(0), moves, nil},
		{"Discrete high", agent.Discrete(3), moves, nil},
		{"Discrete above", agent.Discrete(4), moves, []string{"Discrete(4)", "4 is above the high bound 3"}},
		{"Discrete below", agent.Discrete(-1), moves, []string{"-1 is below the low bound 0"}},
		{"Discrete huge", agent.Discrete(math.MaxInt64), moves, []string{"9223372036854775807 is above the high bound 3"}},
		{"Start low", agent.Discrete(-1), offset, nil},
		{"Start high", agent.Discrete(1), offset, nil},
		{"Start below", agent.Discrete(-2), offset, []string{"Discrete(3, start=-1)", "-2 is below the low bound -1"}},
		{"Start above", agent.Discrete(2), offset, []string{"2 is above the high bound 1"}},
		{"pointer to Discrete", agent.Discrete(2), &moves, nil},
		{"pointer to Discrete, outside", agent.Discrete(7), &moves, []string{"7 is above the high bound 3"}},
		{"floats for Discrete", agent.Continuous([]float32{0}), moves, []string{"the action sets Floats ([0]), which a discrete action space does not read"}},
		{"ints for Discrete", agent.MultiInts([]int64{1}), moves, []string{"the action sets Ints ([1]), which a discrete"}},

		{"Box member", agent.Continuous([]float32{-1, 1}), box, nil},
		{"Box above", agent.Continuous([]float32{0, 1.5}), box, []string{"[1]: 1.5 is above the high bound 1"}},
		{"Box below", agent.Continuous([]float32{-2, 0}), box, []string{"[0]: -2 is below the low bound -1"}},
		{"Box NaN", agent.Continuous([]float32{nan, 0}), box, []string{"[0]: NaN"}},
		{"Box +inf", agent.Continuous([]float32{inf, 0}), box, []string{"[0]: inf is above the high bound 1"}},
		{"Box -inf on an open bound", agent.Continuous([]float32{0.5, -inf}), halfOpen, nil},
		{"Box short", agent.Continuous([]float32{0}), box, []string{"want []float32 of length 2, got 1"}},
		{"Box long", agent.Continuous([]float32{0, 0, 0}), box, []string{"length 2, got 3"}},
		{"Discrete action for Box", agent.Discrete(1), box, []string{"the action sets Int (1), which a box action space does not read"}},
		{"Discrete 0 for Box", agent.Discrete(0), box, []string{"want []float32 of length 2, got 0"}},
		{"ints for Box", agent.MultiInts([]int64{0, 0}), box, []string{"the action sets Ints ([0 0]), which a box"}},
		{"Int besides Floats for Box", agent.RawAction{Int: 2, Floats: []float32{0, 0}}, box, []string{"sets Int (2)"}},

		{"MultiDiscrete member", agent.MultiInts([]int64{2, 1}), multiDisc, nil},
		{"MultiDiscrete above", agent.MultiInts([]int64{3, 0}), multiDisc, []string{"[0]: 3 is above the high bound 2"}},
		{"MultiDiscrete below", agent.MultiInts([]int64{0, -1}), multiDisc, []string{"[1]: -1 is below the low bound 0"}},
		{"MultiDiscrete length", agent.MultiInts([]int64{0}), multiDisc, []string{"length 2, got 1"}},
		{"floats for MultiDiscrete", agent.Continuous([]float32{0, 0}), multiDisc, []string{"the action sets Floats ([0 0]), which a multi_discrete action space does not read"}},
		{"Int besides Ints for MultiDiscrete", agent.RawAction{Int: 1, Ints: []int64{0, 0}}, multiDisc, []string{"sets Int (1)"}},

		{"MultiBinary member", agent.MultiInts([]int64{0, 1, 1}), multiBin, nil},
		{"MultiBinary 2", agent.MultiInts([]int64{0, 2, 1}), multiBin, []string{"[1]: 2 is not 0 or 1"}},
		{"MultiBinary length", agent.MultiInts([]int64{0, 1}), multiBin, []string{"length 3, got 2"}},
		{"floats for MultiBinary", agent.Continuous([]float32{0, 1, 1}), multiBin, []string{"sets Floats ([0 1 1]), which a multi_binary"}},
		{"Int besides Ints for MultiBinary", agent.RawAction{Int: -1, Ints: []int64{0, 1, 1}}, multiBin, []string{"sets Int (-1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.action.Check(tt.space)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			assert.NotErrorIs(t, err, agent.ErrActionSpace)
			var ve *spaces.ValueError
			require.ErrorAs(t, err, &ve)
			assert.NotNil(t, ve.Space)
			for _, s := range tt.want {
				assert.Contains(t, err.Error(), s)
			}
		})
	}

	t.Run("not an action space", func(t *testing.T) {
		for _, s := range append(nonActions, nil, (*spaces.Discrete)(nil)) {
			err := agent.Discrete(0).Check(s)
			require.Error(t, err, "%v", s)
			assert.ErrorIs(t, err, agent.ErrActionSpace)
			assert.NotErrorIs(t, err, spaces.ErrOutside)
			assert.Regexp(t, `^agent: not an action space: `, err.Error())
			if s != nil && s != spaces.Space((*spaces.Discrete)(nil)) {
				assert.Contains(t, err.Error(), s.String())
			}
		}
	})

	t.Run("allocates nothing on success", func(t *testing.T) {
		if raceEnabled {
			t.Skip("allocation counts differ under the race detector")
		}
		members := []struct {
			a agent.RawAction
			s spaces.Space
		}{
			{agent.Discrete(2), moves},
			{agent.Discrete(2), &moves},
			{agent.Continuous([]float32{0, 0}), box},
			{agent.MultiInts([]int64{1, 1}), multiDisc},
			{agent.MultiInts([]int64{1, 0, 1}), multiBin},
		}
		var err error
		allocs := testing.AllocsPerRun(100, func() {
			for _, m := range members {
				if e := m.a.Check(m.s); e != nil {
					err = e
				}
			}
		})
		require.NoError(t, err)
		assert.Zero(t, allocs)
	})
}

func TestValue(t *testing.T) {
	a := agent.RawAction{Int: 2, Ints: []int64{1}, Floats: []float32{0.5}}
	assert.Equal(t, int64(2), a.Value(moves))
	assert.Equal(t, []float32{0.5}, a.Value(box))
	assert.Equal(t, []int64{1}, a.Value(multiDisc))
	assert.Equal(t, []int64{1}, a.Value(multiBin))
	// String shows the field in use, Floats first.
	assert.Equal(t, "[0.5]", a.String())
	assert.Equal(t, "[1]", agent.RawAction{Int: 2, Ints: []int64{1}}.String())
}

func TestCause(t *testing.T) {
	tests := []struct {
		c    agent.Cause
		want string
	}{
		{agent.ByReset, "reset"},
		{agent.ByTrigger, "trigger"},
		{agent.ByDone, "done"},
		{0, "Cause(0)"},
		{agent.Cause(9), "Cause(9)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.c.String())
	}
}
