package datalog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/runners"
)

// The fields a Mismatch names.
const (
	// FieldObservation: the observations differ (Element is the first element that
	// does).
	FieldObservation = "observation"
	// FieldMask: the action masks differ (Element is the first element that does).
	FieldMask = "action_mask"
	// FieldReward: the environment's rewards (source runners.SourceEnv) differ.
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

// ReplayReport is what Replay found.
type ReplayReport struct {
	// Trials counts the trials replayed; Skipped lists those that could not be, for
	// want of their info (rejected before they ran).
	Trials  int
	Skipped []string
	// Steps counts the replayed steps compared with the log.
	Steps int64
	// Mismatches lists every difference found, trial by trial, in the order of the
	// replay.
	Mismatches []Mismatch
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

// Replay re-runs each trial of the log in dir from its logged environment name,
// configuration, seed, episodes and tick limit, each agent playing the actions the log
// holds for it in order (the n-th action of agent id I in episode e is the action of
// the n-th row of I in e that is not a Start row), and compares every step with the
// log: observation, action mask, the environment's reward, the end flags, the span
// and the order of the reports. It returns every difference; a deterministic
// environment replayed from an intact log has none. Rewards from other sources
// (actors, a controller, retroactive ones) are not replayed.
//
// A trial that stopped or failed, or whose writer was killed, is replayed as far as
// its log goes. Replay fails for a log it cannot read and an environment that reg
// does not have (ErrReplay); it reads one trial at a time, and its memory does not
// grow with the log.
func Replay(ctx context.Context, dir string, reg *runners.Registry, opts ...ReplayOption) (*ReplayReport, error) {
	var cfg replayConfig
	for _, o := range opts {
		if o != nil {
			o.applyReplay(&cfg)
		}
	}
	var ropts []ReadOption
	if cfg.mem != nil {
		ropts = append(ropts, WithAllocator(cfg.mem))
	}
	l, err := Open(dir, ropts...)
	if err != nil {
		return nil, err
	}
	trials, err := l.Trials()
	if err != nil {
		return nil, err
	}
	index, err := l.trialIndex()
	if err != nil {
		return nil, err
	}
	rep := &ReplayReport{}
	for _, t := range trials {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if !t.HasInfo {
			rep.Skipped = append(rep.Skipped, t.ID)
			continue
		}
		if err := l.replayTrial(ctx, reg, t, index, &cfg, rep); err != nil {
			return rep, err
		}
		rep.Trials++
	}
	return rep, nil
}

// batchRef names a batch of an agent's rows: its part (in the agent's part order) and
// its position in the part.
type batchRef struct{ part, batch int }

// trialIndex maps each agent and trial to the batches that hold the trial's rows.
func (l *Log) trialIndex() (map[string]map[string][]batchRef, error) {
	index := map[string]map[string][]batchRef{}
	for _, name := range l.names {
		m := map[string][]batchRef{}
		index[name] = m
		for pi, p := range l.agents[name] {
			r, err := openPart(p.Path, l.cfg.mem)
			if err != nil {
				return nil, fmt.Errorf("datalog: %w", err)
			}
			bi := 0
			var dc dictColumn
			for rec, err := range r.batches() {
				if err != nil {
					_ = r.Close()
					return nil, err
				}
				idx := rec.Schema().FieldIndices("trial_id")
				if len(idx) == 0 {
					_ = r.Close()
					return nil, fmt.Errorf("%w: %s has no trial_id column", ErrNotLog, p.Path)
				}
				if err := dc.reset(rec.Column(idx[0])); err != nil {
					_ = r.Close()
					return nil, err
				}
				last := ""
				for i := range int(rec.NumRows()) {
					if id := dc.value(i); id != last {
						last = id
						refs := m[id]
						if n := len(refs); n == 0 || refs[n-1] != (batchRef{pi, bi}) {
							m[id] = append(refs, batchRef{pi, bi})
						}
					}
				}
				bi++
			}
			_ = r.Close()
		}
	}
	return index, nil
}

// trialRows yields the rows of trial id among the batches refs of agent name.
func (l *Log) trialRows(name, id string, refs []batchRef) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		var d rowDecoder
		parts := l.agents[name]
		for len(refs) > 0 {
			pi := refs[0].part
			n := 1
			for n < len(refs) && refs[n].part == pi {
				n++
			}
			want := refs[:n]
			refs = refs[n:]
			r, err := openPart(parts[pi].Path, l.cfg.mem)
			if err != nil {
				yield(Row{}, fmt.Errorf("datalog: %w", err))
				return
			}
			ok := l.partRows(r, name, id, want, &d, yield)
			_ = r.Close()
			if !ok {
				return
			}
		}
	}
}

