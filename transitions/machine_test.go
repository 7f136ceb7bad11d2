package transitions_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/transitions"
)

// The tests use int states and int actions: actions 0-3 are directions, others are not.
type machine = transitions.Machine[int, int]

func isDirection(a int) bool { return a >= 0 && a < 4 }

func move(s, a int) (int, error) { return s + a, nil }

// twoAgents is the strategy/motion machine: the strategy picks a direction, which hands
// control to the motion agent; when its sub-episode ends control goes to onDoneMotion.
func twoAgents(onDoneMotion string) machine {
	return machine{
		Initial: "strategy",
		OnDone:  map[string]string{"strategy": transitions.End, "motion": onDoneMotion},
		Triggers: []transitions.Trigger[int, int]{
			{Name: "direction", From: "strategy", When: isDirection, To: "motion"},
		},
		Switching: []string{"strategy"},
	}
}

func TestCompile(t *testing.T) {
	t.Run("two agents", func(t *testing.T) {
		tests := []struct {
			name       string
			agents     []string
			onDone     string // the motion agent's on-done target
			wantMotion int    // Table.OnDone of the motion agent
		}{
			{"parent", []string{"strategy", "motion"}, transitions.Parent, transitions.DoneParent},
			{"to strategy", []string{"strategy", "motion"}, "strategy", 0},
			{"parent, motion first", []string{"motion", "strategy"}, transitions.Parent, transitions.DoneParent},
			{"to strategy, motion first", []string{"motion", "strategy"}, "strategy", 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m := twoAgents(tt.onDone)
				tab, err := transitions.Compile(m, tt.agents)
				require.NoError(t, err)
				require.NotNil(t, tab)

				assert.Equal(t, tt.agents, tab.Agents())
				strategy, motion := tab.Index("strategy"), tab.Index("motion")
				assert.Equal(t, slices.Index(tt.agents, "strategy"), strategy)
				assert.Equal(t, slices.Index(tt.agents, "motion"), motion)
				assert.Equal(t, -1, tab.Index("ghost"))
				assert.Equal(t, -1, tab.Index(""))

				assert.Equal(t, strategy, tab.Initial())
				assert.Equal(t, transitions.DoneEnd, tab.OnDone(strategy))
				assert.Equal(t, tt.wantMotion, tab.OnDone(motion))
				assert.True(t, tab.Switching(strategy))
				assert.False(t, tab.Switching(motion))

				tr, to, ok := tab.Match(strategy, 2)
				require.True(t, ok)
				assert.Equal(t, "direction", tr.Name)
				assert.Equal(t, motion, to)
				tr, to, ok = tab.Match(strategy, 7)
				assert.False(t, ok)
				assert.Nil(t, tr)
				assert.Equal(t, -1, to)

				got := tab.Machine()
				assert.Equal(t, m.Initial, got.Initial)
				assert.Equal(t, m.OnDone, got.OnDone)
				assert.Equal(t, m.Switching, got.Switching)
				assert.Equal(t, triggerNames(m), triggerNames(got))
			})
		}
	})

	t.Run("match", func(t *testing.T) {
		scan := func(s, a int) (int, error) { return s, nil }
		m := machine{
			Initial: "strategy",
			OnDone: map[string]string{
				"strategy": transitions.End,
				"motion":   transitions.Parent,
				"grasp":    transitions.Parent,
			},
			Triggers: []transitions.Trigger[int, int]{
				{Name: "north", From: "strategy", When: func(a int) bool { return a == 0 }, To: "motion"},
				{Name: "move", From: "strategy", When: isDirection, To: "grasp"},
				{Name: "stop", From: "motion", When: func(a int) bool { return a == 5 }, Run: scan},
				{Name: "scan", From: "strategy", When: func(a int) bool { return a == 7 }, Run: scan},
				{Name: "other", From: "strategy", To: "motion"}, // nil When: every action
			},
		}
		tab, err := transitions.Compile(m, []string{"strategy", "motion", "grasp"})
		require.NoError(t, err)

		tests := []struct {
			name    string
			agent   string
			action  int
			want    string // trigger name, "" when none matches
			wantTo  int
			wantRun bool
		}{
			{"first match wins", "strategy", 0, "north", 1, false},
			{"second trigger", "strategy", 2, "move", 2, false},
			{"procedure", "strategy", 7, "scan", -1, true},
			{"nil When matches the rest", "strategy", 8, "other", 1, false},
			{"nil When matches negative", "strategy", -3, "other", 1, false},
			{"procedure of a child", "motion", 5, "stop", -1, true},
			{"no match", "motion", 1, "", -1, false},
			{"agent without triggers", "grasp", 0, "", -1, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tr, to, ok := tab.Match(tab.Index(tt.agent), tt.action)
				assert.Equal(t, tt.wantTo, to)
				if tt.want == "" {
					assert.False(t, ok)
					assert.Nil(t, tr)
					return
				}
				require.True(t, ok)
				require.NotNil(t, tr)
				assert.Equal(t, tt.want, tr.Name)
				assert.Equal(t, tt.agent, tr.From)
				assert.Equal(t, tt.wantRun, tr.Run != nil)
			})
		}

		t.Run("allocates nothing", func(t *testing.T) {
			strategy, motion := tab.Index("strategy"), tab.Index("motion")
			allocs := testing.AllocsPerRun(100, func() {
				for a := -1; a < 10; a++ {
					tab.Match(strategy, a)
					tab.Match(motion, a)
				}
			})
			assert.Zero(t, allocs)
		})
	})

	// The table is immutable: changing the machine or the agent list it was compiled
	// from, or what Agents and Machine return, leaves it as it was.
	t.Run("immutable", func(t *testing.T) {
		m := twoAgents(transitions.Parent)
		agents := []string{"strategy", "motion"}
		tab, err := transitions.Compile(m, agents)
		require.NoError(t, err)

		agents[0] = "changed"
		m.Initial = "motion"
		m.OnDone["motion"] = transitions.End
		m.Triggers[0].Name = "changed"
		m.Triggers[0].When = func(int) bool { return false }
		m.Switching[0] = "motion"
		got := tab.Machine()
		got.OnDone["strategy"] = "motion"
		got.Triggers[0].To = "strategy"
		got.Switching[0] = "motion"
		tab.Agents()[1] = "changed"

		assert.Equal(t, []string{"strategy", "motion"}, tab.Agents())
		assert.Equal(t, 0, tab.Index("strategy"))
		assert.Equal(t, 1, tab.Index("motion"))
		again := tab.Machine()
		assert.Equal(t, "strategy", again.Initial)
		assert.Equal(t, map[string]string{"strategy": transitions.End, "motion": transitions.Parent}, again.OnDone)
		assert.Equal(t, []string{"strategy"}, again.Switching)
		require.Len(t, again.Triggers, 1)
		assert.Equal(t, "direction", again.Triggers[0].Name)
		assert.Equal(t, "motion", again.Triggers[0].To)
		tr, to, ok := tab.Match(0, 1)
		require.True(t, ok)
		assert.Equal(t, "direction", tr.Name)
		assert.Equal(t, "motion", tr.To)
		assert.Equal(t, 1, to)
	})

	// Paths through Parent follow the runtime: an agent that an on-done rule hands
	// control to runs under the parent of the agent whose sub-episode ended, so its
	// Parent rule returns there. Whether a machine compiles does not depend on the order
	// of the agents.
	t.Run("paths", func(t *testing.T) {
		tests := []struct {
			name    string
			m       machine
			wantErr []ruleKey // nil: compiles
		}{
			{
				name: "parent of an on-done sibling",
				m: machine{
					Initial: "strategy",
					OnDone: map[string]string{
						"strategy": transitions.End,
						"motion":   "settle",           // settle runs under strategy ...
						"settle":   transitions.Parent, // ... and returns to it
					},
					Triggers: []transitions.Trigger[int, int]{
						{Name: "direction", From: "strategy", When: isDirection, To: "motion"},
					},
				},
			},
			{
				name: "on-done sibling is not a parent",
				m: machine{
					Initial: "strategy",
					OnDone: map[string]string{
						"strategy": transitions.End,
						"motion":   transitions.Parent,
						"ghost":    "motion", // nothing leads to ghost; motion does not return there
					},
					Triggers: []transitions.Trigger[int, int]{
						{Name: "direction", From: "strategy", When: isDirection, To: "motion"},
					},
				},
				wantErr: []ruleKey{{"ghost", "reachability"}},
			},
			{
				name: "parent of a top-level agent ends the episode",
				m: machine{
					Initial: "strategy",
					OnDone:  map[string]string{"strategy": "motion", "motion": "settle", "settle": transitions.Parent},
				},
			},
			{
				name: "parent through a chain of on-done rules",
				m: machine{
					Initial: "strategy",
					OnDone: map[string]string{
						"strategy": transitions.End,
						"motion":   "settle",
						"settle":   "report",
						"report":   transitions.Parent,
					},
					Triggers: []transitions.Trigger[int, int]{
						{Name: "direction", From: "strategy", When: isDirection, To: "motion"},
					},
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, agents := range permutations(machineAgents(tt.m)) {
					tab, err := transitions.Compile(tt.m, agents)
					if tt.wantErr == nil {
						require.NoError(t, err, "agents %q", agents)
						require.NotNil(t, tab)
						continue
					}
					require.ErrorIs(t, err, transitions.ErrInvalid, "agents %q", agents)
					assert.ElementsMatch(t, tt.wantErr, ruleKeys(err), "agents %q", agents)
				}
			})
		}
	})
}

