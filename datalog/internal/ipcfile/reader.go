package ipcfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/lz4"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// ErrCorrupt is the error of a message that is not what a file's writer could have
// written: lengths that do not hold together, a compressed buffer that claims more
// bytes than its frame can hold, a body whose checksum differs (ErrChecksum).
var ErrCorrupt = errors.New("corrupt message")

// ErrChecksum is the error of a message whose body does not have the checksum its
// metadata says, or that lacks one where the reader requires it. It wraps ErrCorrupt.
var ErrChecksum = fmt.Errorf("%w: checksum", ErrCorrupt)

// ChecksumKey is the key of the custom metadata of a record batch or dictionary
// batch message (Message.custom_metadata) whose value is the CRC-32 (IEEE, as zlib
// computes it) of the message's body as it is in the file, compressed buffers and
// padding included, in 8 lower-case hex digits.
const ChecksumKey = "baton.crc32"

// MessageReader reads the messages of the stream of a file, as arrow-go's own
// message reader does, for ipc.NewReaderFromMessageReader. It checks first what
// arrow-go's reader trusts: a message's metadata and body must lie within the size
// bytes of the stream, else the stream is cut (an error that wraps
// io.ErrUnexpectedEOF), the vectors of a schema must lie within its metadata, the
// buffers of a batch within its body, and each compressed buffer of a batch must
// claim no more bytes, uncompressed, than its frame can hold (ErrCorrupt), since the
// reader takes that much memory before it decompresses. A batch whose metadata has
// a checksum (ChecksumKey) must have that body (ErrChecksum); RequireChecksums makes
// one without an error too. It decompresses the batches itself, and hands them on
// uncompressed: a frame that does not hold what it claims is ErrCorrupt, where
// arrow-go's reader would keep the memory it took for it. The messages are in Go
// memory. It is not safe for concurrent use.
type MessageReader struct {
	r    io.Reader
	left int64
	off  int64 // the offset in the file of the next byte
	refs atomic.Int64
	msg  *ipc.Message
	// enc builds the metadata of the batches decompressed.
	enc *Encoder
	lz  *lz4.Reader
	zs  *zstd.Decoder

	last    Block   // the message returned last
	trail   []Block // the dictionary batches since the last record batch
	eos     bool    // the stream ended at its end-of-stream marker
	require bool
	skip    bool
	skipped []Skipped
}

// Skipped is a record batch that a MessageReader skipped (SkipDamaged).
type Skipped struct {
	Block
	// Err is why.
	Err error
}

// NewMessageReader returns a MessageReader of the stream of size bytes that r reads,
// which begins at offset in its file (8 for a file's stream, after the magic).
func NewMessageReader(r io.Reader, offset, size int64) *MessageReader {
	m := &MessageReader{r: r, left: size, off: offset, enc: NewEncoder(Uncompressed)}
	m.refs.Store(1)
	return m
}

// RequireChecksums makes a record or dictionary batch without a checksum an error
// (ErrChecksum), from the next message on.
func (m *MessageReader) RequireChecksums() { m.require = true }

// SkipDamaged makes the reader skip a record batch whose body is damaged (its
// checksum or its frames) while the stream's framing holds (its lengths), and go on
// with the next message; Skipped lists those skipped. A damaged dictionary batch is
// still an error, since the batches after it may use its entries.
func (m *MessageReader) SkipDamaged() { m.skip = true }

// Skipped returns the record batches skipped so far.
func (m *MessageReader) Skipped() []Skipped { return m.skipped }

// Last returns the block of the message that Message returned last.
func (m *MessageReader) Last() Block { return m.last }

// Trailing returns the blocks of the dictionary batches read since the last record
// batch (a finished file's full dictionaries, once the stream has ended).
func (m *MessageReader) Trailing() []Block { return m.trail }

// Offset returns the offset in the file of the byte after the last one read: after
// the end-of-stream marker once AtEOS.
func (m *MessageReader) Offset() int64 { return m.off }

// AtEOS reports whether the stream ended at its end-of-stream marker, rather than
// at the end of its bytes or at an error.
func (m *MessageReader) AtEOS() bool { return m.eos }

// Retain adds a reference.
func (m *MessageReader) Retain() { m.refs.Add(1) }

// Release drops a reference, and the last message read with the last.
func (m *MessageReader) Release() {
	if m.refs.Add(-1) != 0 {
		return
	}
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if m.zs != nil {
		m.zs.Close()
		m.zs = nil
	}
}

