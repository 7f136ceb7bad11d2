package spaces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Box is a set of float32 arrays of a fixed shape whose elements lie within per-element
// bounds [low, high], as Gymnasium's Box(low, high, shape, float32). A bound may be
// infinite. Its values are []float32 in row-major order, of length the product of Shape
// (1 for the empty shape).
//
// Create a Box with NewBox or NewBoxBounds; the zero Box is not a valid space. A Box is
// immutable and safe for concurrent use.
//
// Its flat encoding is the values themselves.
type Box struct {
	shape   []int
	n       int
	lo, hi  []float32 // length 1 when uniform, n otherwise; nil in the zero Box
	uniform bool
}

var _ Space = (*Box)(nil)

// NewBox returns the Box of the given shape whose every element lies in [low, high].
// A dimension may be 0. Bounds may be infinite but not NaN, and low <= high.
// The error wraps ErrInvalid.
func NewBox(shape []int, low, high float32) (*Box, error) {
	n, err := shapeSize(shape, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: Box %v", ErrInvalid, err)
	}
	if err := checkBound(-1, low, high); err != nil {
		return nil, err
	}
	return &Box{shape: slices.Clone(shape), n: n, lo: []float32{low}, hi: []float32{high}, uniform: true}, nil
}

// NewBoxBounds returns the Box of the given shape whose element i lies in
// [low[i], high[i]]; low and high are row-major with one entry per element. Bounds may be
// infinite but not NaN, and low[i] <= high[i]. The Box keeps copies of the slices.
// The error wraps ErrInvalid.
func NewBoxBounds(shape []int, low, high []float32) (*Box, error) {
	n, err := shapeSize(shape, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: Box %v", ErrInvalid, err)
	}
	if len(low) != n || len(high) != n {
		return nil, fmt.Errorf("%w: Box shape %v has %d elements, got %d low and %d high bounds",
			ErrInvalid, shape, n, len(low), len(high))
	}
	for i := range n {
		if err := checkBound(i, low[i], high[i]); err != nil {
			return nil, err
		}
	}
	return &Box{shape: slices.Clone(shape), n: n, lo: slices.Clone(low), hi: slices.Clone(high)}, nil
}

func checkBound(i int, lo, hi float32) error {
	at := ""
	if i >= 0 {
		at = indexPath(i)
	}
	switch {
	case lo != lo:
		return fmt.Errorf("%w: Box low%s is NaN", ErrInvalid, at)
	case hi != hi:
		return fmt.Errorf("%w: Box high%s is NaN", ErrInvalid, at)
	case lo > hi:
		return fmt.Errorf("%w: Box low%s %s is above high%s %s", ErrInvalid, at, num(lo), at, num(hi))
	}
	return nil
}

// Shape returns a copy of the shape.
func (b *Box) Shape() []int { return slices.Clone(b.shape) }

// Low returns a new slice of the low bounds, one per element, row-major.
func (b *Box) Low() []float32 { return b.expand(b.lo) }

// High returns a new slice of the high bounds, one per element, row-major.
func (b *Box) High() []float32 { return b.expand(b.hi) }

func (b *Box) expand(bound []float32) []float32 {
	if !b.uniform {
		return slices.Clone(bound)
	}
	out := make([]float32, b.n)
	for i := range out {
		out[i] = bound[0]
	}
	return out
}

// Bounds returns the bounds of element i (row-major). It panics if i is not in
// [0, FlatDim()).
func (b *Box) Bounds(i int) (lo, hi float32) {
	if uint(i) >= uint(b.n) {
		panic(fmt.Sprintf("spaces: Box.Bounds index %d out of range [0, %d)", i, b.n))
	}
	if b.uniform {
		return b.lo[0], b.hi[0]
	}
	return b.lo[i], b.hi[i]
}

// Kind returns KindBox.
func (b *Box) Kind() Kind { return KindBox }

// FlatDim returns the number of elements.
func (b *Box) FlatDim() int { return b.n }

