package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestMain checks that no test leaves a goroutine behind (baton run starts workers).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// result is what one run of the command printed.
type result struct {
	stdout, stderr string
	code           int
}

// runArgs runs the command line with the environments baton ships.
func runArgs(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// runInput runs the command line with the environments baton ships, stdin reading
// input.
func runInput(t *testing.T, input string, args ...string) result {
	t.Helper()
	envs := shipped(t)
	var stdout, stderr bytes.Buffer
	code := runWithInput(t.Context(), envs, args, strings.NewReader(input), &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// runEnvs runs the command line with the given environments.
func runEnvs(t *testing.T, envs *environments, args ...string) result {
	t.Helper()
	return runCtx(t.Context(), envs, args...)
}

func runCtx(ctx context.Context, envs *environments, args ...string) result {
	var stdout, stderr bytes.Buffer
	code := runWith(ctx, envs, args, &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// shipped returns the environments baton ships.
func shipped(t testing.TB) *environments {
	t.Helper()
	envs, err := newEnvironments("baton", nil)
	require.NoError(t, err)
	return envs
}

// golden compares got with the file testdata/name, which -update rewrites.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli -update to write the golden files")
	assert.Equal(t, string(want), got)
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func lastLine(s string) string { l := lines(s); return l[len(l)-1] }

// returnsOf reads the text summary: the returns by agent id and by agent name.
func returnsOf(t *testing.T, stdout string) (byID, byName map[string]string) {
	t.Helper()
	byID, byName = map[string]string{}, map[string]string{}
	var cur map[string]string
	for _, l := range lines(stdout) {
		switch {
		case l == "returns by agent id:":
			cur = byID
		case l == "returns by agent:":
			cur = byName
		case cur != nil && strings.HasPrefix(l, "  "):
			f := strings.Fields(l)
			require.Len(t, f, 2, l)
			cur[f[0]] = f[1]
		default:
			cur = nil
		}
	}
	return byID, byName
}

func TestPlayText(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		golden    string
		finalLine string
		returns   map[string]string // by agent name
	}{
		{
			name:      "seed 1",
			args:      []string{"play", "maze", "--seed", "1"},
			golden:    "play-maze-seed1.txt",
			finalLine: "episode over after 73 ticks: strategy_0 truncated",
			returns:   map[string]string{"strategy": "0.000", "motion": "25.500"},
		},
		{
			name:      "default seed is 1",
			args:      []string{"play", "maze"},
			golden:    "play-maze-seed1.txt",
			finalLine: "episode over after 73 ticks: strategy_0 truncated",
		},
		{
			name:      "oracle and forward",
			args:      []string{"play", "maze", "--policy", "strategy=oracle", "--policy", "motion=forward"},
			golden:    "play-maze-forward.txt",
			finalLine: "episode over after 20 ticks: strategy_0 terminated",
			returns:   map[string]string{"strategy": "1.000", "motion": "13.000"},
		},
		{
			name:      "max ticks",
			args:      []string{"play", "maze", "--max-ticks", "3"},
			finalLine: "episode over after 3 ticks: strategy_0 truncated",
		},
		{
			name:      "one tick",
			args:      []string{"play", "maze", "--max-ticks", "1"},
			finalLine: "episode over after 1 tick: strategy_0 truncated",
		},
		{
			name:      "random strategy",
			args:      []string{"play", "maze", "--policy", "strategy=random", "--seed", "7"},
			finalLine: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, tt.args...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, "tick  acting      action   agent        reward  span  status      info\n"), r.stdout)
			assert.Contains(t, r.stdout, "   0  -           -        strategy_0    0.000     0  start       [4 9] LEFT\n")
			if tt.finalLine != "" {
				assert.Equal(t, tt.finalLine, lastLine(r.stdout))
			} else {
				assert.Regexp(t, `^episode over after \d+ ticks?: strategy_0 (terminated|truncated)$`, lastLine(r.stdout))
			}
			if tt.returns != nil {
				_, byName := returnsOf(t, r.stdout)
				assert.Equal(t, tt.returns, byName)
			}
			if tt.golden != "" {
				golden(t, tt.golden, r.stdout)
			}
		})
	}
}

// The full reference path with the oracle and a motion agent that only moves forward
// (envs/maze TestReferencePathWithMotionAgent), read from the JSON output.
func TestOracleForwardPath(t *testing.T) {
	r := runArgs(t, "play", "maze", "--policy", "strategy=oracle", "--policy", "motion=forward", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	reps := decode(t, r.stdout)

	var motionIDs []string
	var strategyActions []int64
	var ends [][2]int
	strategyReturn := 0.0
	for _, rep := range reps {
		if rep.Agent == maze.StrategyName {
			strategyReturn += rep.Reward
			if !rep.Start {
				require.NotNil(t, rep.Action, "a settled strategy decision carries its action")
				var a int64
				require.NoError(t, json.Unmarshal(*rep.Action, &a))
				strategyActions = append(strategyActions, a)
				ends = append(ends, rep.Info.Position)
				assert.Nil(t, rep.ParentAgentID)
			}
		}
		if rep.Agent == maze.MotionName {
			require.NotNil(t, rep.ParentAgentID)
			assert.Equal(t, "strategy_0", *rep.ParentAgentID)
			if rep.Start {
				motionIDs = append(motionIDs, rep.AgentID)
			} else {
				assert.JSONEq(t, "1", string(*rep.Action), "forward")
				assert.Equal(t, 1.0, rep.Reward)
				assert.Equal(t, 1, rep.SpanTicks)
			}
		}
	}
	assert.Equal(t, []string{"motion_0", "motion_1", "motion_2", "motion_3", "motion_4", "motion_5", "motion_6"}, motionIDs)
	left, down, up := int64(maze.Left), int64(maze.Down), int64(maze.Up)
	assert.Equal(t, []int64{left, down, left, up, up, left, up}, strategyActions)
	assert.Equal(t, [][2]int{{4, 8}, {6, 8}, {6, 5}, {4, 5}, {1, 5}, {1, 4}, {0, 4}}, ends)
	assert.Equal(t, 1.0, strategyReturn)

	last := reps[len(reps)-1]
	assert.Equal(t, "strategy_0", last.AgentID)
	assert.Equal(t, [2]int{0, 4}, last.Info.Position)
	assert.Equal(t, "UP", last.Info.Heading)
	assert.True(t, last.Terminated)
	assert.False(t, last.Truncated)
	assert.Equal(t, 1.0, last.Reward)
	assert.Equal(t, 2, last.SpanTicks)
	assert.Equal(t, 20, last.Tick)
}

// jsonLine is a --json line with the maze's info.
type jsonLine struct {
	Tick          int              `json:"tick"`
	ActingAgentID *string          `json:"acting_agent_id"`
	AgentID       string           `json:"agent_id"`
	Agent         string           `json:"agent"`
	ParentAgentID *string          `json:"parent_agent_id"`
	Action        *json.RawMessage `json:"action"`
	ActionName    *string          `json:"action_name"`
	Reward        float64          `json:"reward"`
	SpanTicks     int              `json:"span_ticks"`
	Terminated    bool             `json:"terminated"`
	Truncated     bool             `json:"truncated"`
	Start         bool             `json:"start"`
	Info          maze.Info        `json:"info"`
}

var jsonKeys = []string{"tick", "acting_agent_id", "agent_id", "agent", "parent_agent_id", "action", "action_name", "reward", "span_ticks", "terminated", "truncated", "start", "info"}

// decode checks that every line of --json output is a JSON object with exactly the
// documented keys, and decodes them.
func decode(t *testing.T, stdout string) []jsonLine {
	t.Helper()
	require.True(t, strings.HasSuffix(stdout, "\n"))
	var out []jsonLine
	for i, l := range lines(stdout) {
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &obj), "line %d: %s", i+1, l)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range obj {
				if !yield(k) {
					return
				}
			}
		})
		require.Equal(t, slices.Sorted(slices.Values(jsonKeys)), keys, "line %d", i+1)
		var rep jsonLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&rep), "line %d", i+1)
		out = append(out, rep)
	}
	return out
}

