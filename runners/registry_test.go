package runners_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistry(t *testing.T) {
	reg := testRegistry(t)
	assert.Equal(t, []string{"maze", "cartpole", "counter"}, reg.Names())
	var names []string
	for e := range reg.All() {
		names = append(names, e.Name)
	}
	assert.Equal(t, reg.Names(), names)
	for range reg.All() {
		break // stopping early is fine
	}

	e, err := reg.Lookup("maze")
	require.NoError(t, err)
	assert.Equal(t, []string{"strategy", "motion"}, e.AgentNames())
	a, err := e.Agent("motion")
	require.NoError(t, err)
	assert.Equal(t, "random", a.Default)
	assert.Equal(t, []string{"forward", "random"}, a.PolicyNames())
	p, err := e.Policy("strategy", "oracle")
	require.NoError(t, err)
	assert.Equal(t, "oracle", p.Name)

	tests := []struct {
		name string
		err  func() error
		kind error
		msg  string
	}{
		{"environment", func() error { _, err := reg.Lookup("mace"); return err }, registry.ErrUnknownEnv,
			`registry: unknown environment "mace" (choices: maze, cartpole, counter)`},
		{"agent", func() error { _, err := e.Agent("walker"); return err }, registry.ErrUnknownAgent,
			`registry: unknown agent "walker" of maze (choices: strategy, motion)`},
		{"policy", func() error { _, err := e.Policy("motion", "sideways"); return err }, registry.ErrUnknownPolicy,
			`registry: unknown policy "sideways" for agent motion of maze (choices: forward, random)`},
		{"agent of a policy", func() error { _, err := e.Policy("walker", "random"); return err }, registry.ErrUnknownAgent,
			`registry: unknown agent "walker" of maze (choices: strategy, motion)`},
		{"empty registry", func() error { _, err := registry.New().Lookup("maze"); return err }, registry.ErrUnknownEnv,
			`registry: unknown environment "maze" (there are none)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			require.ErrorIs(t, err, tt.kind)
			var ne *registry.NameError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, tt.msg, err.Error())
		})
	}
}

func TestRegisterErrors(t *testing.T) {
	open := func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) { return nil, errors.New("unused") }), nil
	}
	newPolicy := func(registry.Factory, *rand.Rand) (agent.Policy, error) { return constant(0), nil }
	good := func() registry.Entry {
		return registry.Entry{Name: "good", Open: open, Agents: []registry.AgentEntry{
			{Name: "a", Policies: []registry.PolicyEntry{{Name: "p", New: newPolicy}, {Name: "q", New: newPolicy}}},
		}}
	}
	reg := registry.New()
	require.NoError(t, reg.Register(good()))
	e, err := reg.Lookup("good")
	require.NoError(t, err)
	assert.Equal(t, "p", e.Agents[0].Default, "the first policy is the default")
	require.ErrorIs(t, reg.Register(good()), registry.ErrDuplicate)

	tests := []struct {
		name   string
		change func(e *registry.Entry)
		want   []string // in the message
	}{
		{"no name", func(e *registry.Entry) { e.Name = "" }, []string{"the name must be non-empty"}},
		{"space in the name", func(e *registry.Entry) { e.Name = "my maze" }, []string{"without white space"}},
		{"no Open", func(e *registry.Entry) { e.Open = nil }, []string{"Open is nil"}},
		{"agent twice", func(e *registry.Entry) { e.Agents = append(e.Agents, e.Agents[0]) }, []string{`agent "a" is listed twice`}},
		{"no agent name", func(e *registry.Entry) { e.Agents[0].Name = "" }, []string{"agent #0 has no name"}},
		{"no policies", func(e *registry.Entry) { e.Agents[0].Policies = nil }, []string{`agent "a" has no policy`}},
		{"bad default", func(e *registry.Entry) { e.Agents[0].Default = "r" }, []string{`the default policy "r" of agent "a" is not one of its policies (p, q)`}},
		{"policy twice", func(e *registry.Entry) { e.Agents[0].Policies[1].Name = "p" }, []string{`lists policy "p" twice`}},
		{"bad policy name", func(e *registry.Entry) { e.Agents[0].Policies[1].Name = "a=b" }, []string{"policy #1 of agent"}},
		{"nil factory", func(e *registry.Entry) { e.Agents[0].Policies[0].New = nil }, []string{`policy "p" of agent "a": New is nil`}},
		{"everything at once", func(e *registry.Entry) {
			e.Name, e.Open, e.Agents[0].Policies[0].New = "", nil, nil
		}, []string{"the name", "Open is nil", "New is nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good()
			e.Agents = slices.Clone(e.Agents)
			e.Agents[0].Policies = slices.Clone(e.Agents[0].Policies)
			tt.change(&e)
			err := registry.New().Register(e)
			require.ErrorIs(t, err, registry.ErrInvalidEntry)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Len(t, strings.Split(err.Error(), "\n"), 1, "multierr joins with ; on one line")
		})
	}

	// The registry keeps its own copy of an entry.
	e = good()
	e.Name = "copy"
	require.NoError(t, reg.Register(e))
	e.Agents[0].Name = "changed"
	got, err := reg.Lookup("copy")
	require.NoError(t, err)
	assert.Equal(t, "a", got.Agents[0].Name)
}

func TestDecodeConfig(t *testing.T) {
	type cfg struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	for _, tc := range []struct {
		name, in string
		want     cfg
		err      string
	}{
		{"empty", "", cfg{A: 7}, ""},
		{"blank", " \n\t", cfg{A: 7}, ""},
		{"fields", `{"a": 1, "b": "x"}`, cfg{A: 1, B: "x"}, ""},
		{"some fields", `{"b": "y"}`, cfg{A: 7, B: "y"}, ""},
		{"unknown field", `{"c": 1}`, cfg{A: 7}, `unknown field "c"`},
		{"wrong type", `{"a": "1"}`, cfg{A: 7}, "cannot unmarshal string"},
		{"trailing data", `{"a": 1} {"a": 2}`, cfg{A: 1}, "trailing data after the JSON object"},
		{"not JSON", `a: 1`, cfg{A: 7}, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cfg{A: 7}
			err := registry.DecodeConfig([]byte(tc.in), &got)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestLook(t *testing.T) {
	named := registry.Look{
		Action: func(_ env.Turn, acting *env.Report, raw agent.RawAction) string {
			if raw.Int < 0 {
				return "" // the default
			}
			return acting.Agent + ":" + strings.Repeat("+", int(raw.Int))
		},
		Info: func(info any) string { return "state " + info.(string) },
	}
	turn := env.Turn{Reports: []env.Report{{AgentID: "walker_0", Agent: "walker"}}, Next: "walker_0"}
	tests := []struct {
		name string
		look registry.Look
		raw  agent.RawAction
		want string
	}{
		{"default discrete", registry.Look{}, agent.Discrete(3), "3"},
		{"default ints", registry.Look{}, agent.MultiInts([]int64{1, 0}), "[1 0]"},
		{"default floats", registry.Look{}, agent.RawAction{Floats: []float32{0.5}}, "[0.5]"},
		{"named", named, agent.Discrete(2), "walker:++"},
		{"named empty is the default", named, agent.Discrete(-1), "-1"},
	}
	for _, tt := range tests {
		t.Run("action/"+tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.look.ActionName(turn, turn.Acting(), tt.raw))
		})
	}

	infos := []struct {
		name string
		look registry.Look
		info any
		want string
	}{
		{"default JSON", registry.Look{}, map[string]int{"x": 1}, `{"x":1}`},
		{"default nil", registry.Look{}, nil, "null"},
		{"default without JSON", registry.Look{}, complex(1, 2), "(1+2i)"},
		{"described", named, "up", "state up"},
	}
	for _, tt := range infos {
		t.Run("info/"+tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.look.Describe(tt.info))
		})
	}

	t.Run("registered", func(t *testing.T) {
		reg := registry.New()
		e := counterEntry()
		e.Look = named
		require.NoError(t, reg.Register(e))
		got, err := reg.Lookup(e.Name)
		require.NoError(t, err)
		assert.Equal(t, "walker:+", got.Look.ActionName(turn, turn.Acting(), agent.Discrete(1)))
		assert.Equal(t, "state s", got.Look.Describe("s"))
	})
}

// drawnEnv is an environment that only describes itself, and draws itself when
// frame is not zero.
type drawnEnv struct {
	env.MultiAgent
	info any
}

func (d drawnEnv) Info() any { return d.info }

type renderingEnv struct {
	drawnEnv
	frame env.Frame
}

func (r renderingEnv) Render() env.Frame { return r.frame }

// TestLookFrame checks the order in which Look.Frame draws an environment: the Look's
// Render, then the environment's own env.Renderer, then the one-line description.
func TestLookFrame(t *testing.T) {
	own := env.Frame{Text: "own\n", Scene: "own scene"}
	looked := env.Frame{Text: "look\n", SVG: "<svg/>"}
	info := map[string]int{"x": 1}
	tests := []struct {
		name string
		look registry.Look
		m    env.MultiAgent
		want env.Frame
	}{
		{"description", registry.Look{}, drawnEnv{info: info}, env.Frame{Text: `{"x":1}` + "\n", Scene: info}},
		{"described by the Look", registry.Look{Info: func(any) string { return "one line" }}, drawnEnv{info: info}, env.Frame{Text: "one line\n", Scene: info}},
		{"the environment's renderer", registry.Look{}, renderingEnv{drawnEnv{info: info}, own}, own},
		{"a renderer that draws nothing", registry.Look{}, renderingEnv{drawnEnv: drawnEnv{info: info}}, env.Frame{Text: `{"x":1}` + "\n", Scene: info}},
		{"the Look's Render first", registry.Look{Render: func(env.MultiAgent) env.Frame { return looked }}, renderingEnv{drawnEnv{info: info}, own}, looked},
		{"a Look's Render that draws nothing", registry.Look{Render: func(env.MultiAgent) env.Frame { return env.Frame{} }}, renderingEnv{drawnEnv{info: info}, own}, own},
		{"behind an adapter", registry.Look{}, registry.SingleAgent(renderingSingle{frame: own}), own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.look.Frame(tt.m))
		})
	}
}

// renderingSingle is a single-agent environment that draws itself.
type renderingSingle struct {
	env.Env
	frame env.Frame
}

func (r renderingSingle) Spec() env.Spec    { return env.Spec{Name: "one"} }
func (r renderingSingle) Render() env.Frame { return r.frame }

// registerFirst and registerSecond stand for two packages' register functions.
func registerFirst(reg *registry.Registry) error {
	e := counterEntry()
	e.Name = "twice"
	return reg.Register(e)
}
func registerSecond(reg *registry.Registry) error {
	e := counterEntry()
	e.Name = "twice"
	return reg.Register(e)
}

func TestRegisterTwiceNamesBoth(t *testing.T) {
	reg := registry.New()
	require.NoError(t, registerFirst(reg))
	err := registerSecond(reg)
	require.ErrorIs(t, err, registry.ErrDuplicate)
	de, ok := errors.AsType[*registry.DuplicateError](err)
	require.True(t, ok, "%T", err)
	assert.Equal(t, "twice", de.Name)
	assert.Regexp(t, `^github\.com/batonrl/baton/runners_test\.registerFirst \(registry_test\.go:\d+\) from github\.com/batonrl/baton/runners_test\.TestRegisterTwiceNamesBoth \(registry_test\.go:\d+\)$`, de.First)
	assert.Regexp(t, `^github\.com/batonrl/baton/runners_test\.registerSecond \(registry_test\.go:\d+\) from github\.com/batonrl/baton/runners_test\.TestRegisterTwiceNamesBoth \(registry_test\.go:\d+\)$`, de.Second)
	assert.Contains(t, err.Error(), `environment "twice" is registered twice: first by github.com/batonrl/baton/runners_test.registerFirst`)
	assert.Equal(t, []string{"twice"}, reg.Names(), "the first registration stays")
}
