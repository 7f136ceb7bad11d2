package spaces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Marshal returns the JSON spec of s (see the package documentation for the format).
// A space of this package always marshals; Unmarshal of the result returns an Equal space.
func Marshal(s Space) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil space", ErrInvalid)
	}
	if in, ok := asInner(s); ok {
		if err := in.validate(); err != nil {
			return nil, err
		}
		return s.MarshalJSON()
	}
	return json.Marshal(s)
}

// Unmarshal builds the space a JSON spec describes (see the package documentation for the
// format). It rejects, with a *SpecError wrapping ErrSpec, anything else: malformed JSON,
// trailing data, unknown types, unknown or repeated fields (names are case-sensitive),
// missing required fields, values of the wrong JSON type and invalid parameters, including
// spaces nested deeper than MaxDepth or with a FlatDim above MaxFlatDim. Its memory use is
// bounded by a small multiple of len(data).
func Unmarshal(data []byte) (Space, error) {
	s, e := decodeSpace(data, "", 1)
	if e != nil {
		return nil, e
	}
	return s, nil
}

func specErr(path, format string, args ...any) *SpecError {
	return &SpecError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// invalidErr turns a constructor's error into a SpecError.
func invalidErr(path string, err error) *SpecError {
	msg := strings.ReplaceAll(err.Error(), ErrInvalid.Error()+": ", "")
	return &SpecError{Path: path, Reason: strings.ReplaceAll(msg, "\n", "; ")}
}

// object is a parsed JSON object: its fields by name, each with the path to it.
type object struct {
	path   string
	fields map[string]json.RawMessage
}

// parseObject parses data as exactly one JSON object, rejecting repeated names.
func parseObject(data []byte, path string) (*object, *SpecError) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxErr(path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, specErr(path, "want a JSON object, got %s", describeToken(tok))
	}
	o := &object{path: path, fields: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxErr(path, err)
		}
		name, _ := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxErr(path+"."+name, err)
		}
		if _, dup := o.fields[name]; dup {
			return nil, specErr(path, "field %q appears twice", name)
		}
		o.fields[name] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, syntaxErr(path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, specErr(path, "data after the JSON object")
	}
	return o, nil
}

func syntaxErr(path string, err error) *SpecError {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return specErr(path, "unexpected end of JSON")
	}
	return specErr(path, "malformed JSON: %v", err)
}

func describeToken(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "an array"
		}
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// only rejects fields other than the allowed ones and requires the required ones. A
// field name is required if it does not end in "?".
func (o *object) only(names ...string) *SpecError {
	for name := range o.fields {
		known := false
		for _, n := range names {
			if strings.TrimSuffix(n, "?") == name {
				known = true
				break
			}
		}
		if !known {
			return specErr(o.path, "unknown field %q", name)
		}
	}
	for _, n := range names {
		if strings.HasSuffix(n, "?") {
			continue
		}
		if _, ok := o.fields[n]; !ok {
			return specErr(o.path, "missing required field %q", n)
		}
	}
	return nil
}

func (o *object) int(name string, lo, hi int64) (int64, *SpecError) {
	return parseInt(o.fields[name], o.path+"."+name, lo, hi)
}

func parseInt(raw json.RawMessage, path string, lo, hi int64) (int64, *SpecError) {
	x, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		if isNumber(raw) {
			return 0, specErr(path, "want an integer from %d to %d, got %s", lo, hi, raw)
		}
		return 0, specErr(path, "want an integer, got %s", describeRaw(raw))
	}
	if x < lo || x > hi {
		return 0, specErr(path, "%d is out of range, want %d to %d", x, lo, hi)
	}
	return x, nil
}

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

func describeRaw(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}

func (o *object) string(name string) (string, *SpecError) {
	raw, path := o.fields[name], o.path+"."+name
	var s string
	if len(raw) == 0 || raw[0] != '"' {
		return "", specErr(path, "want a string, got %s", describeRaw(raw))
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", specErr(path, "malformed string: %v", err)
	}
	return s, nil
}

func parseArray(raw json.RawMessage, path string) ([]json.RawMessage, *SpecError) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, specErr(path, "want an array, got %s", describeRaw(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, syntaxErr(path, err)
	}
	return elems, nil
}

