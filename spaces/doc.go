// Package spaces describes the observations and actions of an environment: which values
// are allowed, how to draw one at random, how to encode one as a flat float32 vector, and
// how to describe the set as JSON so that the Python side can rebuild the same Gymnasium
// space.
//
// What you touch here: use the types and constructors (Discrete{N: 4}, NewBox, NewDict,
// ...) to declare an agent's spaces, and Flatten, Marshal and Unmarshal; implement
// nothing: the set of spaces is closed, so that Python can rebuild each as a Gymnasium
// space.
//
// The package is pure: it does no I/O, reads no clock, starts no goroutines and keeps no
// global state. Randomness comes only from the *rand.Rand (math/rand/v2) a caller passes.
//
// # Kinds of space
//
// Seven kinds mirror gymnasium.spaces:
//
//	Discrete      Discrete{N: 4, Start: 0}               {0, 1, 2, 3}
//	Box           NewBox([]int{2, 3}, -1, 1)             float32 arrays in [low, high]
//	MultiDiscrete NewMultiDiscrete([]int64{3, 4})        int vectors with v[i] in [0, nvec[i])
//	MultiBinary   NewMultiBinary(5)                      vectors of 0s and 1s
//	Dict          NewDict(DictEntry{"pos", box}, ...)    maps with fixed, ordered keys
//	Tuple         NewTuple(box, Discrete{N: 2})          fixed-length sequences
//	Text          NewText(1, 8, "abc")                   strings over a charset
//
// Constructors validate their parameters and return an error wrapping ErrInvalid; Must
// turns that error into a panic for spaces built from constants. Discrete is a plain value
// type; call its Validate method where N comes from input.
//
// Every space is immutable after construction and safe for concurrent use (a Dict or Tuple
// holding a space from another package is as safe as that space).
//
// # Values
//
// A value is a plain Go value, one representation per kind (see Space). Values returned by
// Sample and Unflatten are new and owned by the caller.
//
//	Discrete      int64 (int is accepted on input)
//	Box           []float32, row-major
//	MultiDiscrete []int64
//	MultiBinary   []int8 of 0 and 1 ([]int64 is accepted on input)
//	Dict          map[string]any with exactly the space's keys
//	Tuple         []any, one value per element
//	Text          string; lengths count runes
//
// # Checking
//
// Check returns nil for a member. Otherwise it returns a *ValueError, which wraps
// ErrOutside and says where and why:
//
//	spaces: value outside Box(0.0, 1.0, (2, 3), float32): [4]: 1.5 is above the high bound 1
//
// Path locates the problem inside the value: "" for the whole value, "[4]" for an element
// (the row-major index for Box and MultiBinary, the rune index for Text), ".pos" for a Dict
// key, nested as in ".pos[1]". Reason names the bound, the expected type or the expected
// length. A Box element that is NaN is never a member; infinite elements are members when
// the bound on that side is infinite.
//
// The typed helpers Discrete.CheckInt, Box.CheckFloats, MultiDiscrete.CheckInts and
// MultiBinary.CheckInts do the same without boxing the value. None of the checks of leaf
// spaces allocates when the value is a member.
//
// # Sampling
//
// Sample draws a member as Gymnasium does: Discrete, MultiDiscrete and MultiBinary
// uniformly; a Box element uniformly in [low, high] if both bounds are finite, from
// normal(0, 1) if neither is, as low + exponential(1) or high - exponential(1) if only one
// is; Text a length uniform in [min, max], then each rune uniformly from the charset; Dict
// and Tuple each element in order. The same seed gives the same samples.
//
// Discrete.SampleMasked draws uniformly among the values a mask allows, and
// Box.SampleTo, MultiDiscrete.SampleTo and MultiBinary.SampleTo fill a caller's buffer;
// none of them allocates.
//
// # Flattening
//
// FlattenTo writes the flat float32 encoding of a value into the first FlatDim entries of
// a caller's buffer and never retains it; Flatten allocates the buffer. The encodings are
// those of gymnasium.spaces.utils.flatten, as float32:
//
//	Discrete      one-hot of length N with the 1 at v-Start
//	Box           the elements, row-major
//	MultiDiscrete the one-hots of each entry, concatenated: length sum(nvec)
//	MultiBinary   the bits as 0 and 1
//	Dict          the encodings of the values, concatenated in key order
//	Tuple         the encodings of the elements, concatenated
//	Text          max_length entries: entry i is the charset index of rune i, the entries
//	              after the last rune hold len(charset)
//
// For example Discrete{N: 4, Start: 1} encodes 2 as [0 1 0 0], and a Text with charset
// "abc" and max length 4 encodes "ca" as [2 0 3 3].
//
// FlattenTo does not allocate for Discrete, Box, MultiDiscrete and MultiBinary values.
// Unflatten reverses it and accepts only encodings that FlattenTo can produce: a Discrete
// block must be exactly one-hot, MultiBinary entries 0 or 1, Box entries within their
// bounds, Text entries integer charset indices with padding only at the end, and the
// length exactly FlatDim. Anything else is a *ValueError wrapping ErrOutside.
//
// # JSON spec
//
// Marshal (or a space's MarshalJSON) writes a space as a JSON object, and Unmarshal builds
// the space back; this is the contract with the Python side, which rebuilds the
// Gymnasium space from it. Each object has a "type", the Kind's String, and the fields of
// its kind. Field names are case-sensitive; unknown and repeated fields are errors.
//
// discrete: "n" (required, >= 1) and "start" (default 0). Python:
// Discrete(n, start=start).
//
//	{"type":"discrete","n":4,"start":0}
//
// box: "shape" (required, an array of dimensions >= 0), "dtype" (always "float32"; may be
// left out), "low" and "high" (required): the bounds of each element as a flat row-major
// array of prod(shape) entries. JSON has no infinity, so an infinite bound is the string
// "inf" or "-inf". On input a single number, "inf" or "-inf" may stand for every element.
// Python: Box(low=np.array(low, np.float32).reshape(shape), high=..., dtype=np.float32).
//
//	{"type":"box","shape":[2],"dtype":"float32","low":[-1,"-inf"],"high":[1,"inf"]}
//	{"type":"box","shape":[2,3],"low":0,"high":1}   (input only: written back as arrays)
//
// multi_discrete: "nvec" (required, entries >= 1). Python: MultiDiscrete(nvec).
//
//	{"type":"multi_discrete","nvec":[3,4]}
//
// multi_binary: "shape" (required, dimensions >= 1). Python: MultiBinary(shape).
//
//	{"type":"multi_binary","shape":[5]}
//
// dict: "spaces" (required), an array of {"key": K, "space": S} objects, so that the order
// of the keys is kept. Keys are non-empty and distinct. Python:
// Dict([(key, space), ...]), a list of pairs, since a Python dict passed to Dict is
// sorted by key.
//
//	{"type":"dict","spaces":[{"key":"pos","space":{"type":"box","shape":[2],"dtype":"float32","low":[0,0],"high":[1,1]}},{"key":"door","space":{"type":"discrete","n":3,"start":0}}]}
//
// tuple: "spaces" (required), an array of specs. Python: Tuple([space, ...]).
//
//	{"type":"tuple","spaces":[{"type":"discrete","n":2,"start":0},{"type":"multi_binary","shape":[3]}]}
//
// text: "min_length" and "max_length" (required, 0 <= min_length <= max_length) and
// "charset" (a string of distinct characters; "" or left out means DefaultCharset). The
// order of the charset fixes the flat encoding. Python: Text(max_length,
// min_length=min_length, charset=charset), with charset passed as the str.
//
//	{"type":"text","min_length":0,"max_length":8,"charset":"abc"}
//
// Integers are written without a fraction or exponent; bounds are written with the
// shortest decimal that reads back as the same float32. Unmarshal rejects, with a
// *SpecError wrapping ErrSpec whose Path locates the problem (".spaces[1].space.n"),
// malformed JSON, unknown types, unknown fields, missing fields, invalid parameters, and
// the limits below; it never panics and its memory use is bounded by a small multiple of
// the input's length.
//
// # Limits
//
// No space may have a FlatDim above MaxFlatDim (1<<26), nest deeper than MaxDepth (32), or
// have a shape of more than MaxRank (32) dimensions. Constructors and Unmarshal enforce the
// same limits, so every space this package builds can be marshaled and read back.
package spaces
