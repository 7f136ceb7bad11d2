package lz4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
)

// lz4MazeFloats is the width, in float32, of a maze-like observation row: a
// 10x10 map, the agent's position and an action mask.
const lz4MazeFloats = 105

// lz4MazeRows returns rows of maze-like observations, as a logging run writes
// them: 105 float32 per row (420 bytes), the first 100 the same 0/1 map in
// every row, then the agent's x and y, which move by a step at a time, and
// three 0/1 mask floats that change at random.
func lz4MazeRows(r *rand.Rand, rows int) []byte {
	var maze [100]float32
	for i := range maze {
		if r.IntN(3) == 0 {
			maze[i] = 1
		}
	}
	buf := make([]byte, 0, rows*lz4MazeFloats*4)
	x, y := 5, 5
	for range rows {
		for _, v := range maze {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		switch r.IntN(4) {
		case 0:
			x = min(x+1, 9)
		case 1:
			x = max(x-1, 0)
		case 2:
			y = min(y+1, 9)
		default:
			y = max(y-1, 0)
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(x)))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(y)))
		for range 3 {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(r.IntN(2))))
		}
	}
	return buf
}

// lz4Int32Runs returns n int32 values in runs of 1 to 50 equal values, as
// an episode or step counter column holds them.
func lz4Int32Runs(r *rand.Rand, n int) []byte {
	buf := make([]byte, 0, n*4)
	for len(buf) < n*4 {
		v := r.Uint32()
		for k := 1 + r.IntN(50); k > 0 && len(buf) < n*4; k-- {
			buf = binary.LittleEndian.AppendUint32(buf, v)
		}
	}
	return buf
}

// lz4Int64Ticks returns n incrementing int64 values, as a timestamp column
// holds them.
func lz4Int64Ticks(n int) []byte {
	buf := make([]byte, 0, n*8)
	for i := range n {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(1_700_000_000_000+i*1000))
	}
	return buf
}

// lz4Random returns n random bytes: incompressible.
func lz4Random(r *rand.Rand, n int) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	return buf
}

// lz4MutatedRows returns rows copies of a random row of width bytes, each
// with a few bytes changed from the one before.
func lz4MutatedRows(r *rand.Rand, width, rows int) []byte {
	row := lz4Random(r, width)
	buf := make([]byte, 0, width*rows)
	for range rows {
		for range 3 {
			row[r.IntN(width)] = byte(r.Uint32())
		}
		buf = append(buf, row...)
	}
	return buf
}

// lz4PierrecFrame compresses src as arrow-go does today: pierrec/lz4's
// Writer with no checksums and 64 KB blocks.
func lz4PierrecFrame(t testing.TB, src []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	require.NoError(t, w.Apply(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb)))
	_, err := w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// lz4TestBlock is one data block of a frame as lz4ParseFrame finds it.
type lz4TestBlock struct {
	data   []byte // the block's bytes, compressed unless stored
	stored bool   // whether the block is stored uncompressed
}

// lz4ParseFrame splits a frame written by AppendFrame into its blocks,
// checking the header, that the end mark follows the last block and that
// nothing follows the end mark.
func lz4ParseFrame(frame []byte) ([]lz4TestBlock, error) {
	if !bytes.HasPrefix(frame, frameHeader[:]) {
		return nil, fmt.Errorf("frame header % x, want % x", frame[:min(len(frame), 7)], frameHeader)
	}
	p := frame[len(frameHeader):]
	var blocks []lz4TestBlock
	for {
		if len(p) < 4 {
			return nil, errors.New("frame truncated before the end mark")
		}
		size := binary.LittleEndian.Uint32(p)
		p = p[4:]
		if size == 0 {
			break
		}
		b := lz4TestBlock{stored: size&storedFlag != 0}
		size &^= storedFlag
		if size > blockMax || int(size) > len(p) {
			return nil, fmt.Errorf("block size %d, %d bytes left", size, len(p))
		}
		b.data, p = p[:size], p[size:]
		blocks = append(blocks, b)
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%d bytes after the end mark", len(p))
	}
	return blocks, nil
}

