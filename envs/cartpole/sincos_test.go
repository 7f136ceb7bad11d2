package cartpole

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSincos checks sincos against math.Sin and math.Cos bit for bit: edge values,
// and random values over every scale from 1e-300 to 1e6, either sign.
func TestSincos(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), math.Pi / 4, -math.Pi / 4, math.Nextafter(math.Pi/4, 0),
		math.Nextafter(-math.Pi/4, 0), math.Nextafter(math.Pi/4, 1), ThetaThreshold, -ThetaThreshold,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 1e300}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 2_000_000
	if testing.Short() {
		n = 100_000
	}
	for range n {
		x := rng.Float64() * math.Pow(10, float64(rng.IntN(16)-12))
		if rng.IntN(2) == 0 {
			x = -x
		}
		xs = append(xs, x)
	}
	for range n {
		xs = append(xs, (rng.Float64()*2-1)*math.Pi/4)
	}
	for _, x := range xs {
		s, c := sincos(x)
		ws, wc := math.Sin(x), math.Cos(x)
		if math.Float64bits(s) != math.Float64bits(ws) || math.Float64bits(c) != math.Float64bits(wc) {
			if !(math.IsNaN(s) && math.IsNaN(ws) && math.IsNaN(c) && math.IsNaN(wc)) {
				t.Fatalf("sincos(%v) = %v, %v; math gives %v, %v", x, s, c, ws, wc)
			}
		}
	}
}
