package ipcfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/batonrl/baton/datalog/internal/lz4"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// Encoder encodes the messages of the parts that Writers write: their schemas, their
// record batches, each preceded by the dictionary entries it adds, and their footers. It writes what arrow-go's
// ipc.Writer writes (byte for byte when uncompressed, a test checks it), with two
// differences that make a log cheaper to write:
//
//   - It compresses with encoders of its own. Most of a log's bytes are rows of fixed
//     width that repeat much of the row before them (an observation holds the same
//     map at every step), and lz4.Encoder, told the width of a row, finds those
//     repeats by comparing each row with the one above instead of hashing every
//     position. The frames are ordinary LZ4 frames that any reader decodes.
//   - It tells the new entries of a dictionary by its length and checks the old ones
//     with one comparison of bytes, where ipc.Writer compares the values one by one.
//
// It is not safe for concurrent use. The Writers of several parts may share one when
// they write one at a time: it holds nothing of a part between calls.
type Encoder struct {
	codec Codec
	lz    lz4.Encoder
	zs    *zstd.Encoder
	fb    *flatbuffers.Builder

	nodes []fieldNode
	bufs  []bodyBuf
	// body holds the compressed buffers of a message, each after its length and
	// padded to 8 bytes, as they are written.
	body []byte
	// dicts are the dictionaries of the batch being encoded, in the order of their
	// ids; rebased holds the offsets of a dictionary's new entries made to start at 0.
	dicts   []arrow.ArrayData
	from    []int // where the new values of each dictionary begin
	rebased []int32
	zero    []byte // zeroes, read only
	// noSums leaves the checksums out of the messages (NoChecksums).
	noSums bool
	// dropRows writes the rows of fixed-size lists as empty frames (DropRows).
	dropRows bool
	hex      [8]byte
}

// fieldNode is the length and null count of one array of a message (FieldNode).
type fieldNode struct{ length, nulls int64 }

// bodyBuf is one buffer of a message: its bytes as they are in memory, what the
// compressor is told of them, and where it lies in the message's body. stride is the
// width of its rows when it holds the values of a fixed-size list, elem that of its
// values when they are 4 or 8 bytes wide (0 for bitmaps and bytes).
type bodyBuf struct {
	raw          []byte
	stride, elem int
	offset, len  int64
}

// dictState is what a part has written of one dictionary: a copy of its values,
// offsets and bytes, for the check of the next batch; no offsets before its first
// batch. The copy is the part's own, since the dictionary's buffers may go back to
// their allocator once their batch is written (Recover's do), and grows by each
// delta, so that keeping it costs a copy of each value once.
type dictState struct {
	offsets []int32
	data    []byte
}

// written is how many values the part has of the dictionary, -1 before its first
// batch.
func (st *dictState) written() int { return len(st.offsets) - 1 }

// The values of the flatbuffers fields that Encoder writes (Message.fbs, Schema.fbs).
const (
	fbMetadataV5          = 4
	fbHeaderDictionary    = 2
	fbHeaderRecordBatch   = 3
	fbCodecLZ4Frame       = 0
	fbCodecZSTD           = 1
	fbCompressionByBuffer = 0
)

// ipcAlignment is the alignment of messages and of the buffers in their bodies.
const ipcAlignment = 8

var zeroPadding [ipcAlignment]byte

// NewEncoder returns an Encoder that compresses the bodies of its messages with c.
func NewEncoder(c Codec) *Encoder {
	return &Encoder{codec: c, fb: flatbuffers.NewBuilder(1024)}
}

// NoChecksums makes e write its messages without the checksums of their bodies, as
// arrow-go's writer does, for the tests that compare the two; a log's parts have them.
func (e *Encoder) NoChecksums() { e.noSums = true }

// DropRows makes e write the values of every fixed-size list of numbers (a log's
// observations, and its actions where they are lists) as an empty frame, as if they
// cost nothing: the messages do not read. The benchmarks that measure what those
// values cost the writer use it; a log's parts never do.
func (e *Encoder) DropRows() { e.dropRows = true }

