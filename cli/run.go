package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/models/onnx"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/spf13/cobra"
)

// runFlags are the flags of baton run.
type runFlags struct {
	trials    int
	workers   int
	episodes  int
	seed      uint64
	policies  []string
	envConfig string
	maxTicks  int
	json      bool
	// log is the directory of the activity log ("": none), logCompression the
	// compression of its record batches.
	log            string
	logCompression string
	// schedule is the file of a schedule of tasks ("": none); trialsSet reports that
	// --trials was given.
	schedule  string
	trialsSet bool
	// keyFile holds the keys presented to remote agents (--policy AGENT=grpc://...),
	// tlsCA the certificates trusted for grpcs:// ones.
	keyFile, tlsCA string
	// modelsDir is the model registry of --policy AGENT=model:NAME@VERSION.
	modelsDir string
	// followModels makes model:NAME@latest policies take newer versions between
	// episodes.
	followModels bool
	// modelRuntime runs model: policies on one runtime ("": the compiled one when
	// it covers the graph, else gonnx).
	modelRuntime string
	// first is the index of the first trial run (--first); logShard names the log's
	// parts (--log-shard); results is the file of the trials' results (--results);
	// fromResults the files to sum up instead of running trials (--from-results).
	first       int
	logShard    string
	results     string
	fromResults []string
}