// partRows yields the rows of trial id in the batches want of part r; it returns
// false when the iteration must stop.
func (l *Log) partRows(r *partReader, name, id string, want []batchRef, d *rowDecoder, yield func(Row, error) bool) bool {
	emit := func(rec arrow.RecordBatch) bool {
		if err := d.reset(name, rec); err != nil {
			yield(Row{}, err)
			return false
		}
		for i := range int(rec.NumRows()) {
			if d.trial.value(i) != id {
				continue
			}
			if !yield(d.row(i), nil) {
				return false
			}
		}
		return true
	}
	if r.fr != nil {
		for _, ref := range want {
			rec, err := r.fr.RecordBatchAt(ref.batch)
			if err != nil {
				yield(Row{}, fmt.Errorf("%w: %s: batch %d: %w", ErrCorrupt, r.path, ref.batch, err))
				return false
			}
			ok := emit(rec)
			rec.Release()
			if !ok {
				return false
			}
		}
		return true
	}
	bi := 0
	for rec, err := range r.batches() {
		if err != nil {
			yield(Row{}, err)
			return false
		}
		if len(want) == 0 {
			break
		}
		if want[0].batch == bi {
			want = want[1:]
			if !emit(rec) {
				return false
			}
		}
		bi++
	}
	return true
}

// cursor reads a trial's rows of one agent one at a time, with a look ahead of one.
type cursor struct {
	next func() (Row, error, bool)
	stop func()
	row  Row
	has  bool
	done bool
	err  error
}

func newCursor(seq iter.Seq2[Row, error]) *cursor {
	next, stop := iter.Pull2(seq)
	return &cursor{next: next, stop: stop}
}

// peek returns the current row, nil at the end or after an error (c.err).
func (c *cursor) peek() *Row {
	if !c.has && !c.done {
		r, err, ok := c.next()
		switch {
		case !ok:
			c.done = true
		case err != nil:
			c.done, c.err = true, err
		default:
			c.row, c.has = r, true
		}
	}
	if c.has {
		return &c.row
	}
	return nil
}

func (c *cursor) advance() { c.has = false }

// replayer replays one trial: it is the sink of the replayed trial and the source of
// its agents' actions.
type replayer struct {
	trial   Trial
	cfg     *replayConfig
	rep     *ReplayReport
	rows    map[string]*cursor // per agent: the rows to compare
	acts    map[string]*actions
	count   int
	stopped bool // the trial's comparison stopped at the mismatch limit
}

// actions hands out an agent's logged actions.
type actions struct {
	rows   *cursor
	queues map[actKey][]agent.RawAction
}

type actKey struct {
	episode int
	id      string
}

func (r *replayer) mismatch(m Mismatch) {
	if r.stopped {
		return
	}
	m.Trial = r.trial.ID
	r.rep.Mismatches = append(r.rep.Mismatches, m)
	r.count++
	if r.cfg.maxMismatches > 0 && r.count >= r.cfg.maxMismatches {
		r.stopped = true
	}
}

