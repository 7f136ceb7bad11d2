package spaces

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
)

// DictEntry is one key of a Dict and the space of its values.
type DictEntry struct {
	Key   string
	Space Space
}

// Dict is a set of maps holding one value for each of a fixed, ordered list of keys, as
// Gymnasium's Dict. Its values are map[string]any with exactly the space's keys.
//
// Create it with NewDict; the zero Dict has no keys and only the empty map as a member.
// A Dict is immutable and safe for concurrent use if its element spaces are.
//
// Its flat encoding is the concatenation of the flat encodings of its values in key order
// (the order given to NewDict). Gymnasium sorts the keys of a Python dict passed to
// spaces.Dict; build it from a list of (key, space) pairs to keep this order.
type Dict struct {
	entries []DictEntry
	index   map[string]int
	offs    []int // offs[i] is where entry i starts in the flat encoding
	dim     int
	dep     int
}

var _ Space = (*Dict)(nil)

// NewDict returns the Dict of the given entries, in the given order. Keys must be
// non-empty and distinct, spaces non-nil and valid (a Discrete must pass Validate), the
// nesting at most MaxDepth deep and the total FlatDim at most MaxFlatDim. It reports every
// problem at once, in an error wrapping ErrInvalid.
func NewDict(entries ...DictEntry) (*Dict, error) {
	d := &Dict{
		entries: slices.Clone(entries),
		index:   make(map[string]int, len(entries)),
		offs:    make([]int, len(entries)),
	}
	var errs []error
	for i, e := range entries {
		if e.Key == "" {
			errs = append(errs, fmt.Errorf("%w: Dict entry %d has an empty key", ErrInvalid, i))
		} else if j, dup := d.index[e.Key]; dup {
			errs = append(errs, fmt.Errorf("%w: Dict key %q appears at %d and %d", ErrInvalid, e.Key, j, i))
		} else {
			d.index[e.Key] = i
		}
		if err := validateSub(e.Space); err != nil {
			errs = append(errs, fmt.Errorf("%w (Dict key %q)", err, e.Key))
			continue
		}
		d.offs[i] = d.dim
		d.dim += e.Space.FlatDim()
		d.dep = max(d.dep, depthOf(e.Space))
	}
	d.dep++
	errs = append(errs, checkComposite("Dict", d.dim, d.dep))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// checkComposite checks the size and depth of a Dict or Tuple.
func checkComposite(kind string, dim, depth int) error {
	switch {
	case dim > MaxFlatDim:
		return fmt.Errorf("%w: %s FlatDim %d is above %d", ErrInvalid, kind, dim, MaxFlatDim)
	case depth > MaxDepth:
		return fmt.Errorf("%w: %s nests %d deep, more than %d", ErrInvalid, kind, depth, MaxDepth)
	}
	return nil
}

// Keys returns the keys in order, in a new slice.
func (d *Dict) Keys() []string {
	keys := make([]string, len(d.entries))
	for i, e := range d.entries {
		keys[i] = e.Key
	}
	return keys
}

// Get returns the space of key, and whether the Dict has that key.
func (d *Dict) Get(key string) (Space, bool) {
	i, ok := d.index[key]
	if !ok {
		return nil, false
	}
	return d.entries[i].Space, true
}

// Len returns the number of keys.
func (d *Dict) Len() int { return len(d.entries) }

// All yields the keys and their spaces in order.
func (d *Dict) All() iter.Seq2[string, Space] {
	return func(yield func(string, Space) bool) {
		for _, e := range d.entries {
			if !yield(e.Key, e.Space) {
				return
			}
		}
	}
}

// Kind returns KindDict.
func (d *Dict) Kind() Kind { return KindDict }

// FlatDim returns the sum of the FlatDims of the element spaces.
func (d *Dict) FlatDim() int { return d.dim }

// Check returns nil if v is a map[string]any with exactly the Dict's keys, each holding a
// member of its space, or a *ValueError whose Path starts with the offending key.
func (d *Dict) Check(v any) error { return withSpace(d.checkValue(v), d) }

func (d *Dict) checkValue(v any) *ValueError {
	m, e := d.mapOf(v)
	if e != nil {
		return e
	}
	for _, en := range d.entries {
		if e := checkSub(en.Space, m[en.Key]); e != nil {
			return prefixKey(e, en.Key)
		}
	}
	return nil
}

// mapOf checks the type and the keys of v.
func (d *Dict) mapOf(v any) (map[string]any, *ValueError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, typeMismatch("map[string]any", v)
	}
	for _, en := range d.entries {
		if _, ok := m[en.Key]; !ok {
			return nil, outside("."+en.Key, "missing key")
		}
	}
	if len(m) != len(d.entries) {
		var extra []string
		for k := range m {
			if _, ok := d.index[k]; !ok {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		return nil, outside("."+extra[0], fmt.Sprintf("key %q is not in the space", extra[0]))
	}
	return m, nil
}

// Sample returns a new map holding a sample of each element space.
func (d *Dict) Sample(rng *rand.Rand) any {
	m := make(map[string]any, len(d.entries))
	for _, e := range d.entries {
		m[e.Key] = e.Space.Sample(rng)
	}
	return m
}

// FlattenTo writes the flat encodings of v's values, in key order, into dst[:FlatDim()].
func (d *Dict) FlattenTo(dst []float32, v any) error { return flattenChecked(d, d, dst, v) }

func (d *Dict) flattenValue(dst []float32, v any) *ValueError {
	m, e := d.mapOf(v)
	if e != nil {
		return e
	}
	for i, en := range d.entries {
		if e := flattenSub(en.Space, dst[d.offs[i]:d.offs[i]+en.Space.FlatDim()], m[en.Key]); e != nil {
			return prefixKey(e, en.Key)
		}
	}
	return nil
}

// Unflatten decodes each key's block of src into a new map.
func (d *Dict) Unflatten(src []float32) (any, error) { return unflattenChecked(d, d, src) }

func (d *Dict) unflattenValue(src []float32) (any, *ValueError) {
	m := make(map[string]any, len(d.entries))
	for i, en := range d.entries {
		v, e := unflattenSub(en.Space, src[d.offs[i]:d.offs[i]+en.Space.FlatDim()])
		if e != nil {
			return nil, prefixKey(e, en.Key)
		}
		m[en.Key] = v
	}
	return m, nil
}

// Equal reports whether other is a *Dict with the same keys in the same order and
// Equal spaces for each.
func (d *Dict) Equal(other Space) bool {
	o, ok := other.(*Dict)
	if !ok || o == nil || d == nil {
		return ok && o == d
	}
	if len(d.entries) != len(o.entries) {
		return false
	}
	for i, e := range d.entries {
		if e.Key != o.entries[i].Key || !e.Space.Equal(o.entries[i].Space) {
			return false
		}
	}
	return true
}

// String returns the space as Gymnasium prints it: "Dict('pos': Box(...), 'n': Discrete(3))".
func (d *Dict) String() string {
	var s strings.Builder
	s.WriteString("Dict(")
	for i, e := range d.entries {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString("'" + e.Key + "': " + e.Space.String())
	}
	s.WriteByte(')')
	return s.String()
}

// MarshalJSON returns the spec {"type":"dict","spaces":[{"key":K,"space":S}, ...]}, an
// array so that the order of the keys is kept.
func (d *Dict) MarshalJSON() ([]byte, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	b := append([]byte(nil), `{"type":"dict","spaces":[`...)
	for i, e := range d.entries {
		if i > 0 {
			b = append(b, ',')
		}
		key, err := json.Marshal(e.Key)
		if err != nil {
			return nil, err
		}
		b = append(b, `{"key":`...)
		b = append(b, key...)
		b = append(b, `,"space":`...)
		if b, err = appendSpec(b, e.Space); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// appendSpec appends the JSON spec of an element space. A Space written elsewhere goes
// through encoding/json, which checks that its MarshalJSON wrote valid JSON.
func appendSpec(b []byte, s Space) ([]byte, error) {
	var spec []byte
	var err error
	if _, ok := asInner(s); ok {
		spec, err = s.MarshalJSON()
	} else {
		spec, err = json.Marshal(s)
	}
	if err != nil {
		return nil, err
	}
	return append(b, spec...), nil
}

func (d *Dict) validate() error {
	if d == nil {
		return fmt.Errorf("%w: nil *Dict", ErrInvalid)
	}
	return nil
}

func (d *Dict) depth() int { return max(d.dep, 1) }