// ints parses an array of integers in [lo, hi].
func (o *object) ints(name string, lo, hi int64) ([]int64, *SpecError) {
	path := o.path + "." + name
	elems, e := parseArray(o.fields[name], path)
	if e != nil {
		return nil, e
	}
	out := make([]int64, len(elems))
	for i, raw := range elems {
		if out[i], e = parseInt(raw, path+indexPath(i), lo, hi); e != nil {
			return nil, e
		}
	}
	return out, nil
}

// parseFloat parses a float32 bound: a number in float32 range, "inf" or "-inf".
func parseFloat(raw json.RawMessage, path string) (float32, *SpecError) {
	switch string(raw) {
	case `"inf"`:
		return float32(math.Inf(1)), nil
	case `"-inf"`:
		return float32(math.Inf(-1)), nil
	}
	if !isNumber(raw) {
		return 0, specErr(path, `want a number, "inf" or "-inf", got %s`, describeRaw(raw))
	}
	x, err := strconv.ParseFloat(string(raw), 32)
	if err != nil {
		return 0, specErr(path, "%s is out of the float32 range", raw)
	}
	return float32(x), nil
}

// bounds parses a Box bound: one value for every element, or an array of n values.
func (o *object) bounds(name string, n int) (one float32, each []float32, e *SpecError) {
	raw, path := o.fields[name], o.path+"."+name
	if len(raw) == 0 || raw[0] != '[' {
		one, e = parseFloat(raw, path)
		return one, nil, e
	}
	elems, e := parseArray(raw, path)
	if e != nil {
		return 0, nil, e
	}
	if len(elems) != n {
		return 0, nil, specErr(path, "want %d bounds (the product of shape), got %d", n, len(elems))
	}
	each = make([]float32, n)
	for i, r := range elems {
		if each[i], e = parseFloat(r, path+indexPath(i)); e != nil {
			return 0, nil, e
		}
	}
	return 0, each, nil
}

func decodeSpace(data []byte, path string, depth int) (Space, *SpecError) {
	if depth > MaxDepth {
		return nil, specErr(path, "spaces nest deeper than %d levels", MaxDepth)
	}
	o, e := parseObject(data, path)
	if e != nil {
		return nil, e
	}
	if _, ok := o.fields["type"]; !ok {
		return nil, specErr(path, `missing required field "type"`)
	}
	name, e := o.string("type")
	if e != nil {
		return nil, e
	}
	kind, ok := kindByName(name)
	if !ok {
		return nil, specErr(path+".type", "unknown type %q", name)
	}
	switch kind {
	case KindDiscrete:
		return decodeDiscrete(o)
	case KindBox:
		return decodeBox(o)
	case KindMultiDiscrete:
		if e := o.only("type", "nvec"); e != nil {
			return nil, e
		}
		nvec, e := o.ints("nvec", 1, MaxFlatDim)
		if e != nil {
			return nil, e
		}
		s, err := NewMultiDiscrete(nvec)
		if err != nil {
			return nil, invalidErr(path+".nvec", err)
		}
		return s, nil
	case KindMultiBinary:
		if e := o.only("type", "shape"); e != nil {
			return nil, e
		}
		shape, e := o.shape()
		if e != nil {
			return nil, e
		}
		s, err := NewMultiBinary(shape...)
		if err != nil {
			return nil, invalidErr(path+".shape", err)
		}
		return s, nil
	case KindDict:
		return decodeDict(o, depth)
	case KindTuple:
		return decodeTuple(o, depth)
	case KindText:
		return decodeText(o)
	}
	panic("spaces: internal error: kind " + kind.String() + " has no decoder")
}

func decodeDiscrete(o *object) (Space, *SpecError) {
	if e := o.only("type", "n", "start?"); e != nil {
		return nil, e
	}
	n, e := o.int("n", 1, MaxFlatDim)
	if e != nil {
		return nil, e
	}
	var start int64
	if _, ok := o.fields["start"]; ok {
		if start, e = o.int("start", math.MinInt64, math.MaxInt64); e != nil {
			return nil, e
		}
	}
	d := Discrete{N: n, Start: start}
	if err := d.Validate(); err != nil {
		return nil, invalidErr(o.path, err)
	}
	return d, nil
}

