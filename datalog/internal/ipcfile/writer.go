package ipcfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Codec is the compression of the bodies of a file's messages.
type Codec int

// The codecs.
const (
	Uncompressed Codec = 1 + iota
	LZ4
	ZSTD
)

func (c Codec) String() string {
	switch c {
	case Uncompressed:
		return "uncompressed"
	case LZ4:
		return "lz4"
	case ZSTD:
		return "zstd"
	}
	return "Codec(" + strconv.Itoa(int(c)) + ")"
}

// Block locates one message in a file, as the footer's Block does: where it begins,
// the length of its metadata (with the prefix and padding) and that of its body.
type Block struct {
	Offset int64
	Meta   int32
	Body   int64
}

// End is the offset of the byte after the message.
func (b Block) End() int64 { return b.Offset + int64(b.Meta) + b.Body }

var (
	// Magic is what a file begins with, padded to 8 bytes; it ends with Magic[:6].
	Magic = []byte("ARROW1\x00\x00")
	// eos is the end-of-stream marker: the continuation token and a zero length.
	eos = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
)

// A Writer writes one file. NewWriter writes the magic and the schema; each
// WriteBatch a record batch and the dictionary entries it adds; Finish the full
// dictionaries and the footer. It is not safe for concurrent use.
type Writer struct {
	w      io.Writer
	pos    int64
	enc    *Encoder
	schema *arrow.Schema
	dicts  []dictState // what the file holds of each dictionary
	recs   []Block     // the record batches written
	full   []Block     // the full dictionaries, written by Finish
}

// NewWriter writes the magic and the schema message of a file of schema's batches
// to w, whose messages enc encodes. The Writer holds enc until Finish, and writes
// to w in the calls of its methods alone, so that Writers that take turns may
// share an Encoder and a buffer before w.
func NewWriter(w io.Writer, schema *arrow.Schema, enc *Encoder) (*Writer, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	fw := &Writer{w: w, enc: enc, schema: schema}
	if _, err := fw.write(Magic); err != nil {
		return nil, err
	}
	if _, err := writeMeta(fw, enc.schemaMessage(schema)); err != nil {
		return nil, err
	}
	return fw, nil
}

func (w *Writer) write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.pos += int64(n)
	return n, err
}

func (w *Writer) size() int64 { return w.pos }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.pos }

// WriteBatch writes the dictionary batches that rec needs after those already in
// the file (a full one for each dictionary at the first batch, a delta for the
// entries added since) and then rec itself. rec has the file's schema, and its
// dictionaries hold at least the values of the batch before, in the same order; a
// batch whose dictionaries do not is an error, and writes nothing.
func (w *Writer) WriteBatch(rec arrow.RecordBatch) error {
	blk, err := w.enc.writeRecord(w, rec, &w.dicts)
	if err != nil {
		return err
	}
	w.recs = append(w.recs, blk)
	return nil
}

// Finish writes what follows the last record batch: each dictionary in full, the
// end-of-stream marker and the footer, which lists the full dictionaries and the
// record batches. A reader of the file format so sees one dictionary batch per
// dictionary, none of them a delta, as the format requires; a reader of the stream
// sees the deltas, and then dictionaries that replace theirs with the same values.
func (w *Writer) Finish() error {
	if len(w.recs) == 0 {
		return errors.New("no record batch written")
	}
	w.full = w.full[:0]
	for id := range w.dicts {
		blk, err := w.enc.writeFullDict(w, int64(id), &w.dicts[id])
		if err != nil {
			return err
		}
		w.full = append(w.full, blk)
	}
	if _, err := w.write(eos); err != nil {
		return err
	}
	foot := w.enc.footer(w.schema, w.full, w.recs)
	if _, err := w.write(foot); err != nil {
		return err
	}
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], uint32(len(foot)))
	if _, err := w.write(tail[:]); err != nil {
		return err
	}
	_, err := w.write(Magic[:6])
	return err
}

// writeFullDict writes dictionary id as st holds it, all of its values.
func (e *Encoder) writeFullDict(w sink, id int64, st *dictState) (Block, error) {
	n := st.written()
	if n < 0 {
		return Block{}, fmt.Errorf("dictionary %d was never written", id)
	}
	e.reset()
	e.nodes = append(e.nodes, fieldNode{length: int64(n)})
	e.addBuf(nil, 0) // no validity
	e.addValues(arrow.Int32Traits.CastToBytes(st.offsets), 4)
	e.addBuf(st.data, 0)
	blk, err := e.writeMessage(w, fbHeaderDictionary, int64(n), id, false)
	if err != nil {
		return Block{}, fmt.Errorf("dictionary %d: %w", id, err)
	}
	return blk, nil
}