// Close lets go of the compressors; the Encoder is not used afterwards.
func (e *Encoder) Close() {
	if e.zs != nil {
		_ = e.zs.Close()
		e.zs = nil
	}
}

// sink is where the encoder writes its messages: write writes bytes, size tells
// how many have been written, so that a message knows its offset. A Writer is one.
type sink interface {
	write(b []byte) (int, error)
	size() int64
}

// writeRecord writes the dictionary batches that rec needs after those already in
// the part (a full one for each dictionary at the part's first batch, a delta for
// the entries added since) and then rec itself. It returns the block of rec's
// message, for the footer. dicts is the part's record of its dictionaries, updated.
func (e *Encoder) writeRecord(w sink, rec arrow.RecordBatch, dicts *[]dictState) (_ Block, err error) {
	// arrow-go's arrays check their buffers when they are made, and visit checks
	// them again; should an array still lack what its length says, that is an error
	// of the batch, not a crash of the flusher's goroutine.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encoding a record batch: %v", r)
		}
	}()
	e.dicts = e.dicts[:0]
	for _, col := range rec.Columns() {
		if err := e.collectDicts(col.Data()); err != nil {
			return Block{}, err
		}
	}
	if *dicts == nil {
		*dicts = make([]dictState, len(e.dicts))
	}
	if len(*dicts) != len(e.dicts) {
		return Block{}, fmt.Errorf("record batch has %d dictionaries, the part %d", len(e.dicts), len(*dicts))
	}
	// Check every dictionary before writing any, so that a batch in error writes
	// nothing.
	e.from = e.from[:0]
	for id, d := range e.dicts {
		from, err := checkDict(int64(id), d, &(*dicts)[id])
		if err != nil {
			return Block{}, err
		}
		e.from = append(e.from, from)
	}
	for id, d := range e.dicts {
		if err := e.writeDict(w, int64(id), d, &(*dicts)[id], e.from[id]); err != nil {
			return Block{}, err
		}
	}

	e.reset()
	for i, col := range rec.Columns() {
		if err := e.visit(col.Data(), 0); err != nil {
			return Block{}, fmt.Errorf("column %d (%s): %w", i, rec.ColumnName(i), err)
		}
	}
	return e.writeMessage(w, fbHeaderRecordBatch, rec.NumRows(), -1, false)
}

// collectDicts appends the dictionaries of d and its children, in the order of the
// ids that arrow-go gives them (a depth-first walk of the schema).
func (e *Encoder) collectDicts(d arrow.ArrayData) error {
	if d.DataType().ID() == arrow.DICTIONARY {
		dict := d.Dictionary()
		if dict == nil {
			return errors.New("dictionary array without its dictionary")
		}
		switch dict.DataType().ID() {
		case arrow.STRING, arrow.BINARY:
		default:
			return fmt.Errorf("dictionaries of %s are not supported", dict.DataType())
		}
		e.dicts = append(e.dicts, dict)
		return nil
	}
	for _, c := range d.Children() {
		if err := e.collectDicts(c); err != nil {
			return err
		}
	}
	return nil
}

// checkDict checks that dictionary id, whose values are d, holds every value that st
// says the part has of it, and returns from where its values are new.
func checkDict(id int64, d arrow.ArrayData, st *dictState) (from int, err error) {
	if d.Offset() != 0 {
		return 0, fmt.Errorf("dictionary %d is sliced", id)
	}
	if d.NullN() != 0 {
		return 0, fmt.Errorf("dictionary %d has nulls", id)
	}
	n := d.Len()
	offs, data, err := dictValues(d)
	if err != nil {
		return 0, fmt.Errorf("dictionary %d: %w", id, err)
	}
	from = max(st.written(), 0)
	switch {
	case n < from:
		return 0, fmt.Errorf("dictionary %d shrank within a part, from %d values to %d", id, from, n)
	case st.written() >= 0 && (!int32sEqual(offs[:from+1], st.offsets) || !bytes.Equal(data[:offs[from]], st.data)):
		return 0, fmt.Errorf("dictionary %d changed values it had within a part", id)
	}
	return from, nil
}

