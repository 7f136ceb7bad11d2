package runners

import (
	"context"
	"errors"
	"fmt"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"iter"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// Controller runs trials in the background and lets callers watch, reward and stop
// them: the trial service of a server, a notebook's handle on a long run. Trials wait
// in a queue (Pending) for one of a bounded number of worker goroutines (WithWorkers);
// workers start when trials wait and end when none does, so an idle Controller holds
// no goroutine. A trial with an Attended policy, which waits for a person, runs on a
// goroutine of its own instead, outside that bound, so that a person who takes their
// time holds no worker.
//
// Its memory is bounded whatever it is asked: at most WithMaxLive trials pending or
// running (Start refuses more with ErrFull), the WithKeepFinished trials that finished
// last (older ones are forgotten: their steps and results are in the sinks), and the
// last WithEpisodeWindow episodes of each trial.
//
// Build it with NewController; it is safe for concurrent use. Call Shutdown when done
// with it.
type Controller struct {
	reg  *registry.Registry
	opts controllerOptions
	sink event.Sink

	mu       sync.Mutex
	trials   map[string]*record
	order    []*record // in start order; forgotten ones stay until compacted
	gone     int       // forgotten records in order
	queue    []*record
	qbase    uint64    // the queue position of queue[0] (see record.qpos)
	finished []*record // finished records in finishing order, some forgotten since
	kept     int       // finished records held
	watchers map[*watcher]struct{}
	live     int // records pending or running
	workers  int // worker goroutines
	solo     int // goroutines of attended trials
	seq      int // the N of the last "trial-N"
	started  uint64
	closed   bool
	drained  chan struct{}
	isDrain  bool
	maxWorks int
}

// Attended is implemented by policies that wait for a person, or another client
// outside the process, to choose their actions: the client actors of a trial server,
// a person at a terminal. A Controller finds it once, when it starts a trial, on the
// policy values of the trial's actors (Value): a trial with one whose Attended
// reports true runs on a goroutine of its own, not on one of the WithWorkers workers.
type Attended interface {
	agent.Policy
	// Attended reports whether the policy waits for a person.
	Attended() bool
}

// record is the controller's view of one trial.
type record struct {
	id       string
	seq      uint64
	plan     *plan
	attended bool
	ctx      context.Context
	cancel   context.CancelCauseFunc
	feed     feedback
	pos      atomic.Uint64
	view     viewing

	// guarded by Controller.mu
	env       env.MultiAgent // built by open, for the trial to use; nil when it builds its own
	qpos      uint64         // its position in the queue, counted from the first trial ever queued
	state     event.State
	history   []event.StateChange
	changed   chan struct{}
	result    Result
	episodes  []EpisodeResult // the last complete episodes of a running trial
	epFirst   int             // the index of episodes[0]
	forgotten bool
}

// Status is a trial as Controller.List shows it.
type Status struct {
	ID    string
	Env   string
	State event.State
	// Err says why the trial failed or stopped.
	Err error
	// Episode and Tick are where a running or finished trial is, or was.
	Episode, Tick int
	// Seq orders the trials by start: one started later has a larger Seq (from 1).
	// ListAfter lists the trials after one.
	Seq uint64
	// Ahead counts, for a Pending trial that waits for a worker, the trials queued
	// before it; 0 otherwise.
	Ahead int
	// Attended reports a trial that runs outside the workers: a policy of it waits
	// for a person (Attended).
	Attended bool
	// Info describes the trial; it is the controller's, read-only.
	Info *event.TrialInfo
}

// NewController returns a controller of the environments of reg. Its options are
// WithSinks (shared by all trials: safe for concurrent use), WithWorkers, and the
// bounds WithMaxLive, WithKeepFinished and WithEpisodeWindow.
func NewController(reg *registry.Registry, opts ...ControllerOption) (*Controller, error) {
	c := &Controller{reg: reg, trials: map[string]*record{}, watchers: map[*watcher]struct{}{}, drained: make(chan struct{})}
	c.opts.maxLive, c.opts.keepFinished, c.opts.window = DefaultMaxLive, DefaultKeepFinished, DefaultEpisodeWindow
	for _, o := range opts {
		if o != nil {
			o.applyController(&c.opts)
		}
	}
	if c.opts.err != nil {
		return nil, c.opts.err
	}
	c.sink = joinSinks(c.opts.sinks...)
	c.maxWorks = c.opts.workerCount()
	return c, nil
}

// Start checks spec as NewCampaign does (errors list the choices) and queues the
// trial; it returns the trial's id: spec.ID, or "trial-N" when that is "". The trial
// runs until it ends, Stop is called, or ctx is done (it then stops, as
// exec.CommandContext kills its process): ctx bounds the trial, not the call. An ID
// the controller still holds is an error wrapping ErrTrialExists; a trial past
// WithMaxLive one wrapping ErrFull; after Shutdown, Start returns ErrShutdown.
func (c *Controller) Start(ctx context.Context, spec Spec) (string, error) {
	return c.start(ctx, spec, false, 0)
}

// StartWatched starts a trial as Start does, watched from its first step: from its
// environment's reset on it draws each step and waits pace after it, as though Frame
// had been called with pace as it began to run, so that a trial shorter than the
// watcher's first look is drawn all the same. Frame, called within FrameWindow, goes
// on watching it (at the pace of that call); otherwise it draws for FrameWindow and
// then runs on unwatched. A pace out of Frame's range (0 to MaxFramePace) is an error
// wrapping ErrInvalidSpec.
func (c *Controller) StartWatched(ctx context.Context, spec Spec, pace time.Duration) (string, error) {
	if pace < 0 || pace > MaxFramePace {
		return "", fmt.Errorf("%w: frame pace %v: want 0 to %v", ErrInvalidSpec, pace, MaxFramePace)
	}
	return c.start(ctx, spec, true, pace)
}

// start starts a trial, watched from its first step at pace when watched.
func (c *Controller) start(ctx context.Context, spec Spec, watched bool, pace time.Duration) (string, error) {
	if err := c.admit(ctx, 1); err != nil {
		return "", err
	}
	spec = spec.clone()
	o, err := open(c.reg, spec.Env, spec.Config, spec.MaxTicks)
	if err != nil {
		return "", err
	}
	p, err := newPlan(spec, -1, o)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.room(1); err != nil {
		return "", err
	}
	id := spec.ID
	if id == "" {
		for id == "" || c.trials[id] != nil {
			c.seq++
			id = "trial-" + strconv.Itoa(c.seq)
		}
	} else if c.trials[id] != nil {
		return "", fmt.Errorf("%w: %q", ErrTrialExists, id)
	}
	p.spec.ID, p.info.ID = id, id
	p.watched, p.watchPace = watched, pace
	c.add(ctx, p)
	return id, nil
}

// StartCampaign starts trials trials of spec at once, or none: trial i has the id
// "ID-i" ("ENV-i" when spec.ID is "") and the seed env.DeriveSeed(spec.Seed, i), as the
// trials of a Campaign do, and the environment is opened once for all of them. It
// returns their ids in trial order. Its errors are Start's; ErrFull when the trials
// do not all fit in WithMaxLive.
func (c *Controller) StartCampaign(ctx context.Context, spec Spec, trials int) ([]string, error) {
	if trials < 1 {
		return nil, fmt.Errorf("%w: StartCampaign of %d trials: want 1 or more", ErrInvalidSpec, trials)
	}
	if err := c.admit(ctx, trials); err != nil {
		return nil, err
	}
	spec = spec.clone()
	o, err := open(c.reg, spec.Env, spec.Config, spec.MaxTicks)
	if err != nil {
		return nil, err
	}
	base, err := newPlan(spec, 0, o)
	if err != nil {
		return nil, err
	}
	prefix := spec.ID
	if prefix == "" {
		prefix = o.entry.Name
	}
	ids := make([]string, trials)
	for i := range ids {
		ids[i] = prefix + "-" + strconv.Itoa(i)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.room(trials); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if c.trials[id] != nil {
			return nil, fmt.Errorf("%w: %q", ErrTrialExists, id)
		}
	}
	for i, id := range ids {
		p := new(plan)
		base.copyFor(p, id, env.DeriveSeed(spec.Seed, i), i)
		c.add(ctx, p)
	}
	return ids, nil
}

// admit refuses, before any work, a start of n trials that cannot succeed.
func (c *Controller) admit(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.room(n)
}

// room returns the error of a start of n trials that would pass the bound; c.mu is
// held.
func (c *Controller) room(n int) error {
	if c.closed {
		return ErrShutdown
	}
	if c.live+n > c.opts.maxLive {
		return fmt.Errorf("%w: %d more trials asked for, %d pending or running, at most %d (WithMaxLive)", ErrFull, n, c.live, c.opts.maxLive)
	}
	return nil
}

// add holds a new trial of plan p and queues it, or starts it alone when it is
// attended; c.mu is held.
func (c *Controller) add(ctx context.Context, p *plan) {
	c.started++
	rec := &record{id: p.spec.ID, seq: c.started, plan: p, attended: p.attended(), changed: make(chan struct{})}
	rec.ctx, rec.cancel = context.WithCancelCause(ctx)
	// The environment open built to learn the agents serves the trial if it runs now;
	// a queued trial builds its own when it runs, holding none while it waits.
	if o := p.open; o.first != nil {
		if rec.attended || len(c.queue) == 0 && c.workers < c.maxWorks {
			rec.env = o.first
		}
		o.first = nil
	}
	c.trials[rec.id] = rec
	c.order = append(c.order, rec)
	c.live++
	c.change(rec, event.StateChange{Trial: rec.id, State: event.Pending, Info: p.info})
	if rec.attended {
		c.solo++
		go c.runAlone(rec)
		return
	}
	rec.qpos = c.qbase + uint64(len(c.queue))
	c.queue = append(c.queue, rec)
	if c.workers < c.maxWorks {
		c.workers++
		go c.work()
	}
}

// attended reports whether a policy value of the plan waits for a person.
func (p *plan) attended() bool {
	for _, a := range p.choices {
		if at, ok := a.Value.(Attended); ok && at.Attended() {
			return true
		}
	}
	return false
}

// change records a state change, wakes the watchers, and on a trial's final change
// forgets the finished trials past the bound; c.mu is held.
func (c *Controller) change(rec *record, sc event.StateChange) {
	rec.state = sc.State
	rec.history = append(rec.history, sc)
	close(rec.changed)
	rec.changed = make(chan struct{})
	for w := range c.watchers {
		w.mark(rec)
	}
	if !sc.State.Done() {
		return
	}
	c.live--
	c.kept++
	c.finished = append(c.finished, rec)
	for c.kept > c.opts.keepFinished {
		old := c.finished[0]
		c.finished[0] = nil
		c.finished = c.finished[1:]
		if !old.forgotten {
			c.forget(old)
		}
	}
}

// forget drops a finished record; c.mu is held.
func (c *Controller) forget(rec *record) {
	rec.forgotten = true
	c.kept--
	delete(c.trials, rec.id)
	c.gone++
	if c.gone > 64 && c.gone > len(c.order)/2 {
		c.order = slices.DeleteFunc(c.order, func(r *record) bool { return r.forgotten })
		c.gone = 0
	}
}

func (c *Controller) work() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.workers--
			c.drainIfDone()
			c.mu.Unlock()
			return
		}
		rec := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.qbase++
		c.mu.Unlock()
		c.run(rec)
	}
}

