package datalog

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recycler is an allocator that keeps the buffers freed to it, by size class (powers
// of two), for the next allocation of their class. A replay decompresses batches of
// much the same sizes over and over: taking each from the Go heap afresh costs their
// zeroing and the collections of the garbage they become. Its buffers come from mem,
// and go back to it at close (or at Free, past maxHeld bytes held, or after close).
// Its buffers are not zeroed: it serves the IPC reader, which overwrites every byte it
// reads into. It is safe for concurrent use.
type recycler struct {
	mem    memory.Allocator
	mu     sync.Mutex
	free   [64][][]byte
	held   int
	closed bool
}

const (
	// minClass is the smallest class: 64 bytes, the alignment of Arrow's buffers.
	minClass = 6
	// maxHeld caps the bytes a recycler keeps.
	maxHeld = 64 << 20
)

func newRecycler(mem memory.Allocator) *recycler { return &recycler{mem: mem} }

// class returns the class of a buffer of size bytes: the least c with 1<<c >= size.
func class(size int) int { return max(bits.Len(uint(size-1)), minClass) }

func (r *recycler) Allocate(size int) []byte {
	if size <= 0 {
		return r.mem.Allocate(size)
	}
	c := class(size)
	r.mu.Lock()
	if n := len(r.free[c]); n > 0 {
		b := r.free[c][n-1]
		r.free[c][n-1] = nil
		r.free[c] = r.free[c][:n-1]
		r.held -= len(b)
		r.mu.Unlock()
		return b[:size]
	}
	r.mu.Unlock()
	// The buffer's capacity is its class's size: Free finds its class by it.
	return r.mem.Allocate(1 << c)[: size : 1<<c]
}

func (r *recycler) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

func (r *recycler) Free(b []byte) {
	n := cap(b)
	if n == 0 || n&(n-1) != 0 || n < 1<<minClass {
		r.mem.Free(b) // not one of the recycler's
		return
	}
	b = b[:n]
	r.mu.Lock()
	if r.closed || r.held+n > maxHeld {
		r.mu.Unlock()
		r.mem.Free(b)
		return
	}
	c := class(n)
	r.free[c] = append(r.free[c], b)
	r.held += n
	r.mu.Unlock()
}

// close gives the buffers kept back to mem; buffers freed later go straight back.
func (r *recycler) close() {
	r.mu.Lock()
	free := r.free
	r.free, r.held, r.closed = [64][][]byte{}, 0, true
	r.mu.Unlock()
	for _, bs := range free {
		for _, b := range bs {
			r.mem.Free(b)
		}
	}
}

var _ memory.Allocator = (*recycler)(nil)