// writeDict writes what st lacks of dictionary id, whose values are d and new from
// from on (as checkDict found): all of them at first, the new ones as a delta
// afterwards, nothing when there are none.
func (e *Encoder) writeDict(w sink, id int64, d arrow.ArrayData, st *dictState, from int) error {
	n := d.Len()
	if st.written() >= 0 && n == from {
		return nil // nothing new
	}
	offs, data, _ := dictValues(d) // checkDict read them
	e.reset()
	k := n - from
	e.nodes = append(e.nodes, fieldNode{length: int64(k)})
	e.addBuf(nil, 0) // no validity
	newOffs := offs[from:]
	if from > 0 {
		e.rebased = e.rebased[:0]
		for _, o := range newOffs {
			e.rebased = append(e.rebased, o-offs[from])
		}
		newOffs = e.rebased
	}
	e.addValues(arrow.Int32Traits.CastToBytes(newOffs), 4)
	e.addBuf(data[offs[from]:], 0)
	if _, err := e.writeMessage(w, fbHeaderDictionary, int64(k), id, from > 0); err != nil {
		return fmt.Errorf("dictionary %d: %w", id, err)
	}
	if st.written() < 0 {
		st.offsets = append(st.offsets, 0)
	}
	st.offsets = append(st.offsets, offs[from+1:]...)
	st.data = append(st.data, data[offs[from]:]...)
	return nil
}

// zeroOffset is the offsets of an empty dictionary whose buffer has none.
var zeroOffset = []int32{0}

// dictValues returns the offsets and the bytes of the values of a dictionary of
// strings or bytes, which must start at 0.
func dictValues(d arrow.ArrayData) (offs []int32, data []byte, err error) {
	n := d.Len()
	bufs := d.Buffers()
	switch {
	case len(bufs) < 3:
		return nil, nil, errors.New("not an array of strings")
	case bufs[1] == nil || bufs[1].Len() == 0:
		if n != 0 {
			return nil, nil, errors.New("values without offsets")
		}
		return zeroOffset, nil, nil
	case bufs[1].Len() < 4*(n+1):
		return nil, nil, fmt.Errorf("%d values with %d bytes of offsets", n, bufs[1].Len())
	}
	offs = arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[:n+1]
	if offs[0] != 0 {
		return nil, nil, fmt.Errorf("its offsets start at %d, not 0", offs[0])
	}
	if end := int(offs[n]); end > 0 {
		if bufs[2] == nil || bufs[2].Len() < end {
			return nil, nil, fmt.Errorf("offsets that end at %d past the values' bytes", end)
		}
		data = bufs[2].Bytes()[:end]
	}
	return offs, data, nil
}

func int32sEqual(a, b []int32) bool {
	return bytes.Equal(arrow.Int32Traits.CastToBytes(a), arrow.Int32Traits.CastToBytes(b))
}

func (e *Encoder) reset() {
	e.nodes = e.nodes[:0]
	e.bufs = e.bufs[:0]
}

// zeroes returns n zero bytes, which the caller does not write to.
func (e *Encoder) zeroes(n int) []byte {
	if len(e.zero) < n {
		e.zero = make([]byte, n)
	}
	return e.zero[:n]
}

func (e *Encoder) addBuf(b []byte, stride int) {
	e.bufs = append(e.bufs, bodyBuf{raw: b, stride: stride})
}

// addValues adds a buffer of values elem bytes wide.
func (e *Encoder) addValues(b []byte, elem int) {
	e.bufs = append(e.bufs, bodyBuf{raw: b, elem: elem})
}