// lz4CheckBlock decodes one compressed block by its sequences, checking the
// rules of the LZ4 block format that decoders rely on, and returns the
// decoded bytes, appended to out[:0]. n is the block's decoded size. offset >
// 0 also requires every match to be at that offset (the stride matcher's only
// one).
func lz4CheckBlock(out, block []byte, n, offset int) ([]byte, error) {
	out = out[:0]
	p := block
	readLen := func(v int) (int, error) {
		if v < 15 {
			return v, nil
		}
		for {
			if len(p) == 0 {
				return 0, errors.New("length runs past the block")
			}
			b := p[0]
			p = p[1:]
			v += int(b)
			if b != 255 {
				return v, nil
			}
		}
	}
	for {
		if len(p) == 0 {
			return nil, errors.New("block ends without a last literals-only sequence")
		}
		tok := p[0]
		p = p[1:]
		ll, err := readLen(int(tok >> 4))
		if err != nil {
			return nil, err
		}
		if ll > len(p) {
			return nil, fmt.Errorf("%d literals, %d bytes left", ll, len(p))
		}
		out = append(out, p[:ll]...)
		p = p[ll:]
		if len(p) == 0 {
			// The last sequence: literals only, and lastLiterals of them
			// at least (unless the whole block is shorter than a match
			// could ever fit in).
			if tok&15 != 0 {
				return nil, errors.New("last sequence has a match length")
			}
			if n > mfLimit && ll < lastLiterals {
				return nil, fmt.Errorf("block ends with %d literals, want at least %d", ll, lastLiterals)
			}
			break
		}
		if len(p) < 2 {
			return nil, errors.New("offset runs past the block")
		}
		off := int(binary.LittleEndian.Uint16(p))
		p = p[2:]
		ml, err := readLen(int(tok & 15))
		if err != nil {
			return nil, err
		}
		ml += minMatch
		start := len(out)
		switch {
		case off == 0 || off > start:
			return nil, fmt.Errorf("match at %d with offset %d reaches before the block", start, off)
		case offset > 0 && off != offset:
			return nil, fmt.Errorf("match at %d with offset %d, want %d", start, off, offset)
		case start > n-mfLimit:
			return nil, fmt.Errorf("match starts at %d, within %d bytes of the end %d", start, mfLimit, n)
		case start+ml > n-lastLiterals:
			return nil, fmt.Errorf("match %d+%d ends within %d bytes of the end %d", start, ml, lastLiterals, n)
		}
		for k := range ml {
			out = append(out, out[start-off+k])
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("block decodes to %d bytes, want %d", len(out), n)
	}
	return out, nil
}

// lz4Checker checks the frames AppendFrame writes. It keeps pierrec/lz4's
// Reader and its buffers from one frame to the next, so that the fuzz target,
// which checks every input twice, spends its time on the encoder.
type lz4Checker struct {
	zr  *lz4.Reader  // pierrec/lz4's Reader, the one arrow-go reads LZ4_FRAME with
	dec bytes.Buffer // the frame as zr decodes it
	buf []byte       // a block as lz4.UncompressBlock decodes it
	own []byte       // a block as lz4CheckBlock decodes it
	rdr bytes.Reader // the frame zr reads
}

// newLZ4Checker returns an lz4Checker.
func newLZ4Checker() *lz4Checker {
	return &lz4Checker{zr: lz4.NewReader(nil), buf: make([]byte, blockMax)}
}

// check checks a frame AppendFrame wrote for src with stride: that
// pierrec/lz4's Reader decodes it to src, that each block decodes alone
// (independent blocks) with lz4.UncompressBlock and with the test's own
// decoder, which also checks the block rules, and that the blocks the stride
// matcher compressed only hold matches a stride back.
func (c *lz4Checker) check(t testing.TB, frame, src []byte, stride int) {
	t.Helper()
	c.rdr.Reset(frame)
	c.zr.Reset(&c.rdr)
	c.dec.Reset()
	_, err := io.Copy(&c.dec, c.zr)
	require.NoError(t, err)
	got := c.dec.Bytes()
	require.True(t, bytes.Equal(src, got), "pierrec's Reader decodes %d bytes that differ from the %d of src", len(got), len(src))

	blocks, err := lz4ParseFrame(frame)
	require.NoError(t, err)
	require.Len(t, blocks, (len(src)+blockMax-1)/blockMax)
	for k, b := range blocks {
		want := src[k*blockMax : min(len(src), (k+1)*blockMax)]
		if b.stored {
			require.Equal(t, want, b.data, "stored block %d", k)
			continue
		}
		require.Less(t, len(b.data), len(want), "block %d is compressed but not smaller", k)
		n, err := lz4.UncompressBlock(b.data, c.buf)
		require.NoError(t, err, "block %d", k)
		require.True(t, bytes.Equal(want, c.buf[:n]), "block %d decoded by lz4.UncompressBlock differs", k)

		offset := 0
		if stride >= minMatch && stride <= maxOffset && stride <= len(want)-mfLimit {
			offset = stride
		}
		c.own, err = lz4CheckBlock(c.own, b.data, len(want), offset)
		require.NoError(t, err, "block %d", k)
		require.True(t, bytes.Equal(want, c.own), "block %d decoded by the test's decoder differs", k)
	}
}

// TestLZ4CheckBlock checks that the test's block checker catches blocks that
// break the end-of-block rules, which pierrec/lz4's decoder accepts, so that
// its passing on AppendFrame's blocks means something.
func TestLZ4CheckBlock(t *testing.T) {
	a := func(n int) []byte { return bytes.Repeat([]byte{'a'}, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name    string
		block   []byte
		wantErr string
	}{
		// 1 literal, a match of 10 at offset 1 (ending 5 bytes before the
		// end), then 5 literals.
		{name: "valid", block: cat([]byte{0x16, 'a', 1, 0}, []byte{0x50}, a(5))},
		// A match of 14 that ends 1 byte before the end.
		{name: "match in last 5", block: cat([]byte{0x1a, 'a', 1, 0}, []byte{0x10}, a(1)), wantErr: "ends within"},
		// A match that starts 11 bytes before the end.
		{name: "match in last 12", block: cat([]byte{0x52}, a(5), []byte{1, 0}, []byte{0x50}, a(5)), wantErr: "starts at"},
		{name: "offset before block", block: cat([]byte{0x16, 'a', 2, 0}, []byte{0x50}, a(5)), wantErr: "reaches before"},
		{name: "ends with a match", block: []byte{0x16, 'a', 1, 0}, wantErr: "without"},
	}
	buf := make([]byte, 64)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lz4CheckBlock(nil, tt.block, 16, 0)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				require.Equal(t, a(16), got)
			}
			if tt.wantErr != "reaches before" && tt.wantErr != "without" {
				// pierrec's decoder takes them all the same.
				n, err := lz4.UncompressBlock(tt.block, buf)
				require.NoError(t, err)
				require.Equal(t, a(16), buf[:n])
			}
		})
	}
}

