package datalog

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/stretchr/testify/require"
)

// FuzzReadPart reads arbitrary bytes after the magic as a part without a footer, as
// the reader and Recover read a part that a killed writer left: the reader neither
// panics nor leaks, ends in an error that says the part is corrupt or at the last
// batch it can read, and every batch it yields is one that Recover can write out
// (or refuse with an error). The seeds are parts of each compression, whole but for
// their footers and cut within a batch.
func FuzzReadPart(f *testing.F) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		data, blocks := writePart(f, 40, 6, comp)
		last := blocks[len(blocks)-1].End()
		f.Add(data[len(ipcfile.Magic):last])
		f.Add(data[len(ipcfile.Magic) : blocks[2].End()+40])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		part := append(bytes.Clone(ipcfile.Magic), body...)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, err := readPart("fuzz", bytes.NewReader(part), int64(len(part)), mem)
		require.NoError(t, err)
		enc := ipcfile.NewEncoder(ipcfile.LZ4)
		defer enc.Close()
		var pw *ipcfile.Writer
		for rec, err := range r.batches() {
			if err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
				break
			}
			if pw == nil {
				if pw, err = ipcfile.NewWriter(io.Discard, r.schema, enc); err != nil {
					break // a schema of types a log has not: Recover reports it
				}
			}
			_ = pw.WriteBatch(rec) // an error is the batch's, which Recover reports
		}
		require.NoError(t, r.Close())
	})
}
