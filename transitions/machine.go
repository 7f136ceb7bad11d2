package transitions

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/multierr"
)

// Targets of the on-done table that are not agents.
const (
	// End ends the episode when the agent's sub-episode ends.
	End = "$end"
	// Parent hands control back to the agent whose action started the sub-episode.
	Parent = "$parent"
)

// Procedure is a non-learned routine that runs to completion inside one environment
// step: it maps the state after an action to the state the routine leaves. An error
// rejects the action, and the runtime keeps the state it had before the action.
type Procedure[S, A any] func(s S, a A) (S, error)

// Trigger is one named switching rule. The runtime checks an acting agent's triggers
// in the order of Machine.Triggers after each of its actions; the first whose When
// matches fires. A trigger either hands control to the agent To, which starts a
// sub-episode as the acting agent's child, or runs the procedure Run.
type Trigger[S, A any] struct {
	// Name identifies the rule in errors and diagrams; unique within the machine.
	Name string
	// From is the name of the agent whose actions the trigger watches.
	From string
	// When reports whether an action fires the trigger; nil matches every action.
	When func(a A) bool
	// To is the agent that takes control, or "" when Run is set.
	To string
	// Run is the procedure to run, or nil when To is set.
	Run Procedure[S, A]
}

// Machine is the switching state machine of a hierarchical environment, as data.
// The zero value is not valid: Initial and an OnDone entry for every agent are needed.
type Machine[S, A any] struct {
	// Initial is the agent that acts after a reset.
	Initial string
	// OnDone says, for every agent, what happens when one of its sub-episodes ends:
	// another agent takes control, Parent, or End.
	OnDone map[string]string
	// Triggers are the ordered action triggers; the first match wins.
	Triggers []Trigger[S, A]
	// Switching lists the agents every action of which must match a trigger: an action
	// of theirs that matches none is an error rather than a plain step.
	Switching []string
}

// ErrInvalid is wrapped by every problem Compile reports.
var ErrInvalid = errors.New("transitions: invalid machine")

// RuleError is one problem with a machine, naming the agent and the rule.
type RuleError struct {
	Agent  string // the agent concerned, "" when none
	Rule   string // the rule concerned: a trigger name, "on-done", "initial" or "agents"
	Reason string
}

