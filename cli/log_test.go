package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// inspectKeys are the keys of baton inspect --json.
var inspectKeys = []string{"dir", "envs", "trials", "ended", "stopped", "failed", "unfinished", "episodes", "rows",
	"parts", "bytes", "successes", "success_rate", "agents", "metrics"}

// decodeInspect checks that stdout is one JSON object with exactly the documented keys
// and decodes it.
func decodeInspect(t *testing.T, stdout string) (logSummary, map[string]json.RawMessage) {
	t.Helper()
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON object on one line: %s", stdout)
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &obj))
	assert.Equal(t, slices.Sorted(slices.Values(inspectKeys)), slices.Sorted(maps.Keys(obj)))
	var agents map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj["agents"], &agents))
	for name, a := range agents {
		assert.Equal(t, []string{"episodes", "return", "rows"}, slices.Sorted(maps.Keys(a)), "agent %s", name)
		var ret map[string]float64
		require.NoError(t, json.Unmarshal(a["return"], &ret))
		assert.Equal(t, []string{"max", "mean", "min", "std"}, slices.Sorted(maps.Keys(ret)), "agent %s", name)
	}
	var metrics map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj["metrics"], &metrics))
	for name, m := range metrics {
		assert.Equal(t, []string{"episodes", "max", "mean", "min", "std"}, slices.Sorted(maps.Keys(m)), "metric %s", name)
	}
	var s logSummary
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&s))
	return s, obj
}

// logRun runs baton run with --log into a new directory and returns the directory and
// the --json summary.
func logRun(t *testing.T, envs *environments, args ...string) (string, runSummary) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "log")
	r := runEnvs(t, envs, append(append([]string{"run"}, args...), "--log", dir, "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	keys := append(slices.Clone(summaryKeys), "log")
	if args[0] == "webtest" { // an environment with metrics
		keys = append(keys, "metrics")
	}
	s, _ := decodeSummary(t, r.stdout, keys)
	return dir, s
}

// baton inspect of a run's log gives the figures of that run's summary, to the last
// bit: the same trials, episodes, success rate and returns per agent.
func TestInspectMatchesRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"maze on two workers", []string{"maze", "--trials", "12", "--episodes", "3", "--workers", "2", "--seed", "7"}},
		{"maze random strategy lz4", []string{"maze", "--trials", "9", "--policy", "strategy=random", "--log-compression", "lz4", "--workers", "3"}},
		{"maze procedure zstd", []string{"maze", "--trials", "5", "--env-config", `{"procedure": true}`, "--log-compression", "zstd"}},
		{"maze cut by max ticks", []string{"maze", "--trials", "4", "--max-ticks", "10", "--episodes", "2"}},
		{"cartpole", []string{"cartpole", "--trials", "6", "--policy", "cartpole=balance", "--max-ticks", "60", "--workers", "2"}},
		{"webtest with metrics", []string{"webtest", "--trials", "8", "--episodes", "2", "--workers", "2", "--policy", "motion=random"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envs := shipped(t)
			dir, run := logRun(t, envs, tt.args...)
			require.NotNil(t, run.Log)
			assert.Equal(t, dir, run.Log.Dir)
			assert.Positive(t, run.Log.Rows)
			assert.Positive(t, run.Log.Bytes)

			r := runEnvs(t, envs, "inspect", dir, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			in, obj := decodeInspect(t, r.stdout)
			assert.Equal(t, dir, in.Dir)
			assert.Equal(t, []string{run.Env}, in.Envs)
			assert.Equal(t, run.Trials, in.Trials)
			assert.Equal(t, run.Ended, in.Ended)
			assert.Equal(t, run.Episodes, in.Episodes)
			assert.Equal(t, run.Log.Rows, in.Rows, "the rows of every agent are the rows baton run wrote")
			assert.Equal(t, run.Log.Parts, in.Parts)
			assert.Equal(t, run.Log.Bytes, in.Bytes)
			assert.Equal(t, run.Successes, in.Successes)
			assert.Equal(t, run.SuccessRate, in.SuccessRate)
			if run.SuccessRate == nil {
				assert.JSONEq(t, "null", string(obj["success_rate"]))
			}
			require.Equal(t, slices.Sorted(maps.Keys(run.Agents)), slices.Sorted(maps.Keys(in.Agents)))
			var rows int64
			for name, want := range run.Agents {
				got := in.Agents[name]
				assert.Equal(t, want.Episodes, got.Episodes, name)
				assert.Equal(t, returnStats{Mean: want.Mean, Std: want.Std, Min: want.Min, Max: want.Max}, got.Return, name)
				assert.Positive(t, got.Rows, name)
				rows += got.Rows
			}
			assert.Equal(t, in.Rows, rows)
			if tt.args[0] == "webtest" {
				require.Len(t, in.Metrics, 2, "coverage and defects_found")
			}
			require.Equal(t, slices.Sorted(maps.Keys(run.Metrics)), slices.Sorted(maps.Keys(in.Metrics)))
			for name, want := range run.Metrics {
				got := in.Metrics[name]
				assert.Equal(t, want.Episodes, got.Episodes, name)
				assert.Equal(t, returnStats{Mean: want.Mean, Std: want.Std, Min: want.Min, Max: want.Max}, got.returnStats, name)
			}
		})
	}
}

