package remote

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unsafe"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
)

// Tensors on the wire are dense, row-major and little-endian (see the .proto). The
// decoders here check a tensor against the dtype and shape wanted, field by field,
// and return a *FieldError naming the first problem; they never panic and allocate
// at most the decoded elements (bounded by the message size the server accepts).
//
// On a little-endian machine the encoders alias the caller's slice as the tensor's
// bytes, and the decoders alias the tensor's bytes when they are aligned (else copy
// with memmove): a tensor is marshaled before the caller's slice changes, and a
// decoded slice is used only while its message is, which every caller here
// guarantees (a message is never unmarshaled into again while its slices are in use:
// protobuf allocates new bytes for each unmarshal).

// maxRank bounds the number of dimensions of a tensor.
const maxRank = spaces.MaxRank + 1

// littleEndian reports whether the machine stores numbers little-endian, as the wire
// does.
func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

func dtypeSize(d pb.DType) int {
	switch d {
	case pb.DType_DTYPE_FLOAT32:
		return 4
	case pb.DType_DTYPE_INT64:
		return 8
	case pb.DType_DTYPE_BOOL:
		return 1
	case pb.DType_DTYPE_FLOAT64:
		return 8
	}
	return 0
}

// dtypeName names a dtype as numpy would, for messages.
func dtypeName(d pb.DType) string {
	switch d {
	case pb.DType_DTYPE_FLOAT32:
		return "float32"
	case pb.DType_DTYPE_INT64:
		return "int64"
	case pb.DType_DTYPE_BOOL:
		return "bool"
	case pb.DType_DTYPE_FLOAT64:
		return "float64"
	}
	return d.String()
}

// shapeString formats a shape as [2 3].
func shapeString(shape []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// elements returns the number of elements of a shape, or a *FieldError for a
// negative dimension, too many dimensions or too many elements.
func elements(field string, shape []int64) (int, *FieldError) {
	if len(shape) > maxRank {
		return 0, fieldErrorf(field+".shape", "%d dimensions, want at most %d", len(shape), maxRank)
	}
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fieldErrorf(field+".shape", "dimension %d is %d, want >= 0", i, d)
		}
		if d > 0 && n > spaces.MaxFlatDim/d {
			return 0, fieldErrorf(field+".shape", "%s holds more than %d elements", shapeString(shape), spaces.MaxFlatDim)
		}
		n *= d
	}
	return int(n), nil
}

// checkTensor checks t's dtype and byte length and that its shape is one of the
// shapes accepted (each a list of dimensions), and returns its number of elements.
func checkTensor(field string, t *pb.Tensor, dtype pb.DType, accept ...[]int64) (int, *FieldError) {
	if t == nil {
		return 0, fieldErrorf(field, "missing")
	}
	if t.GetDtype() != dtype {
		return 0, fieldErrorf(field+".dtype", "%s, want %s", t.GetDtype(), dtype)
	}
	shape := t.GetShape()
	n, fe := elements(field, shape)
	if fe != nil {
		return 0, fe
	}
	if len(accept) > 0 && !acceptShape(shape, accept) {
		want := make([]string, len(accept))
		for i, a := range accept {
			want[i] = shapeString(a)
		}
		return 0, fieldErrorf(field+".shape", "%s, want %s", shapeString(shape), strings.Join(want, " or "))
	}
	size := dtypeSize(dtype)
	if got := len(t.GetData()); got != n*size {
		return 0, fieldErrorf(field+".data", "%d bytes, want %d (%d %s of %d bytes, shape %s)", got, n*size, n, dtypeName(dtype), size, shapeString(shape))
	}
	return n, nil
}