func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString("transitions: ")
	if e.Rule != "" {
		fmt.Fprintf(&b, "rule %q: ", e.Rule)
	}
	if e.Agent != "" {
		fmt.Fprintf(&b, "agent %q: ", e.Agent)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns ErrInvalid.
func (e *RuleError) Unwrap() error { return ErrInvalid }

// Errors splits the error Compile returns into its RuleErrors.
func Errors(err error) []*RuleError {
	var out []*RuleError
	for _, e := range multierr.Errors(err) {
		var re *RuleError
		if errors.As(e, &re) {
			out = append(out, re)
		}
	}
	return out
}

// Table is a machine compiled against the environment's agents, for the runtime:
// agents are indexes into the agent list. It is immutable and safe for concurrent use.
type Table[S, A any] struct {
	machine   Machine[S, A]
	agents    []string
	initial   int
	onDone    []int // agent index, or DoneEnd, DoneParent
	triggers  [][]fired
	switching []bool
}

// Targets of Table.OnDone that are not agent indexes.
const (
	DoneEnd    = -1
	DoneParent = -2
)

// Compile validates m against the environment's agent names and returns the table
// the runtime steps with. It reports every problem at once, each a *RuleError
// (see Errors): bad or duplicate agent names, unknown agents, missing on-done entries,
// malformed or duplicate triggers, agents that cannot be reached from the initial agent,
// and agents from which no path ends the episode.
func Compile[S, A any](m Machine[S, A], agents []string) (*Table[S, A], error) {
	var errs []error
	add := func(agent, rule, format string, args ...any) {
		errs = append(errs, &RuleError{Agent: agent, Rule: rule, Reason: fmt.Sprintf(format, args...)})
	}
	index := make(map[string]int, len(agents))
	for i, name := range agents {
		if reason := checkName(name); reason != "" {
			add(name, "agents", "%s", reason)
		}
		if _, dup := index[name]; dup {
			add(name, "agents", "duplicate agent name")
			continue
		}
		index[name] = i
	}
	if len(agents) == 0 {
		add("", "agents", "the environment has no agents")
	}
	t := &Table[S, A]{
		machine:   m.clone(),
		agents:    slices.Clone(agents),
		initial:   -1,
		onDone:    make([]int, len(agents)),
		triggers:  make([][]fired, len(agents)),
		switching: make([]bool, len(agents)),
	}
	if i, ok := index[m.Initial]; ok {
		t.initial = i
	} else if m.Initial == "" {
		add("", "initial", "no initial agent")
	} else {
		add(m.Initial, "initial", "initial agent is not an agent of the environment")
	}

	for i, name := range agents {
		next, ok := m.OnDone[name]
		switch {
		case !ok:
			if index[name] != i {
				t.onDone[i] = DoneEnd
				continue // a duplicate name, already reported
			}
			add(name, "on-done", "no on-done entry: say which agent takes control when its sub-episode ends, Parent or End")
			t.onDone[i] = DoneEnd
		case next == End:
			t.onDone[i] = DoneEnd
		case next == Parent:
			t.onDone[i] = DoneParent
			if name == m.Initial {
				add(name, "on-done", "the initial agent has no parent to return to")
			}
		default:
			j, known := index[next]
			if !known {
				add(name, "on-done", "target %q is not an agent of the environment", next)
				t.onDone[i] = DoneEnd
				continue
			}
			t.onDone[i] = j
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.OnDone)) {
		if _, known := index[name]; !known {
			add(name, "on-done", "on-done entry for an agent the environment does not have")
		}
	}

	names := make(map[string]bool, len(m.Triggers))
	for k, tr := range m.Triggers {
		rule := tr.Name
		if rule == "" {
			rule = fmt.Sprintf("trigger #%d", k)
			add(tr.From, rule, "trigger has no name")
		} else if names[rule] {
			add(tr.From, rule, "duplicate trigger name")
		}
		names[rule] = true
		from, known := index[tr.From]
		if !known {
			add(tr.From, rule, "trigger watches an agent the environment does not have")
		}
		switch {
		case tr.To != "" && tr.Run != nil:
			add(tr.From, rule, "trigger has both a target agent and a procedure; give one")
		case tr.To == "" && tr.Run == nil:
			add(tr.From, rule, "trigger has neither a target agent nor a procedure")
		case tr.To != "":
			if _, ok := index[tr.To]; !ok {
				add(tr.From, rule, "target %q is not an agent of the environment", tr.To)
			}
		}
		if known {
			t.triggers[from] = append(t.triggers[from], fired{trigger: k, to: index[tr.To]})
		}
	}
	for _, name := range m.Switching {
		i, known := index[name]
		if !known {
			add(name, "switching", "switching agent is not an agent of the environment")
			continue
		}
		t.switching[i] = true
		if len(t.triggers[i]) == 0 {
			add(name, "switching", "every action of this agent must switch, but no trigger watches it")
		}
	}
	if len(errs) == 0 {
		errs = append(errs, t.checkCycles()...)
	}
	if len(errs) == 0 {
		errs = append(errs, t.checkPaths()...)
	}
	if err := multierr.Combine(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// checkCycles reports triggers that can hand control to an agent already waiting below
// the acting one: an agent would become its own ancestor, and its ids and pending
// decisions would be ambiguous. It follows trigger edges only, depth first from each
// agent in order, and reports each cycle once, at the trigger that closes it.
func (t *Table[S, A]) checkCycles() []error {
	n := len(t.agents)
	const (
		unseen = iota
		open
		closed
	)
	state := make([]int, n)
	var path []int
	var errs []error
	var visit func(i int)
	visit = func(i int) {
		state[i] = open
		path = append(path, i)
		for _, f := range t.triggers[i] {
			tr := &t.machine.Triggers[f.trigger]
			if tr.Run != nil {
				continue
			}
			switch state[f.to] {
			case unseen:
				visit(f.to)
			case open:
				start := slices.Index(path, f.to)
				names := make([]string, 0, len(path)-start+1)
				for _, k := range path[start:] {
					names = append(names, t.agents[k])
				}
				names = append(names, t.agents[f.to])
				errs = append(errs, &RuleError{Agent: tr.From, Rule: tr.Name,
					Reason: fmt.Sprintf("trigger cycle %s: an agent would take control below itself", strings.Join(names, " -> "))})
			}
		}
		path = path[:len(path)-1]
		state[i] = closed
	}
	for i := range n {
		if state[i] == unseen {
			visit(i)
		}
	}
	return errs
}

// checkPaths reports agents unreachable from the initial agent and reachable agents from
// which no path ends the episode. Node len(agents) stands for End.
//
// Parent needs the agents that can be an agent's parent: the agents with a trigger to it,
// and the parents of any agent whose on-done rule hands control to it, since such a
// successor takes its predecessor's place. An agent that can run at the top level (the
// initial agent and its on-done successors) has no parent, and there Parent ends the
// episode.
func (t *Table[S, A]) checkPaths() []error {
	n := len(t.agents)
	edges := make([][]int, n+1)
	parents := make([][]bool, n) // parents[i][p]; p == n means the top level
	for i := range n {
		parents[i] = make([]bool, n+1)
	}
	parents[t.initial][n] = true
	for i := range n {
		for _, f := range t.triggers[i] {
			if t.machine.Triggers[f.trigger].Run == nil {
				edges[i] = append(edges[i], f.to)
				parents[f.to][i] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range n {
			d := t.onDone[i]
			if d < 0 {
				continue
			}
			for p, ok := range parents[i] {
				if ok && !parents[d][p] {
					parents[d][p] = true
					changed = true
				}
			}
		}
	}
	for i := range n {
		switch d := t.onDone[i]; d {
		case DoneEnd:
			edges[i] = append(edges[i], n)
		case DoneParent:
			for p, ok := range parents[i] {
				if ok {
					edges[i] = append(edges[i], p) // p == n: End
				}
			}
		default:
			edges[i] = append(edges[i], d)
		}
	}
	reach := func(from int, edges [][]int) []bool {
		seen := make([]bool, n+1)
		stack := []int{from}
		seen[from] = true
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range edges[v] {
				if !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
		return seen
	}
	reverse := make([][]int, n+1)
	for v, ws := range edges {
		for _, w := range ws {
			reverse[w] = append(reverse[w], v)
		}
	}
	fromInitial := reach(t.initial, edges)
	toEnd := reach(n, reverse)
	var errs []error
	for i, name := range t.agents {
		switch {
		case !fromInitial[i]:
			errs = append(errs, &RuleError{Agent: name, Rule: "reachability",
				Reason: fmt.Sprintf("unreachable: no trigger or on-done rule leads to it from the initial agent %q", t.agents[t.initial])})
		case !toEnd[i]:
			errs = append(errs, &RuleError{Agent: name, Rule: "reachability",
				Reason: "no path from this agent ends the episode"})
		}
	}
	return errs
}

func checkName(name string) string {
	if name == "" {
		return "empty agent name"
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '_' || r == '-')) {
			return fmt.Sprintf("agent name must start with a letter and hold only letters, digits, '_' and '-' (found %q)", r)
		}
	}
	return ""
}

// Machine returns a copy of the machine the table was compiled from; changing it
// changes neither the table nor later copies.
func (t *Table[S, A]) Machine() Machine[S, A] { return t.machine.clone() }

// clone copies m deeply enough that no map or slice is shared with it.
func (m Machine[S, A]) clone() Machine[S, A] {
	m.OnDone = maps.Clone(m.OnDone)
	m.Triggers = slices.Clone(m.Triggers)
	m.Switching = slices.Clone(m.Switching)
	return m
}

// Agents returns the agent names, in the environment's order.
func (t *Table[S, A]) Agents() []string { return slices.Clone(t.agents) }

// Initial returns the index of the initial agent.
func (t *Table[S, A]) Initial() int { return t.initial }

// OnDone returns what follows the end of a sub-episode of the agent at index i: an agent
// index, DoneEnd or DoneParent.
func (t *Table[S, A]) OnDone(i int) int { return t.onDone[i] }

// Switching reports whether every action of agent i must match a trigger.
func (t *Table[S, A]) Switching(i int) bool { return t.switching[i] }

// Match returns the first trigger of agent i that action a fires, the index of the
// agent it hands control to (-1 for a procedure), and whether any fired. It allocates
// nothing. The trigger belongs to the table: read it, do not change it.
func (t *Table[S, A]) Match(i int, a A) (tr *Trigger[S, A], to int, ok bool) {
	for _, f := range t.triggers[i] {
		tr := &t.machine.Triggers[f.trigger]
		if tr.When == nil || tr.When(a) {
			if tr.Run != nil {
				return tr, -1, true
			}
			return tr, f.to, true
		}
	}
	return nil, -1, false
}

type fired struct {
	trigger int // index into Machine.Triggers
	to      int // target agent index when the trigger hands over control
}

// Index returns the index of the agent called name, or -1.
func (t *Table[S, A]) Index(name string) int { return slices.Index(t.agents, name) }
