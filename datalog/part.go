package datalog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The layout of a part (see the package documentation, "Parts and dictionaries"):
//
//	"ARROW1\0\0"                           the file magic, padded to 8 bytes
//	schema message                         \
//	dictionary messages, record batch     |  an Arrow IPC stream: each batch is
//	dictionary deltas, record batch       |  preceded by the dictionary entries it
//	...                                   /   adds, as delta dictionary batches
//	one full dictionary batch per field    written when the part is finished
//	end-of-stream marker
//	footer, footer length, "ARROW1"        the footer lists the full dictionaries and
//	                                       the record batches, not the deltas
//
// A reader of the file format follows the footer, so it sees exactly one dictionary
// batch per dictionary, none of them a delta, as the IPC file format requires (Arrow
// C++ and so pyarrow reject deltas in files). A part whose writer was killed has no
// footer; read as a stream from byte 8, its deltas make every complete batch readable.

var (
	fileMagic = []byte("ARROW1\x00\x00")
	// eos is the end-of-stream marker: the continuation token and a zero length.
	eos = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
)

// block locates one IPC message in a part, as the footer's Block does.
type block struct {
	offset int64
	meta   int32
	body   int64
}

func (b block) end() int64 { return b.offset + int64(b.meta) + b.body }

// partWriter writes one part. It is not safe for concurrent use.
type partWriter struct {
	path   string
	f      *os.File
	bw     *bufio.Writer
	pos    int64
	enc    *msgEncoder
	dicts  []dictState // what the part holds of each dictionary
	schema *arrow.Schema
	mem    memory.Allocator

	counted int64 // bytes counted in the dataset's stats so far

	recs []block // the record batches written
	rows int64
	// last has no rows and the dictionaries of the latest batch written, which are
	// the part's full ones, since dictionaries only grow within a part.
	last arrow.RecordBatch
}

// partBuffer is the size of the buffer through which a part is written: the small
// messages and buffers of a batch are gathered in it, the large ones (directWrite)
// go past it.
const partBuffer = 1 << 20

// createPart creates the file of a new part, whose batches enc encodes (and
// compresses), written through bw (nil for a buffer of its own); it fails if the file
// exists. Parts may share a buffer and an encoder when they are written one at a
// time: each call that writes to a part takes the buffer, and leaves it empty.
func createPart(path string, schema *arrow.Schema, mem memory.Allocator, bw *bufio.Writer, enc *msgEncoder) (*partWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if bw == nil {
		bw = bufio.NewWriterSize(f, partBuffer)
	}
	p := &partWriter{path: path, f: f, bw: bw, enc: enc, schema: schema, mem: mem}
	p.take()
	// The magic, then the schema message, which is what the stream that follows the
	// magic begins with.
	_, err = p.write(fileMagic)
	if err == nil {
		pl := ipc.GetSchemaPayload(schema, mem)
		_, err = pl.WritePayload(counter{p})
		pl.Release()
	}
	if err == nil {
		err = p.bw.Flush()
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return p, nil
}

// take points the buffer, empty, at the part's file.
func (p *partWriter) take() { p.bw.Reset(p.f) }

// counter writes to the part, counting the bytes.
type counter struct{ p *partWriter }

func (c counter) Write(b []byte) (int, error) { return c.p.write(b) }

// directWrite is the size from which a buffer goes to the file in a write of its
// own rather than through the part's buffer: copying it there would cost as much as
// the write.
const directWrite = 64 << 10

func (p *partWriter) write(b []byte) (int, error) {
	var n int
	var err error
	if len(b) >= directWrite {
		if err = p.bw.Flush(); err != nil {
			return 0, err
		}
		n, err = p.f.Write(b)
	} else {
		n, err = p.bw.Write(b)
	}
	p.pos += int64(n)
	return n, err
}

// writeBatch writes rec and its new dictionary entries and hands them to the
// operating system, so that a process killed later leaves them readable. rec must
// have the part's schema.
func (p *partWriter) writeBatch(rec arrow.RecordBatch) error {
	p.take()
	blk, err := p.enc.writeRecord(p, rec, &p.dicts)
	if err != nil {
		return err
	}
	p.recs = append(p.recs, blk)
	p.rows += rec.NumRows()
	if p.last != nil {
		p.last.Release()
	}
	p.last = emptyOf(rec)
	return p.bw.Flush()
}

// emptyOf returns a record batch of rec's schema with no rows whose dictionaries are
// rec's: what the footer needs of a part's latest batch. It shares no buffer but the
// dictionaries' with rec, whose columns may be reused once it is written.
func emptyOf(rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		d := emptyData(c.Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, 0)
	for _, c := range cols {
		c.Release()
	}
	return out
}

// emptyData returns array data of d's type with no values, and d's dictionary.
func emptyData(d arrow.ArrayData) arrow.ArrayData {
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = emptyData(c)
	}
	out := array.NewData(d.DataType(), 0, make([]*memory.Buffer, len(d.Buffers())), children, 0, 0)
	for _, c := range children {
		c.Release()
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		out.SetDictionary(d.Dictionary())
	}
	return out
}