func TestPlayJSON(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"seed 1", nil},
		{"seed 5", []string{"--seed", "5"}},
		{"random strategy", []string{"--policy", "strategy=random", "--seed", "3"}},
		{"procedure", []string{"--env-config", `{"procedure": true}`}},
		{"max ticks", []string{"--max-ticks", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, append([]string{"play", "maze", "--json"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr, "no summary in JSON mode")
			reps := decode(t, r.stdout)
			require.NotEmpty(t, reps)

			first := reps[0]
			assert.Equal(t, 0, first.Tick)
			assert.Nil(t, first.ActingAgentID, "no agent acts in the reset")
			assert.True(t, first.Start)

			tick := 0
			actions := 0
			for i, rep := range reps {
				assert.GreaterOrEqual(t, rep.Tick, tick, "line %d", i+1)
				tick = rep.Tick
				if rep.Tick > 0 {
					require.NotNil(t, rep.ActingAgentID, "line %d", i+1)
				}
				// action is null exactly on start reports.
				assert.Equal(t, rep.Start, rep.Action == nil || string(*rep.Action) == "null", "line %d", i+1)
				if !rep.Start {
					actions++
					require.NotNil(t, rep.ActionName, "line %d", i+1)
					assert.Contains(t, []string{"UP", "RIGHT", "DOWN", "LEFT", "FORWARD", "BACKWARD"}, *rep.ActionName, "line %d", i+1)
				} else {
					assert.Nil(t, rep.ActionName, "line %d", i+1)
					assert.Zero(t, rep.Reward)
					assert.Zero(t, rep.SpanTicks)
				}
			}
			assert.Equal(t, tick, actions, "every action of the episode appears once, on the report that settles it")
			last := reps[len(reps)-1]
			assert.Equal(t, "strategy_0", last.AgentID)
			assert.True(t, last.Terminated || last.Truncated)
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"play", "maze", "--seed", "42"},
		{"play", "maze", "--seed", "42", "--json"},
		{"play", "maze", "--seed", "9", "--policy", "strategy=random", "--env-config", `{"generate": {"rows": 15, "cols": 21, "seed": 4}}`},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			a, b := runArgs(t, args...), runArgs(t, args...)
			require.Equal(t, 0, a.code, a.stderr)
			assert.Equal(t, a, b)
		})
	}
	one, two := runArgs(t, "play", "maze", "--seed", "1"), runArgs(t, "play", "maze", "--seed", "2")
	assert.NotEqual(t, one.stdout, two.stdout, "the seed drives the random motion policy")
}

