package spaces_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

func TestCheckAcceptsMembers(t *testing.T) {
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	mixed := spaces.Must(spaces.NewBoxBounds([]int{3}, []float32{negInf, 0, negInf}, []float32{0, inf, inf}))
	text := spaces.Must(spaces.NewText(1, 4, "ab→"))
	dict := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: mixed},
		spaces.DictEntry{Key: "n", Space: spaces.Discrete{N: 3}},
	))
	tests := []struct {
		name  string
		space spaces.Space
		value any
	}{
		{"discrete_int64", spaces.Discrete{N: 4}, int64(3)},
		{"discrete_int", spaces.Discrete{N: 4}, 0},
		{"discrete_start", spaces.Discrete{N: 3, Start: -2}, int64(-2)},
		{"discrete_pointer", &spaces.Discrete{N: 3, Start: 5}, 7},
		{"box", box, []float32{0, 1, 0.5, 0.25, 1, 0}},
		{"box_infinite", mixed, []float32{negInf, inf, 3}},
		{"box_negative_zero", box, []float32{float32(negZero()), 0, 0, 0, 0, 0}},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{3, 1})), []int64{2, 0}},
		{"multi_binary_int8", spaces.Must(spaces.NewMultiBinary(3)), []int8{0, 1, 1}},
		{"multi_binary_int64", spaces.Must(spaces.NewMultiBinary(3)), []int64{1, 0, 1}},
		{"text", text, "a→b"},
		{"text_max", text, "→→→→"},
		{"dict", dict, map[string]any{"pos": []float32{-5, 5, 0}, "n": 2}},
		{"tuple", spaces.Must(spaces.NewTuple(dict, text)), []any{map[string]any{"pos": []float32{0, 0, 0}, "n": int64(0)}, "b"}},
		{"tuple_empty", spaces.Must(spaces.NewTuple()), []any{}},
		{"dict_empty", spaces.Must(spaces.NewDict()), map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.space.Check(tt.value))
		})
	}
}

func negZero() float64 { z := 0.0; return -z }

