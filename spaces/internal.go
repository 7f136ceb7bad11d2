package spaces

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits on the spaces this package builds. Constructors and Unmarshal reject larger ones,
// so that a short JSON spec can never ask for a huge allocation.
const (
	// MaxFlatDim is the largest FlatDim of any space, nested ones included.
	MaxFlatDim = 1 << 26
	// MaxDepth is the deepest nesting of spaces: a Discrete has depth 1, a Dict holding it 2.
	MaxDepth = 32
	// MaxRank is the most dimensions a Box or MultiBinary shape may have (NumPy 1.x's limit).
	MaxRank = 32
)

// inner is implemented by every space of this package. Dict and Tuple use it to check,
// flatten and unflatten their elements without building error messages twice; for a Space
// written elsewhere they fall back to its public methods.
type inner interface {
	// checkValue is Check without the Space in the error.
	checkValue(v any) *ValueError
	// flattenValue is FlattenTo for a dst of length FlatDim exactly.
	flattenValue(dst []float32, v any) *ValueError
	// unflattenValue is Unflatten for a src of length FlatDim exactly.
	unflattenValue(src []float32) (any, *ValueError)
	// validate reports whether the space was built by its constructor (or, for Discrete,
	// has valid fields).
	validate() error
	// depth is 1 for a leaf space, 1 + the deepest element for Dict and Tuple.
	depth() int
}

// asInner returns s as an inner if its dynamic type is one of this package's spaces. It
// matches concrete types rather than asserting inner, since a type elsewhere that embeds
// one of ours (to override Check, say) has the inner methods promoted but must be
// treated through its public methods.
func asInner(s Space) (inner, bool) {
	switch x := s.(type) {
	case Discrete:
		return x, true
	case *Discrete:
		if x == nil {
			return Discrete{}, true // invalid: validate reports it
		}
		return *x, true
	case *Box:
		return x, true
	case *MultiDiscrete:
		return x, true
	case *MultiBinary:
		return x, true
	case *Dict:
		return x, true
	case *Tuple:
		return x, true
	case *Text:
		return x, true
	}
	return nil, false
}

func checkSub(s Space, v any) *ValueError {
	if in, ok := asInner(s); ok {
		return in.checkValue(v)
	}
	return fromError(s.Check(v))
}

func flattenSub(s Space, dst []float32, v any) *ValueError {
	if in, ok := asInner(s); ok {
		return in.flattenValue(dst, v)
	}
	return fromError(s.FlattenTo(dst, v))
}

func unflattenSub(s Space, src []float32) (any, *ValueError) {
	if in, ok := asInner(s); ok {
		return in.unflattenValue(src)
	}
	v, err := s.Unflatten(src)
	return v, fromError(err)
}

func depthOf(s Space) int {
	if in, ok := asInner(s); ok {
		return in.depth()
	}
	return 1
}

// validateSub checks an element of a Dict or Tuple.
func validateSub(s Space) error {
	if s == nil {
		return fmt.Errorf("%w: nil space", ErrInvalid)
	}
	if in, ok := asInner(s); ok {
		return in.validate()
	}
	if d := s.FlatDim(); d < 0 || d > MaxFlatDim {
		return fmt.Errorf("%w: %v has FlatDim %d, want 0 to %d", ErrInvalid, s, d, MaxFlatDim)
	}
	return nil
}

// flattenChecked is the body of every FlattenTo: it checks the length of dst, then
// flattens into dst[:dim].
func flattenChecked(s Space, in inner, dst []float32, v any) error {
	dim := s.FlatDim()
	if len(dst) < dim {
		return fmt.Errorf("%w: %v needs %d entries, dst has %d", ErrShortBuffer, s, dim, len(dst))
	}
	return withSpace(in.flattenValue(dst[:dim], v), s)
}

// unflattenChecked is the body of every Unflatten: it checks the length of src.
func unflattenChecked(s Space, in inner, src []float32) (any, error) {
	if dim := s.FlatDim(); len(src) != dim {
		return nil, withSpace(outside("", fmt.Sprintf("want %d flat entries, got %d", dim, len(src))), s)
	}
	v, e := in.unflattenValue(src)
	if e != nil {
		return nil, withSpace(e, s)
	}
	return v, nil
}

// shapeSize returns the number of elements of a shape, or an error for a negative
// dimension, too many dimensions, or more than MaxFlatDim elements. minDim is the smallest
// allowed dimension (0 for Box, 1 for MultiBinary).
func shapeSize(shape []int, minDim int) (int, error) {
	if len(shape) > MaxRank {
		return 0, fmt.Errorf("shape has %d dimensions, want at most %d", len(shape), MaxRank)
	}
	n := 1
	for i, d := range shape {
		if d < minDim {
			return 0, fmt.Errorf("shape[%d] is %d, want >= %d", i, d, minDim)
		}
		if d > MaxFlatDim {
			return 0, fmt.Errorf("shape[%d] is %d, want <= %d", i, d, MaxFlatDim)
		}
	}
	for _, d := range shape {
		n *= d // each factor and partial product is <= MaxFlatDim, so this cannot overflow
		if n > MaxFlatDim {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, MaxFlatDim)
		}
	}
	return n, nil
}

// num formats a bound or a value for a Reason: shortest float32 digits, "inf", "-inf".
func num(x float32) string {
	switch {
	case math.IsInf(float64(x), 1):
		return "inf"
	case math.IsInf(float64(x), -1):
		return "-inf"
	}
	return strconv.FormatFloat(float64(x), 'g', -1, 32)
}

// pyFloat formats a float32 as NumPy prints a float32 scalar: "0.0", "1.5", "1e+20", "inf".
func pyFloat(x float32) string {
	f := float64(x)
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 32)
	}
	s := strconv.FormatFloat(f, 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyTuple formats a shape as Python prints a tuple: "()", "(5,)", "(2, 3)".
func pyTuple(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// typeMismatch is the Reason for a value of the wrong Go type.
func typeMismatch(want string, v any) *ValueError {
	return outside("", fmt.Sprintf("want %s, got %T", want, v))
}

// lengthMismatch is the Reason for a slice of the wrong length.
func lengthMismatch(want string, n, got int) *ValueError {
	return outside("", fmt.Sprintf("want %s of length %d, got %d", want, n, got))
}
