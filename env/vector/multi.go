package vector

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"go.uber.org/multierr"
)

// Group is the batch of one agent name for one tick of a Multi: the copies whose
// acting agent has this name, with their observations and masks row after row (the
// embedded Batch), the acting agent id of each row, and the actions to fill.
//
// A Group's slices belong to the Multi and stay valid until its next Reset or Step.
// Write the elements of Actions; do not change the Group's fields.
type Group struct {
	Batch
	// Agent is the agent name; Index its position in Multi.Agents.
	Agent string
	Index int
	// IDs holds the acting agent id of each row ("motion_3").
	IDs []string
	// Actions holds the action of each row, for the next Step: Act fills it, or the
	// caller does.
	Actions []agent.RawAction
}

// Multi steps N copies of a turn-taking multi-agent environment (env.MultiAgent, a
// hierarchical environment's hrl runtime) in lockstep. In each copy one agent acts per
// tick, not necessarily the same agent in every copy, so Multi batches per agent name:
// Groups holds, for each agent, the copies it acts in, and one batched policy call per
// name (Act) chooses all their actions. Step then steps every copy with its action,
// resets each copy whose episode is over in the same step, keeping its final reports,
// and regroups. Create it with NewMulti; Close it when done if it has workers.
//
// A Multi is not safe for concurrent use: one goroutine calls its methods, whatever
// the number of workers.
type Multi struct {
	n      int
	cfg    config
	specs  []env.Spec
	names  []string
	groups []Group
	copies []multiCopy
	fns    [opGather + 1]func(i int) error
	lockstep

	// The regrouping, done on the workers (see tick): the copies are cut into chunks
	// of up to grain copies, each range's from its start (chunk c of range w is
	// chunk chunkBase[w]+c), and each chunk is stepped and gathered by one goroutine. The
	// step phase counts, per chunk, the copies each agent acts in (counts, chunk by
	// chunk, one element per agent); the caller turns the counts into each chunk's
	// first row in each group (rows, laid out alike), and the gather phase gives
	// each copy its row and copies its observation there.
	chunkBase    []int
	counts, rows []int
	// The policies that Act runs on the workers, per agent (nil for a group whose
	// policy the caller runs), and the context of that Act.
	acts   []*perCopy
	actCtx context.Context
	// Spread's function, and the first panic of one of its calls.
	spread      func(lo, hi int)
	spreadPanic atomic.Pointer[PanicError]
}

// Multi's internal phases: copying acting observations into groups (opGather), and a
// caller's function (opSpread).
const (
	opGather = OpAct + 1 + iota
	opSpread
)

// multiCopy is the state of one copy.
type multiCopy struct {
	env   env.MultiAgent
	turn  env.Turn // where the copy stands: the acting report is in it
	final env.Turn // the kept final turn, when ended
	ended bool     // the episode ended in the last Step: Stepped is final
	fresh bool     // the copy was Reset, not stepped: Stepped is the zero Turn
	info  any

	agent, row int // the acting agent's index, and the copy's row in its group
	id         string
	obs        []float32
	mask       []bool

	// The final reports of an ended episode, copied out of the environment's buffers
	// before the reset overwrites them.
	kept     []env.Report
	keptObs  []float32
	keptMask []bool
}

