package lz4

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ContentBound returns the most bytes that the LZ4 frames of b can decode to, by
// their headers and the sizes of their blocks: a stored block its size, a
// compressed one at most the frame's block size, and 255 bytes for each of its own. It reads frames as any writer
// makes them, not only this package's, and is for a reader that must know how
// much memory a frame's claim of its size may take before decoding it.
func ContentBound(b []byte) (int64, error) {
	const (
		magic     = 0x184D2204
		skippable = 0x184D2A50
	)
	var bound int64
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, errors.New("lz4: a frame cut short")
		}
		m := binary.LittleEndian.Uint32(b)
		if m&0xFFFFFFF0 == skippable {
			if len(b) < 8 {
				return 0, errors.New("lz4: a skippable frame cut short")
			}
			n := int64(binary.LittleEndian.Uint32(b[4:]))
			if n > int64(len(b)-8) {
				return 0, errors.New("lz4: a skippable frame cut short")
			}
			b = b[8+n:]
			continue
		}
		if m != magic {
			return 0, fmt.Errorf("lz4: magic %#x", m)
		}
		if len(b) < 7 {
			return 0, errors.New("lz4: a frame header cut short")
		}
		flg, bd := b[4], b[5]
		if flg>>6 != 1 {
			return 0, fmt.Errorf("lz4: frame version %d", flg>>6)
		}
		sizeID := (bd >> 4) & 7
		if sizeID < 4 {
			return 0, fmt.Errorf("lz4: block size id %d", sizeID)
		}
		maxBlock := int64(1) << (8 + 2*sizeID) // 64 KiB, 256 KiB, 1 MiB, 4 MiB
		hdr := 7
		if flg&0x08 != 0 { // content size
			hdr += 8
		}
		if flg&0x01 != 0 { // dictionary id
			hdr += 4
		}
		if hdr > len(b) {
			return 0, errors.New("lz4: a frame header cut short")
		}
		b = b[hdr:]
		blockSum := 0
		if flg&0x10 != 0 {
			blockSum = 4
		}
		for {
			if len(b) < 4 {
				return 0, errors.New("lz4: a block size cut short")
			}
			size := binary.LittleEndian.Uint32(b)
			b = b[4:]
			if size == 0 {
				break // the end mark
			}
			n := int64(size &^ storedFlag)
			if n > maxBlock {
				return 0, fmt.Errorf("lz4: a block of %d bytes in a frame of blocks of %d", n, maxBlock)
			}
			if size&storedFlag != 0 {
				bound += n
			} else {
				// A byte of a block adds at most 255 bytes to what it decodes to
				// (a length's extension byte): a block's own size bounds it too.
				bound += min(maxBlock, 255*n+lastLiterals+minMatch)
			}
			if n+int64(blockSum) > int64(len(b)) {
				return 0, errors.New("lz4: a block cut short")
			}
			b = b[n+int64(blockSum):]
		}
		if flg&0x04 != 0 { // content checksum
			if len(b) < 4 {
				return 0, errors.New("lz4: a checksum cut short")
			}
			b = b[4:]
		}
	}
	return bound, nil
}
