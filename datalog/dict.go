package datalog

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// strDict is the dictionary of a string column within one part: it only grows, so
// that the indices of the batches already written stay valid and each batch adds
// its new entries as a delta. Its values live in Go memory that is appended to and
// never changed, so the arrays built over it stay valid after it grows.
type strDict struct {
	index   map[string]int32
	data    []byte
	offsets []int32
	// arr is the array of the values so far, nil when the dictionary grew since it
	// was built; reused while it does not grow, so that the IPC writer sees the same
	// dictionary and compares nothing.
	arr arrow.Array
	// seen remembers the strings looked up lately by where their bytes are, so
	// that most rows find theirs without hashing: the environment's runtime makes an
	// agent id ("motion_3") once and hands out the same string for every step of
	// every trial it plays, and a reward source is mostly a constant.
	seen [seenSlots]seenString
}

// seenSlots is how many strings a strDict remembers by address.
const (
	seenBits  = 6
	seenSlots = 1 << seenBits
)

// seenString is a string looked up and its index, -1 for an empty slot. Holding s
// keeps its bytes where they are: while they are, another string at the same address
// and of the same length is the same string.
type seenString struct {
	s string
	i int32
}

func newStrDict() *strDict {
	d := &strDict{index: map[string]int32{}, offsets: []int32{0}}
	d.forget()
	return d
}

func (d *strDict) forget() {
	for k := range d.seen {
		d.seen[k] = seenString{i: -1}
	}
}

// id returns the index of s, adding it if it is new.
func (d *strDict) id(s string) int32 {
	p := unsafe.StringData(s)
	e := &d.seen[uint64(uintptr(unsafe.Pointer(p)))*0x9E3779B97F4A7C15>>(64-seenBits)] // Fibonacci hashing
	if e.i >= 0 && unsafe.StringData(e.s) == p && len(e.s) == len(s) {
		return e.i
	}
	i, ok := d.index[s]
	if !ok {
		i = int32(len(d.offsets) - 1)
		d.data = append(d.data, s...)
		d.offsets = append(d.offsets, int32(len(d.data)))
		// The key is the value's bytes in data, which are never written again: data
		// only grows, into a new array when it must, and the old one stays as it was.
		k := d.data[len(d.data)-len(s):]
		d.index[unsafe.String(unsafe.SliceData(k), len(k))] = i
		if d.arr != nil {
			d.arr.Release()
			d.arr = nil
		}
	}
	*e = seenString{s: s, i: i}
	return i
}

// len is the number of values.
func (d *strDict) len() int { return len(d.offsets) - 1 }

// array returns the dictionary's values as a string array; the caller releases it.
func (d *strDict) array() arrow.Array {
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

// reset empties the dictionary for a new part.
func (d *strDict) reset() {
	clear(d.index)
	d.data = d.data[:0:0]
	d.offsets = append(d.offsets[:0:0], 0)
	d.forget()
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
	}
}

func (d *strDict) release() {
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
	}
}
