package runners

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonrl/baton/env"
	"go.uber.org/multierr"
	"gonum.org/v1/gonum/stat"
)

// Campaign runs many trials of one spec on a bounded pool of goroutines and sums them
// up. Build it with NewCampaign; a Campaign is safe for concurrent use (each Run is
// independent).
type Campaign struct {
	reg  *registry.Registry
	spec Spec
	opts campaignOptions
	base *opened

	mu    sync.Mutex
	cache map[string]*opened
	plan  *plan // of the spec, for trials no hook changes
	// tasks are the schedule's tasks (WithSchedule), nil without one.
	tasks []scheduledTask
}

// scheduledTask is a task of the campaign's schedule: its spec and plan.
type scheduledTask struct {
	spec Spec
	plan *plan
}

// NewCampaign checks spec (its environment, configuration, agents and policies, with
// errors listing the choices, a *NameError for a name that is not registered) and the
// options, and returns a campaign of trials of it. Trial i of the campaign is spec
// with the ID "ID-i" (or "ENV-i") and the seed env.DeriveSeed(spec.Seed, i), changed by the
// pre-trial hooks.
func NewCampaign(reg *registry.Registry, spec Spec, opts ...CampaignOption) (*Campaign, error) {
	c := &Campaign{reg: reg, spec: spec.clone(), cache: map[string]*opened{}}
	for _, o := range opts {
		if o != nil {
			o.applyCampaign(&c.opts)
		}
	}
	if c.opts.err != nil {
		return nil, c.opts.err
	}
	if c.opts.trials == 0 {
		c.opts.trials = 1
	}
	if err := checkSpec(&c.spec); err != nil {
		return nil, err
	}
	if c.opts.schedule != nil {
		if c.opts.first != 0 {
			return nil, fmt.Errorf("%w: WithFirstTrial(%d) with WithSchedule: a schedule's trials start at 0", ErrInvalidSpec, c.opts.first)
		}
		if err := c.openSchedule(); err != nil {
			return nil, err
		}
		return c, nil
	}
	o, err := open(reg, spec.Env, spec.Config, spec.MaxTicks)
	if err != nil {
		return nil, err
	}
	if c.plan, err = newPlan(c.spec, 0, o); err != nil {
		return nil, err
	}
	c.base = o
	c.cache[cacheKey(spec.Env, spec.Config)] = o
	return c, nil
}

// Trials returns how many trials the campaign runs.
func (c *Campaign) Trials() int { return c.opts.trials }

// Agents describes the agents of the spec's environment.
func (c *Campaign) Agents() []env.Spec { return slices.Clone(c.base.agents) }

// openSchedule checks the schedule's tasks against the registry and plans each.
func (c *Campaign) openSchedule() error {
	s := c.opts.schedule
	if c.spec.Env != "" || len(c.spec.Config) > 0 || c.spec.Actors != nil {
		return fmt.Errorf("%w: a scheduled campaign takes its environment, configuration and actors from the schedule's tasks; the spec gives them too", ErrInvalidSpec)
	}
	if err := s.check(); err != nil {
		return err
	}
	c.opts.trials = s.TrialCount(c.opts.trials)
	var errs []error
	var envs []string
	for k, t := range s.Tasks {
		name := t.taskName(k)
		bad := func(field string, err error) {
			errs = append(errs, &ScheduleError{Task: k, Name: name, Field: field, Reason: strings.TrimPrefix(strings.TrimPrefix(err.Error(), "runners: "), "registry: "), Err: err})
		}
		o, err := c.opened(t.Env, t.Config, c.spec.MaxTicks)
		if err != nil {
			var ne *registry.NameError
			if errors.As(err, &ne) {
				bad("env", err)
			} else {
				bad("config", err)
			}
			continue
		}
		if !slices.Contains(envs, t.Env) {
			envs = append(envs, t.Env)
		}
		spec := c.spec.clone()
		spec.Env, spec.Config, spec.Actors, spec.Task = t.Env, t.Config, t.Actors, name
		p, err := newPlan(spec, 0, o)
		if err != nil {
			bad("policies", err)
			continue
		}
		if reason := s.Success.checkMetric(o); reason != "" {
			errs = append(errs, &ScheduleError{Task: k, Name: name, Field: "success.metric", Reason: reason})
		}
		c.tasks = append(c.tasks, scheduledTask{spec: spec, plan: p})
	}
	if err := multierr.Combine(errs...); err != nil {
		c.tasks = nil
		return err
	}
	c.spec.Env = strings.Join(envs, ",")
	c.plan, c.base = c.tasks[0].plan, c.tasks[0].plan.open
	return nil
}

func cacheKey(name string, config []byte) string { return name + "\x00" + string(config) }

