package runners

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/batonrl/baton/registry"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/batonrl/baton/env"
	"go.uber.org/multierr"
)

//go:generate go tool stringer -type=Order -linecomment

// Order is how a Schedule takes its tasks. Its JSON form is the String: "in_order",
// "random" or "success".
type Order int

const (
	// InOrder plays each task for its Trials, one task after the other.
	InOrder Order = 1 + iota // in_order
	// AtRandom draws the task of each trial by the tasks' weights, from the trial's
	// seed alone.
	AtRandom // random
	// BySuccess starts with the first task and moves to the next when the learner's
	// success rate over a window of trials passes the promotion threshold (and, with
	// a demotion threshold, back to the previous one when it falls below it).
	BySuccess // success
)

// MarshalText writes the order's name.
func (o Order) MarshalText() ([]byte, error) {
	if o < InOrder || o > BySuccess {
		return nil, fmt.Errorf("%w: order %d", ErrSchedule, int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText reads an order's name.
func (o *Order) UnmarshalText(b []byte) error {
	for _, c := range []Order{InOrder, AtRandom, BySuccess} {
		if string(b) == c.String() {
			*o = c
			return nil
		}
	}
	return fmt.Errorf("order %q: want in_order, random or success", b)
}

// Schedule is a list of tasks taken in an Order: a curriculum. A campaign given one
// (WithSchedule) plays trial i on the task the schedule picks for it. ParseSchedule
// reads its JSON form.
type Schedule struct {
	// Order is how the tasks are taken; the zero value is invalid.
	Order Order
	// Tasks lists the tasks, at least one; BySuccess begins with the first.
	Tasks []Task
	// Trials is how many trials AtRandom and BySuccess run; 0 means the campaign's
	// WithTrials. InOrder runs the sum of its tasks' Trials, and Trials must be 0 or
	// that sum.
	Trials int
	// Success says which trials succeeded, for BySuccess and the summaries.
	Success Criterion
	// Promotion says when BySuccess moves from a task to the next (or back).
	Promotion Promotion
}

// Task is a task of a schedule: an environment, its configuration and the policies
// of its agents, as in a Spec.
type Task struct {
	// Name names the task in summaries and logs; "" means "task-K", K its index
	// from 0. Names are unique within a schedule.
	Name string
	// Env, Config and Actors are those of the trials that play the task (see Spec).
	Env    string
	Config json.RawMessage
	Actors map[string]Actor
	// Trials is how many trials InOrder plays the task, 1 or more; the other orders
	// want 0.
	Trials int
	// Weight is the task's relative chance of being drawn under AtRandom; 0 means 1.
	Weight float64
}

// Criterion says whether a trial succeeded: the mean of Metric over the trial's
// complete episodes is at least Min. A trial with no complete episode, or none
// that measured the metric, failed.
type Criterion struct {
	// Metric is "success" (the environment's success of an episode, 1 or 0: Entry.
	// Success), the name of one of the environment's metrics (Entry.Metrics), or
	// "return:AGENT" (the agent's episode return); "" means "success".
	Metric string
	// Min is the least mean that succeeds. For the success metric 0 means 1: every
	// complete episode of the trial succeeded.
	Min float64
}

// The defaults of a Promotion.
const (
	DefaultPromotionWindow    = 10
	DefaultPromotionThreshold = 0.8
)

// Promotion says when a BySuccess schedule changes task. The trials are cut into
// windows of Window consecutive trials (by trial index); every trial of a window plays
// the same task. When all the trials of a window have ended, their success rate
// decides the task of the next window: the next task when the rate is at least
// Threshold (the last task stays), the previous one when it is below Demote (the
// first task stays), else the same. So the task of trial i depends only on the
// trials before its window, in trial order, and a campaign gives the same tasks
// whatever its number of workers, at the cost of waiting at each window's end for
// the window's slowest trial.
type Promotion struct {
	// Window is how many trials each decision looks at; 0 means 10.
	Window int
	// Threshold is the success rate that promotes, in (0, 1]; 0 means 0.8.
	Threshold float64
	// Demote is the success rate below which the schedule goes back a task, in
	// [0, Threshold); 0 means never.
	Demote float64
}

// ErrSchedule is wrapped by every *ScheduleError.
var ErrSchedule = errors.New("runners: invalid schedule")

// ScheduleError is a problem of a schedule: of the schedule itself (Task -1) or of one
// of its tasks, with the JSON field concerned.
type ScheduleError struct {
	// Task is the task's index, -1 for the schedule itself; Name its name.
	Task int
	Name string
	// Field is the JSON field: "order", "tasks", "config", "policies.motion", ...
	Field string
	// Reason says what is wrong; Err is the underlying error, if any.
	Reason string
	Err    error
}

func (e *ScheduleError) Error() string {
	var b strings.Builder
	b.WriteString(ErrSchedule.Error())
	b.WriteString(": ")
	if e.Task >= 0 {
		fmt.Fprintf(&b, "task %d", e.Task)
		if e.Name != "" {
			fmt.Fprintf(&b, " (%s)", e.Name)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns ErrSchedule and the underlying error.
func (e *ScheduleError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSchedule, e.Err}
	}
	return []error{ErrSchedule}
}

// scheduleJSON is the JSON form of a Schedule.
type scheduleJSON struct {
	Order     *Order            `json:"order"`
	Trials    int               `json:"trials,omitempty"`
	Success   *criterionJSON    `json:"success,omitempty"`
	Promotion *promotionJSON    `json:"promotion,omitempty"`
	Tasks     []json.RawMessage `json:"tasks"`
}

type criterionJSON struct {
	Metric string   `json:"metric,omitempty"`
	Min    *float64 `json:"min,omitempty"`
}

type promotionJSON struct {
	Window      int     `json:"window,omitempty"`
	Threshold   float64 `json:"threshold,omitempty"`
	DemoteBelow float64 `json:"demote_below,omitempty"`
}

type taskJSON struct {
	Name     string            `json:"name,omitempty"`
	Env      string            `json:"env"`
	Config   json.RawMessage   `json:"config,omitempty"`
	Policies map[string]string `json:"policies,omitempty"`
	Trials   int               `json:"trials,omitempty"`
	Weight   float64           `json:"weight,omitempty"`
}

// ParseSchedule reads a schedule's JSON form, checks what needs no registry and
// returns every problem at once as *ScheduleError values (combined with multierr):
//
//	{
//	  "order": "success",            // in_order, random or success
//	  "trials": 60,                  // random and success: how many trials
//	  "success": {"metric": "success", "min": 1},
//	  "promotion": {"window": 5, "threshold": 0.8, "demote_below": 0.2},
//	  "tasks": [
//	    {"name": "5x5", "env": "maze", "config": {"generate": {"rows": 5, "cols": 5}},
//	     "policies": {"strategy": "oracle"}, "trials": 10, "weight": 1}
//	  ]
//	}
//
// Policies are registered policy names, as baton run's --policy takes them. Unknown
// fields are errors. NewCampaign checks the rest against its registry.
func ParseSchedule(data []byte) (Schedule, error) {
	var j scheduleJSON
	if err := registry.DecodeConfig(data, &j); err != nil {
		return Schedule{}, jsonError(-1, "", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Schedule{}, &ScheduleError{Task: -1, Reason: "empty: want a JSON object with order and tasks"}
	}
	s := Schedule{Trials: j.Trials}
	var errs []error
	if j.Order != nil {
		s.Order = *j.Order
	}
	if c := j.Success; c != nil {
		s.Success.Metric = c.Metric
		if c.Min != nil {
			s.Success.Min = *c.Min
			if *c.Min == 0 && (c.Metric == "" || c.Metric == "success") {
				errs = append(errs, &ScheduleError{Task: -1, Field: "success.min", Reason: "0 makes every trial a success; want more than 0"})
			}
		}
	}
	if p := j.Promotion; p != nil {
		s.Promotion = Promotion{Window: p.Window, Threshold: p.Threshold, Demote: p.DemoteBelow}
	}
	for k, raw := range j.Tasks {
		// Each task apart, so that an error names the task.
		var t taskJSON
		if err := registry.DecodeConfig(raw, &t); err != nil {
			var named struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &named)
			errs = append(errs, jsonError(k, named.Name, err))
			continue
		}
		task := Task{Name: t.Name, Env: t.Env, Config: t.Config, Trials: t.Trials, Weight: t.Weight}
		if string(bytes.TrimSpace(t.Config)) == "null" {
			task.Config = nil
		}
		if len(t.Policies) > 0 {
			task.Actors = make(map[string]Actor, len(t.Policies))
			for agent, policy := range t.Policies {
				task.Actors[agent] = Named(policy)
			}
		}
		s.Tasks = append(s.Tasks, task)
	}
	if len(errs) == 0 {
		errs = append(errs, s.check())
	}
	if err := multierr.Combine(errs...); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// JSON returns the schedule's JSON form, as ParseSchedule reads it, with its defaults
// written out: each task's name, the criterion's metric and least mean, and under
// BySuccess the promotion's window and threshold. A task's actor that is not a
// registered policy's name (Named) has no JSON form: a *ScheduleError.
func (s *Schedule) JSON() ([]byte, error) {
	least := s.Success.min()
	j := struct {
		Order     Order          `json:"order"`
		Trials    int            `json:"trials,omitempty"`
		Success   criterionJSON  `json:"success"`
		Promotion *promotionJSON `json:"promotion,omitempty"`
		Tasks     []taskJSON     `json:"tasks"`
	}{Order: s.Order, Trials: s.Trials, Success: criterionJSON{Metric: s.Success.metric(), Min: &least}}
	if s.Order == BySuccess {
		p := s.Promotion
		j.Promotion = &promotionJSON{Window: p.window(), Threshold: p.threshold(), DemoteBelow: p.Demote}
	}
	for k, t := range s.Tasks {
		tj := taskJSON{Name: t.taskName(k), Env: t.Env, Config: t.Config, Trials: t.Trials, Weight: t.Weight}
		for agent, a := range t.Actors {
			if a.Policy == "" || a.count() != 1 {
				return nil, &ScheduleError{Task: k, Name: tj.Name, Field: "policies." + agent, Reason: "not a registered policy's name: no JSON form"}
			}
			if tj.Policies == nil {
				tj.Policies = make(map[string]string, len(t.Actors))
			}
			tj.Policies[agent] = a.Policy
		}
		j.Tasks = append(j.Tasks, tj)
	}
	return json.Marshal(j)
}

// jsonError is the *ScheduleError of a JSON decoding error of the schedule (task -1)
// or of task k: a value of the wrong kind names its field.
func jsonError(k int, name string, err error) *ScheduleError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &ScheduleError{Task: k, Name: name, Field: te.Field, Reason: fmt.Sprintf("a JSON %s; want %s", te.Value, jsonKind(te.Type.Kind())), Err: err}
	}
	return &ScheduleError{Task: k, Name: name, Reason: err.Error(), Err: err}
}

// jsonKind says what JSON a Go kind takes.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return k.String()
}

// Validate reports the problems of the schedule that need no registry, every one as
// a *ScheduleError, combined with multierr.
func (s *Schedule) Validate() error { return s.check() }

func (s *Schedule) check() error {
	var errs []error
	bad := func(task int, name, field, format string, args ...any) {
		errs = append(errs, &ScheduleError{Task: task, Name: name, Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if s.Order != 0 && (s.Order < InOrder || s.Order > BySuccess) {
		bad(-1, "", "order", "%d: want in_order, random or success", int(s.Order))
	} else if s.Order == 0 {
		bad(-1, "", "order", "missing: want in_order, random or success")
	}
	if len(s.Tasks) == 0 {
		bad(-1, "", "tasks", "none: want at least one")
	}
	if s.Trials < 0 {
		bad(-1, "", "trials", "%d: want 0 or more", s.Trials)
	}
	sum := 0
	seen := map[string]int{}
	for k, t := range s.Tasks {
		name := t.taskName(k)
		if t.Env == "" {
			bad(k, name, "env", "missing: want a registered environment's name")
		}
		if j, ok := seen[name]; ok {
			bad(k, name, "name", "the same as task %d's", j)
		}
		seen[name] = k
		switch {
		case s.Order == InOrder && t.Trials < 1:
			bad(k, name, "trials", "%d: the in_order order wants 1 or more", t.Trials)
		case s.Order != InOrder && t.Trials != 0:
			bad(k, name, "trials", "%d: only the in_order order counts a task's trials", t.Trials)
		}
		sum += max(t.Trials, 0)
		if t.Weight < 0 || math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) {
			bad(k, name, "weight", "%v: want 0 (for 1) or more", t.Weight)
		} else if t.Weight != 0 && s.Order != AtRandom {
			bad(k, name, "weight", "%v: only the random order weighs tasks", t.Weight)
		}
		for agent, a := range t.Actors {
			if n := a.count(); n != 1 {
				bad(k, name, "policies."+agent, "the actor sets %d of Policy, Value and New; want exactly one", n)
			}
		}
	}
	if s.Order == InOrder && s.Trials != 0 && s.Trials != sum {
		bad(-1, "", "trials", "%d, but the tasks' trials add up to %d; leave it out", s.Trials, sum)
	}
	if c := s.Success; math.IsNaN(c.Min) || math.IsInf(c.Min, 0) {
		bad(-1, "", "success.min", "%v: want a finite number", c.Min)
	}
	p := s.Promotion
	if p != (Promotion{}) && s.Order != BySuccess {
		bad(-1, "", "promotion", "only the success order promotes")
	}
	if p.Window < 0 {
		bad(-1, "", "promotion.window", "%d: want 1 or more (0 for %d)", p.Window, DefaultPromotionWindow)
	}
	th := p.threshold()
	if !(th > 0 && th <= 1) {
		bad(-1, "", "promotion.threshold", "%v: want more than 0 and at most 1", p.Threshold)
	}
	if !(p.Demote >= 0 && p.Demote < th) {
		bad(-1, "", "promotion.demote_below", "%v: want 0 (never) or more, and less than the threshold %v", p.Demote, th)
	}
	return multierr.Combine(errs...)
}

func (t *Task) taskName(k int) string {
	if t.Name != "" {
		return t.Name
	}
	return "task-" + strconv.Itoa(k)
}

func (p Promotion) window() int {
	if p.Window == 0 {
		return DefaultPromotionWindow
	}
	return p.Window
}

func (p Promotion) threshold() float64 {
	if p.Threshold == 0 {
		return DefaultPromotionThreshold
	}
	return p.Threshold
}

func (c Criterion) metric() string {
	if c.Metric == "" {
		return "success"
	}
	return c.Metric
}

func (c Criterion) min() float64 {
	if c.Min == 0 && c.metric() == "success" {
		return 1
	}
	return c.Min
}

// ReturnMetricPrefix begins a Criterion's Metric that names an agent's episode
// return: "return:strategy".
const ReturnMetricPrefix = "return:"

// Succeeded reports whether a trial's result meets the criterion (see Criterion).
func (c Criterion) Succeeded(res *Result) bool {
	if res == nil || res.Info == nil {
		return false
	}
	metric, in := c.metric(), res.Info
	sum, n := 0.0, 0
	for _, ep := range res.Episodes {
		if !ep.Complete {
			continue
		}
		switch {
		case metric == "success":
			if !in.DefinesSuccess {
				return false
			}
			if ep.Success {
				sum++
			}
			n++
		case strings.HasPrefix(metric, ReturnMetricPrefix):
			name := strings.TrimPrefix(metric, ReturnMetricPrefix)
			for j, a := range in.Agents {
				if a.Name == name && j < len(ep.Returns) {
					sum += ep.Returns[j]
					n++
				}
			}
		default:
			for j, name := range in.Metrics {
				if name == metric && j < len(ep.Metrics) && !math.IsNaN(ep.Metrics[j]) {
					sum += ep.Metrics[j]
					n++
				}
			}
		}
	}
	return n > 0 && c.Meets(sum/float64(n))
}

// checkMetric reports whether the opened environment can measure the criterion.
func (c Criterion) checkMetric(o *opened) string {
	metric := c.metric()
	switch {
	case metric == "success":
		if o.entry.Success == nil {
			return fmt.Sprintf("%s defines no success; name one of its metrics or return:AGENT", o.entry.Name)
		}
	case strings.HasPrefix(metric, ReturnMetricPrefix):
		name := strings.TrimPrefix(metric, ReturnMetricPrefix)
		for _, n := range o.names {
			if n == name {
				return ""
			}
		}
		return fmt.Sprintf("%s has no agent %s; its agents: %s", o.entry.Name, name, strings.Join(o.names, ", "))
	default:
		names := metricNames(o.entry)
		for _, n := range names {
			if n == metric {
				return ""
			}
		}
		return fmt.Sprintf("%s measures no %s; want success, return:AGENT or one of its metrics (%s)", o.entry.Name, metric, strings.Join(names, ", "))
	}
	return ""
}

// scheduleSalt separates the draws of AtRandom from the trial's other seeds.
const scheduleSalt = 0x7363686564756c65 // "schedule"

// RandomTask returns the task that trial i of a campaign of seed seed plays under
// AtRandom with these weights (0 means 1): with u the top 53 bits of
// env.DeriveSeed(env.DeriveSeed(seed, i) ^ 0x7363686564756c65, 1) over 2^53, the first
// task whose cumulative weight exceeds u times the total. Python's baton.schedule
// calls it through the fast lane.
func RandomTask(weights []float64, seed uint64, i int) int {
	total := 0.0
	for _, w := range weights {
		total += weightOr1(w)
	}
	u := float64(env.DeriveSeed(env.DeriveSeed(seed, i)^scheduleSalt, 1)>>11) / (1 << 53)
	x, acc := u*total, 0.0
	for k, w := range weights {
		acc += weightOr1(w)
		if x < acc {
			return k
		}
	}
	return len(weights) - 1
}

func weightOr1(w float64) float64 {
	if w == 0 {
		return 1
	}
	return w
}

// scheduler picks the task of each trial of a scheduled campaign and, for BySuccess,
// learns which trials succeeded. Safe for concurrent use.
type scheduler struct {
	s       *Schedule
	seed    uint64
	trials  int
	weights []float64
	ends    []int // InOrder: the trial index after each task's last

	// BySuccess: the trials are cut into windows; window k plays task[k] once
	// ready[k] is closed.
	mu     sync.Mutex
	task   []int
	ready  []chan struct{}
	done   []int
	wins   []int
	window int
}

func newScheduler(s *Schedule, seed uint64, trials int) *scheduler {
	sc := &scheduler{s: s, seed: seed, trials: trials}
	sc.ends, sc.weights = s.ends(), s.weights()
	switch s.Order {
	case BySuccess:
		sc.window = s.Promotion.window()
		n := (trials + sc.window - 1) / sc.window
		sc.task, sc.done, sc.wins = make([]int, n), make([]int, n), make([]int, n)
		sc.ready = make([]chan struct{}, n)
		for k := range sc.ready {
			sc.ready[k] = make(chan struct{})
		}
		if n > 0 {
			close(sc.ready[0])
		}
	}
	return sc
}

// taskOf returns the task of trial i; under BySuccess it waits until the window
// before trial i's has been decided, or ctx is done.
func (sc *scheduler) taskOf(ctx context.Context, i int) (int, error) {
	if sc.s.Order != BySuccess {
		return fixedTask(sc.s.Order, sc.ends, sc.weights, sc.seed, i), nil
	}
	k := i / sc.window
	select {
	case <-sc.ready[k]:
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.task[k], nil
}

// fixedTask is the task of trial i under InOrder (ends holds the trial index after
// each task's last) and AtRandom, whose tasks do not depend on the trials' results.
func fixedTask(o Order, ends []int, weights []float64, seed uint64, i int) int {
	if o == AtRandom {
		return RandomTask(weights, seed, i)
	}
	for k, end := range ends {
		if i < end {
			return k
		}
	}
	return len(ends) - 1
}

// record tells a BySuccess scheduler whether trial i succeeded; the window's last
// trial decides the next window's task.
func (sc *scheduler) record(i int, success bool) {
	if sc.s.Order != BySuccess {
		return
	}
	k := i / sc.window
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.done[k]++
	if success {
		sc.wins[k]++
	}
	size := min(sc.window, sc.trials-k*sc.window)
	if sc.done[k] < size || k+1 >= len(sc.task) {
		return
	}
	sc.task[k+1] = Promote(sc.task[k], len(sc.s.Tasks), float64(sc.wins[k])/float64(size), sc.s.Promotion)
	close(sc.ready[k+1])
}

// ends returns, for InOrder, the trial index after each task's last; else nil.
func (s *Schedule) ends() []int {
	if s.Order != InOrder {
		return nil
	}
	out, end := make([]int, len(s.Tasks)), 0
	for k, t := range s.Tasks {
		end += t.Trials
		out[k] = end
	}
	return out
}

// weights returns, for AtRandom, the tasks' weights; else nil.
func (s *Schedule) weights() []float64 {
	if s.Order != AtRandom {
		return nil
	}
	out := make([]float64, len(s.Tasks))
	for k, t := range s.Tasks {
		out[k] = t.Weight
	}
	return out
}

// TrialCount returns how many trials the schedule runs in a campaign of n trials
// (WithTrials): the sum of the tasks' Trials under InOrder, else Trials, or n when
// Trials is 0. 0 means no bound, for a loop that records trials as long as it runs.
func (s *Schedule) TrialCount(n int) int {
	switch {
	case s.Order == InOrder:
		sum := 0
		for _, t := range s.Tasks {
			sum += t.Trials
		}
		return sum
	case s.Trials > 0:
		return s.Trials
	}
	return n
}

// Position is where a schedule taken one trial at a time stands: the trial about to
// be played, its task (an index into Tasks) and, under BySuccess, how many trials of
// the current window succeeded so far. Start and Next move it by the rules a campaign
// follows (see Schedule), for a loop that is not a campaign and records its trials
// in trial order: Python's baton.schedule.Scheduler drives one through the fast lane.
type Position struct {
	Trial, Task, Wins int
}

// Start returns the position of trial 0 of a campaign of seed seed.
func (s *Schedule) Start(seed uint64) Position {
	if s.Order == BySuccess {
		return Position{}
	}
	return Position{Task: fixedTask(s.Order, s.ends(), s.weights(), seed, 0)}
}

// Next returns the position after trial p.Trial, whose result was success: under
// BySuccess the window's last trial decides the next window's task (Promote over
// the window's success rate), under the other orders trial p.Trial+1 has its own task.
func (s *Schedule) Next(p Position, seed uint64, success bool) Position {
	p.Trial++
	if s.Order != BySuccess {
		p.Task = fixedTask(s.Order, s.ends(), s.weights(), seed, p.Trial)
		return p
	}
	if success {
		p.Wins++
	}
	if w := s.Promotion.window(); p.Trial%w == 0 {
		p.Task = Promote(p.Task, len(s.Tasks), float64(p.Wins)/float64(w), s.Promotion)
		p.Wins = 0
	}
	return p
}

// Meets reports whether a trial whose mean metric is mean succeeded: mean is at least
// the criterion's Min (1 for the success metric when Min is 0); NaN never does.
func (c Criterion) Meets(mean float64) bool { return mean >= c.min() }

// Promote returns the task that follows task cur (of n) after a window whose success
// rate was rate, under p: cur+1 when rate is at least the threshold, cur-1 when it
// is below p.Demote, else cur, within [0, n).
func Promote(cur, n int, rate float64, p Promotion) int {
	switch {
	case rate >= p.threshold():
		return min(cur+1, n-1)
	case p.Demote > 0 && rate < p.Demote:
		return max(cur-1, 0)
	}
	return cur
}

// TaskSummary sums up the trials of one task of a scheduled campaign.
type TaskSummary struct {
	Name string `json:"name"`
	Env  string `json:"env"`
	// Trials counts the task's trials run; Successes those that met the schedule's
	// Criterion, and SuccessRate is Successes / Trials (0 for no trial).
	Trials      int     `json:"trials"`
	Successes   int     `json:"successes"`
	SuccessRate float64 `json:"success_rate"`
	// Episodes and EnvSteps count the complete episodes and the environment steps of
	// the task's trials.
	Episodes int   `json:"episodes"`
	EnvSteps int64 `json:"env_steps"`
	// First and Last are the indices of its first and last trial; -1 when none ran.
	First int `json:"first"`
	Last  int `json:"last"`
}

// TaskRun is a run of consecutive trials (by index) that played the same task.
type TaskRun struct {
	Task   string `json:"task"`
	First  int    `json:"first"`
	Trials int    `json:"trials"`
}

// summarizeTasks sums up the trials of a scheduled campaign by task.
func (s *Schedule) summarizeTasks(results []Result, ran []bool, tasks []int, wins []bool) ([]TaskSummary, []TaskRun) {
	out := make([]TaskSummary, len(s.Tasks))
	for k := range s.Tasks {
		out[k] = TaskSummary{Name: s.Tasks[k].taskName(k), Env: s.Tasks[k].Env, First: -1, Last: -1}
	}
	var runs []TaskRun
	for i := range results {
		if !ran[i] {
			continue
		}
		t := &out[tasks[i]]
		t.Trials++
		if wins[i] {
			t.Successes++
		}
		t.EnvSteps += results[i].Steps
		for _, ep := range results[i].Episodes {
			if ep.Complete {
				t.Episodes++
			}
		}
		if t.First < 0 {
			t.First = i
		}
		t.Last = i
		if n := len(runs); n > 0 && runs[n-1].Task == t.Name && runs[n-1].First+runs[n-1].Trials == i {
			runs[n-1].Trials++
		} else {
			runs = append(runs, TaskRun{Task: t.Name, First: i, Trials: 1})
		}
	}
	for k := range out {
		if out[k].Trials > 0 {
			out[k].SuccessRate = float64(out[k].Successes) / float64(out[k].Trials)
		}
	}
	return out, runs
}