func newRun(envs *environments) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run ENV | run --schedule FILE",
		Short: "Run a campaign of trials of an environment and sum them up",
		Long: `run runs a campaign of trials of the environment ENV on a pool of workers, each agent
playing a named policy, and prints a summary: trials, episodes, environment steps,
steps per second, the success rate where the environment defines success, each
agent's episode return (mean, standard deviation, minimum and maximum), and the same
figures for the environment's own metrics where it defines some (webtest: coverage and
defects found). With --json the summary is one JSON object on stdout.

With --log DIR, every step of every trial goes to an activity log in DIR: an Apache
Arrow dataset, one folder of parts per agent, that "baton inspect DIR" sums up,
"baton replay DIR" checks, and Python (pyarrow, polars) reads. The summary then ends
with the log's directory and the rows written. DIR must not hold a log already, and
a log has one writer at a time: a second run given the same DIR while the first writes
it fails, naming the process that holds it.

With --schedule FILE, the trials play the tasks of a schedule (a curriculum) instead
of one environment: a JSON file listing tasks (each an environment, its configuration,
its agents' policies and a name) and the order to take them in: in_order (each task
for its trials), random (by weight, from each trial's seed) or success (the next task
once the success rate over a window of trials passes a threshold). ENV, --env-config
and --policy are then left out, and --trials counts the trials of the random and
success orders when the file gives none; the summary sums up each task and lists the tasks in
the order the trials took them, and the log's trials table names each trial's task.
See envs/maze/curriculum.json and the runners package's documentation.

With --first K, the run plays trials K to K+N-1 of the campaign (N from --trials),
each exactly as in the whole campaign, so that processes share a campaign out by
ranges of trial indices (python -m baton.ray does, on a Ray cluster): --log-shard
NAME names their parts apart in one log, --results FILE writes each trial's result,
and "baton run ENV --trials N --from-results FILE ..." with the campaign's flags sums
the files up, with no trial run, to the summary of the campaign run at once, timing
aside.

Progress goes to stderr: a bar on a terminal, otherwise a line at every tenth of the
trials. The same flags give the same summary, apart from the timing, whatever the
number of workers: trial i plays with a seed derived from --seed and i alone. The first
episode of the first trial is "baton play ENV" with the same --seed.

Environments:
` + envHelp(envs),
		Example:   "  baton run --schedule envs/maze/curriculum.json --json\n  baton run maze\n  baton run maze --trials 1000 --workers 4 --policy motion=forward\n  baton run maze --env-config '{\"procedure\": true}' --json\n  baton run cartpole --policy cartpole=balance --episodes 10\n  baton run maze --trials 100 --log runs/maze --log-compression zstd\n  baton run maze --policy strategy=grpc://127.0.0.1:50051 --key-file keys",
		ValidArgs: envs.names(),
		Args: func(cmd *cobra.Command, args []string) error {
			if f.schedule != "" {
				if len(args) > 0 {
					return usagef("run --schedule takes its environments from the schedule's tasks, not %q", args)
				}
				return nil
			}
			return oneEnv(envs, "run")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.trialsSet = cmd.Flags().Changed("trials")
			name := ""
			if len(args) > 0 {
				name = args[0]
			}
			return runCampaign(cmd.Context(), envs, name, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.IntVar(&f.trials, "trials", 1000, "run `N` trials")
	fl.StringVar(&f.schedule, "schedule", "", "play the tasks of the schedule in `FILE` (JSON) instead of one environment")
	fl.IntVar(&f.workers, "workers", 0, "run at most `N` trials at once; 0 means one per CPU (GOMAXPROCS); at most 4 per CPU, or 256")
	fl.IntVar(&f.episodes, "episodes", 1, "play `N` episodes per trial")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the campaign, from which every trial's seed derives, an integer `N` from 0 to 18446744073709551615")
	fl.StringArrayVar(&f.policies, "policy", nil, "`AGENT=POLICY`: which policy an agent plays, AGENT=grpc://HOST:PORT for an agent served by baton serve agent, or AGENT=model:NAME[@VERSION] (or model:FILE.onnx) for a trained ONNX policy run in Go; repeatable (the choices: baton run --help)")
	fl.StringVar(&f.modelsDir, "models", "", "the model registry's `DIR` for --policy AGENT=model:NAME@VERSION ($BATON_MODELS, else ~/.local/share/baton/models)")
	fl.BoolVar(&f.followModels, "follow-models", false, "with --policy AGENT=model:NAME@latest, take each newer version of the model between episodes (looked for every second)")
	fl.StringVar(&f.modelRuntime, "model-runtime", "", "run --policy AGENT=model:... graphs on `RUNTIME`: compiled (plain Go compiled from the graph) or gonnx; by default compiled when it covers the graph, else gonnx")
	fl.StringVar(&f.keyFile, "key-file", "", "present the API keys of `FILE` to remote agents (NAME=KEY lines, or one bare key)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "trust the PEM certificates of `FILE` for grpcs:// remote agents")
	fl.IntVar(&f.maxTicks, "max-ticks", 0, "truncate each episode after `N` environment steps; 0 keeps only the environment's own limits")
	fl.StringVar(&f.envConfig, "env-config", "", "the environment's configuration as `JSON`, or @FILE to read it from a file")
	fl.BoolVar(&f.json, "json", false, "print the summary as one JSON object")
	fl.StringVar(&f.log, "log", "", "write every step of every trial to an Arrow activity log in `DIR` (created; it must hold no log yet, and no other run may be writing it)")
	fl.StringVar(&f.logCompression, "log-compression", datalog.DefaultCompression.String(), "compress the log's record batches with `KIND`: lz4 (fast, the default), zstd (smaller) or none")
	fl.IntVar(&f.first, "first", 0, "run the trials of indices `K` to K+N-1 (N from --trials) of the campaign, each as in the whole campaign; not with --schedule")
	fl.StringVar(&f.logShard, "log-shard", "", "name the log's parts part-`NAME`-NNNNN.arrow (letters, digits, '_'), so that several runs can fill one log")
	fl.StringVar(&f.results, "results", "", "write each trial's result to `FILE`, one JSON object a line, for --from-results")
	fl.StringArrayVar(&f.fromResults, "from-results", nil, "sum up the results of `FILE` (written by --results; repeatable) instead of running trials: they must hold each of the --trials trials once")
	return cmd
}

// runCampaign runs the campaign that the flags describe, reports its progress to
// stderr and prints its summary to stdout, even when ctx is cancelled part way.
func runCampaign(ctx context.Context, envs *environments, name string, f runFlags, stdout, stderr io.Writer) error {
	var bad []string
	if f.trials < 1 {
		bad = append(bad, fmt.Sprintf("--trials %d: want 1 or more", f.trials))
	}
	if why := checkWorkers(f.workers); why != "" {
		bad = append(bad, why)
	}
	if f.episodes < 1 {
		bad = append(bad, fmt.Sprintf("--episodes %d: want 1 or more", f.episodes))
	}
	if f.maxTicks < 0 {
		bad = append(bad, fmt.Sprintf("--max-ticks %d: want 0 (no limit beyond the environment's own) or more", f.maxTicks))
	}
	comp, err := datalog.ParseCompression(f.logCompression)
	switch {
	case err != nil:
		bad = append(bad, fmt.Sprintf("--log-compression %q: want none, lz4 or zstd", f.logCompression))
	case f.log == "" && comp != datalog.DefaultCompression:
		bad = append(bad, fmt.Sprintf("--log-compression %s: needs --log DIR", f.logCompression))
	}
	if f.first < 0 {
		bad = append(bad, fmt.Sprintf("--first %d: want 0 or more", f.first))
	}
	if f.first != 0 && f.schedule != "" {
		bad = append(bad, fmt.Sprintf("--first %d: not with --schedule, whose trials start at 0", f.first))
	}
	if f.logShard != "" && f.log == "" {
		bad = append(bad, fmt.Sprintf("--log-shard %s: needs --log DIR", f.logShard))
	}
	if len(f.fromResults) > 0 && (f.log != "" || f.results != "" || f.first != 0) {
		bad = append(bad, "--from-results runs no trial: not with --log, --results or --first")
	}
	if len(bad) > 0 {
		return usagef("%s", strings.Join(bad, "; "))
	}
	var sched *runners.Schedule
	if f.schedule != "" {
		if sched, err = readSchedule(envs, f); err != nil {
			return err
		}
		name, f.trials = sched.Tasks[0].Env, scheduleTrials(sched, f.trials)
	}
	config, err := readConfig(f.envConfig)
	if err != nil {
		return err
	}
	if sched != nil {
		config, f.policies = sched.Tasks[0].Config, taskPolicies(sched.Tasks[0])
	}
	// Open the environment here too, so that a bad configuration or --policy gets the
	// same message as in baton play.
	o, err := envs.open(name, config, f.maxTicks)
	if err != nil {
		return err
	}
	localFlags, onnxs, err := loadModelPolicies(ctx, o, f.policies, f.modelsDir, f.followModels, onnx.WithRuntime(onnx.Runtime(f.modelRuntime)))
	if err != nil {
		return err
	}
	defer onnxs.close()
	localFlags, remotes, err := dialRemotePolicies(ctx, o, localFlags, f.keyFile, f.tlsCA)
	if err != nil {
		return err
	}
	defer remotes.close()
	policies, err := choosePolicies(o, localFlags)
	if err != nil {
		return err
	}
	spec := runners.Spec{
		Env:      name,
		Config:   config,
		Actors:   make(map[string]runners.Actor, len(policies)),
		Seed:     f.seed,
		Episodes: f.episodes,
		MaxTicks: f.maxTicks,
	}
	for i, a := range o.agents {
		spec.Actors[a.Name] = runners.Named(policies[i])
		if c, ok := remotes.clients[a.Name]; ok {
			spec.Actors[a.Name], policies[i] = runners.Value(c), remotes.targets[a.Name]
		}
		if actor, ok := onnxs.actor(a.Name); ok {
			spec.Actors[a.Name], policies[i] = actor, onnxs.refs[a.Name]
		}
	}
	opts := []runners.CampaignOption{runners.WithTrials(f.trials), runners.WithWorkers(f.workers), runners.WithFirstTrial(f.first)}
	if sched != nil {
		spec.Env, spec.Config, spec.Actors = "", nil, nil
		opts = append(opts, runners.WithSchedule(*sched))
		name = "schedule"
	}
	var ds *datalog.Dataset
	if f.log != "" {
		if err := newLogDir(f.log); err != nil {
			return err
		}
		// Workers that fill the cores (0: one per CPU) leave none for the writers'
		// goroutines: each worker then writes its own batches.
		fill := f.workers == 0 || f.workers >= runtime.GOMAXPROCS(0)
		wopts := []datalog.WriteOption{datalog.WithCompression(comp), datalog.WithInlineWrites(fill)}
		if f.logShard != "" {
			wopts = append(wopts, datalog.WithShard(f.logShard))
		}
		if ds, err = datalog.NewDataset(f.log, wopts...); err != nil {
			return fmt.Errorf("--log %s: %w", f.log, err)
		}
		// Again under the directory's lock, which the dataset holds: a run that
		// wrote its log and ended between the check above and the lock.
		if err := newLogDir(f.log); err != nil {
			_ = ds.Close()
			return err
		}
		// Closed on every path, an interrupt included, so that the log stays readable
		// by every Arrow reader: each part gets its footer.
		defer ds.Close() // a second Close does nothing
		opts = append(opts, runners.WithWorkerSinks(ds.WorkerSinks()))
	}
	prog := newProgress(stderr, name, f.trials)
	var recs []trialRecord
	update := prog.update
	if f.results != "" {
		update = func(p runners.Progress) { // called under the campaign's lock
			prog.update(p)
			recs = append(recs, newTrialRecord(p.Index, p.Result))
		}
	}
	c, err := runners.NewCampaign(envs.reg, spec, append(opts, runners.WithProgress(update))...)
	if err != nil {
		var ne *registry.NameError
		if errors.Is(err, runners.ErrSchedule) {
			return usageErr(err, "--schedule "+f.schedule)
		}
		if errors.As(err, &ne) || errors.Is(err, runners.ErrEnvConfig) || errors.Is(err, runners.ErrInvalidSpec) {
			return usageErr(err)
		}
		return err
	}
	var s runners.Summary
	if len(f.fromResults) > 0 {
		results, rerr := readResults(f.fromResults, f.trials)
		if rerr != nil {
			return rerr
		}
		s = runners.Summarize(spec.Env, results, 0)
	} else {
		s, err = c.Run(ctx)
	}
	interrupted := ctx.Err() != nil
	prog.finish(interrupted)
	if f.results != "" {
		if werr := writeResults(f.results, recs); werr != nil {
			err = errors.Join(err, werr)
		}
	}

	sum := newRunSummary(s, f.seed, o, policies, interrupted)
	if sched != nil {
		if sum.Schedule, err = newScheduleSummary(envs, f, sched, s); err != nil {
			return err
		}
	}
	if ds != nil {
		if cerr := ds.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("writing the log: %w", cerr))
		}
		sum.Log = &logStats{Dir: f.log, Compression: comp.String(), Rows: ds.Stats().Rows}
		if l, oerr := datalog.Open(f.log); oerr == nil { // no part at all when no trial ran
			sum.Log.Parts, sum.Log.Bytes, _, _ = partFiles(l)
		}
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if werr := enc.Encode(sum); werr != nil {
			return fmt.Errorf("writing the summary: %w", werr)
		}
	} else if werr := sum.writeText(stdout, f.trials, workers(f.workers, f.trials)); werr != nil {
		return fmt.Errorf("writing the summary: %w", werr)
	}

	switch {
	case interrupted:
		return fmt.Errorf("interrupted: %d of %d trials finished, %d stopped: %w", s.Ended+s.Failed, f.trials, s.Stopped, ctx.Err())
	case err != nil:
		return err
	case s.Failed > 0:
		first := s.Failures[0]
		return fmt.Errorf("%d of %d trials failed; the first, %s: %s", s.Failed, s.Trials, first.Trial, first.Reason)
	}
	return nil
}

