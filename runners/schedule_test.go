package runners_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// counterTask is a task of the counter environment whose agent plays policy: "zero"
// fails every episode, "one" and "two" succeed.
func counterTask(name, policy string) runners.Task {
	return runners.Task{Name: name, Env: "counter", Actors: map[string]runners.Actor{"counter": runners.Named(policy)}}
}

// runSchedule runs a scheduled campaign and returns its summary and each trial's task
// as the sink saw it, in trial order.
func runSchedule(t *testing.T, s runners.Schedule, workers, trials int) (runners.Summary, []string) {
	t.Helper()
	rec := newRecorder()
	c, err := runners.NewCampaign(testRegistry(t), runners.Spec{Seed: 7}, runners.WithSchedule(s),
		runners.WithWorkers(workers), runners.WithTrials(trials), runners.WithSinks(rec))
	require.NoError(t, err)
	sum, err := c.Run(t.Context())
	require.NoError(t, err)
	tasks := make([]string, c.Trials())
	for i := range tasks {
		for _, e := range rec.events(trialName(i)) {
			if e.Kind == event.KindState && e.State.Info != nil {
				tasks[i] = e.State.Info.Task
			}
		}
	}
	return sum, tasks
}

func trialName(i int) string { return "counter-" + strconv.Itoa(i) }

// expand turns runs into one task name per trial.
func expand(runs []runners.TaskRun) []string {
	var out []string
	for _, r := range runs {
		for range r.Trials {
			out = append(out, r.Task)
		}
	}
	return out
}

func TestScheduleOrders(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b, c := counterTask("a", "one"), counterTask("b", "zero"), counterTask("c", "two")
	rep := func(name string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = name
		}
		return out
	}
	cat := func(xs ...[]string) []string {
		var out []string
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	withTrials := func(t runners.Task, n int) runners.Task { t.Trials = n; return t }
	tests := []struct {
		name   string
		s      runners.Schedule
		trials int
		want   []string
	}{
		{"in order", runners.Schedule{Order: runners.InOrder, Tasks: []runners.Task{withTrials(a, 2), withTrials(b, 3), withTrials(c, 1)}},
			0, cat(rep("a", 2), rep("b", 3), rep("c", 1))},
		{"promoted by success, stuck on a failing task", runners.Schedule{Order: runners.BySuccess, Trials: 12,
			Promotion: runners.Promotion{Window: 3, Threshold: 1}, Tasks: []runners.Task{a, b, c}},
			0, cat(rep("a", 3), rep("b", 9))},
		{"promoted then demoted", runners.Schedule{Order: runners.BySuccess,
			Promotion: runners.Promotion{Window: 2, Threshold: 0.5, Demote: 0.4}, Tasks: []runners.Task{a, b, c}},
			9, cat(rep("a", 2), rep("b", 2), rep("a", 2), rep("b", 2), rep("a", 1))},
		{"promoted to the last task, which stays", runners.Schedule{Order: runners.BySuccess, Trials: 7,
			Promotion: runners.Promotion{Window: 2}, Tasks: []runners.Task{a, c}},
			0, cat(rep("a", 2), rep("c", 5))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, workers := range []int{1, 4} {
				sum, tasks := runSchedule(t, tt.s, workers, tt.trials)
				assert.Equal(t, tt.want, tasks, "workers %d: the tasks the trials played", workers)
				assert.Equal(t, tt.want, expand(sum.Runs), "workers %d: the runs", workers)
			}
			// Taken one trial at a time (Start, Next), as Python's baton.schedule
			// does, the schedule gives the campaign's tasks: task b fails, a and c
			// succeed.
			n := tt.s.TrialCount(tt.trials)
			require.Len(t, tt.want, n)
			var taken []string
			for p := tt.s.Start(7); p.Trial < n; {
				name := tt.s.Tasks[p.Task].Name
				taken = append(taken, name)
				p = tt.s.Next(p, 7, name != "b")
			}
			assert.Equal(t, tt.want, taken, "one trial at a time")
		})
	}
}

func TestScheduleRandomOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := counterTask("a", "one"), counterTask("b", "zero")
	a.Weight, b.Weight = 3, 1
	s := runners.Schedule{Order: runners.AtRandom, Trials: 200, Tasks: []runners.Task{a, b}}
	sum1, tasks1 := runSchedule(t, s, 1, 0)
	_, tasks4 := runSchedule(t, s, 4, 0)
	require.Equal(t, tasks1, tasks4, "the same seed draws the same tasks whatever the workers")
	for i, name := range tasks1 {
		require.Equal(t, []string{"a", "b"}[runners.RandomTask([]float64{3, 1}, 7, i)], name, "trial %d", i)
	}
	require.Len(t, sum1.Tasks, 2)
	assert.InDelta(t, 0.75, float64(sum1.Tasks[0].Trials)/200, 0.08, "task a's share follows its weight")
	assert.Equal(t, 200, sum1.Tasks[0].Trials+sum1.Tasks[1].Trials)
	assert.Equal(t, 1.0, sum1.Tasks[0].SuccessRate)
	assert.Equal(t, 0.0, sum1.Tasks[1].SuccessRate)
	_, other := runSchedule(t, runners.Schedule{Order: runners.AtRandom, Trials: 200, Tasks: []runners.Task{a, b}}, 2, 0)
	assert.Equal(t, tasks1, other)
}

func TestScheduleSummary(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := counterTask("a", "one"), counterTask("b", "zero")
	a.Trials, b.Trials = 2, 3
	sum, _ := runSchedule(t, runners.Schedule{Order: runners.InOrder, Tasks: []runners.Task{a, b}}, 2, 0)
	assert.Equal(t, 5, sum.Trials)
	assert.Equal(t, "counter", sum.Env)
	assert.Equal(t, []runners.TaskSummary{
		{Name: "a", Env: "counter", Trials: 2, Successes: 2, SuccessRate: 1, Episodes: 2, EnvSteps: 8, First: 0, Last: 1},
		{Name: "b", Env: "counter", Trials: 3, Successes: 0, SuccessRate: 0, Episodes: 3, EnvSteps: 12, First: 2, Last: 4},
	}, sum.Tasks)
	assert.Equal(t, []runners.TaskRun{{Task: "a", First: 0, Trials: 2}, {Task: "b", First: 2, Trials: 3}}, sum.Runs)
}

func TestScheduleCriterion(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name      string
		criterion runners.Criterion
		policy    string
		want      int // successes of 4 trials
	}{
		{"success, by default", runners.Criterion{}, "one", 4},
		{"success fails", runners.Criterion{}, "zero", 0},
		{"return at least", runners.Criterion{Metric: "return:counter", Min: 8}, "two", 4},
		{"return below", runners.Criterion{Metric: "return:counter", Min: 8}, "one", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := counterTask("t", tt.policy)
			task.Trials = 4
			sum, _ := runSchedule(t, runners.Schedule{Order: runners.InOrder, Success: tt.criterion, Tasks: []runners.Task{task}}, 1, 0)
			assert.Equal(t, tt.want, sum.Tasks[0].Successes)
		})
	}
}

func TestPromote(t *testing.T) {
	p := runners.Promotion{Threshold: 0.8, Demote: 0.3}
	tests := []struct {
		cur  int
		rate float64
		want int
	}{
		{0, 0.8, 1}, {1, 1, 2}, {2, 1, 2}, {1, 0.5, 1}, {1, 0.2, 0}, {0, 0, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runners.Promote(tt.cur, 3, tt.rate, p), "task %d at rate %v", tt.cur, tt.rate)
	}
	assert.Equal(t, 1, runners.Promote(1, 3, 0, runners.Promotion{}), "no demotion by default")
	assert.Equal(t, 1, runners.Promote(0, 3, 0.8, runners.Promotion{}), "the default threshold is 0.8")
}

func TestParseSchedule(t *testing.T) {
	s, err := runners.ParseSchedule([]byte(`{
		"order": "success", "trials": 30,
		"success": {"metric": "return:counter", "min": 2},
		"promotion": {"window": 5, "threshold": 0.9, "demote_below": 0.1},
		"tasks": [
			{"name": "easy", "env": "counter", "config": {"length": 2}, "policies": {"counter": "one"}},
			{"env": "counter", "config": null}
		]}`))
	require.NoError(t, err)
	assert.Equal(t, runners.BySuccess, s.Order)
	assert.Equal(t, 30, s.Trials)
	assert.Equal(t, runners.Criterion{Metric: "return:counter", Min: 2}, s.Success)
	assert.Equal(t, runners.Promotion{Window: 5, Threshold: 0.9, Demote: 0.1}, s.Promotion)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, "easy", s.Tasks[0].Name)
	assert.JSONEq(t, `{"length": 2}`, string(s.Tasks[0].Config))
	assert.Equal(t, map[string]runners.Actor{"counter": runners.Named("one")}, s.Tasks[0].Actors)
	assert.Nil(t, s.Tasks[1].Config)
	assert.Nil(t, s.Tasks[1].Actors)
}

