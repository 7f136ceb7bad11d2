package datalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
)

// Log is a log opened for reading: the parts found in its directory when it was
// opened. Open it with Open. Its methods read the parts anew at each call, and a
// part without a footer (its writer was killed) is read up to its last complete
// batch. A Log holds no open file between calls and is safe for concurrent use.
type Log struct {
	dir    string
	cfg    readConfig
	agents map[string][]Part
	names  []string
	tables map[string][]Part
}

// Part is one file of a log.
type Part struct {
	// Path is the file's path.
	Path string
	// Table is TableSteps, TableTrials, TableEpisodes or TableRewards; Agent the
	// agent of a TableSteps part.
	Table, Agent string
	// Shard and Number come from the file's name: part-[SHARD-]NUMBER.arrow.
	Shard  string
	Number int64
}

// Open opens the log in dir. It fails with ErrNotLog if dir holds no part of a log.
func Open(dir string, opts ...ReadOption) (*Log, error) {
	l := &Log{dir: dir, cfg: newReadConfig(opts), agents: map[string][]Part{}, tables: map[string][]Part{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		table, agentName := "", ""
		switch name := e.Name(); {
		case strings.HasPrefix(name, "agent="):
			table = TableSteps
			if agentName, err = url.PathUnescape(strings.TrimPrefix(name, "agent=")); err != nil {
				continue
			}
		case name == "_"+TableTrials, name == "_"+TableEpisodes, name == "_"+TableRewards:
			table = name[1:]
		default:
			continue
		}
		parts, err := listParts(filepath.Join(dir, e.Name()), table, agentName)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			continue
		}
		n += len(parts)
		if table == TableSteps {
			l.agents[agentName] = parts
			l.names = append(l.names, agentName)
		} else {
			l.tables[table] = parts
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: %s holds no part", ErrNotLog, dir)
	}
	slices.Sort(l.names)
	return l, nil
}

// listParts lists the parts of a table's folder, in order: by shard, then number.
func listParts(dir, table, agentName string) ([]Part, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("datalog: %w", err)
	}
	var parts []Part
	for _, f := range files {
		if shard, n, ok := parsePartName(f.Name()); ok && f.Type().IsRegular() {
			parts = append(parts, Part{Path: filepath.Join(dir, f.Name()), Table: table, Agent: agentName, Shard: shard, Number: n})
		}
	}
	slices.SortFunc(parts, func(a, b Part) int {
		return cmp.Or(cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Number, b.Number))
	})
	return parts, nil
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Agents returns the names of the agents that have rows, sorted.
func (l *Log) Agents() []string { return slices.Clone(l.names) }

// Parts returns every part of the log: the agents' in the order of Agents, then the
// trials', episodes' and rewards' tables; each table's in order.
func (l *Log) Parts() []Part {
	var out []Part
	for _, name := range l.names {
		out = append(out, l.agents[name]...)
	}
	for _, t := range []string{TableTrials, TableEpisodes, TableRewards} {
		out = append(out, l.tables[t]...)
	}
	return out
}

// AgentInfo describes an agent's rows, from the schema metadata of its first part.
type AgentInfo struct {
	Name string
	// ObservationSpace and ActionSpace are rebuilt from the spaces JSON spec.
	ObservationSpace, ActionSpace spaces.Space
	// ObservationDim is the length of a flat observation, ActionDim that of an action
	// (1 for Discrete), MaskLen that of the action mask (0: none).
	ObservationDim, ActionDim, MaskLen int
	// Schema is the schema of the first part, with its metadata.
	Schema *arrow.Schema
	// Metadata is that schema's metadata as a map.
	Metadata map[string]string
}

// Spec returns the agent as the env package describes it.
func (a AgentInfo) Spec() env.Spec {
	return env.Spec{Name: a.Name, ObservationSpace: a.ObservationSpace, ActionSpace: a.ActionSpace, MaskLen: a.MaskLen}
}

// Agent describes the rows of agent name; ErrUnknownAgent if the log has none.
func (l *Log) Agent(name string) (AgentInfo, error) {
	parts, ok := l.agents[name]
	if !ok {
		return AgentInfo{}, fmt.Errorf("%w: %q (the log has %s)", ErrUnknownAgent, name, strings.Join(l.names, ", "))
	}
	for _, p := range parts {
		r, err := openPart(p.Path, l.cfg.mem)
		if err != nil {
			return AgentInfo{}, fmt.Errorf("datalog: %w", err)
		}
		schema := r.schema
		_ = r.Close()
		if schema != nil {
			return agentInfo(name, schema)
		}
	}
	return AgentInfo{}, fmt.Errorf("%w: agent %s: no part has a readable schema", ErrCorrupt, name)
}