func TestInspectText(t *testing.T) {
	envs := shipped(t)
	dir := filepath.Join(t.TempDir(), "maze")
	// One worker: each worker writes parts of its own, and how two split four trials
	// depends on the scheduler.
	r := runEnvs(t, envs, "run", "maze", "--trials", "4", "--episodes", "2", "--workers", "1", "--log", dir, "--log-compression", "lz4")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `\nlog            `+regexp.QuoteMeta(dir)+`: 595 rows in 4 parts, [0-9.]+ KiB \(compression lz4\)\n$`, r.stdout)

	r = runEnvs(t, envs, "inspect", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	got := lines(r.stdout)
	require.Len(t, got, 11, r.stdout)
	assert.Regexp(t, `^log            `+regexp.QuoteMeta(dir)+`: 4 parts, [0-9.]+ KiB$`, got[0])
	assert.Equal(t, []string{
		"env            maze",
		"trials         4 (4 ended, 0 stopped, 0 failed)",
		"episodes       8",
		"rows           595",
		"success rate   0.625 (5 of 8 episodes)",
		"",
		"agent          rows  episodes       mean        std        min        max",
		"strategy        153         8      0.625      0.484      0.000      1.000",
		"motion          442         8     20.762      3.109     17.100     25.500",
		"(mean, std, min and max of the agent's episode return over its complete episodes)",
	}, got[1:])

	// The same figures as the run's summary.
	r = runEnvs(t, envs, "run", "maze", "--trials", "4", "--episodes", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "strategy          8      0.625      0.484      0.000      1.000\n")
	assert.Contains(t, r.stdout, "motion            8     20.762      3.109     17.100     25.500\n")
}

func TestInspectPlot(t *testing.T) {
	envs := shipped(t)
	dir, _ := logRun(t, envs, "maze", "--trials", "30", "--episodes", "2", "--policy", "strategy=random")
	file := filepath.Join(t.TempDir(), "returns.png")
	r := runEnvs(t, envs, "inspect", dir, "--plot", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\nplot           "+file+"\n")

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), "a PNG file")
	assert.Greater(t, len(data), 20_000, "a drawing, not an empty canvas")
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 990, cfg.Width, "9 inches at 110 dpi")
	assert.Equal(t, 660, cfg.Height, "a panel of 3 inches per agent")

	// The same log draws the same picture; --json prints only the JSON.
	again := filepath.Join(t.TempDir(), "again.png")
	r = runEnvs(t, envs, "inspect", dir, "--plot", again, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	decodeInspect(t, r.stdout)
	data2, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, data, data2)
}

// The log of an environment with metrics (webtest: coverage, defects found) has them
// per episode: baton inspect prints them under the agents, as baton run does, and
// --plot draws a panel per metric after the agents'.
func TestInspectMetrics(t *testing.T) {
	envs := shipped(t)
	dir, run := logRun(t, envs, "webtest", "--trials", "6", "--episodes", "2")
	require.Len(t, run.Metrics, 2)
	file := filepath.Join(t.TempDir(), "webtest.png")
	r := runEnvs(t, envs, "inspect", dir, "--plot", file)
	require.Equal(t, 0, r.code, r.stderr)
	got := lines(r.stdout)
	i := slices.IndexFunc(got, func(l string) bool { return strings.HasPrefix(l, "metric ") })
	require.GreaterOrEqual(t, i, 0, r.stdout)
	require.Greater(t, len(got), i+3, r.stdout)
	assert.Regexp(t, `^metric\s+episodes\s+mean\s+std\s+min\s+max$`, got[i])
	for _, l := range got[i+1 : i+3] {
		name := strings.Fields(l)[0]
		m, ok := run.Metrics[name]
		require.True(t, ok, l)
		assert.Equal(t, fmt.Sprintf("%-13s  %8d  %9.3f  %9.3f  %9.3f  %9.3f", name, m.Episodes, m.Mean, m.Std, m.Min, m.Max), l)
	}
	assert.Equal(t, "(the environment's metrics over the complete episodes that measured them)", got[i+3])

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 4*330, cfg.Height, "a panel per agent (strategy, motion) and per metric")
}