// visit adds the field nodes and buffers of d and its children, in the order of the
// IPC format. stride, when d is the values of a fixed-size list, is the width of a
// list in bytes. A sliced array (an offset, or children longer than it needs) is
// written as its values alone, as arrow-go does; that path copies its bitmaps and
// offsets, the writer's own batches never take it.
func (e *Encoder) visit(d arrow.ArrayData, stride int) error {
	t := d.DataType()
	if dt, ok := t.(*arrow.DictionaryType); ok {
		t = dt.IndexType // the indices, as a column of their own type
	}
	n, off := d.Len(), d.Offset()
	e.nodes = append(e.nodes, fieldNode{length: int64(n), nulls: int64(d.NullN())})
	bufs := d.Buffers()
	if t.ID() == arrow.NULL {
		return nil
	}
	// The validity bitmap: none when nothing is null.
	switch {
	case d.NullN() == 0:
		e.addBuf(nil, 0)
	case len(bufs) == 0 || bufs[0] == nil:
		return errors.New("nulls without a validity bitmap")
	case d.NullN() == n:
		// All null: arrow-go writes zeros, padded to 64 bytes, whatever the bitmap.
		e.addBuf(e.zeroes(paddedTo(int(bitutil.BytesForBits(int64(n))), 64)), 0)
	default:
		b, err := bitmapBytes(bufs[0].Bytes(), off, n)
		if err != nil {
			return fmt.Errorf("validity: %w", err)
		}
		e.addBuf(b, 0)
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		var b []byte
		if n > 0 {
			var err error
			if b, err = bitmapBytes(bufs[1].Bytes(), off, n); err != nil {
				return err
			}
		}
		e.addBuf(b, 0)
	case arrow.FixedWidthDataType:
		w := t.BitWidth() / 8
		var b []byte
		if n > 0 {
			if bufs[1] == nil || bufs[1].Len() < (off+n)*w {
				return fmt.Errorf("%d values of %d bytes from %d in a shorter buffer", n, w, off)
			}
			b = fixedBytes(bufs[1].Bytes()[off*w:], n*w)
		}
		if stride > 0 {
			e.addBuf(b, stride)
		} else {
			e.addValues(b, w)
		}
	case *arrow.StringType, *arrow.BinaryType:
		if bufs[1] == nil || bufs[1].Len() == 0 {
			e.addBuf(nil, 0)
			e.addBuf(nil, 0)
			break
		}
		offs, from, to := zeroBased(bufs[1].Bytes(), off, n)
		e.addValues(offs, 4)
		var data []byte
		if bufs[2] != nil {
			data = bufs[2].Bytes()[from:to]
		}
		e.addBuf(data, 0)
	case *arrow.StructType:
		for i, c := range d.Children() {
			if off != 0 || c.Len() != n {
				c = array.NewSliceData(c, int64(off), int64(off+n))
				defer c.Release()
			}
			if err := e.visit(c, 0); err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
		}
	case *arrow.ListType:
		var from, to int
		if bufs[1] == nil || bufs[1].Len() == 0 {
			e.addBuf(nil, 0)
		} else {
			var offs []byte
			offs, from, to = zeroBased(bufs[1].Bytes(), off, n)
			e.addValues(offs, 4)
		}
		c := d.Children()[0]
		if from != 0 || to != c.Len() {
			c = array.NewSliceData(c, int64(from), int64(to))
			defer c.Release()
		}
		if err := e.visit(c, 0); err != nil {
			return fmt.Errorf("list values: %w", err)
		}
	case *arrow.FixedSizeListType:
		c := d.Children()[0]
		size := int(t.Len())
		if off != 0 || c.Len() != n*size {
			c = array.NewSliceData(c, int64(off*size), int64((off+n)*size))
			defer c.Release()
		}
		row := 0
		if fw, ok := c.DataType().(arrow.FixedWidthDataType); ok && c.DataType().ID() != arrow.BOOL {
			row = size * fw.BitWidth() / 8
		}
		if err := e.visit(c, row); err != nil {
			return fmt.Errorf("list values: %w", err)
		}
	default:
		return fmt.Errorf("arrays of %s are not supported", t)
	}
	return nil
}

