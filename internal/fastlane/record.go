package fastlane

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
)

// ErrLog: the vector's activity log could not be opened or written. The vector
// itself stepped; the log fails every later call until it is closed.
var ErrLog = errors.New("fastlane: activity log")

// Recording says where and how a vector records its steps (Single.Record,
// Multi.Record). Its zero value but Dir is ready to use.
type Recording struct {
	// Dir is the log's directory, created if missing. A directory that holds a log
	// of the same environment already is appended to: the new trials are numbered
	// after its trials of the same Run; one that holds a log of another environment
	// is refused (ErrLog). A log has one writer at a time: a directory that another
	// vector or process is recording into is refused too (ErrLog wrapping
	// datalog.ErrLocked, naming the holder's process id).
	Dir string
	// Run names the recording's trials, "RUN-K" for the K-th episode begun (K from 0,
	// or after the trials of that name already in Dir); "" means the environment's
	// name.
	Run string
	// Policies names, per agent name, what chose that agent's actions (a learner, a
	// policy: "ppo"), for the log's trials table; an agent left out has "".
	Policies map[string]string
	// Options configure the log's writer (datalog.WithBatchRows, WithCompression, ...).
	Options []datalog.WriteOption
}

// source is what a vector was made from, for its recordings.
type source struct {
	reg    *registry.Registry
	name   string
	config []byte
	f      registry.Factory
}

// recorder records the steps of a vector's copies, each episode of each copy a
// trial of one episode, as a runners trial would log them: its Running state, one
// step event per report, its episode's end (returns, success, metrics) and its
// Ended state. An episode cut short by a Reset or the end of the recording ends its
// trial as Stopped, without an episode row; one whose step failed ends it as Failed.
// Each trial's seed is its episode's reset seed (vector.EpisodeSeed), so that
// replay.Run, which resets a trial's only episode with the trial's seed, replays
// it.
//
// It works in two halves. The goroutine that steps the vector stages what each Reset
// and Step reported (ops, with copies of the observations and masks, and each ended
// episode's success and metrics, judged while the final turn is live: by the
// vector's workers, through vector.WithEpisodeEnd, for a Multi) into a batch,
// and hands the batch over once it holds batchOps ops (or batchFloats observation
// values); a goroutine of the recorder's own (logWriter) turns the batches into the
// events of a datalog writer, copy by copy (a trial's rows one after the other, which
// the writer finds cheapest), and the writer's own goroutine encodes, compresses and
// writes them. So a step costs the vector the copy of what it reported, and the
// writing overlaps the steps and the caller's policy calls that follow. Two batches
// circulate: the stepping goroutine waits only when the writer is a whole batch
// behind.
type recorder struct {
	lw      *logWriter
	success func(env.Turn) bool
	metrics []registry.Metric
	names   []string // the environment's agents' names, in its order
	next    int      // the index of the next trial
	copies  []copyState
	cur     *batch        // the batch being staged
	rep     [1]env.Report // a single-agent copy's report, reused
}

// copyState is what the stepping side keeps of a copy's open trial.
type copyState struct {
	open    bool
	tick    int       // the ticks of the episode so far (single-agent copies)
	returns []float64 // per agent, the episode's rewards so far
	last    []int64   // per agent, its latest action
	// success and metrics judge the episode that ended in the last Step (judge).
	success bool
	metrics []float64
}