// mazeRewarding returns the shipped environments, but the maze always opens with the
// motion agent rewarded 2 for a right move, whatever its configuration: a replay of a
// log of the shipped maze comes out differently.
func mazeRewarding(t *testing.T) *environments {
	t.Helper()
	base := shipped(t)
	reg := registry.New()
	for e := range base.reg.All() {
		if e.Name == "maze" {
			open := e.Open
			e.Open = func([]byte) (registry.Factory, error) {
				return open([]byte(`{"motion": {"reward_for_right_direction": 2}}`))
			}
		}
		require.NoError(t, reg.Register(e))
	}
	return &environments{reg: reg, prog: "baton"}
}

func TestReplay(t *testing.T) {
	envs := shipped(t)
	dir, run := logRun(t, envs, "maze", "--trials", "4", "--episodes", "2", "--workers", "2")

	r := runEnvs(t, envs, "replay", dir)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Equal(t, "replayed 4 trials, 595 steps: no mismatch\n", r.stdout)
	require.Equal(t, int64(595), run.Log.Rows)

	r = runEnvs(t, envs, "replay", dir, "--json")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `{"trials": 4, "steps": 595, "skipped": [], "diverged": [], "incomplete": [], "mismatches": [], "unlisted": []}`, r.stdout)

	// Replayed with other rewards: the motion agent's rewards differ.
	changed := mazeRewarding(t)
	r = runEnvs(t, changed, "replay", dir)
	assert.Equal(t, 1, r.code)
	out := lines(r.stdout)
	require.Greater(t, len(out), 1)
	for _, l := range out[:len(out)-1] {
		assert.Regexp(t, `^trial maze-[0-3] episode [01] tick \d+ motion_\d+: reward: logged -?[0-9.]+, replayed -?[0-9.]+$`, l)
	}
	assert.Regexp(t, `^replayed 4 trials, 595 steps: \d+ mismatches in 4 trials$`, out[len(out)-1])
	assert.Regexp(t, `^baton: replay `+regexp.QuoteMeta(dir)+`: \d+ mismatches in 4 of 4 trials\n$`, r.stderr)

	r = runEnvs(t, changed, "replay", dir, "--json", "--max-mismatches", "1")
	assert.Equal(t, 1, r.code)
	var rep replayReport
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rep))
	assert.Equal(t, 4, rep.Trials)
	assert.ElementsMatch(t, []string{"maze-0", "maze-1", "maze-2", "maze-3"}, rep.Diverged)
	assert.Empty(t, rep.Incomplete)
	require.Len(t, rep.Mismatches, 4, "one per trial")
	for _, m := range rep.Mismatches {
		assert.Equal(t, "reward", m.Field)
		assert.Nil(t, m.Element)
		assert.Regexp(t, `^motion_\d+$`, m.AgentID)
		assert.NotEqual(t, m.Logged, m.Replayed)
	}
	assert.Equal(t, "baton: replay "+dir+": 4 mismatches in 4 of 4 trials\n", r.stderr)

	// A log of an environment this baton does not have is bad input.
	noMaze := &environments{reg: registry.New(), prog: "baton"}
	for e := range envs.reg.All() {
		if e.Name != "maze" {
			require.NoError(t, noMaze.reg.Register(e))
		}
	}
	checkBadInput(t, runEnvs(t, noMaze, "replay", dir), "replay "+dir+`: the log holds trials of environment "maze", which baton does not have (choices: maze-flat, cartpole, webtest, rps)`)
}

