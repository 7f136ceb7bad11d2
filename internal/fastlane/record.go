package fastlane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/runners"
)

// ErrLog: the vector's activity log could not be opened or written. The vector
// itself stepped; the log fails every later call until it is closed.
var ErrLog = errors.New("fastlane: activity log")

// Recording says where and how a vector records its steps (Single.Record,
// Multi.Record). Its zero value but Dir is ready to use.
type Recording struct {
	// Dir is the log's directory, created if missing. A directory that holds a log
	// already is appended to: the new trials are numbered after its trials of the
	// same Run.
	Dir string
	// Run names the recording's trials, "RUN-K" for the K-th episode begun (K from 0,
	// or after the trials of that name already in Dir); "" means the environment's
	// name. Two vectors that record into one directory at the same time need runs of
	// their own.
	Run string
	// Policies names, per agent name, what chose that agent's actions (a learner, a
	// policy: "ppo"), for the log's trials table; an agent left out has "".
	Policies map[string]string
	// Options configure the log's writer (datalog.WithBatchRows, WithCompression, ...).
	Options []datalog.WriteOption
}

// source is what a vector was made from, for its recordings.
type source struct {
	reg    *runners.Registry
	name   string
	config []byte
	f      runners.Factory
}

// recorder feeds the steps of a vector's copies, each episode of each copy a trial of
// one episode, into a datalog writer, as a runners trial would: its Running state,
// one step event per report, its episode's end (returns, success, metrics) and its
// Ended state. An episode cut short by a Reset or Close of the vector ends its trial
// as Stopped, without an episode row; one whose step failed ends it as Failed.
//
// Each trial's seed is its episode's reset seed (vector.EpisodeSeed), so that
// datalog.Replay, which resets a trial's only episode with the trial's seed, replays
// it.
type recorder struct {
	ds *datalog.Dataset
	w  *datalog.Writer

	info    runners.TrialInfo // the template of every trial's info
	success func(env.Turn) bool
	metrics []runners.Metric
	index   map[string]int // agent name to its position in info.Agents
	run     string
	next    int // the index of the next trial
	err     error

	copies []copyLog
	// The events handed to the writer, reused: it keeps none of them.
	ev    runners.Event
	step  runners.StepEvent
	epEv  runners.EpisodeEvent
	state runners.StateChange
	src   [1]runners.RewardSource
	rep   [1]env.Report // the final report of a single-agent copy, for success
}

// copyLog is a copy's open trial.
type copyLog struct {
	open    bool
	info    runners.TrialInfo
	tick    int       // the ticks of the episode so far (single-agent copies)
	returns []float64 // per agent, the episode's rewards so far
	last    []int64   // per agent, its latest action
}

// newRecorder opens the log of rec for n copies of src's environment.
func newRecorder(src source, rec Recording, n int) (*recorder, error) {
	if rec.Dir == "" {
		return nil, fmt.Errorf("%w: a recording needs a directory", ErrArgument)
	}
	entry, err := src.reg.Lookup(src.name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	probe, err := src.f.NewEnv(runners.EnvOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, src.name, err)
	}
	specs := probe.Agents()
	r := &recorder{run: rec.Run, success: entry.Success, metrics: entry.Metrics, index: make(map[string]int, len(specs))}
	if r.run == "" {
		r.run = src.name
	}
	if strings.ContainsAny(r.run, " \t\n") {
		return nil, fmt.Errorf("%w: run %q has white space", ErrArgument, r.run)
	}
	policies := make([]string, len(specs))
	for j, s := range specs {
		r.index[s.Name] = j
		policies[j] = rec.Policies[s.Name]
	}
	for name := range rec.Policies {
		if _, ok := r.index[name]; !ok {
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
	r.info = runners.TrialInfo{Env: src.name, Config: config, Episodes: 1, Agents: specs, Policies: policies,
		DefinesSuccess: entry.Success != nil, Metrics: names}
	if r.next, err = nextIndex(rec.Dir, r.run); err != nil {
		return nil, err
	}
	if r.ds, err = datalog.NewDataset(rec.Dir, rec.Options...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLog, err)
	}
	if r.w, err = r.ds.NewWriter(); err != nil {
		r.ds.Close()
		return nil, fmt.Errorf("%w: %w", ErrLog, err)
	}
	r.copies = make([]copyLog, n)
	for i := range r.copies {
		r.copies[i].returns = make([]float64, len(specs))
		r.copies[i].last = make([]int64, len(specs))
	}
	r.src[0].Source = runners.SourceEnv
	return r, nil
}

// nextIndex returns the index after the highest of the trials "RUN-K" of the log in
// dir, 0 if it has none (or there is no log).
func nextIndex(dir, run string) (int, error) {
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
		if k, ok := strings.CutPrefix(t.ID, run+"-"); ok {
			if n, err := strconv.Atoi(k); err == nil && n >= next {
				next = n + 1
			}
		}
	}
	return next, nil
}

