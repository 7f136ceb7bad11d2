package spaces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Discrete is the set of integers {Start, Start+1, ..., Start+N-1}, as Gymnasium's
// Discrete(n, start=start). Its values are int64 (int is accepted on input).
//
// Discrete is a small value type: write it as a literal, Discrete{N: 4}, and call
// Validate where N comes from input. Its methods assume Validate returns nil (N >= 1);
// Sample and SampleMasked panic otherwise. A Discrete is safe for concurrent use.
//
// Its flat encoding is a one-hot vector of length N with the 1 at index v-Start.
type Discrete struct {
	// N is the number of values, >= 1.
	N int64
	// Start is the smallest value.
	Start int64
}

var _ Space = Discrete{}

// Validate returns an error wrapping ErrInvalid unless 1 <= N <= MaxFlatDim and
// Start+N-1 does not overflow int64.
func (d Discrete) Validate() error {
	switch {
	case d.N < 1:
		return fmt.Errorf("%w: Discrete n is %d, want >= 1", ErrInvalid, d.N)
	case d.N > MaxFlatDim:
		return fmt.Errorf("%w: Discrete n is %d, want <= %d", ErrInvalid, d.N, MaxFlatDim)
	case d.Start > math.MaxInt64-(d.N-1):
		return fmt.Errorf("%w: Discrete start %d + n %d overflows int64", ErrInvalid, d.Start, d.N)
	}
	return nil
}

// Kind returns KindDiscrete.
func (d Discrete) Kind() Kind { return KindDiscrete }

// FlatDim returns N.
func (d Discrete) FlatDim() int { return int(d.N) }

// Contains reports whether v is in the space. It does not allocate.
func (d Discrete) Contains(v int64) bool {
	return v >= d.Start && uint64(v)-uint64(d.Start) < uint64(d.N)
}

// CheckInt returns nil if v is in the space, or a *ValueError naming the bound v is
// outside. It does not allocate when v is in the space.
func (d Discrete) CheckInt(v int64) error {
	if e := d.checkInt(v); e != nil {
		e.Space = d
		return e
	}
	return nil
}

// Check returns nil if v is an int64 or int in the space, or a *ValueError.
// It does not allocate when v is in the space.
func (d Discrete) Check(v any) error {
	if e := d.checkValue(v); e != nil {
		e.Space = d
		return e
	}
	return nil
}

func (d Discrete) checkInt(v int64) *ValueError {
	if d.Contains(v) {
		return nil
	}
	if v < d.Start {
		return outside("", fmt.Sprintf("%d is below the low bound %d", v, d.Start))
	}
	return outside("", fmt.Sprintf("%d is above the high bound %d", v, d.Start+d.N-1))
}

func (d Discrete) intOf(v any) (int64, *ValueError) {
	switch x := v.(type) {
	case int64:
		return x, d.checkInt(x)
	case int:
		return int64(x), d.checkInt(int64(x))
	}
	return 0, typeMismatch("int64", v)
}

func (d Discrete) checkValue(v any) *ValueError {
	_, e := d.intOf(v)
	return e
}

// Sample returns a uniformly random member, as an int64.
func (d Discrete) Sample(rng *rand.Rand) any {
	return d.Start + rng.Int64N(d.N)
}

// SampleMasked returns a member drawn uniformly from those allowed by mask: mask[i]
// allows the value Start+i. It returns an error wrapping ErrMaskLength if len(mask) != N
// and ErrEmptyMask if no entry is true. It does not allocate when it succeeds.
func (d Discrete) SampleMasked(rng *rand.Rand, mask []bool) (int64, error) {
	if int64(len(mask)) != d.N {
		return 0, fmt.Errorf("%w: mask has %d entries, %v has %d values", ErrMaskLength, len(mask), d, d.N)
	}
	allowed := 0
	for _, m := range mask {
		if m {
			allowed++
		}
	}
	if allowed == 0 {
		return 0, ErrEmptyMask
	}
	r := rng.IntN(allowed)
	for i, m := range mask {
		if !m {
			continue
		}
		if r == 0 {
			return d.Start + int64(i), nil
		}
		r--
	}
	panic("spaces: internal error: SampleMasked ran past the mask")
}

// FlattenTo writes the one-hot encoding of v into dst[:N]. It does not allocate when it
// succeeds.
func (d Discrete) FlattenTo(dst []float32, v any) error {
	if int64(len(dst)) < d.N {
		return fmt.Errorf("%w: %v needs %d entries, dst has %d", ErrShortBuffer, d, d.N, len(dst))
	}
	if e := d.flattenValue(dst[:d.N], v); e != nil {
		e.Space = d
		return e
	}
	return nil
}

func (d Discrete) flattenValue(dst []float32, v any) *ValueError {
	x, e := d.intOf(v)
	if e != nil {
		return e
	}
	clear(dst)
	dst[x-d.Start] = 1
	return nil
}

// Unflatten decodes a one-hot vector of length N into an int64. Every entry must be 0
// or 1, and exactly one must be 1.
func (d Discrete) Unflatten(src []float32) (any, error) {
	if int64(len(src)) != d.N {
		return nil, &ValueError{Space: d, Reason: fmt.Sprintf("want %d flat entries, got %d", d.N, len(src))}
	}
	v, e := d.unflattenValue(src)
	if e != nil {
		e.Space = d
		return nil, e
	}
	return v, nil
}

func (d Discrete) unflattenValue(src []float32) (any, *ValueError) {
	i, e := oneHot(src)
	if e != nil {
		return nil, e
	}
	return d.Start + int64(i), nil
}

// oneHot returns the index of the single 1 in src, or an error if src is not one-hot.
func oneHot(src []float32) (int, *ValueError) {
	idx := -1
	for i, x := range src {
		switch x {
		case 0:
		case 1:
			if idx >= 0 {
				return 0, outside("", fmt.Sprintf("flat entries %d and %d are both 1, want one-hot", idx, i))
			}
			idx = i
		default:
			return 0, outside("", fmt.Sprintf("flat entry %d is %s, want 0 or 1 (one-hot)", i, num(x)))
		}
	}
	if idx < 0 {
		return 0, outside("", "no flat entry is 1, want one-hot")
	}
	return idx, nil
}

// Equal reports whether other is a Discrete (or *Discrete) with the same N and Start.
func (d Discrete) Equal(other Space) bool {
	switch o := other.(type) {
	case Discrete:
		return d == o
	case *Discrete:
		return o != nil && d == *o
	}
	return false
}

// String returns "Discrete(N)", or "Discrete(N, start=S)" when Start is not 0.
func (d Discrete) String() string {
	if d.Start == 0 {
		return "Discrete(" + strconv.FormatInt(d.N, 10) + ")"
	}
	return "Discrete(" + strconv.FormatInt(d.N, 10) + ", start=" + strconv.FormatInt(d.Start, 10) + ")"
}

// MarshalJSON returns the spec {"type":"discrete","n":N,"start":S}.
func (d Discrete) MarshalJSON() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	b := []byte(`{"type":"discrete","n":`)
	b = strconv.AppendInt(b, d.N, 10)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, d.Start, 10)
	return append(b, '}'), nil
}

func (d Discrete) validate() error { return d.Validate() }
func (d Discrete) depth() int      { return 1 }
