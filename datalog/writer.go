package datalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/datalog/internal/dict"
	"github.com/batonrl/baton/event"
)

// Writer is a event.Sink, and an io.Closer, that writes the events of the trials it
// is given into its Dataset: each step event as a row of its agent's partition, each
// trial's info and final state to the trials table, each episode's end to the
// episodes table, each retroactive reward to the rewards table.
//
// Rows are buffered per agent and handed over as one record batch when WithBatchRows
// of them are there, to a goroutine of the writer's own that encodes, compresses and
// writes the batch while the next one fills; a part is finished (its footer written)
// once it holds WithMaxPartBytes (it may exceed that by the two batches written
// meanwhile) or MaxPartDictValues trial ids, and at Close. A Writer holds at most two
// batches of rows per agent and per table, the one filling and the one being written,
// and the dictionaries of its open parts, whatever the length of the run; its step
// path allocates nothing in steady state, and waits only when the writing goroutine
// is a whole batch behind. With WithInlineWrites(true) it has no such goroutine: the
// Handle call that fills a batch writes it, and the writer holds one batch of rows
// per agent and per table.
//
// A Writer is not safe for concurrent use: give each campaign worker its own
// (Dataset.WorkerSinks), or wrap one in Locked for a runners.Controller, whose trials
// run at once. Close it: it ends the writing goroutine. A failed write is returned by
// the calls that follow it (the next Handle, Flush or Close), and then by every
// call; Close then leaves the open parts without their footers for Recover.
type Writer struct {
	ds  *Dataset
	cfg *writeConfig
	fl  *flusher

	shapes map[string]*shape
	agents map[string]*agentLog
	order  []*agentLog // agents in the order they were first logged
	trials map[string]*trialLog
	cur    *trialLog
	last   *trialLog     // the latest trial begun
	tables [3]*sideTable // trials, episodes, rewards
	// spare holds the logs of trials that ended and that nothing refers to any
	// longer, for begin to reuse: a campaign begins a trial after another, and each
	// trialLog would otherwise be garbage once its trial ended.
	spare []*trialLog

	closed bool
	err    error // the flusher's error, once seen
	// waitEach makes the writer wait for each batch of steps to be written before
	// it goes on, as if it wrote them itself: for the tests that check that the
	// parts do not depend on how far the flusher got.
	waitEach bool
}

// trialLog is what a writer keeps of a trial while it runs, and after while the
// trial begun next is compared with it or a part's metadata is to be made from it
// (see Writer.recycle).
type trialLog struct {
	id string
	// ended says that the trial's final state was logged.
	ended bool
	// info is a copy of the fields of the trial's info that the writer logs, without
	// its Agents and Policies (agents and policies say those); nil for a trial
	// rejected before it ran.
	info     *event.TrialInfo
	infoCopy event.TrialInfo // what info points to
	// agents are the trial's agents in its order; the trials that follow share the
	// slice while their agents have the same shapes.
	agents   []trialAgent
	policies []string
	agentsJS string
	policyJS string
}

type trialAgent struct {
	name string
	sh   *shape
	log  *agentLog
}

const (
	sideTrials = iota
	sideEpisodes
	sideRewards
)

func newWriter(d *Dataset) *Writer {
	w := &Writer{ds: d, cfg: &d.cfg, fl: startFlusher(d),
		shapes: map[string]*shape{}, agents: map[string]*agentLog{}, trials: map[string]*trialLog{}}
	w.tables[sideTrials] = newSideTable(w, TableTrials, trialFields)
	w.tables[sideEpisodes] = newSideTable(w, TableEpisodes, episodeFields)
	w.tables[sideRewards] = newSideTable(w, TableRewards, rewardFields)
	return w
}

// Handle logs one event. It fails for a step of a trial whose Running state it has
// not seen (ErrEvent), a step that does not fit its agent's spaces (ErrEvent), and
// after a failed write, which fails every later call too.
func (w *Writer) Handle(_ context.Context, e *event.Event) error {
	// usable's test, without its call in the usual case: Handle takes every step.
	if w.closed || w.err != nil || w.fl.err.Load() != nil {
		return w.usable()
	}
	switch e.Kind {
	case event.KindStep:
		if e.Step != nil {
			return w.step(e.Trial, e.Step)
		}
	case event.KindState:
		if e.State != nil {
			return w.state(e.Trial, e.State)
		}
	case event.KindEpisode:
		if e.Episode != nil && e.Episode.End {
			return w.episode(e.Trial, e.Episode)
		}
	case event.KindReward:
		if e.Reward != nil {
			return w.reward(e.Trial, e.Reward)
		}
	}
	return nil
}

