package datalog_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// recordMaze returns the events of n trials of the reference maze (oracle strategy,
// random motion, seed 1), each a copy the caller owns.
func recordMaze(tb testing.TB, n int) []*event.Event {
	tb.Helper()
	reg := registry.New()
	require.NoError(tb, maze.Register(reg))
	var events []*event.Event
	rec := event.SinkFunc(func(_ context.Context, e *event.Event) error {
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

// The cases of the cost benchmarks write what they say: the full log reads back whole,
// the one without checksums is refused for want of them (its format version has them
// all), and the one without observations is the smaller by most of its bytes.
func TestWriterCostCases(t *testing.T) {
	defer goleak.VerifyNone(t)
	events := recordMaze(t, 8)
	var steps int64
	for _, e := range events {
		if e.Kind == event.KindStep {
			steps++
		}
	}
	write := func(opts ...datalog.WriteOption) (string, datalog.Stats) {
		dir := t.TempDir()
		ds, err := datalog.NewDataset(dir, opts...)
		require.NoError(t, err)
		w, err := ds.NewWriter()
		require.NoError(t, err)
		for _, e := range events {
			require.NoError(t, w.Handle(context.Background(), e))
		}
		require.NoError(t, w.Close())
		require.NoError(t, ds.Close())
		return dir, ds.Stats()
	}
	rows := func(dir string) (int64, error) {
		l, err := datalog.Open(dir)
		if err != nil {
			return 0, err
		}
		var n int64
		for _, agent := range l.Agents() {
			for _, err := range l.Rows(agent) {
				if err != nil {
					return n, err
				}
				n++
			}
		}
		return n, nil
	}

	full, fullStats := write()
	n, err := rows(full)
	require.NoError(t, err)
	require.Equal(t, steps, n)
	require.Equal(t, steps, fullStats.Rows)

	noSums, noSumsStats := write(datalog.WithoutChecksums())
	_, err = rows(noSums)
	require.ErrorIs(t, err, datalog.ErrCorrupt)
	require.Equal(t, steps, noSumsStats.Rows)

	_, noObsStats := write(datalog.WithoutObservations())
	require.Equal(t, steps, noObsStats.Rows)
	require.Less(t, noObsStats.Bytes, fullStats.Bytes)
}

// BenchmarkWriterCost measures what parts of a row cost the writer: it feeds one
// writer the recorded events of maze trials, over and over, one op a logged row, as
// every log is written (full), without the batches' checksums (no-checksums), and
// without the observations, neither copied nor compressed (no-observations: the most
// that any encoding of them, or leaving them out, could save). The last two write logs
// that do not read, here only. Besides ns/op it reports cpu-ns/row, the process's CPU
// time per row (the writer's flusher and the kernel's writes included), the figure to
// compare on a machine that other work shares, and B/row, the bytes on disk. Run the
// cases in alternating rounds, and compare them round by round:
//
//	for i in 1 2 3 4 5 6 7 8; do for c in full no-checksums no-observations; do
//	  go test ./datalog -run XXX -bench "WriterCost/$c\$" -benchtime 400000x; done; done
func BenchmarkWriterCost(b *testing.B) {
	events := recordMaze(b, 64)
	for _, c := range []struct {
		name string
		opts []datalog.WriteOption
	}{
		{"full", nil},
		{"no-checksums", []datalog.WriteOption{datalog.WithoutChecksums()}},
		{"no-observations", []datalog.WriteOption{datalog.WithoutObservations()}},
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
				if e.Kind == event.KindStep {
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

// BenchmarkCampaignCost is BenchmarkWriterCost's cases in a campaign: b.N one-episode
// trials of the reference maze on two workers, as baton run maze --workers 2 plays
// them, without a log (off) and with each worker writing into a dataset of the
// case's options, one op a trial. It reports trials/s and cpu-us/trial (the process's
// CPU time per trial); the ratio of a case's trials/s to off's, round by round, is
// the share of the campaign's throughput that logging leaves. inline is full written
// with WithInlineWrites, as baton run writes it when its workers fill the cores:
//
//	for i in 1 2 3 4 5 6; do for c in off full inline no-checksums no-observations; do
//	  go test ./datalog -run XXX -bench "CampaignCost/$c\$" -benchtime 10000x; done; done
func BenchmarkCampaignCost(b *testing.B) {
	reg := registry.New()
	require.NoError(b, maze.Register(reg))
	for _, c := range []struct {
		name string
		log  bool
		opts []datalog.WriteOption
	}{
		{"off", false, nil},
		{"full", true, nil},
		{"no-checksums", true, []datalog.WriteOption{datalog.WithoutChecksums()}},
		{"no-observations", true, []datalog.WriteOption{datalog.WithoutObservations()}},
		{"inline", true, []datalog.WriteOption{datalog.WithInlineWrites(true)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts := []runners.CampaignOption{runners.WithTrials(max(b.N, 1)), runners.WithWorkers(2)}
			var ds *datalog.Dataset
			if c.log {
				var err error
				ds, err = datalog.NewDataset(b.TempDir(), c.opts...)
				require.NoError(b, err)
				opts = append(opts, runners.WithWorkerSinks(ds.WorkerSinks()))
			}
			camp, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1}, opts...)
			require.NoError(b, err)
			cpu0, cpuOK := processCPU()
			b.ResetTimer()
			sum, err := camp.Run(context.Background())
			if ds != nil {
				if cerr := ds.Close(); err == nil {
					err = cerr
				}
			}
			b.StopTimer()
			cpu1, _ := processCPU()
			require.NoError(b, err)
			require.Equal(b, max(b.N, 1), sum.Ended)
			b.ReportMetric(float64(max(b.N, 1))/b.Elapsed().Seconds(), "trials/s")
			if cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1e3/float64(max(b.N, 1)), "cpu-us/trial")
			}
		})
	}
}
