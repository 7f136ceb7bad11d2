package datalog

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bufferPool is the memory.Allocator that a writer's IPC encoders take their buffers
// from: the compressed copies of a batch's columns, each as large as the column, made
// afresh for every batch. It keeps the buffers given back, by power-of-two size
// class, and hands them out again zeroed, so that a batch reuses the memory of the
// one before rather than taking new memory from the heap (and having the runtime
// zero it, and collect it). It takes its memory from mem and gives it all back in
// release. It is safe for concurrent use.
type bufferPool struct {
	mem memory.Allocator

	mu   sync.Mutex
	free [maxPoolClass + 1][][]byte
	kept int // bytes held in free
}

const (
	// minPoolClass and maxPoolClass bound the size classes the pool keeps: smaller
	// buffers are cheap to make, larger ones go straight to mem.
	minPoolClass = 12 // 4 KiB
	maxPoolClass = 30 // 1 GiB
	// poolPerClass is how many buffers of a class the pool keeps: an encoder holds
	// the compressed copies of all of a batch's buffers at once, many of a size.
	poolPerClass = 64
)

func newBufferPool(mem memory.Allocator) *bufferPool { return &bufferPool{mem: mem} }

// class returns the size class of a buffer of n bytes: the exponent of the power of
// two it is rounded up to; ok is false for sizes the pool does not keep.
func class(n int) (c int, ok bool) {
	c = max(bits.Len(uint(n-1)), minPoolClass)
	return c, n > 0 && c <= maxPoolClass
}

// Allocate returns size zeroed bytes.
func (p *bufferPool) Allocate(size int) []byte {
	c, ok := class(size)
	if !ok {
		return p.mem.Allocate(size)
	}
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.kept -= cap(b)
		p.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	p.mu.Unlock()
	return p.mem.Allocate(1 << c)[:size]
}

// pooled reports whether b is one of the pool's buffers: the size of a class.
func pooled(b []byte) bool {
	c, ok := class(cap(b))
	return ok && cap(b) == 1<<c
}

// Reallocate returns size bytes that begin with b's, the rest zeroed; b is given back.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if !pooled(b) {
		return p.mem.Reallocate(size, b)
	}
	if size <= cap(b) {
		n := len(b)
		b = b[:size]
		if size > n {
			clear(b[n:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes b back.
func (p *bufferPool) Free(b []byte) {
	if !pooled(b) {
		p.mem.Free(b) // not one of the pool's sizes: it came from mem as it is
		return
	}
	c, _ := class(cap(b))
	p.mu.Lock()
	if len(p.free[c]) < poolPerClass {
		p.free[c] = append(p.free[c], b[:cap(b)])
		p.kept += cap(b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.mem.Free(b[:cap(b)])
}

// release gives every buffer kept back to mem.
func (p *bufferPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, l := range p.free {
		for _, b := range l {
			p.mem.Free(b)
		}
		p.free[c] = nil
	}
	p.kept = 0
}
