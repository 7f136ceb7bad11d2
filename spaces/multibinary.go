package spaces

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// MultiBinary is a set of arrays of 0s and 1s of a fixed shape, as Gymnasium's
// MultiBinary(n). Its values are []int8 of 0 and 1 in row-major order, of length the
// product of Shape; Check and FlattenTo also accept []int64 of 0 and 1.
//
// Create it with NewMultiBinary; the zero MultiBinary is not a valid space. A MultiBinary
// is immutable and safe for concurrent use.
//
// Its flat encoding is the values as float32 0 and 1.
type MultiBinary struct {
	shape []int
	n     int
}

var _ Space = (*MultiBinary)(nil)

// NewMultiBinary returns the MultiBinary of the given shape: NewMultiBinary(5) holds
// vectors of 5 bits. Every dimension must be >= 1, as in Gymnasium; no dimension at all
// means a single bit. The error wraps ErrInvalid.
func NewMultiBinary(shape ...int) (*MultiBinary, error) {
	n, err := shapeSize(shape, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: MultiBinary %v", ErrInvalid, err)
	}
	return &MultiBinary{shape: slices.Clone(shape), n: n}, nil
}

// Shape returns a copy of the shape.
func (m *MultiBinary) Shape() []int { return slices.Clone(m.shape) }

// Kind returns KindMultiBinary.
func (m *MultiBinary) Kind() Kind { return KindMultiBinary }

// FlatDim returns the number of elements.
func (m *MultiBinary) FlatDim() int { return m.n }

// CheckInts returns nil if v has one entry per element and each is 0 or 1, or a
// *ValueError naming the first index that is not. It does not allocate when v is a member.
func (m *MultiBinary) CheckInts(v []int64) error {
	return withSpace(checkBits(v, m.n), m)
}

func checkBits[T int8 | int64](v []T, n int) *ValueError {
	if len(v) != n {
		var zero T
		return lengthMismatch(fmt.Sprintf("[]%T", zero), n, len(v))
	}
	for i, x := range v {
		if x != 0 && x != 1 {
			return outside(indexPath(i), fmt.Sprintf("%d is not 0 or 1", x))
		}
	}
	return nil
}

// Check returns nil if v is a []int8 or []int64 member, or a *ValueError. It does not
// allocate when v is a member.
func (m *MultiBinary) Check(v any) error {
	return withSpace(m.checkValue(v), m)
}

func (m *MultiBinary) checkValue(v any) *ValueError {
	switch x := v.(type) {
	case []int8:
		return checkBits(x, m.n)
	case []int64:
		return checkBits(x, m.n)
	}
	return typeMismatch("[]int8", v)
}

// Sample returns a new []int8 drawn as SampleTo draws it.
func (m *MultiBinary) Sample(rng *rand.Rand) any {
	dst := make([]int8, m.n)
	m.SampleTo(dst, rng)
	return dst
}

// SampleTo fills dst[:FlatDim()] with independent fair bits. It panics if dst is
// shorter. It does not allocate.
func (m *MultiBinary) SampleTo(dst []int8, rng *rand.Rand) {
	dst = dst[:m.n]
	var bits uint64
	for i := range dst {
		if i%64 == 0 {
			bits = rng.Uint64()
		}
		dst[i] = int8(bits & 1)
		bits >>= 1
	}
}

// FlattenTo writes v's bits as float32 0 and 1 into dst[:FlatDim()]. It does not allocate
// when it succeeds.
func (m *MultiBinary) FlattenTo(dst []float32, v any) error {
	if len(dst) < m.n {
		return fmt.Errorf("%w: %v needs %d entries, dst has %d", ErrShortBuffer, m, m.n, len(dst))
	}
	return withSpace(m.flattenValue(dst[:m.n], v), m)
}

func (m *MultiBinary) flattenValue(dst []float32, v any) *ValueError {
	switch x := v.(type) {
	case []int8:
		return flattenBits(dst, x, m.n)
	case []int64:
		return flattenBits(dst, x, m.n)
	}
	return typeMismatch("[]int8", v)
}

func flattenBits[T int8 | int64](dst []float32, v []T, n int) *ValueError {
	if e := checkBits(v, n); e != nil {
		return e
	}
	dst = dst[:len(v)]
	for i, x := range v {
		dst[i] = float32(x)
	}
	return nil
}

// Unflatten decodes float32 0s and 1s into a []int8.
func (m *MultiBinary) Unflatten(src []float32) (any, error) { return unflattenChecked(m, m, src) }

func (m *MultiBinary) unflattenValue(src []float32) (any, *ValueError) {
	out := make([]int8, len(src))
	for i, x := range src {
		switch x {
		case 0:
		case 1:
			out[i] = 1
		default:
			return nil, outside(indexPath(i), fmt.Sprintf("flat entry is %s, want 0 or 1", num(x)))
		}
	}
	return out, nil
}

// Equal reports whether other is a *MultiBinary of the same shape.
func (m *MultiBinary) Equal(other Space) bool {
	o, ok := other.(*MultiBinary)
	if !ok || o == nil || m == nil {
		return ok && o == m
	}
	return m.n == o.n && slices.Equal(m.shape, o.shape)
}

// String returns the space as Gymnasium prints it: "MultiBinary(5)" for one dimension,
// "MultiBinary((2, 3))" otherwise.
func (m *MultiBinary) String() string {
	if len(m.shape) == 1 {
		return "MultiBinary(" + strconv.Itoa(m.shape[0]) + ")"
	}
	return "MultiBinary(" + pyTuple(m.shape) + ")"
}

// MarshalJSON returns the spec {"type":"multi_binary","shape":[...]}.
func (m *MultiBinary) MarshalJSON() ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	b := append([]byte(nil), `{"type":"multi_binary","shape":`...)
	b = appendInts(b, m.shape)
	return append(b, '}'), nil
}

func (m *MultiBinary) validate() error {
	if m == nil || m.n < 1 {
		return fmt.Errorf("%w: MultiBinary not made by NewMultiBinary", ErrInvalid)
	}
	return nil
}

func (m *MultiBinary) depth() int { return 1 }
