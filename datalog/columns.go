package datalog

import (
	"encoding/binary"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/dict"
	"github.com/batonrl/baton/event"
)

// The step path of a writer appends each row straight into typed column buffers, one
// per Arrow buffer of the agent's schema, taken from the allocator once and reused
// batch after batch; when a batch is written, its arrays are built over those buffers
// without a copy (array.NewData over memory.NewBufferBytes), and the IPC writer is done
// with them when it returns. No Arrow builder is involved, so a row costs its copies
// and a store per value: no calls per value, no growth checks but for the lists
// (reward sources, messages), no zeroing of new buffers. Booleans are stored a byte
// each and packed into bitmaps, and nulls counted, when the batch is built, by the
// goroutine that writes it.

// colElem is what a column buffer holds.
type colElem interface {
	int32 | int64 | uint64 | float32 | float64 | uint8
}

// vec is a vector of T in memory taken from an allocator: s is the part in use (its
// capacity is what was taken), raw what the allocator returned.
type vec[T colElem] struct {
	raw []byte
	s   []T
}

// reserve makes room for n elements in all, keeping those in use.
func (v *vec[T]) reserve(mem memory.Allocator, n int) {
	if n <= cap(v.s) {
		return
	}
	size := max(n, 2*cap(v.s), 16) * int(unsafe.Sizeof(T(0)))
	if v.raw == nil {
		v.raw = mem.Allocate(size)
	} else {
		v.raw = mem.Reallocate(size, v.raw)
	}
	v.s = arrow.GetData[T](v.raw)[:len(v.s)]
}

// full makes all n elements of a vector of n in use, for columns written by index.
func (v *vec[T]) full(mem memory.Allocator, n int) {
	v.reserve(mem, n)
	v.s = v.s[:n]
}

// push appends x.
func (v *vec[T]) push(mem memory.Allocator, x T) {
	if len(v.s) == cap(v.s) {
		v.reserve(mem, len(v.s)+1)
	}
	v.s = append(v.s, x)
}

// pushAll appends xs.
func (v *vec[T]) pushAll(mem memory.Allocator, xs []T) {
	if len(v.s)+len(xs) > cap(v.s) {
		v.reserve(mem, len(v.s)+len(xs))
	}
	v.s = append(v.s, xs...)
}

func (v *vec[T]) free(mem memory.Allocator) {
	if v.raw != nil {
		mem.Free(v.raw)
	}
	v.raw, v.s = nil, nil
}

// buffer wraps the first n elements as an Arrow buffer, without a copy.
func (v *vec[T]) buffer(n int) *memory.Buffer {
	return memory.NewBufferBytes(arrow.GetBytes(v.s[:n]))
}

// bitmap is a column of bits (booleans, validity) written by index.
type bitmap struct{ vec[uint8] }

// alloc makes room for n bits.
func (b *bitmap) alloc(mem memory.Allocator, n int) {
	b.full(mem, int(bitutil.BytesForBits(int64(n))))
}

func (b *bitmap) set(i int, v bool) { bitutil.SetBitTo(b.s, i, v) }

// put sets bit i, making room for it: a bitmap that grows a bit at a time.
func (b *bitmap) put(mem memory.Allocator, i int, v bool) {
	if k := int(bitutil.BytesForBits(int64(i + 1))); k > len(b.s) {
		b.reserve(mem, k)
		b.s = b.s[:k]
	}
	b.set(i, v)
}

// buffer clears the bits after the first n, left from an earlier batch, and wraps the
// bytes of n bits as an Arrow buffer.
func (b *bitmap) buffer(n int) *memory.Buffer {
	k := int(bitutil.BytesForBits(int64(n)))
	if n%8 != 0 {
		b.s[k-1] &= bitutil.PrecedingBitmask[n%8]
	}
	return memory.NewBufferBytes(b.s[:k])
}

// byteStrings is a column of strings or byte strings: offsets and bytes.
type byteStrings struct {
	off  vec[int32]
	data vec[uint8]
}

