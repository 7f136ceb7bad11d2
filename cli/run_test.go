package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// summaryKeys are the keys of baton run --json for an environment that defines success.
var summaryKeys = []string{"env", "seed", "policies", "trials", "ended", "stopped", "failed", "episodes", "env_steps",
	"wall_seconds", "steps_per_second", "successes", "success_rate", "agents", "failures", "interrupted"}

// decodeSummary checks that stdout is one JSON object with exactly the documented keys
// and decodes it.
func decodeSummary(t *testing.T, stdout string, keys []string) (runSummary, map[string]json.RawMessage) {
	t.Helper()
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON object on one line: %s", stdout)
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &obj))
	assert.Equal(t, slices.Sorted(slices.Values(keys)), slices.Sorted(maps.Keys(obj)))
	var agents map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj["agents"], &agents))
	for name, a := range agents {
		assert.Equal(t, []string{"episodes", "max", "mean", "min", "std"}, slices.Sorted(maps.Keys(a)), "agent %s", name)
	}
	var s runSummary
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&s))
	return s, obj
}

// twin runs the campaign that baton run should run, through package runners.
func twin(t *testing.T, spec runners.Spec, trials int) runners.Summary {
	t.Helper()
	c, err := runners.NewCampaign(shipped(t).reg, spec, runners.WithTrials(trials), runners.WithWorkers(1))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	return s
}

