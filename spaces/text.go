package spaces

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultCharset is the charset of a Text made with an empty charset: the ASCII letters
// and digits, the characters of Gymnasium's default alphanumeric set.
const DefaultCharset = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// Text is a set of strings of MinLength to MaxLength runes, each from a charset, as
// Gymnasium's Text. Its values are Go strings (valid UTF-8); lengths count runes.
//
// Create it with NewText; the zero Text is not a valid space. A Text is immutable and safe
// for concurrent use.
//
// Its flat encoding has MaxLength entries: entry i is the index in the charset of rune i,
// and the entries after the last rune hold len(charset) as padding. The index follows the
// order of the charset string, as in Gymnasium when charset is given as a str; so pass
// Charset() as a str on the Python side (Gymnasium's default charset is a frozenset whose
// order varies between runs).
type Text struct {
	minLen, maxLen int
	charset        string
	runes          []rune
	index          map[rune]int
}

var _ Space = (*Text)(nil)

// NewText returns the Text of strings of minLen to maxLen runes from charset, an ordered
// set of runes; "" means DefaultCharset. It requires 0 <= minLen <= maxLen <= MaxFlatDim
// and a valid UTF-8 charset with no rune twice. The error wraps ErrInvalid.
func NewText(minLen, maxLen int, charset string) (*Text, error) {
	if charset == "" {
		charset = DefaultCharset
	}
	switch {
	case minLen < 0:
		return nil, fmt.Errorf("%w: Text min length is %d, want >= 0", ErrInvalid, minLen)
	case maxLen < minLen:
		return nil, fmt.Errorf("%w: Text max length %d is below min length %d", ErrInvalid, maxLen, minLen)
	case maxLen > MaxFlatDim:
		return nil, fmt.Errorf("%w: Text max length is %d, want <= %d", ErrInvalid, maxLen, MaxFlatDim)
	case !utf8.ValidString(charset):
		return nil, fmt.Errorf("%w: Text charset is not valid UTF-8", ErrInvalid)
	}
	t := &Text{minLen: minLen, maxLen: maxLen, charset: charset, runes: []rune(charset)}
	t.index = make(map[rune]int, len(t.runes))
	for i, r := range t.runes {
		if j, dup := t.index[r]; dup {
			return nil, fmt.Errorf("%w: Text charset has %q at %d and %d", ErrInvalid, r, j, i)
		}
		t.index[r] = i
	}
	return t, nil
}

// MinLength returns the fewest runes of a member.
func (t *Text) MinLength() int { return t.minLen }

// MaxLength returns the most runes of a member.
func (t *Text) MaxLength() int { return t.maxLen }

// Charset returns the runes a member may hold, in encoding order.
func (t *Text) Charset() string { return t.charset }

// Kind returns KindText.
func (t *Text) Kind() Kind { return KindText }

// FlatDim returns MaxLength.
func (t *Text) FlatDim() int { return t.maxLen }

// Check returns nil if v is a string of MinLength to MaxLength runes from the charset, or
// a *ValueError; a bad rune is named by its rune index, as in "[3]". It does not allocate
// when v is a member.
func (t *Text) Check(v any) error { return withSpace(t.checkValue(v), t) }

func (t *Text) checkValue(v any) *ValueError {
	s, ok := v.(string)
	if !ok {
		return typeMismatch("string", v)
	}
	return t.checkString(s)
}

func (t *Text) checkString(s string) *ValueError {
	switch n := utf8.RuneCountInString(s); {
	case n < t.minLen:
		return outside("", fmt.Sprintf("length %d is below the minimum length %d", n, t.minLen))
	case n > t.maxLen:
		return outside("", fmt.Sprintf("length %d is above the maximum length %d", n, t.maxLen))
	}
	i := 0
	for at, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[at:]); size == 1 {
				return outside(indexPath(i), "invalid UTF-8")
			}
		}
		if _, ok := t.index[r]; !ok {
			return outside(indexPath(i), fmt.Sprintf("%q is not in the charset", r))
		}
		i++
	}
	return nil
}