func (m *MessageReader) read(b []byte) error {
	if int64(len(b)) > m.left {
		return fmt.Errorf("%d bytes past the end of the stream: %w", int64(len(b))-m.left, io.ErrUnexpectedEOF)
	}
	n, err := io.ReadFull(m.r, b)
	m.left -= int64(n)
	m.off += int64(n)
	if err == io.EOF && n == 0 && len(b) > 0 {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Message returns the next message, valid until the next call; io.EOF at the
// end-of-stream marker or at the end of the stream between messages.
func (m *MessageReader) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	for {
		msg, damaged, err := m.next()
		if err != nil && damaged && m.skip {
			m.skipped = append(m.skipped, Skipped{Block: m.last, Err: err})
			m.trail = m.trail[:0]
			continue
		}
		return msg, err
	}
}

// next reads the next message; damaged reports an error of a record batch's
// content whose framing holds, so that the next message can be read.
func (m *MessageReader) next() (_ *ipc.Message, damaged bool, _ error) {
	if m.left == 0 {
		return nil, false, io.EOF
	}
	start := m.off
	var prefix [8]byte
	if err := m.read(prefix[:4]); err != nil {
		return nil, false, err
	}
	cont := binary.LittleEndian.Uint32(prefix[:])
	if cont == 0 {
		m.eos = true
		return nil, false, io.EOF
	}
	if cont != 0xFFFFFFFF {
		return nil, false, fmt.Errorf("%w: no continuation token at offset %d", ErrCorrupt, start)
	}
	if err := m.read(prefix[4:]); err != nil {
		return nil, false, err
	}
	n := int64(binary.LittleEndian.Uint32(prefix[4:]))
	if n == 0 {
		m.eos = true
		return nil, false, io.EOF
	}
	if n > m.left {
		return nil, false, fmt.Errorf("metadata of %d bytes past the end of the stream: %w", n-m.left, io.ErrUnexpectedEOF)
	}
	meta := make([]byte, n)
	if err := m.read(meta); err != nil {
		return nil, false, err
	}
	meta, body, header, whole, err := m.body(meta)
	m.last = Block{Offset: start, Meta: int32(8 + n), Body: m.off - start - 8 - n}
	if err != nil {
		// A record batch whose body was read whole: the next message starts after it.
		damaged := whole && header == fbHeaderRecordBatch && errors.Is(err, ErrCorrupt)
		return nil, damaged, fmt.Errorf("message at offset %d: %w", start, err)
	}
	if header == fbHeaderRecordBatch {
		m.trail = m.trail[:0]
	} else if header == fbHeaderDictionary {
		m.trail = append(m.trail, m.last)
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return m.msg, false, nil
}

// body reads and checks the body of the message whose metadata is meta, and
// returns the message's metadata and body, decompressed, and its header type;
// whole reports that the body was read whole, whatever its content.
func (m *MessageReader) body(meta []byte) (_, body []byte, header byte, whole bool, err error) {
	msg, err := table(meta)
	if err != nil {
		return nil, nil, 0, false, err
	}
	var bodyLen int64
	var hdr flatbuffers.Table
	hasHdr := false
	var sum []byte
	hasSum := false
	if err := guard(func() {
		bodyLen = msg.GetInt64Slot(10, 0)
		header = msg.GetByteSlot(6, 0)
		if o := flatbuffers.UOffsetT(msg.Offset(8)); o != 0 {
			hdr.Bytes, hdr.Pos, hasHdr = meta, msg.Indirect(o+msg.Pos), true
		}
	}); err != nil {
		return nil, nil, 0, false, err
	}
	if err := guard(func() { sum, hasSum, err = customValue(msg, ChecksumKey) }); err != nil {
		return nil, nil, header, false, err
	}
	if err != nil {
		return nil, nil, header, false, err
	}
	if bodyLen < 0 {
		return nil, nil, header, false, fmt.Errorf("%w: a body of %d bytes", ErrCorrupt, bodyLen)
	}
	if bodyLen > m.left {
		return nil, nil, header, false, fmt.Errorf("a body of %d bytes past the end of the stream: %w", bodyLen-m.left, io.ErrUnexpectedEOF)
	}
	body = make([]byte, bodyLen)
	if err := m.read(body); err != nil {
		return nil, nil, header, false, err
	}
	batch := header == fbHeaderRecordBatch || header == fbHeaderDictionary
	switch {
	case batch && hasSum:
		if err := checkSum(sum, body); err != nil {
			return nil, nil, header, true, err
		}
	case batch && m.require:
		return nil, nil, header, true, fmt.Errorf("%w: no %s in the message's metadata", ErrChecksum, ChecksumKey)
	}
	if !hasHdr {
		return meta, body, header, true, nil
	}
	var check error
	switch header {
	case fbHeaderSchema:
		err = guard(func() { check = checkSchemaTable(hdr) })
	case fbHeaderRecordBatch, fbHeaderDictionary:
		err = guard(func() { meta, body, check = m.decompress(meta, hdr, header, body) })
	}
	if err = errors.Join(err, check); err != nil {
		return nil, nil, header, true, err
	}
	return meta, body, header, true, nil
}

// checkSum checks that body has the CRC-32 that sum, 8 hex digits, says.
func checkSum(sum, body []byte) error {
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if err != nil || len(sum) != 8 {
		return fmt.Errorf("%w: %s %q is not 8 hex digits", ErrChecksum, ChecksumKey, sum)
	}
	if got := crc32.ChecksumIEEE(body); got != uint32(want) {
		return fmt.Errorf("%w: the body of %d bytes has CRC-32 %08x, its metadata says %s", ErrChecksum, len(body), got, sum)
	}
	return nil
}

// customValue returns the value of key in the custom metadata of the Message
// table msg (a vector of KeyValue tables at vtable offset 12); found is false when
// it has none.
func customValue(msg flatbuffers.Table, key string) (value []byte, found bool, err error) {
	start, n, err := vector(msg, 12, 4)
	if err != nil {
		return nil, false, err
	}
	for i := range n {
		kv := elem(msg, start, i)
		ks, kn, err := vector(kv, 4, 1)
		if err != nil {
			return nil, false, err
		}
		if string(kv.Bytes[ks:int(ks)+kn]) != key {
			continue
		}
		vs, vn, err := vector(kv, 6, 1)
		if err != nil {
			return nil, false, err
		}
		return kv.Bytes[vs : int(vs)+vn], true, nil
	}
	return nil, false, nil
}

// decompress returns the metadata and the body of the record or dictionary batch
// hdr, whose metadata is meta and body body, with its buffers decompressed; meta
// and body themselves when they are not compressed.
func (m *MessageReader) decompress(meta []byte, hdr flatbuffers.Table, header byte, body []byte) ([]byte, []byte, error) {
	rec := hdr
	var id int64
	var delta bool
	if header == fbHeaderDictionary {
		id, delta = hdr.GetInt64Slot(4, 0), hdr.GetBoolSlot(8, false)
		o := flatbuffers.UOffsetT(hdr.Offset(6)) // the RecordBatch
		if o == 0 {
			return meta, body, nil
		}
		rec.Pos = hdr.Indirect(o + hdr.Pos)
	}
	o := flatbuffers.UOffsetT(rec.Offset(10)) // compression
	if o == 0 {
		// Uncompressed: the buffers must lie within the body, which arrow-go's
		// reader slices without a check.
		bufs, nb, err := vector(rec, 8, 16)
		if err != nil {
			return nil, nil, err
		}
		for i := range nb {
			at := bufs + flatbuffers.UOffsetT(i*16)
			off, length := rec.GetInt64(at), rec.GetInt64(at+8)
			if off < 0 || length < 0 || off > int64(len(body))-length {
				return nil, nil, fmt.Errorf("%w: buffer %d at %d, %d bytes, in a body of %d", ErrCorrupt, i, off, length, len(body))
			}
		}
		return meta, body, nil
	}
	if rec.Offset(12) != 0 {
		return nil, nil, fmt.Errorf("%w: variadic buffers", ErrCorrupt)
	}
	var comp flatbuffers.Table
	comp.Bytes, comp.Pos = rec.Bytes, rec.Indirect(o+rec.Pos)
	codec := comp.GetInt8Slot(4, 0)
	e := m.enc
	e.reset()
	nodes, nn, err := vector(rec, 6, 16)
	if err != nil {
		return nil, nil, err
	}
	for i := range nn {
		at := nodes + flatbuffers.UOffsetT(i*16)
		e.nodes = append(e.nodes, fieldNode{length: rec.GetInt64(at), nulls: rec.GetInt64(at + 8)})
	}
	bufs, nb, err := vector(rec, 8, 16)
	if err != nil {
		return nil, nil, err
	}
	for i := range nb {
		at := bufs + flatbuffers.UOffsetT(i*16)
		off, length := rec.GetInt64(at), rec.GetInt64(at+8)
		if length == 0 {
			e.addBuf(nil, 0)
			continue
		}
		if off < 0 || length < 8 || off > int64(len(body))-length {
			return nil, nil, fmt.Errorf("%w: buffer %d at %d, %d bytes, in a body of %d", ErrCorrupt, i, off, length, len(body))
		}
		raw, err := m.decode(codec, body[off:off+length])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: buffer %d: %w", ErrCorrupt, i, err)
		}
		e.addBuf(raw, 0)
	}
	var out []byte
	for i := range e.bufs {
		b := &e.bufs[i]
		b.offset, b.len = int64(len(out)), int64(len(b.raw))
		out = append(out, b.raw...)
		out = append(out, zeroPadding[:paddedTo(len(out), ipcAlignment)-len(out)]...)
	}
	length := rec.GetInt64Slot(4, 0)
	return bytes.Clone(e.metadata(header, length, id, delta, int64(len(out)), nil)), out, nil
}

// decode returns the bytes of a compressed buffer b: its length uncompressed, as 8
// bytes, and its frame, or -1 and the bytes stored as they are.
func (m *MessageReader) decode(codec int8, b []byte) ([]byte, error) {
	claim := int64(binary.LittleEndian.Uint64(b))
	frame := b[8:]
	if claim == -1 {
		return frame, nil
	}
	var bound int64
	var err error
	switch codec {
	case fbCodecLZ4Frame:
		bound, err = lz4.ContentBound(frame)
	case fbCodecZSTD:
		bound, err = zstdContentBound(frame)
	default:
		return nil, fmt.Errorf("compression codec %d", codec)
	}
	if err != nil {
		return nil, err
	}
	if claim < 0 || claim > bound {
		return nil, fmt.Errorf("it claims %d bytes, its frame holds at most %d", claim, bound)
	}
	raw := make([]byte, claim)
	switch codec {
	case fbCodecLZ4Frame:
		if m.lz == nil {
			m.lz = lz4.NewReader()
		}
		err = m.lz.ReadFull(frame, raw)
	case fbCodecZSTD:
		if m.zs == nil {
			if m.zs, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)); err != nil {
				return nil, err
			}
		}
		// As arrow-go's reader, the first claim bytes of the frames; bound keeps
		// what they may hold beyond within reason.
		var got []byte
		got, err = m.zs.DecodeAll(frame, raw[:0])
		if err == nil && len(got) < len(raw) {
			err = fmt.Errorf("it claims %d bytes, its frame holds %d", claim, len(got))
		}
		raw = got[:min(len(got), len(raw))]
	}
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// table returns the root table of the flatbuffer b.
func table(b []byte) (t flatbuffers.Table, err error) {
	if len(b) < 4 {
		return t, fmt.Errorf("%w: metadata of %d bytes", ErrCorrupt, len(b))
	}
	t.Bytes = b
	err = guard(func() { t.Pos = flatbuffers.GetUOffsetT(b) })
	return t, err
}

