package lz4

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/pierrec/lz4/v4"
)

// LZ4 format constants. The frame ones describe the only frame this package
// writes; the block ones are the rules of the LZ4 block format that decoders
// (the reference C decoder in particular) rely on to copy in wide words
// without checking every byte.
const (
	// blockMax is the most bytes of src one block holds: the 64 KB block
	// size that the frame header announces, as arrow-go and Arrow C++ use.
	blockMax = 64 << 10
	// storedFlag marks, in a block's size word, a block stored as is.
	storedFlag = 1 << 31
	// minMatch is the shortest match a sequence can encode.
	minMatch = 4
	// lastLiterals is how many bytes at the end of a block must be literals.
	lastLiterals = 5
	// mfLimit is how close to the end of a block the last match may start:
	// at least this many bytes before it.
	mfLimit = 12
	// maxOffset is the farthest back a match can reach (a 16-bit offset).
	maxOffset = 65535
	// skipLog sets how fast the stride matcher speeds up over bytes that do
	// not repeat the row above: after d such bytes it moves d>>skipLog
	// bytes further per probe than the one to four the probe itself rules
	// out, so incompressible data costs a few hundred probes per block
	// rather than one per byte, while the long runs of repeated bytes it is
	// meant for are still found (backward extension recovers what a skip
	// overshoots). 7 is what pierrec/lz4 uses.
	skipLog = 7
)

// frameHeader is the frame header every frame starts with: the magic
// number 0x184D2204 (little-endian), FLG 0x60 (version 01, independent
// blocks, no block checksum, no content size, no content checksum, no
// dictionary), BD 0x40 (64 KB blocks), and the header checksum, the second
// byte of the xxHash32 of FLG and BD. It is byte for byte what pierrec/lz4's
// Writer writes with the options arrow-go gives it (ChecksumOption(false),
// BlockSizeOption(Block64Kb)), which a test checks, so that readers see the
// same frame descriptor as in files arrow-go compressed itself.
var frameHeader = [...]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82}

// Encoder compresses buffers into LZ4 frames, as Arrow's LZ4_FRAME codec
// stores them. Besides pierrec/lz4's general compressor it has a matcher for
// buffers made of fixed-width rows that mostly repeat the row before (the
// observations of a grid world repeat the same map at every step): it only
// compares each byte with the one a row above, which runs at several GB/s and
// compresses such data better than pierrec's hash-table search, whose table
// remembers the nearest short repeat rather than the whole row above.
//
// The zero value is ready to use. An Encoder is not safe for concurrent
// use; reuse one, since the compressor it holds is large (about 136 KB).
type Encoder struct {
	// c is the generic compressor, kept here so that its hash table is
	// allocated once per encoder rather than once per block.
	c lz4.Compressor
}

// AppendFrame appends to dst one LZ4 frame holding src and returns the
// extended slice. The frame is the header, blocks of at most 64 KB of src,
// each compressed independently of the others, or stored as is when
// compression would not make it smaller, and the end mark. An empty src gives
// the header and the end mark, as pierrec/lz4's Writer writes it.
//
// stride > 0 says src is made of records of stride bytes, each likely to
// repeat much of the one before it: the encoder then looks for matches at
// offset stride only (a copy of the row above), which costs little more than
// comparing the bytes. stride <= 0, or a stride below 4 or above 65535 (LZ4's
// largest offset), uses the generic hash-table compressor of
// github.com/pierrec/lz4/v4 block by block, as does a block too short to hold
// a match a stride back (a stride above the block's length less 12, which is
// every block for a stride above 65524).
//
// AppendFrame grows dst at most once per block, by the block's size plus 4
// (the most a block can take, since a block that does not compress is
// stored), so it allocates nothing once dst has the capacity.
func (e *Encoder) AppendFrame(dst, src []byte, stride int) []byte {
	dst = append(dst, frameHeader[:]...)
	for len(src) > 0 {
		n := min(len(src), blockMax)
		blk := src[:n]
		src = src[n:]

		dst = slices.Grow(dst, 4+n)
		at := len(dst)
		dst = dst[:at+4+n]
		// out has room for exactly n bytes: a compressed block must be
		// smaller than that, or the block is stored instead.
		out := dst[at+4 : at+4+n]
		var cn int
		if stride >= minMatch && stride <= maxOffset && stride <= n-mfLimit {
			cn = compressStride(out, blk, stride)
		} else {
			cn = e.compressGeneric(out, blk)
		}
		if cn > 0 {
			binary.LittleEndian.PutUint32(dst[at:], uint32(cn))
			dst = dst[:at+4+cn]
		} else {
			binary.LittleEndian.PutUint32(dst[at:], uint32(n)|storedFlag)
			copy(out, blk)
		}
	}
	// The end mark: a block size of 0.
	return append(dst, 0, 0, 0, 0)
}

// AppendStored appends to dst one LZ4 frame holding src in stored blocks: a copy,
// for data that compression would not shrink enough to pay for itself.
func AppendStored(dst, src []byte) []byte {
	dst = append(dst, frameHeader[:]...)
	for len(src) > 0 {
		n := min(len(src), blockMax)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n)|storedFlag)
		dst = append(dst, src[:n]...)
		src = src[n:]
	}
	return append(dst, 0, 0, 0, 0)
}