// usable returns why the writer cannot take events: it is closed, or a write failed.
func (w *Writer) usable() error {
	if w.closed {
		return fmt.Errorf("%w: writer", ErrClosed)
	}
	if w.err == nil {
		w.err = w.fl.failed()
	}
	return w.err
}

// Flush writes the rows buffered so far as record batches and waits until they and
// the batches handed over before are written, so that they survive the process;
// parts stay open. Batches written by Flush may be short.
func (w *Writer) Flush() error {
	if err := w.usable(); err != nil {
		return err
	}
	w.handOver()
	w.err = w.fl.sync()
	return w.err
}

// handOver hands every table's rows to the flusher, the trials' first.
func (w *Writer) handOver() {
	w.handOverTables()
	for _, al := range w.order {
		al.handOver()
	}
}

// handOverTables hands the rows of the trials, episodes and rewards tables to the
// flusher.
func (w *Writer) handOverTables() {
	for _, t := range w.tables {
		t.handOver()
	}
}

// Close writes the rows buffered, finishes the open parts, ends the writing
// goroutine and gives back the writer's memory. After a failed write it leaves the
// open parts as they are, without footers, for Recover, and returns that failure.
// Calling it again returns nil.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if w.usable() == nil {
		w.handOver()
	}
	w.closed = true
	for _, al := range w.order {
		al.retire()
	}
	for _, t := range w.tables {
		t.retire()
	}
	err := w.fl.stop()
	w.agents, w.order, w.trials, w.cur, w.last, w.spare = nil, nil, nil, nil, nil, nil
	w.ds.forget(w)
	return err
}

func (w *Writer) trial(id string) *trialLog {
	if w.cur != nil && w.cur.id == id {
		return w.cur
	}
	t := w.trials[id]
	if t != nil {
		w.cur = t
	}
	return t
}

func (w *Writer) state(id string, sc *event.StateChange) error {
	t := w.trial(id)
	if t == nil && sc.Info != nil && (sc.State == event.Running || sc.State.Done()) {
		var err error
		if t, err = w.begin(id, sc.Info); err != nil {
			return err
		}
		if sc.State == event.Running {
			w.trials[id] = t
			w.cur = t
		}
	}
	switch {
	case sc.State == event.Running:
		w.tables[sideTrials].trialRow(id, t, sc.State, nil)
	case sc.State.Done():
		w.tables[sideTrials].trialRow(id, t, sc.State, sc.Err)
		delete(w.trials, id)
		if w.cur == t {
			w.cur = nil
		}
		if t != nil {
			t.ended = true
			w.recycle(t)
		}
	default:
		return nil
	}
	w.tables[sideTrials].handOverIfFull()
	return nil
}

