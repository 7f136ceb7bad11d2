package vector

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// How a worker waits for the next tick, and the caller for the workers: they read an
// atomic counter in a loop, for up to spinFor, before they block on a channel.
// Blocking costs a thread wake-up per tick, and waking an idle CPU (a futex wake; in a
// virtual machine, an interrupt to a halted virtual CPU) takes tens of microseconds,
// as long as a whole tick of a thousand cart-poles on one worker: with it, two workers
// run no faster than one. So while a vector is stepped briskly nobody blocks; when the
// caller takes longer than spinFor between ticks (a policy network's forward pass, a
// trainer's update), the workers sleep, and a wake-up is small next to that gap.
//
// The loop yields (runtime.Gosched) every yieldEvery, and no more often. Without
// yielding, two goroutines that the scheduler happened to put on one processor (a
// goroutine woken from a channel waits in the run queue of the processor of the one
// that woke it) could stay there, taking turns, while the other processor sleeps:
// Gosched hands the processor over and wakes an idle one. Yielding at every read
// instead sends the goroutines through the global run queue all the time, where one
// processor may take both.
const (
	spinFor    = 250 * time.Microsecond
	yieldEvery = 20 * time.Microsecond
	clockLoads = 1 << 9 // reads between looks at the clock
)

// grain is the number of copies claimed at a time: a multiple of 64, so that two
// goroutines never write the flags of one cache line of a []bool (see Env.termW).
const grain = 64

// spin reports whether cond holds, trying for spinFor.
func spin(cond func() bool) bool {
	var start, yielded time.Time
	for r := 1; ; r++ {
		if cond() {
			return true
		}
		if r%clockLoads != 0 {
			continue
		}
		now := time.Now()
		switch {
		case start.IsZero():
			start, yielded = now, now
		case now.Sub(start) > spinFor:
			return cond()
		case now.Sub(yielded) > yieldEvery:
			runtime.Gosched()
			yielded = now
		}
	}
}

// pool runs a function over the copies, split into contiguous ranges, one per worker:
// worker 0 is the calling goroutine, the others goroutines started once by newPool and
// stopped by close. One call (do) is one fan-out and fan-in: the caller publishes a
// new epoch and works; each worker, spinning on the epoch, works; the caller returns
// when every range is done. do allocates nothing, starts no goroutine and takes no
// lock.
//
// Working is claiming chunks of grain copies from a range's atomic cursor and running
// them: first from one's own range, from its start, then from the others'. So each
// worker steps its own range when all goes well, and the others finish the range of a
// worker that the scheduler (or the operating system, on a loaded machine) keeps
// waiting: a tick is never much slower than the synchronous one. Which goroutine steps
// a copy changes nothing in the results, since a copy writes only its own rows.
type pool struct {
	lo    []int // range w holds the copies [lo[w], lo[w+1])
	run   func(w, lo, hi int)
	state []workerState // per range and worker

	epoch   atomic.Uint64 // incremented by do to start a tick, and by close
	pending atomic.Int64  // ranges not done in the current tick
	_       [48]byte
	waiting atomic.Bool   // the caller sleeps on done
	done    chan struct{} // whoever finishes the last range wakes a sleeping caller
	quit    atomic.Bool
	exit    sync.WaitGroup
	closed  bool
	timing  *Timing // WithTiming's, or nil
}

// workerState is a range's cursor and report for the current tick, and its worker's
// sleep handshake, padded to a cache line so that workers do not write to one line.
type workerState struct {
	next      atomic.Int64 // the first copy of the range not claimed yet
	left      atomic.Int64 // copies of the range claimed or not, not done yet
	failed    atomic.Bool  // a copy of the range failed (its error is in errs)
	cancelled atomic.Bool  // the context was done before the range was finished
	asleep    atomic.Bool
	wake      chan struct{}
	_         [24]byte
}

// newPool splits n copies over w >= 1 workers (w <= n) and starts w-1 goroutines.
// The ranges are as even as can be, their bounds rounded down to multiples of 8
// copies when every worker gets 8 or more, so that the workers' rows of a []float64
// (and of observations of even length) do not share cache lines.
func newPool(n, w int, run func(w, lo, hi int)) *pool {
	p := &pool{lo: make([]int, w+1), run: run, state: make([]workerState, w), done: make(chan struct{}, 1)}
	for j := range w + 1 {
		p.lo[j] = j * n / w
		if n >= 8*w && j < w {
			p.lo[j] &^= 7
		}
	}
	for j := range w {
		p.state[j].next.Store(int64(p.lo[j+1])) // nothing to claim before the first tick
	}
	for j := 1; j < w; j++ {
		p.state[j].wake = make(chan struct{}, 1)
		p.exit.Add(1)
		go p.loop(j)
	}
	return p
}

func (p *pool) loop(w int) {
	defer p.exit.Done()
	st := &p.state[w]
	seen := uint64(0)
	for {
		if !spin(func() bool { return p.epoch.Load() != seen }) {
			// Sleep, unless a tick started meanwhile; if do saw asleep, it sends on
			// wake, and the token must be taken. Then look at the epoch again.
			st.asleep.Store(true)
			if p.epoch.Load() == seen || !st.asleep.CompareAndSwap(true, false) {
				<-st.wake
			}
			continue
		}
		if p.quit.Load() {
			return
		}
		// If this goroutine was held up, the chunks it claims may be of a later tick
		// than seen: running them is just as right, since do sets the cursors after
		// it sets up the tick.
		seen = p.epoch.Load()
		p.work(w)
	}
}