// runAlone runs an attended trial on its own goroutine.
func (c *Controller) runAlone(rec *record) {
	c.run(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.solo--
	c.drainIfDone()
}

// drainIfDone marks the last goroutine's end after Shutdown; c.mu is held.
func (c *Controller) drainIfDone() {
	if c.closed && c.workers == 0 && c.solo == 0 && !c.isDrain {
		c.isDrain = true
		close(c.drained)
	}
}

func (c *Controller) run(rec *record) {
	defer rec.cancel(nil)
	if rec.ctx.Err() != nil {
		c.stopPending(rec)
		return
	}
	c.mu.Lock()
	c.change(rec, event.StateChange{Trial: rec.id, State: event.Running, Info: rec.plan.info})
	m := rec.env
	rec.env = nil
	c.mu.Unlock()
	if rec.plan.watched {
		rec.view.pace.Store(int64(rec.plan.watchPace))
		rec.view.until.Store(time.Now().Add(FrameWindow).UnixNano())
	}
	t := newTrial(rec.ctx, rec.plan, m, c.sink)
	t.feed, t.pos, t.view, t.window = &rec.feed, &rec.pos, &rec.view, c.opts.window
	t.onEpisode = func(e EpisodeResult) {
		c.mu.Lock()
		rec.keep(e, c.opts.window)
		c.mu.Unlock()
	}
	res := t.run()
	c.mu.Lock()
	defer c.mu.Unlock()
	rec.result = res
	c.change(rec, event.StateChange{Trial: rec.id, State: res.State, Err: res.Err, Info: rec.plan.info})
}

// keep adds a complete episode, keeping the last window of them (and at most as many
// more, so that keeping one costs O(1) amortised); the controller's mutex is held.
func (r *record) keep(e EpisodeResult, window int) {
	r.episodes = append(r.episodes, e)
	if len(r.episodes) >= 2*window {
		k := len(r.episodes) - window
		copy(r.episodes, r.episodes[k:])
		clear(r.episodes[window:])
		r.episodes = r.episodes[:window]
		r.epFirst += k
	}
}

// stopPending finishes a trial stopped before it ran.
func (c *Controller) stopPending(rec *record) {
	cause := context.Cause(rec.ctx)
	rec.feed.take(nil, true)
	res := Result{ID: rec.id, State: event.Stopped, Err: cause, Info: rec.plan.info}
	if c.sink != nil {
		func() {
			defer func() { _ = recover() }()
			sc := event.StateChange{Trial: rec.id, State: event.Stopped, Err: cause, Info: rec.plan.info}
			_ = c.sink.Handle(rec.ctx, &event.Event{Kind: event.KindState, Trial: rec.id, State: &sc})
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec.env = nil
	rec.result = res
	c.change(rec, event.StateChange{Trial: rec.id, State: event.Stopped, Err: cause, Info: rec.plan.info})
}

func (c *Controller) get(id string) (*record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.trials[id]
	if rec == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTrial, id)
	}
	return rec, nil
}

// Stop stops a trial, pending or running, with the cause ErrStopped: it ends Stopped
// (a running trial at its next step, or as soon as its policy returns after seeing its
// context done). Stopping a finished trial does nothing. It does not wait.
func (c *Controller) Stop(id string) error {
	rec, err := c.get(id)
	if err != nil {
		return err
	}
	rec.cancel(ErrStopped)
	c.mu.Lock()
	i := slices.Index(c.queue, rec)
	if i >= 0 {
		for _, r := range c.queue[i+1:] {
			r.qpos--
		}
		c.queue = slices.Delete(c.queue, i, i+1)
	}
	c.mu.Unlock()
	if i >= 0 {
		c.stopPending(rec)
	}
	return nil
}

// Reward gives a running trial a reward from outside (see Feedback): it reaches the
// trial's events and result before its next step. It returns an error wrapping
// ErrUnknownTrial, ErrNotRunning, ErrReward for an agent id that is not of the
// trial's agents or a tick after the trial's current one, or ErrFull when 4096
// rewards wait for the trial's next step already.
func (c *Controller) Reward(id string, fb Feedback) error {
	rec, err := c.get(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	state := rec.state
	c.mu.Unlock()
	if state != event.Running {
		return fmt.Errorf("%w: %s is %s", ErrNotRunning, id, state)
	}
	name, ok := agentName(fb.AgentID)
	if !ok || !slices.ContainsFunc(rec.plan.open.agents, func(s env.Spec) bool { return s.Name == name }) {
		return fmt.Errorf("%w: %q is not the id of an agent of %s (agents: %s)", ErrReward, fb.AgentID, rec.plan.open.entry.Name, agentNames(rec.plan.open.agents))
	}
	if fb.Tick != Now {
		pos := rec.pos.Load()
		episode, tick := int(pos>>32), int(uint32(pos))
		if fb.Tick < 0 || fb.Episode < 0 || fb.Episode > episode || fb.Episode == episode && fb.Tick > tick {
			return fmt.Errorf("%w: episode %d, tick %d is not a step the trial has reported (it is at episode %d, tick %d; use Tick Now for its next step)", ErrReward, fb.Episode, fb.Tick, episode, tick)
		}
	}
	if err := rec.feed.push(fb); err != nil {
		if errors.Is(err, ErrFull) {
			return fmt.Errorf("%w (trial %s)", err, id)
		}
		return fmt.Errorf("%w: %s has finished", err, id)
	}
	return nil
}

// Watch returns the state changes of a trial: those that happened already, then each
// one as it happens, until the trial finishes (the last change yielded is its final
// state), ctx is done, or the loop breaks. It returns an error wrapping ErrUnknownTrial
// for an unknown id. The iteration blocks between changes; it starts no goroutine.
func (c *Controller) Watch(ctx context.Context, id string) (iter.Seq[event.StateChange], error) {
	rec, err := c.get(id)
	if err != nil {
		return nil, err
	}
	return func(yield func(event.StateChange) bool) {
		seen := 0
		for {
			c.mu.Lock()
			news := rec.history[seen:]
			changed, done := rec.changed, rec.state.Done()
			c.mu.Unlock()
			for _, sc := range news {
				seen++
				if !yield(sc) {
					return
				}
			}
			if done {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}, nil
}

// watcher follows trials for WatchMany: change marks those it follows as changed.
// Its fields are guarded by Controller.mu.
type watcher struct {
	follows map[*record]*followed // trials not yet seen to their end
	dirty   []*record             // trials changed since the watcher last looked
	wake    chan struct{}         // capacity 1: something is dirty
}

type followed struct {
	seen  int // changes yielded
	dirty bool
}

// mark notes a change of rec, if the watcher follows it; c.mu is held.
func (w *watcher) mark(rec *record) {
	f := w.follows[rec]
	if f == nil || f.dirty {
		return
	}
	f.dirty = true
	w.dirty = append(w.dirty, rec)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// WatchMany returns the state changes of several trials, as Watch does for one: those
// of ids, or, when ids is empty, of every trial the controller holds when it is
// called whose environment match accepts (nil accepts all). It yields each trial's
// changes so far, trial by trial in the order of ids (or of their start), then each
// change as it happens, until every trial followed has finished, ctx is done, or the
// loop breaks. The final change of a trial comes with its Result (the controller's,
// read-only); the others with nil. It returns an error wrapping ErrUnknownTrial for
// an unknown id. The iteration starts no goroutine and costs a map entry per trial
// followed, whatever their number.
func (c *Controller) WatchMany(ctx context.Context, ids []string, match func(env string) bool) (iter.Seq2[event.StateChange, *Result], error) {
	c.mu.Lock()
	var recs []*record
	if len(ids) == 0 {
		for _, rec := range c.order {
			if !rec.forgotten && (match == nil || match(rec.plan.open.entry.Name)) {
				recs = append(recs, rec)
			}
		}
	} else {
		for _, id := range ids {
			rec := c.trials[id]
			if rec == nil {
				c.mu.Unlock()
				return nil, fmt.Errorf("%w: %q", ErrUnknownTrial, id)
			}
			recs = append(recs, rec)
		}
	}
	c.mu.Unlock()
	type item struct {
		sc  event.StateChange
		res *Result
	}
	return func(yield func(event.StateChange, *Result) bool) {
		w := &watcher{follows: make(map[*record]*followed, len(recs)), wake: make(chan struct{}, 1)}
		c.mu.Lock()
		for _, rec := range recs {
			if w.follows[rec] == nil {
				w.follows[rec] = &followed{dirty: true}
				w.dirty = append(w.dirty, rec)
			}
		}
		c.watchers[w] = struct{}{}
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.watchers, w)
			c.mu.Unlock()
		}()
		var items []item
		var dirty []*record
		for {
			c.mu.Lock()
			dirty, w.dirty = w.dirty, dirty[:0]
			for _, rec := range dirty {
				f := w.follows[rec]
				f.dirty = false
				for _, sc := range rec.history[f.seen:] {
					it := item{sc: sc}
					if sc.State.Done() {
						it.res = &rec.result
					}
					items = append(items, it)
				}
				f.seen = len(rec.history)
				if rec.state.Done() {
					delete(w.follows, rec)
				}
			}
			left := len(w.follows)
			c.mu.Unlock()
			clear(dirty)
			for _, it := range items {
				if !yield(it.sc, it.res) {
					return
				}
			}
			clear(items)
			items = items[:0]
			if left == 0 {
				return
			}
			select {
			case <-w.wake:
			case <-ctx.Done():
				return
			}
		}
	}, nil
}

// Wait waits until a trial finishes and returns its result. Its error is ctx's, or
// one wrapping ErrUnknownTrial; the trial's own failure is in Result.Err.
func (c *Controller) Wait(ctx context.Context, id string) (Result, error) {
	rec, err := c.get(id)
	if err != nil {
		return Result{}, err
	}
	for {
		c.mu.Lock()
		changed, done, res := rec.changed, rec.state.Done(), rec.result
		c.mu.Unlock()
		if done {
			return res, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// List returns the status of every trial the controller holds, in the order they
// were started.
func (c *Controller) List() []Status {
	out, _ := c.ListAfter(0, 0, nil)
	return out
}

// ListAfter returns a page of List: the status of up to n trials (0 for all) started
// after the trial whose Status.Seq is after (0 for the first), whose environment
// match accepts (nil accepts all), in the order they were started, and whether more
// such trials follow. A page resumes where the last ended even when trials were
// forgotten in between.
func (c *Controller) ListAfter(after uint64, n int, match func(env string) bool) ([]Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.order), func(i int) bool { return c.order[i].seq > after })
	var out []Status
	for _, rec := range c.order[i:] {
		if rec.forgotten || match != nil && !match(rec.plan.open.entry.Name) {
			continue
		}
		if n > 0 && len(out) == n {
			return out, true
		}
		out = append(out, c.status(rec))
	}
	return out, false
}

// Status returns the status of a trial, or an error wrapping ErrUnknownTrial.
func (c *Controller) Status(id string) (Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.trials[id]
	if rec == nil {
		return Status{}, fmt.Errorf("%w: %q", ErrUnknownTrial, id)
	}
	return c.status(rec), nil
}

// status is the status of rec; c.mu is held.
func (c *Controller) status(rec *record) Status {
	pos := rec.pos.Load()
	st := Status{
		ID: rec.id, Env: rec.plan.open.entry.Name, State: rec.state, Episode: int(pos >> 32), Tick: int(uint32(pos)),
		Seq: rec.seq, Attended: rec.attended, Info: rec.plan.info,
	}
	if n := len(rec.history); n > 0 {
		st.Err = rec.history[n-1].Err
	}
	if rec.state == event.Pending && !rec.attended && rec.qpos >= c.qbase {
		st.Ahead = int(rec.qpos - c.qbase)
	}
	return st
}

// Workers returns how many worker goroutines run trials now, and the most that may
// (WithWorkers). Attended trials are not counted.
func (c *Controller) Workers() (busy, limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workers, c.maxWorks
}

// Registry returns the registry of the controller's environments.
func (c *Controller) Registry() *registry.Registry { return c.reg }

// Episodes returns the complete episodes of a trial from index from on, as each ended,
// while it runs and after, and the index of the first returned: from, or, when the
// trial's episode window (WithEpisodeWindow) no longer holds episode from, the first
// it holds. A chart of returns follows a long trial with it. Their returns are those
// at each episode's end; a retroactive reward that arrives in a later episode is in
// the trial's Result (Wait), not here. It returns an error wrapping ErrUnknownTrial
// for an unknown id.
func (c *Controller) Episodes(id string, from int) ([]EpisodeResult, int, error) {
	rec, err := c.get(id)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if from < 0 {
		return nil, 0, nil
	}
	end := rec.epFirst + len(rec.episodes)
	first := max(from, end-c.opts.window, rec.epFirst)
	if first >= end {
		return nil, first, nil
	}
	held := rec.episodes[first-rec.epFirst:]
	out := make([]EpisodeResult, len(held))
	for i, e := range held {
		e.Returns, e.Metrics = slices.Clone(e.Returns), slices.Clone(e.Metrics)
		out[i] = e
	}
	return out, first, nil
}

// Forget drops a finished trial, so that a long-lived controller does not hold every
// result (it forgets the oldest past WithKeepFinished by itself). It returns an error
// wrapping ErrNotDone for a trial still pending or running, and ErrUnknownTrial for an
// unknown id.
func (c *Controller) Forget(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.trials[id]
	switch {
	case rec == nil:
		return fmt.Errorf("%w: %q", ErrUnknownTrial, id)
	case !rec.state.Done():
		return fmt.Errorf("%w: %s is %s", ErrNotDone, id, rec.state)
	}
	c.forget(rec)
	return nil
}

// Shutdown stops every trial not finished (cause ErrShutdown), refuses new ones, and
// waits until every goroutine of the controller has ended, or ctx is done. Results
// stay readable.
func (c *Controller) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	for _, rec := range c.order {
		if !rec.state.Done() {
			rec.cancel(ErrShutdown)
		}
	}
	c.drainIfDone()
	c.mu.Unlock()
	select {
	case <-c.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func agentNames(specs []env.Spec) string {
	s := ""
	for i, a := range specs {
		if i > 0 {
			s += ", "
		}
		s += a.Name
	}
	return s
}