func TestBadInput(t *testing.T) {
	configFields := "(fields: map, generate{rows, cols, seed, per_episode}, obs_side, procedure, strategy{max_steps, reward_for_reaching_goal}, motion{max_steps, reward_for_right_direction, reward_for_wrong_direction, reward_for_progress})"
	tests := []struct {
		name string
		args []string
		// want is the whole stderr line after "baton: "; "..." stands for any text.
		want string
	}{
		{"no command", nil, "missing command (choices: bench, envs, graph, inspect, log, models, new, play, replay, run, serve)"},
		{"unknown command", []string{"plya"}, `unknown command "plya" (choices: bench, envs, graph, inspect, log, models, new, play, replay, run, serve)`},
		{"no environment", []string{"play"}, "play needs an environment (choices: maze, maze-flat, cartpole, webtest, rps)"},
		{"unknown environment", []string{"play", "mazes"}, `unknown environment "mazes" (choices: maze, maze-flat, cartpole, webtest, rps)`},
		{"two environments", []string{"play", "maze", "maze"}, `play takes one environment, got ["maze" "maze"] (choices: maze, maze-flat, cartpole, webtest, rps)`},
		{"unknown policy", []string{"play", "maze", "--policy", "motion=foo"}, `--policy motion=foo: unknown policy "foo" for agent motion of maze (choices: forward, random)`},
		{"unknown strategy policy", []string{"play", "maze", "--policy", "strategy=forward"}, `--policy strategy=forward: unknown policy "forward" for agent strategy of maze (choices: oracle, random)`},
		{"unknown cartpole policy", []string{"play", "cartpole", "--policy", "cartpole=oracle"}, `--policy cartpole=oracle: unknown policy "oracle" for agent cartpole of cartpole (choices: balance, random)`},
		{"unknown agent", []string{"play", "maze", "--policy", "walker=random"}, `--policy walker=random: unknown agent "walker" of maze (choices: strategy, motion)`},
		{"no motion agent in the procedure variant", []string{"play", "maze", "--env-config", `{"procedure":true}`, "--policy", "motion=forward"},
			`--policy motion=forward: unknown agent "motion" of maze (choices: strategy)`},
		{"policy without =", []string{"play", "maze", "--policy", "motion"}, `--policy "motion": want AGENT=POLICY (agents of maze: strategy, motion)`},
		{"policy without name", []string{"play", "maze", "--policy", "=random"}, `--policy "=random": want AGENT=POLICY (agents of maze: strategy, motion)`},
		{"two policies for one agent", []string{"play", "maze", "--policy", "motion=random", "--policy", "motion=forward"},
			`--policy gives agent "motion" two policies, random and forward (choose one)`},
		{"negative seed", []string{"play", "maze", "--seed", "-1"},
			`invalid argument "-1" for "--seed" flag: strconv.ParseUint: parsing "-1": invalid syntax (--seed: seed of the environment's reset and of the random policies, an integer N from 0 to 18446744073709551615)`},
		{"seed without value", []string{"play", "maze", "--seed"},
			`flag needs an argument: --seed (--seed: seed of the environment's reset and of the random policies, an integer N from 0 to 18446744073709551615)`},
		{"unknown flag", []string{"play", "maze", "--sed", "1"}, "unknown flag: --sed (flags of baton play: --env-config, --help, --human, --json, --log, --max-ticks, --policy, --seed)"},
		{"unknown root flag", []string{"--verbose"}, "unknown flag: --verbose (flags of baton: --help)"},
		{"bad max ticks", []string{"play", "maze", "--max-ticks", "x"},
			`invalid argument "x" for "--max-ticks" flag: strconv.ParseInt: parsing "x": invalid syntax (--max-ticks: truncate the episode after N environment steps; 0 keeps only the environment's own limits)`},
		{"negative max ticks", []string{"play", "maze", "--max-ticks", "-2"}, "--max-ticks -2: want 0 (no limit beyond the environment's own) or more"},
		// Messages from the maze package: only their stable parts are checked.
		{"env-config not JSON", []string{"play", "maze", "--env-config", "{bad"},
			"bad --env-config for maze: maze: invalid configuration: ... " + configFields},
		{"env-config unknown field", []string{"play", "maze", "--env-config", `{"moton": {}}`},
			`bad --env-config for maze: maze: invalid configuration: ...moton... ` + configFields},
		{"env-config bad value", []string{"play", "maze", "--env-config", `{"strategy": {"max_steps": -1}, "motion": {"max_steps": -2}}`},
			"bad --env-config for maze: maze: invalid configuration: ...strategy.max_steps...motion.max_steps... " + configFields},
		{"env-config bad map", []string{"play", "maze", "--env-config", `{"map": "2 0\n3 4"}`},
			"bad --env-config for maze: maze: invalid map: line 2...4... " + configFields},
		{"env-config bad generate", []string{"play", "maze", "--env-config", `{"generate": {"rows": 3, "cols": 3}}`},
			"bad --env-config for maze: maze: invalid map: ... " + configFields},
		{"env-config missing file", []string{"play", "maze", "--env-config", "@testdata/no-such-file.json"},
			`--env-config "testdata/no-such-file.json": cannot be opened: open testdata/no-such-file.json: no such file or directory`},
		{"cartpole env-config", []string{"play", "cartpole", "--env-config", `{"max_steps": -1}`},
			"bad --env-config for cartpole: ...max_steps... (fields: max_steps, kinematics_integrator)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBadInput(t, runArgs(t, tt.args...), tt.want)
		})
	}
}

