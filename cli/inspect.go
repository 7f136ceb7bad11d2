package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/stat"
)

func newInspect() *cobra.Command {
	var (
		asJSON bool
		plotTo string
	)
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "Sum up an activity log: rows, episodes and returns per agent, success rate",
		Long: `inspect reads the activity log in DIR (as "baton run ENV --log DIR" writes it) and
prints its trials, complete episodes and rows, the success rate where the environment
defines success, and for each agent its rows (one per step it was reported in), the
complete episodes it played and its episode return over them: mean, standard deviation
(population), minimum and maximum. An episode's return is the sum of every reward of the
agent in the episode, from every source, retroactive rewards included: the figures are
those of the summary of the "baton run" that wrote the log.

--plot FILE.png draws each agent's episode return over the episodes (in trial order),
with a moving mean, one panel per agent. With --json, stdout holds one JSON object.`,
		Example: "  baton inspect runs/maze\n  baton inspect runs/maze --plot returns.png\n  baton inspect runs/maze --json",
		Args:    oneLog("inspect"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return inspect(args[0], asJSON, plotTo, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.BoolVar(&asJSON, "json", false, "print the figures as one JSON object")
	fl.StringVar(&plotTo, "plot", "", "draw each agent's episode return over the episodes into `FILE.png`")
	return cmd
}

func inspect(dir string, asJSON bool, plotTo string, w io.Writer) error {
	if plotTo != "" && !strings.EqualFold(filepath.Ext(plotTo), ".png") {
		return usagef("--plot %s: want a file name ending in .png", plotTo)
	}
	l, err := openLog("inspect", dir)
	if err != nil {
		return err
	}
	s, err := summarizeLog(l)
	if err != nil {
		return logError("inspect", dir, err)
	}
	if plotTo != "" {
		if err := plotReturns(plotTo, s); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(s)
	}
	return s.writeText(w, plotTo)
}

// logSummary is what baton inspect prints; see the package documentation for its
// JSON form.
type logSummary struct {
	Dir         string                  `json:"dir"`
	Envs        []string                `json:"envs"`
	Trials      int                     `json:"trials"`
	Ended       int                     `json:"ended"`
	Stopped     int                     `json:"stopped"`
	Failed      int                     `json:"failed"`
	Unfinished  int                     `json:"unfinished"`
	Episodes    int                     `json:"episodes"`
	Rows        int64                   `json:"rows"`
	Parts       int                     `json:"parts"`
	Bytes       int64                   `json:"bytes"`
	Successes   *int                    `json:"successes"`
	SuccessRate *rate                   `json:"success_rate"`
	Agents      map[string]agentLogStat `json:"agents"`
	Metrics     map[string]metricStat   `json:"metrics"`
	// Tasks sums up the trials of each task of a schedule (baton run --schedule), in
	// the order of their first trial; absent for a log without tasks.
	Tasks []taskLogStat `json:"tasks,omitempty"`

	agentOrder, metricOrder []string
	// series holds each agent's episode returns in trial order, for the plot;
	// metricSeries each metric's values.
	series, metricSeries map[string][]float64
	// footerless counts the parts without a footer (their writer was killed).
	footerless int
}

// taskLogStat is a schedule's task's figures in a log: its trials, their complete
// episodes and, where the environment defines success, the successful ones; First and
// Last are the campaign indices of its first and last trial.
type taskLogStat struct {
	Name        string `json:"name"`
	Trials      int    `json:"trials"`
	Episodes    int    `json:"episodes"`
	Successes   *int   `json:"successes"`
	SuccessRate *rate  `json:"success_rate"`
	First       int    `json:"first"`
	Last        int    `json:"last"`
}

// agentLogStat is an agent's figures in a log.
type agentLogStat struct {
	Rows     int64       `json:"rows"`
	Episodes int         `json:"episodes"`
	Return   returnStats `json:"return"`
}

// metricStat is an environment metric's figures over the complete episodes that
// measured it, as in baton run's summary.
type metricStat struct {
	Episodes int `json:"episodes"`
	returnStats
}

// returnStats sums up episode returns (or a metric's values); Std is the population standard deviation, as in
// baton run's summary.
type returnStats struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// summarizeLog reads the trials, episodes, retroactive rewards and steps of a log.
//
// The returns are those of the episodes table, which the runner computes as it runs
// (every source, float64, and the retroactive rewards received before the episode
// ended), plus the retroactive rewards that arrived in a later episode (a controller's
// for a past step). The episodes are taken in the order of their trials' index in the
// campaign, then of their number, as the campaign's summary takes them, so that the
// sums come out the same to the last bit.
func summarizeLog(l *datalog.Log) (*logSummary, error) {
	s := &logSummary{Dir: l.Dir(), Envs: []string{}, Agents: map[string]agentLogStat{}, Metrics: map[string]metricStat{},
		series: map[string][]float64{}, metricSeries: map[string][]float64{}}
	trials, err := l.Trials()
	if err != nil {
		return nil, err
	}
	type place struct{ index, order int }
	at := make(map[string]place, len(trials))
	defined := false
	taskOf := map[string]int{} // trial id -> index in s.Tasks
	for i, t := range trials {
		at[t.ID] = place{t.Index, i}
		if t.Task != "" {
			k := slices.IndexFunc(s.Tasks, func(ts taskLogStat) bool { return ts.Name == t.Task })
			if k < 0 {
				k = len(s.Tasks)
				s.Tasks = append(s.Tasks, taskLogStat{Name: t.Task, First: t.Index, Last: t.Index})
			}
			ts := &s.Tasks[k]
			ts.Trials++
			ts.First, ts.Last = min(ts.First, t.Index), max(ts.Last, t.Index)
			taskOf[t.ID] = k
		}
		switch t.State {
		case event.Ended:
			s.Ended++
		case event.Stopped:
			s.Stopped++
		case event.Failed:
			s.Failed++
		default: // its writer was killed before the trial ended
			s.Unfinished++
		}
		if !t.HasInfo {
			continue
		}
		if !slices.Contains(s.Envs, t.Env) {
			s.Envs = append(s.Envs, t.Env)
		}
		defined = defined || t.DefinesSuccess
		for _, a := range t.Agents {
			if !slices.Contains(s.agentOrder, a.Name) {
				s.agentOrder = append(s.agentOrder, a.Name)
			}
		}
	}
	s.Trials = len(trials)

	episodes, err := l.Episodes()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(episodes, func(a, b datalog.Episode) int {
		pa, pb := at[a.Trial], at[b.Trial]
		return cmp.Or(cmp.Compare(pa.index, pb.index), cmp.Compare(pa.order, pb.order), cmp.Compare(a.Episode, b.Episode))
	})
	retro, err := l.Retro()
	if err != nil {
		return nil, err
	}
	type epAgent struct {
		trial   string
		episode int
		agent   string
	}
	late := map[epAgent]float64{}
	for _, r := range retro {
		if r.ArrivedEpisode > r.Episode {
			late[epAgent{r.Trial, r.Episode, r.Agent}] += r.Value
		}
	}
	successes, judged := 0, 0
	for _, e := range episodes {
		s.Episodes++
		if e.DefinesSuccess {
			judged++
			if e.Success {
				successes++
			}
		}
		if k, ok := taskOf[e.Trial]; ok {
			ts := &s.Tasks[k]
			ts.Episodes++
			if e.DefinesSuccess {
				if ts.Successes == nil {
					ts.Successes = new(int)
				}
				if e.Success {
					*ts.Successes++
				}
			}
		}
		for _, r := range e.Returns {
			s.series[r.Agent] = append(s.series[r.Agent], r.Value+late[epAgent{e.Trial, e.Episode, r.Agent}])
			if !slices.Contains(s.agentOrder, r.Agent) {
				s.agentOrder = append(s.agentOrder, r.Agent)
			}
		}
		for _, m := range e.Metrics {
			if _, ok := s.metricSeries[m.Name]; !ok {
				s.metricOrder = append(s.metricOrder, m.Name)
			}
			s.metricSeries[m.Name] = append(s.metricSeries[m.Name], m.Value)
		}
	}
	for _, name := range s.metricOrder {
		xs := s.metricSeries[name]
		s.Metrics[name] = metricStat{Episodes: len(xs), returnStats: describe(xs)}
	}
	slices.SortStableFunc(s.Tasks, func(a, b taskLogStat) int { return cmp.Compare(a.First, b.First) })
	for k := range s.Tasks {
		if ts := &s.Tasks[k]; ts.Successes != nil {
			ts.SuccessRate = &rate{value: float64(*ts.Successes) / float64(ts.Episodes), known: ts.Episodes > 0}
		}
	}
	if defined {
		s.Successes, s.SuccessRate = &successes, &rate{}
		if judged > 0 {
			*s.SuccessRate = rate{value: float64(successes) / float64(judged), known: true}
		}
	}

	for _, name := range l.Agents() {
		if !slices.Contains(s.agentOrder, name) {
			s.agentOrder = append(s.agentOrder, name)
		}
	}
	for _, name := range s.agentOrder {
		a := agentLogStat{}
		if slices.Contains(l.Agents(), name) {
			for rec, err := range l.Batches(name) {
				if err != nil {
					return nil, err
				}
				a.Rows += rec.NumRows()
			}
		}
		xs := s.series[name]
		a.Episodes = len(xs)
		a.Return = describe(xs)
		s.Agents[name] = a
		s.Rows += a.Rows
	}

	if s.Parts, s.Bytes, s.footerless, err = partFiles(l); err != nil {
		return nil, err
	}
	return s, nil
}

// describe sums up xs: zero for none.
func describe(xs []float64) returnStats {
	var r returnStats
	if len(xs) > 0 {
		r.Mean, r.Std = stat.PopMeanStdDev(xs, nil)
		r.Min, r.Max = math.Inf(1), math.Inf(-1)
		for _, x := range xs {
			r.Min, r.Max = min(r.Min, x), max(r.Max, x)
		}
	}
	return r
}

// partFiles counts the parts of a log, their bytes, and those without a footer.
func partFiles(l *datalog.Log) (parts int, bytes int64, footerless int, err error) {
	for _, p := range l.Parts() {
		st, err := os.Stat(p.Path)
		if err != nil {
			return 0, 0, 0, err
		}
		parts++
		bytes += st.Size()
		if !hasFooter(p.Path, st.Size()) {
			footerless++
		}
	}
	return parts, bytes, footerless, nil
}

// hasFooter reports whether the file at path ends as an Arrow IPC file does, with the
// magic "ARROW1": a part whose writer was killed does not.
func hasFooter(path string, size int64) bool {
	const magic = "ARROW1"
	if size < 2*int64(len(magic)) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(magic))
	if _, err := f.ReadAt(b, size-int64(len(magic))); err != nil {
		return false
	}
	return string(b) == magic
}

// writeText prints the summary for people; plotTo is the plot written, if any.
func (s *logSummary) writeText(w io.Writer, plotTo string) error {
	var b strings.Builder
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-14s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("log", "%s: %s parts, %s", s.Dir, group(int64(s.Parts)), bytesText(s.Bytes))
	if s.footerless > 0 {
		row("", "%s without a footer (a writer was killed): baton log recover %s rewrites them for other readers", plural(s.footerless, "part", "parts"), s.Dir)
	}
	if len(s.Envs) > 0 {
		row("env", "%s", strings.Join(s.Envs, ", "))
	}
	states := fmt.Sprintf("%s ended, %s stopped, %s failed", group(int64(s.Ended)), group(int64(s.Stopped)), group(int64(s.Failed)))
	if s.Unfinished > 0 {
		states += fmt.Sprintf(", %s unfinished", group(int64(s.Unfinished)))
	}
	row("trials", "%s (%s)", group(int64(s.Trials)), states)
	row("episodes", "%s", group(int64(s.Episodes)))
	row("rows", "%s", group(s.Rows))
	if s.SuccessRate != nil && s.SuccessRate.known {
		row("success rate", "%.3f (%s of %s episodes)", s.SuccessRate.value, group(int64(*s.Successes)), group(int64(s.Episodes)))
	}
	if plotTo != "" {
		row("plot", "%s", plotTo)
	}
	b.WriteString("\n")
	tw := newTable(&b, 2)
	fmt.Fprintf(tw, "%s\t%9s\t%8s\t%9s\t%9s\t%9s\t%9s\n", "agent", "rows", "episodes", "mean", "std", "min", "max")
	for _, name := range s.agentOrder {
		a := s.Agents[name]
		fmt.Fprintf(tw, "%s\t%9s\t%8s\t%9.3f\t%9.3f\t%9.3f\t%9.3f\n", name, group(a.Rows), group(int64(a.Episodes)),
			a.Return.Mean, a.Return.Std, a.Return.Min, a.Return.Max)
	}
	tw.Flush()
	b.WriteString("(mean, std, min and max of the agent's episode return over its complete episodes)\n")
	if len(s.metricOrder) > 0 {
		b.WriteString("\n")
		tw := newTable(&b, 2)
		fmt.Fprintf(tw, "%s\t%8s\t%9s\t%9s\t%9s\t%9s\n", "metric", "episodes", "mean", "std", "min", "max")
		for _, name := range s.metricOrder {
			m := s.Metrics[name]
			fmt.Fprintf(tw, "%s\t%8s\t%9.3f\t%9.3f\t%9.3f\t%9.3f\n", name, group(int64(m.Episodes)), m.Mean, m.Std, m.Min, m.Max)
		}
		tw.Flush()
		b.WriteString("(the environment's metrics over the complete episodes that measured them)\n")
	}
	if len(s.Tasks) > 0 {
		b.WriteString("\n")
		tw := newTable(&b, 2)
		fmt.Fprintf(tw, "%s\t%8s\t%8s\t%8s\t%9s\n", "task", "trials", "episodes", "success", "trials of")
		for _, ts := range s.Tasks {
			success := "-"
			if ts.SuccessRate != nil && ts.SuccessRate.known {
				success = fmt.Sprintf("%.3f", ts.SuccessRate.value)
			}
			fmt.Fprintf(tw, "%s\t%8s\t%8s\t%8s\t%9s\n", ts.Name, group(int64(ts.Trials)), group(int64(ts.Episodes)), success,
				fmt.Sprintf("%d-%d", ts.First, ts.Last))
		}
		tw.Flush()
		b.WriteString("(the tasks of the schedule, by first trial: trials, complete episodes, their success rate, the first and last trial index)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plural writes "1 part", "2 parts".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(int64(n)) + " " + many
}
