package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counter is a single-agent test environment that ignores the tick limit and defines
// no success: each step moves one tile and is rewarded its action; the episode ends
// after 100 steps.
type counter struct {
	pos int
	obs [1]float32
}

func (c *counter) Spec() env.Spec {
	return env.Spec{Name: "counter", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 100)), ActionSpace: spaces.Discrete{N: 3}}
}

func (c *counter) Reset(uint64) (env.Step, error) {
	c.pos, c.obs[0] = 0, 0
	return env.Step{Obs: c.obs[:]}, nil
}

func (c *counter) Step(a agent.RawAction) (env.Step, error) {
	if c.pos >= 100 {
		return env.Step{}, errors.New("counter: episode over")
	}
	c.pos++
	c.obs[0] = float32(c.pos)
	return env.Step{Obs: c.obs[:], Reward: float64(a.Int), Terminated: c.pos >= 100}, nil
}

func (c *counter) Info() any { return map[string]int{"pos": c.pos} }

// withCounter returns the shipped environments and the counter.
func withCounter(t *testing.T) *environments {
	t.Helper()
	envs := shipped(t)
	require.NoError(t, envs.reg.Register(registry.Entry{
		Name:        "counter",
		Description: "counts",
		Open: func([]byte) (registry.Factory, error) {
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
				return registry.SingleAgent(&counter{}), nil
			}), nil
		},
		Agents: []registry.AgentEntry{{Name: "counter", Policies: []registry.PolicyEntry{{Name: "two", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
			return agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(2), nil }), nil
		}}}}},
	}))
	return envs
}

func TestEnvsText(t *testing.T) {
	r := runArgs(t, "envs")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	out := r.stdout
	for _, want := range []string{
		"maze: the reference maze: a strategy agent picks directions, a motion agent walks them\n" +
			"  --env-config  fields: map, generate{rows, cols, seed, per_episode}, obs_side, procedure, strategy{max_steps, reward_for_reaching_goal}, motion{max_steps, reward_for_right_direction, reward_for_wrong_direction, reward_for_progress}\n" +
			"  success       defined\n" +
			"  agent strategy\n" +
			"    observation  Box(0.0, [3.0 3.0 3.0 ... 1.0 1.0 1.0], (106,), float32)\n" +
			"    action       Discrete(4), masked\n" +
			"    policies     oracle (default)  shortest paths to the goal\n" +
			"                 random            uniform over the walkable directions\n" +
			"  agent motion\n",
		"    action       Discrete(2), masked\n" +
			"    policies     random (default)  uniform over the walkable moves\n" +
			"                 forward           always forward\n" +
			"\n" +
			"maze-flat: the reference maze without a hierarchy: one agent moves a tile a step\n" +
			"  --env-config  fields: map, generate{rows, cols, seed, per_episode}, max_steps, reward_for_reaching_goal, reward_for_progress\n" +
			"  success       defined\n" +
			"  agent walker\n" +
			"    observation  Box(0.0, [3.0 3.0 3.0 ... 1.0 1.0 1.0], (106,), float32)\n" +
			"    action       Discrete(4), masked\n" +
			"    policies     oracle (default)  shortest paths to the goal\n" +
			"                 random            uniform over the walkable directions\n" +
			"\n" +
			"cartpole: Gymnasium's CartPole-v1: push a cart to keep its pole upright\n" +
			"  --env-config  fields: max_steps, kinematics_integrator\n" +
			"  success       defined\n" +
			"  agent cartpole\n" +
			"    observation  Box([-4.8 -inf -0.41887903 -inf], [4.8 inf 0.41887903 inf], (4,), float32)\n" +
			"    action       Discrete(2)\n" +
			"    policies     random (default)  uniform pushes\n" +
			"                 balance           push toward where the pole falls (theta + 0.5 theta_dot)\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.True(t, strings.HasPrefix(out, "maze: "))

	one := runArgs(t, "envs", "cartpole")
	require.Equal(t, 0, one.code, one.stderr)
	assert.True(t, strings.HasPrefix(one.stdout, "cartpole: "))
	assert.NotContains(t, one.stdout, "maze")

	r = runEnvs(t, withCounter(t), "envs", "counter")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "counter: counts\n"+
		"  --env-config  it takes no configuration\n"+
		"  success       not defined\n"+
		"  agent counter\n"+
		"    observation  Box(0.0, 100.0, (1,), float32)\n"+
		"    action       Discrete(3)\n"+
		"    policies     two (default)\n", r.stdout)
}