// A log whose motion parts lost their last batches, as a killed writer's do, replays
// with its incomplete trials listed apart and no mismatch, before and after log
// recover; replayed with other rewards, the trials that differ are divergent, not
// incomplete, and the exit status is 1.
func TestReplayIncomplete(t *testing.T) {
	envs := shipped(t)
	dir, _ := logRun(t, envs, "maze", "--trials", "300", "--workers", "2")
	parts, err := filepath.Glob(filepath.Join(dir, "agent=motion", "*.arrow"))
	require.NoError(t, err)
	require.NotEmpty(t, parts)
	for _, p := range parts {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(p, fi.Size()*7/10))
	}

	decode := func(t *testing.T, out string) replayReport {
		t.Helper()
		var rep replayReport
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&rep))
		return rep
	}
	check := func(t *testing.T) {
		r := runEnvs(t, envs, "replay", dir)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Empty(t, r.stderr)
		out := lines(r.stdout)
		require.Len(t, out, 2, r.stdout)
		assert.Regexp(t, `^\d+ trials incomplete \(the log lost their last rows or end record; replayed as far as their rows go\): maze-\d+ \(rows stop at episode 0 tick \d+ (motion|strategy)_\d+\), `, out[0])
		assert.Regexp(t, `^replayed 300 trials, [\d,]+ steps: no mismatch; \d+ trials incomplete$`, out[1])

		r = runEnvs(t, envs, "replay", dir, "--json")
		assert.Equal(t, 0, r.code, r.stderr)
		rep := decode(t, r.stdout)
		assert.Empty(t, rep.Diverged)
		assert.Empty(t, rep.Mismatches)
		require.NotEmpty(t, rep.Incomplete)
		for _, in := range rep.Incomplete {
			assert.Equal(t, "ended", in.State, in.Trial)
			require.NotNil(t, in.Episode, in.Trial)
			require.NotNil(t, in.Tick, in.Trial)
		}
	}
	t.Run("as killed", check)

	// Replayed with other rewards, the trials whose rows differ are divergent.
	r := runEnvs(t, mazeRewarding(t), "replay", dir, "--json", "--max-mismatches", "1")
	assert.Equal(t, 1, r.code)
	rep := decode(t, r.stdout)
	require.NotEmpty(t, rep.Diverged)
	for _, in := range rep.Incomplete {
		assert.NotContains(t, rep.Diverged, in.Trial, "a trial is divergent or incomplete, not both")
	}
	assert.Len(t, rep.Mismatches, len(rep.Diverged))

	r = runEnvs(t, envs, "log", "recover", dir)
	require.Equal(t, 0, r.code, r.stderr)
	t.Run("recovered", check)
}