// newRecorder opens the log of rec for n copies of src's environment and starts its
// writing goroutine.
func newRecorder(src source, rec Recording, n int) (*recorder, error) {
	if rec.Dir == "" {
		return nil, fmt.Errorf("%w: a recording needs a directory", ErrArgument)
	}
	entry, err := src.reg.Lookup(src.name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	probe, err := src.f.NewEnv(registry.EnvOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, src.name, err)
	}
	specs := probe.Agents()
	run := rec.Run
	if run == "" {
		run = src.name
	}
	if strings.ContainsAny(run, " \t\n") {
		return nil, fmt.Errorf("%w: run %q has white space", ErrArgument, run)
	}
	r := &recorder{success: entry.Success, metrics: entry.Metrics}
	policies := make([]string, len(specs))
	for j, s := range specs {
		r.names = append(r.names, s.Name)
		policies[j] = rec.Policies[s.Name]
	}
	for name := range rec.Policies {
		if !slices.Contains(r.names, name) {
			return nil, fmt.Errorf("%w: a policy for agent %q, which %s does not have", ErrArgument, name, src.name)
		}
	}
	var config []byte
	if len(src.config) > 0 {
		config = src.config
	}
	var names []string
	for _, m := range entry.Metrics {
		names = append(names, m.Name)
	}
	info := event.TrialInfo{Env: src.name, Config: config, Episodes: 1, Agents: specs, Policies: policies,
		DefinesSuccess: entry.Success != nil, Metrics: names}
	// The dataset holds the directory's lock: what the log holds is read under it.
	ds, err := datalog.NewDataset(rec.Dir, rec.Options...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLog, err)
	}
	if r.next, err = nextIndex(rec.Dir, run, src.name); err != nil {
		ds.Close()
		return nil, err
	}
	w, err := ds.NewWriter()
	if err != nil {
		ds.Close()
		return nil, fmt.Errorf("%w: %w", ErrLog, err)
	}
	r.copies = make([]copyState, n)
	for i := range r.copies {
		r.copies[i].returns = make([]float64, len(specs))
		r.copies[i].last = make([]int64, len(specs))
		r.copies[i].metrics = make([]float64, len(entry.Metrics))
	}
	r.lw = startLogWriter(ds, w, info, run, n)
	r.cur = r.lw.take()
	return r, nil
}

// err returns the log's error, once the writing goroutine met one.
func (r *recorder) err() error { return r.lw.failed() }

// flush hands the staged batch to the writing goroutine, once it holds enough, and
// takes the other one.
func (r *recorder) flush() {
	if !r.cur.full() {
		return
	}
	r.lw.give(r.cur)
	r.cur = r.lw.take()
}

// begin opens copy i's trial of the episode reset with seed.
func (r *recorder) begin(i int, seed uint64) {
	c := &r.copies[i]
	c.open, c.tick = true, 0
	clear(c.returns)
	clear(c.last)
	r.cur.ops = append(r.cur.ops, op{kind: opBegin, copy: int32(i), seed: seed, index: r.next})
	r.next++
}

// report stages rep, of copy i's agent j, the k-th report of its tick; acting says
// that the agent acts next. The action its reward scores is the agent's latest.
func (r *recorder) report(i, j, k int, rep *env.Report, tick int, acting bool) {
	c := &r.copies[i]
	b := r.cur
	o := op{kind: opRow, copy: int32(i), index: k, tick: int32(tick), span: int32(rep.SpanTicks),
		start: rep.Start, acting: acting, term: rep.Terminated, trunc: rep.Truncated,
		reward: rep.Reward, agentID: rep.AgentID, parentID: rep.ParentID, agent: int32(j)}
	if !rep.Start {
		o.action = c.last[j]
	}
	o.obs[0] = int32(len(b.obs))
	b.obs = append(b.obs, rep.Obs...)
	o.obs[1] = int32(len(b.obs))
	o.mask[0] = -1
	if rep.Mask != nil {
		o.mask[0] = int32(len(b.masks))
		b.masks = append(b.masks, rep.Mask...)
		o.mask[1] = int32(len(b.masks))
	}
	c.returns[j] += rep.Reward
	b.ops = append(b.ops, o)
}

// turn stages the reports of copy i's turn, the index of each among them.
func (r *recorder) turn(i int, t *env.Turn) {
	for k := range t.Reports {
		rep := &t.Reports[k]
		// A scan, not a map: environments have a few agents, and the names are
		// mostly the very strings compared with.
		j := slices.Index(r.names, rep.Agent)
		if j < 0 {
			continue // the vector fails such a copy
		}
		r.report(i, j, k, rep, t.Tick, !t.Over && rep.AgentID == t.Next)
	}
}

// judge judges copy i's episode, which ended on final: its success and metrics, as
// the environment's entry defines them, kept for end. It touches copy i's state
// alone, so that the copies' workers may judge theirs at once.
func (r *recorder) judge(i int, final *env.Turn) {
	c := &r.copies[i]
	if r.success != nil {
		c.success = r.success(*final)
	}
	for k, m := range r.metrics {
		v, ok := m.Value(*final)
		if !ok {
			v = math.NaN()
		}
		c.metrics[k] = v
	}
}