func TestRunJSON(t *testing.T) {
	tests := []struct {
		name string
		args []string
		spec runners.Spec
		// trials is the number of trials the twin runs.
		trials int
		check  func(t *testing.T, s runSummary)
	}{
		{
			name:   "maze defaults",
			args:   []string{"maze", "--trials", "4", "--seed", "1"},
			spec:   runners.Spec{Env: "maze", Seed: 1},
			trials: 4,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, map[string]string{"strategy": "oracle", "motion": "random"}, s.Policies)
				assert.Equal(t, 4, s.Trials)
				assert.Equal(t, 4, s.Episodes)
				assert.Equal(t, int64(239), s.EnvSteps)
				assert.Equal(t, 0.5, s.SuccessRate.value)
				assert.Equal(t, agentSummary{Mean: 0.5, Std: 0.5, Min: 0, Max: 1, Episodes: 4}, s.Agents["strategy"])
			},
		},
		{
			// Trial 0's first episode is baton play maze --seed 1 (73 ticks, returns
			// 0 and 25.5, see play-maze-seed1.txt).
			name:   "one trial is baton play",
			args:   []string{"maze", "--trials", "1"},
			spec:   runners.Spec{Env: "maze", Seed: 1},
			trials: 1,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, int64(73), s.EnvSteps)
				assert.Equal(t, 0.0, s.SuccessRate.value)
				assert.Equal(t, agentSummary{Mean: 0, Min: 0, Max: 0, Episodes: 1}, s.Agents["strategy"])
				assert.Equal(t, agentSummary{Mean: 25.5, Min: 25.5, Max: 25.5, Episodes: 1}, roundAgent(s.Agents["motion"]))
			},
		},
		{
			name:   "forward motion always reaches the goal",
			args:   []string{"maze", "--trials", "5", "--episodes", "2", "--policy", "motion=forward", "--seed", "9"},
			spec:   runners.Spec{Env: "maze", Seed: 9, Episodes: 2, Actors: map[string]runners.Actor{"motion": runners.Named("forward")}},
			trials: 5,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, 10, s.Episodes)
				assert.Equal(t, int64(200), s.EnvSteps)
				assert.Equal(t, 1.0, s.SuccessRate.value)
				assert.Equal(t, 10, *s.Successes)
				assert.Equal(t, agentSummary{Mean: 13, Min: 13, Max: 13, Episodes: 10}, s.Agents["motion"])
			},
		},
		{
			name:   "procedure variant",
			args:   []string{"maze", "--trials", "3", "--env-config", `{"procedure": true}`},
			spec:   runners.Spec{Env: "maze", Seed: 1, Config: json.RawMessage(`{"procedure": true}`)},
			trials: 3,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, map[string]string{"strategy": "oracle"}, s.Policies)
				assert.Equal(t, []string{"strategy"}, slices.Collect(maps.Keys(s.Agents)))
				assert.Equal(t, int64(21), s.EnvSteps, "7 decisions to the goal, 3 times")
			},
		},
		{
			name:   "max ticks",
			args:   []string{"maze", "--trials", "3", "--max-ticks", "5"},
			spec:   runners.Spec{Env: "maze", Seed: 1, MaxTicks: 5},
			trials: 3,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, int64(15), s.EnvSteps)
				assert.Equal(t, 0.0, s.SuccessRate.value)
			},
		},
		{
			name:   "cartpole",
			args:   []string{"cartpole", "--trials", "3", "--policy", "cartpole=balance", "--seed", "4"},
			spec:   runners.Spec{Env: "cartpole", Seed: 4, Actors: map[string]runners.Actor{"cartpole": runners.Named("balance")}},
			trials: 3,
			check: func(t *testing.T, s runSummary) {
				assert.Equal(t, map[string]string{"cartpole": "balance"}, s.Policies)
				assert.Equal(t, []string{"cartpole"}, slices.Collect(maps.Keys(s.Agents)))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, append([]string{"run", "--json", "--workers", "2"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			s, _ := decodeSummary(t, r.stdout, summaryKeys)
			assert.Equal(t, tt.spec.Env, s.Env)
			assert.Equal(t, tt.spec.Seed, s.Seed)
			assert.False(t, s.Interrupted)
			assert.Empty(t, s.Failures)
			assert.Equal(t, s.Trials, s.Ended)
			assert.Positive(t, s.WallSeconds)
			assert.InDelta(t, float64(s.EnvSteps)/s.WallSeconds, s.StepsPerSecond, 1e-6*s.StepsPerSecond)

			// The same campaign through package runners, with one worker.
			want := twin(t, tt.spec, tt.trials)
			assert.Equal(t, want.Trials, s.Trials)
			assert.Equal(t, want.Episodes, s.Episodes)
			assert.Equal(t, want.EnvSteps, s.EnvSteps)
			require.NotNil(t, want.SuccessRate)
			require.NotNil(t, s.SuccessRate)
			assert.Equal(t, rate{value: *want.SuccessRate, known: true}, *s.SuccessRate)
			require.Len(t, s.Agents, len(want.Agents))
			for _, a := range want.Agents {
				assert.Equal(t, agentSummary{Mean: a.Mean, Std: a.Std, Min: a.Min, Max: a.Max, Episodes: a.Episodes}, s.Agents[a.Name], a.Name)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// roundAgent rounds an agent's figures to 1e-9, for sums of tenths.
func roundAgent(a agentSummary) agentSummary {
	r := func(x float64) float64 {
		v, _ := json.Number(fmt.Sprintf("%.9f", x)).Float64()
		return v
	}
	return agentSummary{Mean: r(a.Mean), Std: r(a.Std), Min: r(a.Min), Max: r(a.Max), Episodes: a.Episodes}
}

// The same seed gives the same summary, apart from the timing, whatever the number of
// workers.
func TestRunDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"maze", "--trials", "12", "--episodes", "2", "--seed", "7"},
		{"maze", "--trials", "9", "--policy", "strategy=random", "--env-config", `{"generate": {"rows": 15, "cols": 21, "seed": 4}}`},
		{"cartpole", "--trials", "6", "--seed", "3"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var first map[string]json.RawMessage
			for _, workers := range []string{"1", "2", "3"} {
				r := runArgs(t, append([]string{"run", "--json", "--workers", workers}, args...)...)
				require.Equal(t, 0, r.code, r.stderr)
				_, obj := decodeSummary(t, r.stdout, summaryKeys)
				delete(obj, "wall_seconds")
				delete(obj, "steps_per_second")
				if first == nil {
					first = obj
					continue
				}
				assert.Equal(t, first, obj, "--workers %s", workers)
			}
		})
	}
	a := runArgs(t, "run", "maze", "--json", "--trials", "4", "--seed", "1")
	b := runArgs(t, "run", "maze", "--json", "--trials", "4", "--seed", "2")
	_, one := decodeSummary(t, a.stdout, summaryKeys)
	_, two := decodeSummary(t, b.stdout, summaryKeys)
	assert.NotEqual(t, one["agents"], two["agents"], "the seed drives the random motion policy")
}

func TestRunText(t *testing.T) {
	r := runArgs(t, "run", "maze", "--trials", "4", "--seed", "1", "--workers", "2")
	require.Equal(t, 0, r.code, r.stderr)
	want := []string{
		`env            maze \(seed 1; strategy=oracle, motion=random\)`,
		`trials         4 on 2 workers \(4 ended, 0 stopped, 0 failed\)`,
		`episodes       4`,
		`env steps      239`,
		`wall time      \d+\.\d{3} s`,
		`steps/s        \d{1,3}(,\d{3})*`,
		`success rate   0\.500 \(2 of 4 episodes\)`,
		``,
		`return of  episodes       mean        std        min        max`,
		`strategy          4      0\.500      0\.500      0\.000      1\.000`,
		`motion            4     21\.775      3\.082     17\.100     25\.500`,
	}
	got := lines(r.stdout)
	require.Len(t, got, len(want), r.stdout)
	for i, w := range want {
		assert.Regexp(t, "^"+w+"$", got[i], "line %d", i+1)
	}

	r = runArgs(t, "run", "cartpole", "--trials", "1", "--max-ticks", "20", "--policy", "cartpole=balance")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "trials         1 on 1 worker (1 ended, 0 stopped, 0 failed)\n")
	assert.Contains(t, r.stdout, "env steps      20\n")
	assert.Contains(t, r.stdout, "success rate   1.000 (1 of 1 episodes)\n", "balanced until the limit")
	assert.Contains(t, r.stdout, "cartpole          1     20.000      0.000     20.000     20.000\n")
}