// CheckFloats returns nil if v has one element per element of the Box and each lies
// within its bounds (NaN never does), or a *ValueError naming the first index that does
// not and its bound. It does not allocate when v is a member.
func (b *Box) CheckFloats(v []float32) error {
	return withSpace(b.checkFloats(v), b)
}

func (b *Box) checkFloats(v []float32) *ValueError {
	if len(v) != b.n {
		return lengthMismatch("[]float32", b.n, len(v))
	}
	if b.uniform {
		lo, hi := b.lo[0], b.hi[0]
		for i, x := range v {
			if !(x >= lo && x <= hi) {
				return boundError(i, x, lo, hi)
			}
		}
		return nil
	}
	lo, hi := b.lo[:len(v)], b.hi[:len(v)]
	for i, x := range v {
		if !(x >= lo[i] && x <= hi[i]) {
			return boundError(i, x, lo[i], hi[i])
		}
	}
	return nil
}

func boundError(i int, x, lo, hi float32) *ValueError {
	switch {
	case x != x:
		return outside(indexPath(i), fmt.Sprintf("NaN is not within the bounds [%s, %s]", num(lo), num(hi)))
	case x < lo:
		return outside(indexPath(i), fmt.Sprintf("%s is below the low bound %s", num(x), num(lo)))
	}
	return outside(indexPath(i), fmt.Sprintf("%s is above the high bound %s", num(x), num(hi)))
}

// Check returns nil if v is a []float32 member, or a *ValueError. It does not allocate
// when v is a member.
func (b *Box) Check(v any) error {
	return withSpace(b.checkValue(v), b)
}

func (b *Box) checkValue(v any) *ValueError {
	x, ok := v.([]float32)
	if !ok {
		return typeMismatch("[]float32", v)
	}
	return b.checkFloats(x)
}

// Sample returns a new []float32 drawn as SampleTo draws it.
func (b *Box) Sample(rng *rand.Rand) any {
	dst := make([]float32, b.n)
	b.SampleTo(dst, rng)
	return dst
}

// SampleTo fills dst[:FlatDim()] with a random member, drawing each element as Gymnasium
// does: uniform in [low, high] when both bounds are finite, normal(0, 1) when neither is,
// low + exponential(1) when only low is, high - exponential(1) when only high is.
// It panics if len(dst) < FlatDim(). It does not allocate.
func (b *Box) SampleTo(dst []float32, rng *rand.Rand) {
	dst = dst[:b.n]
	if b.uniform {
		lo, hi := b.lo[0], b.hi[0]
		for i := range dst {
			dst[i] = sampleFloat(rng, lo, hi)
		}
		return
	}
	for i := range dst {
		dst[i] = sampleFloat(rng, b.lo[i], b.hi[i])
	}
}

func sampleFloat(rng *rand.Rand, lo, hi float32) float32 {
	below := !math.IsInf(float64(lo), -1) // bounded below
	above := !math.IsInf(float64(hi), 1)  // bounded above
	switch {
	case below && above:
		if lo == hi {
			return lo
		}
		x := float32(float64(lo) + rng.Float64()*(float64(hi)-float64(lo)))
		return min(max(x, lo), hi)
	case below:
		return float32(float64(lo) + rng.ExpFloat64())
	case above:
		return float32(float64(hi) - rng.ExpFloat64())
	}
	return float32(rng.NormFloat64())
}

// FlattenTo copies the []float32 v into dst[:FlatDim()]. It does not allocate when it
// succeeds.
func (b *Box) FlattenTo(dst []float32, v any) error {
	if len(dst) < b.n {
		return fmt.Errorf("%w: %v needs %d entries, dst has %d", ErrShortBuffer, b, b.n, len(dst))
	}
	return withSpace(b.flattenValue(dst[:b.n], v), b)
}

func (b *Box) flattenValue(dst []float32, v any) *ValueError {
	x, ok := v.([]float32)
	if !ok {
		return typeMismatch("[]float32", v)
	}
	if e := b.checkFloats(x); e != nil {
		return e
	}
	copy(dst, x)
	return nil
}