// compressGeneric compresses src into out (len(out) == len(src)) with
// pierrec/lz4's hash-table compressor and returns the compressed size, or 0
// when the block should be stored: when it did not compress to fewer bytes
// than src. Given a destination shorter than lz4.CompressBlockBound, the
// compressor gives up with 0 (or an error) on incompressible data instead of
// writing it out, which is the cheap way to learn that.
func (e *Encoder) compressGeneric(out, src []byte) int {
	cn, err := e.c.CompressBlock(src, out)
	if err != nil || cn <= 0 || cn >= len(src) {
		return 0
	}
	return cn
}

// compressStride compresses src, one block, into out, whose length must be
// len(src), looking for matches at offset stride only, and returns the
// compressed size, or 0 when the block does not compress to fewer than
// len(src) bytes and should be stored. It requires minMatch <= stride <=
// min(maxOffset, len(src)-mfLimit).
//
// Every sequence is checked to fit before it is written, against len(src)
// rather than the LZ4 worst-case bound, so it never writes past out and gives
// up on incompressible data as soon as the output reaches the stored size.
func compressStride(out, src []byte, stride int) int {
	n := len(src)
	if stride < minMatch || stride > maxOffset || stride > n-mfLimit || len(out) < n {
		return 0
	}
	mfLimit := n - mfLimit         // the last position a match may start at
	matchLimit := n - lastLiterals // a match ends at or before this
	di, anchor := 0, 0             // next byte of out; first byte not yet emitted
	i, missFrom := stride, stride  // the probe; where the current run of misses began
	for i <= mfLimit {
		x := binary.LittleEndian.Uint32(src[i:]) ^ binary.LittleEndian.Uint32(src[i-stride:])
		if x != 0 {
			// The highest differing byte of the four rules out a match
			// starting at any of the bytes up to it, so skip past it (one to
			// four bytes), and further the longer nothing has matched.
			i += (bits.Len32(x)+7)>>3 + (i-missFrom)>>skipLog
			continue
		}

		// Four bytes repeat the row above. Extend the match backwards over
		// literals that also do (a skip may have jumped into the match), but
		// not before the block: blocks are independent.
		start := i
		for start > anchor && start > stride && src[start-1] == src[start-1-stride] {
			start--
		}
		// And forwards, 32 bytes at a time while all of them repeat (the
		// long stretches of a row that stay the same are what this matcher
		// is for, and comparing them is most of its time), then 8 at a time,
		// then bytewise, up to matchLimit so that the block ends with
		// lastLiterals literals.
		j := i + minMatch
		for j+32 <= matchLimit {
			p, q := src[j:j+32], src[j-stride:j-stride+32]
			// ^ and | bind equally tight in Go: the parentheses matter.
			if (binary.LittleEndian.Uint64(p)^binary.LittleEndian.Uint64(q))|
				(binary.LittleEndian.Uint64(p[8:])^binary.LittleEndian.Uint64(q[8:]))|
				(binary.LittleEndian.Uint64(p[16:])^binary.LittleEndian.Uint64(q[16:]))|
				(binary.LittleEndian.Uint64(p[24:])^binary.LittleEndian.Uint64(q[24:])) != 0 {
				break
			}
			j += 32
		}
		for j < matchLimit {
			if j+8 <= matchLimit {
				y := binary.LittleEndian.Uint64(src[j:]) ^ binary.LittleEndian.Uint64(src[j-stride:])
				if y != 0 {
					j += bits.TrailingZeros64(y) >> 3
					break
				}
				j += 8
				continue
			}
			if src[j] != src[j-stride] {
				break
			}
			j++
		}

		ll := start - anchor       // literal length
		ml := j - start - minMatch // match length, as encoded
		// Give up once the output cannot end up smaller than the block: this
		// sequence plus at least the last literals' token would reach n.
		if di+3+ll+extLen(ll)+extLen(ml) >= n {
			return 0
		}
		tok := di
		di++
		di = putExtLen(out, di, ll)
		if ll <= 16 && di+16 <= len(out) && anchor+16 <= n {
			// Few literals, the usual case between long matches: copy 16
			// bytes in two words rather than call memmove. The bytes past
			// the literals in out are overwritten by what follows.
			binary.LittleEndian.PutUint64(out[di:], binary.LittleEndian.Uint64(src[anchor:]))
			binary.LittleEndian.PutUint64(out[di+8:], binary.LittleEndian.Uint64(src[anchor+8:]))
			di += ll
		} else {
			di += copy(out[di:], src[anchor:start])
		}
		binary.LittleEndian.PutUint16(out[di:], uint16(stride))
		di += 2
		di = putExtLen(out, di, ml)
		out[tok] = byte(min(ll, 15))<<4 | byte(min(ml, 15))

		anchor, i, missFrom = j, j, j
	}

	// The last sequence: literals only, at least lastLiterals of them.
	ll := n - anchor
	if di+1+ll+extLen(ll) >= n {
		return 0
	}
	out[di] = byte(min(ll, 15)) << 4
	di++
	di = putExtLen(out, di, ll)
	di += copy(out[di:], src[anchor:])
	return di
}

// extLen returns how many bytes a literal length or a match length (less
// minMatch) v takes after the token: none below 15, else one byte per 255
// of v-15 and one more for the remainder.
func extLen(v int) int {
	if v < 15 {
		return 0
	}
	return (v-15)/255 + 1
}

// putExtLen writes at out[di:] the bytes that extend a length v beyond the
// 15 its token nibble holds, extLen(v) of them, and returns the position
// after them.
func putExtLen(out []byte, di, v int) int {
	if v < 15 {
		return di
	}
	for v -= 15; v >= 255; v -= 255 {
		out[di] = 255
		di++
	}
	out[di] = byte(v)
	return di + 1
}
