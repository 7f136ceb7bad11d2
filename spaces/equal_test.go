package spaces_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/batonrl/baton/spaces"
)

func TestEqual(t *testing.T) {
	box := func(shape []int, lo, hi float32) spaces.Space { return spaces.Must(spaces.NewBox(shape, lo, hi)) }
	bounds := func(shape []int, lo, hi []float32) spaces.Space {
		return spaces.Must(spaces.NewBoxBounds(shape, lo, hi))
	}
	dict := func(entries ...spaces.DictEntry) spaces.Space { return spaces.Must(spaces.NewDict(entries...)) }
	d2, d3 := spaces.Discrete{N: 2}, spaces.Discrete{N: 3}
	tests := []struct {
		name string
		a, b spaces.Space
		want bool
	}{
		{"discrete", d2, spaces.Discrete{N: 2}, true},
		{"discrete_pointer", d2, &spaces.Discrete{N: 2}, true},
		{"discrete_nil_pointer", d2, (*spaces.Discrete)(nil), false},
		{"discrete_n", d2, d3, false},
		{"discrete_start", d2, spaces.Discrete{N: 2, Start: 1}, false},
		{"discrete_vs_multi_discrete", d2, spaces.Must(spaces.NewMultiDiscrete([]int64{2})), false},
		{"discrete_vs_nil", d2, nil, false},
		{"box", box([]int{2, 3}, 0, 1), box([]int{2, 3}, 0, 1), true},
		{"box_uniform_vs_bounds", box([]int{2}, 0, 1), bounds([]int{2}, []float32{0, 0}, []float32{1, 1}), true},
		{"box_negative_zero", box([]int{2}, float32(negZero()), 1), box([]int{2}, 0, 1), true},
		{"box_shape", box([]int{2, 3}, 0, 1), box([]int{3, 2}, 0, 1), false},
		{"box_rank", box([]int{6}, 0, 1), box([]int{6, 1}, 0, 1), false},
		{"box_one_bound", bounds([]int{2}, []float32{0, 0}, []float32{1, 2}), box([]int{2}, 0, 1), false},
		{"box_infinite", box([]int{1}, negInf, inf), box([]int{1}, negInf, inf), true},
		{"box_nil", box([]int{1}, 0, 1), (*spaces.Box)(nil), false},
		{"box_empty", box([]int{0}, 0, 1), box([]int{0}, -5, 5), true},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3})), spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3})), true},
		{"multi_discrete_order", spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3})), spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2})), false},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(2, 3)), spaces.Must(spaces.NewMultiBinary(2, 3)), true},
		{"multi_binary_shape", spaces.Must(spaces.NewMultiBinary(6)), spaces.Must(spaces.NewMultiBinary(2, 3)), false},
		{"text", spaces.Must(spaces.NewText(1, 3, "ab")), spaces.Must(spaces.NewText(1, 3, "ab")), true},
		{"text_default", spaces.Must(spaces.NewText(1, 3, "")), spaces.Must(spaces.NewText(1, 3, spaces.DefaultCharset)), true},
		{"text_charset_order", spaces.Must(spaces.NewText(1, 3, "ab")), spaces.Must(spaces.NewText(1, 3, "ba")), false},
		{"text_length", spaces.Must(spaces.NewText(1, 3, "ab")), spaces.Must(spaces.NewText(0, 3, "ab")), false},
		{"dict", dict(spaces.DictEntry{Key: "a", Space: d2}, spaces.DictEntry{Key: "b", Space: d3}),
			dict(spaces.DictEntry{Key: "a", Space: d2}, spaces.DictEntry{Key: "b", Space: d3}), true},
		{"dict_order", dict(spaces.DictEntry{Key: "a", Space: d2}, spaces.DictEntry{Key: "b", Space: d3}),
			dict(spaces.DictEntry{Key: "b", Space: d3}, spaces.DictEntry{Key: "a", Space: d2}), false},
		{"dict_sub", dict(spaces.DictEntry{Key: "a", Space: d2}), dict(spaces.DictEntry{Key: "a", Space: d3}), false},
		{"dict_len", dict(spaces.DictEntry{Key: "a", Space: d2}), dict(), false},
		{"dict_vs_tuple", dict(), spaces.Must(spaces.NewTuple()), false},
		{"tuple", spaces.Must(spaces.NewTuple(d2, d3)), spaces.Must(spaces.NewTuple(d2, d3)), true},
		{"tuple_order", spaces.Must(spaces.NewTuple(d2, d3)), spaces.Must(spaces.NewTuple(d3, d2)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.a.Equal(tt.b))
			if tt.b != nil && tt.b != spaces.Space((*spaces.Box)(nil)) && tt.b != spaces.Space((*spaces.Discrete)(nil)) {
				assert.Equal(t, tt.want, tt.b.Equal(tt.a), "symmetric")
			}
		})
	}
}

func TestEqualReflexive(t *testing.T) {
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			assert.True(t, ns.space.Equal(ns.space))
		})
	}
}