// NewMulti makes n copies with factory (called with 0 to n-1, in order, from the
// calling goroutine) and returns their vector; call Reset before the first Step. Every
// copy must describe the same agents in the same order, with the same observation and
// mask lengths. NewMulti reports every problem at once.
func NewMulti(n int, factory func(i int) (env.MultiAgent, error), opts ...Option) (*Multi, error) {
	cfg, err := newConfig(n, opts)
	if err != nil {
		return nil, err
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("vector: %d copies; want 1 or more", n)
	case factory == nil:
		return nil, errors.New("vector: nil factory")
	case cfg.buffers != nil:
		return nil, fmt.Errorf("%w: WithBuffers is for New; a Multi's groups change with every tick", ErrOption)
	}
	m := &Multi{n: n, cfg: cfg, copies: make([]multiCopy, n)}
	var errs []error
	for i := range n {
		e, err := factory(i)
		switch {
		case err != nil:
			errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: fmt.Errorf("factory: %w", err)})
			continue
		case e == nil:
			errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: errors.New("factory returned a nil environment")})
			continue
		}
		m.copies[i].env = e
		specs := e.Agents()
		if m.specs == nil {
			if len(specs) == 0 {
				errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: errors.New("no agents")})
				continue
			}
			for j, s := range specs {
				if s.ObservationSpace == nil {
					errs = append(errs, &CopyError{Copy: i, Op: OpReset, Err: fmt.Errorf("agent #%d %q has no observation space", j, s.Name)})
				}
			}
			m.specs = specs
			continue
		}
		if !sameAgents(m.specs, specs) {
			errs = append(errs, fmt.Errorf("%w: copy %d has agents %v; the first copy %v", ErrMismatch, i, describe(specs), describe(m.specs)))
		}
	}
	if err := multierr.Combine(errs...); err != nil {
		return nil, err
	}
	m.names = make([]string, len(m.specs))
	m.groups = make([]Group, len(m.specs))
	for j, s := range m.specs {
		m.names[j] = s.Name
		dim := s.ObservationSpace.FlatDim()
		g := Group{Batch: Batch{
			Copies: make([]int, 0, n), Obs: make([]float32, 0, n*dim),
			ObsDim: dim, MaskLen: s.MaskLen,
		}, Agent: s.Name, Index: j, IDs: make([]string, 0, n), Actions: make([]agent.RawAction, 0, n)}
		if s.MaskLen > 0 {
			g.Masks = make([]bool, 0, n*s.MaskLen)
		}
		m.groups[j] = g
	}
	m.fns[OpReset], m.fns[OpStep], m.fns[OpAct] = m.resetOne, m.stepOne, m.actOne
	m.lockstep = newLockstep(n, cfg.workers, m.run)
	m.pool.timing = cfg.timing
	m.chunkBase = make([]int, cfg.workers+1)
	for w := range cfg.workers {
		m.chunkBase[w+1] = m.chunkBase[w] + (m.pool.lo[w+1]-m.pool.lo[w]+grain-1)/grain
	}
	chunks := m.chunkBase[cfg.workers]
	m.counts, m.rows = make([]int, chunks*len(m.specs)), make([]int, chunks*len(m.specs))
	m.acts = make([]*perCopy, len(m.specs))
	return m, nil
}

func sameAgents(a, b []env.Spec) bool {
	if len(a) != len(b) {
		return false
	}
	for j := range a {
		if b[j].ObservationSpace == nil || a[j].Name != b[j].Name || a[j].MaskLen != b[j].MaskLen ||
			a[j].ObservationSpace.FlatDim() != b[j].ObservationSpace.FlatDim() {
			return false
		}
	}
	return true
}

func describe(specs []env.Spec) []string {
	out := make([]string, len(specs))
	for j, s := range specs {
		dim := -1
		if s.ObservationSpace != nil {
			dim = s.ObservationSpace.FlatDim()
		}
		out[j] = fmt.Sprintf("%s(obs %d, mask %d)", s.Name, dim, s.MaskLen)
	}
	return out
}

// Len returns N, the number of copies.
func (m *Multi) Len() int { return m.n }

// Workers returns the number of workers, 1 when synchronous.
func (m *Multi) Workers() int { return m.cfg.workers }

// Agents describes the copies' agents (copy 0's), in the environment's order, which is
// the order of Groups. The slice is shared: do not modify it.
func (m *Multi) Agents() []env.Spec { return m.specs }

// Groups returns one Group per agent, in the order of Agents: the copies that the agent
// acts in now, with their observations, masks and ids, and the actions for the next
// Step. An agent that acts in no copy has an empty group. The slice and the groups'
// slices are the Multi's and change with every Reset and Step; the slice itself (not
// its elements' fields) may be kept.
func (m *Multi) Groups() []Group { return m.groups }

// Turn returns where copy i stands: the Turn its last Step returned, or, after an
// auto-reset or a Reset, the Turn of that reset, whose acting report is the first of
// the new episode. Its slices belong to the copy's environment and stay valid until the
// vector's next Reset or Step.
func (m *Multi) Turn(i int) env.Turn { return m.copies[i].turn }

// Stepped returns the Turn copy i's Step returned in the last Step of the vector: every
// agent reported in that step, with rewards, ends and spans; its Over says whether the
// episode ended (Ended). For an ended episode it is a copy that the reset did not
// overwrite (hrl.Obs cannot rebuild its typed observations). After Reset it is the
// zero Turn. Its slices stay valid until the vector's next Reset or Step.
func (m *Multi) Stepped(i int) env.Turn {
	switch c := &m.copies[i]; {
	case c.fresh:
		return env.Turn{}
	case c.ended:
		return c.final
	default:
		return c.turn
	}
}

