package datalog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// damagedLog writes a log of one trial of n rows of agent a, in batches of batch
// rows, whose agent part is replaced by part (nil: left as written); it returns the
// log's directory and the part's path.
func damagedLog(t *testing.T, part []byte) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	ds, err := NewDataset(dir, WithBatchRows(6))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	feed(t, w, "other", 3)
	require.NoError(t, ds.Close())
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "agent=a")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "agent=a"), 0o755))
	path = filepath.Join(dir, "agent=a", "part-00100.arrow")
	require.NoError(t, os.WriteFile(path, part, 0o644))
	return dir, path
}

// readAll reads every row of agent a, checking each; it returns the rows read and
// the error that ended them.
func readAll(t *testing.T, dir string, mem memory.Allocator) (rows int, err error) {
	t.Helper()
	l, err := Open(dir, WithAllocator(mem))
	require.NoError(t, err)
	for r, err := range l.Rows("a") {
		if err != nil {
			return rows, err
		}
		checkRow(t, &r, rows)
		rows++
	}
	return rows, nil
}

// A single bit flipped in any of the last 400 bytes (every third byte here) of a
// finished part (its last batches, its full dictionaries, its footer) is an error
// wrapping ErrCorrupt that names the part: never a panic, never other rows. The
// footer is checked whole, its copy of the schema and its padding too, since readers
// of the file format (pyarrow) read them. Only a flip in the last 10 bytes (the
// footer's length and the closing magic) reads back whole: the part then looks like
// one whose writer was killed as it finished, whose batches are all there and which
// Recover rewrites. Recover then keeps every batch that reads intact, and the log
// reads without an error.
func TestDamagedTail(t *testing.T) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			data, _ := writePart(t, 40, 6, comp)
			whole, corrupt := 0, 0
			for back := 1; back <= min(400, len(data)-8); back += 3 {
				bit := back % 8
				bad := bytes.Clone(data)
				bad[len(bad)-back] ^= 1 << bit
				dir, path := damagedLog(t, bad)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				rows, err := readAll(t, dir, mem)
				if err == nil {
					require.Equal(t, 40, rows, "byte -%d bit %d", back, bit)
					require.LessOrEqual(t, back, 10, "byte -%d bit %d reads as whole", back, bit)
					whole++
				} else {
					require.ErrorIs(t, err, ErrCorrupt, "byte -%d bit %d", back, bit)
					require.ErrorContains(t, err, path)
					corrupt++
				}
				_, err = Recover(dir, WithAllocator(mem))
				require.NoError(t, err, "byte -%d bit %d", back, bit)
				_, err = readAll(t, dir, mem)
				require.NoError(t, err, "after Recover: byte -%d bit %d", back, bit)
				mem.AssertSize(t, 0)
			}
			t.Logf("%s: %d flips read whole, %d are errors", comp, whole, corrupt)
			assert.Positive(t, corrupt)
		})
	}
}

// A bit flipped in the data of a batch (here an observation) fails its checksum:
// the reader reports the part as corrupt rather than returning other numbers.
func TestChecksumCatchesFlippedData(t *testing.T) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			data, blocks := writePart(t, 40, 6, comp)
			b := blocks[2]
			bad := bytes.Clone(data)
			bad[b.Offset+int64(b.Meta)+b.Body/2] ^= 0x10 // the middle of its body
			dir, path := damagedLog(t, bad)
			rows, err := readAll(t, dir, memory.NewGoAllocator())
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, err, ipcfile.ErrChecksum)
			require.ErrorContains(t, err, path)
			assert.Equal(t, 12, rows, "the batches before it")
		})
	}
}

// A part without a footer (its writer was killed) with one bit flipped in its second
// batch: Recover keeps every other batch, the ones after the damage included, and
// moves the original into DamagedDir.
func TestRecoverSkipsDamagedBatch(t *testing.T) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			data, blocks := writePart(t, 40, 6, comp)
			last := blocks[len(blocks)-1].End()
			bad := bytes.Clone(data[:last]) // no footer
			b := blocks[1]
			bad[b.Offset+int64(b.Meta)+b.Body-12] ^= 0x04
			dir, path := damagedLog(t, bad)
			_, err := readAll(t, dir, memory.NewGoAllocator())
			require.ErrorIs(t, err, ErrCorrupt, "the reader reports it")

			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rec, err := Recover(dir, WithAllocator(mem))
			require.NoError(t, err)
			require.Len(t, rec, 1)
			moved := filepath.Join(dir, DamagedDir, "agent=a", "part-00100.arrow")
			assert.Equal(t, Recovered{Path: path, Batches: len(blocks) - 1, Rows: 40 - 6, Skipped: 1, Damage: rec[0].Damage, Moved: moved}, rec[0])
			assert.Contains(t, rec[0].Damage, "skipped")
			got, err := os.ReadFile(moved)
			require.NoError(t, err)
			assert.Equal(t, bad, got, "the original, as it was")

			l, err := Open(dir, WithAllocator(mem))
			require.NoError(t, err)
			var ticks []int
			for r, err := range l.Rows("a") {
				require.NoError(t, err)
				ticks = append(ticks, r.Tick)
			}
			want := []int{0, 1, 2, 3, 4, 5}
			for i := 12; i < 40; i++ {
				want = append(want, i)
			}
			assert.Equal(t, want, ticks, "all but the damaged batch's rows")
			mem.AssertSize(t, 0)
		})
	}
}

