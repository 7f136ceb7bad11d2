package fastlane_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/batonrl/baton/internal/fastlane"
)

// BenchmarkRecord measures a step of the fast lane without and with a recording (one
// op is one vector step of every copy): run it several times with -count=1 so that
// the two alternate, and compare their ratio. cpu-ns/op is the CPU time of the whole
// process per op (every goroutine: the stepping one, the recording's and the log's
// writer's), which does not depend on how many cores are free, as ns/op does: the
// recording's goroutines write while the caller steps, given a core to do it on. Random actions for the cart-pole (its episodes are short, so
// that trials begin and end all the time); the first allowed action for the maze.
func BenchmarkRecord(b *testing.B) {
	reg := testRegistry(b)
	for _, n := range []int{64, 256} {
		for _, log := range []bool{false, true} {
			b.Run(fmt.Sprintf("cartpole/N=%d/log=%t", n, log), func(b *testing.B) {
				s, err := fastlane.NewSingle(reg, "cartpole", nil, n, 1, buffers(n, 4, 0))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if log {
					if err := s.Record(fastlane.Recording{Dir: b.TempDir()}); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Reset(bg, 1); err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				actions := make([][]int64, 64)
				for k := range actions {
					actions[k] = make([]int64, n)
					for i := range actions[k] {
						actions[k][i] = rng.Int64N(2)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for k := 0; b.Loop(); k++ {
					if err := s.Step(bg, actions[k%len(actions)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.CloseLog(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				reportCPU(b, cpu)
			})
		}
		for _, log := range []bool{false, true} {
			b.Run(fmt.Sprintf("maze/N=%d/log=%t", n, log), func(b *testing.B) {
				l, err := fastlane.Describe(reg, "maze", nil)
				if err != nil {
					b.Fatal(err)
				}
				buf := multiBuffers(n, l)
				x, err := fastlane.NewMulti(reg, "maze", nil, n, 1, buf)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Close()
				if log {
					if err := x.Record(fastlane.Recording{Dir: b.TempDir()}); err != nil {
						b.Fatal(err)
					}
				}
				if err := x.Reset(bg, 1); err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 4))
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for b.Loop() {
					for j, ag := range l.Agents {
						ab := &buf.Agents[j]
						for r := range int(buf.Counts[j]) {
							m := ab.Masks[r*ag.MaskLen : (r+1)*ag.MaskLen]
							for {
								if a := rng.Int64N(int64(ag.MaskLen)); m[a] {
									ab.Actions[r] = a
									break
								}
							}
						}
					}
					if err := x.Step(bg); err != nil {
						b.Fatal(err)
					}
				}
				if err := x.CloseLog(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				reportCPU(b, cpu)
			})
		}
	}
}

// reportCPU reports the process's CPU time since cpu per op, as cpu-ns/op.
func reportCPU(b *testing.B, cpu time.Duration) {
	if d := processCPU() - cpu; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