// Ended reports whether copy i's episode ended in the last Step, and the copy was
// reset: Stepped(i) has the final reports, Turn(i) the new episode's first.
func (m *Multi) Ended(i int) bool { return m.copies[i].ended }

// FinalInfo returns, with WithFinalInfo(true), copy i's Info taken just before its
// auto-reset when Ended(i); nil otherwise.
func (m *Multi) FinalInfo(i int) any { return m.copies[i].info }

// Reset starts episode 0 of every copy, copy i with EpisodeSeed(seed, i, 0), and
// groups the copies by acting agent. If ctx is done before Reset starts, it returns
// ctx.Err() and changes nothing.
func (m *Multi) Reset(ctx context.Context, seed uint64) error {
	done, err := m.start(ctx, OpReset, nil)
	if err != nil {
		return err
	}
	m.ready = true
	m.base = seed
	return m.tick(ctx, OpReset, done)
}

// Act calls, for each agent that acts in at least one copy, its policy once with the
// agent's group, which fills the group's Actions. policies maps agent names to
// batched policies; agents that act in no copy need none. An error (ErrNoPolicy, or a
// policy's error wrapped with the agent's name) changes nothing but the Actions.
func (m *Multi) Act(ctx context.Context, policies map[string]BatchPolicy) error {
	if err := m.usable(OpAct); err != nil {
		return err
	}
	// With workers, the per-copy policies of RandomPerCopy, one generator per copy,
	// choose their rows on the workers, each copy's on the goroutine that steps it.
	fanout := false
	for j := range m.groups {
		g := &m.groups[j]
		m.acts[j] = nil
		if len(g.Copies) == 0 || len(m.pool.state) == 1 {
			continue
		}
		if p, ok := policies[g.Agent].(*perCopy); ok && p.own && len(p.ps) == m.n {
			m.acts[j], fanout = p, true
		}
	}
	if fanout {
		m.actCtx = ctx
		m.do(OpAct, nil)
		m.actCtx = nil
		// An error is reported as the groups' policies would have reported it called
		// one after the other: the first in the order of the groups, then of the rows.
		defer func() {
			if failed, _ := m.pool.outcome(); failed {
				clear(m.errs)
			}
		}()
	}
	for j := range m.groups {
		g := &m.groups[j]
		if len(g.Copies) == 0 {
			continue
		}
		if m.acts[j] != nil {
			for _, i := range g.Copies {
				if err := m.errs[i]; err != nil {
					return fmt.Errorf("vector: policy of %q: %w", g.Agent, err)
				}
			}
			continue
		}
		p := policies[g.Agent]
		if p == nil {
			return fmt.Errorf("%w %q", ErrNoPolicy, g.Agent)
		}
		if err := p.ActBatch(ctx, g.Batch, g.Actions); err != nil {
			return fmt.Errorf("vector: policy of %q: %w", g.Agent, err)
		}
	}
	return nil
}

// actOne chooses copy i's action with its own policy, when Act runs its group's
// policy on the workers.
func (m *Multi) actOne(i int) error {
	c := &m.copies[i]
	p := m.acts[c.agent]
	if p == nil {
		return nil
	}
	g := &m.groups[c.agent]
	a, err := p.act(m.actCtx, i, g.Row(c.row), g.Mask(c.row))
	g.Actions[c.row] = a
	return err
}

// Spread calls f over the copies on the vector's workers, and returns when every call
// has returned: the copies 0 to N-1 are cut into contiguous ranges [lo, hi), each
// passed to one call of f, and calls for different ranges may run at once, on
// different goroutines (with WithWorkers; without, the caller calls f once or more).
// It is how a caller spreads its own per-copy work after a Step (copying each copy's
// results into its buffers, say) over the goroutines that stepped the copies: f must
// write only what belongs to the copies of its range, and must not call the vector;
// it may read the vector (Groups, Acting, Stepped, Ended) for any copy. If a call of f
// panics, the others run to their end, and Spread panics with the first panic's
// *PanicError. On a closed vector, Spread calls f(0, N) from the calling goroutine.
func (m *Multi) Spread(f func(lo, hi int)) {
	if m.closed {
		f(0, m.n)
		return
	}
	m.spread = f
	m.do(opSpread, nil)
	m.spread = nil
	if p := m.spreadPanic.Swap(nil); p != nil {
		panic(p)
	}
}

// Acting returns the index in Groups of the group copy i is in, the group of the agent
// that acts in the copy now, and the copy's row in that group. After a Reset or Step
// that failed, the groups are empty and Acting's answer means nothing.
func (m *Multi) Acting(i int) (group, row int) {
	c := &m.copies[i]
	return c.agent, c.row
}

