package spaces_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

func TestFlattenGolden(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Space
		value any
		want  []float32
	}{
		{"discrete", spaces.Discrete{N: 4}, int64(2), []float32{0, 0, 1, 0}},
		{"discrete_start", spaces.Discrete{N: 4, Start: 1}, 2, []float32{0, 1, 0, 0}},
		{"box", spaces.Must(spaces.NewBox([]int{2, 2}, -1, 1)), []float32{0.5, -1, 1, 0}, []float32{0.5, -1, 1, 0}},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2, 1})), []int64{2, 0, 0},
			[]float32{0, 0, 1, 1, 0, 1}},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(3)), []int8{1, 0, 1}, []float32{1, 0, 1}},
		{"multi_binary_int64", spaces.Must(spaces.NewMultiBinary(3)), []int64{0, 0, 1}, []float32{0, 0, 1}},
		{"text", spaces.Must(spaces.NewText(0, 4, "abc")), "ca", []float32{2, 0, 3, 3}},
		{"text_full", spaces.Must(spaces.NewText(0, 2, "ab")), "ba", []float32{1, 0}},
		{"text_empty", spaces.Must(spaces.NewText(0, 2, "ab")), "", []float32{2, 2}},
		{"dict", spaces.Must(spaces.NewDict(
			spaces.DictEntry{Key: "z", Space: spaces.Discrete{N: 2}},
			spaces.DictEntry{Key: "a", Space: spaces.Must(spaces.NewBox([]int{1}, 0, 9))},
		)), map[string]any{"a": []float32{7}, "z": int64(1)}, []float32{0, 1, 7}},
		{"tuple", spaces.Must(spaces.NewTuple(
			spaces.Must(spaces.NewMultiBinary(2)),
			spaces.Discrete{N: 3},
		)), []any{[]int8{1, 1}, int64(0)}, []float32{1, 1, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spaces.Flatten(tt.space, tt.value)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Len(t, got, tt.space.FlatDim())

			// FlattenTo writes only dst[:FlatDim] of a longer buffer.
			dst := make([]float32, tt.space.FlatDim()+2)
			dst[len(dst)-1], dst[len(dst)-2] = 42, 42
			require.NoError(t, tt.space.FlattenTo(dst, tt.value))
			assert.Equal(t, tt.want, dst[:tt.space.FlatDim()])
			assert.Equal(t, []float32{42, 42}, dst[tt.space.FlatDim():])
		})
	}
}

func TestFlattenRoundTrip(t *testing.T) {
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			rng := newRNG()
			for range 200 {
				v := ns.space.Sample(rng)
				flat, err := spaces.Flatten(ns.space, v)
				require.NoError(t, err)
				require.Len(t, flat, ns.space.FlatDim())
				back, err := ns.space.Unflatten(flat)
				require.NoError(t, err)
				require.Equal(t, v, back)
			}
		})
	}
}

func TestFlattenShortBuffer(t *testing.T) {
	for _, ns := range allSpaces() {
		if ns.space.FlatDim() == 0 {
			continue
		}
		t.Run(ns.name, func(t *testing.T) {
			v := ns.space.Sample(newRNG())
			err := ns.space.FlattenTo(make([]float32, ns.space.FlatDim()-1), v)
			require.ErrorIs(t, err, spaces.ErrShortBuffer)
		})
	}
}

func TestFlattenToDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4}))
	mb := spaces.Must(spaces.NewMultiBinary(5))
	tests := []struct {
		name  string
		space spaces.Space
		value any
	}{
		{"discrete", spaces.Discrete{N: 4, Start: 1}, int64(3)},
		{"discrete_int", spaces.Discrete{N: 4}, 1},
		{"box", box, []float32{0, 0.1, 0.2, 0.3, 0.4, 1}},
		{"multi_discrete", md, []int64{2, 3}},
		{"multi_binary_int8", mb, []int8{1, 0, 1, 1, 0}},
		{"multi_binary_int64", mb, []int64{1, 0, 1, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float32, tt.space.FlatDim())
			s, v := tt.space, tt.value
			require.NoError(t, s.FlattenTo(dst, v))
			assert.Zero(t, testing.AllocsPerRun(100, func() {
				if err := s.FlattenTo(dst, v); err != nil {
					panic(err)
				}
			}))
		})
	}
}