func agentInfo(name string, schema *arrow.Schema) (AgentInfo, error) {
	md := schema.Metadata()
	m := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		m[k] = md.Values()[i]
	}
	if err := checkVersion(m); err != nil {
		return AgentInfo{}, err
	}
	a := AgentInfo{Name: name, Schema: schema, Metadata: m}
	var err error
	if a.ObservationSpace, err = spaces.Unmarshal([]byte(m[MetaObservationSpace])); err != nil {
		return AgentInfo{}, fmt.Errorf("%w: agent %s: %s: %w", ErrNotLog, name, MetaObservationSpace, err)
	}
	if a.ActionSpace, err = spaces.Unmarshal([]byte(m[MetaActionSpace])); err != nil {
		return AgentInfo{}, fmt.Errorf("%w: agent %s: %s: %w", ErrNotLog, name, MetaActionSpace, err)
	}
	a.ObservationDim, _ = strconv.Atoi(m[MetaObservationDim])
	a.ActionDim, _ = strconv.Atoi(m[MetaActionDim])
	a.MaskLen, _ = strconv.Atoi(m[MetaMaskLen])
	return a, nil
}

func checkVersion(m map[string]string) error {
	v, err := strconv.Atoi(m[MetaFormatVersion])
	if err != nil {
		return fmt.Errorf("%w: no %s in the schema metadata", ErrNotLog, MetaFormatVersion)
	}
	if v > FormatVersion {
		return fmt.Errorf("%w: format version %d; this reader knows up to %d", ErrNotLog, v, FormatVersion)
	}
	return nil
}

func schemaVersion(s *arrow.Schema) error {
	md := s.Metadata()
	i := md.FindKey(MetaFormatVersion)
	if i < 0 {
		return fmt.Errorf("%w: no %s in the schema metadata", ErrNotLog, MetaFormatVersion)
	}
	return checkVersion(map[string]string{MetaFormatVersion: md.Values()[i]})
}