// end stages the end of copy i's trial, whose episode ended after ticks, judged by
// judge.
func (r *recorder) end(i int, ticks int) {
	c := &r.copies[i]
	b := r.cur
	o := op{kind: opEnd, copy: int32(i), tick: int32(ticks), success: c.success, floats: [2]int32{int32(len(b.floats)), 0}}
	b.floats = append(b.floats, c.returns...)
	b.floats = append(b.floats, c.metrics...)
	o.floats[1] = int32(len(b.floats))
	b.ops = append(b.ops, o)
	c.open = false
}

// stop stages the end of every open trial with state s and err.
func (r *recorder) stop(s event.State, err error) {
	for i := range r.copies {
		if c := &r.copies[i]; c.open {
			r.cur.ops = append(r.cur.ops, op{kind: opState, copy: int32(i), state: s, err: err})
			c.open = false
		}
	}
}

// fail stages the end of the open trials after a failed step: a copy's trial whose
// copy failed as Failed, with its reason, and the others as Stopped.
func (r *recorder) fail(err error) {
	for _, f := range Failures(err, nil) {
		if f.Copy >= 0 && f.Copy < len(r.copies) && r.copies[f.Copy].open {
			r.cur.ops = append(r.cur.ops, op{kind: opState, copy: int32(f.Copy), state: event.Failed, err: errors.New(f.Reason)})
			r.copies[f.Copy].open = false
		}
	}
	r.stop(event.Stopped, errStepFailed)
}

var (
	errReset      = errors.New("the vector was reset")
	errClosed     = errors.New("the recording ended")
	errStepFailed = errors.New("a copy of the vector failed")
)

// close ends the open trials as Stopped, waits for the writing goroutine to write
// everything and closes the log.
func (r *recorder) close() error {
	r.stop(event.Stopped, errClosed)
	return r.lw.close(r.cur)
}

// afterReset stages a Reset that returned err: the episodes in progress end as
// Stopped, and each copy begins a trial with its seed in seeds, whose first reports
// start(i) stages. A Reset that failed in a copy ends them as Failed and Stopped; one
// that changed nothing stages nothing. It hands the batch over if it is full.
func (r *recorder) afterReset(err error, seeds []uint64, start func(i int)) {
	switch _, failed := errors.AsType[*vector.CopyError](err); {
	case failed:
		r.fail(err)
	case err == nil:
		r.stop(event.Stopped, errReset)
		for i := range r.copies {
			r.begin(i, seeds[i])
			start(i)
		}
	}
	r.flush()
}

// afterStep stages a Step's error, if any: a copy's failure ends the open trials.
// It hands the batch over if it is full.
func (r *recorder) afterStep(err error) {
	if _, ok := errors.AsType[*vector.CopyError](err); ok {
		r.fail(err)
	}
	r.flush()
}

// nextIndex returns the index after the highest of the trials "RUN-K" of the log in
// dir, 0 if it has none (or there is no log). A log whose trials are of another
// environment than envName is an error: its agents and trials would mix with the
// recording's.
func nextIndex(dir, run, envName string) (int, error) {
	l, err := datalog.Open(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, datalog.ErrNotLog) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrLog, err)
	}
	trials, err := l.Trials()
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrLog, dir, err)
	}
	next := 0
	for _, t := range trials {
		if t.HasInfo && t.Env != envName {
			return 0, fmt.Errorf("%w: %s holds a log of %s (trial %s), not of %s: record into a directory of its own",
				ErrLog, dir, t.Env, t.ID, envName)
		}
		if k, ok := strings.CutPrefix(t.ID, run+"-"); ok {
			if n, err := strconv.Atoi(k); err == nil && n >= next {
				next = n + 1
			}
		}
	}
	return next, nil
}