// Step steps every copy with its action, the element of its group's Actions at its
// row, resets each copy whose episode is over (Ended; the final reports stay in
// Stepped, the next episode seed is EpisodeSeed(seed, i, k+1)), and regroups the copies
// by their acting agents. If ctx is done before Step starts, it returns ctx.Err() and
// changes nothing. Failures are described in the package documentation.
func (m *Multi) Step(ctx context.Context) error {
	done, err := m.start(ctx, OpStep, nil)
	if err != nil {
		return err
	}
	return m.tick(ctx, OpStep, done)
}

// Close stops the workers and waits for them to exit. It is idempotent; the other
// methods return ErrClosed afterwards.
func (m *Multi) Close() error {
	m.close()
	return nil
}

// tick runs one phase over the copies (reset or step), regroups them and gathers the
// acting observations into the groups. The regrouping is parallel: the phase counted
// each chunk's copies per agent; the caller turns the counts into rows (a pass over
// chunks × agents, not over the copies); the gather, on the workers, gives each copy
// its row, in copy order within its group, and copies its observation and mask there.
func (m *Multi) tick(ctx context.Context, op Op, done <-chan struct{}) error {
	m.do(op, done)
	if err := m.outcome(ctx); err != nil {
		for j := range m.groups {
			m.groups[j].setLen(0)
		}
		return err
	}
	m.regroup()
	// The gather runs to the end, whatever ctx says, and cannot fail: the lengths
	// were checked when the acting reports were taken. With workers, each copies its
	// own copies' rows, which it has in its cache.
	m.do(opGather, nil)
	return nil
}

func (m *Multi) run(w, lo, hi int) {
	switch m.op {
	case opGather:
		m.gather(w, lo, hi)
	case opSpread:
		defer func() {
			if r := recover(); r != nil {
				m.spreadPanic.CompareAndSwap(nil, &PanicError{Value: r, Stack: debug.Stack()})
			}
		}()
		m.spread(lo, hi)
	case OpReset, OpStep:
		each(m.pool, w, lo, hi, m.done, m.errs, m.op, m.fns[m.op])
		m.count(w, lo, hi)
	default:
		each(m.pool, w, lo, hi, m.done, m.errs, m.op, m.fns[m.op])
	}
}

// chunk returns the chunk of copy i of range w, and the end of that chunk.
func (m *Multi) chunk(w, i int) (c, end int) {
	k := (i - m.pool.lo[w]) / grain
	return m.chunkBase[w] + k, min(m.pool.lo[w]+(k+1)*grain, m.pool.lo[w+1])
}

// count counts, for each chunk of the copies lo to hi-1 of range w, the copies that
// each agent acts in. The copies of a chunk are counted by the goroutine that ran
// them, whole chunks at a time (one, or, without workers, all of the range).
func (m *Multi) count(w, lo, hi int) {
	a := len(m.groups)
	for i := lo; i < hi; {
		c, end := m.chunk(w, i)
		counts := m.counts[c*a : (c+1)*a]
		clear(counts)
		for ; i < end; i++ {
			counts[m.copies[i].agent]++
		}
	}
}

func (g *Group) setLen(k int) {
	g.Copies = g.Copies[:k]
	g.IDs = g.IDs[:k]
	g.Actions = g.Actions[:k]
	g.Obs = g.Obs[:k*g.ObsDim]
	if g.MaskLen > 0 {
		g.Masks = g.Masks[:k*g.MaskLen]
	}
}

// regroup sizes the groups and sets each chunk's first row in each group: the rows
// of a group are its copies in copy order, so chunk c's first row is the number of
// the group's copies in chunks 0 to c-1.
func (m *Multi) regroup() {
	a := len(m.groups)
	for j := range m.groups {
		row := 0
		for k := j; k < len(m.counts); k += a {
			m.rows[k] = row
			row += m.counts[k]
		}
		m.groups[j].setLen(row)
	}
}

// gather gives each of the copies lo to hi-1 of range w its row in its group, from
// its chunk's first row there, and copies its acting observation, mask and id into
// that row.
func (m *Multi) gather(w, lo, hi int) {
	a := len(m.groups)
	for i := lo; i < hi; {
		ch, end := m.chunk(w, i)
		rows := m.rows[ch*a : (ch+1)*a]
		for ; i < end; i++ {
			c := &m.copies[i]
			g := &m.groups[c.agent]
			r := rows[c.agent]
			rows[c.agent]++
			c.row = r
			g.Copies[r] = i
			g.IDs[r] = c.id
			copy(g.Obs[r*g.ObsDim:(r+1)*g.ObsDim], c.obs)
			if g.MaskLen > 0 {
				copy(g.Masks[r*g.MaskLen:(r+1)*g.MaskLen], c.mask)
			}
		}
	}
}