// TestLZ4FrameHeader checks that the frame header is what pierrec/lz4's Writer
// writes with arrow-go's options, and that an empty buffer makes the same
// frame as pierrec's: the header and the end mark.
func TestLZ4FrameHeader(t *testing.T) {
	want := lz4PierrecFrame(t, nil)
	require.Equal(t, frameHeader[:], want[:len(frameHeader)])
	var e Encoder
	for _, stride := range []int{0, 420} {
		require.Equal(t, want, e.AppendFrame(nil, nil, stride))
	}
	for _, n := range []int{1, 13, 100_000} {
		require.Equal(t, frameHeader[:], lz4PierrecFrame(t, make([]byte, n))[:len(frameHeader)])
	}
}

// TestLZ4Frame round-trips buffers of many sizes and kinds through
// AppendFrame and pierrec/lz4's decoders, and checks the blocks it writes
// against the LZ4 block rules.
func TestLZ4Frame(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	maze := lz4MazeRows(r, 4096)
	random := lz4Random(r, 3*blockMax+1000)
	zeros := make([]byte, 3*blockMax+1000)
	tests := []struct {
		name   string
		src    []byte
		stride int
		// stored says every block must be stored, compressed that none
		// may be; neither leaves it to the encoder.
		stored, compressed bool
	}{
		{name: "empty", src: nil},
		{name: "empty stride", src: []byte{}, stride: 420},
		{name: "1 byte", src: []byte{7}, stored: true},
		{name: "1 byte stride", src: []byte{7}, stride: 4, stored: true},
		{name: "12 zeros", src: zeros[:12], stride: 4, stored: true},
		{name: "13 zeros", src: zeros[:13], stride: 4, stored: true},
		{name: "13 zeros generic", src: zeros[:13]},
		{name: "16 zeros stride 4", src: zeros[:16], stride: 4, compressed: true},
		{name: "20 zeros stride 8", src: zeros[:20], stride: 8, compressed: true},
		{name: "64KiB maze", src: maze[:blockMax], stride: 420, compressed: true},
		{name: "64KiB+1 maze", src: maze[:blockMax+1], stride: 420},
		{name: "64KiB+13 maze", src: maze[:blockMax+13], stride: 420},
		{name: "64KiB+1 maze generic", src: maze[:blockMax+1]},
		{name: "3 blocks maze", src: maze[:3*blockMax], stride: 420, compressed: true},
		{name: "zeros", src: zeros, compressed: true},
		{name: "zeros stride 4", src: zeros, stride: 4, compressed: true},
		{name: "zeros stride 420", src: zeros, stride: 420, compressed: true},
		{name: "random", src: random, stored: true},
		{name: "random stride 4", src: random, stride: 4, stored: true},
		{name: "random stride 420", src: random, stride: 420, stored: true},
		{name: "maze stride 0", src: maze, stride: 0, compressed: true},
		{name: "maze stride -1", src: maze, stride: -1, compressed: true},
		{name: "maze stride 3", src: maze, stride: 3, compressed: true},
		{name: "maze stride 4", src: maze, stride: 4},
		{name: "maze stride 420", src: maze, stride: 420, compressed: true},
		{name: "maze stride 840", src: maze, stride: 840, compressed: true},
		{name: "maze stride 65535", src: maze, stride: 65535, compressed: true},
		{name: "maze stride 70000", src: maze, stride: 70000, compressed: true},
		{name: "int32 runs stride 4", src: lz4Int32Runs(r, 50_000), stride: 4, compressed: true},
		{name: "int64 ticks stride 8", src: lz4Int64Ticks(50_000), stride: 8, compressed: true},
		{name: "mutated rows stride 1000", src: lz4MutatedRows(r, 1000, 200), stride: 1000, compressed: true},
		{name: "mutated rows stride 60000", src: lz4MutatedRows(r, 60_000, 4), stride: 60_000},
		{name: "mutated rows stride 65535", src: lz4MutatedRows(r, 65_535, 3), stride: 65_535},
		{name: "long literals then matches", src: append(lz4Random(r, 5000), zeros[:70_000]...), stride: 16},
	}
	var e Encoder
	c := newLZ4Checker()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := e.AppendFrame(nil, tt.src, tt.stride)
			c.check(t, frame, tt.src, tt.stride)
			blocks, err := lz4ParseFrame(frame)
			require.NoError(t, err)
			for k, b := range blocks {
				if tt.stored {
					require.True(t, b.stored, "block %d should be stored", k)
				}
				if tt.compressed {
					require.False(t, b.stored, "block %d should be compressed", k)
				}
			}

			// Appending keeps what dst held, and the frame is the same
			// whatever the encoder compressed before.
			prefix := []byte("prefix")
			again := e.AppendFrame(bytes.Clone(prefix), tt.src, tt.stride)
			require.Equal(t, prefix, again[:len(prefix)])
			require.Equal(t, frame, again[len(prefix):])
			t.Logf("%d bytes -> %d", len(tt.src), len(frame))
		})
	}
}