// guard runs f, turning a panic (a flatbuffer's offset out of its bytes) into
// ErrCorrupt.
func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	f()
	return nil
}

// zstdContentBound returns the most bytes that the Zstandard frames of b can
// decode to, by the headers of their blocks: a raw or RLE block its size, a
// compressed one at most 128 KiB.
func zstdContentBound(b []byte) (int64, error) {
	const (
		magic     = 0xFD2FB528
		maxBlock  = 128 << 10
		skippable = 0x184D2A50
	)
	var bound int64
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, errors.New("zstd: a frame cut short")
		}
		m := binary.LittleEndian.Uint32(b)
		if m&0xFFFFFFF0 == skippable {
			if len(b) < 8 {
				return 0, errors.New("zstd: a skippable frame cut short")
			}
			n := int64(binary.LittleEndian.Uint32(b[4:]))
			if n > int64(len(b)-8) {
				return 0, errors.New("zstd: a skippable frame cut short")
			}
			b = b[8+n:]
			continue
		}
		if m != magic {
			return 0, fmt.Errorf("zstd: magic %#x", m)
		}
		if len(b) < 5 {
			return 0, errors.New("zstd: a frame cut short")
		}
		fhd := b[4]
		hdr := 5
		single := fhd&0x20 != 0
		if !single {
			hdr++ // window descriptor
		}
		hdr += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		switch fcs := fhd >> 6; {
		case fcs == 0 && single:
			hdr++
		case fcs == 1:
			hdr += 2
		case fcs == 2:
			hdr += 4
		case fcs == 3:
			hdr += 8
		}
		if hdr > len(b) {
			return 0, errors.New("zstd: a frame header cut short")
		}
		b = b[hdr:]
		for last := false; !last; {
			if len(b) < 3 {
				return 0, errors.New("zstd: a block header cut short")
			}
			h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
			last = h&1 != 0
			size := int(h >> 3)
			b = b[3:]
			switch (h >> 1) & 3 {
			case 0: // raw
				bound += int64(size)
			case 1: // RLE: one byte, size times
				bound += int64(size)
				size = 1
			case 2:
				bound += maxBlock
			default:
				return 0, errors.New("zstd: a reserved block type")
			}
			if size > len(b) {
				return 0, errors.New("zstd: a block cut short")
			}
			b = b[size:]
		}
		if fhd&4 != 0 { // content checksum
			if len(b) < 4 {
				return 0, errors.New("zstd: a checksum cut short")
			}
			b = b[4:]
		}
	}
	return bound, nil
}