// begin learns a trial from its info. The trials of a campaign mostly share their
// configuration, agents and policies: what it makes of those (the shapes, the JSON of
// the trials table) it takes from the trial before when they are the same.
func (w *Writer) begin(id string, in *event.TrialInfo) (*trialLog, error) {
	var t *trialLog
	if n := len(w.spare); n > 0 {
		t, w.spare = w.spare[n-1], w.spare[:n-1]
	} else {
		t = new(trialLog)
	}
	// The fields the writer logs; it keeps the agents' names and shapes, and the
	// policies as JSON, apart.
	*t = trialLog{id: id, infoCopy: event.TrialInfo{ID: in.ID, Index: in.Index, Env: in.Env, Seed: in.Seed,
		Episodes: in.Episodes, MaxTicks: in.MaxTicks, DefinesSuccess: in.DefinesSuccess, Task: in.Task}}
	info := &t.infoCopy
	t.info = info
	last := w.last
	if last != nil && bytes.Equal(in.Config, last.info.Config) {
		info.Config = last.info.Config
	} else {
		info.Config = bytes.Clone(in.Config)
	}
	if last != nil && slices.Equal(in.Metrics, last.info.Metrics) {
		info.Metrics = last.info.Metrics
	} else {
		info.Metrics = slices.Clone(in.Metrics)
	}
	same := last != nil && len(last.agents) == len(in.Agents)
	for i, a := range in.Agents {
		sh := w.shapes[a.Name]
		if sh == nil || !sh.same(a) {
			var err error
			if sh, err = newShape(a); err != nil {
				return nil, fmt.Errorf("%w (trial %s)", err, id)
			}
			w.shapes[a.Name] = sh
		}
		same = same && last.agents[i].sh == sh
	}
	if same && slices.Equal(last.policies, in.Policies) {
		t.agents, t.policies, t.agentsJS, t.policyJS = last.agents, last.policies, last.agentsJS, last.policyJS
		w.last = t
		w.recycle(last)
		return t, nil
	}
	type agentJS struct {
		Name        string          `json:"name"`
		Observation json.RawMessage `json:"observation_space"`
		Action      json.RawMessage `json:"action_space"`
		MaskLen     int             `json:"mask_len"`
	}
	agents := make([]agentJS, 0, len(in.Agents))
	policies := make(map[string]string, len(in.Agents))
	t.agents = make([]trialAgent, 0, len(in.Agents))
	for i, a := range in.Agents {
		sh := w.shapes[a.Name]
		t.agents = append(t.agents, trialAgent{name: a.Name, sh: sh})
		agents = append(agents, agentJS{Name: a.Name, Observation: sh.obsJSON, Action: sh.actJSON, MaskLen: sh.maskLen})
		if i < len(in.Policies) {
			policies[a.Name] = in.Policies[i]
		}
	}
	ajs, err := json.Marshal(agents)
	if err != nil {
		return nil, fmt.Errorf("%w: trial %s: %w", ErrEvent, id, err)
	}
	pjs, err := json.Marshal(policies)
	if err != nil {
		return nil, fmt.Errorf("%w: trial %s: %w", ErrEvent, id, err)
	}
	t.policies = slices.Clone(in.Policies)
	t.agentsJS, t.policyJS = string(ajs), string(pjs)
	w.last = t
	if last != nil {
		w.recycle(last)
	}
	return t, nil
}

// recycle keeps t for begin to reuse if its trial ended and nothing refers to it any
// longer: it is not the latest trial begun, which the next is compared with, nor the
// opener of an agent's part, whose metadata it gives when the part's first batch is
// handed over (it is then left to the collector). The agents' logs forget it as the
// trial of their latest row, which they recognise by its address.
func (w *Writer) recycle(t *trialLog) {
	if !t.ended || t == w.last || t == w.cur {
		return
	}
	for _, al := range w.order {
		if al.opener == t {
			return
		}
	}
	for _, al := range w.order {
		if al.lastTrial == t {
			al.lastTrial = nil
		}
	}
	w.spare = append(w.spare, t)
}

func (w *Writer) step(id string, s *event.StepEvent) error {
	t := w.trial(id)
	if t == nil {
		return fmt.Errorf("%w: step of trial %s, whose Running state the writer has not seen", ErrEvent, id)
	}
	var ta *trialAgent
	for i := range t.agents {
		if t.agents[i].name == s.Agent {
			ta = &t.agents[i]
			break
		}
	}
	if ta == nil {
		return fmt.Errorf("%w: step of agent %s, which trial %s does not have", ErrEvent, s.Agent, id)
	}
	al := ta.log
	if al == nil || al.sh != ta.sh {
		al = w.agentLog(ta.sh)
		ta.log = al
	}
	if err := al.check(s); err != nil {
		return fmt.Errorf("%w (trial %s, episode %d, tick %d)", err, id, s.Episode, s.Tick)
	}
	al.append(t, s)
	if al.cols.full() {
		al.handOver()
	}
	return nil
}

// agentLog returns the log of sh's agent, switching it to sh if it logged another
// shape of that agent so far (a pre-trial hook changed the environment).
func (w *Writer) agentLog(sh *shape) *agentLog {
	al := w.agents[sh.name]
	if al != nil && al.sh == sh {
		return al
	}
	if al != nil {
		al.handOver()
		al.retire()
		i := slices.Index(w.order, al)
		w.order = slices.Delete(w.order, i, i+1)
	}
	al = newAgentLog(w, sh)
	w.agents[sh.name] = al
	w.order = append(w.order, al)
	return al
}

func (w *Writer) episode(id string, ep *event.EpisodeEvent) error {
	t := w.tables[sideEpisodes]
	t.episodeRow(id, w.trial(id), ep)
	t.handOverIfFull()
	return nil
}

func (w *Writer) reward(id string, r *event.RetroReward) error {
	t := w.tables[sideRewards]
	t.rewardRow(id, r)
	t.handOverIfFull()
	return nil
}

// Locked wraps a Writer for concurrent use: a runners.Controller's trials, which run
// at once, can share it. Every call takes a lock.
type Locked struct {
	mu sync.Mutex
	w  *Writer
}

