package datalog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
)

// A part is an Arrow IPC file as package ipcfile writes it (see the package
// documentation, "Parts and dictionaries"): a stream of record batches, each after
// the dictionary entries it adds, and a footer that lists the full dictionaries. A
// part whose writer was killed has no footer; read as a stream from byte 8, its
// deltas make every complete batch readable.

// partWriter writes one part. It is not safe for concurrent use.
type partWriter struct {
	path   string
	f      *os.File
	bw     *bufio.Writer
	pos    int64
	w      *ipcfile.Writer
	schema *arrow.Schema

	counted int64 // bytes counted in the dataset's stats so far
}

// partBuffer is the size of the buffer through which a part is written: the small
// messages and buffers of a batch are gathered in it, the large ones (directWrite)
// go past it.
const partBuffer = 1 << 20

// createPart creates the file of a new part, whose batches enc encodes (and
// compresses), written through bw (nil for a buffer of its own); it fails if the file
// exists. Parts may share a buffer and an encoder when they are written one at a
// time: each call that writes to a part takes the buffer, and leaves it empty.
func createPart(path string, schema *arrow.Schema, bw *bufio.Writer, enc *ipcfile.Encoder) (*partWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if bw == nil {
		bw = bufio.NewWriterSize(f, partBuffer)
	}
	p := &partWriter{path: path, f: f, bw: bw, schema: schema}
	p.take()
	p.w, err = ipcfile.NewWriter(p, schema, enc)
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

// directWrite is the size from which a buffer goes to the file in a write of its
// own rather than through the part's buffer: copying it there would cost as much as
// the write.
const directWrite = 64 << 10

// Write writes b to the part, counting the bytes.
func (p *partWriter) Write(b []byte) (int, error) {
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
	if err := p.w.WriteBatch(rec); err != nil {
		return err
	}
	return p.bw.Flush()
}

// size is how many bytes the part holds so far.
func (p *partWriter) size() int64 { return p.pos }

// finish writes the full dictionaries and the footer and closes the file.
func (p *partWriter) finish() error {
	p.take()
	err := p.w.Finish()
	if err == nil {
		err = p.bw.Flush()
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
}

// codec is the part encoder's codec of compression c.
func (c Compression) codec() ipcfile.Codec {
	switch c {
	case LZ4:
		return ipcfile.LZ4
	case ZSTD:
		return ipcfile.ZSTD
	}
	return ipcfile.Uncompressed
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
	head := make([]byte, len(ipcfile.Magic))
	if n, _ := ra.ReadAt(head, 0); n < len(head) || !bytes.Equal(head, ipcfile.Magic) {
		if size < int64(len(ipcfile.Magic)) && bytes.Equal(head[:n], ipcfile.Magic[:n]) {
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
	// The stream's messages are read by ipcfile's reader, which refuses the lengths
	// that arrow-go's would trust (a body past the end of a cut part, a compressed
	// buffer that claims more than its frame holds) before they take memory.
	stream := size - int64(len(ipcfile.Magic))
	msgs := ipcfile.NewMessageReader(bufio.NewReaderSize(io.NewSectionReader(ra, int64(len(ipcfile.Magic)), stream), 1<<16), stream)
	sr, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(mem))
	if err != nil {
		return r, nil // no complete schema: no batches
	}
	r.sr, r.schema = sr, sr.Schema()
	return r, nil
}

// hasFooter reports whether a file of size bytes ends with the file magic.
func hasFooter(f io.ReaderAt, size int64) bool {
	if size < int64(len(ipcfile.Magic)+4+len(ipc.Magic)) {
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