// TestLZ4Stored round-trips buffers through AppendStored: every block stored.
func TestLZ4Stored(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := newLZ4Checker()
	for _, n := range []int{0, 1, 13, blockMax, blockMax + 1, 3*blockMax + 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			src := lz4Random(r, n)
			frame := AppendStored([]byte("prefix"), src)
			require.Equal(t, []byte("prefix"), frame[:6])
			frame = frame[6:]
			c.check(t, frame, src, 0)
			blocks, err := lz4ParseFrame(frame)
			require.NoError(t, err)
			require.Len(t, blocks, (n+blockMax-1)/blockMax)
			for k, b := range blocks {
				require.True(t, b.stored, "block %d", k)
			}
		})
	}
}

// TestLZ4FrameRatio checks that the stride matcher compresses maze-like rows
// at least about as well as pierrec/lz4's hash-table compressor (within
// 1.3x). Measured on 4096 rows (1,720,320 bytes): stride 420 gives a frame of
// 63,786 bytes, pierrec's Writer 178,426, a ratio of 0.357. The stride
// matcher does better because it copies the whole row above (a 400-byte
// match), where pierrec's table, which keeps the latest position of each
// hash, mostly finds short repeats within the map.
func TestLZ4FrameRatio(t *testing.T) {
	src := lz4MazeRows(rand.New(rand.NewPCG(1, 2)), 4096)
	var e Encoder
	stride := e.AppendFrame(nil, src, lz4MazeFloats*4)
	generic := e.AppendFrame(nil, src, 0)
	pierrec := lz4PierrecFrame(t, src)
	ratio := float64(len(stride)) / float64(len(pierrec))
	t.Logf("%d bytes: stride %d, generic %d, pierrec writer %d; stride/pierrec %.3f",
		len(src), len(stride), len(generic), len(pierrec), ratio)
	require.LessOrEqual(t, ratio, 1.3)
	// The generic path is pierrec's compressor block by block: the same
	// blocks as its Writer.
	require.Equal(t, pierrec, generic)
}