func (s *byteStrings) reset(mem memory.Allocator) {
	s.off.s = s.off.s[:0]
	s.off.push(mem, 0)
	s.data.s = s.data.s[:0]
}

func (s *byteStrings) push(mem memory.Allocator, b []byte) {
	s.data.pushAll(mem, b)
	s.off.push(mem, int32(len(s.data.s)))
}

func (s *byteStrings) pushString(mem memory.Allocator, str string) {
	s.push(mem, unsafe.Slice(unsafe.StringData(str), len(str)))
}

// arrayData builds the array data of the n values, of type t, over the column.
func (s *byteStrings) arrayData(t arrow.DataType, n int) *array.Data {
	return array.NewData(t, n, []*memory.Buffer{nil, s.off.buffer(n + 1), s.data.buffer(len(s.data.s))}, nil, 0, 0)
}

func (s *byteStrings) free(mem memory.Allocator) {
	s.off.free(mem)
	s.data.free(mem)
}

// bools is a column of booleans written a byte each (Go's bools as they are), and
// packed into the bits of an Arrow bitmap when the batch is built, on the flusher.
type bools struct {
	vals vec[uint8] // 0 or 1
	bits bitmap
}

func (b *bools) alloc(mem memory.Allocator, n int) {
	b.vals.full(mem, n)
	b.bits.alloc(mem, n)
}

func (b *bools) free(mem memory.Allocator) {
	b.vals.free(mem)
	b.bits.free(mem)
}

// pack packs the first n values and returns their bitmap and how many are false.
func (b *bools) pack(n int) (*memory.Buffer, int) {
	return packBits(b.bits.s, b.vals.s[:n]), n - ones(b.bits.s, n)
}

// packBits packs the 0-or-1 bytes of src into the bits of dst and returns the bitmap.
func packBits(dst, src []uint8) *memory.Buffer {
	n := len(src)
	j := 0
	for ; j+8 <= n; j += 8 {
		// Eight 0-or-1 bytes gathered into one: byte k lands in bit k.
		dst[j>>3] = byte((binary.LittleEndian.Uint64(src[j:]) * 0x0102040810204080) >> 56)
	}
	if j < n {
		var last byte
		for k := j; k < n; k++ {
			last |= src[k] << (k - j)
		}
		dst[j>>3] = last
	}
	return memory.NewBufferBytes(dst[:bitutil.BytesForBits(int64(n))])
}

// repeatBits packs the 0-or-1 bytes of src, each repeated d times, into dst: the
// validity of the d values of each row of a fixed-size list.
func repeatBits(dst, src []uint8, d int) *memory.Buffer {
	n := len(src) * d
	clear(dst[:bitutil.BytesForBits(int64(n))])
	for i, v := range src {
		if v != 0 {
			bitutil.SetBitsTo(dst, int64(i*d), int64(d), true)
		}
	}
	return memory.NewBufferBytes(dst[:bitutil.BytesForBits(int64(n))])
}

// ones counts the set bits among the first n of a packed bitmap.
func ones(bm []uint8, n int) int {
	return bitutil.CountSetBits(bm, 0, n)
}

// boolBytes returns the bytes of a []bool.
func boolBytes(b []bool) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// b2u is 1 for true.
func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// stepColumns holds up to rows rows of an agent's steps, column by column: a batch
// of the agent's table.
type stepColumns struct {
	mem  memory.Allocator
	sh   *shape
	rows int // capacity
	n    int // rows held
	// noObs leaves the observations out: a benchmark's measure of their cost.
	noObs bool
	// dicts are the dictionaries of the rows' strings, set when the batch is handed
	// to the flusher.
	dicts dicts

	trial, episode, index, agentID, parentID, span vec[int32]
	tick                                           vec[int64]
	parentValid                                    bools
	start, acting, term, trunc                     bools
	obs                                            vec[float32]
	actInt, actI                                   vec[int64] // Discrete; MultiDiscrete and MultiBinary
	actF                                           vec[float32]
	actValid                                       bools
	actValuesValid                                 bitmap
	mask, maskValid                                bools
	maskValuesValid                                bitmap
	reward                                         vec[float32]

	// reward_sources: srcOff[i] is where row i's sources begin.
	srcOff vec[int32]
	srcIdx vec[int32]
	srcVal vec[float32]

	// messages: msgOff[i] is where row i's messages begin.
	msgOff         vec[int32]
	msgFrom, msgTo byteStrings
	msgPay         byteStrings
	msgSent        vec[int64]
	nmsg           int
}

