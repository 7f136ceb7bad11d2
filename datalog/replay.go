package datalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/event"
)

// The fields a Mismatch names.
const (
	// FieldObservation: the observations differ (Element is the first element that
	// does).
	FieldObservation = "observation"
	// FieldMask: the action masks differ (Element is the first element that does).
	FieldMask = "action_mask"
	// FieldReward: the environment's rewards (source event.SourceEnv) differ.
	FieldReward = "reward"
	// FieldTerminated, FieldTruncated, FieldSpan, FieldStart and FieldAgentID: those
	// columns differ.
	FieldTerminated = "terminated"
	FieldTruncated  = "truncated"
	FieldSpan       = "span_ticks"
	FieldStart      = "start"
	FieldAgentID    = "agent_id"
	// FieldMissing: the log has a row at this place that the replay did not report.
	FieldMissing = "missing"
	// FieldExtra: the replay reported a step at this place that the log does not have.
	FieldExtra = "extra"
	// FieldAction: the replay asked an agent for an action that the log does not
	// have, though the log's trial went on.
	FieldAction = "action"
	// FieldError: the replayed trial failed; Replayed holds the error.
	FieldError = "error"
)

// Mismatch is a step at which a replay differs from its log.
type Mismatch struct {
	// Trial, Episode, Tick, Index and AgentID place the step (Index among the
	// reports of its tick).
	Trial                string
	Episode, Tick, Index int
	AgentID              string
	// Field names what differs: one of the Field constants.
	Field string
	// Element is the index of the first differing element of an observation or a
	// mask; -1 for other fields.
	Element int
	// Logged and Replayed are the two values, formatted ("" where one side has none).
	Logged, Replayed string
}

