package spaces

import (
	"errors"
	"strconv"
)

// Sentinel errors. Errors returned by this package wrap one of them; test with errors.Is.
var (
	// ErrOutside is wrapped by every *ValueError: a value is not a member of a space, or a
	// flat vector is not an encoding FlattenTo can produce.
	ErrOutside = errors.New("spaces: value outside the space")
	// ErrSpec is wrapped by every *SpecError: a JSON spec cannot be turned into a space.
	ErrSpec = errors.New("spaces: invalid space spec")
	// ErrInvalid is wrapped by the errors of the constructors (NewBox, NewDict, ...) and of
	// Discrete.Validate: the parameters do not describe a space.
	ErrInvalid = errors.New("spaces: invalid space parameters")
	// ErrMaskLength is wrapped by Discrete.SampleMasked when the mask length is not N.
	ErrMaskLength = errors.New("spaces: mask length does not match the space")
	// ErrEmptyMask is returned by Discrete.SampleMasked when no entry of the mask is true.
	ErrEmptyMask = errors.New("spaces: mask allows no value")
	// ErrShortBuffer is wrapped by FlattenTo when dst is shorter than FlatDim.
	ErrShortBuffer = errors.New("spaces: destination shorter than FlatDim")
)

// ValueError reports a value that is not a member of a space (from Check and FlattenTo),
// or a flat vector that does not decode (from Unflatten). It wraps ErrOutside.
//
// A ValueError is not modified after it is returned and may be shared between goroutines.
type ValueError struct {
	// Space is the space the value was checked against; nil when unknown.
	Space Space
	// Path locates the problem inside the value: "" for the whole value, "[3]" for an index
	// (the row-major element index of a Box or MultiBinary, the rune index of a Text),
	// ".key" for a Dict key, nested as in ".pos[1]".
	Path string
	// Reason says what is wrong, naming the bound that is violated, as in
	// "5 is above the high bound 3" or "want []float32 of length 6, got 4".
	Reason string
}

// Error returns "spaces: value outside SPACE: PATH: REASON", leaving out an empty PATH.
func (e *ValueError) Error() string {
	s := "spaces: value outside "
	if e.Space != nil {
		s += e.Space.String()
	} else {
		s += "the space"
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + ": " + e.Reason
}

// Unwrap returns ErrOutside.
func (e *ValueError) Unwrap() error { return ErrOutside }

// SpecError reports a JSON spec that Unmarshal cannot turn into a space. It wraps ErrSpec.
type SpecError struct {
	// Path locates the problem inside the JSON document, as in ".spaces[2].space.low[1]";
	// "" is the whole document.
	Path string
	// Reason says what is wrong, as in `unknown field "size"` or "n is 0, want >= 1".
	Reason string
}

// Error returns "spaces: invalid space spec: PATH: REASON", leaving out an empty PATH.
func (e *SpecError) Error() string {
	if e.Path == "" {
		return "spaces: invalid space spec: " + e.Reason
	}
	return "spaces: invalid space spec: " + e.Path + ": " + e.Reason
}

// Unwrap returns ErrSpec.
func (e *SpecError) Unwrap() error { return ErrSpec }

// outside builds the error of a failed check; the caller sets Space when it returns it.
func outside(path, reason string) *ValueError {
	return &ValueError{Path: path, Reason: reason}
}

// withSpace finishes an internal check result for a public method: nil stays a nil error.
func withSpace(e *ValueError, s Space) error {
	if e == nil {
		return nil
	}
	if e.Space == nil {
		e.Space = s
	}
	return e
}

// fromError turns the error of a Space this package did not write into a ValueError
// without its Space, so that a Dict or Tuple can put its own path in front.
func fromError(err error) *ValueError {
	if err == nil {
		return nil
	}
	var ve *ValueError
	if errors.As(err, &ve) {
		return outside(ve.Path, ve.Reason)
	}
	return outside("", err.Error())
}

// prefixKey and prefixIndex put the location of a sub-value in front of e's Path.
func prefixKey(e *ValueError, key string) *ValueError {
	if e != nil {
		e.Path = "." + key + e.Path
		e.Space = nil
	}
	return e
}

func prefixIndex(e *ValueError, i int) *ValueError {
	if e != nil {
		e.Path = indexPath(i) + e.Path
		e.Space = nil
	}
	return e
}

func indexPath(i int) string { return "[" + strconv.Itoa(i) + "]" }