// newStepColumns takes the buffers of rows rows of sh's steps from mem.
func newStepColumns(mem memory.Allocator, sh *shape, rows int) *stepColumns {
	c := &stepColumns{mem: mem, sh: sh, rows: rows}
	for _, v := range []*vec[int32]{&c.trial, &c.episode, &c.index, &c.agentID, &c.parentID, &c.span} {
		v.full(mem, rows)
	}
	c.tick.full(mem, rows)
	for _, b := range []*bools{&c.parentValid, &c.start, &c.acting, &c.term, &c.trunc, &c.actValid} {
		b.alloc(mem, rows)
	}
	c.obs.full(mem, rows*sh.obsDim)
	switch {
	case sh.actFloats:
		c.actF.full(mem, rows*sh.actDim)
		c.actValuesValid.alloc(mem, rows*sh.actDim)
	case sh.actInts:
		c.actI.full(mem, rows*sh.actDim)
		c.actValuesValid.alloc(mem, rows*sh.actDim)
	default:
		c.actInt.full(mem, rows)
	}
	if sh.maskLen > 0 {
		c.mask.alloc(mem, rows*sh.maskLen)
		c.maskValid.alloc(mem, rows)
		c.maskValuesValid.alloc(mem, rows*sh.maskLen)
	}
	c.reward.full(mem, rows)
	c.srcOff.full(mem, rows+1)
	c.srcIdx.reserve(mem, rows)
	c.srcVal.reserve(mem, rows)
	c.msgOff.full(mem, rows+1)
	c.reset()
	return c
}

// reset empties the columns for the next batch; their buffers stay.
func (c *stepColumns) reset() {
	c.n, c.nmsg = 0, 0
	c.srcOff.s[0], c.msgOff.s[0] = 0, 0
	c.srcIdx.s, c.srcVal.s = c.srcIdx.s[:0], c.srcVal.s[:0]
	c.msgFrom.reset(c.mem)
	c.msgTo.reset(c.mem)
	c.msgPay.reset(c.mem)
	c.msgSent.s = c.msgSent.s[:0]
}

func (c *stepColumns) full() bool { return c.n == c.rows }

// ids are the dictionary indices of a row's strings.
type ids struct {
	trial, agent, parent int32 // parent: -1 for none
}