// A part whose writer was killed lacks its footer and may end in a torn batch: inspect
// reads its complete batches, log recover rewrites it with them, and then every part
// has its footer.
func TestLogRecover(t *testing.T) {
	envs := shipped(t)
	// One worker: one part per agent; the motion agent's holds three batches of 4,096
	// rows or fewer.
	dir, run := logRun(t, envs, "maze", "--trials", "250", "--workers", "1")
	parts, err := filepath.Glob(filepath.Join(dir, "agent=motion", "*.arrow"))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	before := inspectJSON(t, envs, dir)
	motion := before.Agents["motion"].Rows
	require.Greater(t, motion, int64(2*4096), "three batches")

	r := runEnvs(t, envs, "log", "recover", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "nothing to recover: every part is whole\n", r.stdout)

	// Cut the part in its second batch, as a kill would.
	st, err := os.Stat(parts[0])
	require.NoError(t, err)
	require.NoError(t, os.Truncate(parts[0], st.Size()/2))
	rel := "agent=motion/" + filepath.Base(parts[0])

	r = runEnvs(t, envs, "inspect", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\n               1 part without a footer (a writer was killed): baton log recover "+dir+" rewrites them for other readers\n")
	cut := inspectJSON(t, envs, dir)
	assert.Equal(t, int64(4096), cut.Agents["motion"].Rows, "the first batch is whole")
	assert.Equal(t, before.Agents["strategy"], cut.Agents["strategy"])

	r = runEnvs(t, envs, "log", "recover", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, rel+": rewritten with its footer: 1 batch, 4,096 rows kept (cut: unexpected EOF)\nrecovered 1 part: 4,096 rows kept\n", r.stdout)

	after := inspectJSON(t, envs, dir)
	assert.Equal(t, int64(4096), after.Agents["motion"].Rows)
	assert.Equal(t, before.Episodes, after.Episodes, "the episodes table is whole")
	assert.Equal(t, run.Log.Rows-motion+4096, after.Rows)
	r = runEnvs(t, envs, "log", "recover", dir, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `{"parts": [], "rows": 0, "moved": 0}`, r.stdout)
	r = runEnvs(t, envs, "inspect", dir)
	assert.NotContains(t, r.stdout, "footer")

	// A part with no complete batch is moved aside, never deleted.
	require.NoError(t, os.Truncate(parts[0], 100))
	r = runEnvs(t, envs, "log", "recover", dir, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		Parts []recoveredPart `json:"parts"`
		Rows  int64           `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Len(t, rep.Parts, 1)
	assert.Equal(t, rel, rep.Parts[0].Path)
	assert.True(t, rep.Parts[0].Removed)
	assert.Zero(t, rep.Parts[0].Rows)
	assert.Equal(t, "_damaged/"+rel, rep.Parts[0].Moved)
	assert.NoFileExists(t, parts[0])
	assert.FileExists(t, filepath.Join(dir, "_damaged", rel))
}

func inspectJSON(t *testing.T, envs *environments, dir string) logSummary {
	t.Helper()
	r := runEnvs(t, envs, "inspect", dir, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	s, _ := decodeInspect(t, r.stdout)
	return s
}

// An interrupted baton run --log closes its log: every part has its footer, and the
// stopped trial is in it.
func TestRunLogInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int64
	envs := withPolicies(t, map[string]agent.Policy{
		"interrupt": agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
			if calls.Add(1) == 200 {
				cancel()
				return agent.RawAction{}, ctx.Err()
			}
			for i, ok := range mask {
				if ok {
					return agent.Discrete(int64(i)), nil
				}
			}
			return agent.RawAction{}, fmt.Errorf("no valid direction")
		}),
	})
	dir := filepath.Join(t.TempDir(), "log")
	r := runCtx(ctx, envs, "run", "maze", "--trials", "1000", "--workers", "2", "--policy", "strategy=interrupt", "--log", dir, "--json")
	assert.Equal(t, exitInterrupted, r.code)
	s, _ := decodeSummary(t, r.stdout, append(slices.Clone(summaryKeys), "log"))
	require.True(t, s.Interrupted)
	require.NotNil(t, s.Log)

	in := inspectJSON(t, envs, dir)
	assert.Equal(t, s.Trials, in.Trials)
	assert.Equal(t, s.Stopped, in.Stopped)
	assert.Positive(t, in.Stopped)
	assert.Zero(t, in.Unfinished)
	assert.Equal(t, s.Log.Rows, in.Rows)
	r = runEnvs(t, envs, "log", "recover", dir)
	assert.Equal(t, "nothing to recover: every part is whole\n", r.stdout)
}

func TestLogBadInput(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, []byte("not a log"), 0o644))
	empty := filepath.Join(tmp, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	missing := filepath.Join(tmp, "missing")
	logged, _ := logRun(t, shipped(t), "maze", "--trials", "1")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"inspect without a directory", []string{"inspect"}, "inspect needs a log directory (baton run ENV --log DIR writes one)"},
		{"inspect two directories", []string{"inspect", empty, missing}, fmt.Sprintf("inspect takes one log directory, got [%q %q]", empty, missing)},
		{"inspect a missing directory", []string{"inspect", missing}, "inspect " + missing + ": no such directory"},
		{"inspect a file", []string{"inspect", file}, "inspect " + file + ": not a directory (want a log's directory, as baton run ENV --log DIR writes)"},
		{"inspect no log", []string{"inspect", empty}, "inspect " + empty + ": not a baton log: no part in agent=NAME, _trials, _episodes or _rewards (baton run ENV --log DIR writes one)"},
		{"inspect plot not png", []string{"inspect", logged, "--plot", "returns.svg"}, "--plot returns.svg: want a file name ending in .png"},
		{"replay a missing directory", []string{"replay", missing}, "replay " + missing + ": no such directory"},
		{"replay no log", []string{"replay", empty}, "replay " + empty + ": not a baton log: ..."},
		{"replay negative max", []string{"replay", logged, "--max-mismatches", "-1"}, "--max-mismatches -1: want 0 (no limit) or more"},
		{"log without command", []string{"log"}, "log needs a command (choices: recover)"},
		{"log unknown command", []string{"log", "repair", logged}, `unknown command "repair" for log (choices: recover)`},
		{"recover a missing directory", []string{"log", "recover", missing}, "log recover " + missing + ": no such directory"},
		{"recover no log", []string{"log", "recover", empty}, "log recover " + empty + ": not a baton log: ..."},
		{"bad compression", []string{"run", "maze", "--log", missing, "--log-compression", "brotli"}, `--log-compression "brotli": want none, lz4 or zstd`},
		{"compression without log", []string{"run", "maze", "--log-compression", "zstd"}, "--log-compression zstd: needs --log DIR"},
		{"log into a log", []string{"run", "maze", "--log", logged}, "--log " + logged + " already holds a log (give a new directory; baton inspect " + logged + " reads that one)"},
		{"log into a file", []string{"run", "maze", "--log", file}, "--log " + file + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBadInput(t, runArgs(t, tt.args...), tt.want)
		})
	}
	assert.NoDirExists(t, missing, "bad input writes no log")
}

// A log whose trials table lost rows, or all of it, does not replay as a success:
// the trials that have steps but no trials row are listed and the exit status is 1.
func TestReplayMissingTrials(t *testing.T) {
	envs := shipped(t)
	// One worker: one part of the trials table, of two batches (two rows a trial).
	dir, _ := logRun(t, envs, "maze", "--trials", "2500", "--workers", "1")
	trials, err := filepath.Glob(filepath.Join(dir, "_trials", "*.arrow"))
	require.NoError(t, err)
	require.Len(t, trials, 1)
	st, err := os.Stat(trials[0])
	require.NoError(t, err)
	require.NoError(t, os.Truncate(trials[0], st.Size()*3/4)) // in its second batch

	r := runEnvs(t, envs, "replay", dir)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Regexp(t, `; \d+ trials not in the trials table, not replayed\n$`, r.stdout)
	assert.Regexp(t, `^baton: replay `+regexp.QuoteMeta(dir)+`: trials missing from the trials table: in .*, \d+ trials have step rows but no row in the trials table \(maze-\d+, `, r.stderr)
	r = runEnvs(t, envs, "replay", dir, "--json")
	assert.Equal(t, 1, r.code, r.stderr)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.NotEmpty(t, rep.Unlisted)
	assert.Greater(t, rep.Trials, 1000, "the trials of the first batch")
	assert.Equal(t, 2500, rep.Trials+len(rep.Unlisted), "every trial replayed or listed")

	require.NoError(t, os.RemoveAll(filepath.Join(dir, "_trials")))
	r = runEnvs(t, envs, "replay", dir)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no trials table (_trials)")
}

// A file named as a part that is not an Arrow file is an error naming it for inspect
// and replay alike, and log recover moves it aside.
func TestLogStrayFile(t *testing.T) {
	envs := shipped(t)
	dir, _ := logRun(t, envs, "maze", "--trials", "3")
	stray := filepath.Join(dir, "agent=motion", "part-99999.arrow")
	require.NoError(t, os.WriteFile(stray, []byte("not an arrow file at all"), 0o644))
	for _, cmd := range []string{"inspect", "replay"} {
		r := runEnvs(t, envs, cmd, dir)
		assert.NotEqual(t, 0, r.code, cmd)
		assert.Contains(t, r.stderr, stray, cmd)
		assert.Contains(t, r.stderr, "does not start with the Arrow magic", cmd)
	}
	r := runEnvs(t, envs, "log", "recover", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "agent=motion/part-99999.arrow: no batch to keep")
	assert.Contains(t, r.stdout, "moved to _damaged/agent=motion/part-99999.arrow")
	assert.NoFileExists(t, stray)
	r = runEnvs(t, envs, "replay", dir)
	assert.Equal(t, 0, r.code, r.stderr)
}

// A second writer of a log is refused while the first holds it, naming the
// directory and the holder's process id; recover is refused too.
func TestRunLogLocked(t *testing.T) {
	envs := shipped(t)
	dir := filepath.Join(t.TempDir(), "log")
	ds, err := datalog.NewDataset(dir) // another writer, in this process
	require.NoError(t, err)
	r := runEnvs(t, envs, "run", "maze", "--trials", "3", "--log", dir)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, dir+" is being written by process "+strconv.Itoa(os.Getpid()))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, e.IsDir(), "no part written: %s", e.Name())
	}
	require.NoError(t, ds.Close())
	r = runEnvs(t, envs, "run", "maze", "--trials", "3", "--log", dir)
	assert.Equal(t, 0, r.code, r.stderr)

	ds, err = datalog.NewDataset(dir)
	require.NoError(t, err)
	r = runEnvs(t, envs, "log", "recover", dir)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "is being written by process")
	require.NoError(t, ds.Close())
}