// maxDepth is how deep the fields of a schema may nest.
const maxDepth = 64

// checkSchemaTable checks that the vectors of the Schema table t, and of its
// fields, hold within its flatbuffer the elements they claim, and that its fields
// nest at most maxDepth deep: arrow-go's reader makes slices of the lengths it reads
// before it reads their elements.
func checkSchemaTable(t flatbuffers.Table) error {
	if err := checkFields(t, 6, 0); err != nil {
		return err
	}
	if err := checkMetadata(t, 8); err != nil {
		return err
	}
	_, _, err := vector(t, 10, 8) // features
	return err
}

// checkFields checks the vector of Field tables at vtable offset vo of t.
func checkFields(t flatbuffers.Table, vo flatbuffers.VOffsetT, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: fields nested more than %d deep", ErrCorrupt, maxDepth)
	}
	start, n, err := vector(t, vo, 4)
	if err != nil {
		return err
	}
	for i := range n {
		f := elem(t, start, i)
		if _, _, err := vector(f, 4, 1); err != nil { // name
			return err
		}
		if err := checkFields(f, 14, depth+1); err != nil { // children
			return err
		}
		if err := checkMetadata(f, 16); err != nil {
			return err
		}
		if f.GetByteSlot(8, 0) == fbTypeUnion {
			if o := flatbuffers.UOffsetT(f.Offset(10)); o != 0 {
				var u flatbuffers.Table
				u.Bytes, u.Pos = f.Bytes, f.Indirect(o+f.Pos)
				if _, _, err := vector(u, 6, 4); err != nil { // type ids
					return err
				}
			}
		}
	}
	return nil
}