func acceptShape(shape []int64, accept [][]int64) bool {
	for _, a := range accept {
		if len(a) != len(shape) {
			continue
		}
		ok := true
		for i := range a {
			if a[i] != shape[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// decodeFloat32 checks t as a float32 tensor of one of the accepted shapes, with no
// NaN, and decodes it. See decodeFloat32Any for the memory of the result.
func decodeFloat32(field string, t *pb.Tensor, scratch *[]float32, accept ...[]int64) ([]float32, *FieldError) {
	v, fe := decodeFloat32Any(field, t, scratch, accept...)
	if fe != nil {
		return nil, fe
	}
	for i, x := range v {
		if x != x {
			return nil, fieldErrorf(field+".data", "element %d is NaN", i)
		}
	}
	return v, nil
}

// decodeFloat32Any checks t as a float32 tensor of one of the accepted shapes and
// decodes it, NaN included. On a little-endian machine, when t's bytes are aligned
// for float32 (protobuf allocates them, so they are), the result is those bytes
// themselves, valid as long as t is and not to be modified; otherwise the elements
// are copied into *scratch, grown as needed (a new slice when scratch is nil).
func decodeFloat32Any(field string, t *pb.Tensor, scratch *[]float32, accept ...[]int64) ([]float32, *FieldError) {
	n, fe := checkTensor(field, t, pb.DType_DTYPE_FLOAT32, accept...)
	if fe != nil {
		return nil, fe
	}
	data := t.GetData()
	if n == 0 {
		return []float32{}, nil
	}
	if littleEndian() {
		if p := unsafe.Pointer(unsafe.SliceData(data)); uintptr(p)%unsafe.Alignof(float32(0)) == 0 {
			return unsafe.Slice((*float32)(p), n), nil
		}
	}
	dst := scratchOf(scratch, n)
	if littleEndian() {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*n), data)
		return dst, nil
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return dst, nil
}

// scratchOf returns n elements of *scratch, grown as needed, or a new slice when
// scratch is nil.
func scratchOf[T any](scratch *[]T, n int) []T {
	if scratch == nil {
		return make([]T, n)
	}
	*scratch = grow(*scratch, n)
	return *scratch
}

// decodeInt64 checks t as an int64 tensor of one of the accepted shapes and decodes
// it, aliasing t's bytes when it can, as decodeFloat32Any does.
func decodeInt64(field string, t *pb.Tensor, scratch *[]int64, accept ...[]int64) ([]int64, *FieldError) {
	n, fe := checkTensor(field, t, pb.DType_DTYPE_INT64, accept...)
	if fe != nil {
		return nil, fe
	}
	data := t.GetData()
	if n == 0 {
		return []int64{}, nil
	}
	if littleEndian() {
		if p := unsafe.Pointer(unsafe.SliceData(data)); uintptr(p)%unsafe.Alignof(int64(0)) == 0 {
			return unsafe.Slice((*int64)(p), n), nil
		}
	}
	dst := scratchOf(scratch, n)
	if littleEndian() {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*n), data)
		return dst, nil
	}
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return dst, nil
}

// decodeBool checks t as a bool tensor of one of the accepted shapes, each byte 0 or
// 1, and returns its bytes as bools (a Go bool is one byte, 0 or 1): valid as long
// as t is, not to be modified.
func decodeBool(field string, t *pb.Tensor, accept ...[]int64) ([]bool, *FieldError) {
	n, fe := checkTensor(field, t, pb.DType_DTYPE_BOOL, accept...)
	if fe != nil {
		return nil, fe
	}
	data := t.GetData()
	for i, b := range data {
		if b > 1 {
			return nil, fieldErrorf(field+".data", "element %d is %d, want 0 or 1", i, b)
		}
	}
	if n == 0 {
		return []bool{}, nil
	}
	return unsafe.Slice((*bool)(unsafe.Pointer(unsafe.SliceData(data))), n), nil
}

func grow[T any](dst []T, n int) []T {
	if cap(dst) < n {
		return make([]T, n)
	}
	return dst[:n]
}

// float32Bytes returns v's elements as little-endian bytes: v's own memory on a
// little-endian machine, else buf (grown as needed) filled. See the note above on
// aliasing.
func float32Bytes(v []float32, buf []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
	}
	buf = grow(buf, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	return buf
}

// int64Bytes is float32Bytes for int64 elements.
func int64Bytes(v []int64, buf []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
	}
	buf = grow(buf, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(x))
	}
	return buf
}

// boolBytes returns v as bytes of 0 and 1: v's own memory (a Go bool is one byte,
// 0 or 1).
func boolBytes(v []bool) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// setTensor fills t (reused) with a dtype, a one- or two-dimensional shape and data.
func setTensor(t *pb.Tensor, dtype pb.DType, data []byte, shape ...int64) *pb.Tensor {
	t.Dtype = dtype
	t.Shape = append(t.Shape[:0], shape...)
	t.Data = data
	return t
}
