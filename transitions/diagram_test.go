package transitions_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/transitions"
)

var update = flag.Bool("update", false, "rewrite golden files")

// diagramMachines are the machines whose diagrams are kept in testdata/NAME.mermaid.golden
// and testdata/NAME.dot.golden. All of them compile with the agents listed.
var diagramMachines = []struct {
	name   string
	agents []string
	m      machine
}{
	{
		// The maze: the strategy picks a direction, the motion agent walks there and
		// hands control back.
		name:   "maze",
		agents: []string{"strategy", "motion"},
		m:      twoAgents(transitions.Parent),
	},
	{
		// The maze with the motion agent replaced by a procedure.
		name:   "maze_procedure",
		agents: []string{"strategy"},
		m: machine{
			Initial:   "strategy",
			OnDone:    map[string]string{"strategy": transitions.End},
			Triggers:  []transitions.Trigger[int, int]{{Name: "walk", From: "strategy", When: isDirection, Run: move}},
			Switching: []string{"strategy"},
		},
	},
	{
		// settle runs under the parent of motion, whose on-done rule hands it control, so
		// its Parent rule returns to strategy; motion also has a procedure.
		name:   "parent_via_on_done",
		agents: []string{"strategy", "motion", "settle"},
		m: machine{
			Initial: "strategy",
			OnDone: map[string]string{
				"strategy": transitions.End,
				"motion":   "settle",
				"settle":   transitions.Parent,
			},
			Triggers: []transitions.Trigger[int, int]{
				{Name: "direction", From: "strategy", When: isDirection, To: "motion"},
				{Name: "scan", From: "motion", When: func(a int) bool { return a == 9 }, Run: move},
			},
		},
	},
	{
		// rest runs under strategy (by the trigger) and at the top level (by strategy's
		// on-done rule), where Parent ends the episode.
		name:   "parent_at_top_level",
		agents: []string{"strategy", "rest"},
		m: machine{
			Initial:  "strategy",
			OnDone:   map[string]string{"strategy": "rest", "rest": transitions.Parent},
			Triggers: []transitions.Trigger[int, int]{{Name: "tired", From: "strategy", When: isDirection, To: "rest"}},
		},
	},
	{
		// Valid agent names that Mermaid cannot take as state ids ('-', keywords, names
		// that clash once '-' is replaced), and trigger names holding Mermaid's and DOT's
		// special characters.
		name:   "awkward_names",
		agents: []string{"state", "a-b", "a_b", "note", "s_a_b"},
		m: machine{
			Initial: "state",
			OnDone: map[string]string{
				"state": transitions.End,
				"a-b":   transitions.Parent,
				"a_b":   "note",
				"note":  transitions.Parent,
				"s_a_b": transitions.Parent,
			},
			Triggers: []transitions.Trigger[int, int]{
				{Name: "go; now", From: "state", When: isDirection, To: "a-b"},
				{Name: `x:y "q" #1 <b> {c} 50%`, From: "state", To: "a_b"},
				{Name: "direction LR", From: "a-b", Run: move},
				{Name: `back\slash`, From: "note", To: "s_a_b"},
			},
		},
	},
}