func TestCheckRejectsNonMembers(t *testing.T) {
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	bounds := spaces.Must(spaces.NewBoxBounds([]int{2}, []float32{negInf, -1}, []float32{0, inf}))
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4}))
	mb := spaces.Must(spaces.NewMultiBinary(3))
	text := spaces.Must(spaces.NewText(1, 4, "ab→"))
	dict := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: bounds},
		spaces.DictEntry{Key: "n", Space: spaces.Discrete{N: 3}},
	))
	tuple := spaces.Must(spaces.NewTuple(spaces.Discrete{N: 2}, dict))
	tests := []struct {
		name   string
		space  spaces.Space
		value  any
		path   string
		reason string
	}{
		{"discrete_above", spaces.Discrete{N: 4}, int64(5), "", "5 is above the high bound 3"},
		{"discrete_below", spaces.Discrete{N: 4, Start: 1}, 0, "", "0 is below the low bound 1"},
		{"discrete_type", spaces.Discrete{N: 4}, "2", "", "want int64, got string"},
		{"discrete_int32", spaces.Discrete{N: 4}, int32(2), "", "want int64, got int32"},
		{"discrete_nil", spaces.Discrete{N: 4}, nil, "", "want int64, got <nil>"},
		{"box_above", box, []float32{0, 0, 0, 0, 1.5, 0}, "[4]", "1.5 is above the high bound 1"},
		{"box_below", box, []float32{-0.25, 0, 0, 0, 0, 0}, "[0]", "-0.25 is below the low bound 0"},
		{"box_nan", box, []float32{0, 0, nan, 0, 0, 0}, "[2]", "NaN is not within the bounds [0, 1]"},
		{"box_length", box, []float32{0, 0, 0, 0}, "", "want []float32 of length 6, got 4"},
		{"box_type", box, []float64{0, 0, 0, 0, 0, 0}, "", "want []float32, got []float64"},
		{"box_inf_above", bounds, []float32{inf, 0}, "[0]", "inf is above the high bound 0"},
		{"box_inf_below", bounds, []float32{0, negInf}, "[1]", "-inf is below the low bound -1"},
		{"multi_discrete_above", md, []int64{1, 4}, "[1]", "4 is above the high bound 3"},
		{"multi_discrete_below", md, []int64{-1, 0}, "[0]", "-1 is below the low bound 0"},
		{"multi_discrete_length", md, []int64{1}, "", "want []int64 of length 2, got 1"},
		{"multi_discrete_type", md, []int{1, 1}, "", "want []int64, got []int"},
		{"multi_binary_two", mb, []int8{0, 2, 1}, "[1]", "2 is not 0 or 1"},
		{"multi_binary_int64", mb, []int64{0, 1, -1}, "[2]", "-1 is not 0 or 1"},
		{"multi_binary_length", mb, []int8{0, 1}, "", "want []int8 of length 3, got 2"},
		{"multi_binary_type", mb, []bool{true, false, true}, "", "want []int8, got []bool"},
		{"text_short", text, "", "", "length 0 is below the minimum length 1"},
		{"text_long", text, "aaaaa", "", "length 5 is above the maximum length 4"},
		{"text_charset", text, "a→c", "[2]", "'c' is not in the charset"},
		{"text_invalid_utf8", text, "a\xffb", "[1]", "invalid UTF-8"},
		{"text_type", text, []byte("ab"), "", "want string, got []uint8"},
		{"dict_missing", dict, map[string]any{"pos": []float32{0, 0}}, ".n", "missing key"},
		{"dict_extra", dict, map[string]any{"pos": []float32{0, 0}, "n": 1, "zz": 1, "m": 2}, ".m", `key "m" is not in the space`},
		{"dict_nested", dict, map[string]any{"pos": []float32{0, -2}, "n": 1}, ".pos[1]", "-2 is below the low bound -1"},
		{"dict_type", dict, map[string]int{"n": 1}, "", "want map[string]any, got map[string]int"},
		{"tuple_nested", tuple, []any{1, map[string]any{"pos": []float32{0, 0}, "n": 3}}, "[1].n", "3 is above the high bound 2"},
		{"tuple_length", tuple, []any{1}, "", "want []any of length 2, got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.space.Check(tt.value)
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			var ve *spaces.ValueError
			require.True(t, errors.As(err, &ve))
			assert.Equal(t, tt.path, ve.Path)
			assert.Equal(t, tt.reason, ve.Reason)
			assert.True(t, tt.space.Equal(ve.Space), "error names the space checked")
			assert.Contains(t, err.Error(), tt.space.String())

			// FlattenTo rejects the same values with the same error.
			ferr := tt.space.FlattenTo(make([]float32, tt.space.FlatDim()), tt.value)
			require.Error(t, ferr)
			assert.Equal(t, err.Error(), ferr.Error())
		})
	}
}

func TestValueErrorText(t *testing.T) {
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	err := box.Check([]float32{0, 0, 0, 0, 1.5, 0})
	assert.EqualError(t, err, "spaces: value outside Box(0.0, 1.0, (2, 3), float32): [4]: 1.5 is above the high bound 1")
	err = spaces.Discrete{N: 3}.Check("x")
	assert.EqualError(t, err, "spaces: value outside Discrete(3): want int64, got string")
	assert.EqualError(t, &spaces.ValueError{Reason: "r"}, "spaces: value outside the space: r")
}

