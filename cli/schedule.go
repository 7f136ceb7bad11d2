package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// readSchedule reads and checks the schedule of baton run --schedule: its JSON, and
// every task against the registry, so that a problem of any task is a usage error
// naming the task and the field.
func readSchedule(envs *environments, f runFlags) (*runners.Schedule, error) {
	var bad []string
	if f.envConfig != "" {
		bad = append(bad, "--env-config: the schedule's tasks give the configurations")
	}
	if len(f.policies) > 0 {
		bad = append(bad, "--policy: the schedule's tasks give the policies")
	}
	if len(bad) > 0 {
		return nil, usagef("--schedule %s: %s", f.schedule, strings.Join(bad, "; "))
	}
	data, err := registry.ReadConfigFile("--schedule", f.schedule)
	if err != nil {
		return nil, usageErr(err)
	}
	s, err := runners.ParseSchedule(data)
	if err != nil {
		return nil, scheduleUsage(f.schedule, err)
	}
	// Every task checked against the registry before anything else opens one.
	if _, err := runners.NewCampaign(envs.reg, runners.Spec{MaxTicks: f.maxTicks}, runners.WithSchedule(s)); err != nil {
		if errors.Is(err, runners.ErrSchedule) || errors.Is(err, runners.ErrInvalidSpec) {
			return nil, scheduleUsage(f.schedule, err)
		}
		return nil, err
	}
	switch {
	case s.Order == runners.InOrder && f.trialsSet:
		return nil, usagef("--schedule %s: --trials: the in_order order plays each task for its own trials", f.schedule)
	case s.Trials > 0 && f.trialsSet && s.Trials != f.trials:
		return nil, usagef("--schedule %s: --trials %d, but the schedule runs %d trials", f.schedule, f.trials, s.Trials)
	}
	return &s, nil
}

// scheduleUsage is the usage error of the problems of a schedule file: each
// *runners.ScheduleError without the package prefix, on one line.
func scheduleUsage(file string, err error) error {
	errs := []error{err}
	if m, ok := err.(interface{ Errors() []error }); ok { // several, combined by multierr
		errs = m.Errors()
	}
	var parts []string
	for _, e := range errs {
		parts = append(parts, strings.TrimPrefix(e.Error(), "runners: "))
	}
	return &usageError{msg: "--schedule " + file + ": " + strings.Join(parts, "; "), err: err}
}

// scheduleTrials is how many trials a schedule runs: its own count, or the --trials
// flag for an order that takes it.
func scheduleTrials(s *runners.Schedule, flag int) int {
	if s.Order == runners.InOrder {
		n := 0
		for _, t := range s.Tasks {
			n += t.Trials
		}
		return n
	}
	if s.Trials > 0 {
		return s.Trials
	}
	return flag
}

// taskPolicies are a task's policies as --policy flags.
func taskPolicies(t runners.Task) []string {
	var out []string
	for agent, a := range t.Actors {
		out = append(out, agent+"="+a.Policy)
	}
	slices.Sort(out)
	return out
}

// scheduleSummary is the schedule part of baton run's summary.
type scheduleSummary struct {
	File  string `json:"file"`
	Order string `json:"order"`
	// Success is the criterion of a trial's success: the metric and its least mean.
	Success struct {
		Metric string  `json:"metric"`
		Min    float64 `json:"min"`
	} `json:"success"`
	// Tasks sums up each task, in the schedule's order; Runs lists the tasks in the
	// order the trials took them.
	Tasks []taskSummary     `json:"tasks"`
	Runs  []runners.TaskRun `json:"runs"`
}

// taskSummary is a task of the schedule: what it is and what its trials did.
type taskSummary struct {
	runners.TaskSummary
	Config   json.RawMessage   `json:"config,omitempty"`
	Policies map[string]string `json:"policies"`
}

func newScheduleSummary(envs *environments, f runFlags, s *runners.Schedule, sum runners.Summary) (*scheduleSummary, error) {
	out := &scheduleSummary{File: f.schedule, Order: s.Order.String(), Runs: sum.Runs}
	out.Success.Metric, out.Success.Min = s.Success.Metric, s.Success.Min
	if out.Success.Metric == "" {
		out.Success.Metric = "success"
	}
	if out.Success.Min == 0 && out.Success.Metric == "success" {
		out.Success.Min = 1
	}
	if out.Runs == nil {
		out.Runs = []runners.TaskRun{}
	}
	for k, t := range s.Tasks {
		o, err := envs.open(t.Env, t.Config, f.maxTicks)
		if err != nil {
			return nil, err
		}
		policies, err := choosePolicies(o, taskPolicies(t))
		if err != nil {
			return nil, err
		}
		ts := taskSummary{Config: t.Config, Policies: map[string]string{}}
		if k < len(sum.Tasks) {
			ts.TaskSummary = sum.Tasks[k]
		}
		for i, a := range o.agents {
			ts.Policies[a.Name] = policies[i]
		}
		out.Tasks = append(out.Tasks, ts)
	}
	if len(out.Tasks) != len(s.Tasks) {
		return nil, errors.New("the schedule's summary lost a task")
	}
	return out, nil
}

// writeText adds the schedule's tasks and runs to baton run's text summary.
func (s *scheduleSummary) writeText(b *strings.Builder) {
	b.WriteString("\n")
	tw := newTable(b, 2)
	fmt.Fprintf(tw, "%s\t%8s\t%9s\t%8s\t%s\n", "task", "trials", "successes", "rate", "trials of")
	for _, t := range s.Tasks {
		span := "-"
		if t.Trials > 0 {
			span = fmt.Sprintf("%d-%d", t.First, t.Last)
		}
		fmt.Fprintf(tw, "%s\t%8s\t%9s\t%8.3f\t%s\n", t.Name, group(int64(t.Trials)), group(int64(t.Successes)), t.SuccessRate, span)
	}
	tw.Flush()
	runs := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		runs[i] = fmt.Sprintf("%s x%d", r.Task, r.Trials)
	}
	fmt.Fprintf(b, "(schedule %s, order %s; a trial succeeds when its mean %s is at least %g)\n", s.File, s.Order, s.Success.Metric, s.Success.Min)
	fmt.Fprintf(b, "%-14s %s\n", "tasks taken", strings.Join(runs, ", "))
}
