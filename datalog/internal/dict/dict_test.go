package dict

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// elsewhere returns a copy of s in memory of its own, so that a dictionary sees it
// at another address.
func elsewhere(s string) string { return strings.Clone(s) }

// A dictionary gives each value one index, in the order of their first lookups,
// whatever the address of the string looked up, past the growth of its table and
// of its cache of addresses; reset begins it anew, and its values before, which the
// arrays already built are over, stay as they were.
func TestStrings(t *testing.T) {
	d := New()
	defer d.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []string
	index := map[string]int32{}
	for round := range 2 {
		if round == 1 {
			before := d.Array()
			d.Reset()
			require.Equal(t, 0, d.Len())
			clear(index)
			vals = vals[:0]
			defer func(a arrow.Array, want []string) {
				for i, v := range want {
					assert.Equal(t, v, a.(*array.String).Value(i), "a value of the part before")
				}
				a.Release()
			}(before, stringValues(before))
		}
		for range 20000 {
			var s string
			if len(vals) == 0 || rng.IntN(3) == 0 {
				s = fmt.Sprintf("v-%d", rng.IntN(5000))
				if rng.IntN(10) == 0 {
					s = "" // the empty string is a value too
				}
			} else {
				s = vals[rng.IntN(len(vals))] // the same string, at the same address
				if rng.IntN(2) == 0 {
					s = elsewhere(s)
				}
			}
			want, ok := index[s]
			if !ok {
				want = int32(len(index))
				index[s] = want
			}
			vals = append(vals, s)
			require.Equal(t, want, d.ID(s), "%q", s)
			require.Equal(t, want, d.Find(elsewhere(s)), "%q by its bytes", s)
		}
		require.Equal(t, len(index), d.Len())
		a := d.Array()
		for s, i := range index {
			require.Equal(t, s, a.(*array.String).Value(int(i)))
		}
		a.Release()
	}
}

// stringValues returns copies of the values of a, a dictionary's array.
func stringValues(a arrow.Array) []string {
	out := make([]string, a.Len())
	for i := range out {
		out[i] = strings.Clone(a.(*array.String).Value(i))
	}
	return out
}

// A new part's dictionary forgets the strings it found by address: the same string
// is a new value of the new part.
func TestStringsResetForgets(t *testing.T) {
	d := New()
	defer d.Release()
	a, b := "agent_0", "agent_1"
	for range 2 {
		require.Equal(t, int32(0), d.ID(a))
		require.Equal(t, int32(1), d.ID(b))
		require.Equal(t, int32(1), d.ID(b)) // found as the last string
		require.Equal(t, int32(0), d.ID(a)) // found by address
		require.Equal(t, 2, d.Len())
		d.Reset()
		require.Equal(t, 0, d.Len())
		require.Equal(t, int32(0), d.ID(b))
		require.Equal(t, 1, d.Len())
		d.Reset()
	}
}

// Strings that take turns, more of them than a dictionary remembers by address,
// keep their indices: what the cache pushes out, the table finds.
func TestStringsSeenTurns(t *testing.T) {
	d := New()
	defer d.Release()
	ids := make([]string, 3*seenSlots)
	for i := range ids {
		ids[i] = fmt.Sprintf("motion_%d", i)
	}
	for round := range 5 {
		for i, s := range ids {
			require.Equal(t, int32(i), d.ID(s), "round %d", round)
			require.Equal(t, int32(i), d.ID(s), "round %d, again", round)
		}
	}
	require.Equal(t, len(ids), d.Len())
}
