package spaces_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/batonrl/baton/spaces"
)

func TestKindString(t *testing.T) {
	tests := []struct {
		kind spaces.Kind
		want string
	}{
		{spaces.KindDiscrete, "discrete"},
		{spaces.KindBox, "box"},
		{spaces.KindMultiDiscrete, "multi_discrete"},
		{spaces.KindMultiBinary, "multi_binary"},
		{spaces.KindDict, "dict"},
		{spaces.KindTuple, "tuple"},
		{spaces.KindText, "text"},
		{0, "Kind(0)"},
		{8, "Kind(8)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.String())
		})
	}
}

func TestSpaceKindAndString(t *testing.T) {
	tests := []struct {
		space spaces.Space
		kind  spaces.Kind
		str   string
	}{
		{spaces.Discrete{N: 4}, spaces.KindDiscrete, "Discrete(4)"},
		{spaces.Discrete{N: 4, Start: -1}, spaces.KindDiscrete, "Discrete(4, start=-1)"},
		{spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1)), spaces.KindBox, "Box(0.0, 1.0, (2, 3), float32)"},
		{spaces.Must(spaces.NewBox([]int{5}, negInf, inf)), spaces.KindBox, "Box(-inf, inf, (5,), float32)"},
		{spaces.Must(spaces.NewBox(nil, -0.5, 1e20)), spaces.KindBox, "Box(-0.5, 1e+20, (), float32)"},
		{spaces.Must(spaces.NewBoxBounds([]int{2}, []float32{0, 1}, []float32{2, 2})), spaces.KindBox, "Box([0.0 1.0], 2.0, (2,), float32)"},
		{spaces.Must(spaces.NewBox([]int{10}, 0, 1)), spaces.KindBox, "Box(0.0, 1.0, (10,), float32)"},
		{spaces.Must(spaces.NewBoxBounds([]int{10},
			[]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []float32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9})),
			spaces.KindBox, "Box([0.0 1.0 2.0 ... 7.0 8.0 9.0], 9.0, (10,), float32)"},
		{spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4})), spaces.KindMultiDiscrete, "MultiDiscrete([3 4])"},
		{spaces.Must(spaces.NewMultiBinary(5)), spaces.KindMultiBinary, "MultiBinary(5)"},
		{spaces.Must(spaces.NewMultiBinary(2, 3)), spaces.KindMultiBinary, "MultiBinary((2, 3))"},
		{spaces.Must(spaces.NewText(1, 8, "abc")), spaces.KindText, "Text(1, 8, charset=abc)"},
		{spaces.Must(spaces.NewDict(
			spaces.DictEntry{Key: "b", Space: spaces.Discrete{N: 2}},
			spaces.DictEntry{Key: "a", Space: spaces.Must(spaces.NewMultiBinary(1))},
		)), spaces.KindDict, "Dict('b': Discrete(2), 'a': MultiBinary(1))"},
		{spaces.Must(spaces.NewTuple(spaces.Discrete{N: 2}, spaces.Discrete{N: 3})), spaces.KindTuple, "Tuple(Discrete(2), Discrete(3))"},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			assert.Equal(t, tt.kind, tt.space.Kind())
			assert.Equal(t, tt.str, tt.space.String())
		})
	}
}