// Batches yields the record batches of agent name's rows in order: its parts by shard
// and number, each part's batches in order. A batch is released when the loop body
// returns; Retain it to keep it. The columns are those the package documentation
// lists.
func (l *Log) Batches(name string) iter.Seq2[arrow.RecordBatch, error] {
	parts, ok := l.agents[name]
	return func(yield func(arrow.RecordBatch, error) bool) {
		if !ok {
			yield(nil, fmt.Errorf("%w: %q (the log has %s)", ErrUnknownAgent, name, strings.Join(l.names, ", ")))
			return
		}
		for rec, err := range l.batches(parts) {
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// batches yields the batches of parts in order.
func (l *Log) batches(parts []Part) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, p := range parts {
			r, err := openPart(p.Path, l.cfg.mem)
			if err != nil {
				yield(nil, fmt.Errorf("datalog: %w", err))
				return
			}
			if r.schema != nil {
				if err := schemaVersion(r.schema); err != nil {
					_ = r.Close()
					yield(nil, fmt.Errorf("%w (%s)", err, p.Path))
					return
				}
			}
			for rec, err := range r.batches() {
				if !yield(rec, err) || err != nil {
					_ = r.Close()
					return
				}
			}
			_ = r.Close()
		}
	}
}

// Row is one row of an agent's steps: one event.StepEvent as it was logged.
//
// Obs, Mask, Action.Ints, Action.Floats, Sources, Retro and Messages (and their
// payloads) are borrowed: they are valid until the next iteration; copy what must
// live longer. The strings are the caller's.
type Row struct {
	// Trial is the trial's id; Episode counts its episodes from 0; Tick counts
	// environment steps since the episode's reset; Index is the row's position among
	// the reports of its tick, every agent's together.
	Trial                string
	Episode, Tick, Index int
	// Agent is the agent's name, AgentID its id, ParentID the id of the agent whose
	// action started this sub-episode ("" for none).
	Agent, AgentID, ParentID string
	// Start marks the first row of a sub-episode: Action is zero, Reward 0.
	Start bool
	// Acting reports that the agent acted next, on Obs and Mask: its action is the
	// Action of the next row of its AgentID.
	Acting bool
	// Obs is the flat observation; Mask the action mask (nil without one).
	Obs  []float32
	Mask []bool
	// Action is the action that Reward scores, taken on the previous row of the same
	// AgentID (see "Transitions" in the package documentation).
	Action agent.RawAction
	// Reward is the step's reward, the sum of Sources; both are logged as float32.
	Reward  float64
	Sources []event.RewardSource
	// Retro lists the retroactive rewards that arrived later for this step, from the
	// rewards table; the step's whole reward is Reward plus their sum (TotalReward).
	Retro []event.RewardSource
	// Terminated and Truncated report the end of the sub-episode; SpanTicks is how
	// many environment steps the scored decision took.
	Terminated, Truncated bool
	SpanTicks             int
	// Messages lists the messages delivered at this tick (every row of the tick has
	// the same list).
	Messages []event.Message
}

// Done reports whether the row ends its sub-episode.
func (r *Row) Done() bool { return r.Terminated || r.Truncated }

// TotalReward is Reward plus the retroactive rewards of the step.
func (r *Row) TotalReward() float64 {
	t := r.Reward
	for _, s := range r.Retro {
		t += s.Value
	}
	return t
}

// Rows yields the rows of agent name in order (see Batches), each with its
// retroactive rewards; see Row for what stays valid. An error ends the iteration.
func (l *Log) Rows(name string) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		retro, err := l.retroIndex()
		if err != nil {
			yield(Row{}, err)
			return
		}
		var d rowDecoder
		d.retro = retro
		for rec, err := range l.Batches(name) {
			if err != nil {
				yield(Row{}, err)
				return
			}
			if err := d.reset(name, rec); err != nil {
				yield(Row{}, err)
				return
			}
			for i := range int(rec.NumRows()) {
				if !yield(d.row(i), nil) {
					return
				}
			}
		}
	}
}

type retroKey struct {
	trial         string
	episode, tick int
	agentID       string
}

// retroIndex reads the rewards table into a map by step.
func (l *Log) retroIndex() (map[retroKey][]event.RewardSource, error) {
	rs, err := l.Retro()
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	m := make(map[retroKey][]event.RewardSource, len(rs))
	for _, r := range rs {
		k := retroKey{r.Trial, r.Episode, r.Tick, r.AgentID}
		m[k] = append(m[k], event.RewardSource{Source: r.Source, Value: r.Value})
	}
	return m, nil
}

// rowDecoder reads the rows of one batch.
type rowDecoder struct {
	agent    string
	trial    dictColumn
	agentID  dictColumn
	parentID dictColumn
	srcName  dictColumn
	episode  *array.Int32
	tick     *array.Int64
	index    *array.Int32
	start    *array.Boolean
	acting   *array.Boolean
	obs      *array.FixedSizeList
	obsV     []float32
	actInt   *array.Int64
	act      *array.FixedSizeList
	actF     []float32
	actI     []int64
	mask     *array.FixedSizeList
	maskV    *array.Boolean
	reward   *array.Float32
	sources  *array.List
	srcVal   []float32
	term     *array.Boolean
	trunc    *array.Boolean
	span     *array.Int32
	msgs     *array.List
	msgFrom  *array.String
	msgTo    *array.String
	msgPay   *array.Binary
	msgSent  *array.Int64

	retro map[retroKey][]event.RewardSource
	maskB []bool
	srcB  []event.RewardSource
	msgB  []event.Message
}

// dictColumn reads a dictionary column of strings, turning each entry into a Go
// string once per dictionary.
type dictColumn struct {
	arr   *array.Dictionary
	dict  arrow.ArrayData
	vals  *array.String
	strs  []string
	known []bool
	// idx are the indices where they are int32, as the writer writes them (nil
	// otherwise); nulls reports that some are null.
	idx   []int32
	nulls bool
	// found is the string looked up last, at is its index in the dictionary (-1 if
	// none; -2 for no look-up since the dictionary changed).
	found string
	at    int
}

