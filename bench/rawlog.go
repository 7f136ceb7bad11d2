package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/batonrl/baton/runners"
)

// LogMaze/raw is the hand-written baseline of the logging cases: the campaign of
// LogMaze/off with a sink per worker that writes the values of every step, as they
// are, little-endian, into a file through a 1 MiB buffer: the ids as length-prefixed
// strings, the counters, flags, observation, action, mask, reward, reward sources,
// span and messages. It is what logging costs with no format, no columns and no
// compression, the floor of a logger that writes every value of every row; the
// LogMaze cases compare with LogMaze/off, and their figures sit beside this one's.

// rawLog is a sink that writes the values of every step to a file.
type rawLog struct {
	f    *os.File
	w    *bufio.Writer
	buf  []byte
	rows int64
}

func (l *rawLog) Handle(_ context.Context, e *runners.Event) error {
	if e.Kind != runners.KindStep {
		return nil
	}
	s := e.Step
	b := l.buf[:0]
	b = appendString(b, e.Trial)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.Episode))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Tick))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.Index))
	b = appendString(b, s.AgentID)
	b = appendString(b, s.ParentID)
	b = append(b, b2u8(s.Start), b2u8(s.Acting), b2u8(s.Terminated), b2u8(s.Truncated))
	for _, x := range s.Obs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Action.Int))
	for _, x := range s.Action.Floats {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	for _, x := range s.Action.Ints {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	for _, m := range s.Mask {
		b = append(b, b2u8(m))
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(s.Reward)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Sources)))
	for _, r := range s.Sources {
		b = appendString(b, r.Source)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(r.Value)))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(s.SpanTicks))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Messages)))
	for _, m := range s.Messages {
		b = appendString(b, m.From)
		b = appendString(b, m.To)
		b = appendString(b, string(m.Payload))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.Sent))
	}
	l.buf = b
	l.rows++
	_, err := l.w.Write(b)
	return err
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func b2u8(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// logMazeRaw runs b.N trials of the campaign of campaignMaze, each worker writing
// every step to a file of its own with a rawLog.
func logMazeRaw(b *testing.B) {
	reg, err := mazeRegistry()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var (
		mu   sync.Mutex
		logs []*rawLog
	)
	sinks := func(worker int) (runners.Sink, error) {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.bin", worker)))
		if err != nil {
			return nil, err
		}
		l := &rawLog{f: f, w: bufio.NewWriterSize(f, 1<<20), buf: make([]byte, 0, 4096)}
		mu.Lock()
		logs = append(logs, l)
		mu.Unlock()
		return l, nil
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
	var rows, bytes int64
	for _, l := range logs {
		if ferr := l.w.Flush(); err == nil {
			err = ferr
		}
		if st, serr := l.f.Stat(); serr == nil {
			bytes += st.Size()
		}
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
		rows += l.rows
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
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(rows)/sec, "rows/s")
	b.ReportMetric(float64(bytes)/sec/1e6, "MB/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(max(rows, 1)), "allocs/row")
}
