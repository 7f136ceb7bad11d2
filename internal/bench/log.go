package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/replay"
	"github.com/batonrl/baton/runners"
)

// The logging cases measure what an Arrow activity log costs a campaign. LogMaze/off
// runs the campaign of CampaignMaze/runner (one-episode trials of the reference maze
// on CampaignWorkers workers, oracle strategy and random motion) without a sink;
// LogMaze/on, LogMaze/none and LogMaze/zstd run the same trials with every step
// logged, the campaign's workers each writing into a datalog.Dataset of its own in a
// temporary directory, and are compared with LogMaze/off, so that their ratio is the
// share of the campaign's throughput that logging leaves. LogMaze/on logs with the
// defaults of datalog and of baton run --log (LZ4 frames), LogMaze/none writes the
// batches uncompressed and LogMaze/zstd compresses them with Zstandard.
//
// ReplayMaze replays a log of the trials of CampaignMaze/runner (written as LogMaze/on
// writes it, before the timer starts) with replay.Run, which reads each part once
// and re-runs the trials on one goroutine, and is compared with CampaignMaze/runner:
// their ratio is the share of the unlogged campaign's throughput that a replay of
// the same trials reaches. It reports trials/s, steps/s (environment steps, as the
// campaign counts them), rows/s (the rows compared) and cpu-us/trial (the replay's
// CPU time per trial, to compare with LogMaze/off's where throughput is noisy).
//
// LogWriter/maze measures the writer alone: it feeds one datalog.Writer the recorded
// events of maze trials, and one iteration is one logged row.
//
// The LogMaze cases report trials/s and steps/s, LogWriter/maze rows/s; the cases
// that log also report rows/s, MB/s (the bytes of the parts over the elapsed time) and
// allocs/row (every allocation of the benchmark, the campaign's own included, over
// the rows logged). The LogMaze cases report cpu-us/trial too, the CPU time the
// process used per trial (every goroutine, the kernel's time in its system calls
// included, as getrusage(2) counts it on Unix systems): on a machine that other work
// shares, the ratio of those is the cost of logging when the ratio of throughputs is
// noisy.

// logCases are the logging cases of the suite.
func logCases() []Case {
	return []Case{
		{Name: "LogMaze/on", Baseline: "LogMaze/off", Unit: "trial", Run: logMaze(datalog.DefaultCompression)},
		{Name: "LogMaze/none", Baseline: "LogMaze/off", Unit: "trial", Run: logMaze(datalog.Uncompressed)},
		{Name: "LogMaze/zstd", Baseline: "LogMaze/off", Unit: "trial", Run: logMaze(datalog.ZSTD)},
		{Name: "LogMaze/raw", Baseline: "LogMaze/off", Unit: "trial", Run: logMazeRaw},
		{Name: "LogMaze/off", Unit: "trial", Run: withCPU(campaignMaze)},
		{Name: "LogWriter/maze", Unit: "row", Run: logWriter},
		{Name: "ReplayMaze", Baseline: "CampaignMaze/runner", Unit: "trial", Run: replayMaze},
	}
}

// replayMaze logs b.N trials of the campaign of campaignMaze, then times their
// replay.
func replayMaze(b *testing.B) {
	reg, err := mazeRegistry()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "log")
	defer os.RemoveAll(dir) //nolint:errcheck // a temporary directory
	ds, err := datalog.NewDataset(dir)
	if err != nil {
		b.Fatal(err)
	}
	camp, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(max(b.N, 1)), runners.WithWorkers(CampaignWorkers),
		runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		b.Fatal(err)
	}
	sum, err := camp.Run(context.Background())
	if cerr := ds.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	rep, err := replay.Run(context.Background(), dir, reg)
	b.StopTimer()
	cpu1, _ := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	if len(rep.Mismatches) > 0 || len(rep.Incomplete) > 0 || rep.Trials != max(b.N, 1) {
		b.Fatalf("replayed %d trials of %d: %d mismatches (first %v), %d incomplete", rep.Trials, max(b.N, 1), len(rep.Mismatches), rep.Mismatches, len(rep.Incomplete))
	}
	reportTrials(b, sum.EnvSteps)
	b.ReportMetric(float64(rep.Steps)/b.Elapsed().Seconds(), "rows/s")
	if cpuOK {
		reportCPU(b, cpu1-cpu0)
	}
}