// opened returns the opened configuration of an environment, opening it once per
// campaign.
func (c *Campaign) opened(name string, config []byte, maxTicks int) (*opened, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.cache[cacheKey(name, config)]; ok {
		return o, nil
	}
	o, err := open(c.reg, name, config, maxTicks)
	if err != nil {
		return nil, err
	}
	c.cache[cacheKey(name, config)] = o
	return o, nil
}

// takeFirst hands out the environment built when o was opened, once, if it was built
// with the tick limit wanted.
func (c *Campaign) takeFirst(o *opened, maxTicks int) env.MultiAgent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := o.first; m != nil && o.firstTicks == maxTicks {
		o.first = nil
		return m
	}
	return nil
}

// Summary sums up a campaign. The same campaign seed gives the same Summary, apart
// from Wall and StepsPerSecond, whatever the number of workers: trials draw only from
// their own seeds and are summed up in trial order.
type Summary struct {
	// Env is the spec's environment.
	Env string `json:"env"`
	// Trials counts the trials run (not those a cancellation kept from starting);
	// Ended, Stopped and Failed split them by state.
	Trials  int `json:"trials"`
	Ended   int `json:"ended"`
	Stopped int `json:"stopped"`
	Failed  int `json:"failed"`
	// Episodes counts the complete episodes of all trials (of failed and stopped
	// trials too); the returns and the success rate are over them.
	Episodes int `json:"episodes"`
	// EnvSteps counts environment steps, over every episode begun.
	EnvSteps int64 `json:"env_steps"`
	// Wall is the campaign's wall-clock time, WallSeconds the same in seconds, and
	// StepsPerSecond is EnvSteps / WallSeconds.
	Wall           time.Duration `json:"-"`
	WallSeconds    float64       `json:"wall_seconds"`
	StepsPerSecond float64       `json:"steps_per_second"`
	// Successes counts the successful episodes; SuccessRate is Successes over the
	// complete episodes of trials whose environment defines success, nil when none does.
	Successes   int      `json:"successes"`
	SuccessRate *float64 `json:"success_rate,omitempty"`
	// Agents sums up each agent's episode returns, in the environment's agent order
	// (agents first seen in later trials, after a hook changed the environment, after).
	Agents []AgentSummary `json:"agents"`
	// Metrics sums up the environment's metrics (Entry.Metrics) over the complete
	// episodes that measured them, in the environment's order (metrics first seen in
	// later trials after); nil when it defines none.
	Metrics []MetricSummary `json:"metrics,omitempty"`
	// Failures lists the trials that failed, in trial order.
	Failures []Failure `json:"failures,omitempty"`
	// Tasks sums up each task of the campaign's schedule (WithSchedule), in the
	// schedule's order, and Runs lists the tasks in the order the trials took them:
	// each run is consecutive trials of one task. Both are nil without a schedule.
	Tasks []TaskSummary `json:"tasks,omitempty"`
	Runs  []TaskRun     `json:"runs,omitempty"`
}

// AgentSummary sums up an agent's returns over the complete episodes that have it: an
// episode's return is the sum of the rewards of all the agent's reports (every source,
// every sub-episode) and of the retroactive rewards for them. Std is the population
// standard deviation (0 for one episode), as NumPy's default.
type AgentSummary struct {
	Name     string  `json:"name"`
	Episodes int     `json:"episodes"`
	Mean     float64 `json:"mean"`
	Std      float64 `json:"std"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
}

// MetricSummary sums up an environment metric over the complete episodes that
// measured it; Std is the population standard deviation, as in AgentSummary.
type MetricSummary struct {
	Name     string  `json:"name"`
	Episodes int     `json:"episodes"`
	Mean     float64 `json:"mean"`
	Std      float64 `json:"std"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
}

// Failure is a failed trial of a campaign.
type Failure struct {
	Index  int    `json:"index"`
	Trial  string `json:"trial"`
	Err    error  `json:"-"`
	Reason string `json:"reason"`
}

// Run runs the campaign's trials, at most the worker count at once, and sums them up.
// A trial that fails (an error or a panic in user code) fails alone: the campaign goes
// on. When ctx is done, running trials stop promptly (policies get ctx), no trial
// starts, and Run returns the summary of the trials run so far with ctx's error. Every
// goroutine Run starts has ended when it returns. Other errors come from worker sinks
// (WithWorkerSinks).
func (c *Campaign) Run(ctx context.Context) (Summary, error) {
	start := time.Now()
	k := c.opts.trials
	w := min(c.opts.workerCount(), k)
	r := &campaignRun{c: c, results: make([]Result, k), ran: make([]bool, k)}
	if s := c.opts.schedule; s != nil {
		r.sched = newScheduler(s, c.spec.Seed, k)
		r.tasks, r.wins = make([]int, k), make([]bool, k)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		wg.Go(func() {
			errs[i] = r.work(wctx, i)
			if errs[i] != nil {
				cancel(errs[i])
			}
		})
	}
	wg.Wait()
	s := summarize(c.spec.Env, c.opts.first, r.results, r.ran, time.Since(start))
	if sc := c.opts.schedule; sc != nil {
		s.Tasks, s.Runs = sc.summarizeTasks(r.results, r.ran, r.tasks, r.wins)
	}
	err := errors.Join(errs...)
	if ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	return s, err
}