// NewLocked returns w behind a lock.
func NewLocked(w *Writer) *Locked { return &Locked{w: w} }

// Handle calls the writer's Handle under the lock.
func (l *Locked) Handle(ctx context.Context, e *event.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Handle(ctx, e)
}

// Flush calls the writer's Flush under the lock.
func (l *Locked) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// Close calls the writer's Close under the lock.
func (l *Locked) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Close()
}

// agentLog buffers the steps of one agent and hands them to the flusher, which
// writes them to the agent's partition.
type agentLog struct {
	w      *Writer
	sh     *shape
	fields []arrow.Field
	out    *output

	// cols holds the rows being buffered, nil until the first row after a hand-over;
	// free holds the column sets the flusher is done with, and sets counts those
	// made (two at most).
	cols *stepColumns
	free chan batch
	sets int

	// seq counts the batches handed over, and raw[seq%2] is the size of batch seq
	// in memory. newPart says that the next batch begins a part, of which parts is
	// then the number; opener is the trial of the part's first row; began is the
	// number of the part's first batch.
	seq     int
	raw     [2]int64
	newPart bool
	parts   int
	began   int
	opener  *trialLog

	trialD, agentD, parentD, srcD *dict.Strings
	// lastTrial is the trial of the latest row and lastTrialID its index in trialD:
	// a batch holds long runs of one trial.
	lastTrial   *trialLog
	lastTrialID int32
}

func newAgentLog(w *Writer, sh *shape) *agentLog {
	return &agentLog{
		w: w, sh: sh, fields: sh.fields(), out: newOutput(tableDir(TableSteps, sh.name), true, nil),
		free: make(chan batch, 2), newPart: true,
		trialD: dict.New(), agentD: dict.New(), parentD: dict.New(), srcD: dict.New(),
	}
}

// check reports what keeps s from fitting the agent's columns.
func (al *agentLog) check(s *event.StepEvent) error {
	sh := al.sh
	if len(s.Obs) != sh.obsDim {
		return fmt.Errorf("%w: agent %s: observation of length %d; its space has %d", ErrEvent, s.AgentID, len(s.Obs), sh.obsDim)
	}
	if s.Mask != nil && len(s.Mask) != sh.maskLen {
		return fmt.Errorf("%w: agent %s: action mask of length %d; want %d", ErrEvent, s.AgentID, len(s.Mask), sh.maskLen)
	}
	if s.Start {
		return nil
	}
	switch {
	case sh.actFloats && len(s.Action.Floats) != sh.actDim:
		return fmt.Errorf("%w: agent %s: action of %d floats; its space has %d", ErrEvent, s.AgentID, len(s.Action.Floats), sh.actDim)
	case sh.actInts && len(s.Action.Ints) != sh.actDim:
		return fmt.Errorf("%w: agent %s: action of %d ints; its space has %d", ErrEvent, s.AgentID, len(s.Action.Ints), sh.actDim)
	}
	return nil
}

// append adds s, of trial t, to the rows. check(s) must have passed.
func (al *agentLog) append(t *trialLog, s *event.StepEvent) {
	if al.cols == nil {
		al.cols = al.columns()
		al.endFullPart()
	}
	if al.opener == nil {
		al.opener = t
	}
	if t != al.lastTrial {
		// Not by address: a trial's id comes once per batch, mostly, and each
		// trial's is new, so that it would only push an agent's id out of the
		// dictionary's cache of addresses.
		al.lastTrial, al.lastTrialID = t, al.trialD.Find(t.id)
	}
	id := ids{trial: al.lastTrialID, agent: al.agentD.ID(s.AgentID), parent: -1}
	if s.ParentID != "" {
		id.parent = al.parentD.ID(s.ParentID)
	}
	al.cols.append(s, id, al.srcD)
}

// columns returns an empty column set: a new one while the agent has fewer than
// two, else the one the flusher gives back next, waiting for it if it is writing
// both.
func (al *agentLog) columns() *stepColumns {
	if al.sets < 2 {
		select {
		case b := <-al.free:
			return b.(*stepColumns)
		default:
		}
		al.sets++
		c := newStepColumns(al.w.cfg.mem, al.sh, al.w.cfg.batchRows)
		c.noObs = al.w.cfg.noObservations
		return c
	}
	return (<-al.free).(*stepColumns)
}

