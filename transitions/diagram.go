package transitions

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Mermaid draws the machine as a Mermaid state diagram. Agents are states, action
// triggers are edges labelled with their names, procedures are self-loops, on-done rules
// are dashed-label edges "done", and End is the final state. The output is deterministic.
func (m Machine[S, A]) Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	if m.Initial != "" {
		fmt.Fprintf(&b, "    [*] --> %s\n", mermaidID(m.Initial))
	}
	for _, tr := range m.Triggers {
		to, label := m.edge(tr)
		fmt.Fprintf(&b, "    %s --> %s: %s\n", mermaidID(tr.From), mermaidID(to), label)
	}
	for _, from := range slices.Sorted(maps.Keys(m.OnDone)) {
		switch to := m.OnDone[from]; to {
		case End:
			fmt.Fprintf(&b, "    %s --> [*]: done\n", mermaidID(from))
		case Parent:
			for _, p := range m.parents(from) {
				fmt.Fprintf(&b, "    %s --> %s: done (return)\n", mermaidID(from), mermaidID(p))
			}
		default:
			fmt.Fprintf(&b, "    %s --> %s: done\n", mermaidID(from), mermaidID(to))
		}
	}
	return b.String()
}

// DOT draws the machine in Graphviz's DOT language, with the same content as Mermaid:
// trigger edges solid, procedure self-loops dotted, on-done edges dashed.
func (m Machine[S, A]) DOT() string {
	var b strings.Builder
	b.WriteString("digraph transitions {\n    rankdir=LR;\n    node [shape=box, style=rounded];\n")
	b.WriteString("    \"$start\" [shape=point];\n    \"$end\" [shape=doublecircle, label=\"end\"];\n")
	if m.Initial != "" {
		fmt.Fprintf(&b, "    \"$start\" -> %q;\n", m.Initial)
	}
	for _, tr := range m.Triggers {
		to, label := m.edge(tr)
		style := "solid"
		if tr.Run != nil {
			style = "dotted"
		}
		fmt.Fprintf(&b, "    %q -> %q [label=%q, style=%s];\n", tr.From, to, label, style)
	}
	for _, from := range slices.Sorted(maps.Keys(m.OnDone)) {
		switch to := m.OnDone[from]; to {
		case End:
			fmt.Fprintf(&b, "    %q -> \"$end\" [label=\"done\", style=dashed];\n", from)
		case Parent:
			for _, p := range m.parents(from) {
				fmt.Fprintf(&b, "    %q -> %q [label=\"done (return)\", style=dashed];\n", from, p)
			}
		default:
			fmt.Fprintf(&b, "    %q -> %q [label=\"done\", style=dashed];\n", from, to)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// edge returns where a trigger leads and its label.
func (m Machine[S, A]) edge(tr Trigger[S, A]) (to, label string) {
	if tr.Run != nil {
		return tr.From, tr.Name + " (procedure)"
	}
	return tr.To, tr.Name
}

// parents lists, sorted, the agents with a trigger handing control to agent.
func (m Machine[S, A]) parents(agent string) []string {
	var ps []string
	for _, tr := range m.Triggers {
		if tr.To == agent && tr.Run == nil && !slices.Contains(ps, tr.From) {
			ps = append(ps, tr.From)
		}
	}
	slices.Sort(ps)
	return ps
}

// mermaidID makes a name usable as a Mermaid state id (names may hold '-').
func mermaidID(name string) string {
	return strings.ReplaceAll(name, "-", "_")
}