func (c *dictColumn) reset(a arrow.Array) error {
	d, ok := a.(*array.Dictionary)
	if !ok {
		return fmt.Errorf("%w: want a dictionary column, got %s", ErrNotLog, a.DataType())
	}
	vals, ok := d.Dictionary().(*array.String)
	if !ok {
		return fmt.Errorf("%w: want a dictionary of strings, got %s", ErrNotLog, d.Dictionary().DataType())
	}
	c.arr, c.vals = d, vals
	c.idx, c.nulls = nil, d.NullN() > 0
	if ix, ok := d.Indices().(*array.Int32); ok {
		c.idx = ix.Int32Values()
	}
	// A file's batches share one dictionary: its strings are made once. c.dict keeps
	// the dictionary's data from being collected, so that no other takes its address.
	if dd := d.Dictionary().Data(); dd != c.dict {
		c.dict = dd
		c.strs = slices.Grow(c.strs[:0], vals.Len())[:vals.Len()]
		c.known = slices.Grow(c.known[:0], vals.Len())[:vals.Len()]
		clear(c.strs)
		clear(c.known)
		c.at = -2
	}
	return nil
}

// index returns the dictionary index of entry i, -1 for a null.
func (c *dictColumn) index(i int) int {
	switch {
	case c.nulls && c.arr.IsNull(i):
		return -1
	case c.idx != nil:
		return int(c.idx[i])
	}
	return c.arr.GetValueIndex(i)
}

// find returns the dictionary index of s, -1 if the dictionary does not hold it.
func (c *dictColumn) find(s string) int {
	if c.at != -2 && c.found == s {
		return c.at
	}
	c.found, c.at = s, -1
	for j := range c.vals.Len() {
		if c.vals.IsValid(j) && c.vals.Value(j) == s {
			c.at = j
			break
		}
	}
	return c.at
}

func (c *dictColumn) value(i int) string {
	j := c.index(i)
	if j < 0 {
		return ""
	}
	if !c.known[j] {
		c.strs[j], c.known[j] = strings.Clone(c.vals.Value(j)), true
	}
	return c.strs[j]
}

func (d *rowDecoder) reset(agentName string, rec arrow.RecordBatch) (err error) {
	defer func() {
		if v := recover(); v != nil { // a column of another type than the format's
			err = fmt.Errorf("%w: agent %s: unexpected column types: %v", ErrNotLog, agentName, v)
		}
	}()
	d.agent = agentName
	s := rec.Schema()
	col := func(name string) arrow.Array {
		idx := s.FieldIndices(name)
		if len(idx) == 0 {
			return nil
		}
		return rec.Column(idx[0])
	}
	for _, c := range []struct {
		dc   *dictColumn
		name string
	}{{&d.trial, "trial_id"}, {&d.agentID, "agent_id"}, {&d.parentID, "parent_agent_id"}} {
		a := col(c.name)
		if a == nil {
			return fmt.Errorf("%w: agent %s: no %s column", ErrNotLog, agentName, c.name)
		}
		if err := c.dc.reset(a); err != nil {
			return err
		}
	}
	d.episode = col("episode").(*array.Int32)
	d.tick = col("tick").(*array.Int64)
	d.index = col("index").(*array.Int32)
	d.start = col("start").(*array.Boolean)
	d.acting = col("acting").(*array.Boolean)
	d.obs = col("observation").(*array.FixedSizeList)
	d.obsV = d.obs.ListValues().(*array.Float32).Float32Values()
	d.actInt, d.act, d.actF, d.actI = nil, nil, nil, nil
	switch a := col("action").(type) {
	case *array.Int64:
		d.actInt = a
	case *array.FixedSizeList:
		d.act = a
		switch v := a.ListValues().(type) {
		case *array.Float32:
			d.actF = v.Float32Values()
		case *array.Int64:
			d.actI = v.Int64Values()
		}
	}
	d.mask, d.maskV = nil, nil
	if m := col("action_mask"); m != nil {
		d.mask = m.(*array.FixedSizeList)
		d.maskV = d.mask.ListValues().(*array.Boolean)
	}
	d.reward = col("reward").(*array.Float32)
	d.sources = col("reward_sources").(*array.List)
	st := d.sources.ListValues().(*array.Struct)
	if err := d.srcName.reset(st.Field(0)); err != nil {
		return err
	}
	d.srcVal = st.Field(1).(*array.Float32).Float32Values()
	d.term = col("terminated").(*array.Boolean)
	d.trunc = col("truncated").(*array.Boolean)
	d.span = col("span_ticks").(*array.Int32)
	d.msgs = col("messages").(*array.List)
	ms := d.msgs.ListValues().(*array.Struct)
	d.msgFrom = ms.Field(0).(*array.String)
	d.msgTo = ms.Field(1).(*array.String)
	d.msgPay = ms.Field(2).(*array.Binary)
	d.msgSent = ms.Field(3).(*array.Int64)
	return nil
}