func TestDiagramGolden(t *testing.T) {
	for _, tt := range diagramMachines {
		t.Run(tt.name, func(t *testing.T) {
			_, err := transitions.Compile(tt.m, tt.agents)
			require.NoError(t, err, "the machines drawn are valid")

			mermaid, dot := tt.m.Mermaid(), tt.m.DOT()
			golden(t, tt.name+".mermaid", mermaid)
			golden(t, tt.name+".dot", dot)

			// Map iteration order must not leak into the output.
			for range 20 {
				require.Equal(t, mermaid, tt.m.Mermaid())
				require.Equal(t, dot, tt.m.DOT())
			}
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the golden file")
	assert.Equal(t, string(want), got, "diagram differs from %s; run go test -update if the change is intended", path)
}

// The lines a diagram may hold, as Mermaid's state-diagram lexer reads them: ids made of
// letters, digits and '_', labels without ':', ';', newlines or other characters Mermaid
// reads as syntax except inside entity codes.
var (
	mermaidLabel  = `((?:[^:;#"<>%{}\n]|#[0-9]+;)+)`
	mermaidNode   = `(\[\*\]|s_[A-Za-z0-9_]+)`
	mermaidState  = regexp.MustCompile(`^    state "` + mermaidLabel + `" as (s_[A-Za-z0-9_]+)$`)
	mermaidEdge   = regexp.MustCompile(`^    ` + mermaidNode + ` --> ` + mermaidNode + `(?:: ` + mermaidLabel + `)?$`)
	mermaidDir    = regexp.MustCompile(`(?i)direction\s+(tb|bt|rl|lr)`)
	mermaidEntity = regexp.MustCompile(`#([0-9]+);`)
)

func unentity(s string) string {
	return mermaidEntity.ReplaceAllStringFunc(s, func(e string) string {
		n, _ := strconv.Atoi(e[1 : len(e)-1])
		return string(rune(n))
	})
}

// mermaidEdges parses a diagram, failing the test on any line Mermaid would not read as
// intended, and returns its edges as "FROM --> TO: LABEL" in agent names ("[*]" for the
// start and end), decoded.
func mermaidEdges(t *testing.T, text string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.Equal(t, "stateDiagram-v2", lines[0])
	names := map[string]string{"[*]": "[*]"} // id -> agent name
	var edges []string
	for _, line := range lines[1:] {
		assert.NotRegexp(t, mermaidDir, line, "Mermaid reads this line as a direction statement")
		if m := mermaidState.FindStringSubmatch(line); m != nil {
			name, id := unentity(m[1]), m[2]
			_, dup := names[id]
			require.False(t, dup, "state id %s declared twice", id)
			names[id] = name
			continue
		}
		m := mermaidEdge.FindStringSubmatch(line)
		require.NotNil(t, m, "not a state declaration or a transition: %q", line)
		from, ok := names[m[1]]
		require.True(t, ok, "state %s not declared before %q", m[1], line)
		to, ok := names[m[2]]
		require.True(t, ok, "state %s not declared before %q", m[2], line)
		edges = append(edges, fmt.Sprintf("%s --> %s: %s", from, to, unentity(m[3])))
	}
	return edges
}

func TestMermaid(t *testing.T) {
	tests := []struct {
		name string
		m    machine
		want []string // edges, as mermaidEdges returns them
	}{
		{
			name: "maze",
			m:    twoAgents(transitions.Parent),
			want: []string{
				"[*] --> strategy: ",
				"strategy --> motion: direction",
				"motion --> strategy: done (return)",
				"strategy --> [*]: done",
			},
		},
		{
			name: "maze returning by on-done",
			m:    twoAgents("strategy"),
			want: []string{
				"[*] --> strategy: ",
				"strategy --> motion: direction",
				"motion --> strategy: done",
				"strategy --> [*]: done",
			},
		},
		{
			name: "awkward names",
			m:    diagramMachines[len(diagramMachines)-1].m,
			want: []string{
				"[*] --> state: ",
				"state --> a-b: go; now",
				`state --> a_b: x:y "q" #1 <b> {c} 50%`,
				"a-b --> a-b: direction LR (procedure)",
				`note --> s_a_b: back\slash`,
				"a-b --> state: done (return)",
				"a_b --> note: done",
				"note --> state: done (return)",
				"s_a_b --> note: done (return)",
				"state --> [*]: done",
			},
		},
		{
			name: "line breaks in a trigger name",
			m: machine{
				Initial:  "a",
				OnDone:   map[string]string{"a": transitions.End, "b": transitions.Parent},
				Triggers: []transitions.Trigger[int, int]{{Name: "two\nlines\r\tand a tab", From: "a", To: "b"}},
			},
			want: []string{
				"[*] --> a: ",
				"a --> b: two lines  and a tab",
				"a --> [*]: done",
				"b --> a: done (return)",
			},
		},
		// Machines that do not compile are still drawn, as far as they go.
		{name: "zero machine", m: machine{}},
		{
			name: "broken machine",
			m: machine{
				Initial: "a",
				OnDone:  map[string]string{"a": "ghost", "orphan": transitions.Parent},
				Triggers: []transitions.Trigger[int, int]{
					{From: "a", To: "b"},
					{Name: "both", From: "a", To: "b", Run: move},
				},
			},
			want: []string{
				"[*] --> a: ",
				"a --> b: ",
				"a --> a: both (procedure)",
				"a --> ghost: done",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mermaidEdges(t, tt.m.Mermaid()))
		})
	}

	t.Run("golden machines", func(t *testing.T) {
		for _, tt := range diagramMachines {
			edges := mermaidEdges(t, tt.m.Mermaid())
			for _, tr := range tt.m.Triggers {
				to, label := tr.To, tr.Name
				if tr.Run != nil {
					to, label = tr.From, tr.Name+" (procedure)"
				}
				assert.Contains(t, edges, fmt.Sprintf("%s --> %s: %s", tr.From, to, label), tt.name)
			}
		}
	})
}

// TestDOTParses hands every diagram to Graphviz when it is installed.
func TestDOTParses(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("graphviz dot is not installed")
	}
	for _, tt := range diagramMachines {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.m.DOT()
			cmd := exec.CommandContext(t.Context(), dot, "-Tplain")
			cmd.Stdin = strings.NewReader(text)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "dot: %s\n%s", stderr.String(), text)
			assert.Empty(t, stderr.String(), "dot warned")

			// Every edge written is an edge of the graph dot read.
			var edges int
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "edge ") {
					edges++
				}
			}
			assert.Equal(t, strings.Count(text, " -> "), edges)
		})
	}
}

