package bench_test

// The logging benchmarks: BenchmarkLogMaze runs the campaign of CampaignMaze/runner
// (one-episode trials of the reference maze on two workers) with every step logged
// into an Arrow dataset, uncompressed ("on"), with LZ4 ("lz4") or Zstandard ("zstd")
// body compression, and without a log ("off"), so that on/off is the share of the
// campaign's throughput that logging leaves; BenchmarkLogWriter feeds the writer
// alone the recorded events of maze trials, one iteration a row:
//
//	go test -run XXX -bench 'LogMaze|LogWriter' -benchtime 3s -count 5 ./bench
//
// Each reports rows/s, MB/s (bytes of the parts written per second), allocs/row
// (every allocation over the rows logged) and, the LogMaze cases on Linux,
// cpu-us/trial (the process's CPU time, kernel included, per trial), which reads
// the cost of logging off a machine that other work shares.
//
// Targets: logging every step costs at most 25% of the campaign's throughput
// (on/off >= 0.8, on a machine with cores to spare for the writers' goroutines);
// allocations per logged row below 1.

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/batonrl/baton/internal/bench"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func BenchmarkLogMaze(b *testing.B)    { runCases(b, "LogMaze/") }
func BenchmarkLogWriter(b *testing.B)  { runCases(b, "LogWriter/") }
func BenchmarkReplayMaze(b *testing.B) { runCases(b, "ReplayMaze") }

// The logging cases are in the suite, each compared with the campaign without a log.
func TestLogCases(t *testing.T) {
	want := map[string]string{
		"LogMaze/on":     "LogMaze/off",
		"LogMaze/none":   "LogMaze/off",
		"LogMaze/zstd":   "LogMaze/off",
		"LogMaze/raw":    "LogMaze/off",
		"LogMaze/off":    "",
		"LogWriter/maze": "",
		"ReplayMaze":     "CampaignMaze/runner",
	}
	for name, baseline := range want {
		c, ok := bench.Lookup(name)
		require.True(t, ok, name)
		assert.Equal(t, baseline, c.Baseline, name)
		if strings.HasPrefix(name, "LogMaze/") || name == "ReplayMaze" {
			assert.Equal(t, "trial", c.Unit, name)
		} else {
			assert.Equal(t, "row", c.Unit, name)
		}
	}
	off, _ := bench.Lookup("LogMaze/off")
	runner, _ := bench.Lookup("CampaignMaze/runner")
	assert.Equal(t, runner.Unit, off.Unit, "LogMaze/off is CampaignMaze/runner's campaign")
}

// The logging cases run, log what they run and report their figures.
func TestLogCasesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	bt := flag.Lookup("test.benchtime")
	require.NotNil(t, bt)
	old := bt.Value.String()
	t.Cleanup(func() { _ = flag.Set("test.benchtime", old) })
	// Enough iterations for the writers' buffers, made once, to be amortised:
	// 300 trials are some 19,000 rows.
	for name, n := range map[string]int{"LogMaze/on": 300, "LogMaze/zstd": 300, "LogMaze/raw": 300, "LogMaze/off": 300, "LogWriter/maze": 20000, "ReplayMaze": 300} {
		t.Run(name, func(t *testing.T) {
			c, ok := bench.Lookup(name)
			require.True(t, ok)
			require.NoError(t, flag.Set("test.benchtime", fmt.Sprintf("%dx", n)))
			r := testing.Benchmark(c.Run)
			require.Equal(t, n, r.N, "the case failed")
			assert.Positive(t, r.Extra[c.Unit+"s/s"], "%s/s", c.Unit)
			if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && c.Unit == "trial" {
				assert.Positive(t, r.Extra["cpu-us/trial"], "cpu-us/trial")
			}
			if name == "LogMaze/off" {
				assert.NotContains(t, r.Extra, "rows/s")
				return
			}
			if name == "ReplayMaze" {
				assert.Positive(t, r.Extra["rows/s"], "rows/s")
				return
			}
			assert.Positive(t, r.Extra["rows/s"], "rows/s")
			assert.Positive(t, r.Extra["MB/s"], "MB/s")
			if !raceEnabled { // the race detector allocates
				assert.Less(t, r.Extra["allocs/row"], 1.0, "allocs/row")
			}
		})
	}
}