type campaignRun struct {
	c       *Campaign
	next    atomic.Int64
	steps   atomic.Int64
	results []Result
	ran     []bool
	// With a schedule: the scheduler, and each trial's task and success.
	sched *scheduler
	tasks []int
	wins  []bool

	mu                    sync.Mutex
	done, failed, stopped int
}

// worker is what a worker keeps from one trial to the next: the trial's buffers and
// the environment.
type worker struct {
	t        trial
	plan     plan
	open     *opened
	maxTicks int
	env      env.MultiAgent
	// hooked is the opened configuration of the latest trial a hook set, found
	// again without the campaign's lock for the next trial of the same one.
	hooked *opened
}

func (r *campaignRun) work(ctx context.Context, index int) (err error) {
	c := r.c
	sinks := slices.Clone(c.opts.sinks)
	if c.opts.workerSinks != nil {
		s, err := c.opts.workerSinks(index)
		if err != nil {
			return fmt.Errorf("runners: sink of worker %d: %w", index, err)
		}
		if cl, ok := s.(io.Closer); ok {
			defer func() {
				if cerr := cl.Close(); cerr != nil {
					err = errors.Join(err, fmt.Errorf("runners: closing the sink of worker %d: %w", index, cerr))
				}
			}()
		}
		sinks = append(sinks, s)
	}
	sink := joinSinks(sinks...)
	we := &worker{}
	for ctx.Err() == nil {
		i := int(r.next.Add(1) - 1)
		if i >= len(r.results) {
			return nil
		}
		r.results[i] = r.trial(ctx, c.opts.first+i, sink, we)
		r.ran[i] = true
		if r.sched != nil {
			r.wins[i] = c.opts.schedule.Success.Succeeded(&r.results[i])
			r.sched.record(i, r.wins[i])
		}
		r.report(i)
	}
	return nil
}

func (r *campaignRun) report(i int) {
	res := &r.results[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	switch res.State {
	case event.Failed:
		r.failed++
	case event.Stopped:
		r.stopped++
	}
	if f := r.c.opts.progress; f != nil {
		f(Progress{Done: r.done, Total: len(r.results), Failed: r.failed, Stopped: r.stopped, Steps: r.steps.Load(), Index: r.c.opts.first + i, Result: res})
	}
}

// trial runs trial i.
func (r *campaignRun) trial(ctx context.Context, i int, sink event.Sink, w *worker) Result {
	c := r.c
	base, basePlan := &c.spec, c.plan
	var k int
	if r.sched != nil {
		var err error
		if k, err = r.sched.taskOf(ctx, i); err != nil {
			return Result{ID: c.trialID(c.tasks[0].spec.Env, i), State: event.Stopped, Err: err}
		}
		r.tasks[i] = k
		base, basePlan = &c.tasks[k].spec, c.tasks[k].plan
	}
	id, seed := c.trialID(base.Env, i), env.DeriveSeed(c.spec.Seed, i)
	var p *plan
	if len(c.opts.hooks) == 0 {
		basePlan.copyFor(&w.plan, id, seed, i)
		p = &w.plan
	} else {
		spec := base.clone()
		spec.ID, spec.Seed = id, seed
		for _, h := range c.opts.hooks {
			if err := runHook(ctx, h, i, &spec); err != nil {
				return reject(ctx, spec.ID, err, sink)
			}
		}
		o := w.hooked
		var err error
		if o == nil || spec.Env != o.entry.Name || !bytes.Equal(spec.Config, o.config) {
			if o, err = c.opened(spec.Env, spec.Config, spec.MaxTicks); err != nil {
				return reject(ctx, spec.ID, err, sink)
			}
			w.hooked = o
		}
		if p, err = newPlan(spec, i, o); err != nil {
			return reject(ctx, spec.ID, err, sink)
		}
	}
	o, maxTicks := p.open, p.spec.MaxTicks
	var m env.MultiAgent
	if w.open == o && w.maxTicks == maxTicks {
		m = w.env
	} else {
		m = c.takeFirst(o, maxTicks)
	}
	t := &w.t
	t.init(ctx, p, m, sink)
	t.steps = &r.steps
	res := t.run()
	w.open, w.maxTicks, w.env = nil, 0, nil
	if res.State != event.Failed {
		w.open, w.maxTicks, w.env = o, maxTicks, t.env
	}
	return res
}

// trialID is the id of trial i of environment name: "ID-i", or "ENV-i" when the
// campaign's spec has no ID.
func (c *Campaign) trialID(name string, i int) string {
	prefix := c.spec.ID
	if prefix == "" {
		prefix = name
	}
	return prefix + "-" + strconv.Itoa(i)
}

// runHook runs a pre-trial hook, turning a panic into an error.
func runHook(ctx context.Context, h Hook, i int, s *Spec) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Where: "pre-trial hook", Value: v, Stack: debug.Stack()}
		}
	}()
	if err := h(ctx, i, s); err != nil {
		return fmt.Errorf("%w: %w", ErrHook, err)
	}
	return nil
}