// handle hands the event in r.ev to the writer, keeping its first error.
func (r *recorder) handle(ctx context.Context) {
	if r.err != nil {
		return
	}
	if err := r.w.Handle(ctx, &r.ev); err != nil {
		r.err = fmt.Errorf("%w: %w", ErrLog, err)
	}
}

// begin opens copy i's trial of the episode reset with seed.
func (r *recorder) begin(ctx context.Context, i int, seed uint64) {
	c := &r.copies[i]
	c.info = r.info
	c.info.ID, c.info.Index, c.info.Seed = r.run+"-"+strconv.Itoa(r.next), r.next, seed
	r.next++
	c.open, c.tick = true, 0
	clear(c.returns)
	clear(c.last)
	r.setState(ctx, c, runners.Running, nil)
}

func (r *recorder) setState(ctx context.Context, c *copyLog, s runners.State, err error) {
	r.state = runners.StateChange{Trial: c.info.ID, State: s, Err: err, Info: &c.info}
	r.ev = runners.Event{Kind: runners.KindState, Trial: c.info.ID, State: &r.state}
	r.handle(ctx)
}

// report logs rep, of copy i's agent j, the k-th report of its tick; acting says
// that the agent acts next. The action its reward scores is the agent's latest.
func (r *recorder) report(ctx context.Context, i, j, k int, rep *env.Report, tick int, acting bool) {
	c := &r.copies[i]
	s := &r.step
	s.Episode, s.Tick, s.Index = 0, tick, k
	s.Agent, s.AgentID, s.ParentID = rep.Agent, rep.AgentID, rep.ParentID
	s.Start, s.Acting = rep.Start, acting
	s.Obs, s.Mask = rep.Obs, rep.Mask
	s.Action = agent.RawAction{}
	if !rep.Start {
		s.Action.Int = c.last[j]
	}
	r.src[0].Value = rep.Reward
	s.Reward, s.Sources = rep.Reward, r.src[:]
	s.Terminated, s.Truncated, s.SpanTicks = rep.Terminated, rep.Truncated, rep.SpanTicks
	s.Messages = nil
	c.returns[j] += rep.Reward
	r.ev = runners.Event{Kind: runners.KindStep, Trial: c.info.ID, Step: s}
	r.handle(ctx)
}

// turn logs the reports of copy i's turn, the index of each among them.
func (r *recorder) turn(ctx context.Context, i int, t *env.Turn) {
	for k := range t.Reports {
		rep := &t.Reports[k]
		j, ok := r.index[rep.Agent]
		if !ok {
			continue // the vector fails such a copy
		}
		r.report(ctx, i, j, k, rep, t.Tick, !t.Over && rep.AgentID == t.Next)
	}
}

// end closes copy i's trial, whose episode ended on final after ticks.
func (r *recorder) end(ctx context.Context, i int, final *env.Turn, ticks int) {
	c := &r.copies[i]
	ep := &r.epEv
	*ep = runners.EpisodeEvent{Episode: 0, Seed: c.info.Seed, End: true, Ticks: ticks, Returns: c.returns}
	if r.success != nil {
		ep.Success = r.success(*final)
	}
	if len(r.metrics) > 0 {
		ep.Metrics = make([]float64, len(r.metrics))
		for k, m := range r.metrics {
			v, ok := m.Value(*final)
			if !ok {
				v = math.NaN()
			}
			ep.Metrics[k] = v
		}
	}
	r.ev = runners.Event{Kind: runners.KindEpisode, Trial: c.info.ID, Episode: ep}
	r.handle(ctx)
	r.setState(ctx, c, runners.Ended, nil)
	c.open = false
}

// stop ends every open trial with state s and err.
func (r *recorder) stop(ctx context.Context, s runners.State, err error) {
	for i := range r.copies {
		if c := &r.copies[i]; c.open {
			r.setState(ctx, c, s, err)
			c.open = false
		}
	}
}

