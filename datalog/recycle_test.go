package datalog

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recycler hands a freed buffer out again for a size of its class, gives its
// buffers back to the allocator beneath at close, and frees straight to it after.
func TestRecycler(t *testing.T) {
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	for _, tc := range []struct {
		name       string
		first, nxt int
		reused     bool
	}{
		{"same size", 1000, 1000, true},
		{"same class", 1000, 600, true},
		{"smallest class", 1, 64, true},
		{"larger class", 1000, 1025, false},
		{"smaller class", 1000, 500, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			r := newRecycler(mem)
			b := r.Allocate(tc.first)
			require.Len(t, b, tc.first)
			r.Free(b)
			c := r.Allocate(tc.nxt)
			require.Len(t, c, tc.nxt)
			assert.Equal(t, tc.reused, addr(b) == addr(c))
			r.Free(c)
			r.close()
			mem.AssertSize(t, 0)
			d := r.Allocate(tc.first)
			r.Free(d)
			mem.AssertSize(t, 0)
		})
	}
}

// Reallocate keeps a buffer that has room and moves one that has not, its bytes
// copied.
func TestRecyclerReallocate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r := newRecycler(mem)
	b := r.Allocate(100)
	copy(b, "abc")
	b = r.Reallocate(128, b)
	require.Len(t, b, 128)
	b = r.Reallocate(1000, b)
	require.Len(t, b, 1000)
	assert.Equal(t, "abc", string(b[:3]))
	r.Free(b)
	r.close()
	mem.AssertSize(t, 0)
}
