package spaces_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

// Spaces bigger than this are only unmarshaled by the fuzzers, not sampled or marshaled
// again, to keep each run fast.
const fuzzMaxDim = 1 << 12

func FuzzSpecJSON(f *testing.F) {
	for _, ns := range allSpaces() {
		data, err := spaces.Marshal(ns.space)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		`{"type":"discrete","n":3}`,
		`{"type":"discrete","n":67108864,"start":-9223372036854775808}`,
		`{"type":"box","shape":[2,2],"low":0,"high":"inf"}`,
		`{"type":"box","shape":[3],"dtype":"float32","low":["-inf",0,1e-45],"high":[3.4028235e+38,"inf",1]}`,
		`{"type":"box","shape":[67108864],"low":0,"high":1}`,
		`{"type":"box","shape":[1000000000,1000000000],"low":0,"high":1}`,
		`{"type":"multi_binary","shape":[2,1,3]}`,
		`{"type":"text","min_length":2,"max_length":4,"charset":"αβ\u00e9\"\\"}`,
		`{"type":"text","min_length":0,"max_length":3}`,
		`{"type":"dict","spaces":[{"key":"a","space":{"type":"tuple","spaces":[]}},{"key":"b","space":{"type":"dict","spaces":[]}}]}`,
		nestedTuple(spaces.MaxDepth),
		nestedTuple(spaces.MaxDepth + 1),
		`{"type":"discrete","n":2,"n":2}`,
		`{"type":"box","shape":[1],"low":[1],"high":[0]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := spaces.Unmarshal(data)
		if err != nil {
			require.Nil(t, s)
			require.ErrorIs(t, err, spaces.ErrSpec)
			var se *spaces.SpecError
			require.ErrorAs(t, err, &se)
			return
		}
		require.NotNil(t, s)
		require.LessOrEqual(t, s.FlatDim(), spaces.MaxFlatDim)
		require.True(t, s.Equal(s))
		if s.FlatDim() > fuzzMaxDim {
			return
		}

		out, err := spaces.Marshal(s)
		require.NoError(t, err)
		back, err := spaces.Unmarshal(out)
		require.NoError(t, err, "%s", out)
		require.True(t, s.Equal(back), "%v != %v", s, back)
		again, err := spaces.Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again), "marshaling is canonical")

		rng := rand.New(rand.NewPCG(1, 2))
		for range 5 {
			v := s.Sample(rng)
			require.NoError(t, s.Check(v), "sample %v of %v", v, s)
			require.NoError(t, back.Check(v))
			flat, err := spaces.Flatten(s, v)
			require.NoError(t, err)
			u, err := s.Unflatten(flat)
			require.NoError(t, err)
			require.Equal(t, v, u)
		}
	})
}

func FuzzFlattenRoundTrip(f *testing.F) {
	f.Add([]byte{0, 3, 2}, uint64(1), []byte{2})
	f.Add([]byte{1, 2, 1, 2, 3, 1}, uint64(7), []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0})
	f.Add([]byte{1, 1, 2, 0, 6, 0}, uint64(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{2, 3, 1, 2, 3}, uint64(5), []byte{0, 1, 2})
	f.Add([]byte{3, 2, 2, 1}, uint64(9), []byte{1, 0, 1, 1, 0, 1})
	f.Add([]byte{4, 3, 0, 3, 1, 1, 6, 0, 2, 2}, uint64(11), []byte{255, 0, 3})
	f.Add([]byte{5, 2, 4, 2, 0, 2, 6, 1, 3, 2}, uint64(13), []byte{})
	f.Add([]byte{6, 1, 2, 1}, uint64(17), []byte{0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, shape []byte, seed uint64, raw []byte) {
		s := buildSpace(&byteReader{b: shape}, 0)
		require.NoError(t, spaces.Must(spaces.NewTuple(s)).Check([]any{s.Sample(rand.New(rand.NewPCG(seed, 0)))}))

		// A value from the fuzz bytes: a member, or something FlattenTo must reject.
		rd := &byteReader{b: raw}
		var v any
		if rd.next()%4 == 0 {
			v = s.Sample(rand.New(rand.NewPCG(seed, 1)))
		} else {
			v = buildValue(s, rd)
		}
		checkErr := s.Check(v)
		flat := make([]float32, s.FlatDim())
		flatErr := s.FlattenTo(flat, v)
		require.Equal(t, checkErr == nil, flatErr == nil, "Check: %v, FlattenTo: %v", checkErr, flatErr)
		if checkErr != nil {
			require.ErrorIs(t, checkErr, spaces.ErrOutside)
			require.ErrorIs(t, flatErr, spaces.ErrOutside)
		} else {
			back, err := s.Unflatten(flat)
			require.NoError(t, err)
			require.Equal(t, v, back)
		}

		// A flat vector from the fuzz bytes: if it decodes, it is the encoding of a member.
		src := make([]float32, s.FlatDim())
		for i := range src {
			switch b := rd.next(); {
			case b < 200:
				src[i] = float32(b % 4)
			default:
				src[i] = math.Float32frombits(rd.uint32())
			}
		}
		u, err := s.Unflatten(src)
		if err != nil {
			require.ErrorIs(t, err, spaces.ErrOutside)
			return
		}
		require.NoError(t, s.Check(u))
		again, err := spaces.Flatten(s, u)
		require.NoError(t, err)
		for i := range src {
			require.True(t, src[i] == again[i], "entry %d: %v != %v", i, src[i], again[i])
		}
	})
}

type byteReader struct {
	b []byte
	i int
}

func (r *byteReader) next() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *byteReader) uint32() uint32 {
	var buf [4]byte
	for i := range buf {
		buf[i] = r.next()
	}
	return binary.LittleEndian.Uint32(buf[:])
}

var (
	fuzzBounds   = []float32{negInf, -2, -0.5, 0, 1, 3, inf}
	fuzzCharsets = []string{"ab", "αβγ", "xyz09", ""}
)

// buildSpace derives a small valid space from bytes.
func buildSpace(r *byteReader, depth int) spaces.Space {
	kind := r.next() % 7
	if depth >= 3 && (kind == 4 || kind == 5) {
		kind = 0
	}
	dims := func(minDim int) []int {
		shape := make([]int, r.next()%3)
		for i := range shape {
			shape[i] = minDim + int(r.next()%3)
		}
		return shape
	}
	bound := func() (float32, float32) {
		a, b := fuzzBounds[int(r.next())%len(fuzzBounds)], fuzzBounds[int(r.next())%len(fuzzBounds)]
		return min(a, b), max(a, b)
	}
	switch kind {
	case 0:
		return spaces.Discrete{N: 1 + int64(r.next()%8), Start: int64(int8(r.next()))}
	case 1:
		shape := dims(0)
		if r.next()%2 == 0 {
			lo, hi := bound()
			return spaces.Must(spaces.NewBox(shape, lo, hi))
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		low, high := make([]float32, n), make([]float32, n)
		for i := range n {
			low[i], high[i] = bound()
		}
		return spaces.Must(spaces.NewBoxBounds(shape, low, high))
	case 2:
		nvec := make([]int64, r.next()%4)
		for i := range nvec {
			nvec[i] = 1 + int64(r.next()%4)
		}
		return spaces.Must(spaces.NewMultiDiscrete(nvec))
	case 3:
		return spaces.Must(spaces.NewMultiBinary(dims(1)...))
	case 4:
		entries := make([]spaces.DictEntry, r.next()%4)
		for i := range entries {
			entries[i] = spaces.DictEntry{Key: "k" + strconv.Itoa(i), Space: buildSpace(r, depth+1)}
		}
		return spaces.Must(spaces.NewDict(entries...))
	case 5:
		elems := make([]spaces.Space, r.next()%4)
		for i := range elems {
			elems[i] = buildSpace(r, depth+1)
		}
		return spaces.Must(spaces.NewTuple(elems...))
	}
	minLen := int(r.next() % 3)
	return spaces.Must(spaces.NewText(minLen, minLen+int(r.next()%4), fuzzCharsets[int(r.next())%len(fuzzCharsets)]))
}

// buildValue derives a value of the Go type s uses from bytes; it may or may not be a
// member.
func buildValue(s spaces.Space, r *byteReader) any {
	switch s := s.(type) {
	case spaces.Discrete:
		return s.Start + int64(int8(r.next()))%(s.N+1)
	case *spaces.Box:
		v := make([]float32, s.FlatDim())
		for i := range v {
			lo, hi := s.Bounds(i)
			switch b := r.next(); b % 4 {
			case 0:
				v[i] = lo
			case 1:
				v[i] = hi
			case 2:
				v[i] = fuzzBounds[int(b/4)%len(fuzzBounds)]
			default:
				v[i] = math.Float32frombits(r.uint32())
			}
		}
		return v
	case *spaces.MultiDiscrete:
		v := make([]int64, len(s.Nvec())+int(r.next()%8)/7) // sometimes one too many
		for i := range v {
			v[i] = int64(int8(r.next())) % 5
		}
		return v
	case *spaces.MultiBinary:
		v := make([]int8, s.FlatDim())
		for i := range v {
			v[i] = int8(r.next() % 3 % 2)
			if r.next() == 255 {
				v[i] = 2
			}
		}
		return v
	case *spaces.Dict:
		m := make(map[string]any, s.Len())
		for k, sub := range s.All() {
			if r.next() == 255 {
				continue // a missing key
			}
			m[k] = buildValue(sub, r)
		}
		return m
	case *spaces.Tuple:
		v := make([]any, s.Len())
		for i, sub := range s.All() {
			v[i] = buildValue(sub, r)
		}
		return v
	case *spaces.Text:
		runes := []rune(s.Charset() + "q")
		out := make([]rune, int(r.next()%8))
		for i := range out {
			out[i] = runes[int(r.next())%len(runes)]
		}
		return string(out)
	}
	panic(errors.New("unknown space"))
}