// size is how many bytes the part holds so far.
func (p *partWriter) size() int64 { return p.pos }

// finish writes the full dictionaries and the footer and closes the file.
func (p *partWriter) finish() error {
	err := p.finishBody()
	if p.last != nil {
		p.last.Release()
		p.last = nil
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("datalog: finishing part %s: %w", p.path, err)
	}
	return nil
}

// abandon closes the file as it is, without a footer.
func (p *partWriter) abandon() {
	p.take()
	_ = p.bw.Flush()
	_ = p.f.Close()
	if p.last != nil {
		p.last.Release()
		p.last = nil
	}
}

func (p *partWriter) finishBody() error {
	p.take()
	if p.last == nil {
		return errors.New("no record batch written")
	}
	tail, err := p.tail()
	if err != nil {
		return err
	}
	if _, err := p.write(tail); err != nil {
		return err
	}
	return p.bw.Flush()
}

// tail returns what follows the part's last record batch: the full dictionaries, the
// end-of-stream marker and the footer.
//
// arrow-go writes IPC files only with dictionaries that never change, and has no
// exported way to write a footer; so tail has it write a template file with the
// part's schema and one empty record batch that carries the part's full
// dictionaries, copies the template's dictionary messages, and patches the
// template's footer: the dictionary blocks to where the copies go, and its record
// batches to the part's own, in a vector that tail appends to the footer.
func (p *partWriter) tail() ([]byte, error) {
	var tpl bytes.Buffer
	// Uncompressed: each message says how its own body is compressed.
	fw, err := ipc.NewFileWriter(&tpl, ipc.WithSchema(p.schema), ipc.WithAllocator(p.mem))
	if err != nil {
		return nil, err
	}
	err = fw.Write(p.last)
	if cerr := fw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing the footer's template: %w", err)
	}
	t := tpl.Bytes()
	foot, err := footerOf(t)
	if err != nil {
		return nil, err
	}
	dicts, _, err := foot.blocks(footerDictionaries)
	if err != nil {
		return nil, err
	}
	recs, recsAt, err := foot.blocks(footerRecordBatches)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("footer template has %d record batches, want 1", len(recs))
	}
	fb := bytes.Clone(foot.buf)
	var out []byte
	for i, at := range dicts {
		b := readBlock(fb, at)
		if b.end() > int64(len(t)) || b.offset < 0 {
			return nil, fmt.Errorf("footer template: dictionary %d out of the file", i)
		}
		writeBlock(fb, at, block{offset: p.pos + int64(len(out)), meta: b.meta, body: b.body})
		out = append(out, t[b.offset:b.end()]...)
	}
	fb = appendBlocks(fb, recsAt, p.recs)
	out = append(out, eos...)
	out = append(out, fb...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(fb)))
	return append(out, ipc.Magic...), nil
}

// appendBlocks appends to the footer fb a vector of blocks and points the footer's
// field at (the offset that blocks returned) to it, in place of the vector it held.
// A flatbuffer's offsets point forward, so a vector after everything else is one any
// field can point to; the old vector stays, unused. The Block structs are aligned to
// 8 bytes from the footer's start, as the flatbuffers verifier of Arrow C++ checks.
func appendBlocks(fb []byte, at int, blocks []block) []byte {
	const blockSize = 24
	for (len(fb)+4)%8 != 0 {
		fb = append(fb, 0)
	}
	vec := len(fb)
	fb = binary.LittleEndian.AppendUint32(fb, uint32(len(blocks)))
	for range blocks {
		fb = append(fb, make([]byte, blockSize)...)
	}
	for i, b := range blocks {
		writeBlock(fb, vec+4+i*blockSize, b)
	}
	binary.LittleEndian.PutUint32(fb[at:], uint32(vec-at))
	return fb
}

// The fields of the footer table (File.fbs) that tail patches.
const (
	footerDictionaries  = 2
	footerRecordBatches = 3
)

// footer is the flatbuffer of a file's footer.
type footer struct {
	buf   []byte
	table int
}

// footerOf finds the footer of a complete IPC file.
func footerOf(file []byte) (footer, error) {
	n := len(file)
	if n < len(fileMagic)+4+len(ipc.Magic) || !bytes.Equal(file[n-len(ipc.Magic):], ipc.Magic) {
		return footer{}, errors.New("no footer")
	}
	size := int(binary.LittleEndian.Uint32(file[n-len(ipc.Magic)-4:]))
	start := n - len(ipc.Magic) - 4 - size
	if size < 8 || start < len(fileMagic) {
		return footer{}, errors.New("bad footer length")
	}
	buf := file[start : start+size]
	table := int(binary.LittleEndian.Uint32(buf))
	if table+4 > len(buf) {
		return footer{}, errors.New("bad footer root")
	}
	return footer{buf: buf, table: table}, nil
}

