package spaces

// Flatten returns the flat float32 encoding of v, a member of s, in a new slice of length
// s.FlatDim(). It is FlattenTo with an allocated destination; the encodings follow
// Gymnasium's gymnasium.spaces.utils.flatten (see the package documentation).
func Flatten(s Space, v any) ([]float32, error) {
	dst := make([]float32, s.FlatDim())
	if err := s.FlattenTo(dst, v); err != nil {
		return nil, err
	}
	return dst, nil
}

// Must returns s, or panics if err is not nil. Use it for spaces built from constants, in
// package-level declarations and tests:
//
//	var action = spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2}))
func Must[S Space](s S, err error) S {
	if err != nil {
		panic(err)
	}
	return s
}
