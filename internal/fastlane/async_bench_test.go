package fastlane_test

import (
	"fmt"
	"testing"

	"github.com/batonrl/baton/internal/fastlane"
)

// BenchmarkAsync steps 256 cart-poles in batches of B through an Async with W
// workers (send the batch, receive the next); ns/op is per batch.
func BenchmarkAsync(b *testing.B) {
	for _, c := range []struct{ w, batch int }{{1, 256}, {2, 128}, {4, 64}} {
		b.Run(fmt.Sprintf("N=256/W=%d/B=%d", c.w, c.batch), func(b *testing.B) {
			out := batch(c.batch, 4, 0)
			a, err := fastlane.NewAsync(testRegistry(b), "cartpole", nil, 256, c.w, c.batch, out)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			if err := a.Reset(bg, 1); err != nil {
				b.Fatal(err)
			}
			recvB(b, a)
			actions := make([]int64, c.batch)
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Send(actions, out.IDs); err != nil {
					b.Fatal(err)
				}
				recvB(b, a)
			}
			b.ReportMetric(float64(b.N*c.batch)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

func recvB(b *testing.B, a *fastlane.Async) {
	for {
		ok, err := a.Recv(bg, 1e6)
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			return
		}
	}
}