// append adds step s, whose dictionary indices are id, with its sources' indices
// from src. check(s) must have passed and the columns must not be full. It stores
// each value where it goes and no more: the bitmaps are packed, and the nulls
// counted, when the batch is built.
func (c *stepColumns) append(s *event.StepEvent, id ids, src *dict.Strings) {
	i := c.n
	sh := c.sh
	c.trial.s[i] = id.trial
	c.episode.s[i] = int32(s.Episode)
	c.tick.s[i] = int64(s.Tick)
	c.index.s[i] = int32(s.Index)
	c.agentID.s[i] = id.agent
	c.parentID.s[i] = max(id.parent, 0)
	c.parentValid.vals.s[i] = b2u(id.parent >= 0)
	c.start.vals.s[i] = b2u(s.Start)
	c.acting.vals.s[i] = b2u(s.Acting)
	if !c.noObs {
		copy(c.obs.s[i*sh.obsDim:(i+1)*sh.obsDim], s.Obs)
	}

	c.actValid.vals.s[i] = b2u(!s.Start)
	switch d := sh.actDim; {
	case sh.actFloats:
		vals := c.actF.s[i*d : (i+1)*d]
		if s.Start {
			clear(vals)
		} else {
			copy(vals, s.Action.Floats)
		}
	case sh.actInts:
		vals := c.actI.s[i*d : (i+1)*d]
		if s.Start {
			clear(vals)
		} else {
			copy(vals, s.Action.Ints)
		}
	default:
		if s.Start {
			c.actInt.s[i] = 0
		} else {
			c.actInt.s[i] = s.Action.Int
		}
	}
	if m := sh.maskLen; m > 0 {
		vals := c.mask.vals.s[i*m : (i+1)*m]
		if s.Mask == nil {
			clear(vals)
		} else {
			copy(vals, boolBytes(s.Mask))
		}
		c.maskValid.vals.s[i] = b2u(s.Mask != nil)
	}
	c.reward.s[i] = float32(s.Reward)

	// The sources' columns grow together, by the row's sources at once: a check of
	// their room, not a call to push per value.
	n, k := len(c.srcIdx.s), len(s.Sources)
	if n+k > cap(c.srcIdx.s) || n+k > cap(c.srcVal.s) {
		c.srcIdx.reserve(c.mem, n+k)
		c.srcVal.reserve(c.mem, n+k)
	}
	c.srcIdx.s, c.srcVal.s = c.srcIdx.s[:n+k], c.srcVal.s[:n+k]
	idx, val := c.srcIdx.s[n:], c.srcVal.s[n:]
	for j := range s.Sources {
		r := &s.Sources[j]
		idx[j], val[j] = src.ID(r.Source), float32(r.Value)
	}
	c.srcOff.s[i+1] = int32(n + k)

	c.term.vals.s[i] = b2u(s.Terminated)
	c.trunc.vals.s[i] = b2u(s.Truncated)
	c.span.s[i] = int32(s.SpanTicks)

	for k := range s.Messages {
		m := &s.Messages[k]
		c.msgFrom.pushString(c.mem, m.From)
		c.msgTo.pushString(c.mem, m.To)
		c.msgPay.push(c.mem, m.Payload)
		c.msgSent.push(c.mem, int64(m.Sent))
	}
	c.nmsg += len(s.Messages)
	c.msgOff.s[i+1] = int32(c.nmsg)
	c.n++
}

// size is the size of the rows held, in bytes of column buffers.
func (c *stepColumns) size() int64 {
	n, sh := int64(c.n), c.sh
	fixed := 6*4 + 8 + 4 + 2*4 // int32 columns, tick, reward, the list offsets
	size := n*int64(fixed) + n*int64(sh.obsDim*4) + n*int64(sh.actDim*8) + n*int64(sh.maskLen)/8 + n*6/8
	size += int64(len(c.srcIdx.s)) * 8
	size += int64(len(c.msgFrom.data.s) + len(c.msgTo.data.s) + len(c.msgPay.data.s) + c.nmsg*(3*4+8))
	return size
}

// dicts are the dictionaries of the string columns of a batch.
type dicts struct {
	trial, agent, parent, source arrow.Array
}

func (d *dicts) release() {
	for _, a := range []arrow.Array{d.trial, d.agent, d.parent, d.source} {
		if a != nil {
			a.Release()
		}
	}
	*d = dicts{}
}

