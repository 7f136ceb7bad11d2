package fastlane_test

import (
	"fmt"
	"testing"

	"github.com/batonrl/baton/internal/fastlane"
)

// BenchmarkMulti steps the fast lane's Multi of the maze, N=1024, on one worker and
// on two: one iteration is one tick, every copy stepped with the first action its
// mask allows, chosen by the caller (the part a Python policy plays). The ratio of
// the two is the speed-up of the second worker; the tick includes the checks of the
// actions and the filling of the caller's buffers, which run on the workers.
//
//	go test -run XXX -bench Multi -count 8 ./internal/fastlane
func BenchmarkMulti(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("maze/N=1024/workers=%d", w), func(b *testing.B) {
			const n = 1024
			reg := testRegistry(b)
			l, err := fastlane.Describe(reg, "maze", nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := multiBuffers(n, l)
			x, err := fastlane.NewMulti(reg, "maze", nil, n, w, buf)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			if err := x.Reset(bg, 0); err != nil {
				b.Fatal(err)
			}
			tick := func() {
				for j, ag := range l.Agents {
					ab := &buf.Agents[j]
					for r := range buf.Counts[j] {
						ab.Actions[r] = 0
						for k := range ag.MaskLen {
							if ab.Masks[int(r)*ag.MaskLen+k] {
								ab.Actions[r] = int64(k)
								break
							}
						}
					}
				}
				if err := x.Step(bg); err != nil {
					b.Fatal(err)
				}
			}
			for range 300 {
				tick()
			}
			b.ReportAllocs()
			for b.Loop() {
				tick()
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