// handOver hands the rows buffered to the flusher as one batch, the trials table's
// rows before them (so that a batch on disk has its trial's info there too), and
// decides whether the next batch begins a new part.
func (al *agentLog) handOver() {
	c := al.cols
	if c == nil || c.n == 0 {
		return
	}
	al.w.handOverTables()
	c.dicts = dicts{trial: al.trialD.Array(), agent: al.agentD.Array(), parent: al.parentD.Array(), source: al.srcD.Array()}
	j := job{out: al.out, b: c, seq: al.seq, free: al.free}
	if al.newPart {
		md := al.sh.metadata(al.w.ds.base, al.opener)
		md = withKey(md, MetaTable, TableSteps)
		j.schema = arrow.NewSchema(al.fields, &md)
		al.newPart = false
		al.parts++
		al.began = al.seq
	}
	al.raw[al.seq%2] = c.size()
	al.cols = nil
	al.seq++
	al.w.fl.send(j)
	if al.w.waitEach {
		_ = al.w.fl.sync() // its error comes with the next call
	}
	// The next batch's rows take their dictionary indices afresh, in a new part,
	// once a dictionary is full.
	if al.dictLen() >= MaxPartDictValues {
		al.beginPart()
	}
}

// endFullPart begins a new part with the next batch if the open one is full once the
// batch handed over last is written. The flusher may still be writing that batch:
// its size on disk is estimated from its size in memory, at the ratio of the batch
// before it, which the flusher has written once the column set for the next batch
// is free. So where parts end depends on the rows alone, not on how far the flusher
// got.
func (al *agentLog) endFullPart() {
	last := al.seq - 1
	if al.newPart || last < 0 {
		return
	}
	if last == 0 {
		// The table's first batch: no ratio to estimate by yet. Wait for it, once.
		_ = al.w.fl.sync() // its error comes with the next call
		if wr, ok := al.out.afterBatch(0); ok && wr.bytes >= al.w.cfg.maxPart {
			al.beginPart()
		}
		return
	}
	prev, ok := al.out.afterBatch(last - 1)
	if !ok {
		return // not written: the flusher failed
	}
	ratio := float64(prev.added) / float64(max(al.raw[(last-1)%2], 1))
	size := int64(ratio * float64(al.raw[last%2]))
	if al.began < last {
		size += prev.bytes // the batch before it is in the part too
	}
	if size >= al.w.cfg.maxPart {
		al.beginPart()
	}
}

// beginPart makes the next batch begin a new part, with new dictionaries.
func (al *agentLog) beginPart() {
	al.newPart, al.opener, al.lastTrial = true, nil, nil
	for _, d := range []*dict.Strings{al.trialD, al.agentD, al.parentD, al.srcD} {
		d.Reset()
	}
}

// dictLen is the number of values of the part's largest dictionary.
func (al *agentLog) dictLen() int {
	return max(al.trialD.Len(), al.agentD.Len(), al.parentD.Len(), al.srcD.Len())
}

// retire ends the agent's log: the flusher finishes its part and gives its column
// sets back to the allocator. Its rows must have been handed over.
func (al *agentLog) retire() {
	if al.cols != nil {
		al.free <- al.cols // empty, or the rows of a writer that failed
		al.cols = nil
	}
	al.w.fl.send(job{out: al.out, free: al.free, finish: true, retire: true})
	for _, d := range []*dict.Strings{al.trialD, al.agentD, al.parentD, al.srcD} {
		d.Release()
	}
}

func withKey(md arrow.Metadata, k, v string) arrow.Metadata {
	keys, vals := append(md.Keys(), k), append(md.Values(), v)
	return arrow.NewMetadata(keys, vals)
}

// sideTable buffers the rows of the trials, episodes or rewards table and hands
// them to the flusher.
type sideTable struct {
	w      *Writer
	fields []arrow.Field
	out    *output
	cur    *sideBatch // nil until the first row after a hand-over
	free   chan batch
	sets   int
}

func newSideTable(w *Writer, name string, fields []arrow.Field) *sideTable {
	md := arrow.MetadataFrom(w.ds.base)
	md = withKey(md, MetaTable, name)
	return &sideTable{w: w, fields: fields, free: make(chan batch, 2),
		out: newOutput(tableDir(name, ""), false, arrow.NewSchema(fields, &md))}
}

// batch returns the batch that takes the next row.
func (t *sideTable) batch() *sideBatch {
	if t.cur == nil {
		if t.sets < 2 {
			select {
			case b := <-t.free:
				t.cur = b.(*sideBatch)
			default:
				t.sets++
				t.cur = newSideBatch(t.w.cfg.mem, t.fields)
			}
		} else {
			t.cur = (<-t.free).(*sideBatch)
		}
	}
	return t.cur
}