func (l *Log) replayTrial(ctx context.Context, reg *runners.Registry, t Trial, index map[string]map[string][]batchRef, cfg *replayConfig, rep *ReplayReport) error {
	r := &replayer{trial: t, cfg: cfg, rep: rep, rows: map[string]*cursor{}, acts: map[string]*actions{}}
	actors := map[string]runners.Actor{}
	for _, a := range t.Agents {
		refs := index[a.Name][t.ID]
		r.rows[a.Name] = newCursor(l.trialRows(a.Name, t.ID, refs))
		r.acts[a.Name] = &actions{rows: newCursor(l.trialRows(a.Name, t.ID, refs)), queues: map[actKey][]agent.RawAction{}}
		actors[a.Name] = runners.Value(&replayPolicy{r: r, acts: r.acts[a.Name]})
	}
	defer func() {
		for _, c := range r.rows {
			c.stop()
		}
		for _, a := range r.acts {
			a.rows.stop()
		}
	}()
	spec := runners.Spec{ID: t.ID, Env: t.Env, Config: t.Config, Seed: t.Seed, Episodes: t.Episodes, MaxTicks: t.MaxTicks, Actors: actors}
	c, err := runners.NewCampaign(reg, spec, runners.WithWorkers(1), runners.WithSinks(runners.SinkFunc(r.handle)))
	if err != nil {
		return fmt.Errorf("%w: trial %s: %w", ErrReplay, t.ID, err)
	}
	s, err := c.Run(ctx)
	if err != nil {
		return err
	}
	for _, f := range s.Failures {
		if !errors.Is(f.Err, errNoAction) {
			r.mismatch(Mismatch{Episode: -1, Tick: -1, Index: -1, Element: -1, Field: FieldError, Replayed: f.Reason})
		}
	}
	// The rows the replay did not reach.
	for _, a := range t.Agents {
		c := r.rows[a.Name]
		for row := c.peek(); row != nil; row = c.peek() {
			r.mismatch(Mismatch{Episode: row.Episode, Tick: row.Tick, Index: row.Index, AgentID: row.AgentID, Element: -1, Field: FieldMissing, Logged: "a row"})
			c.advance()
		}
		if c.err != nil {
			return c.err
		}
		if err := r.acts[a.Name].rows.err; err != nil {
			return err
		}
	}
	return nil
}