// zeroBased returns the n+1 int32 offsets that begin at element off of b, made to
// start at 0 (a copy, when they do not), and the range of values they cover.
func zeroBased(b []byte, off, n int) (offs []byte, from, to int) {
	o := arrow.Int32Traits.CastFromBytes(b)[off : off+n+1]
	from, to = int(o[0]), int(o[n])
	if from == 0 {
		return arrow.Int32Traits.CastToBytes(o), from, to
	}
	r := make([]int32, n+1)
	for i, v := range o {
		r[i] = v - o[0]
	}
	return arrow.Int32Traits.CastToBytes(r), from, to
}

// bitmapBytes returns the bytes of the n bits of a bitmap from bit off on, as
// arrow-go writes them: all of b when it is no longer than n bits padded to 64 bytes,
// else that much; a copy when off is not 0.
func bitmapBytes(b []byte, off, n int) ([]byte, error) {
	need := int(bitutil.BytesForBits(int64(n)))
	if len(b) < int(bitutil.BytesForBits(int64(off+n))) {
		return nil, fmt.Errorf("%d bits from %d in a bitmap of %d bytes", n, off, len(b))
	}
	if off != 0 {
		c := make([]byte, need)
		bitutil.CopyBitmap(b, off, n, c, 0)
		return c, nil
	}
	return fixedBytes(b, need), nil
}

// fixedBytes returns the bytes of a buffer of need bytes, as arrow-go writes them:
// all of b when it is no longer than need padded to 64 bytes, else need padded to 8.
func fixedBytes(b []byte, need int) []byte {
	if len(b) > paddedTo(need, 64) {
		return b[:min(paddedTo(need, ipcAlignment), len(b))]
	}
	return b
}

func paddedTo(n, a int) int { return (n + a - 1) / a * a }

// writeMessage compresses the buffers gathered (when the part is compressed), lays
// them out in the body and writes the message: a record batch of length rows, or
// the batch of dictionary id (a delta when delta is set). It returns its block.
func (e *Encoder) writeMessage(w sink, header byte, length, id int64, delta bool) (Block, error) {
	var bodyLen int64
	if e.codec == Uncompressed {
		for i := range e.bufs {
			b := &e.bufs[i]
			b.offset, b.len = bodyLen, int64(len(b.raw))
			bodyLen += int64(paddedTo(len(b.raw), ipcAlignment))
		}
	} else {
		if err := e.compress(); err != nil {
			return Block{}, err
		}
		bodyLen = int64(len(e.body))
	}

	var sum []byte
	if !e.noSums {
		sum = e.checksum()
	}
	start := w.size()
	padded, err := writeMeta(w, e.metadata(header, length, id, delta, bodyLen, sum))
	if err != nil {
		return Block{}, err
	}
	if e.codec == Uncompressed {
		for _, b := range e.bufs {
			if len(b.raw) == 0 {
				continue
			}
			if _, err := w.write(b.raw); err != nil {
				return Block{}, err
			}
			if _, err := w.write(zeroPadding[:paddedTo(len(b.raw), ipcAlignment)-len(b.raw)]); err != nil {
				return Block{}, err
			}
		}
	} else if _, err := w.write(e.body); err != nil {
		return Block{}, err
	}
	return Block{Offset: start, Meta: padded, Body: bodyLen}, nil
}

