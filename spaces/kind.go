package spaces

//go:generate go tool stringer -type=Kind -linecomment

// Kind names a kind of space. Its String form is also the "type" name in the JSON spec.
// The zero Kind is invalid.
type Kind int

// The kinds of space. Each String value is the JSON "type" name of the kind.
const (
	KindDiscrete      Kind = 1 + iota // discrete
	KindBox                           // box
	KindMultiDiscrete                 // multi_discrete
	KindMultiBinary                   // multi_binary
	KindDict                          // dict
	KindTuple                         // tuple
	KindText                          // text
)

// kindByName maps a JSON "type" name back to its Kind; ok is false for an unknown name.
func kindByName(name string) (Kind, bool) {
	for k := KindDiscrete; k <= KindText; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}