// checkBadInput checks that r is a usage error: exit status 2, nothing on stdout, and
// one line on stderr matching want, where "..." stands for any text.
func checkBadInput(t *testing.T, r result, want string) {
	t.Helper()
	assert.Equal(t, 2, r.code)
	assert.Empty(t, r.stdout)
	assert.Regexp(t, "^baton: "+strings.ReplaceAll(regexp.QuoteMeta(want), `\.\.\.`, ".*")+"\n$", r.stderr, "one line naming the problem and the choices")
}

func TestEnvConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "maze.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"map": "2 1 3"}`), 0o644))
	tests := []struct {
		name      string
		args      []string
		finalLine string
		check     func(t *testing.T, stdout string)
	}{
		{
			name:      "procedure variant",
			args:      []string{"--env-config", `{"procedure": true}`},
			finalLine: "episode over after 7 ticks: strategy_0 terminated",
			check: func(t *testing.T, stdout string) {
				assert.Contains(t, stdout, "   7  strategy_0  UP       strategy_0    1.000     1  terminated  [0 4] UP\n")
				byID, byName := returnsOf(t, stdout)
				assert.Equal(t, map[string]string{"strategy_0": "1.000"}, byID)
				assert.Equal(t, map[string]string{"strategy": "1.000"}, byName)
			},
		},
		{
			name:      "map from a file",
			args:      []string{"--env-config", "@" + file, "--policy", "motion=forward"},
			finalLine: "episode over after 4 ticks: strategy_0 terminated",
			check: func(t *testing.T, stdout string) {
				assert.Contains(t, stdout, "[0 2] RIGHT")
			},
		},
		{
			name:      "strategy step limit",
			args:      []string{"--env-config", `{"strategy": {"max_steps": 2}}`, "--policy", "motion=forward"},
			finalLine: "episode over after 5 ticks: strategy_0 truncated",
		},
		{
			name:      "rewards",
			args:      []string{"--env-config", `{"strategy": {"reward_for_reaching_goal": 10}, "motion": {"reward_for_right_direction": 0.5}}`, "--policy", "motion=forward"},
			finalLine: "episode over after 20 ticks: strategy_0 terminated",
			check: func(t *testing.T, stdout string) {
				_, byName := returnsOf(t, stdout)
				assert.Equal(t, map[string]string{"strategy": "10.000", "motion": "6.500"}, byName)
			},
		},
		{
			name:      "empty config means the defaults",
			args:      []string{"--env-config", " ", "--policy", "motion=forward"},
			finalLine: "episode over after 20 ticks: strategy_0 terminated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, append([]string{"play", "maze"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, tt.finalLine, lastLine(r.stdout))
			if tt.check != nil {
				tt.check(t, r.stdout)
			}
		})
	}
}

