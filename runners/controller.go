package runners

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/batonrl/baton/env"
)

// Controller runs trials in the background and lets callers watch, reward and stop
// them: the trial service of a server, a notebook's handle on a long run. Trials wait
// in a queue (Pending) for one of a bounded number of worker goroutines; workers start
// when trials wait and end when none does, so an idle Controller holds no goroutine.
// Build it with NewController; it is safe for concurrent use. Call Shutdown when done
// with it.
type Controller struct {
	reg  *Registry
	opts controllerOptions
	sink Sink

	mu       sync.Mutex
	trials   map[string]*record
	order    []*record
	queue    []*record
	workers  int
	seq      int
	closed   bool
	drained  chan struct{}
	isDrain  bool
	maxWorks int
}

// record is the controller's view of one trial.
type record struct {
	id     string
	plan   *plan
	ctx    context.Context
	cancel context.CancelCauseFunc
	feed   feedback
	pos    atomic.Uint64

	// guarded by Controller.mu
	state    State
	history  []StateChange
	changed  chan struct{}
	result   Result
	episodes []EpisodeResult // the complete episodes of a running trial
}

// Status is a trial as Controller.List shows it.
type Status struct {
	ID    string
	Env   string
	State State
	// Err says why the trial failed or stopped.
	Err error
	// Episode and Tick are where a running or finished trial is, or was.
	Episode, Tick int
}

// NewController returns a controller of the environments of reg. Its options are
// WithSinks (shared by all trials: safe for concurrent use) and WithWorkers.
func NewController(reg *Registry, opts ...ControllerOption) (*Controller, error) {
	c := &Controller{reg: reg, trials: map[string]*record{}, drained: make(chan struct{})}
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
// the controller still holds is an error wrapping ErrTrialExists; after Shutdown,
// Start returns ErrShutdown.
func (c *Controller) Start(ctx context.Context, spec Spec) (string, error) {
	if err := ctx.Err(); err != nil {
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
	if c.closed {
		return "", ErrShutdown
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
	rec := &record{id: id, plan: p, changed: make(chan struct{})}
	rec.ctx, rec.cancel = context.WithCancelCause(ctx)
	c.trials[id] = rec
	c.order = append(c.order, rec)
	c.change(rec, StateChange{Trial: id, State: Pending, Info: p.info})
	c.queue = append(c.queue, rec)
	if c.workers < c.maxWorks {
		c.workers++
		go c.work()
	}
	return id, nil
}

// change records a state change and wakes the watchers; c.mu is held.
func (c *Controller) change(rec *record, sc StateChange) {
	rec.state = sc.State
	rec.history = append(rec.history, sc)
	close(rec.changed)
	rec.changed = make(chan struct{})
}

func (c *Controller) work() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.workers--
			if c.workers == 0 && c.closed {
				c.drain()
			}
			c.mu.Unlock()
			return
		}
		rec := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		c.run(rec)
	}
}

// drain marks the last worker's end after Shutdown; c.mu is held.
func (c *Controller) drain() {
	if !c.isDrain {
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
	c.change(rec, StateChange{Trial: rec.id, State: Running, Info: rec.plan.info})
	c.mu.Unlock()
	t := newTrial(rec.ctx, rec.plan, rec.plan.open.first, c.sink)
	t.feed, t.pos = &rec.feed, &rec.pos
	t.onEpisode = func(e EpisodeResult) {
		c.mu.Lock()
		rec.episodes = append(rec.episodes, e)
		c.mu.Unlock()
	}
	res := t.run()
	c.mu.Lock()
	defer c.mu.Unlock()
	rec.result = res
	c.change(rec, StateChange{Trial: rec.id, State: res.State, Err: res.Err, Info: rec.plan.info})
}

// stopPending finishes a trial stopped before it ran.
func (c *Controller) stopPending(rec *record) {
	cause := context.Cause(rec.ctx)
	rec.feed.take(nil, true)
	res := Result{ID: rec.id, State: Stopped, Err: cause, Info: rec.plan.info}
	if c.sink != nil {
		func() {
			defer func() { _ = recover() }()
			sc := StateChange{Trial: rec.id, State: Stopped, Err: cause, Info: rec.plan.info}
			_ = c.sink.Handle(rec.ctx, &Event{Kind: KindState, Trial: rec.id, State: &sc})
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec.result = res
	c.change(rec, StateChange{Trial: rec.id, State: Stopped, Err: cause, Info: rec.plan.info})
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
// ErrUnknownTrial, ErrNotRunning, or ErrReward for an agent id that is not of the
// trial's agents or a tick after the trial's current one.
func (c *Controller) Reward(id string, fb Feedback) error {
	rec, err := c.get(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	state := rec.state
	c.mu.Unlock()
	if state != Running {
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
		return fmt.Errorf("%w: %s has finished", err, id)
	}
	return nil
}

// Watch returns the state changes of a trial: those that happened already, then each
// one as it happens, until the trial finishes (the last change yielded is its final
// state), ctx is done, or the loop breaks. It returns an error wrapping ErrUnknownTrial
// for an unknown id. The iteration blocks between changes; it starts no goroutine.
func (c *Controller) Watch(ctx context.Context, id string) (iter.Seq[StateChange], error) {
	rec, err := c.get(id)
	if err != nil {
		return nil, err
	}
	return func(yield func(StateChange) bool) {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Status, 0, len(c.order))
	for _, rec := range c.order {
		pos := rec.pos.Load()
		st := Status{ID: rec.id, Env: rec.plan.open.entry.Name, State: rec.state, Episode: int(pos >> 32), Tick: int(uint32(pos))}
		if n := len(rec.history); n > 0 {
			st.Err = rec.history[n-1].Err
		}
		out = append(out, st)
	}
	return out
}

// Registry returns the registry of the controller's environments.
func (c *Controller) Registry() *Registry { return c.reg }

// Episodes returns the complete episodes of a trial from index from on, as each ended,
// while it runs and after: a chart of returns follows a long trial with it. Their
// returns are those at each episode's end; a retroactive reward that arrives in a
// later episode is in the trial's Result (Wait), not here. It returns an error wrapping
// ErrUnknownTrial for an unknown id.
func (c *Controller) Episodes(id string, from int) ([]EpisodeResult, error) {
	rec, err := c.get(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if from < 0 || from >= len(rec.episodes) {
		return nil, nil
	}
	out := make([]EpisodeResult, len(rec.episodes)-from)
	for i, e := range rec.episodes[from:] {
		e.Returns, e.Metrics = slices.Clone(e.Returns), slices.Clone(e.Metrics)
		out[i] = e
	}
	return out, nil
}

// Forget drops a finished trial, so that a long-lived controller does not hold every
// result. It returns an error wrapping ErrNotDone for a trial still pending or
// running, and ErrUnknownTrial for an unknown id.
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
	delete(c.trials, id)
	c.order = slices.DeleteFunc(c.order, func(r *record) bool { return r == rec })
	return nil
}

// Shutdown stops every trial not finished (cause ErrShutdown), refuses new ones, and
// waits until every worker goroutine has ended, or ctx is done. Results stay readable.
func (c *Controller) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	for _, rec := range c.order {
		if !rec.state.Done() {
			rec.cancel(ErrShutdown)
		}
	}
	if c.workers == 0 {
		c.drain()
	}
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
