package datalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/runners"
)

// Writer is a runners.Sink, and an io.Closer, that writes the events of the trials it
// is given into its Dataset: each step event as a row of its agent's partition, each
// trial's info and final state to the trials table, each episode's end to the
// episodes table, each retroactive reward to the rewards table.
//
// Rows are buffered per agent and written as one record batch when WithBatchRows of
// them are there; a part is finished (its footer written) once it holds
// WithMaxPartBytes, and at Close. A Writer holds at most one batch of rows per agent
// and per table, and the dictionaries of its open parts, whatever the length of the
// run; its step path allocates nothing in steady state.
//
// A Writer is not safe for concurrent use: give each campaign worker its own
// (Dataset.WorkerSinks), or wrap one in Locked for a runners.Controller, whose trials
// run at once. After a write fails, every later call returns that error, and Close
// leaves the open parts without their footers for Recover.
type Writer struct {
	ds  *Dataset
	cfg *writeConfig

	shapes map[string]*shape
	agents map[string]*agentLog
	order  []*agentLog // agents in the order they were first logged
	trials map[string]*trialLog
	cur    *trialLog
	tables [3]*sideTable // trials, episodes, rewards

	closed bool
	err    error
}

// trialLog is what a writer keeps of a trial while it runs.
type trialLog struct {
	id       string
	info     *runners.TrialInfo // a copy; nil for a trial rejected before it ran
	agents   []trialAgent
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
	w := &Writer{ds: d, cfg: &d.cfg, shapes: map[string]*shape{}, agents: map[string]*agentLog{}, trials: map[string]*trialLog{}}
	w.tables[sideTrials] = newSideTable(w, TableTrials, trialFields)
	w.tables[sideEpisodes] = newSideTable(w, TableEpisodes, episodeFields)
	w.tables[sideRewards] = newSideTable(w, TableRewards, rewardFields)
	return w
}

// Handle logs one event. It fails for a step of a trial whose Running state it has
// not seen (ErrEvent), a step that does not fit its agent's spaces (ErrEvent), and
// a failed write; a failed write fails every later call too.
func (w *Writer) Handle(_ context.Context, e *runners.Event) error {
	if w.closed {
		return fmt.Errorf("%w: writer", ErrClosed)
	}
	if w.err != nil {
		return w.err
	}
	switch e.Kind {
	case runners.KindStep:
		if e.Step != nil {
			return w.step(e.Trial, e.Step)
		}
	case runners.KindState:
		if e.State != nil {
			return w.state(e.Trial, e.State)
		}
	case runners.KindEpisode:
		if e.Episode != nil && e.Episode.End {
			return w.episode(e.Trial, e.Episode)
		}
	case runners.KindReward:
		if e.Reward != nil {
			return w.reward(e.Trial, e.Reward)
		}
	}
	return nil
}