func TestCompileErrors(t *testing.T) {
	agents := []string{"strategy", "motion"}
	tests := []struct {
		name   string
		agents []string // nil: strategy, motion
		edit   func(m *machine)
		want   []ruleKey
	}{
		{
			name:   "no agents",
			agents: []string{},
			edit:   func(m *machine) { *m = machine{} },
			want:   []ruleKey{{"", "agents"}, {"", "initial"}},
		},
		{
			name:   "no agents for a machine",
			agents: []string{},
			want: []ruleKey{
				{"", "agents"},
				{"strategy", "initial"},
				{"motion", "on-done"},
				{"strategy", "on-done"},
				{"strategy", "direction"}, // watches an unknown agent ...
				{"strategy", "direction"}, // ... and hands control to one
				{"strategy", "switching"},
			},
		},
		{
			name:   "empty agent name",
			agents: []string{"strategy", "motion", ""},
			edit:   func(m *machine) { m.OnDone[""] = transitions.End },
			want:   []ruleKey{{"", "agents"}},
		},
		{
			name:   "agent name starting with a digit",
			agents: []string{"strategy", "motion", "1abc"},
			edit:   func(m *machine) { m.OnDone["1abc"] = transitions.End },
			want:   []ruleKey{{"1abc", "agents"}},
		},
		{
			name:   "agent name with a space",
			agents: []string{"strategy", "motion", "a b"},
			edit:   func(m *machine) { m.OnDone["a b"] = transitions.End },
			want:   []ruleKey{{"a b", "agents"}},
		},
		{
			name:   "agent name with a non-ASCII letter",
			agents: []string{"strategy", "motion", "étage"},
			edit:   func(m *machine) { m.OnDone["étage"] = transitions.End },
			want:   []ruleKey{{"étage", "agents"}},
		},
		{
			name:   "duplicate agent name",
			agents: []string{"strategy", "motion", "motion"},
			want:   []ruleKey{{"motion", "agents"}},
		},
		{
			name:   "duplicate agent without an on-done entry",
			agents: []string{"strategy", "motion", "motion"},
			edit:   func(m *machine) { delete(m.OnDone, "motion") },
			want:   []ruleKey{{"motion", "agents"}, {"motion", "on-done"}},
		},
		{
			name: "no initial agent",
			edit: func(m *machine) { m.Initial = "" },
			want: []ruleKey{{"", "initial"}},
		},
		{
			name: "unknown initial agent",
			edit: func(m *machine) { m.Initial = "boss" },
			want: []ruleKey{{"boss", "initial"}},
		},
		{
			name: "missing on-done entry",
			edit: func(m *machine) { delete(m.OnDone, "motion") },
			want: []ruleKey{{"motion", "on-done"}},
		},
		{
			name: "no on-done table",
			edit: func(m *machine) { m.OnDone = nil },
			want: []ruleKey{{"strategy", "on-done"}, {"motion", "on-done"}},
		},
		{
			name: "on-done entry for an unknown agent",
			edit: func(m *machine) { m.OnDone["ghost"] = transitions.End },
			want: []ruleKey{{"ghost", "on-done"}},
		},
		{
			name: "on-done target unknown",
			edit: func(m *machine) { m.OnDone["motion"] = "ghost" },
			want: []ruleKey{{"motion", "on-done"}},
		},
		{
			name: "parent for the initial agent",
			edit: func(m *machine) { m.OnDone["strategy"] = transitions.Parent },
			want: []ruleKey{{"strategy", "on-done"}},
		},
		{
			name: "trigger without a name",
			edit: func(m *machine) { m.Triggers[0].Name = "" },
			want: []ruleKey{{"strategy", "trigger #0"}},
		},
		{
			name: "duplicate trigger names",
			edit: func(m *machine) {
				m.Triggers = append(m.Triggers, transitions.Trigger[int, int]{Name: "direction", From: "motion", To: "strategy"})
			},
			want: []ruleKey{{"motion", "direction"}},
		},
		{
			name: "trigger watching an unknown agent",
			edit: func(m *machine) {
				m.Triggers = append(m.Triggers, transitions.Trigger[int, int]{Name: "jump", From: "ghost", To: "motion"})
			},
			want: []ruleKey{{"ghost", "jump"}},
		},
		{
			name: "trigger watching no agent",
			edit: func(m *machine) {
				m.Triggers = append(m.Triggers, transitions.Trigger[int, int]{Name: "jump", To: "motion"})
			},
			want: []ruleKey{{"", "jump"}},
		},
		{
			name: "trigger with both To and Run",
			edit: func(m *machine) { m.Triggers[0].Run = move },
			want: []ruleKey{{"strategy", "direction"}},
		},
		{
			name: "trigger with neither To nor Run",
			edit: func(m *machine) { m.Triggers[0].To = "" },
			want: []ruleKey{{"strategy", "direction"}},
		},
		{
			name: "trigger to an unknown agent",
			edit: func(m *machine) { m.Triggers[0].To = "ghost" },
			want: []ruleKey{{"strategy", "direction"}},
		},
		{
			name: "switching agent unknown",
			edit: func(m *machine) { m.Switching = append(m.Switching, "ghost") },
			want: []ruleKey{{"ghost", "switching"}},
		},
		{
			name: "switching agent with no trigger",
			edit: func(m *machine) { m.Switching = append(m.Switching, "motion") },
			want: []ruleKey{{"motion", "switching"}},
		},
		{
			name: "switching agent whose only trigger is broken",
			edit: func(m *machine) { m.Triggers[0].From = "ghost" },
			want: []ruleKey{{"ghost", "direction"}, {"strategy", "switching"}},
		},
		{
			name:   "unreachable agent",
			agents: []string{"strategy", "motion", "grasp"},
			edit:   func(m *machine) { m.OnDone["grasp"] = transitions.End },
			want:   []ruleKey{{"grasp", "reachability"}},
		},
		{
			name:   "agent reachable only from an unreachable one",
			agents: []string{"strategy", "motion", "grasp", "lift"},
			edit: func(m *machine) {
				m.OnDone["grasp"] = "lift"
				m.OnDone["lift"] = transitions.End
			},
			want: []ruleKey{{"grasp", "reachability"}, {"lift", "reachability"}},
		},
		{
			name:   "on-done cycle without an end",
			agents: []string{"a", "b"},
			edit: func(m *machine) {
				*m = machine{Initial: "a", OnDone: map[string]string{"a": "b", "b": "a"}}
			},
			want: []ruleKey{{"a", "reachability"}, {"b", "reachability"}},
		},
		{
			name: "trigger and on-done cycle without an end",
			edit: func(m *machine) {
				m.OnDone["strategy"] = "motion"
				m.OnDone["motion"] = "strategy"
			},
			want: []ruleKey{{"strategy", "reachability"}, {"motion", "reachability"}},
		},
		{
			name: "trigger cycle",
			edit: func(m *machine) {
				m.Triggers = append(m.Triggers, transitions.Trigger[int, int]{Name: "back", From: "motion", To: "strategy"})
			},
			want: []ruleKey{{"motion", "back"}},
		},
		{
			name:   "agent that triggers itself",
			agents: []string{"strategy", "motion", "grasp"},
			edit: func(m *machine) {
				m.OnDone["grasp"] = transitions.Parent
				m.Triggers = append(m.Triggers,
					transitions.Trigger[int, int]{Name: "grab", From: "motion", To: "grasp"},
					transitions.Trigger[int, int]{Name: "regrab", From: "grasp", To: "grasp"})
			},
			want: []ruleKey{{"grasp", "regrab"}},
		},
		{
			name:   "child that never returns",
			agents: []string{"strategy", "motion", "grasp"},
			edit: func(m *machine) {
				// grasp can end the episode; motion can only hand control back and forth.
				m.OnDone["grasp"] = transitions.End
				m.OnDone["motion"] = "motion"
				m.Triggers = append(m.Triggers, transitions.Trigger[int, int]{Name: "grab", From: "strategy", To: "grasp"})
			},
			want: []ruleKey{{"motion", "reachability"}},
		},
		{
			name:   "several problems at once",
			agents: []string{"strategy", "motion", "a b", "motion"},
			edit: func(m *machine) {
				m.Initial = "boss"
				delete(m.OnDone, "motion")
				m.OnDone["a b"] = transitions.End
				m.OnDone["ghost"] = transitions.Parent
				m.Triggers[0].To = ""
				m.Triggers = append(m.Triggers,
					transitions.Trigger[int, int]{Name: "direction", From: "motion", To: "strategy"},
					transitions.Trigger[int, int]{From: "motion", Run: move},
				)
				m.Switching = append(m.Switching, "ghost")
			},
			want: []ruleKey{
				{"a b", "agents"},
				{"motion", "agents"},
				{"boss", "initial"},
				{"motion", "on-done"},
				{"ghost", "on-done"},
				{"strategy", "direction"},
				{"motion", "direction"},
				{"motion", "trigger #2"},
				{"ghost", "switching"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := twoAgents(transitions.Parent)
			if tt.edit != nil {
				tt.edit(&m)
			}
			ag := tt.agents
			if ag == nil {
				ag = agents
			}
			tab, err := transitions.Compile(m, ag)
			require.Error(t, err)
			assert.Nil(t, tab)
			require.ErrorIs(t, err, transitions.ErrInvalid)
			var re *transitions.RuleError
			require.ErrorAs(t, err, &re)

			errs := transitions.Errors(err)
			assert.ElementsMatch(t, tt.want, ruleKeys(err))
			for _, e := range errs {
				assert.ErrorIs(t, e, transitions.ErrInvalid)
				assert.NotEmpty(t, e.Reason)
				msg := e.Error()
				assert.Contains(t, err.Error(), msg)
				assert.Regexp(t, `^transitions: `, msg)
				assert.Contains(t, msg, fmt.Sprintf("rule %q", e.Rule))
				if e.Agent != "" {
					assert.Contains(t, msg, fmt.Sprintf("agent %q", e.Agent))
				} else {
					assert.NotContains(t, msg, "agent \"")
				}
				assert.Contains(t, msg, e.Reason)
			}
		})
	}

	t.Run("messages", func(t *testing.T) {
		m := twoAgents(transitions.Parent)
		delete(m.OnDone, "motion")
		_, err := transitions.Compile(m, agents)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `agent "motion"`)
		assert.Contains(t, err.Error(), `rule "on-done"`)
		assert.Equal(t,
			`transitions: rule "on-done": agent "motion": no on-done entry: say which agent takes control when its sub-episode ends, Parent or End`,
			err.Error())

		m = twoAgents(transitions.Parent)
		m.Initial = ""
		_, err = transitions.Compile(m, agents)
		assert.EqualError(t, err, `transitions: rule "initial": no initial agent`)
	})

	t.Run("Errors", func(t *testing.T) {
		assert.Empty(t, transitions.Errors(nil))
		assert.Empty(t, transitions.Errors(errors.New("other")))
		re := &transitions.RuleError{Agent: "a", Rule: "r", Reason: "why"}
		assert.Equal(t, []*transitions.RuleError{re}, transitions.Errors(re))
		assert.Equal(t, []*transitions.RuleError{re}, transitions.Errors(fmt.Errorf("wrapped: %w", re)))
	})
}

// ruleKey is what identifies a problem: the agent and the rule.
type ruleKey struct{ Agent, Rule string }

func ruleKeys(err error) []ruleKey {
	var keys []ruleKey
	for _, e := range transitions.Errors(err) {
		keys = append(keys, ruleKey{e.Agent, e.Rule})
	}
	return keys
}

func triggerNames(m machine) []string {
	var names []string
	for _, tr := range m.Triggers {
		names = append(names, tr.Name)
	}
	return names
}

// machineAgents lists the agents a machine names in its on-done table, sorted.
func machineAgents(m machine) []string {
	return slices.Sorted(maps.Keys(m.OnDone))
}

// permutations returns every order of s.
func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{append([]string(nil), s...)}
	}
	var out [][]string
	for i := range s {
		rest := append(append([]string(nil), s[:i]...), s[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}