func (d *rowDecoder) row(i int) Row {
	r := Row{
		Trial:      d.trial.value(i),
		Episode:    int(d.episode.Value(i)),
		Tick:       int(d.tick.Value(i)),
		Index:      int(d.index.Value(i)),
		Agent:      d.agent,
		AgentID:    d.agentID.value(i),
		ParentID:   d.parentID.value(i),
		Start:      d.start.Value(i),
		Acting:     d.acting.Value(i),
		Reward:     float64(d.reward.Value(i)),
		Terminated: d.term.Value(i),
		Truncated:  d.trunc.Value(i),
		SpanTicks:  int(d.span.Value(i)),
	}
	lo, hi := d.obs.ValueOffsets(i)
	r.Obs = d.obsV[lo:hi:hi]
	switch {
	case d.actInt != nil:
		if d.actInt.IsValid(i) {
			r.Action.Int = d.actInt.Value(i)
		}
	case d.act != nil && d.act.IsValid(i):
		lo, hi := d.act.ValueOffsets(i)
		if d.actF != nil {
			r.Action.Floats = d.actF[lo:hi:hi]
		} else {
			r.Action.Ints = d.actI[lo:hi:hi]
		}
	}
	if d.mask != nil && d.mask.IsValid(i) {
		lo, hi := d.mask.ValueOffsets(i)
		d.maskB = d.maskB[:0]
		for j := lo; j < hi; j++ {
			d.maskB = append(d.maskB, d.maskV.Value(int(j)))
		}
		r.Mask = d.maskB
	}
	lo, hi = d.sources.ValueOffsets(i)
	d.srcB = d.srcB[:0]
	for j := int(lo); j < int(hi); j++ {
		d.srcB = append(d.srcB, event.RewardSource{Source: d.srcName.value(j), Value: float64(d.srcVal[j])})
	}
	r.Sources = d.srcB
	if d.retro != nil {
		r.Retro = d.retro[retroKey{r.Trial, r.Episode, r.Tick, r.AgentID}]
	}
	lo, hi = d.msgs.ValueOffsets(i)
	d.msgB = d.msgB[:0]
	for j := int(lo); j < int(hi); j++ {
		d.msgB = append(d.msgB, event.Message{From: d.msgFrom.Value(j), To: d.msgTo.Value(j), Payload: d.msgPay.Value(j), Sent: int(d.msgSent.Value(j))})
	}
	if len(d.msgB) > 0 {
		r.Messages = d.msgB
	}
	return r
}

// Trial is a trial of a log, from the trials table.
type Trial struct {
	ID    string
	Index int
	// Env and Config are the environment's registered name and JSON configuration
	// (nil for the defaults); Seed the trial's seed; Episodes and MaxTicks as in
	// event.TrialInfo.
	Env      string
	Config   json.RawMessage
	Seed     uint64
	Episodes int
	MaxTicks int
	// Agents describes the environment's agents, with their spaces rebuilt; Policies
	// maps each agent's name to its registered policy ("" for a policy value).
	Agents         []env.Spec
	Policies       map[string]string
	DefinesSuccess bool
	// HasInfo reports that the fields above are known: false for a trial rejected
	// before it ran.
	HasInfo bool
	// State is the trial's latest state in the log: Running for a trial whose writer
	// was killed before it ended. Err is the message of its error, "" for none.
	State event.State
	Err   string
	// Task is the name of the schedule's task the trial played (runners.Spec.Task),
	// "" outside a schedule and in a log written before the column.
	Task string
}

// Trials returns the trials of the log in the order they started, each with its
// latest state.
func (l *Log) Trials() ([]Trial, error) { return l.trials(true) }

