package dict

import (
	"hash/maphash"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Strings is the dictionary of a string column within one part: it only grows, so
// that the indices of the batches already written stay valid and each batch adds
// its new entries as a delta. Its values live in Go memory that is appended to and
// never changed, so the arrays built over it stay valid after it grows.
type Strings struct {
	data    []byte
	offsets []int32
	// table indexes the values by hash, open addressing with linear probing: a slot
	// holds 1 + the index of a value, 0 when empty. Its length is a power of two at
	// least twice the number of values. hashes[i] is value i's hash, compared before
	// its bytes and rehashed from when the table grows. A Go map would do, but the
	// trial ids make the dictionary of a campaign's trials take a new value per trial
	// and agent, which a map hashes and probes for twice (the lookup that misses,
	// then the insert), keeping a string header per key besides: the table finds a
	// value, or the slot for it, in one probe over int32s, which the collector does
	// not scan.
	table  []int32
	hashes []uint32
	seed   maphash.Seed
	// arr is the array of the values so far, nil when the dictionary grew since it
	// was built; reused while it does not grow, so that the IPC writer sees the same
	// dictionary and compares nothing.
	arr arrow.Array
	// seen remembers the strings looked up lately by where their bytes are, so
	// that most rows find theirs without hashing: the environment's runtime makes an
	// agent id ("motion_3") once and hands out the same string for every step of
	// every trial it plays, and a reward source is mostly a constant. last is the
	// string looked up last: an agent's rows come in runs of one agent id, parent
	// and source.
	seen [seenSlots]seenString
	last seenString
}

// seenSlots is how many strings a Strings remembers by address, in 1<<seenBits
// pairs: a string's address picks a pair, which holds the two strings of that pair
// looked up last, so that two strings whose addresses pick the same slot do not take
// turns to push each other out, as the twenty agent ids of a maze trial did, a few
// pairs of them, in 64 slots of one string each: a lookup by hash per trial and id.
const (
	seenBits  = 5
	seenSlots = 2 << seenBits
)

// seenString is a string looked up and its index, -1 for an empty slot. Holding s
// keeps its bytes where they are: while they are, another string at the same address
// and of the same length is the same string.
type seenString struct {
	s string
	i int32
}

// is says whether e holds the string of n bytes at p.
func (e *seenString) is(p *byte, n int) bool {
	return e.i >= 0 && unsafe.StringData(e.s) == p && len(e.s) == n
}

// strDictSlots is the length of a new dictionary's table.
const strDictSlots = 16

// New returns an empty dictionary.
func New() *Strings {
	d := &Strings{offsets: []int32{0}, table: make([]int32, strDictSlots), seed: maphash.MakeSeed()}
	d.forget()
	return d
}

func (d *Strings) forget() {
	for k := range d.seen {
		d.seen[k] = seenString{i: -1}
	}
	d.last = seenString{i: -1}
}

// ID returns the index of s, adding it if it is new.
func (d *Strings) ID(s string) int32 {
	p := unsafe.StringData(s)
	if d.last.is(p, len(s)) {
		return d.last.i
	}
	h := uint64(uintptr(unsafe.Pointer(p))) * 0x9E3779B97F4A7C15 // Fibonacci hashing
	pair := (*[2]seenString)(d.seen[h>>(64-seenBits)*2:])
	switch {
	case pair[0].is(p, len(s)):
	case pair[1].is(p, len(s)):
		pair[0], pair[1] = pair[1], pair[0]
	default:
		pair[1], pair[0] = pair[0], seenString{s: s, i: d.Find(s)}
	}
	d.last = pair[0]
	return pair[0].i
}

// Find returns the index of s, adding it if it is new, by hashing its bytes: ID
// without the cache of addresses.
func (d *Strings) Find(s string) int32 {
	h := uint32(maphash.String(d.seed, s))
	mask := len(d.table) - 1
	k := int(h) & mask
	for ; d.table[k] != 0; k = (k + 1) & mask {
		if i := d.table[k] - 1; d.hashes[i] == h && string(d.data[d.offsets[i]:d.offsets[i+1]]) == s {
			return i
		}
	}
	i := int32(len(d.hashes))
	d.data = append(d.data, s...)
	d.offsets = append(d.offsets, int32(len(d.data)))
	d.hashes = append(d.hashes, h)
	d.table[k] = i + 1
	if 2*len(d.hashes) > len(d.table) {
		d.grow()
	}
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
	}
	return i
}

// grow doubles the table.
func (d *Strings) grow() {
	d.table = make([]int32, 2*len(d.table))
	mask := len(d.table) - 1
	for i, h := range d.hashes {
		k := int(h) & mask
		for d.table[k] != 0 {
			k = (k + 1) & mask
		}
		d.table[k] = int32(i) + 1
	}
}

// Len is the number of values.
func (d *Strings) Len() int { return len(d.offsets) - 1 }

// Array returns the dictionary's values as a string array; the caller releases it.
func (d *Strings) Array() arrow.Array {
	if d.arr == nil {
		n := len(d.offsets) - 1
		data := array.NewData(arrow.BinaryTypes.String, n,
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(d.offsets)), memory.NewBufferBytes(d.data)},
			nil, 0, 0)
		d.arr = array.MakeFromData(data)
		data.Release()
	}
	d.arr.Retain()
	return d.arr
}

// Reset empties the dictionary for a new part. The arrays built over its values may
// still be in use, by the flusher: the next part's values go to new memory, as much
// as this part's took, for the parts of a table mostly hold as many values (a
// part's worth of trial ids) and growing to that would copy them over and over.
// The table and hashes are the dictionary's own: they are kept, and cleared.
func (d *Strings) Reset() {
	d.data = make([]byte, 0, len(d.data))
	d.offsets = append(make([]int32, 0, len(d.offsets)), 0)
	clear(d.table)
	d.hashes = d.hashes[:0]
	d.forget()
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
	}
}

// Release lets go of the array of the values, which the writer's batches retain.
func (d *Strings) Release() {
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
	}
}
