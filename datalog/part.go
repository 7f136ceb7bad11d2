package datalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strconv"

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
	out    io.Writer // f, or what wraps it
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
	return createPartWith(path, schema, bw, enc, nil)
}

// createPartWith is createPart whose file is written through wrap(file) when wrap is
// not nil.
func createPartWith(path string, schema *arrow.Schema, bw *bufio.Writer, enc *ipcfile.Encoder, wrap writeWrapper) (*partWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	var out io.Writer = f
	if wrap != nil {
		out = wrap(f)
	}
	if bw == nil {
		bw = bufio.NewWriterSize(out, partBuffer)
	}
	p := &partWriter{path: path, f: f, out: out, bw: bw, schema: schema}
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
func (p *partWriter) take() { p.bw.Reset(p.out) }

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
		n, err = p.out.Write(b)
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

// partReader reads one part, always as the stream that follows the magic, through
// ipcfile's message reader, which checks every length before it trusts it and every
// batch's checksum. A part that has a footer has it read and checked first
// (ipcfile.ReadFooterAt), and the batches and full dictionaries of the stream must
// be those the footer lists, so that a reader that follows the footer (pyarrow)
// reads what this one does: a part whose footer is damaged, or does not match its
// stream, is ErrCorrupt. A part without a footer ends at its last complete batch.
type partReader struct {
	path   string
	ra     io.ReaderAt
	size   int64
	closer io.Closer
	// complete reports a footer that was read and checked; footerErr why the
	// footer that the part ends with could not be.
	complete  bool
	footer    ipcfile.Footer
	footerErr error
	msgs      *ipcfile.MessageReader
	sr        *ipc.Reader
	schema    *arrow.Schema
	// read counts the batches yielded; cut says why a part without a footer ended
	// before its end (its writer was killed in a batch), nil when it did not.
	read int
	cut  error
	// skip: the reader skips damaged record batches (Recover), so the batches are
	// not compared with the footer's.
	skip bool
}

// openPart opens a part. A part without a footer whose stream has no readable
// schema (its writer was killed at once) opens with a nil schema and no batches.
// skip makes the reader skip the record batches whose bodies are damaged, as
// Recover does (ipcfile.MessageReader.SkipDamaged).
func openPart(path string, mem memory.Allocator) (*partReader, error) {
	return openPartSkipping(path, mem, false)
}

func openPartSkipping(path string, mem memory.Allocator, skip bool) (*partReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r, err := readPartSkipping(path, f, st.Size(), mem, skip)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// readPart reads the size bytes of ra as a part; path names it in errors.
func readPart(path string, ra io.ReaderAt, size int64, mem memory.Allocator) (*partReader, error) {
	return readPartSkipping(path, ra, size, mem, false)
}

func readPartSkipping(path string, ra io.ReaderAt, size int64, mem memory.Allocator, skip bool) (*partReader, error) {
	r := &partReader{path: path, ra: ra, size: size, skip: skip}
	head := make([]byte, len(ipcfile.Magic))
	if n, _ := ra.ReadAt(head, 0); n < len(head) || !bytes.Equal(head, ipcfile.Magic) {
		if size < int64(len(ipcfile.Magic)) && bytes.Equal(head[:n], ipcfile.Magic[:n]) {
			return r, nil // killed before its magic was written: empty
		}
		return nil, fmt.Errorf("%w: %s does not start with the Arrow magic", ErrNotLog, path)
	}
	if hasFooter(ra, size) {
		// A footer that does not check may also be the bytes of a batch of a part
		// without one that happen to end with the magic: the stream tells.
		r.footer, r.footerErr = ipcfile.ReadFooterAt(ra, size)
		r.complete = r.footerErr == nil
	}
	// The stream's messages are read by ipcfile's reader, which refuses the lengths
	// that arrow-go's would trust (a body past the end of a cut part, a compressed
	// buffer that claims more than its frame holds) before they take memory.
	stream := size - int64(len(ipcfile.Magic))
	if r.complete {
		stream = r.footer.Start - int64(len(ipcfile.Magic))
	}
	r.msgs = ipcfile.NewMessageReader(bufio.NewReaderSize(io.NewSectionReader(ra, int64(len(ipcfile.Magic)), stream), 1<<16),
		int64(len(ipcfile.Magic)), stream)
	if skip {
		r.msgs.SkipDamaged()
	}
	sr, err := ipc.NewReaderFromMessageReader(r.msgs, ipc.WithAllocator(mem))
	if err != nil {
		if r.complete || !r.wasCut(err) && !errors.Is(err, io.EOF) {
			// A finished part, or a schema that is there and damaged.
			return nil, fmt.Errorf("%w: %s: schema: %w", ErrCorrupt, path, err)
		}
		r.cut = err
		return r, nil // no complete schema: no batches
	}
	r.sr, r.schema = sr, sr.Schema()
	if v, ok := formatVersion(r.schema); ok && v >= checksumVersion {
		r.msgs.RequireChecksums()
		// The footer holds what no other check reads: a copy of the schema, which
		// readers of the file format (pyarrow) take from it, and padding. The
		// writer's footer is a function of the stream's schema and its blocks.
		if r.complete && !bytes.Equal(r.footer.Bytes, ipcfile.FooterBytes(r.schema, r.footer.Dicts, r.footer.Recs)) {
			r.complete = false
			r.footerErr = fmt.Errorf("%w: the footer is not the one its stream's schema and batches make (damaged)", ErrCorrupt)
		}
	}
	return r, nil
}

// formatVersion returns the format version of a part's schema, if it names one.
func formatVersion(s *arrow.Schema) (int, bool) {
	md := s.Metadata()
	i := md.FindKey(MetaFormatVersion)
	if i < 0 {
		return 0, false
	}
	v, err := strconv.Atoi(md.Values()[i])
	return v, err == nil
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
// complete batch, without an error; a damaged part ends with an error wrapping
// ErrCorrupt that names it.
func (r *partReader) batches() iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if r.sr == nil {
			return
		}
		for r.sr.Next() {
			if r.complete && !r.skip {
				if k := r.read; k >= len(r.footer.Recs) || r.footer.Recs[k] != r.msgs.Last() {
					yield(nil, fmt.Errorf("%w: %s: batch %d at offset %d is not the footer's", ErrCorrupt, r.path, k, r.msgs.Last().Offset))
					return
				}
			}
			r.read++
			if !yield(r.sr.RecordBatch(), nil) {
				return
			}
		}
		if err := r.end(); err != nil {
			yield(nil, err)
		}
	}
}

// end checks how the stream ended, once read: at the end-of-stream marker and the
// footer's batches and dictionaries for a part with a footer, or cut within a
// message for one without.
func (r *partReader) end() error {
	err := r.sr.Err()
	switch {
	case r.complete && err == nil && r.skip:
		return nil
	case r.complete && err == nil:
		got, want := r.msgs.Trailing(), r.footer.Dicts
		switch {
		case !r.msgs.AtEOS() || r.msgs.Offset() != r.footer.Start:
			return fmt.Errorf("%w: %s: the stream does not end where the footer begins", ErrCorrupt, r.path)
		case r.read != len(r.footer.Recs):
			return fmt.Errorf("%w: %s: %d batches, its footer lists %d", ErrCorrupt, r.path, r.read, len(r.footer.Recs))
		case !slices.Equal(got, want):
			return fmt.Errorf("%w: %s: its dictionaries are not those its footer lists", ErrCorrupt, r.path)
		}
		return nil
	case r.complete:
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.path, err)
	case r.footerErr != nil && r.msgs.AtEOS():
		// A finished part, whose footer cannot be read.
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.path, r.footerErr)
	case err == nil:
		return nil
	case r.wasCut(err):
		r.cut = err // its writer was killed within this message
		return nil
	}
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.path, err)
}

// wasCut reports whether the stream of a part without a footer ended at err because
// its bytes stop within a message: its writer was killed there.
func (r *partReader) wasCut(err error) bool {
	if r.complete || r.msgs.AtEOS() || errors.Is(err, ipcfile.ErrCorrupt) {
		return false
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || r.msgs.Offset() == r.size
}

// numBatches is the number of batches of a complete part, -1 for one without a footer.
func (r *partReader) numBatches() int {
	if r.complete {
		return len(r.footer.Recs)
	}
	return -1
}

func (r *partReader) Close() error {
	if r.sr != nil {
		r.sr.Release()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