func (m *Multi) resetOne(i int) error {
	c := &m.copies[i]
	m.episodes[i] = 0
	m.seeds[i] = EpisodeSeed(m.base, i, 0)
	c.fresh, c.ended, c.info = true, false, nil
	var err error
	if c.turn, err = c.env.Reset(m.seeds[i]); err != nil {
		return &CopyError{Copy: i, Op: OpReset, Err: err}
	}
	return m.acting(i, c, OpReset)
}

// stepOne steps copy i. The turn is written straight into the copy, and Stepped reads
// it from there: Turn is a struct of nine words, and every copy of it costs.
func (m *Multi) stepOne(i int) error {
	c := &m.copies[i]
	a := &m.groups[c.agent].Actions[c.row]
	var err error
	if c.turn, err = c.env.Step(c.id, agent.RawAction{Int: a.Int, Ints: a.Ints, Floats: a.Floats}); err != nil {
		return &CopyError{Copy: i, Op: OpStep, Err: err}
	}
	if !c.turn.Over {
		c.fresh, c.ended = false, false
		if m.cfg.finalInfo {
			c.info = nil
		}
		return m.acting(i, c, OpStep)
	}
	if m.cfg.ended != nil {
		m.cfg.ended(i, c.turn)
	}
	c.final, c.fresh, c.ended = c.keep(&c.turn), false, true
	if m.cfg.finalInfo {
		c.info = c.env.Info()
	}
	k := m.episodes[i] + 1
	m.episodes[i], m.seeds[i] = k, EpisodeSeed(m.base, i, k)
	if c.turn, err = c.env.Reset(m.seeds[i]); err != nil {
		return &CopyError{Copy: i, Op: OpReset, Err: err}
	}
	return m.acting(i, c, OpReset)
}

// acting takes the acting report of the copy's current turn.
func (m *Multi) acting(i int, c *multiCopy, op Op) error {
	rep := c.turn.Acting()
	if rep == nil {
		return &CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: next %q, over %t", ErrNoActing, c.turn.Next, c.turn.Over)}
	}
	j := m.index(rep.Agent)
	if j < 0 {
		return &CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: acting agent %q is not among %v", ErrNoActing, rep.Agent, m.names)}
	}
	if len(rep.Obs) != m.groups[j].ObsDim || len(rep.Mask) != m.groups[j].MaskLen {
		return &CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: %s: observation of %d (want %d), mask of %d (want %d)",
			ErrShape, rep.AgentID, len(rep.Obs), m.groups[j].ObsDim, len(rep.Mask), m.groups[j].MaskLen)}
	}
	c.agent, c.id, c.obs, c.mask = j, rep.AgentID, rep.Obs, rep.Mask
	return nil
}

func (m *Multi) index(name string) int {
	for j, n := range m.names {
		if n == name {
			return j
		}
	}
	return -1
}

// keep copies a turn's reports, with their observations and masks, into the copy's
// own buffers, and returns the copy, without the environment's typed-observation
// source.
func (c *multiCopy) keep(t *env.Turn) env.Turn {
	nObs, nMask := 0, 0
	for k := range t.Reports {
		nObs += len(t.Reports[k].Obs)
		nMask += len(t.Reports[k].Mask)
	}
	if cap(c.keptObs) < nObs {
		c.keptObs = make([]float32, nObs)
	}
	if cap(c.keptMask) < nMask {
		c.keptMask = make([]bool, nMask)
	}
	c.kept = append(c.kept[:0], t.Reports...)
	o, k := 0, 0
	for r := range c.kept {
		rep := &c.kept[r]
		if rep.Obs != nil {
			n := copy(c.keptObs[o:o+len(rep.Obs)], rep.Obs)
			rep.Obs = c.keptObs[o : o+n : o+n]
			o += n
		}
		if rep.Mask != nil {
			n := copy(c.keptMask[k:k+len(rep.Mask)], rep.Mask)
			rep.Mask = c.keptMask[k : k+n : k+n]
			k += n
		}
	}
	return env.Turn{Reports: c.kept, Next: t.Next, Over: t.Over, Tick: t.Tick}
}