func TestEnvsJSON(t *testing.T) {
	r := runArgs(t, "envs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stdout, "\n"), "one JSON array on one line")
	var list []struct {
		Name           string `json:"name"`
		Description    string `json:"description"`
		Config         string `json:"config"`
		DefinesSuccess bool   `json:"defines_success"`
		Agents         []struct {
			Name             string          `json:"name"`
			ObservationSpace json.RawMessage `json:"observation_space"`
			ActionSpace      json.RawMessage `json:"action_space"`
			MaskLen          int             `json:"mask_len"`
			Policies         []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Default     bool   `json:"default"`
			} `json:"policies"`
		} `json:"agents"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&list))
	require.Len(t, list, 5)

	envs := shipped(t)
	for i, name := range []string{"maze", "maze-flat", "cartpole", "webtest"} {
		l := list[i]
		assert.Equal(t, name, l.Name)
		assert.True(t, l.DefinesSuccess)
		entry, err := envs.reg.Lookup(name)
		require.NoError(t, err)
		f, err := entry.Open(nil)
		require.NoError(t, err)
		m, err := f.NewEnv(registry.EnvOptions{})
		require.NoError(t, err)
		specs := m.Agents()
		require.Len(t, l.Agents, len(specs))
		for j, spec := range specs {
			a := l.Agents[j]
			assert.Equal(t, spec.Name, a.Name)
			assert.Equal(t, spec.MaskLen, a.MaskLen)
			obs, err := spaces.Unmarshal(a.ObservationSpace)
			require.NoError(t, err)
			assert.Equal(t, spec.ObservationSpace.String(), obs.String())
			act, err := spaces.Unmarshal(a.ActionSpace)
			require.NoError(t, err)
			assert.Equal(t, spec.ActionSpace.String(), act.String())
			ae, err := entry.Agent(spec.Name)
			require.NoError(t, err)
			require.Len(t, a.Policies, len(ae.Policies))
			defaults := 0
			for k, p := range a.Policies {
				assert.Equal(t, ae.Policies[k].Name, p.Name)
				assert.Equal(t, ae.Policies[k].Description, p.Description)
				if p.Default {
					defaults++
					assert.Equal(t, ae.Default, p.Name)
				}
			}
			assert.Equal(t, 1, defaults, "one default policy")
		}
	}
	assert.Equal(t, "strategy", list[0].Agents[0].Name)
	assert.Equal(t, "oracle", list[0].Agents[0].Policies[0].Name)
	assert.True(t, list[0].Agents[0].Policies[0].Default)
}

func TestEnvsBadInput(t *testing.T) {
	checkBadInput(t, runArgs(t, "envs", "maze", "mazes"), `unknown environment "mazes" (choices: maze, maze-flat, cartpole, webtest, rps)`)
	checkBadInput(t, runArgs(t, "envs", "--dot"), "unknown flag: --dot (flags of baton envs: --help, --json)")
}

func TestGraph(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"maze", []string{"maze"}, "graph-maze.mmd"},
		{"maze procedure", []string{"maze", "--env-config", `{"procedure": true}`}, "graph-maze-procedure.mmd"},
		{"maze dot", []string{"maze", "--dot"}, "graph-maze.dot"},
		{"maze procedure dot", []string{"maze", "--dot", "--env-config", `{"procedure": true}`}, "graph-maze-procedure.dot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, append([]string{"graph"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			golden(t, tt.golden, r.stdout)
		})
	}

	// The output is the runtime's own drawing.
	envs := shipped(t)
	for _, config := range []string{"", `{"procedure": true}`} {
		o, err := envs.open("maze", []byte(config), 0)
		require.NoError(t, err)
		d, ok := o.env.(drawer)
		require.True(t, ok)
		assert.Equal(t, d.Mermaid(), runArgs(t, "graph", "maze", "--env-config", config).stdout)
		assert.Equal(t, d.DOT(), runArgs(t, "graph", "maze", "--env-config", config, "--dot").stdout)
	}
}

func TestGraphBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no environment", nil, "graph needs an environment (choices: maze, maze-flat, cartpole, webtest, rps)"},
		{"unknown environment", []string{"maz"}, `unknown environment "maz" (choices: maze, maze-flat, cartpole, webtest, rps)`},
		{"no machine", []string{"cartpole"}, "cartpole has no switching state machine to draw (environments with one: maze, webtest)"},
		{"bad env-config", []string{"maze", "--env-config", "[]"}, "bad --env-config for maze: maze: invalid configuration: ... (fields: ...)"},
		{"unknown flag", []string{"maze", "--svg"}, "unknown flag: --svg (flags of baton graph: --dot, --env-config, --help)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBadInput(t, runArgs(t, append([]string{"graph"}, tt.args...)...), tt.want)
		})
	}
	checkBadInput(t, runEnvs(t, withCounter(t), "graph", "counter"),
		"counter has no switching state machine to draw (environments with one: maze, webtest)")
}

func TestPlayCartPole(t *testing.T) {
	r := runArgs(t, "play", "cartpole", "--max-ticks", "3", "--seed", "2")
	require.Equal(t, 0, r.code, r.stderr)
	l := lines(r.stdout)
	require.Len(t, l, 10, r.stdout)
	assert.Equal(t, "tick  acting      action   agent        reward  span  status      info", l[0])
	assert.Regexp(t, `^   0  -           -        cartpole_0    0\.000     0  start       \{"x":[-0-9.e]+,"x_dot":[-0-9.e]+,"theta":[-0-9.e]+,"theta_dot":[-0-9.e]+\}$`, l[1])
	for _, row := range l[2:4] {
		assert.Regexp(t, `^   \d  cartpole_0  (LEFT |RIGHT)    cartpole_0    1\.000     1  -           \{"x":`, row)
	}
	assert.Regexp(t, `^   3  cartpole_0  (LEFT |RIGHT)    cartpole_0    1\.000     1  truncated   \{"x":`, l[4])
	assert.Equal(t, []string{"returns by agent id:", "  cartpole_0   3.000", "returns by agent:", "  cartpole     3.000",
		"episode over after 3 ticks: cartpole_0 truncated"}, l[5:])

	// The balancing policy keeps the pole up for the 500 steps of CartPole-v1.
	r = runArgs(t, "play", "cartpole", "--policy", "cartpole=balance", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	reps := lines(r.stdout)
	require.Len(t, reps, 501)
	var last map[string]any
	require.NoError(t, json.Unmarshal([]byte(reps[500]), &last))
	assert.Equal(t, 500.0, last["tick"])
	assert.Equal(t, true, last["truncated"])
	assert.Equal(t, false, last["terminated"])
	assert.Contains(t, last["info"], "theta")

	a, b := runArgs(t, "play", "cartpole", "--seed", "5"), runArgs(t, "play", "cartpole", "--seed", "5")
	assert.Equal(t, a, b)
}

// An environment that ignores --max-ticks is cut by the command.
func TestPlayCut(t *testing.T) {
	envs := withCounter(t)
	r := runEnvs(t, envs, "play", "counter", "--max-ticks", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "tick  acting      action   agent        reward  span  status      info\n"+
		"   0  -           -        counter_0     0.000     0  start       {\"pos\":0}\n"+
		"   1  counter_0   2        counter_0     2.000     1  -           {\"pos\":1}\n"+
		"   2  counter_0   2        counter_0     2.000     1  -           {\"pos\":2}\n"+
		"returns by agent id:\n"+
		"  counter_0   4.000\n"+
		"returns by agent:\n"+
		"  counter     4.000\n"+
		"episode cut after 2 ticks by --max-ticks\n", r.stdout)

	// baton run cuts it too (package runners does), and shows no success rate.
	var stdout, stderr bytes.Buffer
	code := runWith(t.Context(), envs, []string{"run", "counter", "--trials", "2", "--max-ticks", "5", "--json"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	s, _ := decodeSummary(t, stdout.String(), []string{"env", "seed", "policies", "trials", "ended", "stopped", "failed", "episodes",
		"env_steps", "wall_seconds", "steps_per_second", "agents", "failures", "interrupted"})
	assert.Equal(t, int64(10), s.EnvSteps)
	assert.Equal(t, agentSummary{Mean: 10, Min: 10, Max: 10, Episodes: 2}, s.Agents["counter"])

	stdout.Reset()
	code = runWith(t.Context(), envs, []string{"run", "counter", "--trials", "2", "--max-ticks", "5"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.NotContains(t, stdout.String(), "success rate")
}