// handOver hands the rows buffered to the flusher.
func (t *sideTable) handOver() {
	if t.cur == nil || t.cur.n == 0 {
		return
	}
	t.w.fl.send(job{out: t.out, b: t.cur, free: t.free})
	t.cur = nil
}

func (t *sideTable) handOverIfFull() {
	if t.cur != nil && t.cur.n >= t.w.cfg.batchRows {
		t.handOver()
	}
}

// retire ends the table: the flusher finishes its part and gives its column sets
// back to the allocator. Its rows must have been handed over.
func (t *sideTable) retire() {
	if t.cur != nil {
		t.free <- t.cur
		t.cur = nil
	}
	t.w.fl.send(job{out: t.out, free: t.free, finish: true, retire: true})
}

// trialRow adds a row of trial id, described by tl (nil when unknown), to the
// trials table.
func (t *sideTable) trialRow(id string, tl *trialLog, state event.State, err error) {
	b := t.batch()
	b.str(trialID).add(id, false)
	if tl == nil || tl.info == nil {
		for _, c := range []int{trialIndex, trialEnv, trialConfig, trialSeed, trialEpisodes, trialMaxTicks, trialAgents, trialPolicies, trialDefinesSuccess} {
			b.cols[c].addNull()
		}
	} else {
		in := tl.info
		b.i64(trialIndex).add(int64(in.Index), false)
		b.str(trialEnv).add(in.Env, false)
		cfg := bytes.TrimSpace(in.Config)
		b.str(trialConfig).add(unsafe.String(unsafe.SliceData(cfg), len(cfg)), len(cfg) == 0)
		b.u64(trialSeed).add(in.Seed, false)
		b.i64(trialEpisodes).add(int64(in.Episodes), false)
		b.i64(trialMaxTicks).add(int64(in.MaxTicks), false)
		b.str(trialAgents).add(tl.agentsJS, false)
		b.str(trialPolicies).add(tl.policyJS, false)
		b.boolean(trialDefinesSuccess).add(in.DefinesSuccess, false)
	}
	b.str(trialState).add(state.String(), false)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	b.str(trialError).add(msg, err == nil)
	task := ""
	if tl != nil && tl.info != nil {
		task = tl.info.Task
	}
	b.str(trialTask).add(task, task == "")
	b.n++
}

func (t *sideTable) episodeRow(id string, tl *trialLog, ep *event.EpisodeEvent) {
	b := t.batch()
	b.str(epTrial).add(id, false)
	b.i32(epEpisode).add(int32(ep.Episode), false)
	b.u64(epSeed).add(ep.Seed, false)
	b.i64(epTicks).add(int64(ep.Ticks), false)
	b.boolean(epTruncated).add(ep.Truncated, false)
	defines := tl != nil && tl.info != nil && tl.info.DefinesSuccess
	b.boolean(epSuccess).add(ep.Success, !defines)
	rc := b.returns(epReturns)
	for i, r := range ep.Returns {
		if tl != nil && i < len(tl.agents) {
			rc.push(tl.agents[i].name, r)
		} else {
			rc.push(fmt.Sprintf("agent_%d", i), r)
		}
	}
	rc.end()
	mc := b.returns(epMetrics)
	for i, v := range ep.Metrics {
		if math.IsNaN(v) {
			continue // the episode did not tell
		}
		if tl != nil && tl.info != nil && i < len(tl.info.Metrics) {
			mc.push(tl.info.Metrics[i], v)
		} else {
			mc.push(fmt.Sprintf("metric_%d", i), v)
		}
	}
	mc.end()
	b.n++
}

func (t *sideTable) rewardRow(id string, r *event.RetroReward) {
	b := t.batch()
	b.str(rwTrial).add(id, false)
	b.i32(rwEpisode).add(int32(r.Episode), false)
	b.i64(rwTick).add(int64(r.Tick), false)
	b.str(rwAgent).add(r.Agent, false)
	b.str(rwAgentID).add(r.AgentID, false)
	b.str(rwSource).add(r.Source, false)
	b.f32(rwValue).add(float32(r.Value), false)
	b.i32(rwArrivedEpisode).add(int32(r.ArrivedEpisode), false)
	b.i64(rwArrivedTick).add(int64(r.ArrivedTick), false)
	b.n++
}
