package datalog_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/require"
)

// mazeTrial is the recorded events of one maze trial, which the benchmark relabels
// with a new trial id each time it plays them.
type mazeTrial struct {
	events []*event.Event
	info   *event.TrialInfo // its own copy, shared by its state events
	rows   int
}

// recordMazeTrials runs n one-episode maze trials (the campaign of bench's LogMaze)
// on one worker and returns their events, each trial's apart.
func recordMazeTrials(tb testing.TB, n int) []mazeTrial {
	tb.Helper()
	var events []*event.Event
	rec := event.SinkFunc(func(_ context.Context, e *event.Event) error {
		events = append(events, e.Clone())
		return nil
	})
	camp, err := runners.NewCampaign(testRegistry(tb), runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(n), runners.WithWorkers(1), runners.WithSinks(rec))
	require.NoError(tb, err)
	sum, err := camp.Run(context.Background())
	require.NoError(tb, err)
	require.Equal(tb, n, sum.Ended)
	byID := map[string]*mazeTrial{}
	var trials []mazeTrial
	var order []string
	for _, e := range events {
		mt := byID[e.Trial]
		if mt == nil {
			mt = &mazeTrial{}
			byID[e.Trial] = mt
			order = append(order, e.Trial)
		}
		if e.State != nil && e.State.Info != nil {
			if mt.info == nil {
				in := *e.State.Info
				mt.info = &in
			}
			e.State.Info = mt.info
		}
		if e.Kind == event.KindStep {
			mt.rows++
		}
		mt.events = append(mt.events, e)
	}
	for _, id := range order {
		trials = append(trials, *byID[id])
	}
	return trials
}

// feederCPU measures the CPU time of the goroutine that feeds a writer, locked to its
// thread meanwhile, apart from the writer's own goroutine, which encodes and writes
// the batches on another: what the Handle path costs the campaign's goroutine, its
// share of the garbage collector's work included, whatever else the machine runs.
type feederCPU struct {
	start time.Duration
	ok    bool
}

// startFeederCPU locks the goroutine to its thread and starts the clock.
func startFeederCPU(b *testing.B) *feederCPU {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	c := &feederCPU{}
	c.start, c.ok = threadCPU()
	return c
}

// report reports the thread's CPU time since the start per unit, n units in all, as
// cpu-ns/unit.
func (c *feederCPU) report(b *testing.B, n int, unit string) {
	if now, ok := threadCPU(); ok && c.ok {
		b.ReportMetric(float64(now-c.start)/float64(max(n, 1)), "cpu-ns/"+unit)
	}
}

// BenchmarkWriterHandle measures the path of Writer.Handle, on the goroutine that
// feeds it, for the campaign of bench's LogMaze: one-episode maze trials of about 63
// rows of 104 or 106 floats of observation, every trial new (its id made before the
// clock starts), written with LZ4 as LogMaze/on writes them. It plays the events of
// eight trials over and over, few enough for them to stay in the cache, as a
// campaign's events, just made, are. One op is one logged row. cpu-ns/row is the CPU
// time of the goroutine that calls Handle (see feederCPU), which ns/op mixes with the
// waits for the writer's own goroutine; allocs/row and allocs/trial count those of
// both goroutines.
func BenchmarkWriterHandle(b *testing.B) {
	trials := recordMazeTrials(b, 8)
	perPass := 0
	for _, t := range trials {
		perPass += t.rows
	}
	ids := make([]string, b.N/perPass*len(trials)+len(trials)+1)
	for i := range ids {
		ids[i] = "trial-" + strconv.Itoa(i)
	}
	ds, err := datalog.NewDataset(b.TempDir(), datalog.WithCompression(datalog.LZ4))
	require.NoError(b, err)
	w, err := ds.NewWriter()
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	cpu := startFeederCPU(b)
	rows, k := 0, 0
	for rows < b.N {
		mt := &trials[k%len(trials)]
		id := ids[k]
		k++
		mt.info.ID = id
		for _, e := range mt.events {
			e.Trial = id
			if e.State != nil {
				e.State.Trial = id
			}
			if err := w.Handle(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
		rows += mt.rows
	}
	cpu.report(b, rows, "row")
	require.NoError(b, w.Close())
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(rows), "allocs/row")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(k), "allocs/trial")
	require.NoError(b, ds.Close())
}

// BenchmarkWriterTrial measures what a writer does once per trial: one op is a new
// trial of the synthetic pair of agents, its Running state, a row of each agent, its
// episode's end and its Ended state.
func BenchmarkWriterTrial(b *testing.B) {
	ds, err := datalog.NewDataset(b.TempDir(), datalog.WithCompression(datalog.LZ4))
	require.NoError(b, err)
	w, err := ds.NewWriter()
	require.NoError(b, err)
	s := newSynthetic(8)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = "trial-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	sc := event.StateChange{Info: s.info}
	stateEv := event.Event{Kind: event.KindState, State: &sc}
	ep := event.EpisodeEvent{End: true, Ticks: 2, Returns: []float64{1, 2}}
	epEv := event.Event{Kind: event.KindEpisode, Episode: &ep}
	handle := func(e *event.Event) {
		if err := w.Handle(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startFeederCPU(b)
	for _, id := range ids {
		s.info.ID, sc.Trial, sc.State, stateEv.Trial = id, id, event.Running, id
		handle(&stateEv)
		for range 2 {
			if err := s.row(w, id); err != nil {
				b.Fatal(err)
			}
		}
		epEv.Trial = id
		handle(&epEv)
		sc.State = event.Ended
		handle(&stateEv)
	}
	cpu.report(b, len(ids), "trial")
	require.NoError(b, w.Close())
	b.StopTimer()
	require.NoError(b, ds.Close())
}