func TestScheduleJSON(t *testing.T) {
	in := []byte(`{"order": "success", "trials": 30,
		"tasks": [{"name": "easy", "env": "counter", "config": {"length": 2}, "policies": {"counter": "one"}},
			{"env": "counter"}]}`)
	s, err := runners.ParseSchedule(in)
	require.NoError(t, err)
	out, err := s.JSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"order": "success", "trials": 30, "success": {"metric": "success", "min": 1},
		"promotion": {"window": 10, "threshold": 0.8},
		"tasks": [{"name": "easy", "env": "counter", "config": {"length": 2}, "policies": {"counter": "one"}},
			{"name": "task-1", "env": "counter"}]}`, string(out), "the defaults written out")
	again, err := runners.ParseSchedule(out)
	require.NoError(t, err, "ParseSchedule reads what JSON writes")
	out2, err := again.JSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(out), string(out2))

	r, err := runners.ParseSchedule([]byte(`{"order": "random", "success": {"metric": "return:counter"},
		"tasks": [{"env": "counter", "weight": 2}]}`))
	require.NoError(t, err)
	out, err = r.JSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"order": "random", "success": {"metric": "return:counter", "min": 0},
		"tasks": [{"name": "task-0", "env": "counter", "weight": 2}]}`, string(out), "no promotion but under success")

	bad := runners.Schedule{Order: runners.InOrder, Tasks: []runners.Task{{Env: "counter", Trials: 1,
		Actors: map[string]runners.Actor{"counter": runners.Value(agent.PolicyFunc(nil))}}}}
	_, err = bad.JSON()
	var se *runners.ScheduleError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "policies.counter", se.Field)
}

func TestScheduleTrialCount(t *testing.T) {
	one := runners.Task{Env: "counter", Trials: 2}
	tests := []struct {
		s    runners.Schedule
		n    int
		want int
	}{
		{runners.Schedule{Order: runners.InOrder, Tasks: []runners.Task{one, one}}, 100, 4},
		{runners.Schedule{Order: runners.AtRandom, Trials: 30}, 100, 30},
		{runners.Schedule{Order: runners.BySuccess}, 100, 100},
		{runners.Schedule{Order: runners.BySuccess}, 0, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.s.TrialCount(tt.n), "%+v", tt.s)
	}
}

func TestScheduleErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string // each a *ScheduleError message (all are reported)
	}{
		{"not JSON", `{"order": `, []string{"runners: invalid schedule: unexpected EOF"}},
		{"unknown field", `{"order": "in_order", "colour": 1, "tasks": [{"env": "counter", "trials": 1}]}`,
			[]string{`runners: invalid schedule: json: unknown field "colour"`}},
		{"task fields of the wrong kind", `{"order": "in_order", "tasks": [{"env": "counter", "trials": 1, "colour": 1}, {"name": "b", "env": "counter", "trials": "two"}]}`,
			[]string{`runners: invalid schedule: task 0: json: unknown field "colour"`,
				`runners: invalid schedule: task 1 (b): trials: a JSON string; want a whole number`}},
		{"schedule field of the wrong kind", `{"order": "random", "trials": 2.5, "promotion": [], "tasks": [{"env": "counter"}]}`,
			[]string{`runners: invalid schedule: trials: a JSON number 2.5; want a whole number`}},
		{"no order, no task", `{"tasks": []}`, []string{
			"runners: invalid schedule: order: missing: want in_order, random or success",
			"runners: invalid schedule: tasks: none: want at least one"}},
		{"bad order", `{"order": "sideways", "tasks": [{"env": "counter"}]}`,
			[]string{`runners: invalid schedule: order "sideways": want in_order, random or success`}},
		{"task fields", `{"order": "in_order", "tasks": [{"name": "a", "env": "counter", "trials": 0, "weight": 2}, {"name": "a", "trials": 1}]}`, []string{
			"runners: invalid schedule: task 0 (a): trials: 0: the in_order order wants 1 or more",
			"runners: invalid schedule: task 0 (a): weight: 2: only the random order weighs tasks",
			"runners: invalid schedule: task 1 (a): env: missing: want a registered environment's name",
			"runners: invalid schedule: task 1 (a): name: the same as task 0's"}},
		{"trials of a task under success", `{"order": "success", "tasks": [{"env": "counter", "trials": 3}]}`,
			[]string{"runners: invalid schedule: task 0 (task-0): trials: 3: only the in_order order counts a task's trials"}},
		{"promotion", `{"order": "success", "promotion": {"window": -1, "threshold": 1.5, "demote_below": 2}, "tasks": [{"env": "counter"}]}`, []string{
			"runners: invalid schedule: promotion.window: -1: want 1 or more (0 for 10)",
			"runners: invalid schedule: promotion.threshold: 1.5: want more than 0 and at most 1",
			"runners: invalid schedule: promotion.demote_below: 2: want 0 (never) or more, and less than the threshold 1.5"}},
		{"promotion without success order", `{"order": "random", "promotion": {"window": 3}, "tasks": [{"env": "counter"}]}`,
			[]string{"runners: invalid schedule: promotion: only the success order promotes"}},
		{"success min 0", `{"order": "random", "success": {"min": 0}, "tasks": [{"env": "counter"}]}`,
			[]string{"runners: invalid schedule: success.min: 0 makes every trial a success; want more than 0"}},
		{"in order trials disagree", `{"order": "in_order", "trials": 5, "tasks": [{"env": "counter", "trials": 2}]}`,
			[]string{"runners: invalid schedule: trials: 5, but the tasks' trials add up to 2; leave it out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runners.ParseSchedule([]byte(tt.json))
			require.ErrorIs(t, err, runners.ErrSchedule)
			var got []string
			for _, e := range multierrErrors(err) {
				var se *runners.ScheduleError
				require.ErrorAs(t, e, &se)
				got = append(got, e.Error())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// multierrErrors splits a multierr combination (or returns err alone).
func multierrErrors(err error) []error {
	if m, ok := err.(interface{ Errors() []error }); ok {
		return m.Errors()
	}
	return []error{err}
}

func TestScheduleRegistryErrors(t *testing.T) {
	s, err := runners.ParseSchedule([]byte(`{"order": "random", "trials": 3, "success": {"metric": "coverage", "min": 0.5}, "tasks": [
		{"name": "nowhere", "env": "mars"},
		{"name": "bad config", "env": "counter", "config": {"length": "long"}},
		{"name": "bad agent", "env": "counter", "policies": {"pilot": "one"}},
		{"name": "bad policy", "env": "counter", "policies": {"counter": "three"}},
		{"name": "fine", "env": "counter"}]}`))
	require.NoError(t, err)
	_, err = runners.NewCampaign(testRegistry(t), runners.Spec{}, runners.WithSchedule(s))
	require.ErrorIs(t, err, runners.ErrSchedule)
	var fields []string
	for _, e := range multierrErrors(err) {
		var se *runners.ScheduleError
		require.ErrorAs(t, e, &se)
		fields = append(fields, se.Name+": "+se.Field)
	}
	assert.Equal(t, []string{"nowhere: env", "bad config: config", "bad agent: policies", "bad policy: policies", "fine: success.metric"}, fields)
	var ne *registry.NameError
	require.ErrorAs(t, err, &ne, "the registry's error stays reachable")
	assert.ErrorIs(t, err, runners.ErrEnvConfig)

	_, err = runners.NewCampaign(testRegistry(t), runners.Spec{Env: "counter"}, runners.WithSchedule(runners.Schedule{Order: runners.AtRandom, Tasks: []runners.Task{counterTask("a", "one")}}))
	require.ErrorIs(t, err, runners.ErrInvalidSpec, "a scheduled spec names no environment")
}

func TestScheduleCancelledWhileWaiting(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(t.Context())
	// The window's first trial cancels the campaign: the other workers wait for the
	// window to be decided, and must give up.
	slow := counterTask("a", "one")
	slow.Actors = map[string]runners.Actor{"counter": runners.Value(cancelling(cancel))}
	c, err := runners.NewCampaign(testRegistry(t), runners.Spec{}, runners.WithWorkers(3), runners.WithSchedule(runners.Schedule{
		Order: runners.BySuccess, Trials: 6, Promotion: runners.Promotion{Window: 1}, Tasks: []runners.Task{slow}}))
	require.NoError(t, err)
	sum, err := c.Run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Positive(t, sum.Stopped)
	assert.LessOrEqual(t, sum.Trials, 6)
}

// cancelling is a policy that cancels the campaign on its first call, then fails.
func cancelling(cancel context.CancelFunc) *cancelPolicy { return &cancelPolicy{cancel: cancel} }

type cancelPolicy struct{ cancel context.CancelFunc }

var errCancelled = errors.New("cancelled")

func (p *cancelPolicy) Act(ctx context.Context, _ []float32, _ []bool) (agent.RawAction, error) {
	p.cancel()
	<-ctx.Done()
	return agent.RawAction{}, errCancelled
}

// RandomTask's draws are fixed: the Python baton.schedule.random_task checks the same
// values (python/tests/test_schedule.py).
func TestRandomTaskGolden(t *testing.T) {
	var got []int
	for i := range 24 {
		got = append(got, runners.RandomTask([]float64{1, 2, 0.5, 0}, 7, i))
	}
	assert.Equal(t, []int{2, 1, 1, 1, 3, 1, 1, 1, 1, 0, 3, 3, 1, 3, 0, 1, 3, 1, 1, 3, 0, 1, 1, 3}, got)
	got = nil
	for i := range 12 {
		got = append(got, runners.RandomTask([]float64{3, 1}, 18446744073709551615, i))
	}
	assert.Equal(t, []int{0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0}, got)
}

func TestCriterionMeets(t *testing.T) {
	assert.True(t, runners.Criterion{}.Meets(1))
	assert.False(t, runners.Criterion{}.Meets(0.99), "the success metric's min is 1")
	assert.True(t, runners.Criterion{Metric: "return:a"}.Meets(0))
	assert.False(t, runners.Criterion{Metric: "return:a", Min: 0.5}.Meets(math.NaN()))
}

func TestCriterionSucceeded(t *testing.T) {
	info := &event.TrialInfo{DefinesSuccess: true, Metrics: []string{"coverage", "defects"},
		Agents: []env.Spec{{Name: "strategy"}, {Name: "motion"}}}
	ep := func(success bool, coverage, ret float64) runners.EpisodeResult {
		return runners.EpisodeResult{Complete: true, Success: success, Metrics: []float64{coverage, math.NaN()}, Returns: []float64{ret, 0}}
	}
	two := &runners.Result{Info: info, Episodes: []runners.EpisodeResult{ep(true, 0.6, 1), ep(false, 0.8, 3),
		{Complete: false, Success: true, Metrics: []float64{0, 0}, Returns: []float64{-100, 0}}}}
	tests := []struct {
		name string
		c    runners.Criterion
		res  *runners.Result
		want bool
	}{
		{"success of every episode, by default", runners.Criterion{}, two, false},
		{"success of half", runners.Criterion{Min: 0.5}, two, true},
		{"a metric's mean", runners.Criterion{Metric: "coverage", Min: 0.7}, two, true},
		{"a metric's mean below", runners.Criterion{Metric: "coverage", Min: 0.71}, two, false},
		{"a metric no episode measured", runners.Criterion{Metric: "defects", Min: -1}, two, false},
		{"an agent's return", runners.Criterion{Metric: "return:strategy", Min: 2}, two, true},
		{"an unknown agent", runners.Criterion{Metric: "return:pilot", Min: -1}, two, false},
		{"no complete episode", runners.Criterion{Min: 0.5}, &runners.Result{Info: info}, false},
		{"a rejected trial", runners.Criterion{Min: 0.5}, &runners.Result{}, false},
		{"no success defined", runners.Criterion{Min: 0.5}, &runners.Result{Info: &event.TrialInfo{}, Episodes: two.Episodes}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.c.Succeeded(tt.res))
		})
	}
}