// trials returns the trials of the log; with own false, trials with the same agents
// and policies share their Agents slice and Policies map, which must not change.
func (l *Log) trials(own bool) ([]Trial, error) {
	var out []Trial
	at := map[string]int{}
	// The trials of a campaign mostly share their environment, agents and policies:
	// each name and JSON is parsed once.
	envs := map[string]string{}
	agents := map[string][]env.Spec{}
	policies := map[string]map[string]string{}
	// The JSON of the trial before, mostly the same, is compared before it is hashed.
	var lastAgents, lastPolicies string
	var lastSpecs []env.Spec
	var lastPol map[string]string
	err := l.tableRows(TableTrials, func(rec arrow.RecordBatch, i int, c columns) error {
		state, errMsg := parseState(c.view("state", i)), c.str("error", i)
		j, seen := at[c.view("trial_id", i)]
		if seen && out[j].HasInfo {
			// A later state of a trial whose info is known.
			out[j].State, out[j].Err = state, errMsg
			return nil
		}
		t := Trial{ID: c.str("trial_id", i), State: state, Err: errMsg}
		if c.valid("env", i) {
			t.HasInfo = true
			t.Index = int(c.i64("index", i))
			name := c.view("env", i)
			if t.Env = envs[name]; t.Env == "" {
				t.Env = strings.Clone(name)
				envs[t.Env] = t.Env
			}
			if cfg := c.str("config", i); cfg != "" {
				t.Config = json.RawMessage(cfg)
			}
			t.Seed = c.u64("seed", i)
			t.Episodes = int(c.i64("episodes", i))
			t.MaxTicks = int(c.i64("max_ticks", i))
			t.DefinesSuccess = c.boolean("defines_success", i)
			t.Task = c.str("task", i)
			js := c.view("agents", i)
			specs, ok := lastSpecs, js == lastAgents && lastSpecs != nil
			if !ok {
				specs, ok = agents[js]
			}
			if !ok {
				var err error
				if specs, err = parseAgents(js); err != nil {
					return fmt.Errorf("%w: trial %s: agents: %w", ErrNotLog, t.ID, err)
				}
				js = strings.Clone(js)
				agents[js] = specs
			}
			if js != lastAgents {
				lastAgents, lastSpecs = strings.Clone(js), specs
			}
			t.Agents = specs
			if own {
				t.Agents = slices.Clone(specs)
			}
			js = c.view("policies", i)
			pol, ok := lastPol, js == lastPolicies && lastPol != nil
			if !ok {
				pol, ok = policies[js]
			}
			if !ok {
				if err := json.Unmarshal([]byte(js), &pol); err != nil {
					return fmt.Errorf("%w: trial %s: policies: %w", ErrNotLog, t.ID, err)
				}
				js = strings.Clone(js)
				policies[js] = pol
			}
			if js != lastPolicies {
				lastPolicies, lastPol = strings.Clone(js), pol
			}
			t.Policies = pol
			if own {
				t.Policies = maps.Clone(pol)
			}
		}
		if seen {
			out[j] = t
			return nil
		}
		at[t.ID] = len(out)
		out = append(out, t)
		return nil
	})
	return out, err
}

func parseAgents(js string) ([]env.Spec, error) {
	var raw []struct {
		Name        string          `json:"name"`
		Observation json.RawMessage `json:"observation_space"`
		Action      json.RawMessage `json:"action_space"`
		MaskLen     int             `json:"mask_len"`
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		return nil, err
	}
	out := make([]env.Spec, len(raw))
	for i, a := range raw {
		obs, err := spaces.Unmarshal(a.Observation)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		act, err := spaces.Unmarshal(a.Action)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		out[i] = env.Spec{Name: a.Name, ObservationSpace: obs, ActionSpace: act, MaskLen: a.MaskLen}
	}
	return out, nil
}

func parseState(s string) event.State {
	for st := event.Pending; st <= event.Failed; st++ {
		if st.String() == s {
			return st
		}
	}
	return 0
}

// Episode is an episode of a log, from the episodes table: one row per episode
// that ended.
type Episode struct {
	Trial     string
	Episode   int
	Seed      uint64
	Ticks     int
	Truncated bool
	// Success is meaningful where DefinesSuccess.
	Success, DefinesSuccess bool
	// Returns is each agent's return, in the environment's agent order: every source,
	// and the retroactive rewards received before the episode ended.
	Returns []Return
	// Metrics are the environment's metrics of the episode (registry.Entry.Metrics),
	// in its order, leaving out those the episode did not tell; nil for an
	// environment that defines none (and in a log written before the metrics column).
	Metrics []Metric
}