// do runs p.run over every range and returns when all are done. The writes made
// before do are visible to the workers, and theirs to the caller after do returns
// (the atomic cursors, epoch and pending counter order them).
func (p *pool) do() {
	if t := p.timing; t != nil {
		start := time.Now()
		defer func() { t.Parallel += time.Since(start); t.Phases++ }()
	}
	if len(p.state) == 1 {
		st := &p.state[0]
		st.failed.Store(false)
		st.cancelled.Store(false)
		p.run(0, p.lo[0], p.lo[1])
		return
	}
	p.pending.Store(int64(len(p.state)))
	for w := range p.state {
		st := &p.state[w]
		st.failed.Store(false)
		st.cancelled.Store(false)
		st.left.Store(int64(p.lo[w+1] - p.lo[w]))
		st.next.Store(int64(p.lo[w]))
	}
	p.epoch.Add(1)
	p.wakeAll()
	p.work(0)
	p.wait()
}

// work claims and runs chunks, of range w first, then of the others.
func (p *pool) work(w int) {
	for k := range len(p.state) {
		p.chunks((w + k) % len(p.state))
	}
}

// chunks claims and runs chunks of range w until none is left to claim. Whoever runs
// the range's last copies counts the range done; the last range done wakes the caller
// if it sleeps. A goroutine may be held up between the two steps until the caller
// waits in the next tick: the caller then wakes early, and wait, seeing pending,
// sleeps again.
func (p *pool) chunks(w int) {
	st := &p.state[w]
	hi := int64(p.lo[w+1])
	for {
		start := st.next.Add(grain) - grain
		if start >= hi {
			return
		}
		end := min(start+grain, hi)
		p.run(w, int(start), int(end))
		if st.left.Add(start-end) == 0 && p.pending.Add(-1) == 0 && p.waiting.CompareAndSwap(true, false) {
			p.done <- struct{}{}
			runtime.Gosched() // the caller waits in this processor's run queue
		}
	}
}

// wakeAll wakes the workers that sleep.
func (p *pool) wakeAll() {
	for w := 1; w < len(p.state); w++ {
		if st := &p.state[w]; st.asleep.CompareAndSwap(true, false) {
			st.wake <- struct{}{}
		}
	}
}

// wait returns when every range is done: when it reads pending at 0, which orders the
// workers' writes before the caller's reads. Every token on done matches one
// CompareAndSwap of waiting from true, so the channel never holds more than one; a
// token may come from the last range of the previous tick (see chunks), hence the
// loop.
func (p *pool) wait() {
	for {
		if spin(p.idle) {
			return
		}
		p.waiting.Store(true)
		if p.pending.Load() != 0 || !p.waiting.CompareAndSwap(true, false) {
			<-p.done
		}
	}
}

// idle reports whether the ranges of the current tick are done.
func (p *pool) idle() bool { return p.pending.Load() == 0 }

// outcome reports whether a copy failed and whether a worker stopped early on the
// context in the last do.
func (p *pool) outcome() (failed, cancelled bool) {
	for w := range p.state {
		failed = failed || p.state[w].failed.Load()
		cancelled = cancelled || p.state[w].cancelled.Load()
	}
	return failed, cancelled
}

// close stops the worker goroutines and waits for them to exit. It is idempotent.
func (p *pool) close() {
	if p.closed {
		return
	}
	p.closed = true
	p.quit.Store(true)
	p.epoch.Add(1)
	p.wakeAll()
	p.exit.Wait()
}

// each calls f for the copies lo to hi-1 of range w, checking done before each copy.
// A copy's error is stored in errs[i] (which stays untouched for copies that
// succeed); a panic is recovered into errs[i] as a *CopyError with a *PanicError, and
// the loop goes on with the next copy. It is the body of every vector's run.
func each(p *pool, w, lo, hi int, done <-chan struct{}, errs []error, op Op, f func(i int) error) {
	for i := lo; i < hi; {
		i = eachFrom(p, w, i, hi, done, errs, op, f)
	}
}

// eachFrom runs copies from i until hi, or until one panics; it returns where to go on.
// One deferred recover per call, not per copy, keeps the loop cheap.
func eachFrom(p *pool, w, i, hi int, done <-chan struct{}, errs []error, op Op, f func(i int) error) (next int) {
	defer func() {
		if r := recover(); r != nil {
			errs[i] = panicError(i, op, r)
			p.state[w].failed.Store(true)
			next = i + 1
		}
	}()
	st := &p.state[w]
	for ; i < hi; i++ {
		if done != nil {
			select {
			case <-done:
				st.cancelled.Store(true)
				return hi
			default:
			}
		}
		if err := f(i); err != nil {
			errs[i] = err
			st.failed.Store(true)
		}
	}
	return hi
}

// panicError is the error of copy i, which panicked with r during op.
func panicError(i int, op Op, r any) error {
	return &CopyError{Copy: i, Op: op, Err: &PanicError{Value: r, Stack: debug.Stack()}}
}