// runSummary is the summary that baton run prints; see the package documentation for
// its JSON form.
type runSummary struct {
	Env            string                  `json:"env"`
	Seed           uint64                  `json:"seed"`
	Policies       map[string]string       `json:"policies"`
	Trials         int                     `json:"trials"`
	Ended          int                     `json:"ended"`
	Stopped        int                     `json:"stopped"`
	Failed         int                     `json:"failed"`
	Episodes       int                     `json:"episodes"`
	EnvSteps       int64                   `json:"env_steps"`
	WallSeconds    float64                 `json:"wall_seconds"`
	StepsPerSecond float64                 `json:"steps_per_second"`
	Successes      *int                    `json:"successes,omitempty"`
	SuccessRate    *rate                   `json:"success_rate,omitempty"`
	Agents         map[string]agentSummary `json:"agents"`
	Metrics        map[string]agentSummary `json:"metrics,omitempty"`
	Failures       []failure               `json:"failures"`
	Interrupted    bool                    `json:"interrupted"`
	Log            *logStats               `json:"log,omitempty"`
	Schedule       *scheduleSummary        `json:"schedule,omitempty"`

	agentOrder, metricOrder []string
}

// logStats is what baton run --log wrote.
type logStats struct {
	Dir         string `json:"dir"`
	Compression string `json:"compression"`
	// Rows counts the step rows (one per agent reported in a step), Parts the files
	// and Bytes their size.
	Rows  int64 `json:"rows"`
	Parts int   `json:"parts"`
	Bytes int64 `json:"bytes"`
}