// handle compares the replayed trial's step events with the log.
func (r *replayer) handle(_ context.Context, e *runners.Event) error {
	if e.Kind != runners.KindStep || r.stopped {
		return nil
	}
	s := e.Step
	c := r.rows[s.Agent]
	if c == nil {
		r.mismatch(Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step of an agent the log's trial does not have"})
		return nil
	}
	r.rep.Steps++
	for {
		row := c.peek()
		if row == nil {
			if c.err != nil {
				return c.err
			}
			r.mismatch(Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step"})
			return nil
		}
		switch cmpPlace(row.Episode, row.Tick, row.Index, s.Episode, s.Tick, s.Index) {
		case -1:
			r.mismatch(Mismatch{Episode: row.Episode, Tick: row.Tick, Index: row.Index, AgentID: row.AgentID, Element: -1, Field: FieldMissing, Logged: "a row"})
			c.advance()
			continue
		case 1:
			r.mismatch(Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1, Field: FieldExtra, Replayed: "a step"})
			return nil
		}
		r.compare(row, s)
		c.advance()
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

// compare reports how the logged row and the replayed step differ.
func (r *replayer) compare(row *Row, s *runners.StepEvent) {
	m := Mismatch{Episode: s.Episode, Tick: s.Tick, Index: s.Index, AgentID: s.AgentID, Element: -1}
	diff := func(field, logged, replayed string) {
		m.Field, m.Logged, m.Replayed = field, logged, replayed
		r.mismatch(m)
		m.Element = -1
	}
	if row.AgentID != s.AgentID {
		diff(FieldAgentID, row.AgentID, s.AgentID)
	}
	if row.Start != s.Start {
		diff(FieldStart, strconv.FormatBool(row.Start), strconv.FormatBool(s.Start))
	}
	if i := firstDiff(row.Obs, s.Obs); i >= 0 {
		m.Element = i
		diff(FieldObservation, elem(row.Obs, i), elem(s.Obs, i))
	}
	if i := firstDiffBool(row.Mask, s.Mask); i >= 0 {
		m.Element = i
		diff(FieldMask, elemBool(row.Mask, i), elemBool(s.Mask, i))
	}
	logged, lok := envReward(row.Sources)
	replayed, rok := envReward(s.Sources)
	if lok != rok || float32(logged) != float32(replayed) && !(isNaN32(logged) && isNaN32(replayed)) {
		diff(FieldReward, fmtReward(logged, lok), fmtReward(float64(float32(replayed)), rok))
	}
	if row.Terminated != s.Terminated {
		diff(FieldTerminated, strconv.FormatBool(row.Terminated), strconv.FormatBool(s.Terminated))
	}
	if row.Truncated != s.Truncated {
		diff(FieldTruncated, strconv.FormatBool(row.Truncated), strconv.FormatBool(s.Truncated))
	}
	if row.SpanTicks != s.SpanTicks {
		diff(FieldSpan, strconv.Itoa(row.SpanTicks), strconv.Itoa(s.SpanTicks))
	}
}

func isNaN32(x float64) bool { return math.IsNaN(float64(float32(x))) }

func envReward(src []runners.RewardSource) (float64, bool) {
	for _, s := range src {
		if s.Source == runners.SourceEnv {
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
// -1 if they do not.
func firstDiff(a, b []float32) int {
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

func firstDiffBool(a, b []bool) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
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

// replayPolicy plays an agent's logged actions. It is a runners.Interactor, to learn
// the episode and the agent id it acts for.
type replayPolicy struct {
	r    *replayer
	acts *actions
}

func (p *replayPolicy) Act(context.Context, []float32, []bool) (agent.RawAction, error) {
	return agent.RawAction{}, errors.New("datalog: the replay policy acts only through Interact")
}

func (p *replayPolicy) Interact(_ context.Context, x *runners.Exchange, _ []float32, _ []bool) (agent.RawAction, error) {
	a, err := p.acts.next(x.Episode(), x.AgentID())
	if err != nil {
		if errors.Is(err, errNoAction) && p.r.logGoesOn(x.Episode(), x.Tick()) {
			p.r.mismatch(Mismatch{Episode: x.Episode(), Tick: x.Tick(), Index: -1, AgentID: x.AgentID(), Element: -1, Field: FieldAction, Replayed: "asked for an action"})
		}
	}
	return a, err
}

// logGoesOn reports whether the log's trial went on past an action it does not have:
// it ended, or it has rows after the place.
func (r *replayer) logGoesOn(episode, tick int) bool {
	if r.trial.State == runners.Ended {
		return true
	}
	for _, c := range r.rows {
		if row := c.peek(); row != nil && cmpPlace(row.Episode, row.Tick, 0, episode, tick, 0) > 0 {
			return true
		}
	}
	return false
}

// next returns the next logged action of agent id in episode.
func (a *actions) next(episode int, id string) (agent.RawAction, error) {
	k := actKey{episode, id}
	for len(a.queues[k]) == 0 {
		row := a.rows.peek()
		if row == nil {
			if a.rows.err != nil {
				return agent.RawAction{}, a.rows.err
			}
			return agent.RawAction{}, errNoAction
		}
		if row.Episode > episode {
			return agent.RawAction{}, errNoAction
		}
		if row.Episode < episode {
			for q := range a.queues {
				if q.episode < episode {
					delete(a.queues, q)
				}
			}
		}
		if !row.Start && row.Episode == episode {
			rk := actKey{row.Episode, row.AgentID}
			act := agent.RawAction{Int: row.Action.Int, Ints: slices.Clone(row.Action.Ints), Floats: slices.Clone(row.Action.Floats)}
			a.queues[rk] = append(a.queues[rk], act)
		}
		a.rows.advance()
	}
	q := a.queues[k]
	act := q[0]
	a.queues[k] = q[1:]
	return act, nil
}

var _ runners.Interactor = (*replayPolicy)(nil)
