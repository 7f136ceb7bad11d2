package datalog_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/require"
)

// recordMaze returns the events of n trials of the reference maze (oracle strategy,
// random motion, seed 1), each a copy the caller owns.
func recordMaze(tb testing.TB, n int) []*runners.Event {
	tb.Helper()
	reg := runners.NewRegistry()
	require.NoError(tb, maze.Register(reg))
	var events []*runners.Event
	rec := runners.SinkFunc(func(_ context.Context, e *runners.Event) error {
		events = append(events, e.Clone())
		return nil
	})
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(n), runners.WithWorkers(1), runners.WithSinks(rec))
	require.NoError(tb, err)
	sum, err := c.Run(context.Background())
	require.NoError(tb, err)
	require.Equal(tb, n, sum.Ended)
	return events
}

// BenchmarkChecksums measures what the batches' checksums cost the writer: it feeds
// one writer the recorded events of maze trials, over and over, with the checksums
// (crc32, as every log is written) and without them (none, a log that does not read,
// written only here), one op a logged row. Besides ns/op it reports cpu-ns/row, the
// process's CPU time per row (the writer's flusher and the kernel's writes included),
// which is the figure to compare on a machine that other work shares:
//
//	go test ./datalog -run XXX -bench Checksums -count 8
func BenchmarkChecksums(b *testing.B) {
	events := recordMaze(b, 64)
	for _, c := range []struct {
		name string
		opts []datalog.WriteOption
	}{
		{"crc32", nil},
		{"none", []datalog.WriteOption{datalog.WithoutChecksums()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ds, err := datalog.NewDataset(b.TempDir(), c.opts...)
			require.NoError(b, err)
			w, err := ds.NewWriter()
			require.NoError(b, err)
			ctx := context.Background()
			cpu0, cpuOK := processCPU()
			b.ResetTimer()
			for i, k := 0, 0; i < b.N; k++ {
				if k == len(events) {
					k = 0
				}
				e := events[k]
				if err := w.Handle(ctx, e); err != nil {
					b.Fatal(err)
				}
				if e.Kind == runners.KindStep {
					i++
				}
			}
			require.NoError(b, w.Close())
			b.StopTimer()
			cpu1, _ := processCPU()
			require.NoError(b, ds.Close())
			if cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/row")
			}
			b.ReportMetric(float64(ds.Stats().Bytes)/float64(b.N), "B/row")
		})
	}
}
