package spaces

import (
	"encoding/json"
	"math/rand/v2"
)

// Space is a set of values an observation or action may take.
//
// Values are represented as plain Go values, one representation per space kind:
//
//	Discrete      int64 (int is accepted on input)
//	Box           []float32, row-major, len = product of Shape
//	MultiDiscrete []int64, len = len(Nvec)
//	MultiBinary   []int8 of 0 and 1, len = product of Shape
//	Dict          map[string]any keyed by the space's keys
//	Tuple         []any, one value per element space
//	Text          string
//
// Implementations are immutable after construction and safe for concurrent use.
type Space interface {
	// Kind names the kind of space.
	Kind() Kind
	// FlatDim is the length of the float32 vector FlattenTo writes.
	FlatDim() int
	// Check returns nil if v is a member of the space, or an error (a *ValueError
	// wrapping ErrOutside) naming the index or key and the bound that v violates.
	Check(v any) error
	// Sample draws a uniformly random member of the space from rng.
	Sample(rng *rand.Rand) any
	// FlattenTo writes the flat float32 encoding of v into dst[:FlatDim()].
	// It returns an error if v is not a member or dst is too short; it never retains dst.
	FlattenTo(dst []float32, v any) error
	// Unflatten decodes a flat encoding written by FlattenTo.
	Unflatten(src []float32) (any, error)
	// Equal reports whether other describes the same set with the same encoding.
	Equal(other Space) bool
	// String describes the space briefly, as Gymnasium prints it: "Discrete(4)".
	String() string
	json.Marshaler
}