// fail ends the open trials after a failed step: a copy's trial whose copy failed
// as Failed, with its reason, and the others as Stopped.
func (r *recorder) fail(ctx context.Context, err error) {
	for _, f := range Failures(err, nil) {
		if f.Copy >= 0 && f.Copy < len(r.copies) && r.copies[f.Copy].open {
			c := &r.copies[f.Copy]
			r.setState(ctx, c, runners.Failed, errors.New(f.Reason))
			c.open = false
		}
	}
	r.stop(ctx, runners.Stopped, errStepFailed)
}

var (
	errReset      = errors.New("the vector was reset")
	errClosed     = errors.New("the vector was closed")
	errStepFailed = errors.New("a copy of the vector failed")
)

// close ends the open trials as Stopped and closes the log.
func (r *recorder) close(ctx context.Context) error {
	r.stop(ctx, runners.Stopped, errClosed)
	err := r.err
	if cerr := r.w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrLog, cerr)
	}
	if cerr := r.ds.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrLog, cerr)
	}
	return err
}

// afterReset handles a Reset that returned err: the episodes in progress end as
// Stopped, and each copy begins a trial with its seed in seeds, whose first reports
// start(i) logs. A Reset that failed in a copy ends them as Failed and Stopped; one
// that changed nothing logs nothing.
func (r *recorder) afterReset(ctx context.Context, err error, seeds []uint64, start func(i int)) {
	if err != nil {
		if _, ok := errors.AsType[*vector.CopyError](err); ok {
			r.fail(ctx, err)
		}
		return
	}
	r.stop(ctx, runners.Stopped, errReset)
	for i := range r.copies {
		r.begin(ctx, i, seeds[i])
		start(i)
	}
}

// afterStep handles a Step's error: a copy's failure ends the open trials.
func (r *recorder) afterStep(ctx context.Context, err error) {
	if _, ok := errors.AsType[*vector.CopyError](err); ok {
		r.fail(ctx, err)
	}
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
	r, err := newRecorder(s.src, rec, s.Len())
	if err != nil {
		return err
	}
	name := s.layout.Agents[0].Name
	s.rec, s.dir = r, rec.Dir
	r.rep[0] = env.Report{AgentID: name + "_0", Agent: name} // runners.SingleAgent's id
	return nil
}

// CloseLog ends the recording, if any: the episodes in progress end as Stopped and
// the log is closed, readable by any Arrow reader. It returns the log's error, if
// any; calling it again returns nil.
func (s *Single) CloseLog(ctx context.Context) error {
	r := s.rec
	if r == nil {
		return nil
	}
	s.rec = nil
	return r.close(ctx)
}

// logStep logs the Step of actions.
func (s *Single) logStep(ctx context.Context, actions []int64) {
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
		r.report(ctx, i, 0, 0, rep, c.tick, !done)
		if done {
			t := env.Turn{Reports: r.rep[:], Over: true, Tick: c.tick}
			r.end(ctx, i, &t, c.tick)
			r.begin(ctx, i, v.Seeds()[i])
			s.logStart(ctx, i)
		}
	}
}

// logStart logs the first report of copy i's episode.
func (s *Single) logStart(ctx context.Context, i int) {
	a := &s.layout.Agents[0]
	d, m := a.ObsDim, a.MaskLen
	rep := &s.rec.rep[0]
	rep.Obs, rep.Mask, rep.Reward, rep.Terminated, rep.Truncated, rep.SpanTicks, rep.Start = s.v.Obs()[i*d:(i+1)*d], nil, 0, false, false, 0, true
	if m > 0 {
		rep.Mask = s.v.Masks()[i*m : (i+1)*m]
	}
	s.rec.report(ctx, i, 0, 0, rep, 0, true)
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
func (x *Multi) CloseLog(ctx context.Context) error {
	r := x.rec
	if r == nil {
		return nil
	}
	x.rec = nil
	return r.close(ctx)
}

// logStep logs the Step that went well.
func (x *Multi) logStep(ctx context.Context) {
	r := x.rec
	for i := range r.copies {
		if !r.copies[i].open {
			continue
		}
		t := x.m.Stepped(i)
		r.turn(ctx, i, &t)
		if x.m.Ended(i) {
			r.end(ctx, i, &t, t.Tick)
			r.begin(ctx, i, x.m.Seeds()[i])
			nt := x.m.Turn(i)
			r.turn(ctx, i, &nt)
		}
	}
}