// footer builds the Footer flatbuffer of a file of schema s whose dictionaries and
// record batches are at dicts and recs, with the calls, in the order, of arrow-go's
// file writer. The builder aligns the Block structs to 8 bytes from the footer's
// start, as the flatbuffers verifier of Arrow C++ checks, since it pads the whole
// to a multiple of its largest alignment.
func (e *Encoder) footer(s *arrow.Schema, dicts, recs []Block) []byte {
	b := e.fb
	b.Reset()
	sch := schemaTable(b, s)
	dv := blockVector(b, dicts)
	rv := blockVector(b, recs)
	b.StartObject(5) // Footer
	b.PrependInt16Slot(0, fbMetadataV5, 0)
	b.PrependUOffsetTSlot(1, sch, 0)
	b.PrependUOffsetTSlot(2, dv, 0)
	b.PrependUOffsetTSlot(3, rv, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

// blockVector adds a vector of Block structs: offset int64, metaDataLength int32,
// 4 bytes of padding, bodyLength int64.
func blockVector(b *flatbuffers.Builder, blocks []Block) flatbuffers.UOffsetT {
	b.StartVector(blockSize, len(blocks), 8)
	for i := len(blocks) - 1; i >= 0; i-- {
		b.Prep(8, blockSize)
		b.PrependInt64(blocks[i].Body)
		b.Pad(4)
		b.PrependInt32(blocks[i].Meta)
		b.PrependInt64(blocks[i].Offset)
	}
	return b.EndVector(len(blocks))
}

const blockSize = 24

// The fields of the footer table (File.fbs).
const (
	footerDictionaries  = 2
	footerRecordBatches = 3
)

// Footer is what the footer of a complete file lists.
type Footer struct {
	// Dicts and Recs locate the full dictionaries and the record batches.
	Dicts, Recs []Block
	// Start is the offset of the footer: the end-of-stream marker ends there.
	Start int64
	// Bytes is the footer's flatbuffer as the file holds it.
	Bytes []byte
}

// FooterBytes is the footer flatbuffer that a Writer writes for a file of schema s
// whose full dictionaries and record batches are at dicts and recs. A file of this
// package's Writer whose footer is not FooterBytes of its stream's schema and blocks
// has a damaged footer, in a part no other check reads (the schema that readers of
// the file format, such as pyarrow, take from the footer; its padding).
func FooterBytes(s *arrow.Schema, dicts, recs []Block) []byte {
	e := Encoder{fb: flatbuffers.NewBuilder(1024)}
	return bytes.Clone(e.footer(s, dicts, recs))
}

// ReadFooter reads the blocks that the footer of a complete file lists: its
// dictionaries and its record batches (see ReadFooterAt).
func ReadFooter(file []byte) (dicts, recs []Block, err error) {
	f, err := ReadFooterAt(bytes.NewReader(file), int64(len(file)))
	return f.Dicts, f.Recs, err
}

// ReadFooterAt reads and checks the footer of the file of size bytes that ra reads.
// Before it trusts an offset it checks what arrow-go's file reader does not: the
// footer's length lies within the file, every offset of its flatbuffer within the
// footer, the vectors of its schema (as a schema message's are checked) and its
// blocks within it, each vector of blocks aligned to 8 bytes from the footer's start
// (as Arrow C++ checks), and each block within the file's stream, after the magic
// and before the footer. Any of these failing is an error wrapping ErrCorrupt.
func ReadFooterAt(ra io.ReaderAt, size int64) (Footer, error) {
	var f Footer
	tailLen := int64(4 + 6)
	if size < int64(len(Magic))+tailLen {
		return f, fmt.Errorf("%w: no footer in %d bytes", ErrCorrupt, size)
	}
	var tail [10]byte
	if _, err := ra.ReadAt(tail[:], size-tailLen); err != nil {
		return f, err
	}
	if string(tail[4:]) != string(Magic[:6]) {
		return f, fmt.Errorf("%w: no footer: the file does not end with the magic", ErrCorrupt)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	f.Start = size - tailLen - n
	if n < 8 || f.Start < int64(len(Magic))+8 {
		return f, fmt.Errorf("%w: a footer of %d bytes in a file of %d", ErrCorrupt, n, size)
	}
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, f.Start); err != nil {
		return f, err
	}
	f.Bytes = buf
	t, err := table(buf)
	if err != nil {
		return f, fmt.Errorf("footer: %w", err)
	}
	err = guard(func() {
		if o := flatbuffers.UOffsetT(t.Offset(6)); o != 0 {
			var sch flatbuffers.Table
			sch.Bytes, sch.Pos = buf, t.Indirect(o+t.Pos)
			if err := checkSchemaTable(sch); err != nil {
				panic(err)
			}
		}
		var err error
		if f.Dicts, err = footerBlocks(t, footerDictionaries); err != nil {
			panic(fmt.Sprintf("dictionaries: %v", err))
		}
		if f.Recs, err = footerBlocks(t, footerRecordBatches); err != nil {
			panic(fmt.Sprintf("record batches: %v", err))
		}
	})
	if err != nil {
		return Footer{}, fmt.Errorf("footer: %w", err)
	}
	for i, b := range append(f.Dicts, f.Recs...) {
		if b.Offset < int64(len(Magic)) || b.Offset%ipcAlignment != 0 || b.Meta < 8 || b.Body < 0 ||
			b.End() > f.Start || b.End() < b.Offset {
			return Footer{}, fmt.Errorf("%w: footer: block %d at %d (%d + %d bytes) is not within the stream (%d to %d)",
				ErrCorrupt, i, b.Offset, b.Meta, b.Body, len(Magic), f.Start)
		}
	}
	return f, nil
}

// footerBlocks reads vector field i of the footer t, blocks.
func footerBlocks(t flatbuffers.Table, field int) ([]Block, error) {
	start, n, err := vector(t, flatbuffers.VOffsetT(4+2*field), blockSize)
	if err != nil {
		return nil, err
	}
	if start%8 != 0 {
		return nil, fmt.Errorf("blocks at %d, not aligned to 8", start)
	}
	le := binary.LittleEndian
	blocks := make([]Block, 0, n)
	for i := range n {
		at := int(start) + i*blockSize
		blocks = append(blocks, Block{
			Offset: int64(le.Uint64(t.Bytes[at:])),
			Meta:   int32(le.Uint32(t.Bytes[at+8:])),
			Body:   int64(le.Uint64(t.Bytes[at+16:])),
		})
	}
	return blocks, nil
}