func TestDOT(t *testing.T) {
	tests := []struct {
		name string
		m    machine
		want []string // lines the output must hold
	}{
		{
			name: "quoting",
			m:    diagramMachines[len(diagramMachines)-1].m,
			want: []string{
				`    "$start" -> "state";`,
				`    "state" -> "a-b" [label="go; now", style=solid];`,
				`    "state" -> "a_b" [label="x:y \"q\" #1 <b> {c} 50%", style=solid];`,
				`    "a-b" -> "a-b" [label="direction LR (procedure)", style=dotted];`,
				`    "note" -> "s_a_b" [label="back\\slash", style=solid];`,
				`    "a-b" -> "state" [label="done (return)", style=dashed];`,
				`    "state" -> "$end" [label="done", style=dashed];`,
			},
		},
		{
			name: "parent at the top level ends the episode",
			m: machine{
				Initial:  "strategy",
				OnDone:   map[string]string{"strategy": "rest", "rest": transitions.Parent},
				Triggers: []transitions.Trigger[int, int]{{Name: "tired", From: "strategy", To: "rest"}},
			},
			want: []string{
				`    "rest" -> "strategy" [label="done (return)", style=dashed];`,
				`    "rest" -> "$end" [label="done (return)", style=dashed];`,
			},
		},
		{
			name: "line break",
			m: machine{
				Initial:  "a",
				OnDone:   map[string]string{"a": transitions.End, "b": transitions.Parent},
				Triggers: []transitions.Trigger[int, int]{{Name: "two\nlines", From: "a", To: "b"}},
			},
			want: []string{`    "a" -> "b" [label="two\nlines", style=solid];`},
		},
		{
			name: "zero machine",
			m:    machine{},
			want: []string{`    "$start" [shape=point];`, `    "$end" [shape=doublecircle, label="end"];`, `}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Split(tt.m.DOT(), "\n")
			assert.Equal(t, "digraph transitions {", got[0])
			for _, line := range tt.want {
				assert.Contains(t, got, line)
			}
		})
	}
}
