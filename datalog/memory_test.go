package datalog_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryRun logs rows synthetic rows, a new trial every 1000 rows, and returns the
// most Arrow memory held at once, the growth of the Go heap from a quarter of the run
// to its end, and the allocations per row.
//
// With checked, the writer takes its memory from a checked allocator, which counts
// the Arrow memory held but allocates for its own bookkeeping; without it, from the
// default Go allocator, and the Arrow memory is not counted.
func memoryRun(t *testing.T, rows int, checked bool, opts ...datalog.WriteOption) (maxArrow int, heapGrowth int64, allocsPerRow float64, st datalog.Stats) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	if checked {
		opts = append(opts, datalog.WithAllocator(mem))
	}
	ds, err := datalog.NewDataset(t.TempDir(), opts...)
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	s := newSynthetic(32)
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	var quarter int64
	var ms0, ms1 runtime.MemStats
	id := "t-0"
	for i := range rows {
		if i%1000 == 0 {
			if i > 0 {
				s.end(t, w, id)
			}
			id = "trial-" + strconv.Itoa(i/1000)
			s.start(t, w, id)
		}
		if err := s.row(w, id); err != nil {
			t.Fatal(err)
		}
		if i%997 == 0 {
			maxArrow = max(maxArrow, mem.CurrentAlloc())
		}
		switch i {
		case rows / 4:
			quarter = heap()
			runtime.ReadMemStats(&ms0)
		case rows - 1:
			runtime.ReadMemStats(&ms1)
		}
	}
	heapGrowth = heap() - quarter
	allocsPerRow = float64(ms1.Mallocs-ms0.Mallocs) / float64(rows-1-rows/4)
	s.end(t, w, id)
	require.NoError(t, w.Close())
	st = ds.Stats()
	require.NoError(t, ds.Close())
	mem.AssertSize(t, 0)
	return maxArrow, heapGrowth, allocsPerRow, st
}

// The writer's memory does not grow with the run: what it holds is bounded by a batch
// per agent and the dictionaries of its open parts; and it allocates less than once
// per row.
func TestWriterMemory(t *testing.T) {
	rows := 200_000
	if raceEnabled {
		rows = 40_000
	}
	opts := []datalog.WriteOption{datalog.WithBatchRows(1024), datalog.WithMaxPartBytes(1 << 20), datalog.WithCompression(datalog.LZ4)}
	maxArrow, growth, _, st := memoryRun(t, rows, true, opts...)
	t.Logf("%d rows: at most %d bytes of Arrow memory, heap growth %d bytes, %d parts", rows, maxArrow, growth, st.Parts)
	assert.Less(t, maxArrow, 2<<20, "Arrow memory held at once")
	assert.Less(t, growth, int64(4<<20), "growth of the Go heap over three quarters of the run")
	assert.Greater(t, st.Parts, int64(2))
	if !raceEnabled {
		_, growth, allocs, _ := memoryRun(t, rows, false, opts...)
		t.Logf("with the Go allocator: heap growth %d bytes, %.3f allocations per row", growth, allocs)
		assert.Less(t, allocs, 1.0, "allocations per row")
	}
}

// The same over ten million rows; set BATON_LONG_TESTS=1 to run it (a minute or so,
// little disk thanks to ZSTD).
func TestWriterMemoryLong(t *testing.T) {
	if os.Getenv("BATON_LONG_TESTS") == "" || raceEnabled {
		t.Skip("set BATON_LONG_TESTS=1 (without -race) to log ten million rows")
	}
	const rows = 10_000_000
	opts := []datalog.WriteOption{datalog.WithCompression(datalog.ZSTD), datalog.WithMaxPartBytes(16 << 20)}
	maxArrow, growth, _, st := memoryRun(t, rows, true, opts...)
	t.Logf("%d rows: at most %d bytes of Arrow memory, heap growth %d bytes, %d parts, %d bytes", rows, maxArrow, growth, st.Parts, st.Bytes)
	assert.Less(t, maxArrow, 16<<20)
	assert.Less(t, growth, int64(8<<20))
	_, growth, allocs, _ := memoryRun(t, rows, false, opts...)
	t.Logf("with the Go allocator: heap growth %d bytes, %.4f allocations per row", growth, allocs)
	assert.Less(t, growth, int64(8<<20))
	assert.Less(t, allocs, 1.0)
}

// A maze campaign of ten million environment steps, every step logged: what the heap
// gains over the last three quarters of the run is what it gains without the log (the
// campaign keeps each trial's result). Set BATON_LONG_TESTS=1 to run it.
func TestCampaignMemoryLong(t *testing.T) {
	if os.Getenv("BATON_LONG_TESTS") == "" || raceEnabled {
		t.Skip("set BATON_LONG_TESTS=1 (without -race) to log a campaign of ten million steps")
	}
	const steps = 10_000_000
	withLog, rows := campaignHeapGrowth(t, steps, true)
	without, _ := campaignHeapGrowth(t, steps, false)
	t.Logf("%d rows logged; the heap grew by %d bytes over three quarters of the run, %d without the log", rows, withLog, without)
	assert.Less(t, withLog-without, int64(4<<20), "growth of the heap that the log adds")
}

// campaignHeapGrowth runs a maze campaign of at least steps environment steps, logged
// into a dataset with log, and returns how much the heap grew between a quarter of
// the steps and nearly all of them, and the rows logged.
func campaignHeapGrowth(t *testing.T, steps int64, log bool) (growth, rows int64) {
	// A sink of the campaign's own measures the heap when a quarter of the steps
	// and when nearly all of them have been taken.
	var (
		mu        sync.Mutex
		n         int64
		heapAt    [2]int64
		marks     = [2]int64{steps / 4, steps - steps/100}
		measuring int
	)
	sink := event.SinkFunc(func(_ context.Context, e *event.Event) error {
		if e.Kind != event.KindStep || e.Step.Index != 0 {
			return nil // one per environment step
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		if measuring < len(marks) && n == marks[measuring] {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heapAt[measuring] = int64(ms.HeapAlloc)
			measuring++
		}
		return nil
	})
	opts := []runners.CampaignOption{runners.WithTrials(int(steps / 40)), runners.WithWorkers(2), runners.WithSinks(sink)}
	var ds *datalog.Dataset
	if log {
		var err error
		ds, err = datalog.NewDataset(t.TempDir(), datalog.WithCompression(datalog.ZSTD))
		require.NoError(t, err)
		opts = append(opts, runners.WithWorkerSinks(ds.WorkerSinks()))
	}
	camp, err := runners.NewCampaign(testRegistry(t), runners.Spec{Env: "maze", Seed: 3}, opts...)
	require.NoError(t, err)
	sum, err := camp.Run(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, sum.EnvSteps, steps, "environment steps; more trials needed")
	require.Equal(t, len(marks), measuring)
	if ds != nil {
		require.NoError(t, ds.Close())
		st := ds.Stats()
		rows = st.Rows
		t.Logf("%d steps, %d rows in %d parts, %d bytes", sum.EnvSteps, st.Rows, st.Parts, st.Bytes)
	}
	return heapAt[1] - heapAt[0], rows
}
