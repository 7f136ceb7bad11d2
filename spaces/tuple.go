package spaces

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
)

// Tuple is a set of fixed-length sequences whose element i is a member of space i, as
// Gymnasium's Tuple. Its values are []any with one value per element space.
//
// Create it with NewTuple; the zero Tuple has no elements and only the empty slice as a
// member. A Tuple is immutable and safe for concurrent use if its element spaces are.
//
// Its flat encoding is the concatenation of the flat encodings of its values.
type Tuple struct {
	elems []Space
	offs  []int
	dim   int
	dep   int
}

var _ Space = (*Tuple)(nil)

// NewTuple returns the Tuple of the given spaces. Spaces must be non-nil and valid (a
// Discrete must pass Validate), the nesting at most MaxDepth deep and the total FlatDim
// at most MaxFlatDim. It reports every problem at once, in an error wrapping ErrInvalid.
func NewTuple(elems ...Space) (*Tuple, error) {
	t := &Tuple{elems: slices.Clone(elems), offs: make([]int, len(elems))}
	var errs []error
	for i, s := range elems {
		if err := validateSub(s); err != nil {
			errs = append(errs, fmt.Errorf("%w (Tuple element %d)", err, i))
			continue
		}
		t.offs[i] = t.dim
		t.dim += s.FlatDim()
		t.dep = max(t.dep, depthOf(s))
	}
	t.dep++
	errs = append(errs, checkComposite("Tuple", t.dim, t.dep))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// Len returns the number of elements.
func (t *Tuple) Len() int { return len(t.elems) }

// At returns the space of element i. It panics if i is out of range.
func (t *Tuple) At(i int) Space { return t.elems[i] }

// All yields the index and space of each element in order.
func (t *Tuple) All() iter.Seq2[int, Space] { return slices.All(t.elems) }

// Kind returns KindTuple.
func (t *Tuple) Kind() Kind { return KindTuple }

// FlatDim returns the sum of the FlatDims of the element spaces.
func (t *Tuple) FlatDim() int { return t.dim }

// Check returns nil if v is a []any of length Len whose element i is a member of space i,
// or a *ValueError whose Path starts with the offending index.
func (t *Tuple) Check(v any) error { return withSpace(t.checkValue(v), t) }

func (t *Tuple) sliceOf(v any) ([]any, *ValueError) {
	x, ok := v.([]any)
	if !ok {
		return nil, typeMismatch("[]any", v)
	}
	if len(x) != len(t.elems) {
		return nil, lengthMismatch("[]any", len(t.elems), len(x))
	}
	return x, nil
}

func (t *Tuple) checkValue(v any) *ValueError {
	x, e := t.sliceOf(v)
	if e != nil {
		return e
	}
	for i, s := range t.elems {
		if e := checkSub(s, x[i]); e != nil {
			return prefixIndex(e, i)
		}
	}
	return nil
}

// Sample returns a new []any holding a sample of each element space.
func (t *Tuple) Sample(rng *rand.Rand) any {
	out := make([]any, len(t.elems))
	for i, s := range t.elems {
		out[i] = s.Sample(rng)
	}
	return out
}

// FlattenTo writes the flat encodings of v's elements, in order, into dst[:FlatDim()].
func (t *Tuple) FlattenTo(dst []float32, v any) error { return flattenChecked(t, t, dst, v) }

func (t *Tuple) flattenValue(dst []float32, v any) *ValueError {
	x, e := t.sliceOf(v)
	if e != nil {
		return e
	}
	for i, s := range t.elems {
		if e := flattenSub(s, dst[t.offs[i]:t.offs[i]+s.FlatDim()], x[i]); e != nil {
			return prefixIndex(e, i)
		}
	}
	return nil
}

// Unflatten decodes each element's block of src into a new []any.
func (t *Tuple) Unflatten(src []float32) (any, error) { return unflattenChecked(t, t, src) }

func (t *Tuple) unflattenValue(src []float32) (any, *ValueError) {
	out := make([]any, len(t.elems))
	for i, s := range t.elems {
		v, e := unflattenSub(s, src[t.offs[i]:t.offs[i]+s.FlatDim()])
		if e != nil {
			return nil, prefixIndex(e, i)
		}
		out[i] = v
	}
	return out, nil
}

// Equal reports whether other is a *Tuple of the same length with Equal element spaces.
func (t *Tuple) Equal(other Space) bool {
	o, ok := other.(*Tuple)
	if !ok || o == nil || t == nil {
		return ok && o == t
	}
	return slices.EqualFunc(t.elems, o.elems, func(a, b Space) bool { return a.Equal(b) })
}

// String returns the space as Gymnasium prints it: "Tuple(Discrete(2), Discrete(3))".
func (t *Tuple) String() string {
	var s strings.Builder
	s.WriteString("Tuple(")
	for i, e := range t.elems {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(e.String())
	}
	s.WriteByte(')')
	return s.String()
}

// MarshalJSON returns the spec {"type":"tuple","spaces":[S, ...]}.
func (t *Tuple) MarshalJSON() ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	b := append([]byte(nil), `{"type":"tuple","spaces":[`...)
	for i, s := range t.elems {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendSpec(b, s); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}

func (t *Tuple) validate() error {
	if t == nil {
		return fmt.Errorf("%w: nil *Tuple", ErrInvalid)
	}
	return nil
}

func (t *Tuple) depth() int { return max(t.dep, 1) }