// mazeRegistry returns a registry with the maze registered.
func mazeRegistry() (*registry.Registry, error) {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		return nil, err
	}
	return reg, nil
}

// logMaze runs b.N trials of the campaign of campaignMaze with every step logged into a
// dataset written with compression c.
func logMaze(c datalog.Compression) func(b *testing.B) {
	return func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "log")
		ds, err := datalog.NewDataset(dir, datalog.WithCompression(c))
		if err != nil {
			b.Fatal(err)
		}
		loggedCampaign(b, ds.WorkerSinks(), func() (rows, bytes int64, err error) {
			err = ds.Close()
			st := ds.Stats()
			return st.Rows, st.Bytes, err
		})
		// Free the disk now rather than after every round of the benchmark.
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// loggedCampaign runs b.N trials of the campaign of campaignMaze, each worker
// feeding the sink that sinks makes for it, and reports trials/s, steps/s,
// cpu-us/trial and reportLog's figures; closeLog, timed with the campaign, finishes
// the log and says how many rows and bytes it holds.
func loggedCampaign(b *testing.B, sinks func(worker int) (event.Sink, error), closeLog func() (rows, bytes int64, err error)) {
	reg, err := mazeRegistry()
	if err != nil {
		b.Fatal(err)
	}
	camp, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(max(b.N, 1)), runners.WithWorkers(CampaignWorkers),
		runners.WithWorkerSinks(sinks))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	sum, err := camp.Run(context.Background())
	rows, bytes, cerr := closeLog()
	if err == nil {
		err = cerr
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	runtime.ReadMemStats(&ms1)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Failed > 0 {
		b.Fatalf("%d trials failed: %v", sum.Failed, sum.Failures)
	}
	reportTrials(b, sum.EnvSteps)
	if cpuOK {
		reportCPU(b, cpu1-cpu0)
	}
	reportLog(b, rows, bytes, ms1.Mallocs-ms0.Mallocs)
}

// withCPU adds the cpu-us/trial metric to a benchmark of trials.
func withCPU(run func(b *testing.B)) func(b *testing.B) {
	return func(b *testing.B) {
		cpu0, ok := processCPU()
		run(b)
		if cpu1, _ := processCPU(); ok {
			reportCPU(b, cpu1-cpu0)
		}
	}
}

func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(max(b.N, 1)), "cpu-us/trial")
}

// reportLog reports rows/s, MB/s and allocs/row of a log written in b's elapsed time
// with mallocs allocations.
func reportLog(b *testing.B, rows, bytes int64, mallocs uint64) {
	if rows == 0 {
		b.Fatal("no row logged")
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(rows)/sec, "rows/s")
	b.ReportMetric(float64(bytes)/sec/1e6, "MB/s")
	b.ReportMetric(float64(mallocs)/float64(rows), "allocs/row")
}

// logWriterTrials is how many maze trials LogWriter/maze records and feeds, in a
// loop, to the writer.
const logWriterTrials = 64

// recordMaze returns the events of trials maze trials (the campaign of campaignMaze),
// each a copy the caller owns.
func recordMaze(trials int) ([]*event.Event, error) {
	reg, err := mazeRegistry()
	if err != nil {
		return nil, err
	}
	var events []*event.Event
	rec := event.SinkFunc(func(_ context.Context, e *event.Event) error {
		events = append(events, e.Clone())
		return nil
	})
	camp, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1},
		runners.WithTrials(trials), runners.WithWorkers(1), runners.WithSinks(rec))
	if err != nil {
		return nil, err
	}
	sum, err := camp.Run(context.Background())
	if err != nil {
		return nil, err
	}
	if sum.Ended != trials {
		return nil, fmt.Errorf("bench: %d of %d recorded maze trials ended", sum.Ended, trials)
	}
	return events, nil
}

// logWriter feeds one writer the recorded events of maze trials, over and over, until
// it has logged b.N rows. One iteration is one row.
func logWriter(b *testing.B) {
	events, err := recordMaze(logWriterTrials)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "log")
	ds, err := datalog.NewDataset(dir)
	if err != nil {
		b.Fatal(err)
	}
	w, err := ds.NewWriter()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
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
	err = w.Close()
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	if err != nil {
		b.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		b.Fatal(err)
	}
	st := ds.Stats()
	reportLog(b, st.Rows, st.Bytes, ms1.Mallocs-ms0.Mallocs)
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
}
