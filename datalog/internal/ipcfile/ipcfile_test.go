package ipcfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// allTypes is a schema of every type the encoder writes, with metadata.
func allTypes() *arrow.Schema {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.Binary}
	inner := arrow.StructOf(
		arrow.Field{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.String}},
		arrow.Field{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
	)
	fields := []arrow.Field{
		{Name: "n", Type: arrow.Null, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "dict", Type: dict},
		{Name: "list", Type: arrow.ListOf(inner)},
		{Name: "fixed", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16)},
	}
	return arrow.NewSchema(fields, &arrow.Metadata{})
}

// The schema message is arrow-go's, byte for byte, for every type the encoder
// writes, dictionaries nested in lists and structs included.
func TestSchemaMessageMatchesArrow(t *testing.T) {
	for _, md := range []map[string]string{nil, {"a": "1", "b": "2"}} {
		s := allTypes()
		if md != nil {
			s = arrow.NewSchema(s.Fields(), ptr(arrow.MetadataFrom(md)))
		}
		var want bytes.Buffer
		pl := ipc.GetSchemaPayload(s, memory.DefaultAllocator)
		_, err := pl.WritePayload(&want)
		pl.Release()
		require.NoError(t, err)
		var got bytes.Buffer
		w, err := NewWriter(&got, s, NewEncoder(Uncompressed))
		require.NoError(t, err)
		require.Equal(t, want.Bytes(), got.Bytes()[len(Magic):])
		require.Equal(t, int64(got.Len()), w.Size())
	}
}

func ptr[T any](v T) *T { return &v }

// A schema with a type the encoder does not write is refused, naming the field.
func TestWriterUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  arrow.DataType
	}{
		{"date", arrow.FixedWidthTypes.Date32},
		{"in a list", arrow.ListOf(arrow.FixedWidthTypes.Timestamp_s)},
		{"dictionary of ints", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := NewWriter(&buf, arrow.NewSchema([]arrow.Field{{Name: "x", Type: tc.typ}}, nil), NewEncoder(Uncompressed))
			require.ErrorContains(t, err, "field x")
			require.Zero(t, buf.Len(), "nothing written")
		})
	}
}

// A file of no batch cannot be finished.
func TestFinishEmpty(t *testing.T) {
	w, err := NewWriter(io.Discard, allTypes(), NewEncoder(Uncompressed))
	require.NoError(t, err)
	require.ErrorContains(t, w.Finish(), "no record batch")
}

// stream writes one batch of a column of int64s compressed with c and returns the
// stream that follows the magic.
func stream(t *testing.T, c Codec) []byte {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 1000 {
		b.Append(int64(i % 7))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(s, []arrow.Array{col}, 1000)
	defer rec.Release()
	var buf bytes.Buffer
	enc := NewEncoder(c)
	defer enc.Close()
	w, err := NewWriter(&buf, s, enc)
	require.NoError(t, err)
	require.NoError(t, w.WriteBatch(rec))
	return buf.Bytes()[len(Magic):]
}

// The message reader hands on batches, decompressed, that arrow-go reads; a
// compressed buffer that claims more than its frame can hold, or more than it
// holds, and a message cut short are errors, of the batch alone.
func TestMessageReader(t *testing.T) {
	for _, c := range []Codec{Uncompressed, LZ4, ZSTD} {
		t.Run(c.String(), func(t *testing.T) {
			data := stream(t, c)
			read := func(data []byte) (int, error) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				r, err := ipc.NewReaderFromMessageReader(NewMessageReader(bytes.NewReader(data), 0, int64(len(data))), ipc.WithAllocator(mem))
				require.NoError(t, err)
				defer r.Release()
				n := 0
				for r.Next() {
					require.Equal(t, int64(6), r.RecordBatch().Column(0).(*array.Int64).Value(993))
					n++
				}
				return n, r.Err()
			}
			n, err := read(data)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			_, err = read(data[:len(data)-3])
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)

			if c == Uncompressed {
				return
			}
			// The data buffer's claim of its length, 8000 bytes, is the last
			// buffer's first 8 bytes: find it by its value.
			at := bytes.Index(data, binary.LittleEndian.AppendUint64(nil, 8000))
			require.Positive(t, at)
			for _, claim := range []uint64{1 << 40, 8001, 1<<63 + 5} {
				bad := bytes.Clone(data)
				binary.LittleEndian.PutUint64(bad[at:], claim)
				n, err := read(bad)
				require.Zero(t, n)
				require.True(t, errors.Is(err, ErrCorrupt), "claim %d: %v", claim, err)
			}
		})
	}
}

// repeats, which looks at a sample of a long column's pairs, decides as a count of
// every pair does for the columns a log holds: constants, counters, runs of a
// trial or an episode, values that alternate with a period, and values drawn at
// random from a few.
func TestRepeatsSample(t *testing.T) {
	const n = 4096
	cols := map[string]func(i int) uint32{
		"constant":     func(int) uint32 { return 7 },
		"counter":      func(i int) uint32 { return uint32(i) },
		"runs of 46":   func(i int) uint32 { return uint32(i / 46) },
		"runs of 3":    func(i int) uint32 { return uint32(i / 3) },
		"each twice":   func(i int) uint32 { return uint32(i / 2) },
		"period 2":     func(i int) uint32 { return uint32(i % 2) },
		"period 16":    func(i int) uint32 { return uint32(i % 16 / 8) },
		"random of 4":  func(i int) uint32 { return uint32(i*2654435761>>7) % 4 },
		"random of 64": func(i int) uint32 { return uint32(i*2654435761>>7) % 64 },
	}
	full := func(v []uint32) bool {
		same, _ := sameAsBefore(v, 1)
		return 2*same >= len(v)-1
	}
	for name, f := range cols {
		t.Run(name, func(t *testing.T) {
			v := make([]uint32, n)
			for i := range v {
				v[i] = f(i)
			}
			b := arrow.Uint32Traits.CastToBytes(v)
			require.Equal(t, full(v), repeats(b, 4), "4096 values")
			require.Equal(t, full(v[:100]), repeats(b[:400], 4), "100 values, each looked at")
			w := make([]uint64, n)
			for i := range w {
				w[i] = uint64(v[i])
			}
			require.Equal(t, full(v), repeats(arrow.Uint64Traits.CastToBytes(w), 8), "as 8-byte values")
		})
	}
	require.False(t, repeats(b4(1), 4), "a single value repeats nothing")
}

func b4(v ...uint32) []byte { return arrow.Uint32Traits.CastToBytes(v) }