// TestLZ4FrameAllocs checks that AppendFrame allocates nothing once dst has
// the capacity, on either path.
func TestLZ4FrameAllocs(t *testing.T) {
	src := lz4MazeRows(rand.New(rand.NewPCG(1, 2)), 1024)
	var e Encoder
	dst := make([]byte, 0, len(src)+1024)
	for _, stride := range []int{0, 420} {
		allocs := testing.AllocsPerRun(10, func() {
			dst = e.AppendFrame(dst[:0], src, stride)
		})
		require.Zero(t, allocs, "stride %d", stride)
	}
}

// FuzzLZ4Frame round-trips data through AppendFrame and pierrec/lz4's
// Reader, with the stride given and, so that the stride matcher meets
// matches, data repeated three times with a stride of its length.
func FuzzLZ4Frame(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{1}, uint16(4))
	f.Add(make([]byte, 13), uint16(4))
	f.Add(make([]byte, 100), uint16(4))
	f.Add(lz4MazeRows(r, 4), uint16(420))
	f.Add(lz4Int64Ticks(64), uint16(8))
	f.Add(lz4Random(r, 64), uint16(16))
	f.Add(lz4MutatedRows(r, 30, 20), uint16(30))
	var (
		e            Encoder
		c            = newLZ4Checker()
		frame, tiled []byte
	)
	f.Fuzz(func(t *testing.T, data []byte, stride uint16) {
		frame = e.AppendFrame(frame[:0], data, int(stride))
		c.check(t, frame, data, int(stride))

		tiled = append(append(append(tiled[:0], data...), data...), data...)
		frame = e.AppendFrame(frame[:0], tiled, len(data))
		c.check(t, frame, tiled, len(data))
	})
}

// BenchmarkLZ4Frame measures AppendFrame on the stride path and the generic
// one (pierrec), and pierrec/lz4's Writer as arrow-go uses it
// (pierrec-writer), on maze-like rows, random bytes and incrementing int64s.
func BenchmarkLZ4Frame(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	maze := lz4MazeRows(r, 4096)
	random := lz4Random(r, len(maze))
	ticks := lz4Int64Ticks(len(maze) / 8)

	encode := func(src []byte, stride int) func(b *testing.B) {
		return func(b *testing.B) {
			var e Encoder
			dst := e.AppendFrame(nil, src, stride)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				dst = e.AppendFrame(dst[:0], src, stride)
			}
			b.ReportMetric(float64(len(src))/float64(len(dst)), "ratio")
		}
	}
	b.Run("maze-rows/stride", encode(maze, lz4MazeFloats*4))
	b.Run("maze-rows/pierrec", encode(maze, 0))
	b.Run("maze-rows/pierrec-writer", func(b *testing.B) {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(maze)))
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			w.Reset(&buf)
			if _, err := w.Write(maze); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(maze))/float64(buf.Len()), "ratio")
	})
	b.Run("random/stride", encode(random, lz4MazeFloats*4))
	b.Run("random/pierrec", encode(random, 0))
	b.Run("int64-ticks/stride", encode(ticks, 8))
	b.Run("int64-ticks/pierrec", encode(ticks, 0))
}
