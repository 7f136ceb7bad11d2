package spaces_test

import (
	"math"
	"math/rand/v2"

	"github.com/batonrl/baton/spaces"
)

var (
	inf    = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
	nan    = float32(math.NaN())
)

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

type namedSpace struct {
	name  string
	space spaces.Space
}

// allSpaces returns at least one space of every kind, with nested Dicts and Tuples.
func allSpaces() []namedSpace {
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	mixed := spaces.Must(spaces.NewBoxBounds([]int{4},
		[]float32{-1, negInf, 0, negInf},
		[]float32{1, 5, inf, inf}))
	text := spaces.Must(spaces.NewText(0, 5, "abc"))
	inner := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: mixed},
		spaces.DictEntry{Key: "door", Space: spaces.Discrete{N: 3, Start: -1}},
	))
	tuple := spaces.Must(spaces.NewTuple(
		spaces.Discrete{N: 2},
		spaces.Must(spaces.NewMultiBinary(3)),
		inner,
	))
	return []namedSpace{
		{"discrete", spaces.Discrete{N: 4}},
		{"discrete_start", spaces.Discrete{N: 5, Start: 10}},
		{"discrete_one", spaces.Discrete{N: 1, Start: -7}},
		{"box", box},
		{"box_scalar", spaces.Must(spaces.NewBox(nil, -2, 2))},
		{"box_mixed", mixed},
		{"box_empty", spaces.Must(spaces.NewBox([]int{0}, 0, 1))},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{3, 1, 4}))},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(2, 3))},
		{"text", text},
		{"text_default", spaces.Must(spaces.NewText(1, 3, ""))},
		{"text_unicode", spaces.Must(spaces.NewText(2, 4, "αβγ→"))},
		{"dict", inner},
		{"dict_empty", spaces.Must(spaces.NewDict())},
		{"tuple", tuple},
		{"tuple_empty", spaces.Must(spaces.NewTuple())},
		{"nested", spaces.Must(spaces.NewDict(
			spaces.DictEntry{Key: "obs", Space: tuple},
			spaces.DictEntry{Key: "box", Space: box},
			spaces.DictEntry{Key: "msg", Space: text},
			spaces.DictEntry{Key: "md", Space: spaces.Must(spaces.NewMultiDiscrete([]int64{2, 2}))},
		))},
	}
}
