package datalog

import (
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
)

// RewritePart rewrites the part at path batch by batch: edit gets each batch and its
// position and returns the batch to write in its place (a new one, which RewritePart
// releases, or the same one).
func RewritePart(path string, edit func(i int, rec arrow.RecordBatch) arrow.RecordBatch) error {
	mem := memory.DefaultAllocator
	r, err := openPart(path, mem)
	if err != nil {
		return err
	}
	defer r.Close()
	tmp := path + ".tmp"
	var pw *partWriter
	enc := ipcfile.NewEncoder(ipcfile.Uncompressed)
	defer enc.Close()
	i := 0
	for rec, err := range r.batches() {
		if err != nil {
			return err
		}
		if pw == nil {
			if pw, err = createPart(tmp, r.schema, nil, enc); err != nil {
				return err
			}
		}
		out := edit(i, rec)
		err = pw.writeBatch(out)
		if out != rec {
			out.Release()
		}
		if err != nil {
			pw.abandon()
			return err
		}
		i++
	}
	if err := pw.finish(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type readOptionFunc func(*readConfig)

func (o readOptionFunc) applyRead(c *readConfig) { o(c) }

// WithWriteWrapper makes Recover write its files through wrap(file).
func WithWriteWrapper(wrap func(io.Writer) io.Writer) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.wrapWrite = wrap })
}

// WithoutChecksums makes a dataset write its batches without their checksums, to
// measure what the checksums cost: the log it writes claims format version 2 and
// does not read.
func WithoutChecksums() WriteOption {
	return writeOption(func(c *writeConfig) { c.noChecksums = true })
}

// WithoutObservations makes a dataset leave the observations out of its batches,
// neither copied nor compressed, to measure what they cost the writer: the log it
// writes does not read.
func WithoutObservations() WriteOption {
	return writeOption(func(c *writeConfig) { c.noObservations = true })
}