// record builds the record batch of the rows held, of schema (the agent's fields),
// over the columns and their dictionaries. The batch is valid until the next append
// or reset; the caller releases it.
func (c *stepColumns) record(schema *arrow.Schema) arrow.RecordBatch {
	n, sh, ds := c.n, c.sh, c.dicts
	i32 := arrow.PrimitiveTypes.Int32
	cols := make([]*array.Data, 0, schema.NumFields())
	prim := func(t arrow.DataType, buf *memory.Buffer) {
		cols = append(cols, array.NewData(t, n, []*memory.Buffer{nil, buf}, nil, 0, 0))
	}
	boolean := func(b *bools) {
		bits, _ := b.pack(n)
		prim(arrow.FixedWidthTypes.Boolean, bits)
	}
	// validity packs b and returns the bitmap, nil when no value is null, and the
	// number of nulls.
	validity := func(b *bools) (*memory.Buffer, int) {
		bits, nulls := b.pack(n)
		if nulls == 0 {
			return nil, 0
		}
		return bits, nulls
	}
	dict := func(idx *vec[int32], valid *memory.Buffer, nulls int, values arrow.Array) {
		cols = append(cols, array.NewDataWithDictionary(dictString, n, []*memory.Buffer{valid, idx.buffer(n)}, nulls, 0, values.Data().(*array.Data)))
	}

	dict(&c.trial, nil, 0, ds.trial)
	prim(i32, c.episode.buffer(n))
	prim(arrow.PrimitiveTypes.Int64, c.tick.buffer(n))
	prim(i32, c.index.buffer(n))
	dict(&c.agentID, nil, 0, ds.agent)
	parentValid, parentNulls := validity(&c.parentValid)
	dict(&c.parentID, parentValid, parentNulls, ds.parent)
	boolean(&c.start)
	boolean(&c.acting)

	obsV := array.NewData(arrow.PrimitiveTypes.Float32, n*sh.obsDim, []*memory.Buffer{nil, c.obs.buffer(n * sh.obsDim)}, nil, 0, 0)
	cols = append(cols, array.NewData(schema.Field(colObs).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{obsV}, 0, 0))
	obsV.Release()

	actValid, actNulls := validity(&c.actValid)
	switch d := sh.actDim; {
	case !sh.actFloats && !sh.actInts:
		cols = append(cols, array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{actValid, c.actInt.buffer(n)}, nil, actNulls, 0))
	default:
		var vals, valsValid *memory.Buffer
		var t arrow.DataType = arrow.PrimitiveTypes.Int64
		if sh.actFloats {
			vals, t = c.actF.buffer(n*d), arrow.PrimitiveTypes.Float32
		} else {
			vals = c.actI.buffer(n * d)
		}
		if actNulls > 0 {
			valsValid = repeatBits(c.actValuesValid.s, c.actValid.vals.s[:n], d)
		}
		child := array.NewData(t, n*d, []*memory.Buffer{valsValid, vals}, nil, actNulls*d, 0)
		cols = append(cols, array.NewData(sh.actType, n, []*memory.Buffer{actValid}, []arrow.ArrayData{child}, actNulls, 0))
		child.Release()
	}
	if m := sh.maskLen; m > 0 {
		maskValid, maskNulls := validity(&c.maskValid)
		var valsValid *memory.Buffer
		if maskNulls > 0 {
			valsValid = repeatBits(c.maskValuesValid.s, c.maskValid.vals.s[:n], m)
		}
		bits, _ := c.mask.pack(n * m)
		child := array.NewData(arrow.FixedWidthTypes.Boolean, n*m, []*memory.Buffer{valsValid, bits}, nil, maskNulls*m, 0)
		cols = append(cols, array.NewData(schema.Field(colMask).Type, n, []*memory.Buffer{maskValid}, []arrow.ArrayData{child}, maskNulls, 0))
		child.Release()
	}
	prim(arrow.PrimitiveTypes.Float32, c.reward.buffer(n))

	nsrc := len(c.srcIdx.s)
	src := array.NewDataWithDictionary(dictString, nsrc, []*memory.Buffer{nil, c.srcIdx.buffer(nsrc)}, 0, 0, ds.source.Data().(*array.Data))
	val := array.NewData(arrow.PrimitiveTypes.Float32, nsrc, []*memory.Buffer{nil, c.srcVal.buffer(nsrc)}, nil, 0, 0)
	st := array.NewData(sourceType, nsrc, []*memory.Buffer{nil}, []arrow.ArrayData{src, val}, 0, 0)
	cols = append(cols, array.NewData(sourcesType, n, []*memory.Buffer{nil, c.srcOff.buffer(n + 1)}, []arrow.ArrayData{st}, 0, 0))
	src.Release()
	val.Release()
	st.Release()

	boolean(&c.term)
	boolean(&c.trunc)
	prim(i32, c.span.buffer(n))

	k := c.nmsg
	from := c.msgFrom.arrayData(arrow.BinaryTypes.String, k)
	to := c.msgTo.arrayData(arrow.BinaryTypes.String, k)
	pay := c.msgPay.arrayData(arrow.BinaryTypes.Binary, k)
	sent := array.NewData(arrow.PrimitiveTypes.Int64, k, []*memory.Buffer{nil, c.msgSent.buffer(k)}, nil, 0, 0)
	ms := array.NewData(messageType, k, []*memory.Buffer{nil}, []arrow.ArrayData{from, to, pay, sent}, 0, 0)
	msgT := schema.Field(schema.NumFields() - 1).Type
	cols = append(cols, array.NewData(msgT, n, []*memory.Buffer{nil, c.msgOff.buffer(n + 1)}, []arrow.ArrayData{ms}, 0, 0))
	for _, r := range []*array.Data{from, to, pay, sent, ms} {
		r.Release()
	}

	arrs := make([]arrow.Array, len(cols))
	for i, cd := range cols {
		arrs[i] = array.MakeFromData(cd)
		cd.Release()
	}
	rec := array.NewRecordBatch(schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// recycle lets go of the batch's dictionaries and empties the columns.
func (c *stepColumns) recycle() {
	c.dicts.release()
	c.reset()
}

// free gives the buffers back to the allocator.
func (c *stepColumns) free() {
	c.dicts.release()
	mem := c.mem
	for _, v := range []*vec[int32]{&c.trial, &c.episode, &c.index, &c.agentID, &c.parentID, &c.span, &c.srcOff, &c.srcIdx, &c.msgOff} {
		v.free(mem)
	}
	for _, v := range []*vec[float32]{&c.obs, &c.actF, &c.reward, &c.srcVal} {
		v.free(mem)
	}
	for _, v := range []*vec[int64]{&c.tick, &c.actInt, &c.actI, &c.msgSent} {
		v.free(mem)
	}
	for _, b := range []*bools{&c.parentValid, &c.start, &c.acting, &c.term, &c.trunc, &c.actValid, &c.mask, &c.maskValid} {
		b.free(mem)
	}
	for _, b := range []*bitmap{&c.actValuesValid, &c.maskValuesValid} {
		b.free(mem)
	}
	for _, s := range []*byteStrings{&c.msgFrom, &c.msgTo, &c.msgPay} {
		s.free(mem)
	}
}

// The columns of the trials, episodes and rewards tables grow as rows come (a row of
// the trials table holds the JSON of the agents' spaces) and keep their buffers from
// batch to batch, as the steps' do.

// sideCol is a column of a side table.
type sideCol interface {
	// arrayData builds the array data of the column's n values, of type t, over its
	// buffers.
	arrayData(t arrow.DataType, n int) *array.Data
	// addNull appends a null (an empty list, for a list column).
	addNull()
	reset()
	free(mem memory.Allocator)
}

// newSideCol returns an empty column of type t, one of the types of the side
// tables' fields.
func newSideCol(mem memory.Allocator, t arrow.DataType) sideCol {
	switch t.ID() {
	case arrow.STRING, arrow.BINARY:
		return newStrCol(mem)
	case arrow.INT32:
		return newNumCol[int32](mem)
	case arrow.INT64:
		return newNumCol[int64](mem)
	case arrow.UINT64:
		return newNumCol[uint64](mem)
	case arrow.FLOAT32:
		return newNumCol[float32](mem)
	case arrow.FLOAT64:
		return newNumCol[float64](mem)
	case arrow.BOOL:
		return newBoolCol(mem)
	case arrow.LIST:
		return newReturnsCol(mem)
	}
	panic("datalog: no side column of type " + t.String())
}

// validity is the validity bitmap of a column that grows. Its bits are written from
// the column's first null on: until then every value is valid, which a column
// without a bitmap says (buffer returns none), so that the values of a column
// without nulls, as most of the side tables' are, cost no bit each.
type validity struct {
	bits  bitmap
	nulls int
}

// push sets the validity of value i, the column's next: inlined, it costs a valid
// value of a column without nulls a test.
func (v *validity) push(mem memory.Allocator, i int, ok bool) {
	if !ok || v.nulls > 0 {
		v.put(mem, i, ok)
	}
}

// put is push past a column's valid values before its first null.
func (v *validity) put(mem memory.Allocator, i int, ok bool) {
	v.bits.put(mem, i, ok)
	if !ok {
		if v.nulls == 0 {
			// The column's first null: the values before it are valid.
			bitutil.SetBitsTo(v.bits.s, 0, int64(i), true)
		}
		v.nulls++
	}
}

// buffer returns the bitmap of n values, nil when none is null.
func (v *validity) buffer(n int) *memory.Buffer {
	if v.nulls == 0 {
		return nil
	}
	return v.bits.buffer(n)
}

// strCol is a column of strings (utf8 or binary) that may hold nulls. A row keeps
// the string itself, which Go never changes; its bytes are copied into the column's
// buffers when the batch is built, on the flusher (a row of the trials table holds
// the JSON of the agents' spaces, a kilobyte or more).
type strCol struct {
	mem   memory.Allocator
	vals  []string
	valid validity
	bytes byteStrings
}

func newStrCol(mem memory.Allocator) *strCol {
	c := &strCol{mem: mem}
	c.bytes.reset(mem)
	return c
}

func (c *strCol) len() int { return len(c.vals) }

// add appends s, or a null.
func (c *strCol) add(s string, null bool) {
	c.valid.push(c.mem, len(c.vals), !null)
	if null {
		s = ""
	}
	c.vals = append(c.vals, s)
}

func (c *strCol) addNull() { c.add("", true) }

func (c *strCol) reset() {
	clear(c.vals) // let go of the strings
	c.vals = c.vals[:0]
	c.valid.nulls = 0
}

func (c *strCol) arrayData(t arrow.DataType, n int) *array.Data {
	c.bytes.reset(c.mem)
	for _, s := range c.vals[:n] {
		c.bytes.pushString(c.mem, s)
	}
	return array.NewData(t, n, []*memory.Buffer{c.valid.buffer(n), c.bytes.off.buffer(n + 1), c.bytes.data.buffer(len(c.bytes.data.s))}, nil, c.valid.nulls, 0)
}

func (c *strCol) free(mem memory.Allocator) {
	c.reset()
	c.bytes.free(mem)
	c.valid.bits.free(mem)
}

// numCol is a column of numbers that may hold nulls.
type numCol[T colElem] struct {
	mem   memory.Allocator
	vals  vec[T]
	valid validity
}

func newNumCol[T colElem](mem memory.Allocator) *numCol[T] { return &numCol[T]{mem: mem} }

// add appends x, or a null.
func (c *numCol[T]) add(x T, null bool) {
	c.valid.push(c.mem, len(c.vals.s), !null)
	if null {
		x = 0
	}
	c.vals.push(c.mem, x)
}

func (c *numCol[T]) addNull() { c.add(0, true) }

func (c *numCol[T]) reset() {
	c.vals.s = c.vals.s[:0]
	c.valid.nulls = 0
}

func (c *numCol[T]) arrayData(t arrow.DataType, n int) *array.Data {
	return array.NewData(t, n, []*memory.Buffer{c.valid.buffer(n), c.vals.buffer(n)}, nil, c.valid.nulls, 0)
}

func (c *numCol[T]) free(mem memory.Allocator) {
	c.vals.free(mem)
	c.valid.bits.free(mem)
}

// boolCol is a column of booleans that may hold nulls.
type boolCol struct {
	mem   memory.Allocator
	vals  bitmap // the values as bits
	valid validity
	n     int
}

func newBoolCol(mem memory.Allocator) *boolCol { return &boolCol{mem: mem} }

// add appends v, or a null.
func (c *boolCol) add(v, null bool) {
	c.valid.push(c.mem, c.n, !null)
	c.vals.put(c.mem, c.n, v && !null)
	c.n++
}

func (c *boolCol) addNull() { c.add(false, true) }

func (c *boolCol) reset() {
	c.n, c.valid.nulls = 0, 0
}

func (c *boolCol) arrayData(t arrow.DataType, n int) *array.Data {
	var bits *memory.Buffer
	if n > 0 {
		bits = c.vals.buffer(n)
	}
	return array.NewData(t, n, []*memory.Buffer{c.valid.buffer(n), bits}, nil, c.valid.nulls, 0)
}

func (c *boolCol) free(mem memory.Allocator) {
	c.vals.free(mem)
	c.valid.bits.free(mem)
}

// returnsCol is the returns column of the episodes table: a list of (agent, value)
// structs per row.
type returnsCol struct {
	mem   memory.Allocator
	off   vec[int32]
	agent *strCol
	value *numCol[float64]
}

func newReturnsCol(mem memory.Allocator) *returnsCol {
	c := &returnsCol{mem: mem, agent: newStrCol(mem), value: newNumCol[float64](mem)}
	c.reset()
	return c
}

// push adds a return to the row being written; end ends the row.
func (c *returnsCol) push(agent string, value float64) {
	c.agent.add(agent, false)
	c.value.add(value, false)
}

func (c *returnsCol) end() { c.off.push(c.mem, int32(c.agent.len())) }

func (c *returnsCol) addNull() { c.end() }

func (c *returnsCol) reset() {
	c.off.s = c.off.s[:0]
	c.off.push(c.mem, 0)
	c.agent.reset()
	c.value.reset()
}

func (c *returnsCol) arrayData(t arrow.DataType, n int) *array.Data {
	k := c.agent.len()
	st := t.(*arrow.ListType).Elem().(*arrow.StructType)
	agent := c.agent.arrayData(st.Field(0).Type, k)
	value := c.value.arrayData(st.Field(1).Type, k)
	s := array.NewData(st, k, []*memory.Buffer{nil}, []arrow.ArrayData{agent, value}, 0, 0)
	agent.Release()
	value.Release()
	d := array.NewData(t, n, []*memory.Buffer{nil, c.off.buffer(n + 1)}, []arrow.ArrayData{s}, 0, 0)
	s.Release()
	return d
}

func (c *returnsCol) free(mem memory.Allocator) {
	c.off.free(mem)
	c.agent.free(mem)
	c.value.free(mem)
}

// sideBatch is a batch of a side table: its columns, in the schema's order.
type sideBatch struct {
	mem  memory.Allocator
	cols []sideCol
	n    int
}

func newSideBatch(mem memory.Allocator, fields []arrow.Field) *sideBatch {
	b := &sideBatch{mem: mem}
	for _, f := range fields {
		b.cols = append(b.cols, newSideCol(mem, f.Type))
	}
	return b
}

func (b *sideBatch) str(i int) *strCol          { return b.cols[i].(*strCol) }
func (b *sideBatch) i32(i int) *numCol[int32]   { return b.cols[i].(*numCol[int32]) }
func (b *sideBatch) i64(i int) *numCol[int64]   { return b.cols[i].(*numCol[int64]) }
func (b *sideBatch) u64(i int) *numCol[uint64]  { return b.cols[i].(*numCol[uint64]) }
func (b *sideBatch) f32(i int) *numCol[float32] { return b.cols[i].(*numCol[float32]) }
func (b *sideBatch) boolean(i int) *boolCol     { return b.cols[i].(*boolCol) }
func (b *sideBatch) returns(i int) *returnsCol  { return b.cols[i].(*returnsCol) }

// record builds the record batch of the rows held over the columns; it is valid
// until the next row or recycle.
func (b *sideBatch) record(schema *arrow.Schema) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(b.cols))
	for i, c := range b.cols {
		d := c.arrayData(schema.Field(i).Type, b.n)
		arrs[i] = array.MakeFromData(d)
		d.Release()
	}
	rec := array.NewRecordBatch(schema, arrs, int64(b.n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func (b *sideBatch) recycle() {
	for _, c := range b.cols {
		c.reset()
	}
	b.n = 0
}

func (b *sideBatch) free() {
	for _, c := range b.cols {
		c.free(b.mem)
	}
}