// Metric is an environment metric of an episode.
type Metric struct {
	Name  string
	Value float64
}

// Return is an agent's return in an episode.
type Return struct {
	Agent string
	Value float64
}

// Episodes returns the episodes that ended, in the order they ended.
func (l *Log) Episodes() ([]Episode, error) {
	var out []Episode
	err := l.tableRows(TableEpisodes, func(rec arrow.RecordBatch, i int, c columns) error {
		e := Episode{
			Trial:     c.str("trial_id", i),
			Episode:   int(c.i32("episode", i)),
			Seed:      c.u64("seed", i),
			Ticks:     int(c.i64("ticks", i)),
			Truncated: c.boolean("truncated", i),
		}
		if c.valid("success", i) {
			e.DefinesSuccess, e.Success = true, c.boolean("success", i)
		}
		rets := c["returns"].(*array.List)
		st := rets.ListValues().(*array.Struct)
		names, vals := st.Field(0).(*array.String), st.Field(1).(*array.Float64)
		lo, hi := rets.ValueOffsets(i)
		for j := int(lo); j < int(hi); j++ {
			e.Returns = append(e.Returns, Return{Agent: names.Value(j), Value: vals.Value(j)})
		}
		if ms, ok := c["metrics"].(*array.List); ok {
			st := ms.ListValues().(*array.Struct)
			names, vals := st.Field(0).(*array.String), st.Field(1).(*array.Float64)
			lo, hi := ms.ValueOffsets(i)
			for j := int(lo); j < int(hi); j++ {
				e.Metrics = append(e.Metrics, Metric{Name: strings.Clone(names.Value(j)), Value: vals.Value(j)})
			}
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// Retro is a retroactive reward of a log, from the rewards table.
type Retro struct {
	Trial string
	event.RetroReward
}

// Retro returns the retroactive rewards of the log, in the order they arrived. Their
// values were logged as float32.
func (l *Log) Retro() ([]Retro, error) {
	var out []Retro
	err := l.tableRows(TableRewards, func(rec arrow.RecordBatch, i int, c columns) error {
		out = append(out, Retro{Trial: c.str("trial_id", i), RetroReward: event.RetroReward{
			Episode:        int(c.i32("episode", i)),
			Tick:           int(c.i64("tick", i)),
			Agent:          c.str("agent", i),
			AgentID:        c.str("agent_id", i),
			Source:         c.str("source", i),
			Value:          float64(c["value"].(*array.Float32).Value(i)),
			ArrivedEpisode: int(c.i32("arrived_episode", i)),
			ArrivedTick:    int(c.i64("arrived_tick", i)),
		}})
		return nil
	})
	return out, err
}

// columns are a batch's columns by name.
type columns map[string]arrow.Array

func (c columns) valid(name string, i int) bool { a := c[name]; return a != nil && a.IsValid(i) }

func (c columns) str(name string, i int) string {
	if !c.valid(name, i) {
		return ""
	}
	return strings.Clone(c[name].(*array.String).Value(i))
}

// view is the string value of a column without a copy: valid while the batch is.
func (c columns) view(name string, i int) string {
	if !c.valid(name, i) {
		return ""
	}
	return c[name].(*array.String).Value(i)
}

func (c columns) i64(name string, i int) int64 { return c[name].(*array.Int64).Value(i) }
func (c columns) i32(name string, i int) int32 { return c[name].(*array.Int32).Value(i) }
func (c columns) u64(name string, i int) uint64 {
	return c[name].(*array.Uint64).Value(i)
}
func (c columns) boolean(name string, i int) bool {
	return c.valid(name, i) && c[name].(*array.Boolean).Value(i)
}

// tableRows calls f for each row of a side table.
func (l *Log) tableRows(table string, f func(rec arrow.RecordBatch, i int, c columns) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: the %s table has unexpected column types: %v", ErrNotLog, table, v)
		}
	}()
	for rec, err := range l.batches(l.tables[table]) {
		if err != nil {
			return err
		}
		c := columns{}
		for j, fd := range rec.Schema().Fields() {
			c[fd.Name] = rec.Column(j)
		}
		for i := range int(rec.NumRows()) {
			if err := f(rec, i, c); err != nil {
				return err
			}
		}
	}
	return nil
}