// failingWriter fails every write once it has taken n bytes, as a full disk does.
type failingWriter struct {
	w io.Writer
	n int
}

func (f *failingWriter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		k, _ := f.w.Write(b[:f.n])
		f.n = 0
		return k, &os.PathError{Op: "write", Path: "part", Err: syscall.ENOSPC}
	}
	f.n -= len(b)
	return f.w.Write(b)
}

// A Recover whose writes fail (a full disk) at any point returns the error, leaves
// no temporary file, and leaves the part as it was.
func TestRecoverWriteFailure(t *testing.T) {
	data, blocks := writePart(t, 40, 6, LZ4)
	cut := data[:blocks[len(blocks)-1].End()]
	for _, after := range []int{0, 7, 100, len(cut) / 2, len(cut) - 20} {
		t.Run(strconv.Itoa(after), func(t *testing.T) {
			dir, path := damagedLog(t, cut)
			_, err := Recover(dir, WithWriteWrapper(func(w io.Writer) io.Writer { return &failingWriter{w: w, n: after} }))
			require.Error(t, err)
			assert.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
			left, err := os.ReadDir(filepath.Dir(path))
			require.NoError(t, err)
			require.Len(t, left, 1, "no temporary file: %v", left)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, cut, got)
		})
	}
}

// A second dataset of a directory, or Recover, is refused while a dataset holds
// it, naming the directory and this process; other shards' writers are not.
func TestDatasetLock(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDataset(dir)
	require.NoError(t, err)
	_, err = NewDataset(dir)
	require.ErrorIs(t, err, ErrLocked)
	var le *LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, dir, le.Dir)
	assert.Equal(t, os.Getpid(), le.PID)
	assert.ErrorContains(t, err, dir)

	shard, err := NewDataset(dir, WithShard("s1"))
	require.NoError(t, err, "another shard")
	_, err = NewDataset(dir, WithShard("s1"))
	require.ErrorIs(t, err, ErrLocked)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	feed(t, w, "x", 4)
	require.NoError(t, w.Flush())
	_, err = Recover(dir)
	require.ErrorIs(t, err, ErrLocked, "a writer is there")
	require.NoError(t, ds.Close())
	_, err = Recover(dir)
	require.ErrorIs(t, err, ErrLocked, "the shard's writer still is")
	require.NoError(t, shard.Close())
	_, err = Recover(dir)
	require.NoError(t, err)
	again, err := NewDataset(dir)
	require.NoError(t, err, "free once closed")
	require.NoError(t, again.Close())
}

// A part of format version 1 has no checksums and reads as before; a part of
// version 2 without them is corrupt.
func TestVersionOneWithoutChecksums(t *testing.T) {
	data, _ := writePart(t, 40, 6, LZ4)
	for _, tc := range []struct {
		version string
		ok      bool
	}{{"1", true}, {"2", false}} {
		t.Run(tc.version, func(t *testing.T) {
			dir, path := damagedLog(t, data)
			r, err := openPart(path, memory.DefaultAllocator)
			require.NoError(t, err)
			md := r.schema.Metadata()
			keys, vals := md.Keys(), append([]string(nil), md.Values()...)
			vals[md.FindKey(MetaFormatVersion)] = tc.version
			schema := arrow.NewSchema(r.schema.Fields(), ptr(arrow.NewMetadata(keys, vals)))
			var buf bytes.Buffer
			enc := ipcfile.NewEncoder(ipcfile.LZ4)
			enc.NoChecksums()
			pw, err := ipcfile.NewWriter(&buf, schema, enc)
			require.NoError(t, err)
			for rec, err := range r.batches() {
				require.NoError(t, err)
				require.NoError(t, pw.WriteBatch(rec))
			}
			require.NoError(t, pw.Finish())
			require.NoError(t, r.Close())
			require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
			rows, err := readAll(t, dir, memory.NewGoAllocator())
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, 40, rows)
			} else {
				require.ErrorIs(t, err, ipcfile.ErrChecksum)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
