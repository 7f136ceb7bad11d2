package datalog

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/stretchr/testify/require"
)

// FuzzReadPart reads arbitrary bytes after the magic as a part, as the reader and
// Recover read one: whole, with its footer, or cut by a killed writer. The reader
// neither panics nor leaks, fails only with ErrCorrupt or ErrNotLog, ends at the
// last batch it can read, and every batch it yields is one that Recover can write
// out (or refuse with an error); so does the reader that skips damaged batches, as
// Recover's does. The seeds are small parts of each compression (three batches of
// two rows), whole, without their footers, and cut within a batch, so that the
// fuzzer spends its time on mutations rather than on shrinking large inputs.
func FuzzReadPart(f *testing.F) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		data, blocks := writePart(f, 6, 2, comp)
		last := blocks[len(blocks)-1].End()
		f.Add(data[len(ipcfile.Magic):])
		f.Add(data[len(ipcfile.Magic):last])
		f.Add(data[len(ipcfile.Magic) : blocks[1].End()+40])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		part := append(bytes.Clone(ipcfile.Magic), body...)
		for _, skip := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			r, err := readPartSkipping("fuzz", bytes.NewReader(part), int64(len(part)), mem, skip)
			if err != nil {
				require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotLog), "%v", err)
				mem.AssertSize(t, 0)
				continue
			}
			enc := ipcfile.NewEncoder(ipcfile.LZ4)
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
			enc.Close()
			require.NoError(t, r.Close())
			mem.AssertSize(t, 0)
		}
	})
}