// shape parses a "shape" field, with dimensions from 0 to MaxFlatDim.
func (o *object) shape() ([]int, *SpecError) {
	dims, e := o.ints("shape", 0, MaxFlatDim)
	if e != nil {
		return nil, e
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		shape[i] = int(d)
	}
	return shape, nil
}

func decodeBox(o *object) (Space, *SpecError) {
	if e := o.only("type", "shape", "dtype?", "low", "high"); e != nil {
		return nil, e
	}
	if _, ok := o.fields["dtype"]; ok {
		dtype, e := o.string("dtype")
		if e != nil {
			return nil, e
		}
		if dtype != "float32" {
			return nil, specErr(o.path+".dtype", `dtype is %q, want "float32"`, dtype)
		}
	}
	shape, e := o.shape()
	if e != nil {
		return nil, e
	}
	n, err := shapeSize(shape, 0)
	if err != nil {
		return nil, specErr(o.path+".shape", "%v", err)
	}
	lo, los, e := o.bounds("low", n)
	if e != nil {
		return nil, e
	}
	hi, his, e := o.bounds("high", n)
	if e != nil {
		return nil, e
	}
	var b *Box
	if los == nil && his == nil {
		b, err = NewBox(shape, lo, hi)
	} else {
		if los == nil {
			los = fill(n, lo)
		}
		if his == nil {
			his = fill(n, hi)
		}
		b, err = NewBoxBounds(shape, los, his)
	}
	if err != nil {
		return nil, invalidErr(o.path, err)
	}
	return b, nil
}

func fill(n int, x float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func decodeDict(o *object, depth int) (Space, *SpecError) {
	if e := o.only("type", "spaces"); e != nil {
		return nil, e
	}
	path := o.path + ".spaces"
	elems, e := parseArray(o.fields["spaces"], path)
	if e != nil {
		return nil, e
	}
	entries := make([]DictEntry, len(elems))
	seen := make(map[string]int, len(elems))
	for i, raw := range elems {
		ep := path + indexPath(i)
		eo, e := parseObject(raw, ep)
		if e != nil {
			return nil, e
		}
		if e := eo.only("key", "space"); e != nil {
			return nil, e
		}
		key, e := eo.string("key")
		if e != nil {
			return nil, e
		}
		if key == "" {
			return nil, specErr(ep+".key", "empty key")
		}
		if j, dup := seen[key]; dup {
			return nil, specErr(ep+".key", "key %q already at %s", key, path+indexPath(j))
		}
		seen[key] = i
		s, e := decodeSpace(eo.fields["space"], ep+".space", depth+1)
		if e != nil {
			return nil, e
		}
		entries[i] = DictEntry{Key: key, Space: s}
	}
	d, err := NewDict(entries...)
	if err != nil {
		return nil, invalidErr(o.path, err)
	}
	return d, nil
}

func decodeTuple(o *object, depth int) (Space, *SpecError) {
	if e := o.only("type", "spaces"); e != nil {
		return nil, e
	}
	path := o.path + ".spaces"
	elems, e := parseArray(o.fields["spaces"], path)
	if e != nil {
		return nil, e
	}
	spaces := make([]Space, len(elems))
	for i, raw := range elems {
		if spaces[i], e = decodeSpace(raw, path+indexPath(i), depth+1); e != nil {
			return nil, e
		}
	}
	t, err := NewTuple(spaces...)
	if err != nil {
		return nil, invalidErr(o.path, err)
	}
	return t, nil
}

func decodeText(o *object) (Space, *SpecError) {
	if e := o.only("type", "min_length", "max_length", "charset?"); e != nil {
		return nil, e
	}
	minLen, e := o.int("min_length", 0, MaxFlatDim)
	if e != nil {
		return nil, e
	}
	maxLen, e := o.int("max_length", 0, MaxFlatDim)
	if e != nil {
		return nil, e
	}
	var charset string
	if _, ok := o.fields["charset"]; ok {
		if charset, e = o.string("charset"); e != nil {
			return nil, e
		}
	}
	t, err := NewText(int(minLen), int(maxLen), charset)
	if err != nil {
		return nil, invalidErr(o.path, err)
	}
	return t, nil
}
