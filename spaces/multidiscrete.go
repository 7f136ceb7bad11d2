package spaces

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// MultiDiscrete is a set of int64 vectors whose entry i lies in [0, Nvec[i]), as
// Gymnasium's MultiDiscrete(nvec) with a one-dimensional nvec. Its values are []int64 of
// length len(Nvec).
//
// Create it with NewMultiDiscrete; the zero MultiDiscrete has an empty Nvec and only the
// empty vector as a member. A MultiDiscrete is immutable and safe for concurrent use.
//
// Its flat encoding is the concatenation of a one-hot vector of length Nvec[i] for each
// entry, sum(Nvec) in all.
type MultiDiscrete struct {
	nvec []int64
	dim  int
}

var _ Space = (*MultiDiscrete)(nil)

// NewMultiDiscrete returns the MultiDiscrete whose entry i takes Nvec[i] values. Every
// entry of nvec must be >= 1, and their sum at most MaxFlatDim. It keeps a copy of nvec.
// The error wraps ErrInvalid.
func NewMultiDiscrete(nvec []int64) (*MultiDiscrete, error) {
	dim := 0
	for i, n := range nvec {
		if n < 1 {
			return nil, fmt.Errorf("%w: MultiDiscrete nvec[%d] is %d, want >= 1", ErrInvalid, i, n)
		}
		if n > MaxFlatDim || dim+int(n) > MaxFlatDim {
			return nil, fmt.Errorf("%w: MultiDiscrete nvec sums to more than %d", ErrInvalid, MaxFlatDim)
		}
		dim += int(n)
	}
	return &MultiDiscrete{nvec: slices.Clone(nvec), dim: dim}, nil
}

// Nvec returns a copy of the number of values of each entry.
func (m *MultiDiscrete) Nvec() []int64 { return slices.Clone(m.nvec) }

// Kind returns KindMultiDiscrete.
func (m *MultiDiscrete) Kind() Kind { return KindMultiDiscrete }

// FlatDim returns the sum of Nvec.
func (m *MultiDiscrete) FlatDim() int { return m.dim }

// CheckInts returns nil if v has len(Nvec) entries and 0 <= v[i] < Nvec[i] for each, or a
// *ValueError naming the first index that is not. It does not allocate when v is a member.
func (m *MultiDiscrete) CheckInts(v []int64) error {
	return withSpace(m.checkInts(v), m)
}

func (m *MultiDiscrete) checkInts(v []int64) *ValueError {
	if len(v) != len(m.nvec) {
		return lengthMismatch("[]int64", len(m.nvec), len(v))
	}
	nvec := m.nvec[:len(v)]
	for i, x := range v {
		if x < 0 {
			return outside(indexPath(i), fmt.Sprintf("%d is below the low bound 0", x))
		}
		if x >= nvec[i] {
			return outside(indexPath(i), fmt.Sprintf("%d is above the high bound %d", x, nvec[i]-1))
		}
	}
	return nil
}

// Check returns nil if v is a []int64 member, or a *ValueError. It does not allocate when
// v is a member.
func (m *MultiDiscrete) Check(v any) error {
	return withSpace(m.checkValue(v), m)
}

func (m *MultiDiscrete) checkValue(v any) *ValueError {
	x, ok := v.([]int64)
	if !ok {
		return typeMismatch("[]int64", v)
	}
	return m.checkInts(x)
}

// Sample returns a new []int64 drawn as SampleTo draws it.
func (m *MultiDiscrete) Sample(rng *rand.Rand) any {
	dst := make([]int64, len(m.nvec))
	m.SampleTo(dst, rng)
	return dst
}

// SampleTo fills dst[:len(Nvec)] with a uniformly random member. It panics if dst is
// shorter. It does not allocate.
func (m *MultiDiscrete) SampleTo(dst []int64, rng *rand.Rand) {
	dst = dst[:len(m.nvec)]
	for i, n := range m.nvec {
		dst[i] = rng.Int64N(n)
	}
}

// FlattenTo writes the concatenated one-hot encoding of the []int64 v into
// dst[:FlatDim()]. It does not allocate when it succeeds.
func (m *MultiDiscrete) FlattenTo(dst []float32, v any) error {
	if len(dst) < m.dim {
		return fmt.Errorf("%w: %v needs %d entries, dst has %d", ErrShortBuffer, m, m.dim, len(dst))
	}
	return withSpace(m.flattenValue(dst[:m.dim], v), m)
}

func (m *MultiDiscrete) flattenValue(dst []float32, v any) *ValueError {
	x, ok := v.([]int64)
	if !ok {
		return typeMismatch("[]int64", v)
	}
	if e := m.checkInts(x); e != nil {
		return e
	}
	clear(dst)
	off := 0
	for i, n := range m.nvec {
		dst[off+int(x[i])] = 1
		off += int(n)
	}
	return nil
}

// Unflatten decodes concatenated one-hot vectors into a []int64.
func (m *MultiDiscrete) Unflatten(src []float32) (any, error) { return unflattenChecked(m, m, src) }

func (m *MultiDiscrete) unflattenValue(src []float32) (any, *ValueError) {
	out := make([]int64, len(m.nvec))
	off := 0
	for i, n := range m.nvec {
		j, e := oneHot(src[off : off+int(n)])
		if e != nil {
			return nil, prefixIndex(e, i)
		}
		out[i] = int64(j)
		off += int(n)
	}
	return out, nil
}

// Equal reports whether other is a *MultiDiscrete with the same Nvec.
func (m *MultiDiscrete) Equal(other Space) bool {
	o, ok := other.(*MultiDiscrete)
	if !ok || o == nil || m == nil {
		return ok && o == m
	}
	return slices.Equal(m.nvec, o.nvec)
}

// String returns the space as Gymnasium prints it: "MultiDiscrete([3 4])".
func (m *MultiDiscrete) String() string {
	var s strings.Builder
	s.WriteString("MultiDiscrete([")
	for i, n := range m.nvec {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(strconv.FormatInt(n, 10))
	}
	s.WriteString("])")
	return s.String()
}

// MarshalJSON returns the spec {"type":"multi_discrete","nvec":[...]}.
func (m *MultiDiscrete) MarshalJSON() ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	b := append([]byte(nil), `{"type":"multi_discrete","nvec":`...)
	b = appendInts(b, m.nvec)
	return append(b, '}'), nil
}

func (m *MultiDiscrete) validate() error {
	if m == nil {
		return fmt.Errorf("%w: nil *MultiDiscrete", ErrInvalid)
	}
	return nil
}

func (m *MultiDiscrete) depth() int { return 1 }
