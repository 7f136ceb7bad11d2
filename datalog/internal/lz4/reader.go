package lz4

import (
	"bytes"
	"io"

	"github.com/pierrec/lz4/v4"
)

// Reader decodes LZ4 frames with pierrec/lz4's Reader, the one arrow-go decodes
// them with. The zero value is not ready: use NewReader. It is not safe for
// concurrent use; reuse one, since it holds its buffers.
type Reader struct {
	zr *lz4.Reader
	br bytes.Reader
}

// NewReader returns a Reader.
func NewReader() *Reader { return &Reader{zr: lz4.NewReader(nil)} }

// ReadFull decodes the first len(dst) bytes of the frames in frame into dst; an
// error when they hold fewer, or are not frames.
func (r *Reader) ReadFull(frame, dst []byte) error {
	r.br.Reset(frame)
	r.zr.Reset(&r.br)
	_, err := io.ReadFull(r.zr, dst)
	return err
}