// Without a terminal, progress is a line at every tenth of the trials.
func TestRunProgressLines(t *testing.T) {
	tests := []struct {
		trials int
		done   []int
	}{
		{1, []int{1}},
		{4, []int{1, 2, 3, 4}},
		{10, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{25, []int{3, 5, 8, 10, 13, 15, 18, 20, 23, 25}},
		{200, []int{20, 40, 60, 80, 100, 120, 140, 160, 180, 200}},
	}
	line := regexp.MustCompile(`^run maze: (\d+)/(\d+) trials \((\d+)%\), \d{1,3}(,\d{3})* env steps, 0 failed, \d+\.\d s$`)
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.trials), func(t *testing.T) {
			for _, mode := range []string{"--json=false", "--json"} {
				r := runArgs(t, "run", "maze", "--trials", fmt.Sprint(tt.trials), "--workers", "2", mode)
				require.Equal(t, 0, r.code, r.stderr)
				var done []int
				for _, l := range lines(r.stderr) {
					m := line.FindStringSubmatch(l)
					require.NotNil(t, m, "progress line %q", l)
					var d, total, pct int
					_, err := fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &d, &total, &pct)
					require.NoError(t, err)
					assert.Equal(t, tt.trials, total)
					assert.Equal(t, d*100/total, pct)
					done = append(done, d)
				}
				assert.Equal(t, tt.done, done)
				assert.NotContains(t, r.stdout, "run maze:", "progress goes to stderr")
			}
		})
	}
}

// A bar goes to a terminal; here it is drawn into a buffer.
func TestProgressBar(t *testing.T) {
	var b strings.Builder
	p := newBarProgress(&b, "maze", 3)
	for i := 1; i <= 3; i++ {
		p.update(runners.Progress{Done: i, Total: 3})
	}
	p.finish(false)
	assert.Contains(t, b.String(), "run maze")
	assert.Contains(t, b.String(), "3/3")
	assert.True(t, strings.HasSuffix(b.String(), "\n"), "the bar ends its line: %q", b.String())

	b.Reset()
	p = newBarProgress(&b, "maze", 3)
	p.update(runners.Progress{Done: 1, Total: 3})
	p.finish(true)
	assert.True(t, strings.HasSuffix(b.String(), "\n"), "an interrupted bar ends its line: %q", b.String())
	assert.Equal(t, 1, strings.Count(b.String(), "\n"))

	// newProgress draws no bar into a buffer.
	_, ok := newProgress(&b, "maze", 3).(*lineProgress)
	assert.True(t, ok)
}

func TestRunBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no environment", nil, "run needs an environment (choices: maze, maze-flat, cartpole, webtest, rps)"},
		{"unknown environment", []string{"mace"}, `unknown environment "mace" (choices: maze, maze-flat, cartpole, webtest, rps)`},
		{"two environments", []string{"maze", "cartpole"}, `run takes one environment, got ["maze" "cartpole"] (choices: maze, maze-flat, cartpole, webtest, rps)`},
		{"no trials", []string{"maze", "--trials", "0"}, "--trials 0: want 1 or more"},
		{"negative workers", []string{"maze", "--workers", "-1"}, "--workers -1: want 0 (one per CPU) or more"},
		{"too many workers", []string{"maze", "--workers", "10000"}, fmt.Sprintf("--workers 10000: at most %d (4 per CPU, or 256 where that is more)", maxWorkers())},
		{"no episodes", []string{"maze", "--episodes", "0"}, "--episodes 0: want 1 or more"},
		{"negative max ticks", []string{"maze", "--max-ticks", "-1"}, "--max-ticks -1: want 0 (no limit beyond the environment's own) or more"},
		{"every bad number at once", []string{"maze", "--trials", "-3", "--episodes", "-1"}, "--trials -3: want 1 or more; --episodes -1: want 1 or more"},
		{"trials not a number", []string{"maze", "--trials", "many"},
			`invalid argument "many" for "--trials" flag: strconv.ParseInt: parsing "many": invalid syntax (--trials: run N trials)`},
		{"unknown flag", []string{"maze", "--trial", "3"},
			"unknown flag: --trial (flags of baton run: --env-config, --episodes, --first, --follow-models, --from-results, --help, --json, --key-file, --log, --log-compression, --log-shard, --max-ticks, --model-runtime, --models, --policy, --results, --schedule, --seed, --tls-ca, --trials, --workers)"},
		{"unknown agent", []string{"maze", "--policy", "walker=random"}, `--policy walker=random: unknown agent "walker" of maze (choices: strategy, motion)`},
		{"unknown policy", []string{"maze", "--policy", "motion=teleport"}, `--policy motion=teleport: unknown policy "teleport" for agent motion of maze (choices: forward, random)`},
		{"policy without =", []string{"cartpole", "--policy", "balance"}, `--policy "balance": want AGENT=POLICY (agents of cartpole: cartpole)`},
		{"bad env-config", []string{"maze", "--env-config", `{"procedure": 1}`}, "bad --env-config for maze: maze: invalid configuration: ... (fields: ...)"},
		{"missing env-config file", []string{"maze", "--env-config", "@testdata/none.json"}, `--env-config "testdata/none.json": cannot be opened: open testdata/none.json: no such file or directory`},
		// A device that never ends is refused by what it is, not read.
		{"env-config not a file", []string{"maze", "--env-config", "@/dev/zero"}, `--env-config "/dev/zero": not a regular file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBadInput(t, runArgs(t, append([]string{"run"}, tt.args...)...), tt.want)
		})
	}
}

// A trial that fails fails alone: the campaign goes on, the summary lists it, and the
// exit status is 1.
func TestRunFailures(t *testing.T) {
	envs := withPolicies(t, map[string]agent.Policy{
		"wall": agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
			return agent.Discrete(int64(maze.Down)), nil // a wall below the start
		}),
	})
	r := runEnvs(t, envs, "run", "maze", "--trials", "3", "--policy", "strategy=wall", "--json")
	assert.Equal(t, 1, r.code)
	s, _ := decodeSummary(t, r.stdout, summaryKeys)
	assert.Equal(t, 3, s.Trials)
	assert.Equal(t, 3, s.Failed)
	require.Len(t, s.Failures, 3)
	for i, f := range s.Failures {
		assert.Equal(t, i, f.Index)
		assert.Equal(t, fmt.Sprintf("maze-%d", i), f.Trial)
		assert.Contains(t, f.Reason, "direction leads into a wall")
	}
	assert.Regexp(t, `^baton: 3 of 3 trials failed; the first, maze-0: .*direction leads into a wall.*$`, lastLine(r.stderr))

	r = runEnvs(t, envs, "run", "maze", "--trials", "2", "--policy", "strategy=wall")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "trials         2 on 2 workers (0 ended, 0 stopped, 2 failed)\n")
	assert.Contains(t, r.stdout, "\nfailed trials:\n  maze-0: ")
}

func TestRunCancelled(t *testing.T) {
	defer goleak.VerifyNone(t)

	// Cancelled before it starts: no trial runs.
	for _, mode := range []string{"--json", "--json=false"} {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		r := runCtx(ctx, shipped(t), "run", "maze", "--trials", "50", "--workers", "2", mode)
		assert.Equal(t, exitInterrupted, r.code)
		assert.Equal(t, "baton: interrupted: 0 of 50 trials finished, 0 stopped: context canceled\n", r.stderr)
		if mode == "--json" {
			s, obj := decodeSummary(t, r.stdout, summaryKeys)
			assert.JSONEq(t, "null", string(obj["success_rate"]), "no episode to judge")
			assert.True(t, s.Interrupted)
			assert.Zero(t, s.Trials)
			assert.Zero(t, s.Episodes)
			assert.Equal(t, agentSummary{}, s.Agents["strategy"], "the agents are listed all the same")
		} else {
			assert.Contains(t, r.stdout, "trials         0 of 50 on 2 workers, interrupted (0 ended, 0 stopped, 0 failed)\n")
		}
	}

	// Cancelled as it runs, by a policy (as Ctrl-C would): running trials stop,
	// no other starts, and the summary covers what ran.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int64
	envs := withPolicies(t, map[string]agent.Policy{
		"interrupt": agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
			if calls.Add(1) == 30 {
				cancel()
				return agent.RawAction{}, ctx.Err() // this trial stops
			}
			for i, ok := range mask {
				if ok {
					return agent.Discrete(int64(i)), nil
				}
			}
			return agent.RawAction{}, fmt.Errorf("no valid direction")
		}),
	})
	r := runCtx(ctx, envs, "run", "maze", "--trials", "1000", "--workers", "2", "--policy", "strategy=interrupt", "--json")
	assert.Equal(t, exitInterrupted, r.code)
	s, _ := decodeSummary(t, r.stdout, summaryKeys)
	assert.True(t, s.Interrupted)
	assert.Less(t, s.Trials, 1000)
	assert.Equal(t, s.Trials, s.Ended+s.Stopped+s.Failed)
	assert.Positive(t, s.Stopped, "the trial that was running when the interrupt came stopped")
	assert.Regexp(t, `^baton: interrupted: \d+ of 1000 trials finished, [12] stopped: context canceled$`, lastLine(r.stderr))
}

// Runs of ranges of a campaign's trials (--first, --trials) with --results sum up
// (--from-results) to the summary of the campaign run at once, timing aside.
func TestRunShardsFromResults(t *testing.T) {
	withMetrics := append(slices.Clone(summaryKeys), "metrics")
	for _, tt := range []struct {
		args, keys []string
	}{
		{[]string{"maze", "--episodes", "2", "--seed", "7"}, summaryKeys},
		{[]string{"webtest", "--policy", "motion=random", "--seed", "3"}, withMetrics},
	} {
		args, keys := tt.args, tt.keys
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			whole := runArgs(t, append([]string{"run", "--json", "--trials", "9"}, args...)...)
			require.Equal(t, 0, whole.code, whole.stderr)
			_, want := decodeSummary(t, whole.stdout, keys)
			merge := []string{"run", "--json", "--trials", "9"}
			for k, r := range [][2]int{{5, 4}, {0, 2}, {2, 3}} {
				res := filepath.Join(dir, fmt.Sprintf("r%d.jsonl", k))
				out := runArgs(t, append([]string{"run", "--json", "--first", strconv.Itoa(r[0]), "--trials", strconv.Itoa(r[1]),
					"--results", res, "--log", filepath.Join(dir, fmt.Sprintf("log%d", k)), "--log-shard", fmt.Sprintf("s%d", k)}, args...)...)
				require.Equal(t, 0, out.code, out.stderr)
				merge = append(merge, "--from-results", res)
			}
			got := runArgs(t, append(merge, args...)...)
			require.Equal(t, 0, got.code, got.stderr)
			_, obj := decodeSummary(t, got.stdout, keys)
			for _, m := range []map[string]json.RawMessage{want, obj} {
				delete(m, "wall_seconds")
				delete(m, "steps_per_second")
			}
			assert.Equal(t, want, obj)
		})
	}
}

func TestRunFromResultsBad(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "r.jsonl")
	r := runArgs(t, "run", "maze", "--first", "1", "--trials", "2", "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a trial missing", []string{"--trials", "3", "--from-results", res}, "--from-results: 2 of 3 trials found; trial 0 is missing"},
		{"a trial twice", []string{"--trials", "3", "--from-results", res, "--from-results", res}, "--from-results " + res + ": trial 1: found twice"},
		{"a trial outside", []string{"--trials", "2", "--from-results", res}, "--from-results " + res + ": trial 2: outside the campaign's 2 trials"},
		{"no file", []string{"--from-results", filepath.Join(dir, "none")}, "--from-results " + filepath.Join(dir, "none") + ": no such file or directory"},
		{"with --log", []string{"--from-results", res, "--log", dir}, "--from-results runs no trial: not with --log, --results or --first"},
		{"negative first", []string{"--first", "-1"}, "--first -1: want 0 or more"},
		{"first with a schedule", []string{"--first", "2", "--schedule", "x.json"}, "--first 2: not with --schedule, whose trials start at 0"},
		{"shard without a log", []string{"--log-shard", "a"}, "--log-shard a: needs --log DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run"}, tt.args...)
			if !slices.Contains(tt.args, "--schedule") {
				args = append(args, "maze")
			}
			checkBadInput(t, runArgs(t, args...), tt.want)
		})
	}
}