func (m Mismatch) String() string {
	where := fmt.Sprintf("trial %s episode %d tick %d %s", m.Trial, m.Episode, m.Tick, m.AgentID)
	field := m.Field
	if m.Element >= 0 {
		field += "[" + strconv.Itoa(m.Element) + "]"
	}
	return fmt.Sprintf("%s: %s: logged %s, replayed %s", where, field, orNone(m.Logged), orNone(m.Replayed))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ReplayReport is what Compare found (replay.Run returns it).
type ReplayReport struct {
	// Trials counts the trials replayed; Skipped lists those that could not be, for
	// want of their info (rejected before they ran).
	Trials  int
	Skipped []string
	// Steps counts the replayed steps compared with the log.
	Steps int64
	// Mismatches lists every difference found, trial by trial, in the order of the
	// replay (a row of a trial whose replay is over, found further in the log, is
	// listed when it is read).
	Mismatches []Mismatch
	// Diverged lists the trials with a mismatch, in the order of the replay.
	Diverged []string
	// Unlisted lists the trials that have step rows but no row in the trials table,
	// in the order they were found: a trials table truncated or lost, which Compare
	// reports as an error (ErrUnlisted) after replaying the trials it has.
	Unlisted []string
	// Incomplete lists the trials whose log is incomplete, in the order of the
	// replay: their rows stop before the replay does, or they have no end record.
	// Such a trial is compared as far as its rows go; that is no mismatch. A trial
	// with a mismatch is in Diverged, not here.
	Incomplete []Incomplete
}

// Incomplete is a trial whose log is incomplete: its writer was killed before it
// wrote the trial's last rows or its end record.
type Incomplete struct {
	Trial string
	// State is the trial's latest state in the log: event.Running when it has no
	// end record.
	State event.State
	// Episode, Tick and AgentID place where the rows stop: the first step the replay
	// made, or the first action it asked for, that the log has no row for. Episode
	// and Tick are -1 for a trial that replayed to its end (it lacks only its end
	// record).
	Episode, Tick int
	AgentID       string
}

func (in Incomplete) String() string {
	if in.Episode < 0 {
		return in.Trial + " (no end record)"
	}
	return fmt.Sprintf("%s (rows stop at episode %d tick %d %s)", in.Trial, in.Episode, in.Tick, in.AgentID)
}

// ReplayOption configures Replay.
type ReplayOption interface{ applyReplay(*replayConfig) }

type replayConfig struct {
	readConfig
	maxMismatches int
}

func (o allocatorOption) applyReplay(c *replayConfig) { c.mem = o.mem }

type replayOption func(*replayConfig)

func (o replayOption) applyReplay(c *replayConfig) { o(c) }

// WithMaxMismatches stops comparing a trial after n mismatches (the replay of a trial
// that diverged early differs at every later step); 0 means no limit.
func WithMaxMismatches(n int) ReplayOption {
	return replayOption(func(c *replayConfig) { c.maxMismatches = max(n, 0) })
}

// errNoAction is what a replayed policy returns when the log has no further action.
var errNoAction = errors.New("datalog: no further action in the log")

// PlayFunc re-runs the trials of a log for Compare: on one goroutine, it plays the
// trials of p.Trials() in that order, calls p.Begin(k) before trial k, hands every
// event of the trials to p (an event.Sink), and asks p.Action for each action an
// agent takes. It returns when the trials are over, or with the error that stopped
// them; a trial that fails is reported by its events (its final state change), not by
// an error. Package replay's Run plays the trials with the runner (package runners).
type PlayFunc func(ctx context.Context, p *Playback) error

// Compare compares each trial of the log in dir with its replay, which play runs: the
// trial's logged environment name, configuration, seed, episodes and tick limit
// (Trial), each agent playing the actions the log holds for it in order (the n-th
// action of agent id I in episode e is the action of the n-th row of I in e that is
// not a Start row: Playback.Action). Every replayed step is compared with the log:
// observation, action mask, the environment's reward, the end flags, the span and the
// order of the reports. It returns every difference; a deterministic environment
// replayed from an intact log has none. Rewards from other sources (actors, a
// controller, retroactive ones) are not compared.
//
// A trial that stopped or failed is replayed as far as its log goes. A trial whose
// writer was killed is incomplete (ReplayReport.Incomplete), not divergent: the rows
// of its last batches are lost, and it may lack its end record. Its replay stops at
// the first step or action that its rows lack, if every row before matched; a step
// or action past the rows of a trial that already differs is a mismatch. Trials with
// an end record are replayed first, in the order they started, then those without.
//
// Compare reads each part once, in order, an agent's parts side by side as the
// trials need their rows, grouping the rows by trial as they come, and compares a
// trial as its rows arrive; it keeps the batches that hold rows of trials not yet
// replayed, so its memory grows with the trials in progress when the log was
// written, not with the log. It fails for a log it cannot read (a damaged part:
// ErrCorrupt, a file that is not one: ErrNotLog, each naming the file), with play's
// error (ErrReplay for an environment or configuration that it cannot run), and for a
// log whose steps name trials that its trials table lacks, or that has steps and no
// trials table (ErrUnlisted, with the report of what could be replayed).
func Compare(ctx context.Context, dir string, play PlayFunc, opts ...ReplayOption) (*ReplayReport, error) {
	var cfg replayConfig
	for _, o := range opts {
		if o != nil {
			o.applyReplay(&cfg)
		}
	}
	// The batches read are much the same sizes: their buffers are recycled.
	mem := cfg.mem
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	rec := newRecycler(mem)
	defer rec.close()
	l, err := Open(dir, WithAllocator(rec))
	if err != nil {
		return nil, err
	}
	trials, err := l.trials(false) // the replay changes none of their agents
	if err != nil {
		return nil, err
	}
	rep := &ReplayReport{}
	var ended, open []int
	for i, t := range trials {
		switch {
		case !t.HasInfo:
			rep.Skipped = append(rep.Skipped, t.ID)
		case t.State.Done():
			ended = append(ended, i)
		default:
			open = append(open, i)
		}
	}
	order := append(ended, open...)
	if len(l.tables[TableTrials]) == 0 && len(l.names) > 0 {
		return rep, fmt.Errorf("%w: %s has the steps of %s but no trials table (%s): its trials cannot be replayed",
			ErrUnlisted, dir, strings.Join(l.names, ", "), "_"+TableTrials)
	}
	if len(order) == 0 {
		if err := l.unlisted(rep); err != nil {
			return rep, err
		}
		return rep, unlistedError(dir, rep)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := newReplayer(l, &cfg, rep, trials, order, cancel)
	defer r.close()
	err = play(ctx, &Playback{r: r})
	if r.err != nil {
		return rep, r.err
	}
	if err != nil {
		return rep, err
	}
	r.finish()
	if r.err != nil {
		return rep, r.err
	}
	return rep, unlistedError(dir, rep)
}

// Playback is the log's side of a replay, which Compare hands its PlayFunc: the
// trials to replay, the actions to play, and the comparison of the replay's events
// with the log. Its methods must be called from one goroutine at a time, as a
// campaign of one worker does.
type Playback struct{ r *replayer }

// Trials returns the trials to replay, in the order of the replay. The caller may
// keep the slice; the trials' slices are shared: treat them as read-only.
func (p *Playback) Trials() []Trial {
	ts := make([]Trial, len(p.r.order))
	for k, i := range p.r.order {
		ts[k] = p.r.trials[i]
	}
	return ts
}

// Begin starts the replay of the trial at place k of Trials, ending the one before.
// The trial's events and actions that follow are compared with that trial's rows.
func (p *Playback) Begin(k int) {
	r := p.r
	if r.cur >= 0 {
		r.end(r.cur, nil)
	}
	r.cur = k
	r.run(k)
}

// Handle compares the replayed trial's step events with the log, and ends a trial's
// replay with its last state: a Playback is the event.Sink of the replay. It never
// fails: a read error stops the replay through the context Compare gave play.
func (p *Playback) Handle(ctx context.Context, e *event.Event) error { return p.r.handle(ctx, e) }

// Action returns the next logged action of the agent of the given name and id, in
// episode, at tick, in the trial replayed now. It fails when the log has no such
// action (the replayed trial then ends with that error, reported as a mismatch only
// where the log's trial went on) or cannot be read.
func (p *Playback) Action(name string, episode, tick int, agentID string) (agent.RawAction, error) {
	r := p.r
	if r.cur < 0 || r.runs[r.cur] == nil {
		return agent.RawAction{}, errNoAction
	}
	tr := r.runs[r.cur]
	if tr.cut || tr.over {
		return agent.RawAction{}, errNoAction
	}
	a, lost, err := r.next(tr, name, episode, agentID)
	switch {
	case err == nil:
		return a, nil
	case r.err != nil:
		return a, r.err
	case lost && tr.count == 0:
		// The log's rows of the agent stop here, every row before matched: they are
		// lost, not different.
		tr.cutHere(episode, tick, agentID)
	case !lost || tr.t.State == event.Ended:
		r.mismatch(tr, Mismatch{Episode: episode, Tick: tick, Index: -1, AgentID: agentID, Element: -1, Field: FieldAction, Replayed: "asked for an action"})
	}
	return a, err
}

// unlistedError is the error of the trials of rep.Unlisted, nil for none.
func unlistedError(dir string, rep *ReplayReport) error {
	n := len(rep.Unlisted)
	if n == 0 {
		return nil
	}
	some := rep.Unlisted[:min(n, 5)]
	more := ""
	if n > len(some) {
		more = fmt.Sprintf(" and %d more", n-len(some))
	}
	return fmt.Errorf("%w: in %s, %d trials have step rows but no row in the trials table (%s%s): the trials table is truncated; %d trials replayed",
		ErrUnlisted, dir, n, strings.Join(some, ", "), more, rep.Trials)
}

// unlisted adds to rep.Unlisted the trials that the steps of the log name, for a
// log whose trials table lists none that can be replayed.
func (l *Log) unlisted(rep *ReplayReport) error {
	known := map[string]bool{}
	for _, id := range rep.Skipped {
		known[id] = true
	}
	for _, name := range l.names {
		for rec, err := range l.Batches(name) {
			if err != nil {
				return err
			}
			var c dictColumn
			idx := rec.Schema().FieldIndices("trial_id")
			if len(idx) == 0 {
				return fmt.Errorf("%w: agent %s: no trial_id column", ErrNotLog, name)
			}
			if err := c.reset(rec.Column(idx[0])); err != nil {
				return err
			}
			for i := range int(rec.NumRows()) {
				if id := c.value(i); !known[id] {
					known[id] = true
					rep.Unlisted = append(rep.Unlisted, id)
				}
			}
		}
	}
	return nil
}

// rowBatch is a batch of an agent's rows, kept while a trial not yet replayed has
// rows in it.
type rowBatch struct {
	rec  arrow.RecordBatch
	d    rowDecoder
	refs int
}

func (b *rowBatch) release() {
	if b.refs--; b.refs == 0 {
		b.rec.Release()
		b.rec = nil
	}
}

func (b *rowBatch) place(i int) (episode, tick, index int) {
	return int(b.d.episode.Value(i)), int(b.d.tick.Value(i)), int(b.d.index.Value(i))
}

// action returns the action of row i, its slices copied.
func (b *rowBatch) action(i int) agent.RawAction {
	d := &b.d
	var a agent.RawAction
	switch {
	case d.actInt != nil:
		if d.actInt.IsValid(i) {
			a.Int = d.actInt.Value(i)
		}
	case d.act != nil && d.act.IsValid(i):
		lo, hi := d.act.ValueOffsets(i)
		if d.actF != nil {
			a.Floats = slices.Clone(d.actF[lo:hi])
		} else {
			a.Ints = slices.Clone(d.actI[lo:hi])
		}
	}
	return a
}

// rowRef is row i of a batch.
type rowRef struct {
	b    *rowBatch
	i    int
	part int // the index of the batch's part among its stream's
}

// rowQueue holds an agent's rows of one trial, read but not yet used both by the
// comparison (at cmp) and by the actions (at act).
type rowQueue struct {
	refs     []rowRef
	cmp, act int
}

// trim releases the rows both cursors are past.
func (q *rowQueue) trim() {
	n := min(q.cmp, q.act)
	if n < 64 && n < len(q.refs) {
		return
	}
	for _, ref := range q.refs[:n] {
		ref.b.release()
	}
	k := copy(q.refs, q.refs[n:])
	clear(q.refs[k:])
	q.refs = q.refs[:k]
	q.cmp -= n
	q.act -= n
}

func (q *rowQueue) releaseAll() {
	for _, ref := range q.refs {
		ref.b.release()
	}
	clear(q.refs)
	q.refs, q.cmp, q.act = q.refs[:0], 0, 0
}

// stream reads the batches of an agent's parts, each once, in order. Each part is
// read on a goroutine of its own, a few batches ahead of the replay, so that reading
// and decompressing the log runs beside the replayed trials; and the parts are read
// side by side, as the trials need their rows. The workers of a campaign write parts
// of their own at the same time, each holding rows of every other trial or so: read
// one after the other, the rows of one part would wait in memory for the trials of
// the next, a part's worth of rows at a time.
//
// A trial's rows may span parts (its worker's part grew full), and a later part may
// be read before an earlier one: a trial's rows are queued in the order of their
// parts, and used only once no earlier part may hold more of them.
type stream struct {
	name  string
	parts []*partStream
	// open are the parts started and not yet read to their end; first is the
	// first part not read to its end, next the first that may not be started.
	open        []*partStream
	first, next int
}

// partStream reads one part.
type partStream struct {
	part    Part
	index   int // among its stream's parts
	fetched chan fetched
	quit    chan struct{}
	started bool
	done    bool // read to its end
	// last is the latest place, in the order of the replay, of a trial whose rows
	// the part held so far (-1 before its first): the rows of a part are in the
	// order of the replay, so it holds no more rows of trials before it.
	last int
}

// fetched is a batch read (retained for the replay), or the error that ends a part.
type fetched struct {
	rec arrow.RecordBatch
	err error
}

// streamAhead is how many batches a part is read ahead of the replay.
const streamAhead = 2

// choose returns the part to read for further rows of the trial at place k (nil
// when every part is read to its end): the part with the earliest latest trial
// among those that may hold rows of it, else the next part, else, for a log whose
// parts are not in the order of the replay, the open part with the earliest latest
// trial.
func (st *stream) choose(k int) *partStream {
	var best *partStream
	for _, p := range st.open {
		if p.last <= k && (best == nil || p.last < best.last) {
			best = p
		}
	}
	if best != nil {
		return best
	}
	for ; st.next < len(st.parts); st.next++ {
		if p := st.parts[st.next]; !p.started {
			st.next++
			return p
		}
	}
	for _, p := range st.open {
		if best == nil || p.last < best.last {
			best = p
		}
	}
	return best
}

// earlier returns a part before part j that may hold rows of the trial at place
// k, nil if none may.
func (st *stream) earlier(j, k int) *partStream {
	for _, p := range st.parts[st.first:max(j, st.first)] {
		if !p.done && (!p.started || p.last <= k) {
			return p
		}
	}
	return nil
}

// closed marks part p read to its end.
func (st *stream) closed(p *partStream) {
	p.done = true
	if i := slices.Index(st.open, p); i >= 0 {
		st.open = slices.Delete(st.open, i, i+1)
	}
	for st.first < len(st.parts) && st.parts[st.first].done {
		st.first++
	}
}

// start starts reading the part.
func (p *partStream) start(l *Log, wg *sync.WaitGroup) {
	p.started = true
	p.fetched = make(chan fetched, streamAhead)
	p.quit = make(chan struct{})
	parts := []Part{p.part}
	wg.Go(func() {
		defer close(p.fetched)
		for rec, err := range l.batches(parts) {
			if err == nil {
				rec.Retain()
			}
			select {
			case p.fetched <- fetched{rec, err}:
			case <-p.quit:
				if err == nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	})
}

// stop ends the reading and releases the batches read ahead.
func (p *partStream) stop() {
	if p.quit == nil {
		return
	}
	close(p.quit)
	for f := range p.fetched {
		if f.err == nil {
			f.rec.Release()
		}
	}
	p.quit = nil
}

// trialRun is the replay of one trial: what it compared, and the rows of the log it
// has not used yet, per agent (in the order of the replayer's streams).
type trialRun struct {
	t      *Trial
	k      int // its place in the order of the replay
	queues []*rowQueue
	acts   []map[actKey][]agent.RawAction
	// agents are the trial's agents' names with their streams (-1: the log has no
	// rows of that agent).
	agents agentStreams
	// count counts the trial's mismatches; stopped reports that the comparison
	// stopped at the mismatch limit; cut that the replay went past the log's rows.
	count   int
	stopped bool
	cut     bool
	cutAt   Incomplete
	started bool // the replayed trial reached its Running state
	over    bool // the replay is over
}

// agentStreams maps a trial's agents' names to their streams: a list searched in
// order, the trials of most environments having a few agents, and a map besides
// for those with many.
type agentStreams struct {
	names   []string
	streams []int
	many    map[string]int
}

// manyAgents is the number of agents from which agentStreams keeps a map.
const manyAgents = 8

func (a *agentStreams) add(name string, s int) {
	if _, ok := a.find(name); ok {
		return
	}
	a.names, a.streams = append(a.names, name), append(a.streams, s)
	switch n := len(a.names); {
	case n == manyAgents:
		if a.many == nil {
			a.many = make(map[string]int, 2*manyAgents)
		}
		for i, name := range a.names {
			a.many[name] = a.streams[i]
		}
	case n > manyAgents:
		a.many[name] = s
	}
}

func (a *agentStreams) find(name string) (int, bool) {
	if len(a.names) >= manyAgents {
		s, ok := a.many[name]
		return s, ok
	}
	for i, n := range a.names {
		if n == name {
			return a.streams[i], true
		}
	}
	return 0, false
}

func (a *agentStreams) reset() {
	clear(a.names)
	a.names, a.streams = a.names[:0], a.streams[:0]
	clear(a.many)
}

type actKey struct {
	episode int
	id      string
}

// replayer compares the trials of a log with their replay, which a PlayFunc runs on
// one goroutine: Begin starts each trial, Handle compares its steps with the rows,
// and Action plays the logged actions, one call after the other.
type replayer struct {
	l       *Log
	cfg     *replayConfig
	rep     *ReplayReport
	trials  []Trial
	order   []int
	cancel  context.CancelCauseFunc
	err     error
	streams []*stream
	byName  map[string]int
	// runs holds a trialRun per trial in the order of the replay, made when its first
	// row is read or its replay begins, and dropped once it is over; pos maps a trial
	// id to its place in order.
	runs  []*trialRun
	pos   map[string]int
	cur   int // the place of the trial replayed now, -1 before the first
	free  []*rowQueue
	spare []*trialRun    // the maps and slices of trialRuns over, for the next
	wg    sync.WaitGroup // the streams' goroutines
	// listed holds the ids of the trials of the trials table that are not replayed
	// (rejected before they ran), and those of rep.Unlisted.
	listed map[string]bool
}

func newReplayer(l *Log, cfg *replayConfig, rep *ReplayReport, trials []Trial, order []int, cancel context.CancelCauseFunc) *replayer {
	r := &replayer{l: l, cfg: cfg, rep: rep, trials: trials, order: order, cancel: cancel,
		byName: map[string]int{}, runs: make([]*trialRun, len(order)), pos: make(map[string]int, len(order)),
		cur: -1}
	for _, name := range l.names {
		r.byName[name] = len(r.streams)
		st := &stream{name: name}
		for i, p := range l.agents[name] {
			st.parts = append(st.parts, &partStream{part: p, index: i, last: -1})
		}
		r.streams = append(r.streams, st)
	}
	for k, i := range order {
		r.pos[trials[i].ID] = k
	}
	r.listed = map[string]bool{}
	for _, id := range rep.Skipped {
		r.listed[id] = true
	}
	return r
}

// run returns the trialRun of the trial at place k, making it if needed.
func (r *replayer) run(k int) *trialRun {
	if tr := r.runs[k]; tr != nil {
		return tr
	}
	t := &r.trials[r.order[k]]
	tr := &trialRun{t: t, k: k}
	if n := len(r.spare); n > 0 {
		sp := r.spare[n-1]
		r.spare = r.spare[:n-1]
		tr.queues, tr.acts, tr.agents = sp.queues, sp.acts, sp.agents
	} else {
		tr.queues, tr.acts = make([]*rowQueue, len(r.streams)), make([]map[actKey][]agent.RawAction, len(r.streams))
	}
	for _, a := range t.Agents {
		s, ok := r.byName[a.Name]
		if !ok {
			s = -1
		}
		tr.agents.add(a.Name, s)
	}
	r.runs[k] = tr
	return tr
}

func (r *replayer) queue(tr *trialRun, s int) *rowQueue {
	q := tr.queues[s]
	if q == nil {
		if n := len(r.free); n > 0 {
			q, r.free = r.free[n-1], r.free[:n-1]
		} else {
			q = &rowQueue{}
		}
		tr.queues[s] = q
	}
	return q
}

// fail ends the replay with a read error.
func (r *replayer) fail(err error) {
	if r.err == nil {
		r.err = err
		r.cancel(err)
	}
}

// pull reads the next batch of stream s that may hold rows of the trial at place k,
// and hands its rows to their trials; false once every part of the stream is read,
// or after an error.
func (r *replayer) pull(s, k int) bool {
	st := r.streams[s]
	if r.err != nil {
		return false
	}
	p := st.choose(k)
	if p == nil {
		return false
	}
	return r.read(s, p)
}

// read reads the next batch of part p of stream s, and hands its rows to their
// trials; false after an error.
func (r *replayer) read(s int, p *partStream) bool {
	st := r.streams[s]
	if !p.started {
		p.start(r.l, &r.wg)
		st.open = append(st.open, p)
	}
	f, ok := <-p.fetched
	switch {
	case !ok:
		st.closed(p)
		return true
	case f.err != nil:
		st.closed(p)
		r.fail(f.err)
		return false
	}
	rec := f.rec
	b := &rowBatch{rec: rec, refs: 1}
	if err := b.d.reset(st.name, rec); err != nil {
		b.release()
		st.closed(p)
		r.fail(err)
		return false
	}
	n := int(rec.NumRows())
	for i := 0; i < n; {
		x := b.d.trial.index(i)
		j := i + 1
		for j < n && b.d.trial.index(j) == x {
			j++
		}
		id := b.d.trial.value(i)
		if k, ok := r.pos[id]; ok {
			p.last = max(p.last, k)
			r.take(s, b, p.index, k, i, j)
		} else if !r.listed[id] {
			r.listed[id] = true
			r.rep.Unlisted = append(r.rep.Unlisted, id)
		}
		i = j
	}
	b.release()
	return true
}

// take hands rows [i, j) of batch b, of part pi, to the trial at place k.
func (r *replayer) take(s int, b *rowBatch, pi, k, i, j int) {
	tr := r.runs[k]
	if k < r.cur || tr != nil && tr.over {
		// The replay of the trial is over: these rows are missing from it, unless it
		// went past the rows of the log (they are lost, not missing).
		if tr == nil || tr.cut {
			return
		}
		for x := i; x < j; x++ {
			e, t, idx := b.place(x)
			r.mismatch(tr, Mismatch{Episode: e, Tick: t, Index: idx, AgentID: b.d.agentID.value(x), Element: -1, Field: FieldMissing, Logged: "a row"})
		}
		return
	}
	tr = r.run(k)
	q := r.queue(tr, s)
	// After the rows of earlier parts, before those of later ones, read first.
	at := len(q.refs)
	for at > max(q.cmp, q.act) && q.refs[at-1].part > pi {
		at--
	}
	if at == len(q.refs) {
		for x := i; x < j; x++ {
			q.refs = append(q.refs, rowRef{b, x, pi})
		}
	} else {
		refs := make([]rowRef, 0, j-i)
		for x := i; x < j; x++ {
			refs = append(refs, rowRef{b, x, pi})
		}
		q.refs = slices.Insert(q.refs, at, refs...)
	}
	b.refs += j - i
}

// fill reads stream s until the trial has a row of it at position at of its queue;
// false if the stream ends first (the log has no more rows of the trial's agent).
func (r *replayer) fill(tr *trialRun, s int, at func(*rowQueue) int) bool {
	if s < 0 {
		return false
	}
	for {
		if q := tr.queues[s]; q != nil && at(q) < len(q.refs) {
			// An earlier part than the row's may hold rows of the trial before it.
			p := r.streams[s].earlier(q.refs[at(q)].part, tr.k)
			if p == nil {
				return true
			}
			if !r.read(s, p) {
				return false
			}
			continue
		}
		if !r.pull(s, tr.k) {
			return false
		}
	}
}

func atCmp(q *rowQueue) int { return q.cmp }
func atAct(q *rowQueue) int { return q.act }

func (r *replayer) mismatch(tr *trialRun, m Mismatch) {
	if tr.stopped {
		return
	}
	m.Trial = tr.t.ID
	r.rep.Mismatches = append(r.rep.Mismatches, m)
	if tr.count == 0 {
		r.rep.Diverged = append(r.rep.Diverged, tr.t.ID)
	}
	tr.count++
	if r.cfg.maxMismatches > 0 && tr.count >= r.cfg.maxMismatches {
		tr.stopped = true
	}
}

// cutAt records that the replay of the trial went past the log's rows at a place
// where every row before matched: the rest of the log is lost, and the replay
// compares no more.
func (tr *trialRun) cutHere(episode, tick int, id string) {
	tr.cut = true
	tr.cutAt = Incomplete{Trial: tr.t.ID, State: tr.t.State, Episode: episode, Tick: tick, AgentID: id}
}

// end ends the replay of the trial at place k: the replayed trial's error (nil for
// none), the rows it did not reach, and whether its log is incomplete.
func (r *replayer) end(k int, err error) {
	tr := r.runs[k]
	if tr == nil || tr.over {
		return
	}
	tr.over = true
	r.rep.Trials++
	if err != nil && !errors.Is(err, errNoAction) {
		r.mismatch(tr, Mismatch{Episode: -1, Tick: -1, Index: -1, Element: -1, Field: FieldError, Replayed: err.Error()})
	}
	for s, q := range tr.queues {
		if q == nil {
			continue
		}
		if !tr.cut {
			for _, ref := range q.refs[q.cmp:] {
				e, t, idx := ref.b.place(ref.i)
				r.mismatch(tr, Mismatch{Episode: e, Tick: t, Index: idx, AgentID: ref.b.d.agentID.value(ref.i), Element: -1, Field: FieldMissing, Logged: "a row"})
			}
		}
		q.releaseAll()
		r.free = append(r.free, q)
		tr.queues[s] = nil
	}
	for _, acts := range tr.acts {
		clear(acts)
	}
	tr.agents.reset()
	r.spare = append(r.spare, &trialRun{queues: tr.queues, acts: tr.acts, agents: tr.agents})
	tr.acts, tr.queues, tr.agents = nil, nil, agentStreams{}
	switch st := tr.t.State; {
	case tr.count > 0:
		// Divergent: reported with its mismatches, not as incomplete.
	case !st.Done():
		in := tr.cutAt
		if !tr.cut {
			in = Incomplete{Trial: tr.t.ID, State: st, Episode: -1, Tick: -1}
		}
		r.rep.Incomplete = append(r.rep.Incomplete, in)
	case tr.cut && st == event.Ended:
		r.rep.Incomplete = append(r.rep.Incomplete, tr.cutAt)
	}
}

// finish ends the last trial and reads the rest of the log, for the rows of trials
// whose replay is over.
func (r *replayer) finish() {
	if r.cur >= 0 {
		r.end(r.cur, nil)
	}
	for s := range r.streams {
		for r.pull(s, math.MaxInt) {
		}
	}
}

func (r *replayer) close() {
	for _, tr := range r.runs {
		if tr == nil {
			continue
		}
		for _, q := range tr.queues {
			if q != nil {
				q.releaseAll()
			}
		}
	}
	for _, st := range r.streams {
		for _, p := range st.parts {
			p.stop()
		}
	}
	r.wg.Wait()
}

// handle compares the replayed trial's step events with the log, and ends a trial's
// replay with its last state.
func (r *replayer) handle(_ context.Context, e *event.Event) error {
	if r.cur < 0 {
		return nil
	}
	tr := r.runs[r.cur]
	if tr == nil || e.Trial != tr.t.ID {
		return nil
	}
	switch e.Kind {
	case event.KindState:
		switch st := e.State; {
		case st == nil:
		case st.State == event.Running:
			tr.started = true
		case st.State.Done():
			if !tr.started && st.State == event.Failed {
				// Rejected before it ran: the environment could not be made.
				r.fail(fmt.Errorf("%w: trial %s: %w", ErrReplay, tr.t.ID, st.Err))
				return nil
			}
			r.end(r.cur, st.Err)
		}
		return nil
	case event.KindStep:
	default:
		return nil
	}
	if tr.stopped || tr.cut || tr.over {
		return nil
	}
	s := e.Step
	k, ok := tr.agents.find(s.Agent)
	if !ok {
		r.mismatch(tr, Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step of an agent the log's trial does not have"})
		return nil
	}
	for {
		if !r.fill(tr, k, atCmp) {
			if r.err != nil {
				return nil
			}
			if tr.count == 0 {
				tr.cutHere(s.Episode, s.Tick, s.AgentID)
				return nil
			}
			r.mismatch(tr, Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step"})
			return nil
		}
		q := tr.queues[k]
		ref := q.refs[q.cmp]
		e, t, idx := ref.b.place(ref.i)
		switch cmpPlace(e, t, idx, s.Episode, s.Tick, s.Index) {
		case -1:
			r.mismatch(tr, Mismatch{Episode: e, Tick: t, Index: idx, AgentID: ref.b.d.agentID.value(ref.i), Element: -1, Field: FieldMissing, Logged: "a row"})
			q.cmp++
			continue
		case 1:
			r.mismatch(tr, Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step"})
			return nil
		}
		r.rep.Steps++
		r.compare(tr, ref.b, ref.i, s)
		q.cmp++
		q.trim()
		return nil
	}
}

func cmpPlace(e1, t1, i1, e2, t2, i2 int) int {
	switch {
	case e1 != e2:
		return sign(e1 - e2)
	case t1 != t2:
		return sign(t1 - t2)
	}
	return sign(i1 - i2)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// compare reports how row i of batch b and the replayed step differ.
func (r *replayer) compare(tr *trialRun, b *rowBatch, i int, s *event.StepEvent) {
	d := &b.d
	m := Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1}
	diff := func(field, logged, replayed string) {
		m.Field, m.Logged, m.Replayed = field, logged, replayed
		r.mismatch(tr, m)
		m.Element = -1
	}
	if id := d.agentID.value(i); id != s.AgentID {
		diff(FieldAgentID, id, s.AgentID)
	}
	if start := d.start.Value(i); start != s.Start {
		diff(FieldStart, strconv.FormatBool(start), strconv.FormatBool(s.Start))
	}
	lo, hi := d.obs.ValueOffsets(i)
	obs := d.obsV[lo:hi:hi]
	if j := firstDiff(obs, s.Obs); j >= 0 {
		m.Element = j
		diff(FieldObservation, elem(obs, j), elem(s.Obs, j))
	}
	if j := d.maskDiff(i, s.Mask); j >= 0 {
		row := d.row(i)
		m.Element = j
		diff(FieldMask, elemBool(row.Mask, j), elemBool(s.Mask, j))
	}
	logged, lok := d.envReward(i)
	replayed, rok := envReward(s.Sources)
	if lok != rok || float32(logged) != float32(replayed) && !(isNaN32(logged) && isNaN32(replayed)) {
		diff(FieldReward, fmtReward(logged, lok), fmtReward(float64(float32(replayed)), rok))
	}
	if term := d.term.Value(i); term != s.Terminated {
		diff(FieldTerminated, strconv.FormatBool(term), strconv.FormatBool(s.Terminated))
	}
	if trunc := d.trunc.Value(i); trunc != s.Truncated {
		diff(FieldTruncated, strconv.FormatBool(trunc), strconv.FormatBool(s.Truncated))
	}
	if span := int(d.span.Value(i)); span != s.SpanTicks {
		diff(FieldSpan, strconv.Itoa(span), strconv.Itoa(s.SpanTicks))
	}
}

// maskDiff returns the first index where row i's action mask and mask differ (or
// the length where one is longer), -1 if they do not.
func (d *rowDecoder) maskDiff(i int, mask []bool) int {
	if d.mask == nil || !d.mask.IsValid(i) {
		if len(mask) > 0 {
			return 0
		}
		return -1
	}
	lo, hi := d.mask.ValueOffsets(i)
	n := int(hi - lo)
	for j := range min(n, len(mask)) {
		if d.maskV.Value(int(lo)+j) != mask[j] {
			return j
		}
	}
	if n != len(mask) {
		return min(n, len(mask))
	}
	return -1
}

// envReward returns the environment's reward of row i, and whether it has one.
func (d *rowDecoder) envReward(i int) (float64, bool) {
	env := d.srcName.find(event.SourceEnv)
	if env < 0 {
		return 0, false
	}
	lo, hi := d.sources.ValueOffsets(i)
	for j := int(lo); j < int(hi); j++ {
		if d.srcName.index(j) == env {
			return float64(d.srcVal[j]), true
		}
	}
	return 0, false
}

func isNaN32(x float64) bool { return math.IsNaN(float64(float32(x))) }

func envReward(src []event.RewardSource) (float64, bool) {
	for _, s := range src {
		if s.Source == event.SourceEnv {
			return s.Value, true
		}
	}
	return 0, false
}

func fmtReward(x float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 32)
}

// firstDiff returns the first index where a and b differ bit for bit (or in length),
// -1 if they do not. Equal vectors, the common case, are compared as bytes.
func firstDiff(a, b []float32) int {
	if len(a) == len(b) && bytes.Equal(floatBytes(a), floatBytes(b)) {
		return -1
	}
	n := min(len(a), len(b))
	for i := range n {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

// floatBytes returns the bytes of a []float32.
func floatBytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4)
}

func elem(v []float32, i int) string {
	if i >= len(v) {
		return ""
	}
	return strconv.FormatFloat(float64(v[i]), 'g', -1, 32)
}

func elemBool(v []bool, i int) string {
	if i >= len(v) {
		return ""
	}
	return strconv.FormatBool(v[i])
}

// next returns the next logged action of agent id in episode. It fails with
// errNoAction when the log has none; lost reports that the log has no row of the
// agent after those already used, rather than rows of a later episode.
func (r *replayer) next(tr *trialRun, name string, episode int, id string) (a agent.RawAction, lost bool, err error) {
	s, ok := tr.agents.find(name)
	if !ok {
		return a, false, errNoAction
	}
	if s < 0 {
		return a, true, errNoAction
	}
	acts := tr.acts[s]
	if acts == nil {
		acts = map[actKey][]agent.RawAction{}
		tr.acts[s] = acts
	}
	k := actKey{episode, id}
	if len(acts) > 0 {
		if qa := acts[k]; len(qa) > 0 {
			a = qa[0]
			acts[k] = qa[1:]
			return a, false, nil
		}
	}
	// Read the agent's rows on: the actions of its other ids wait in acts.
	for {
		if !r.fill(tr, s, atAct) {
			if r.err != nil {
				return a, false, r.err
			}
			return a, true, errNoAction
		}
		q := tr.queues[s]
		ref := q.refs[q.act]
		e, _, _ := ref.b.place(ref.i)
		if e > episode {
			return a, false, errNoAction
		}
		if e < episode && len(acts) > 0 {
			for q := range acts {
				if q.episode < episode {
					delete(acts, q)
				}
			}
		}
		q.act++
		if e == episode && !ref.b.d.start.Value(ref.i) {
			rid := ref.b.d.agentID.value(ref.i)
			act := ref.b.action(ref.i)
			if rid == id {
				q.trim()
				return act, false, nil
			}
			rk := actKey{e, rid}
			acts[rk] = append(acts[rk], act)
		}
	}
}