// blocks returns the offsets in f.buf of the Block structs of vector field i, and
// the offset of the field itself (0 when the footer lacks it).
func (f footer) blocks(field int) (blocks []int, at int, err error) {
	le := binary.LittleEndian
	vt := f.table - int(int32(le.Uint32(f.buf[f.table:])))
	if vt < 0 || vt+4 > len(f.buf) {
		return nil, 0, errors.New("bad footer vtable")
	}
	vtLen := int(le.Uint16(f.buf[vt:]))
	slot := 4 + 2*field
	if slot+2 > vtLen || vt+slot+2 > len(f.buf) {
		return nil, 0, nil // the field is absent: no blocks
	}
	fo := int(le.Uint16(f.buf[vt+slot:]))
	if fo == 0 {
		return nil, 0, nil
	}
	at = f.table + fo
	if at+4 > len(f.buf) {
		return nil, 0, errors.New("bad footer field")
	}
	vec := at + int(le.Uint32(f.buf[at:]))
	if vec+4 > len(f.buf) {
		return nil, 0, errors.New("bad footer vector")
	}
	n := int(le.Uint32(f.buf[vec:]))
	const blockSize = 24
	if vec+4+n*blockSize > len(f.buf) {
		return nil, 0, errors.New("bad footer vector length")
	}
	blocks = make([]int, n)
	for i := range blocks {
		blocks[i] = vec + 4 + i*blockSize
	}
	return blocks, at, nil
}

// readBlock and writeBlock read and write a Block struct: offset int64,
// metaDataLength int32, 4 bytes of padding, bodyLength int64.
func readBlock(buf []byte, at int) block {
	le := binary.LittleEndian
	return block{offset: int64(le.Uint64(buf[at:])), meta: int32(le.Uint32(buf[at+8:])), body: int64(le.Uint64(buf[at+16:]))}
}

func writeBlock(buf []byte, at int, b block) {
	le := binary.LittleEndian
	le.PutUint64(buf[at:], uint64(b.offset))
	le.PutUint32(buf[at+8:], uint32(b.meta))
	le.PutUint64(buf[at+16:], uint64(b.body))
}

// partReader reads one part: through its footer when it has one, else as the stream
// that follows the magic, up to its last complete batch.
type partReader struct {
	path     string
	ra       io.ReaderAt
	size     int64
	closer   io.Closer
	complete bool
	fr       *ipc.FileReader
	sr       *ipc.Reader
	schema   *arrow.Schema
}

// openPart opens a part. A part without a footer whose stream has no readable
// schema (its writer was killed at once) opens with a nil schema and no batches.
func openPart(path string, mem memory.Allocator) (*partReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r, err := readPart(path, f, st.Size(), mem)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// readPart reads the size bytes of ra as a part; path names it in errors.
func readPart(path string, ra io.ReaderAt, size int64, mem memory.Allocator) (*partReader, error) {
	r := &partReader{path: path, ra: ra, size: size}
	head := make([]byte, len(fileMagic))
	if n, _ := ra.ReadAt(head, 0); n < len(head) || !bytes.Equal(head, fileMagic) {
		if size < int64(len(fileMagic)) && bytes.Equal(head[:n], fileMagic[:n]) {
			return r, nil // killed before its magic was written: empty
		}
		return nil, fmt.Errorf("%w: %s does not start with the Arrow magic", ErrNotLog, path)
	}
	if hasFooter(ra, size) {
		fr, err := ipc.NewFileReader(io.NewSectionReader(ra, 0, size), ipc.WithAllocator(mem))
		if err == nil {
			r.fr, r.complete, r.schema = fr, true, fr.Schema()
			return r, nil
		}
		// Bytes of a batch that happen to end with the magic: read it as a stream.
	}
	sr, err := ipc.NewReader(bufio.NewReaderSize(io.NewSectionReader(ra, 8, size-8), 1<<16), ipc.WithAllocator(mem))
	if err != nil {
		return r, nil // no complete schema: no batches
	}
	r.sr, r.schema = sr, sr.Schema()
	return r, nil
}

// hasFooter reports whether a file of size bytes ends with the file magic.
func hasFooter(f io.ReaderAt, size int64) bool {
	if size < int64(len(fileMagic)+4+len(ipc.Magic)) {
		return false
	}
	tail := make([]byte, len(ipc.Magic))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return false
	}
	return bytes.Equal(tail, ipc.Magic)
}

// batches yields the part's record batches in order; each is released when the
// loop body returns (Retain it to keep it). A part without a footer ends at its last
// complete batch, without an error.
func (r *partReader) batches() iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		switch {
		case r.fr != nil:
			for i := range r.fr.NumRecords() {
				rec, err := r.fr.RecordBatchAt(i)
				if err != nil {
					yield(nil, fmt.Errorf("%w: %s: batch %d: %w", ErrCorrupt, r.path, i, err))
					return
				}
				ok := yield(rec, nil)
				rec.Release()
				if !ok {
					return
				}
			}
		case r.sr != nil:
			for r.sr.Next() {
				if !yield(r.sr.RecordBatch(), nil) {
					return
				}
			}
		}
	}
}

// numBatches is the number of batches of a complete part, -1 for one without a footer.
func (r *partReader) numBatches() int {
	if r.fr != nil {
		return r.fr.NumRecords()
	}
	return -1
}

func (r *partReader) Close() error {
	if r.fr != nil {
		_ = r.fr.Close()
	}
	if r.sr != nil {
		r.sr.Release()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