// rate is a success rate: in JSON a number, or null when no episode completed.
type rate struct {
	value float64
	known bool
}

func (r rate) MarshalJSON() ([]byte, error) {
	if !r.known {
		return []byte("null"), nil
	}
	return json.Marshal(r.value)
}

func (r *rate) UnmarshalJSON(b []byte) error {
	*r = rate{}
	if string(b) == "null" {
		return nil
	}
	r.known = true
	return json.Unmarshal(b, &r.value)
}

// agentSummary is an agent's episode returns, or an environment metric's values.
type agentSummary struct {
	Mean     float64 `json:"mean"`
	Std      float64 `json:"std"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Episodes int     `json:"episodes"`
}

// failure is a failed trial.
type failure struct {
	Index  int    `json:"index"`
	Trial  string `json:"trial"`
	Reason string `json:"reason"`
}

func newRunSummary(s runners.Summary, seed uint64, o *opened, policies []string, interrupted bool) *runSummary {
	r := &runSummary{
		Env:            s.Env,
		Seed:           seed,
		Policies:       make(map[string]string, len(policies)),
		Trials:         s.Trials,
		Ended:          s.Ended,
		Stopped:        s.Stopped,
		Failed:         s.Failed,
		Episodes:       s.Episodes,
		EnvSteps:       s.EnvSteps,
		WallSeconds:    s.WallSeconds,
		StepsPerSecond: s.StepsPerSecond,
		Agents:         make(map[string]agentSummary, len(s.Agents)),
		Failures:       []failure{},
		Interrupted:    interrupted,
	}
	if o.entry.Success != nil { // also when no trial ran
		r.Successes = &s.Successes
		r.SuccessRate = &rate{}
		if s.SuccessRate != nil && s.Episodes > 0 {
			*r.SuccessRate = rate{value: *s.SuccessRate, known: true}
		}
	}
	for i, a := range o.agents {
		r.Policies[a.Name] = policies[i]
	}
	for _, a := range s.Agents {
		r.Agents[a.Name] = agentSummary{Mean: a.Mean, Std: a.Std, Min: a.Min, Max: a.Max, Episodes: a.Episodes}
		r.agentOrder = append(r.agentOrder, a.Name)
	}
	if len(r.agentOrder) == 0 { // no trial ran: list the agents all the same
		for _, a := range o.agents {
			r.Agents[a.Name] = agentSummary{}
			r.agentOrder = append(r.agentOrder, a.Name)
		}
	}
	for _, m := range s.Metrics {
		if r.Metrics == nil {
			r.Metrics = make(map[string]agentSummary, len(s.Metrics))
		}
		r.Metrics[m.Name] = agentSummary{Mean: m.Mean, Std: m.Std, Min: m.Min, Max: m.Max, Episodes: m.Episodes}
		r.metricOrder = append(r.metricOrder, m.Name)
	}
	for _, fl := range s.Failures {
		r.Failures = append(r.Failures, failure{Index: fl.Index, Trial: fl.Trial, Reason: oneLine(fl.Reason)})
	}
	return r
}

// maxWorkers is the most trials a command runs at once (--workers): 4 per CPU
// (GOMAXPROCS), or 256 where that is more. More trials at once than CPUs help only
// while trials wait (on remote agents); past that, each costs its environment and,
// with --log, its share of the log's buffers (half a megabyte each for the maze) for
// nothing. A larger count is refused rather than lowered, so that a slip (10000 for
// 10) is caught rather than quietly run.
func maxWorkers() int { return max(256, 4*runtime.GOMAXPROCS(0)) }

// checkWorkers says what is wrong with the --workers value n, or "" when nothing is.
func checkWorkers(n int) string {
	switch {
	case n < 0:
		return fmt.Sprintf("--workers %d: want 0 (one per CPU) or more", n)
	case n > maxWorkers():
		return fmt.Sprintf("--workers %d: at most %d (4 per CPU, or 256 where that is more)", n, maxWorkers())
	}
	return ""
}

// workers is how many workers a campaign of trials starts for the --workers flag.
func workers(flag, trials int) int {
	if flag == 0 {
		flag = runtime.GOMAXPROCS(0)
	}
	return min(flag, trials)
}

// writeText prints the summary as a table; requested is the number of trials asked
// for, workers the number of workers.
func (r *runSummary) writeText(w io.Writer, requested, workers int) error {
	var b strings.Builder
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-14s %s\n", name, fmt.Sprintf(format, args...))
	}
	pols := make([]string, len(r.agentOrder))
	for i, name := range r.agentOrder {
		pols[i] = name + "=" + r.Policies[name]
	}
	if r.Schedule != nil {
		row("schedule", "%s (seed %d; %s of %s, order %s)", r.Schedule.File, r.Seed, plural(len(r.Schedule.Tasks), "task", "tasks"), r.Env, r.Schedule.Order)
	} else {
		row("env", "%s (seed %d; %s)", r.Env, r.Seed, strings.Join(pols, ", "))
	}
	trials := group(int64(r.Trials))
	if r.Interrupted {
		trials += " of " + group(int64(requested))
	}
	trials += " on " + strconv.Itoa(workers) + " worker"
	if workers != 1 {
		trials += "s"
	}
	if r.Interrupted {
		trials += ", interrupted"
	}
	row("trials", "%s (%s ended, %s stopped, %s failed)", trials, group(int64(r.Ended)), group(int64(r.Stopped)), group(int64(r.Failed)))
	row("episodes", "%s", group(int64(r.Episodes)))
	row("env steps", "%s", group(r.EnvSteps))
	row("wall time", "%.3f s", r.WallSeconds)
	row("steps/s", "%s", group(int64(r.StepsPerSecond+0.5)))
	if r.SuccessRate != nil && r.SuccessRate.known {
		row("success rate", "%.3f (%s of %s episodes)", r.SuccessRate.value, group(int64(*r.Successes)), group(int64(r.Episodes)))
	}
	b.WriteString("\n")
	tw := newTable(&b, 2)
	fmt.Fprintf(tw, "%s\t%8s\t%9s\t%9s\t%9s\t%9s\n", "return of", "episodes", "mean", "std", "min", "max")
	for _, name := range r.agentOrder {
		a := r.Agents[name]
		fmt.Fprintf(tw, "%s\t%8d\t%9.3f\t%9.3f\t%9.3f\t%9.3f\n", name, a.Episodes, a.Mean, a.Std, a.Min, a.Max)
	}
	tw.Flush()
	if len(r.metricOrder) > 0 {
		b.WriteString("\n")
		tw := newTable(&b, 2)
		fmt.Fprintf(tw, "%s\t%8s\t%9s\t%9s\t%9s\t%9s\n", "metric", "episodes", "mean", "std", "min", "max")
		for _, name := range r.metricOrder {
			m := r.Metrics[name]
			fmt.Fprintf(tw, "%s\t%8d\t%9.3f\t%9.3f\t%9.3f\t%9.3f\n", name, m.Episodes, m.Mean, m.Std, m.Min, m.Max)
		}
		tw.Flush()
	}
	if len(r.Failures) > 0 {
		b.WriteString("\nfailed trials:\n")
		for _, fl := range r.Failures {
			fmt.Fprintf(&b, "  %s: %s\n", fl.Trial, fl.Reason)
		}
	}
	if sc := r.Schedule; sc != nil {
		sc.writeText(&b)
	}
	if l := r.Log; l != nil {
		b.WriteByte('\n')
		row("log", "%s: %s rows in %s parts, %s (compression %s)", l.Dir, group(l.Rows), group(int64(l.Parts)), bytesText(l.Bytes), l.Compression)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// group writes n with thousands separated by commas: 1,234,567.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