// Record starts recording the vector's steps into an activity log (package datalog)
// in rec.Dir, from the next Reset on: each episode of each copy becomes a trial of
// one episode, "RUN-K" (see Recording), seeded with the episode's reset seed, whose
// rows are the agent's reports as a runners trial logs them (the reward's one source
// is "env"), with its episode row (returns, success, metrics) when it ends. An
// episode that a Reset or CloseLog cuts short ends its trial as Stopped; a copy that
// fails ends its trial as Failed (and the other copies' as Stopped). Steps return an
// error wrapping ErrLog once the log fails to be written (the vector stepped).
//
// A vector records into one log at a time: Record while recording wraps
// ErrArgument. CloseLog ends the recording; Close does too.
func (s *Single) Record(rec Recording) error {
	if s.rec != nil {
		return fmt.Errorf("%w: the vector is recording already (into %s)", ErrArgument, s.dir)
	}
	if s.held {
		return fmt.Errorf("%w: a vector whose copies can be held (WithHold) does not record", ErrArgument)
	}
	r, err := newRecorder(s.src, rec, s.Len())
	if err != nil {
		return err
	}
	name := s.layout.Agents[0].Name
	s.rec, s.dir = r, rec.Dir
	r.rep[0] = env.Report{AgentID: name + "_0", Agent: name} // registry.SingleAgent's id
	return nil
}

// CloseLog ends the recording, if any: the episodes in progress end as Stopped and
// the log is closed, readable by any Arrow reader. It returns the log's error, if
// any; calling it again returns nil.
func (s *Single) CloseLog() error {
	r := s.rec
	if r == nil {
		return nil
	}
	s.rec = nil
	return r.close()
}

// logStep logs the Step of actions.
func (s *Single) logStep(actions []int64) {
	r, v := s.rec, s.v
	a := &s.layout.Agents[0]
	d, m := a.ObsDim, a.MaskLen
	obs, final, masks := v.Obs(), v.FinalObs(), v.Masks()
	rew, term, trunc := v.Rewards(), v.Terminated(), v.Truncated()
	for i := range r.copies {
		c := &r.copies[i]
		if !c.open {
			continue
		}
		c.tick++
		c.last[0] = actions[i]
		done := term[i] || trunc[i]
		// Field by field: a Report is large, and only these change.
		rep := &r.rep[0]
		rep.Reward, rep.Terminated, rep.Truncated, rep.SpanTicks, rep.Start = rew[i], term[i], trunc[i], 1, false
		rep.Mask = nil
		if done {
			rep.Obs = final[i*d : (i+1)*d]
		} else {
			rep.Obs = obs[i*d : (i+1)*d]
			if m > 0 {
				rep.Mask = masks[i*m : (i+1)*m]
			}
		}
		r.report(i, 0, 0, rep, c.tick, !done)
		if done {
			t := env.Turn{Reports: r.rep[:], Over: true, Tick: c.tick}
			r.judge(i, &t)
			r.end(i, c.tick)
			r.begin(i, v.Seeds()[i])
			s.logStart(i)
		}
	}
}

// logStart logs the first report of copy i's episode.
func (s *Single) logStart(i int) {
	a := &s.layout.Agents[0]
	d, m := a.ObsDim, a.MaskLen
	rep := &s.rec.rep[0]
	rep.Obs, rep.Mask, rep.Reward, rep.Terminated, rep.Truncated, rep.SpanTicks, rep.Start = s.v.Obs()[i*d:(i+1)*d], nil, 0, false, false, 0, true
	if m > 0 {
		rep.Mask = s.v.Masks()[i*m : (i+1)*m]
	}
	s.rec.report(i, 0, 0, rep, 0, true)
}

// Record starts recording the vector's steps into an activity log, as
// Single.Record does; each report of a copy's Turn is a row of its agent, as a
// runners trial logs it.
func (x *Multi) Record(rec Recording) error {
	if x.rec != nil {
		return fmt.Errorf("%w: the vector is recording already (into %s)", ErrArgument, x.dir)
	}
	r, err := newRecorder(x.src, rec, x.Len())
	if err != nil {
		return err
	}
	x.rec, x.dir = r, rec.Dir
	return nil
}

// CloseLog ends the recording, as Single.CloseLog does.
func (x *Multi) CloseLog() error {
	r := x.rec
	if r == nil {
		return nil
	}
	x.rec = nil
	return r.close()
}

// logStep logs the Step that went well.
func (x *Multi) logStep() {
	r := x.rec
	for i := range r.copies {
		if !r.copies[i].open {
			continue
		}
		t := x.m.Stepped(i)
		r.turn(i, &t)
		if x.m.Ended(i) {
			r.end(i, t.Tick) // judged by Multi.judge, before the copy's reset
			r.begin(i, x.m.Seeds()[i])
			nt := x.m.Turn(i)
			r.turn(i, &nt)
		}
	}
}