// Flush writes the rows buffered so far as record batches, so that they survive the
// process; parts stay open. Batches written by Flush may be short.
func (w *Writer) Flush() error {
	if w.closed {
		return fmt.Errorf("%w: writer", ErrClosed)
	}
	if w.err != nil {
		return w.err
	}
	if err := w.flushTables(); err != nil {
		return err
	}
	for _, al := range w.order {
		if err := w.flushAgent(al); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the rows buffered, finishes the open parts and releases the writer's
// memory. After a failed write it leaves the open parts as they are, without
// footers, for Recover, and returns that failure. Calling it again returns nil.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	var errs []error
	if w.err == nil {
		errs = append(errs, w.Flush())
	}
	w.closed = true
	bad := w.err != nil
	for _, al := range w.order {
		errs = append(errs, al.close(bad))
	}
	for _, t := range w.tables {
		errs = append(errs, t.close(bad))
	}
	w.agents, w.order, w.trials, w.cur = nil, nil, nil, nil
	w.ds.forget(w)
	if bad {
		errs = append(errs, w.err)
	}
	return errors.Join(errs...)
}

// fail makes a write error stick.
func (w *Writer) fail(err error) error {
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("datalog: %w", err)
	}
	return w.err
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

func (w *Writer) state(id string, sc *runners.StateChange) error {
	t := w.trial(id)
	if t == nil && sc.Info != nil && (sc.State == runners.Running || sc.State.Done()) {
		var err error
		if t, err = w.begin(id, sc.Info); err != nil {
			return err
		}
		if sc.State == runners.Running {
			w.trials[id] = t
			w.cur = t
		}
	}
	switch {
	case sc.State == runners.Running:
		w.tables[sideTrials].trialRow(id, t, sc.State, nil)
	case sc.State.Done():
		w.tables[sideTrials].trialRow(id, t, sc.State, sc.Err)
		delete(w.trials, id)
		if w.cur == t {
			w.cur = nil
		}
	default:
		return nil
	}
	return w.maybeFlushTable(sideTrials)
}

// begin learns a trial from its info.
func (w *Writer) begin(id string, in *runners.TrialInfo) (*trialLog, error) {
	info := *in
	info.Config = bytes.Clone(in.Config)
	info.Agents = slices.Clone(in.Agents)
	info.Policies = slices.Clone(in.Policies)
	t := &trialLog{id: id, info: &info}
	type agentJS struct {
		Name        string          `json:"name"`
		Observation json.RawMessage `json:"observation_space"`
		Action      json.RawMessage `json:"action_space"`
		MaskLen     int             `json:"mask_len"`
	}
	agents := make([]agentJS, 0, len(info.Agents))
	policies := make(map[string]string, len(info.Agents))
	for i, a := range info.Agents {
		sh := w.shapes[a.Name]
		if sh == nil || !sh.same(a) {
			var err error
			if sh, err = newShape(a); err != nil {
				return nil, fmt.Errorf("%w (trial %s)", err, id)
			}
			w.shapes[a.Name] = sh
		}
		t.agents = append(t.agents, trialAgent{name: a.Name, sh: sh})
		agents = append(agents, agentJS{Name: a.Name, Observation: sh.obsJSON, Action: sh.actJSON, MaskLen: sh.maskLen})
		if i < len(info.Policies) {
			policies[a.Name] = info.Policies[i]
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
	t.agentsJS, t.policyJS = string(ajs), string(pjs)
	return t, nil
}

func (w *Writer) step(id string, s *runners.StepEvent) error {
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
		var err error
		if al, err = w.agentLog(ta.sh); err != nil {
			return err
		}
		ta.log = al
	}
	if err := al.check(s); err != nil {
		return fmt.Errorf("%w (trial %s, episode %d, tick %d)", err, id, s.Episode, s.Tick)
	}
	al.append(t, s)
	if al.rows >= w.cfg.batchRows {
		return w.flushAgent(al)
	}
	return nil
}

// agentLog returns the log of sh's agent, switching it to sh if it logged another
// shape of that agent so far (a pre-trial hook changed the environment).
func (w *Writer) agentLog(sh *shape) (*agentLog, error) {
	al := w.agents[sh.name]
	if al != nil && al.sh == sh {
		return al, nil
	}
	if al != nil {
		if err := w.flushTables(); err != nil {
			return nil, err
		}
		if err := al.close(false); err != nil {
			return nil, w.fail(err)
		}
		i := slices.Index(w.order, al)
		w.order = slices.Delete(w.order, i, i+1)
	}
	al = newAgentLog(w, sh)
	w.agents[sh.name] = al
	w.order = append(w.order, al)
	return al, nil
}

func (w *Writer) flushAgent(al *agentLog) error {
	if al.rows == 0 {
		return nil
	}
	// The trials' rows first, so that a batch on disk has its trial's info there too.
	if err := w.flushTables(); err != nil {
		return err
	}
	return w.fail(al.flush())
}

func (w *Writer) flushTables() error {
	for _, t := range w.tables {
		if err := w.fail(t.flush()); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) maybeFlushTable(i int) error {
	if t := w.tables[i]; t.rows >= w.cfg.batchRows {
		return w.fail(t.flush())
	}
	return nil
}

func (w *Writer) episode(id string, ep *runners.EpisodeEvent) error {
	w.tables[sideEpisodes].episodeRow(id, w.trial(id), ep)
	return w.maybeFlushTable(sideEpisodes)
}

func (w *Writer) reward(id string, r *runners.RetroReward) error {
	w.tables[sideRewards].rewardRow(id, r)
	return w.maybeFlushTable(sideRewards)
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
func (l *Locked) Handle(ctx context.Context, e *runners.Event) error {
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

// agentLog buffers the steps of one agent and writes them to its partition.
type agentLog struct {
	w      *Writer
	sh     *shape
	dir    string
	fields []arrow.Field
	part   *partWriter
	opener *trialLog // the trial of the first row of the open part
	rows   int

	trialD, agentD, parentD, srcD *strDict

	trial, agentID, parentID *array.Int32Builder
	episode, index, span     *array.Int32Builder
	tick                     *array.Int64Builder
	start, acting            *array.BooleanBuilder
	term, trunc              *array.BooleanBuilder
	obs                      *array.FixedSizeListBuilder
	obsV                     *array.Float32Builder
	actInt                   *array.Int64Builder // Discrete
	act                      *array.FixedSizeListBuilder
	actF                     *array.Float32Builder // Box
	actI                     *array.Int64Builder   // MultiDiscrete, MultiBinary
	mask                     *array.FixedSizeListBuilder
	maskV                    *array.BooleanBuilder
	reward                   *array.Float32Builder
	srcOff, srcIdx           *array.Int32Builder
	srcVal                   *array.Float32Builder
	nsrc                     int32
	msgs                     *array.ListBuilder
	msg                      *array.StructBuilder
	msgFrom, msgTo           *array.StringBuilder
	msgPay                   *array.BinaryBuilder
	msgSent                  *array.Int64Builder

	cols []arrow.Array
}

func newAgentLog(w *Writer, sh *shape) *agentLog {
	mem := w.cfg.mem
	al := &agentLog{
		w: w, sh: sh, dir: tableDir(TableSteps, sh.name), fields: sh.fields(),
		trialD: newStrDict(), agentD: newStrDict(), parentD: newStrDict(), srcD: newStrDict(),
		trial: array.NewInt32Builder(mem), agentID: array.NewInt32Builder(mem), parentID: array.NewInt32Builder(mem),
		episode: array.NewInt32Builder(mem), index: array.NewInt32Builder(mem), span: array.NewInt32Builder(mem),
		tick:  array.NewInt64Builder(mem),
		start: array.NewBooleanBuilder(mem), acting: array.NewBooleanBuilder(mem),
		term: array.NewBooleanBuilder(mem), trunc: array.NewBooleanBuilder(mem),
		obs:    array.NewFixedSizeListBuilder(mem, int32(sh.obsDim), arrow.PrimitiveTypes.Float32),
		reward: array.NewFloat32Builder(mem),
		srcOff: array.NewInt32Builder(mem), srcIdx: array.NewInt32Builder(mem), srcVal: array.NewFloat32Builder(mem),
		msgs: array.NewListBuilder(mem, messageType),
	}
	al.obsV = al.obs.ValueBuilder().(*array.Float32Builder)
	switch at := sh.actType.(type) {
	case *arrow.FixedSizeListType:
		al.act = array.NewFixedSizeListBuilder(mem, at.Len(), at.Elem())
		switch vb := al.act.ValueBuilder().(type) {
		case *array.Float32Builder:
			al.actF = vb
		case *array.Int64Builder:
			al.actI = vb
		}
	default:
		al.actInt = array.NewInt64Builder(mem)
	}
	if sh.maskLen > 0 {
		al.mask = array.NewFixedSizeListBuilder(mem, int32(sh.maskLen), arrow.FixedWidthTypes.Boolean)
		al.maskV = al.mask.ValueBuilder().(*array.BooleanBuilder)
	}
	al.msg = al.msgs.ValueBuilder().(*array.StructBuilder)
	al.msgFrom = al.msg.FieldBuilder(0).(*array.StringBuilder)
	al.msgTo = al.msg.FieldBuilder(1).(*array.StringBuilder)
	al.msgPay = al.msg.FieldBuilder(2).(*array.BinaryBuilder)
	al.msgSent = al.msg.FieldBuilder(3).(*array.Int64Builder)
	al.cols = make([]arrow.Array, 0, len(al.fields))
	return al
}

// check reports what keeps s from fitting the agent's columns.
func (al *agentLog) check(s *runners.StepEvent) error {
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
	case al.actF != nil && len(s.Action.Floats) != sh.actDim:
		return fmt.Errorf("%w: agent %s: action of %d floats; its space has %d", ErrEvent, s.AgentID, len(s.Action.Floats), sh.actDim)
	case al.actI != nil && len(s.Action.Ints) != sh.actDim:
		return fmt.Errorf("%w: agent %s: action of %d ints; its space has %d", ErrEvent, s.AgentID, len(s.Action.Ints), sh.actDim)
	}
	return nil
}

// append adds s, of trial t, to the rows. check(s) must have passed.
func (al *agentLog) append(t *trialLog, s *runners.StepEvent) {
	if al.opener == nil {
		al.opener = t
	}
	if al.rows == 0 {
		al.reserve(al.w.cfg.batchRows)
	}
	al.trial.Append(al.trialD.id(t.id))
	al.episode.Append(int32(s.Episode))
	al.tick.Append(int64(s.Tick))
	al.index.Append(int32(s.Index))
	al.agentID.Append(al.agentD.id(s.AgentID))
	if s.ParentID == "" {
		al.parentID.AppendNull()
	} else {
		al.parentID.Append(al.parentD.id(s.ParentID))
	}
	al.start.Append(s.Start)
	al.acting.Append(s.Acting)
	al.obs.Append(true)
	al.obsV.AppendValues(s.Obs, nil)
	switch {
	case al.actInt != nil:
		if s.Start {
			al.actInt.AppendNull()
		} else {
			al.actInt.Append(s.Action.Int)
		}
	case s.Start:
		al.act.AppendNull()
	case al.actF != nil:
		al.act.Append(true)
		al.actF.AppendValues(s.Action.Floats, nil)
	default:
		al.act.Append(true)
		al.actI.AppendValues(s.Action.Ints, nil)
	}
	if al.mask != nil {
		if s.Mask == nil {
			al.mask.AppendNull()
		} else {
			al.mask.Append(true)
			al.maskV.AppendValues(s.Mask, nil)
		}
	}
	al.reward.Append(float32(s.Reward))
	al.srcOff.Append(al.nsrc)
	for _, src := range s.Sources {
		al.srcIdx.Append(al.srcD.id(src.Source))
		al.srcVal.Append(float32(src.Value))
		al.nsrc++
	}
	al.term.Append(s.Terminated)
	al.trunc.Append(s.Truncated)
	al.span.Append(int32(s.SpanTicks))
	al.msgs.Append(true)
	for i := range s.Messages {
		m := &s.Messages[i]
		al.msg.Append(true)
		al.msgFrom.Append(m.From)
		al.msgTo.Append(m.To)
		al.msgPay.Append(m.Payload)
		al.msgSent.Append(int64(m.Sent))
	}
	al.rows++
}

// reserve makes room for a batch of n rows at once, rather than growing each buffer
// by doubling as rows come.
func (al *agentLog) reserve(n int) {
	for _, b := range []array.Builder{al.trial, al.agentID, al.parentID, al.episode, al.index, al.span, al.tick,
		al.start, al.acting, al.term, al.trunc, al.obs, al.reward, al.srcIdx, al.srcVal, al.msgs} {
		b.Reserve(n)
	}
	al.srcOff.Reserve(n + 1)
	al.obsV.Reserve(n * al.sh.obsDim)
	switch {
	case al.actInt != nil:
		al.actInt.Reserve(n)
	case al.actF != nil:
		al.act.Reserve(n)
		al.actF.Reserve(n * al.sh.actDim)
	default:
		al.act.Reserve(n)
		al.actI.Reserve(n * al.sh.actDim)
	}
	if al.mask != nil {
		al.mask.Reserve(n)
		al.maskV.Reserve(n * al.sh.maskLen)
	}
}

// flush writes the rows as one batch, opening a part if none is open and finishing
// it once it is full.
func (al *agentLog) flush() error {
	if al.rows == 0 {
		return nil
	}
	w := al.w
	if al.part == nil {
		md := al.sh.metadata(w.ds.base, al.opener)
		md = withKey(md, MetaTable, TableSteps)
		p, err := w.ds.createPart(al.dir, arrow.NewSchema(al.fields, &md))
		if err != nil {
			return err
		}
		al.part = p
	}
	rec := al.build(al.part.schema)
	n := rec.NumRows()
	err := al.part.writeBatch(rec)
	rec.Release()
	if err != nil {
		return err
	}
	w.ds.count(n, al.part)
	if al.part.size() >= w.cfg.maxPart {
		return al.finishPart()
	}
	return nil
}

func (al *agentLog) finishPart() error {
	err := al.part.finish()
	al.part, al.opener = nil, nil
	al.trialD.reset()
	al.agentD.reset()
	al.parentD.reset()
	al.srcD.reset()
	return err
}

// build turns the buffered rows into a record batch of schema and empties the
// builders.
func (al *agentLog) build(schema *arrow.Schema) arrow.RecordBatch {
	n := al.rows
	cols := al.cols[:0]
	cols = append(cols,
		dictArray(al.trial, al.trialD),
		al.episode.NewArray(),
		al.tick.NewArray(),
		al.index.NewArray(),
		dictArray(al.agentID, al.agentD),
		dictArray(al.parentID, al.parentD),
		al.start.NewArray(),
		al.acting.NewArray(),
		al.obs.NewArray(),
	)
	if al.actInt != nil {
		cols = append(cols, al.actInt.NewArray())
	} else {
		cols = append(cols, al.act.NewArray())
	}
	if al.mask != nil {
		cols = append(cols, al.mask.NewArray())
	}
	cols = append(cols, al.reward.NewArray(), al.sources(n), al.term.NewArray(), al.trunc.NewArray(), al.span.NewArray(), al.msgs.NewArray())
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for i, c := range cols {
		c.Release()
		cols[i] = nil
	}
	al.cols = cols[:0]
	al.rows = 0
	return rec
}

// sources builds the reward_sources column of n rows.
func (al *agentLog) sources(n int) arrow.Array {
	al.srcOff.Append(al.nsrc)
	off := al.srcOff.NewArray()
	src := dictArray(al.srcIdx, al.srcD)
	val := al.srcVal.NewArray()
	st := array.NewData(sourceType, int(al.nsrc), []*memory.Buffer{nil}, []arrow.ArrayData{src.Data(), val.Data()}, 0, 0)
	ld := array.NewData(sourcesType, n, []*memory.Buffer{nil, off.Data().Buffers()[1]}, []arrow.ArrayData{st}, 0, 0)
	list := array.NewListData(ld)
	for _, r := range []interface{ Release() }{off, src, val, st, ld} {
		r.Release()
	}
	al.nsrc = 0
	return list
}

// dictArray returns the dictionary array of the indices built so far over d.
func dictArray(idx *array.Int32Builder, d *strDict) arrow.Array {
	ind := idx.NewArray()
	dict := d.array()
	a := array.NewDictionaryArray(dictString, ind, dict)
	ind.Release()
	dict.Release()
	return a
}

// close writes the rows left, finishes the part and releases the builders; with
// bad, it leaves the part as it is.
func (al *agentLog) close(bad bool) error {
	var err error
	if !bad {
		err = al.flush()
	}
	if al.part != nil {
		if bad || err != nil {
			al.part.abandon()
			al.part = nil
		} else {
			err = al.finishPart()
		}
	}
	for _, b := range []array.Builder{al.trial, al.agentID, al.parentID, al.episode, al.index, al.span, al.tick,
		al.start, al.acting, al.term, al.trunc, al.obs, al.reward, al.srcOff, al.srcIdx, al.srcVal, al.msgs} {
		b.Release()
	}
	if al.actInt != nil {
		al.actInt.Release()
	} else {
		al.act.Release()
	}
	if al.mask != nil {
		al.mask.Release()
	}
	for _, d := range []*strDict{al.trialD, al.agentD, al.parentD, al.srcD} {
		d.release()
	}
	return err
}

func withKey(md arrow.Metadata, k, v string) arrow.Metadata {
	keys, vals := append(md.Keys(), k), append(md.Values(), v)
	return arrow.NewMetadata(keys, vals)
}

// sideTable buffers the rows of the trials, episodes or rewards table.
type sideTable struct {
	w      *Writer
	name   string
	schema *arrow.Schema
	b      *array.RecordBuilder
	rows   int
	part   *partWriter
}

func newSideTable(w *Writer, name string, fields []arrow.Field) *sideTable {
	md := arrow.MetadataFrom(w.ds.base)
	md = withKey(md, MetaTable, name)
	schema := arrow.NewSchema(fields, &md)
	return &sideTable{w: w, name: name, schema: schema, b: array.NewRecordBuilder(w.cfg.mem, schema)}
}

func (t *sideTable) flush() error {
	if t.rows == 0 {
		return nil
	}
	if t.part == nil {
		p, err := t.w.ds.createPart(tableDir(t.name, ""), t.schema)
		if err != nil {
			return err
		}
		t.part = p
	}
	rec := t.b.NewRecordBatch()
	t.rows = 0
	err := t.part.writeBatch(rec)
	rec.Release()
	if err != nil {
		return err
	}
	t.w.ds.count(0, t.part)
	if t.part.size() >= t.w.cfg.maxPart {
		err = t.part.finish()
		t.part = nil
	}
	return err
}

func (t *sideTable) close(bad bool) error {
	var err error
	if !bad {
		err = t.flush()
	}
	if t.part != nil {
		if bad || err != nil {
			t.part.abandon()
		} else {
			err = t.part.finish()
		}
		t.part = nil
	}
	t.b.Release()
	return err
}

func appendString(b array.Builder, s string, null bool) {
	if null {
		b.AppendNull()
		return
	}
	b.(*array.StringBuilder).Append(s)
}

// trialRow adds a row of trial id, described by t (nil when unknown), to the
// trials table.
func (t *sideTable) trialRow(id string, tl *trialLog, state runners.State, err error) {
	b := t.b
	b.Field(trialID).(*array.StringBuilder).Append(id)
	if tl == nil || tl.info == nil {
		for _, c := range []int{trialIndex, trialEnv, trialConfig, trialSeed, trialEpisodes, trialMaxTicks, trialAgents, trialPolicies, trialDefinesSuccess} {
			b.Field(c).AppendNull()
		}
	} else {
		in := tl.info
		b.Field(trialIndex).(*array.Int64Builder).Append(int64(in.Index))
		appendString(b.Field(trialEnv), in.Env, false)
		cfg := bytes.TrimSpace(in.Config)
		appendString(b.Field(trialConfig), string(cfg), len(cfg) == 0)
		b.Field(trialSeed).(*array.Uint64Builder).Append(in.Seed)
		b.Field(trialEpisodes).(*array.Int64Builder).Append(int64(in.Episodes))
		b.Field(trialMaxTicks).(*array.Int64Builder).Append(int64(in.MaxTicks))
		appendString(b.Field(trialAgents), tl.agentsJS, false)
		appendString(b.Field(trialPolicies), tl.policyJS, false)
		b.Field(trialDefinesSuccess).(*array.BooleanBuilder).Append(in.DefinesSuccess)
	}
	b.Field(trialState).(*array.StringBuilder).Append(state.String())
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	appendString(b.Field(trialError), msg, err == nil)
	t.rows++
}

func (t *sideTable) episodeRow(id string, tl *trialLog, ep *runners.EpisodeEvent) {
	b := t.b
	b.Field(epTrial).(*array.StringBuilder).Append(id)
	b.Field(epEpisode).(*array.Int32Builder).Append(int32(ep.Episode))
	b.Field(epSeed).(*array.Uint64Builder).Append(ep.Seed)
	b.Field(epTicks).(*array.Int64Builder).Append(int64(ep.Ticks))
	b.Field(epTruncated).(*array.BooleanBuilder).Append(ep.Truncated)
	if tl != nil && tl.info != nil && tl.info.DefinesSuccess {
		b.Field(epSuccess).(*array.BooleanBuilder).Append(ep.Success)
	} else {
		b.Field(epSuccess).AppendNull()
	}
	lb := b.Field(epReturns).(*array.ListBuilder)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	lb.Append(true)
	for i, r := range ep.Returns {
		name := fmt.Sprintf("agent_%d", i)
		if tl != nil && tl.info != nil && i < len(tl.info.Agents) {
			name = tl.info.Agents[i].Name
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.StringBuilder).Append(name)
		sb.FieldBuilder(1).(*array.Float64Builder).Append(r)
	}
	t.rows++
}

func (t *sideTable) rewardRow(id string, r *runners.RetroReward) {
	b := t.b
	b.Field(rwTrial).(*array.StringBuilder).Append(id)
	b.Field(rwEpisode).(*array.Int32Builder).Append(int32(r.Episode))
	b.Field(rwTick).(*array.Int64Builder).Append(int64(r.Tick))
	b.Field(rwAgent).(*array.StringBuilder).Append(r.Agent)
	b.Field(rwAgentID).(*array.StringBuilder).Append(r.AgentID)
	b.Field(rwSource).(*array.StringBuilder).Append(r.Source)
	b.Field(rwValue).(*array.Float32Builder).Append(float32(r.Value))
	b.Field(rwArrivedEpisode).(*array.Int32Builder).Append(int32(r.ArrivedEpisode))
	b.Field(rwArrivedTick).(*array.Int64Builder).Append(int64(r.ArrivedTick))
	t.rows++
}
