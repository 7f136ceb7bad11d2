package spaces_test

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/spaces"
)

func ExampleDiscrete_SampleMasked() {
	moves := spaces.Discrete{N: 4} // 0 up, 1 right, 2 down, 3 left
	rng := rand.New(rand.NewPCG(1, 2))
	blocked := []bool{true, false, true, false} // only right and left are open

	counts := map[int64]int{}
	for range 1000 {
		m, err := moves.SampleMasked(rng, blocked)
		if err != nil {
			panic(err)
		}
		counts[m]++
	}
	fmt.Println(counts[0] > 0, counts[1], counts[2] > 0, counts[3])

	_, err := moves.SampleMasked(rng, []bool{false, false, false, false})
	fmt.Println(err)
	// Output:
	// true 0 true 0
	// spaces: mask allows no value
}

func ExampleUnmarshal() {
	spec := `{"type":"dict","spaces":[
		{"key":"pos","space":{"type":"box","shape":[2],"low":-1,"high":1}},
		{"key":"door","space":{"type":"discrete","n":3}}]}`
	obs, err := spaces.Unmarshal([]byte(spec))
	if err != nil {
		panic(err)
	}
	fmt.Println(obs)
	fmt.Println(obs.FlatDim())

	err = obs.Check(map[string]any{"pos": []float32{0.5, 1.5}, "door": int64(2)})
	var ve *spaces.ValueError
	fmt.Println(errors.As(err, &ve), ve.Path, ve.Reason)

	data, err := spaces.Marshal(obs)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(data))

	_, err = spaces.Unmarshal([]byte(`{"type":"discrete","n":0}`))
	fmt.Println(errors.Is(err, spaces.ErrSpec), err)
	// Output:
	// Dict('pos': Box(-1.0, 1.0, (2,), float32), 'door': Discrete(3))
	// 5
	// true .pos[1] 1.5 is above the high bound 1
	// {"type":"dict","spaces":[{"key":"pos","space":{"type":"box","shape":[2],"dtype":"float32","low":[-1,-1],"high":[1,1]}},{"key":"door","space":{"type":"discrete","n":3,"start":0}}]}
	// true spaces: invalid space spec: .n: 0 is out of range, want 1 to 67108864
}

func ExampleFlatten() {
	obs := spaces.Must(spaces.NewTuple(
		spaces.Discrete{N: 3, Start: 1},
		spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3})),
		spaces.Must(spaces.NewText(0, 4, "abc")),
	))
	flat, err := spaces.Flatten(obs, []any{int64(2), []int64{1, 0}, "cab"})
	if err != nil {
		panic(err)
	}
	fmt.Println(flat)

	v, err := obs.Unflatten(flat)
	if err != nil {
		panic(err)
	}
	fmt.Println(v)

	flat[0] = 1 // now two entries of the Discrete block are 1
	_, err = obs.Unflatten(flat)
	fmt.Println(err)
	// Output:
	// [0 1 0 0 1 1 0 0 2 0 1 3]
	// [2 [1 0] cab]
	// spaces: value outside Tuple(Discrete(3, start=1), MultiDiscrete([2 3]), Text(0, 4, charset=abc)): [0]: flat entries 0 and 1 are both 1, want one-hot
}

func ExampleBox_CheckFloats() {
	box := spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1))
	err := box.CheckFloats([]float32{0, 0.5, 1, 0, 1.5, 0})
	fmt.Println(err)
	fmt.Println(errors.Is(err, spaces.ErrOutside))
	// Output:
	// spaces: value outside Box(0.0, 1.0, (2, 3), float32): [4]: 1.5 is above the high bound 1
	// true
}
