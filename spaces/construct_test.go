package spaces_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

func TestConstructorErrors(t *testing.T) {
	deep := spaces.Space(spaces.Discrete{N: 2})
	for range spaces.MaxDepth - 1 {
		deep = spaces.Must(spaces.NewTuple(deep))
	}
	big := spaces.Must(spaces.NewBox([]int{spaces.MaxFlatDim}, 0, 1))
	tests := []struct {
		name    string
		build   func() error
		mention string // a piece of the error text
	}{
		{"discrete_n0", func() error { return spaces.Discrete{N: 0}.Validate() }, "n is 0"},
		{"discrete_negative", func() error { return spaces.Discrete{N: -3}.Validate() }, "want >= 1"},
		{"discrete_huge", func() error { return spaces.Discrete{N: spaces.MaxFlatDim + 1}.Validate() }, "want <="},
		{"discrete_overflow", func() error { return spaces.Discrete{N: 3, Start: 1<<63 - 2}.Validate() }, "overflows"},
		{"box_negative_dim", func() error { _, err := spaces.NewBox([]int{2, -1}, 0, 1); return err }, "shape[1] is -1"},
		{"box_overflow", func() error { _, err := spaces.NewBox([]int{1 << 20, 1 << 20, 1 << 20}, 0, 1); return err }, "more than"},
		{"box_huge_dim", func() error { _, err := spaces.NewBox([]int{1 << 40}, 0, 1); return err }, "want <="},
		{"box_rank", func() error { _, err := spaces.NewBox(make([]int, 33), 0, 1); return err }, "33 dimensions"},
		{"box_low_above_high", func() error { _, err := spaces.NewBox([]int{2}, 1, 0); return err }, "low 1 is above high 0"},
		{"box_nan_low", func() error { _, err := spaces.NewBox([]int{2}, nan, 0); return err }, "NaN"},
		{"box_nan_high", func() error { _, err := spaces.NewBox([]int{2}, 0, nan); return err }, "NaN"},
		{"box_bounds_length", func() error {
			_, err := spaces.NewBoxBounds([]int{2, 2}, []float32{0, 0, 0}, []float32{1, 1, 1})
			return err
		}, "4 elements"},
		{"box_bounds_order", func() error {
			_, err := spaces.NewBoxBounds([]int{3}, []float32{0, 2, 0}, []float32{1, 1, 1})
			return err
		}, "low[1] 2 is above high[1] 1"},
		{"box_bounds_nan", func() error {
			_, err := spaces.NewBoxBounds([]int{2}, []float32{0, 0}, []float32{1, nan})
			return err
		}, "high[1] is NaN"},
		{"multi_discrete_zero", func() error { _, err := spaces.NewMultiDiscrete([]int64{3, 0}); return err }, "nvec[1] is 0"},
		{"multi_discrete_sum", func() error {
			_, err := spaces.NewMultiDiscrete([]int64{spaces.MaxFlatDim, 1})
			return err
		}, "sums to more than"},
		{"multi_binary_zero", func() error { _, err := spaces.NewMultiBinary(3, 0); return err }, "shape[1] is 0"},
		{"multi_binary_huge", func() error { _, err := spaces.NewMultiBinary(1<<14, 1<<14); return err }, "more than"},
		{"dict_empty_key", func() error {
			_, err := spaces.NewDict(spaces.DictEntry{Key: "", Space: spaces.Discrete{N: 2}})
			return err
		}, "empty key"},
		{"dict_duplicate_key", func() error {
			_, err := spaces.NewDict(
				spaces.DictEntry{Key: "a", Space: spaces.Discrete{N: 2}},
				spaces.DictEntry{Key: "a", Space: spaces.Discrete{N: 3}})
			return err
		}, `"a" appears at 0 and 1`},
		{"dict_nil_space", func() error { _, err := spaces.NewDict(spaces.DictEntry{Key: "a"}); return err }, `nil space (Dict key "a")`},
		{"dict_invalid_discrete", func() error {
			_, err := spaces.NewDict(spaces.DictEntry{Key: "a", Space: spaces.Discrete{}})
			return err
		}, "n is 0"},
		{"dict_zero_box", func() error {
			_, err := spaces.NewDict(spaces.DictEntry{Key: "a", Space: &spaces.Box{}})
			return err
		}, "not made by NewBox"},
		{"dict_too_big", func() error {
			_, err := spaces.NewDict(spaces.DictEntry{Key: "a", Space: big}, spaces.DictEntry{Key: "b", Space: spaces.Discrete{N: 1}})
			return err
		}, "FlatDim"},
		{"tuple_nil", func() error { _, err := spaces.NewTuple(spaces.Discrete{N: 1}, nil); return err }, "nil space (Tuple element 1)"},
		{"tuple_too_deep", func() error { _, err := spaces.NewTuple(deep); return err }, "nests 33 deep"},
		{"tuple_zero_text", func() error { _, err := spaces.NewTuple(&spaces.Text{}); return err }, "not made by NewText"},
		{"text_negative_min", func() error { _, err := spaces.NewText(-1, 3, "ab"); return err }, "min length is -1"},
		{"text_max_below_min", func() error { _, err := spaces.NewText(4, 3, "ab"); return err }, "max length 3 is below min length 4"},
		{"text_huge", func() error { _, err := spaces.NewText(0, spaces.MaxFlatDim+1, "ab"); return err }, "want <="},
		{"text_duplicate", func() error { _, err := spaces.NewText(0, 3, "abca"); return err }, `'a' at 0 and 3`},
		{"text_bad_utf8", func() error { _, err := spaces.NewText(0, 3, "ab\xff"); return err }, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.build()
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrInvalid)
			assert.True(t, strings.HasPrefix(err.Error(), "spaces: "), err.Error())
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestDictReportsEveryProblem(t *testing.T) {
	_, err := spaces.NewDict(
		spaces.DictEntry{Key: "", Space: spaces.Discrete{N: 2}},
		spaces.DictEntry{Key: "x", Space: nil},
		spaces.DictEntry{Key: "y", Space: spaces.Discrete{N: -1}},
	)
	require.ErrorIs(t, err, spaces.ErrInvalid)
	assert.Contains(t, err.Error(), "empty key")
	assert.Contains(t, err.Error(), `nil space (Dict key "x")`)
	assert.Contains(t, err.Error(), `n is -1, want >= 1 (Dict key "y")`)
}

func TestConstructorsCopyInputs(t *testing.T) {
	shape := []int{2}
	low, high := []float32{0, 1}, []float32{2, 3}
	b, err := spaces.NewBoxBounds(shape, low, high)
	require.NoError(t, err)
	shape[0], low[0], high[0] = 9, -9, 9
	assert.Equal(t, []int{2}, b.Shape())
	assert.Equal(t, []float32{0, 1}, b.Low())
	assert.Equal(t, []float32{2, 3}, b.High())
	b.Low()[0] = 100
	lo, hi := b.Bounds(0)
	assert.Equal(t, float32(0), lo)
	assert.Equal(t, float32(2), hi)

	nvec := []int64{3, 4}
	md := spaces.Must(spaces.NewMultiDiscrete(nvec))
	nvec[0] = 1
	assert.Equal(t, []int64{3, 4}, md.Nvec())

	entries := []spaces.DictEntry{{Key: "a", Space: spaces.Discrete{N: 2}}}
	d := spaces.Must(spaces.NewDict(entries...))
	entries[0].Key = "z"
	assert.Equal(t, []string{"a"}, d.Keys())
}

func TestAccessors(t *testing.T) {
	b := spaces.Must(spaces.NewBox([]int{2, 3}, -1, 1))
	assert.Equal(t, []int{2, 3}, b.Shape())
	assert.Equal(t, 6, b.FlatDim())
	assert.Equal(t, []float32{-1, -1, -1, -1, -1, -1}, b.Low())
	assert.Equal(t, []float32{1, 1, 1, 1, 1, 1}, b.High())
	assert.Panics(t, func() { b.Bounds(6) })
	assert.Panics(t, func() { b.Bounds(-1) })

	mb := spaces.Must(spaces.NewMultiBinary(2, 3))
	assert.Equal(t, []int{2, 3}, mb.Shape())
	assert.Equal(t, 6, mb.FlatDim())

	txt := spaces.Must(spaces.NewText(0, 8, ""))
	assert.Equal(t, spaces.DefaultCharset, txt.Charset())
	assert.Equal(t, 0, txt.MinLength())
	assert.Equal(t, 8, txt.MaxLength())

	d := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "z", Space: spaces.Discrete{N: 2}},
		spaces.DictEntry{Key: "a", Space: txt},
	))
	assert.Equal(t, 2, d.Len())
	assert.Equal(t, []string{"z", "a"}, d.Keys())
	got, ok := d.Get("a")
	require.True(t, ok)
	assert.Same(t, txt, got)
	_, ok = d.Get("b")
	assert.False(t, ok)
	var keys []string
	for k := range d.All() {
		keys = append(keys, k)
	}
	assert.Equal(t, []string{"z", "a"}, keys)

	tu := spaces.Must(spaces.NewTuple(spaces.Discrete{N: 2}, txt))
	assert.Equal(t, 2, tu.Len())
	assert.Equal(t, spaces.Discrete{N: 2}, tu.At(0))
	assert.Equal(t, 10, tu.FlatDim())
	n := 0
	for i, s := range tu.All() {
		assert.True(t, tu.At(i).Equal(s))
		n++
	}
	assert.Equal(t, 2, n)
	assert.Panics(t, func() { spaces.Must(spaces.NewBox([]int{1}, 1, 0)) })
}
