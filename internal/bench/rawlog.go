package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/batonrl/baton/event"
)

// LogMaze/raw is the hand-written baseline of the logging cases: the campaign of
// LogMaze/off with a sink per worker that writes the values of every step, as they
// are in memory (little-endian), into a file through a 1 MiB buffer: the ids as length-prefixed
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

func (l *rawLog) Handle(_ context.Context, e *event.Event) error {
	if e.Kind != event.KindStep {
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
	b = append(b, floatBytes(s.Obs)...)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Action.Int))
	b = append(b, floatBytes(s.Action.Floats)...)
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

// floatBytes returns the bytes of f as they are in memory: one copy for the whole
// observation, little-endian on the machines the benchmarks run on.
func floatBytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
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
	dir := b.TempDir()
	var (
		mu   sync.Mutex
		logs []*rawLog
	)
	sinks := func(worker int) (event.Sink, error) {
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
	loggedCampaign(b, sinks, func() (rows, bytes int64, err error) {
		for _, l := range logs {
			err = errors.Join(err, l.w.Flush())
			if st, serr := l.f.Stat(); serr == nil {
				bytes += st.Size()
			}
			err = errors.Join(err, l.f.Close())
			rows += l.rows
		}
		return rows, bytes, err
	})
}