// Unflatten returns a copy of src as a []float32 after checking that it is a member.
func (b *Box) Unflatten(src []float32) (any, error) { return unflattenChecked(b, b, src) }

func (b *Box) unflattenValue(src []float32) (any, *ValueError) {
	if e := b.checkFloats(src); e != nil {
		return nil, e
	}
	return slices.Clone(src), nil
}

// Equal reports whether other is a *Box with the same shape and the same bounds for
// every element.
func (b *Box) Equal(other Space) bool {
	o, ok := other.(*Box)
	if !ok || o == nil || b == nil {
		return ok && o == b
	}
	if !slices.Equal(b.shape, o.shape) || b.n != o.n || (b.lo == nil) != (o.lo == nil) {
		return false
	}
	if b.uniform && o.uniform {
		return b.n == 0 || b.lo[0] == o.lo[0] && b.hi[0] == o.hi[0]
	}
	for i := range b.n {
		l1, h1 := b.Bounds(i)
		l2, h2 := o.Bounds(i)
		if l1 != l2 || h1 != h2 {
			return false
		}
	}
	return true
}

// String returns the Box as Gymnasium prints it: "Box(0.0, 1.0, (2, 3), float32)",
// with bounds that differ between elements printed as a list.
func (b *Box) String() string {
	return "Box(" + b.boundRepr(b.lo) + ", " + b.boundRepr(b.hi) + ", " + pyTuple(b.shape) + ", float32)"
}

func (b *Box) boundRepr(bound []float32) string {
	if b.n > 0 && (b.uniform || slices.Min(bound) == slices.Max(bound)) {
		return pyFloat(bound[0])
	}
	if b.uniform {
		return "[]"
	}
	var s strings.Builder
	s.WriteByte('[')
	write := func(i int) {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(pyFloat(bound[i]))
	}
	if b.n > 8 { // NumPy summarizes long arrays too; keep String short
		for i := range 3 {
			write(i)
		}
		s.WriteString(" ...")
		for i := b.n - 3; i < b.n; i++ {
			write(i)
		}
	} else {
		for i := range b.n {
			write(i)
		}
	}
	s.WriteByte(']')
	return s.String()
}

// MarshalJSON returns the spec
// {"type":"box","shape":[...],"dtype":"float32","low":[...],"high":[...]}, with one bound
// per element, row-major, and infinite bounds written as the strings "inf" and "-inf".
func (b *Box) MarshalJSON() ([]byte, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 64+16*b.n)
	buf = append(buf, `{"type":"box","shape":`...)
	buf = appendInts(buf, b.shape)
	buf = append(buf, `,"dtype":"float32","low":`...)
	buf = b.appendBounds(buf, b.lo)
	buf = append(buf, `,"high":`...)
	buf = b.appendBounds(buf, b.hi)
	return append(buf, '}'), nil
}

func (b *Box) appendBounds(buf []byte, bound []float32) []byte {
	buf = append(buf, '[')
	for i := range b.n {
		if i > 0 {
			buf = append(buf, ',')
		}
		x := bound[0]
		if !b.uniform {
			x = bound[i]
		}
		buf = appendJSONFloat(buf, x)
	}
	return append(buf, ']')
}

func appendJSONFloat(buf []byte, x float32) []byte {
	switch {
	case math.IsInf(float64(x), 1):
		return append(buf, `"inf"`...)
	case math.IsInf(float64(x), -1):
		return append(buf, `"-inf"`...)
	}
	return strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
}

func appendInts[T int | int64](buf []byte, xs []T) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(x), 10)
	}
	return append(buf, ']')
}

func (b *Box) validate() error {
	if b == nil || b.lo == nil {
		return fmt.Errorf("%w: Box not made by NewBox or NewBoxBounds", ErrInvalid)
	}
	return nil
}

func (b *Box) depth() int { return 1 }