// reject is the result of a trial whose spec could not be run; the sinks are told.
func reject(ctx context.Context, id string, err error, sink event.Sink) Result {
	err = &TrialError{Trial: id, Tick: -1, Err: err}
	if sink != nil {
		func() {
			defer func() { _ = recover() }()
			_ = sink.Handle(ctx, &event.Event{Kind: event.KindState, Trial: id, State: &event.StateChange{Trial: id, State: event.Failed, Err: err}})
		}()
	}
	return Result{ID: id, State: event.Failed, Err: err}
}

// Summarize sums up the results of a campaign of the environment name as Run does:
// results[i] is trial i's, in trial order, all of them run; wall is the time they
// took. The results of the trial ranges of one campaign run apart (WithFirstTrial),
// put back in trial order, sum up as the campaign run at once does, timing aside.
func Summarize(name string, results []Result, wall time.Duration) Summary {
	ran := make([]bool, len(results))
	for i := range ran {
		ran[i] = true
	}
	return summarize(name, 0, results, ran, wall)
}

// summarize sums up the results of the trials run, in trial order; results[i] is the
// result of trial first+i.
func summarize(name string, first int, results []Result, ran []bool, wall time.Duration) Summary {
	s := Summary{Env: name, Wall: wall, WallSeconds: wall.Seconds()}
	var order, metricOrder []string
	returns, metrics := map[string][]float64{}, map[string][]float64{}
	defined, successes, judged := false, 0, 0
	for i := range results {
		if !ran[i] {
			continue
		}
		res := &results[i]
		s.Trials++
		switch res.State {
		case event.Ended:
			s.Ended++
		case event.Stopped:
			s.Stopped++
		case event.Failed:
			s.Failed++
			reason := ""
			if res.Err != nil {
				reason = res.Err.Error()
			}
			s.Failures = append(s.Failures, Failure{Index: first + i, Trial: res.ID, Err: res.Err, Reason: reason})
		}
		s.EnvSteps += res.Steps
		if res.Info == nil {
			continue
		}
		for _, a := range res.Info.Agents {
			if _, ok := returns[a.Name]; !ok {
				order = append(order, a.Name)
				returns[a.Name] = nil
			}
		}
		for _, name := range res.Info.Metrics {
			if _, ok := metrics[name]; !ok {
				metricOrder = append(metricOrder, name)
				metrics[name] = nil
			}
		}
		defined = defined || res.Info.DefinesSuccess
		for _, ep := range res.Episodes {
			if !ep.Complete {
				continue
			}
			for j, name := range res.Info.Metrics {
				if j < len(ep.Metrics) && !math.IsNaN(ep.Metrics[j]) {
					metrics[name] = append(metrics[name], ep.Metrics[j])
				}
			}
			s.Episodes++
			if res.Info.DefinesSuccess {
				judged++
				if ep.Success {
					successes++
				}
			}
			for j, a := range res.Info.Agents {
				returns[a.Name] = append(returns[a.Name], ep.Returns[j])
			}
		}
	}
	if wall > 0 {
		s.StepsPerSecond = float64(s.EnvSteps) / wall.Seconds()
	}
	s.Successes = successes
	if defined {
		rate := 0.0
		if judged > 0 {
			rate = float64(successes) / float64(judged)
		}
		s.SuccessRate = &rate
	}
	for _, name := range order {
		xs := returns[name]
		as := AgentSummary{Name: name, Episodes: len(xs)}
		as.Mean, as.Std, as.Min, as.Max = describe(xs)
		s.Agents = append(s.Agents, as)
	}
	for _, name := range metricOrder {
		xs := metrics[name]
		ms := MetricSummary{Name: name, Episodes: len(xs)}
		ms.Mean, ms.Std, ms.Min, ms.Max = describe(xs)
		s.Metrics = append(s.Metrics, ms)
	}
	return s
}

// describe returns the mean, population standard deviation, minimum and maximum of
// xs; all 0 when xs is empty.
func describe(xs []float64) (mean, std, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	mean, std = stat.PopMeanStdDev(xs, nil)
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return mean, std, lo, hi
}
