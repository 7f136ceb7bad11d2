package spaces_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

func TestSampleIsMember(t *testing.T) {
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			rng := newRNG()
			for range 2000 {
				v := ns.space.Sample(rng)
				require.NoError(t, ns.space.Check(v), "sample %v", v)
			}
		})
	}
}

func TestSampleIsDeterministic(t *testing.T) {
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			a, b := newRNG(), newRNG()
			for range 20 {
				assert.Equal(t, ns.space.Sample(a), ns.space.Sample(b))
			}
		})
	}
}

func TestSampleCoversValues(t *testing.T) {
	rng := newRNG()
	d := spaces.Discrete{N: 5, Start: 3}
	seen := map[int64]int{}
	for range 5000 {
		seen[d.Sample(rng).(int64)]++
	}
	assert.Len(t, seen, 5)
	for v, n := range seen {
		assert.InDelta(t, 1000, n, 150, "value %d", v)
	}

	text := spaces.Must(spaces.NewText(0, 2, "ab"))
	strs := map[string]bool{}
	for range 1000 {
		strs[text.Sample(rng).(string)] = true
	}
	assert.Len(t, strs, 7, "every string of length 0 to 2 over {a, b}")

	mb := spaces.Must(spaces.NewMultiBinary(100))
	ones := 0
	for range 100 {
		for _, b := range mb.Sample(rng).([]int8) {
			ones += int(b)
		}
	}
	assert.InDelta(t, 5000, ones, 300)
}

func TestBoxSampleDistributions(t *testing.T) {
	box := spaces.Must(spaces.NewBoxBounds([]int{4},
		[]float32{2, negInf, 5, negInf},
		[]float32{4, inf, inf, -5}))
	rng := newRNG()
	const draws = 20000
	var sum, sumSq [4]float64
	dst := make([]float32, 4)
	for range draws {
		box.SampleTo(dst, rng)
		require.NoError(t, box.CheckFloats(dst))
		for i, x := range dst {
			sum[i] += float64(x)
			sumSq[i] += float64(x) * float64(x)
		}
	}
	mean := func(i int) float64 { return sum[i] / draws }
	variance := func(i int) float64 { return sumSq[i]/draws - mean(i)*mean(i) }
	assert.InDelta(t, 3, mean(0), 0.05, "uniform in [2, 4]")
	assert.InDelta(t, 0, mean(1), 0.05, "normal(0, 1)")
	assert.InDelta(t, 1, variance(1), 0.05, "normal(0, 1)")
	assert.InDelta(t, 6, mean(2), 0.05, "5 + exponential(1)")
	assert.InDelta(t, -6, mean(3), 0.05, "-5 - exponential(1)")
}

func TestBoxSampleExtremeBounds(t *testing.T) {
	box := spaces.Must(spaces.NewBoxBounds([]int{4},
		[]float32{-math.MaxFloat32, 7, math.MaxFloat32, inf},
		[]float32{math.MaxFloat32, 7, math.MaxFloat32, inf}))
	rng := newRNG()
	for range 1000 {
		v := box.Sample(rng).([]float32)
		require.NoError(t, box.CheckFloats(v))
		assert.Equal(t, float32(7), v[1])
	}
}

func TestSampleToDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := newRNG()
	box := spaces.Must(spaces.NewBoxBounds([]int{4}, []float32{0, negInf, 0, negInf}, []float32{1, inf, inf, 0}))
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3, 4}))
	mb := spaces.Must(spaces.NewMultiBinary(70))
	fdst, idst, bdst := make([]float32, 4), make([]int64, 3), make([]int8, 70)
	assert.Zero(t, testing.AllocsPerRun(100, func() { box.SampleTo(fdst, rng) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { md.SampleTo(idst, rng) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { mb.SampleTo(bdst, rng) }))
	assert.Panics(t, func() { box.SampleTo(make([]float32, 3), rng) })
}

func TestSampleMasked(t *testing.T) {
	d := spaces.Discrete{N: 6, Start: 10}
	tests := []struct {
		name string
		mask []bool
		want []int64 // every allowed value
	}{
		{"one", []bool{false, false, false, true, false, false}, []int64{13}},
		{"some", []bool{true, false, true, false, false, true}, []int64{10, 12, 15}},
		{"all", []bool{true, true, true, true, true, true}, []int64{10, 11, 12, 13, 14, 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := newRNG()
			seen := map[int64]int{}
			for range 3000 {
				v, err := d.SampleMasked(rng, tt.mask)
				require.NoError(t, err)
				require.True(t, tt.mask[v-d.Start], "value %d is masked out", v)
				seen[v]++
			}
			require.Len(t, seen, len(tt.want), "covers every allowed value")
			for _, v := range tt.want {
				assert.InDelta(t, 3000/len(tt.want), seen[v], 200, "value %d", v)
			}
		})
	}
}

func TestSampleMaskedErrors(t *testing.T) {
	d := spaces.Discrete{N: 3}
	rng := newRNG()
	tests := []struct {
		name string
		mask []bool
		want error
	}{
		{"empty", []bool{false, false, false}, spaces.ErrEmptyMask},
		{"short", []bool{true, true}, spaces.ErrMaskLength},
		{"long", []bool{true, true, true, true}, spaces.ErrMaskLength},
		{"nil", nil, spaces.ErrMaskLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.SampleMasked(rng, tt.mask)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestSampleMaskedDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	d := spaces.Discrete{N: 8, Start: 1}
	mask := []bool{false, true, false, true, true, false, false, true}
	rng := newRNG()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := d.SampleMasked(rng, mask); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