// checkMetadata checks the vector of KeyValue tables at vtable offset vo of t.
func checkMetadata(t flatbuffers.Table, vo flatbuffers.VOffsetT) error {
	start, n, err := vector(t, vo, 4)
	if err != nil {
		return err
	}
	for i := range n {
		kv := elem(t, start, i)
		if _, _, err := vector(kv, 4, 1); err != nil {
			return err
		}
		if _, _, err := vector(kv, 6, 1); err != nil {
			return err
		}
	}
	return nil
}

// vector returns where the elements of the vector (or string) at vtable offset vo
// of t begin and how many there are, checking that n elements of size bytes fit in
// t's flatbuffer; none when t lacks the field.
func vector(t flatbuffers.Table, vo flatbuffers.VOffsetT, size int) (start flatbuffers.UOffsetT, n int, err error) {
	o := flatbuffers.UOffsetT(t.Offset(vo))
	if o == 0 {
		return 0, 0, nil
	}
	start, n = t.Vector(o), t.VectorLen(o)
	if int64(start)+int64(n)*int64(size) > int64(len(t.Bytes)) {
		return 0, 0, fmt.Errorf("%w: a vector of %d elements past the end of its flatbuffer", ErrCorrupt, n)
	}
	return start, n, nil
}

// elem returns the table that element i of the vector of tables at start points to.
func elem(t flatbuffers.Table, start flatbuffers.UOffsetT, i int) flatbuffers.Table {
	at := start + flatbuffers.UOffsetT(i*4)
	return flatbuffers.Table{Bytes: t.Bytes, Pos: t.Indirect(at)}
}
