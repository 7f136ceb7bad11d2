package transitions

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Mermaid draws the machine as a Mermaid state diagram (stateDiagram-v2). Agents are
// states, action triggers are edges labelled with their names, procedures are self-loops
// labelled "NAME (procedure)", on-done rules are edges labelled "done", a Parent rule is
// an edge labelled "done (return)" to every agent control can return to (to the end
// when the agent can also run at the top level, where Parent ends the episode), and [*]
// is the start and End.
//
// Each agent's state id is "s_" followed by its name, with characters other than ASCII
// letters, digits and '_' replaced by '_' (and a numeric suffix where two names would
// clash), and is declared with the agent's name as its description, so that no name
// can be taken for a Mermaid keyword. Names and labels write the characters Mermaid
// reads as syntax (such as ';', ':', '#', '"', '<') as entity codes like #59;.
// The output is deterministic.
func (m Machine[S, A]) Mermaid() string {
	ids := m.mermaidIDs()
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		fmt.Fprintf(&b, "    state \"%s\" as %s\n", mermaidText(name), ids[name])
	}
	node := func(name string) string {
		if name == End {
			return "[*]"
		}
		return ids[name]
	}
	edge := func(from, to, label string) {
		fmt.Fprintf(&b, "    %s --> %s", node(from), node(to))
		if label != "" {
			fmt.Fprintf(&b, ": %s", mermaidText(label))
		}
		b.WriteByte('\n')
	}
	if m.Initial != "" {
		fmt.Fprintf(&b, "    [*] --> %s\n", ids[m.Initial])
	}
	for _, tr := range m.Triggers {
		to, label := m.edge(tr)
		edge(tr.From, to, label)
	}
	returns := m.returns()
	for _, from := range slices.Sorted(maps.Keys(m.OnDone)) {
		if to := m.OnDone[from]; to == Parent {
			for _, p := range returns[from] {
				edge(from, p, "done (return)")
			}
		} else {
			edge(from, to, "done")
		}
	}
	return b.String()
}

// DOT draws the machine in Graphviz's DOT language, with the same content as Mermaid:
// trigger edges solid, procedure self-loops dotted, on-done edges dashed. Agents are
// nodes named by their agent names, always quoted; "$start" and "$end" are the start
// and End.
func (m Machine[S, A]) DOT() string {
	var b strings.Builder
	b.WriteString("digraph transitions {\n    rankdir=LR;\n    node [shape=box, style=rounded];\n")
	b.WriteString("    \"$start\" [shape=point];\n    \"$end\" [shape=doublecircle, label=\"end\"];\n")
	if m.Initial != "" {
		fmt.Fprintf(&b, "    \"$start\" -> %s;\n", dotQuote(m.Initial))
	}
	for _, tr := range m.Triggers {
		to, label := m.edge(tr)
		style := "solid"
		if tr.Run != nil {
			style = "dotted"
		}
		fmt.Fprintf(&b, "    %s -> %s [label=%s, style=%s];\n", dotQuote(tr.From), dotQuote(to), dotQuote(label), style)
	}
	returns := m.returns()
	for _, from := range slices.Sorted(maps.Keys(m.OnDone)) {
		if to := m.OnDone[from]; to == Parent {
			for _, p := range returns[from] {
				fmt.Fprintf(&b, "    %s -> %s [label=\"done (return)\", style=dashed];\n", dotQuote(from), dotQuote(p))
			}
		} else {
			fmt.Fprintf(&b, "    %s -> %s [label=\"done\", style=dashed];\n", dotQuote(from), dotQuote(to))
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

// returns lists, for every agent, where control can go when a sub-episode of the agent
// ends under the Parent rule: the agents it can run under, sorted, then End when it can
// run at the top level. It follows the runtime as Compile does: the target of a trigger
// runs under the trigger's agent, the initial agent at the top level, and an agent that
// an on-done rule hands control to runs under the parent of the agent whose sub-episode
// ended.
func (m Machine[S, A]) returns() map[string][]string {
	parents := make(map[string]map[string]bool) // End stands for the top level
	add := func(agent, parent string) bool {
		if parents[agent] == nil {
			parents[agent] = make(map[string]bool)
		}
		if parents[agent][parent] {
			return false
		}
		parents[agent][parent] = true
		return true
	}
	if m.Initial != "" {
		add(m.Initial, End)
	}
	for _, tr := range m.Triggers {
		if tr.Run == nil && tr.To != "" {
			add(tr.To, tr.From)
		}
	}
	for changed := true; changed; {
		changed = false
		for from, to := range m.OnDone {
			if to == End || to == Parent {
				continue
			}
			for p := range parents[from] {
				if add(to, p) {
					changed = true
				}
			}
		}
	}
	out := make(map[string][]string, len(parents))
	for agent, ps := range parents {
		list := slices.Sorted(maps.Keys(ps))
		if i := slices.Index(list, End); i >= 0 {
			list = append(slices.Delete(list, i, i+1), End)
		}
		out[agent] = list
	}
	return out
}

// mermaidIDs gives every agent the machine names a Mermaid state id: "s_" and the name
// with characters other than ASCII letters, digits and '_' replaced by '_'. Names made
// only of those characters keep that id; the others get a numeric suffix where needed
// to stay unique.
func (m Machine[S, A]) mermaidIDs() map[string]string {
	names := make(map[string]bool)
	if m.Initial != "" {
		names[m.Initial] = true
	}
	for from, to := range m.OnDone {
		names[from] = true
		if to != End && to != Parent {
			names[to] = true
		}
	}
	for _, tr := range m.Triggers {
		names[tr.From] = true
		if tr.Run == nil {
			names[tr.To] = true
		}
	}
	ids := make(map[string]string, len(names))
	used := make(map[string]bool, len(names))
	var rest []string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if id := "s_" + mermaidSafe(name); id == "s_"+name {
			ids[name], used[id] = id, true
		} else {
			rest = append(rest, name)
		}
	}
	for _, name := range rest {
		id := "s_" + mermaidSafe(name)
		for k := 2; used[id]; k++ {
			id = "s_" + mermaidSafe(name) + "_" + strconv.Itoa(k)
		}
		ids[name], used[id] = id, true
	}
	return ids
}

// mermaidSafe replaces the characters of name other than ASCII letters, digits and '_'
// with '_'.
func mermaidSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// mermaidText writes s for a Mermaid label or state description: the characters Mermaid
// reads as syntax become entity codes (#59; for ';'), as does the first letter of
// "direction LR" and the like, which Mermaid's lexer takes for a direction statement
// anywhere in a line; control characters become spaces.
func mermaidText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune("#;:\"%<>{}", r), isDirection(s[i:]):
			fmt.Fprintf(&b, "#%d;", r)
		case unicode.IsControl(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isDirection reports whether s starts with a direction statement as Mermaid's lexer
// sees one, case-insensitively: "direction", white space, then TB, BT, RL or LR.
func isDirection(s string) bool {
	const word = "direction"
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return false
	}
	rest := strings.TrimLeftFunc(s[len(word):], unicode.IsSpace)
	if len(rest) == len(s)-len(word) || len(rest) < 2 {
		return false
	}
	switch strings.ToLower(rest[:2]) {
	case "tb", "bt", "rl", "lr":
		return true
	}
	return false
}

// dotQuote writes s as a DOT quoted string: '"' and '\' escaped, a line break as \n,
// other control characters as spaces.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case unicode.IsControl(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