// checksum returns the CRC-32 (IEEE) of the body of the message being written, as
// ChecksumKey's value: 8 lower-case hex digits. The body is the compressed buffers,
// or the buffers as they are with their padding.
func (e *Encoder) checksum() []byte {
	var crc uint32
	if e.codec == Uncompressed {
		for _, b := range e.bufs {
			if len(b.raw) == 0 {
				continue
			}
			crc = crc32.Update(crc, crc32.IEEETable, b.raw)
			crc = crc32.Update(crc, crc32.IEEETable, zeroPadding[:paddedTo(len(b.raw), ipcAlignment)-len(b.raw)])
		}
	} else {
		crc = crc32.Update(crc, crc32.IEEETable, e.body)
	}
	return appendHex(e.hex[:0], crc)
}

// appendHex appends v to b as 8 lower-case hex digits.
func appendHex(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// writeMeta writes the metadata of a message: the continuation token, the length of
// the flatbuffer meta with its padding, meta and the padding that makes the whole a
// multiple of 8 bytes. It returns the length of the whole.
func writeMeta(w sink, meta []byte) (int32, error) {
	padded := paddedTo(len(meta)+8, ipcAlignment)
	var prefix [8]byte
	binary.LittleEndian.PutUint32(prefix[:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(prefix[4:], uint32(padded-8))
	if _, err := w.write(prefix[:]); err != nil {
		return 0, err
	}
	if _, err := w.write(meta); err != nil {
		return 0, err
	}
	if _, err := w.write(zeroPadding[:padded-8-len(meta)]); err != nil {
		return 0, err
	}
	return int32(padded), nil
}

// compress fills body with the buffers compressed as the IPC format has them: the
// length of the buffer uncompressed, as 8 bytes, and then its compressed frame.
// Empty buffers stay empty.
func (e *Encoder) compress() error {
	e.body = e.body[:0]
	for i := range e.bufs {
		b := &e.bufs[i]
		b.offset = int64(len(e.body))
		if len(b.raw) == 0 {
			b.len = 0
			continue
		}
		e.body = binary.LittleEndian.AppendUint64(e.body, uint64(len(b.raw)))
		if e.dropRows && b.stride > 0 {
			e.body = lz4.AppendStored(e.body, nil)
			b.len = int64(len(e.body)) - b.offset
			e.body = append(e.body, zeroPadding[:paddedTo(len(e.body), ipcAlignment)-len(e.body)]...)
			continue
		}
		switch e.codec {
		case LZ4:
			switch {
			case b.stride > 0:
				e.body = e.lz.AppendFrame(e.body, b.raw, b.stride)
			case b.elem == 4 || b.elem == 8:
				// A column of numbers compresses when its values repeat the one
				// before them (ids, counters that stay, constants), and then the
				// stride matcher compresses it at the speed of a comparison.
				// Otherwise (ticks, offsets, rewards that vary) LZ4 saves little
				// and costs as much as the rest of the row: it is stored.
				if repeats(b.raw, b.elem) {
					e.body = e.lz.AppendFrame(e.body, b.raw, b.elem)
				} else {
					e.body = lz4.AppendStored(e.body, b.raw)
				}
			default:
				e.body = e.lz.AppendFrame(e.body, b.raw, 0)
			}
		case ZSTD:
			if e.zs == nil {
				zs, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
				if err != nil {
					return err
				}
				e.zs = zs
			}
			e.body = e.zs.EncodeAll(b.raw, e.body)
		default:
			return fmt.Errorf("unknown compression %v", e.codec)
		}
		b.len = int64(len(e.body)) - b.offset
		e.body = append(e.body, zeroPadding[:paddedTo(len(e.body), ipcAlignment)-len(e.body)]...)
	}
	return nil
}

// repeats reports whether about half the values of b, elem bytes wide (4 or 8), or
// more, equal the value before them. It looks at every value of a short buffer
// and at one pair in repeatStep of a long one: the answer only picks the cheaper
// of two encodings that both read back, and counting every pair of a batch's
// columns cost as much as a tenth of the rest of their encoding. The step is a
// prime, so that the pairs looked at fall on every phase of a column that repeats
// with a period (a value per agent of a tick, a run per episode).
func repeats(b []byte, elem int) bool {
	n := len(b) / elem
	step := 1
	if n >= repeatScan {
		step = repeatStep
	}
	var same, seen int
	if elem == 8 {
		same, seen = sameAsBefore(arrow.Uint64Traits.CastFromBytes(b[:n*8]), step)
	} else {
		same, seen = sameAsBefore(arrow.Uint32Traits.CastFromBytes(b[:n*4]), step)
	}
	return seen > 0 && 2*same >= seen
}

// A buffer of repeatScan values or more has one pair in repeatStep looked at.
const (
	repeatScan = 256
	repeatStep = 17
)

// sameAsBefore counts, among the values v[i] for i = 1, 1+step, 1+2*step..., those
// that equal the one before them, and returns that and how many it looked at.
func sameAsBefore[T uint32 | uint64](v []T, step int) (same, seen int) {
	for i := 1; i < len(v); i += step {
		if v[i] == v[i-1] {
			same++
		}
		seen++
	}
	return same, seen
}

// structVector adds to b a vector of n structs of two int64 fields, FieldNode's
// (length, null count) or Buffer's (offset, length), the ith being field(i).
func structVector(b *flatbuffers.Builder, n int, field func(i int) (int64, int64)) flatbuffers.UOffsetT {
	b.StartVector(16, n, 8)
	for i := n - 1; i >= 0; i-- {
		first, second := field(i)
		b.Prep(8, 16)
		b.PrependInt64(second)
		b.PrependInt64(first)
	}
	return b.EndVector(n)
}

// metadata builds the Message flatbuffer of the gathered nodes and buffers, with the
// calls, in the order, of arrow-go's writer, and, when sum is not nil, the custom
// metadata ChecksumKey: sum.
func (e *Encoder) metadata(header byte, length, id int64, delta bool, bodyLen int64, sum []byte) []byte {
	b := e.fb
	b.Reset()
	var custom flatbuffers.UOffsetT
	if sum != nil {
		k := b.CreateString(ChecksumKey)
		v := b.CreateByteString(sum)
		b.StartObject(2) // KeyValue
		b.PrependUOffsetTSlot(0, k, 0)
		b.PrependUOffsetTSlot(1, v, 0)
		kv := b.EndObject()
		b.StartVector(4, 1, 4)
		b.PrependUOffsetT(kv)
		custom = b.EndVector(1)
	}
	nodes := structVector(b, len(e.nodes), func(i int) (int64, int64) { return e.nodes[i].length, e.nodes[i].nulls })
	buffers := structVector(b, len(e.bufs), func(i int) (int64, int64) { return e.bufs[i].offset, e.bufs[i].len })
	var comp flatbuffers.UOffsetT
	if e.codec != Uncompressed {
		b.StartObject(2) // BodyCompression
		codec := int8(fbCodecLZ4Frame)
		if e.codec == ZSTD {
			codec = fbCodecZSTD
		}
		b.PrependInt8Slot(0, codec, 0)
		b.PrependInt8Slot(1, fbCompressionByBuffer, 0)
		comp = b.EndObject()
	}
	b.StartObject(5) // RecordBatch
	b.PrependInt64Slot(0, length, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	if e.codec != Uncompressed {
		b.PrependUOffsetTSlot(3, comp, 0)
	}
	hdr := b.EndObject()
	if header == fbHeaderDictionary {
		b.StartObject(3) // DictionaryBatch
		b.PrependInt64Slot(0, id, 0)
		b.PrependUOffsetTSlot(1, hdr, 0)
		b.PrependBoolSlot(2, delta, false)
		hdr = b.EndObject()
	}
	b.StartObject(5) // Message
	b.PrependInt16Slot(0, fbMetadataV5, 0)
	b.PrependByteSlot(1, header, 0)
	b.PrependUOffsetTSlot(2, hdr, 0)
	b.PrependInt64Slot(3, bodyLen, 0)
	if sum != nil {
		b.PrependUOffsetTSlot(4, custom, 0)
	}
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}