func TestTypedChecks(t *testing.T) {
	d := spaces.Discrete{N: 3, Start: 1}
	assert.True(t, d.Contains(1))
	assert.True(t, d.Contains(3))
	assert.False(t, d.Contains(0))
	assert.False(t, d.Contains(4))
	assert.False(t, spaces.Discrete{N: 2, Start: -1 << 63}.Contains(1<<63-1), "no overflow")
	assert.NoError(t, d.CheckInt(2))
	assert.ErrorIs(t, d.CheckInt(4), spaces.ErrOutside)

	box := spaces.Must(spaces.NewBox([]int{2}, -1, 1))
	assert.NoError(t, box.CheckFloats([]float32{-1, 1}))
	var ve *spaces.ValueError
	require.ErrorAs(t, box.CheckFloats([]float32{-1, 2}), &ve)
	assert.Equal(t, "[1]", ve.Path)

	md := spaces.Must(spaces.NewMultiDiscrete([]int64{2, 5}))
	assert.NoError(t, md.CheckInts([]int64{1, 4}))
	assert.ErrorIs(t, md.CheckInts([]int64{2, 4}), spaces.ErrOutside)

	mb := spaces.Must(spaces.NewMultiBinary(2))
	assert.NoError(t, mb.CheckInts([]int64{1, 0}))
	assert.ErrorIs(t, mb.CheckInts([]int64{1, 3}), spaces.ErrOutside)
}

func TestChecksDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	d := spaces.Discrete{N: 5}
	box := spaces.Must(spaces.NewBoxBounds([]int{3}, []float32{0, negInf, -1}, []float32{1, 0, inf}))
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3}))
	mb := spaces.Must(spaces.NewMultiBinary(4))
	text := spaces.Must(spaces.NewText(0, 4, "abc"))
	floats, ints, bits := []float32{0.5, -3, 7}, []int64{1, 2}, []int8{0, 1, 1, 0}
	var vd, vb, vm, vbits, vt any = int64(3), floats, ints, bits, "cab"
	tests := []struct {
		name string
		f    func() error
	}{
		{"Discrete.Check", func() error { return d.Check(vd) }},
		{"Discrete.CheckInt", func() error { return d.CheckInt(4) }},
		{"Box.Check", func() error { return box.Check(vb) }},
		{"Box.CheckFloats", func() error { return box.CheckFloats(floats) }},
		{"MultiDiscrete.Check", func() error { return md.Check(vm) }},
		{"MultiDiscrete.CheckInts", func() error { return md.CheckInts(ints) }},
		{"MultiBinary.Check", func() error { return mb.Check(vbits) }},
		{"MultiBinary.CheckInts", func() error { return mb.CheckInts([]int64{0, 1, 0, 1}) }},
		{"Text.Check", func() error { return text.Check(vt) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.f())
			assert.Zero(t, testing.AllocsPerRun(100, func() { _ = tt.f() }))
		})
	}
}

// foreign is a Space from outside the package, to check that Dict and Tuple use only
// the public methods of their elements.
type foreign struct{ spaces.Discrete }

func (f foreign) Check(v any) error {
	if v == "bad" {
		return errors.New("not a foreign value")
	}
	return f.Discrete.Check(v)
}

func TestDictWithForeignSpace(t *testing.T) {
	d := spaces.Must(spaces.NewDict(spaces.DictEntry{Key: "f", Space: foreign{spaces.Discrete{N: 3}}}))
	require.NoError(t, d.Check(map[string]any{"f": int64(2)}))

	var ve *spaces.ValueError
	require.ErrorAs(t, d.Check(map[string]any{"f": int64(5)}), &ve)
	assert.Equal(t, ".f", ve.Path)
	assert.Equal(t, "5 is above the high bound 2", ve.Reason)

	require.ErrorAs(t, d.Check(map[string]any{"f": "bad"}), &ve)
	assert.Equal(t, ".f", ve.Path)
	assert.Equal(t, "not a foreign value", ve.Reason)

	flat, err := spaces.Flatten(d, map[string]any{"f": int64(1)})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 0}, flat)
	v, err := d.Unflatten(flat)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"f": int64(1)}, v)
	js, err := spaces.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"dict","spaces":[{"key":"f","space":{"type":"discrete","n":3,"start":0}}]}`, string(js))
}