// Sample returns a string whose length is uniform in [MinLength, MaxLength] and whose
// runes are drawn uniformly from the charset, as Gymnasium samples.
func (t *Text) Sample(rng *rand.Rand) any {
	n := t.minLen + rng.IntN(t.maxLen-t.minLen+1)
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteRune(t.runes[rng.IntN(len(t.runes))])
	}
	return b.String()
}

// FlattenTo writes the charset index of each rune of the string v into dst, padded with
// len(charset) up to MaxLength. It does not allocate when it succeeds.
func (t *Text) FlattenTo(dst []float32, v any) error { return flattenChecked(t, t, dst, v) }

func (t *Text) flattenValue(dst []float32, v any) *ValueError {
	s, ok := v.(string)
	if !ok {
		return typeMismatch("string", v)
	}
	if e := t.checkString(s); e != nil {
		return e
	}
	i := 0
	for _, r := range s {
		dst[i] = float32(t.index[r])
		i++
	}
	pad := float32(len(t.runes))
	for ; i < len(dst); i++ {
		dst[i] = pad
	}
	return nil
}

// Unflatten decodes charset indices into a string. Every entry must be an integer in
// [0, len(charset)], the padding value len(charset) may only be followed by padding, and
// the length must be within bounds.
func (t *Text) Unflatten(src []float32) (any, error) { return unflattenChecked(t, t, src) }

func (t *Text) unflattenValue(src []float32) (any, *ValueError) {
	size := len(t.runes)
	var b strings.Builder
	n := len(src)
	for i, x := range src {
		if !(x >= 0 && x <= float32(size)) || x != float32(int(x)) {
			return nil, outside(indexPath(i), fmt.Sprintf("flat entry is %s, want a charset index in [0, %d] (%d is padding)", num(x), size, size))
		}
		j := int(x)
		if j == size {
			if n == len(src) {
				n = i
			}
			continue
		}
		if n < i {
			return nil, outside(indexPath(i), fmt.Sprintf("charset index %d after padding at %d", j, n))
		}
		b.WriteRune(t.runes[j])
	}
	if n < t.minLen {
		return nil, outside("", fmt.Sprintf("length %d is below the minimum length %d", n, t.minLen))
	}
	return b.String(), nil
}

// Equal reports whether other is a *Text with the same length bounds and the same
// charset in the same order (the order fixes the flat encoding).
func (t *Text) Equal(other Space) bool {
	o, ok := other.(*Text)
	if !ok || o == nil || t == nil {
		return ok && o == t
	}
	return t.minLen == o.minLen && t.maxLen == o.maxLen && t.charset == o.charset
}

// String returns the space as Gymnasium prints it: "Text(1, 8, charset=abc)".
func (t *Text) String() string {
	return "Text(" + strconv.Itoa(t.minLen) + ", " + strconv.Itoa(t.maxLen) + ", charset=" + t.charset + ")"
}

// MarshalJSON returns the spec {"type":"text","min_length":MIN,"max_length":MAX,"charset":CHARS}.
func (t *Text) MarshalJSON() ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	cs, err := json.Marshal(t.charset)
	if err != nil {
		return nil, err
	}
	b := append([]byte(nil), `{"type":"text","min_length":`...)
	b = strconv.AppendInt(b, int64(t.minLen), 10)
	b = append(b, `,"max_length":`...)
	b = strconv.AppendInt(b, int64(t.maxLen), 10)
	b = append(b, `,"charset":`...)
	b = append(b, cs...)
	return append(b, '}'), nil
}

func (t *Text) validate() error {
	if t == nil || len(t.runes) == 0 {
		return fmt.Errorf("%w: Text not made by NewText", ErrInvalid)
	}
	return nil
}

func (t *Text) depth() int { return 1 }