// withPolicies returns the shipped environments with extra strategy policies for the
// maze.
func withPolicies(t *testing.T, extra map[string]agent.Policy) *environments {
	t.Helper()
	base := shipped(t)
	reg := registry.New()
	for e := range base.reg.All() {
		if e.Name == "maze" {
			e.Agents = slices.Clone(e.Agents)
			a := &e.Agents[0]
			require.Equal(t, maze.StrategyName, a.Name)
			a.Policies = slices.Clone(a.Policies)
			for _, name := range slices.Sorted(maps.Keys(extra)) {
				p := extra[name]
				a.Policies = append(a.Policies, registry.PolicyEntry{Name: name, New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
					return p, nil
				}})
			}
		}
		require.NoError(t, reg.Register(e))
	}
	return &environments{reg: reg, prog: "baton"}
}

func TestRuntimeErrors(t *testing.T) {
	envs := withPolicies(t, map[string]agent.Policy{
		"wall": agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
			return agent.Discrete(int64(maze.Down)), nil // a wall below the start
		}),
		"outside": agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
			return agent.Discrete(9), nil
		}),
		"broken": agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
			return agent.RawAction{}, errors.New("out of ideas")
		}),
	})
	tests := []struct {
		policy, want string
	}{
		{"wall", "baton: tick 0: env: action invalid in this state: agent strategy_0, action 2: maze: direction leads into a wall: strategy chose DOWN at (4, 9)\n"},
		{"outside", "baton: tick 0: env: action outside the action space: agent strategy_0, action 9: "},
		{"broken", "baton: tick 0: policy of strategy_0: out of ideas\n"},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			for _, mode := range [][]string{nil, {"--json"}} {
				r := runEnvs(t, envs, append([]string{"play", "maze", "--policy", "strategy=" + tt.policy}, mode...)...)
				assert.Equal(t, 1, r.code)
				assert.True(t, strings.HasPrefix(r.stderr, tt.want), r.stderr)
				assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
				assert.NotEmpty(t, r.stdout, "the steps before the failure are printed")
			}
		})
	}
}

func TestPlayInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := runCtx(ctx, shipped(t), "play", "maze")
	assert.Equal(t, exitInterrupted, r.code)
	assert.Equal(t, "baton: tick 0: context canceled\n", r.stderr)
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runArgs(t, args...)
			assert.Equal(t, 0, r.code)
			assert.Empty(t, r.stderr)
			for _, cmd := range []string{"run", "play", "envs", "graph", "inspect", "replay", "log"} {
				assert.Regexp(t, "(?m)^  "+cmd+" ", r.stdout)
			}
		})
	}
	for _, cmd := range []string{"run", "play", "envs", "graph", "inspect", "replay", "log", "log recover"} {
		for _, args := range [][]string{append(strings.Fields(cmd), "--help"), append([]string{"help"}, strings.Fields(cmd)...)} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := runArgs(t, args...)
				assert.Equal(t, 0, r.code)
				assert.Empty(t, r.stderr)
				assert.Contains(t, r.stdout, "baton "+cmd)
			})
		}
	}
	for _, cmd := range []string{"run", "play"} {
		r := runArgs(t, cmd, "--help")
		assert.Contains(t, r.stdout, "--policy strategy=oracle|random (default oracle)")
		assert.Contains(t, r.stdout, "--policy motion=forward|random (default random)")
		assert.Contains(t, r.stdout, "--policy cartpole=balance|random (default random)")
		assert.Contains(t, r.stdout, "--env-config fields: max_steps, kinematics_integrator")
	}
}

func TestJSONFields(t *testing.T) {
	type inner struct {
		A int `json:"a"`
		B int `json:"-"`
		C int
	}
	type outer struct {
		X  string `json:"x,omitempty"`
		In *inner `json:"in"`
		_  int
	}
	assert.Equal(t, "x, in{a, C}", jsonFields(reflect.TypeFor[outer]()))
}