func TestUnflattenRejects(t *testing.T) {
	text := spaces.Must(spaces.NewText(1, 4, "abc"))
	dict := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "d", Space: spaces.Discrete{N: 2}},
		spaces.DictEntry{Key: "t", Space: text},
	))
	tests := []struct {
		name   string
		space  spaces.Space
		src    []float32
		path   string
		reason string
	}{
		{"discrete_two_ones", spaces.Discrete{N: 3}, []float32{1, 0, 1}, "", "flat entries 0 and 2 are both 1, want one-hot"},
		{"discrete_no_one", spaces.Discrete{N: 3}, []float32{0, 0, 0}, "", "no flat entry is 1, want one-hot"},
		{"discrete_fraction", spaces.Discrete{N: 3}, []float32{0, 0.5, 0.5}, "", "flat entry 1 is 0.5, want 0 or 1 (one-hot)"},
		{"discrete_nan", spaces.Discrete{N: 2}, []float32{nan, 1}, "", "flat entry 0 is NaN, want 0 or 1 (one-hot)"},
		{"discrete_length", spaces.Discrete{N: 3}, []float32{0, 1}, "", "want 3 flat entries, got 2"},
		{"box_bound", spaces.Must(spaces.NewBox([]int{2}, 0, 1)), []float32{0, 2}, "[1]", "2 is above the high bound 1"},
		{"box_nan", spaces.Must(spaces.NewBox([]int{2}, 0, 1)), []float32{nan, 0}, "[0]", "NaN is not within the bounds [0, 1]"},
		{"box_length", spaces.Must(spaces.NewBox([]int{2}, 0, 1)), []float32{0, 0, 0}, "", "want 2 flat entries, got 3"},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{2, 2})), []float32{0, 1, 1, 1}, "[1]", "flat entries 0 and 1 are both 1, want one-hot"},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(3)), []float32{0, 1, 2}, "[2]", "flat entry is 2, want 0 or 1"},
		{"text_out_of_range", text, []float32{0, 4, 3, 3}, "[1]", "flat entry is 4, want a charset index in [0, 3] (3 is padding)"},
		{"text_negative", text, []float32{-1, 3, 3, 3}, "[0]", "flat entry is -1, want a charset index in [0, 3] (3 is padding)"},
		{"text_fraction", text, []float32{1.5, 3, 3, 3}, "[0]", "flat entry is 1.5, want a charset index in [0, 3] (3 is padding)"},
		{"text_gap", text, []float32{0, 3, 1, 3}, "[2]", "charset index 1 after padding at 1"},
		{"text_too_short", text, []float32{3, 3, 3, 3}, "", "length 0 is below the minimum length 1"},
		{"dict_nested", dict, []float32{0, 1, 0, 3, 0, 3}, ".t[2]", "charset index 0 after padding at 1"},
		{"tuple_nested", spaces.Must(spaces.NewTuple(spaces.Discrete{N: 1}, dict)), []float32{1, 1, 1, 0, 3, 3, 3}, "[1].d", "flat entries 0 and 1 are both 1, want one-hot"},
		{"tuple_length", spaces.Must(spaces.NewTuple(spaces.Discrete{N: 1})), nil, "", "want 1 flat entries, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.space.Unflatten(tt.src)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			var ve *spaces.ValueError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.path, ve.Path)
			assert.Equal(t, tt.reason, ve.Reason)
		})
	}
}

func TestFlatDim(t *testing.T) {
	want := map[string]int{
		"discrete": 4, "discrete_start": 5, "discrete_one": 1, "box": 6, "box_scalar": 1,
		"box_mixed": 4, "box_empty": 0, "multi_discrete": 8, "multi_binary": 6, "text": 5,
		"text_default": 3, "text_unicode": 4, "dict": 7, "dict_empty": 0, "tuple": 12,
		"tuple_empty": 0, "nested": 12 + 6 + 5 + 4,
	}
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			require.Contains(t, want, ns.name)
			assert.Equal(t, want[ns.name], ns.space.FlatDim())
		})
	}
}
