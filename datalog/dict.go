package datalog

import (
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
	// lastS and lastI remember the latest lookup: a column of trial ids or agent ids
	// repeats its previous value most of the time.
	lastS string
	lastI int32
}

func newStrDict() *strDict {
	return &strDict{index: map[string]int32{}, offsets: []int32{0}, lastI: -1}
}

// id returns the index of s, adding it if it is new.
func (d *strDict) id(s string) int32 {
	if d.lastI >= 0 && s == d.lastS {
		return d.lastI
	}
	i, ok := d.index[s]
	if !ok {
		i = int32(len(d.offsets) - 1)
		d.data = append(d.data, s...)
		d.offsets = append(d.offsets, int32(len(d.data)))
		d.index[string(d.data[len(d.data)-len(s):])] = i
		if d.arr != nil {
			d.arr.Release()
			d.arr = nil
		}
	}
	d.lastS, d.lastI = s, i
	return i
}

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
	d.lastS, d.lastI = "", -1
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
