package webtest

//go:generate go tool stringer -type=Outcome -linecomment

import (
	"math"
	"math/bits"
)

// Outcome is how the application answered the interaction the motion agent (or the
// login procedure) performed.
type Outcome uint8

// The outcomes of an interaction.
const (
	// OutcomeLoaded: the interaction went through and a page loaded (another page,
	// or the same one again).
	OutcomeLoaded Outcome = 1 + iota // loaded
	// OutcomeRefused: the form's rules refused the values; the page shows the errors
	// and keeps the values typed.
	OutcomeRefused // refused
	// OutcomeServerError: the application failed with a server error (500).
	OutcomeServerError // server error
	// OutcomeNotFound: the link led to a page that does not exist (404).
	OutcomeNotFound // not found
	// OutcomeNoResponse: nothing happened.
	OutcomeNoResponse // no response
)

// Completed reports whether the interaction was carried out: every outcome but
// OutcomeRefused (and none).
func (o Outcome) Completed() bool { return o != 0 && o != OutcomeRefused }

// never is the tape position of a unit not covered.
const never = math.MaxInt32

// tape holds what one episode has covered and the pages of its history, for every
// copy of its states at once, so that a state stays a small value the runtime copies
// freely without allocating.
//
// Coverage is a log of units in the order they were covered, and at[u] the position
// of unit u in it: a state that has covered n units sees u as covered when
// at[u] < n. A state only ever writes at its own position n, so the states that came
// before it, with smaller n, see nothing new; a write from a step the runtime then
// rejected is overwritten by the next committed one, which also clears the stale
// unit's position. History is a persistent stack: immutable nodes appended to hist,
// each naming the node below it.
type tape struct {
	at   []int32
	log  []int32
	hist []histNode
}

type histNode struct{ page, prev int32 }

// State is the environment state: the browser (current page, history, the values in
// the page's fields, the focused field, the target of the motion agent), the
// application's session (logged in, cart, flags), what the episode has covered and
// the defects found, and the budget of UI operations left.
//
// A State is a small value: copies share the episode's coverage record, so a copy
// keeps seeing what was covered when it was made, and stepping a state without
// keeping the result (a step the runtime rejects) leaves no trace. The record follows
// one line of states, as the hrl runtime keeps it: stepping an older state again
// (branching off) makes the states stepped from it before invalid. The read methods
// are safe for concurrent use.
type State struct {
	site     *Site
	tape     *tape
	covered  int32 // tape positions this state sees
	visited  int32 // pages visited
	hist     int32 // top history node, -1 when the history is empty
	page     int32
	target   int32 // the motion agent's target, -1 for none
	focus    int8  // field of the target form, -1 for none
	outcome  Outcome
	loggedIn bool
	finished bool
	cart     uint8
	flags    uint8
	budget   int32
	found    uint64
	values   [MaxPageFields]uint8 // by page slot: text Value (0: empty), select option (0: none), checkbox 0/1
	seq      [MaxSequences]uint8  // steps done of each sequence
}

// NewState returns the state a session starts in: on the site's start page, logged
// out, the cart empty, nothing covered but the start page, budget UI operations left.
func NewState(site *Site, budget int) State {
	units := int(site.units)
	t := &tape{at: make([]int32, units), log: make([]int32, 0, units), hist: make([]histNode, 0, 256)}
	for i := range t.at {
		t.at[i] = never
	}
	s := State{site: site, tape: t, hist: -1, page: -1, target: -1, focus: -1, budget: int32(min(budget, math.MaxInt32))}
	s.enter(site.start)
	return s
}

// Site returns the site the state runs on.
func (s State) Site() *Site { return s.site }

// Page returns the current page's id.
func (s State) Page() string { return s.site.pages[s.page].id }

// URL returns the current page's URL.
func (s State) URL() string { return s.site.pages[s.page].url }

// LoggedIn reports whether the session is logged in.
func (s State) LoggedIn() bool { return s.loggedIn }

// Cart returns the number of items in the cart.
func (s State) Cart() int { return int(s.cart) }

// Flag reports whether the session flag name is set.
func (s State) Flag(name string) bool {
	for i, f := range s.site.flags {
		if f == name {
			return s.flags&(1<<i) != 0
		}
	}
	return false
}

// Budget returns the UI operations left.
func (s State) Budget() int { return int(s.budget) }

// Finished reports whether the strategy agent ended the test.
func (s State) Finished() bool { return s.finished }

// Target returns the id of the motion agent's target (a link, a button or a form of
// the current page), "" when none.
func (s State) Target() string {
	if s.target < 0 {
		return ""
	}
	return s.site.targets[s.target].id
}

// Targets returns the ids of the current page's visible links, buttons and forms in
// page order: slot k of the strategy agent holds Targets()[k].
func (s State) Targets() []string {
	var out []string
	for _, t := range s.site.pages[s.page].targets {
		if s.visible(t) {
			out = append(out, s.site.targets[t].id)
		}
	}
	return out
}

// Outcome returns how the application answered the last interaction of the current
// target; 0 while none has happened.
func (s State) Outcome() Outcome { return s.outcome }

// Covered returns the number of coverage units covered.
func (s State) Covered() int { return int(s.covered) }

// Coverage returns the share of the site's coverage units covered.
func (s State) Coverage() float64 { return float64(s.covered) / float64(max(s.site.units, 1)) }

// PagesVisited returns the number of the site's pages visited.
func (s State) PagesVisited() int { return int(s.visited) }

// Visited reports whether the page with the given id was visited.
func (s State) Visited(pageID string) bool {
	for i := range s.site.userPages {
		if s.site.pages[i].id == pageID {
			return s.isCovered(s.site.pages[i].unit)
		}
	}
	return false
}

// History returns the ids of the pages "navigate back" returns to, the most recent
// first.
func (s State) History() []string {
	var out []string
	for n := s.hist; n >= 0; n = s.tape.hist[n].prev {
		out = append(out, s.site.pages[s.tape.hist[n].page].id)
	}
	return out
}

// DefectsFound returns the number of planted defects found.
func (s State) DefectsFound() int { return bits.OnesCount64(s.found) }

// FoundAll reports whether every planted defect was found.
func (s State) FoundAll() bool { return s.found == s.site.allDefects }

// Found reports whether the defect with the given id was found.
func (s State) Found(id string) bool {
	for i, d := range s.site.defects {
		if d.ID == id {
			return s.found&(1<<i) != 0
		}
	}
	return false
}

// FoundIDs returns the ids of the defects found, in the site's order.
func (s State) FoundIDs() []string {
	out := []string{}
	for i, d := range s.site.defects {
		if s.found&(1<<i) != 0 {
			out = append(out, d.ID)
		}
	}
	return out
}

func (s *State) isCovered(u int32) bool { return u >= 0 && s.tape.at[u] < s.covered }

// cover records unit u as covered and reports whether it was new.
func (s *State) cover(u int32) bool {
	t := s.tape
	if u < 0 || t.at[u] < s.covered {
		return false
	}
	pos := s.covered
	if int(pos) < len(t.log) {
		if stale := t.log[pos]; t.at[stale] == pos {
			t.at[stale] = never
		}
		t.log[pos] = u
	} else {
		t.log = append(t.log, u)
	}
	t.at[u] = pos
	s.covered++
	return true
}

func (s *State) find(d int32) { s.found |= 1 << d }

// enter loads page p: a page that requires login sends a session that is not logged
// in to the login page. The page's fields start empty.
func (s *State) enter(p int32) {
	pg := &s.site.pages[p]
	if pg.login && !s.loggedIn && s.site.loginPage >= 0 {
		p, pg = s.site.loginPage, &s.site.pages[s.site.loginPage]
	}
	s.page = p
	s.values = [MaxPageFields]uint8{}
	s.focus = -1
	if s.cover(pg.unit) {
		s.visited++
	}
}

// visit loads page p from the current page, which goes on the history.
func (s *State) visit(p int32) {
	s.tape.hist = append(s.tape.hist, histNode{page: s.page, prev: s.hist})
	s.hist = int32(len(s.tape.hist) - 1)
	s.enter(p)
}

// back loads the page on top of the history and removes it from there.
func (s *State) back() {
	n := s.tape.hist[s.hist]
	s.hist = n.prev
	s.enter(n.page)
}

func (s *State) holds(c cond) bool {
	switch {
	case c.loggedIn == 1 && !s.loggedIn, c.loggedIn == 2 && s.loggedIn:
		return false
	case c.cart == 1 && s.cart != 0, c.cart == 2 && s.cart == 0:
		return false
	}
	return s.flags&c.flag == c.flag && s.flags&c.noFlag == 0
}

// dest is where n leads in the current session: a page, or -1 to reload.
func (s *State) dest(n *nav) int32 {
	for i := range n.routes {
		if s.holds(n.routes[i].cond) {
			return n.routes[i].to
		}
	}
	return n.to
}

func (s *State) apply(effects []effect) {
	for _, e := range effects {
		switch e.op {
		case addToCart:
			if s.cart < math.MaxUint8 {
				s.cart++
			}
		case removeFromCart:
			if s.cart > 0 {
				s.cart--
			}
		case clearCart:
			s.cart = 0
		case logIn:
			s.loggedIn = true
		case logOut:
			s.loggedIn = false
		case setFlag:
			s.flags |= e.flag
		case clearFlag:
			s.flags &^= e.flag
		}
	}
}

// advance counts an interaction with target t that went through in every sequence
// and returns the page a completed sequence reveals, or -1.
func (s *State) advance(t int32) int32 {
	reveal := int32(-1)
	for k := range s.site.seqs {
		q := &s.site.seqs[k]
		if n := int(s.seq[k]); n < len(q.steps) && q.steps[n] == t {
			s.seq[k]++
			if int(s.seq[k]) == len(q.steps) {
				s.find(q.defect)
				reveal = q.reveals
			}
		}
	}
	return reveal
}

// navigate applies a successful interaction with target t: effects, sequences and
// the page it leads to (routes are chosen before the effects).
func (s *State) navigate(t int32) {
	tg := &s.site.targets[t]
	to := s.dest(&tg.nav)
	s.apply(tg.nav.effects)
	if r := s.advance(t); r >= 0 {
		to = r
	}
	if to < 0 {
		s.enter(s.page) // a reload
	} else {
		s.visit(to)
	}
	s.outcome = OutcomeLoaded
}

// click clicks link or button t.
func (s *State) click(t int32) {
	tg := &s.site.targets[t]
	s.cover(tg.unit)
	if tg.defect >= 0 {
		s.find(tg.defect)
		if s.site.defects[tg.defect].Kind == DefectDeadElement {
			s.outcome = OutcomeNoResponse
			return
		}
		s.visit(s.site.notFound)
		s.outcome = OutcomeNotFound
		return
	}
	s.navigate(t)
}

// fieldValue is the stored value of field fd, read as a probe index.
func (s *State) fieldValue(fd *field) uint8 {
	v := s.values[fd.slot]
	if fd.kind == Text && v == 0 {
		v = uint8(Empty)
	}
	return v
}

// probeUnit is the coverage unit of field fd holding stored value v, or -1 (a select
// with no option chosen).
func probeUnit(fd *field, v uint8) int32 {
	switch fd.kind {
	case Text, Select:
		if v == 0 {
			return -1
		}
		return fd.probe + int32(v) - 1
	default:
		return fd.probe + int32(v)
	}
}

// submit submits form f with the values in its fields; withNav false applies a
// successful submission without navigating (the login procedure's redirect).
func (s *State) submit(fi int32, withNav bool) {
	site := s.site
	f := &site.forms[fi]
	s.cover(site.targets[f.target].unit)
	ok := true
	for _, fdi := range f.fields {
		fd := &site.fields[fdi]
		v := s.fieldValue(fd)
		s.cover(probeUnit(fd, v))
		ok = ok && fd.ok[v] && (!f.login || v == fd.valid)
	}
	if !ok {
		s.outcome = OutcomeRefused
		return
	}
	for _, c := range f.crashes {
		fd := &site.fields[f.fields[c.field]]
		if s.fieldValue(fd) == uint8(c.value) {
			s.find(c.defect)
			s.visit(site.serverError)
			s.outcome = OutcomeServerError
			return
		}
	}
	if withNav {
		s.navigate(f.target)
		return
	}
	s.apply(site.targets[f.target].nav.effects)
	s.advance(f.target)
	s.outcome = OutcomeLoaded
}

// visible reports whether target t shows in the current session.
func (s *State) visible(t int32) bool { return s.holds(s.site.targets[t].visible) }

// needsLogin reports whether clicking target t would run into a page that requires
// login while the session is logged out.
func (s *State) needsLogin(t int32) bool {
	tg := &s.site.targets[t]
	if s.loggedIn || s.site.loginForm < 0 || tg.kind == Form || tg.defect >= 0 {
		return false
	}
	to := s.dest(&tg.nav)
	return to >= 0 && s.site.pages[to].login
}

// backNeedsLogin reports whether going back would run into a page that requires
// login while the session is logged out.
func (s *State) backNeedsLogin() bool {
	if s.loggedIn || s.site.loginForm < 0 || s.hist < 0 {
		return false
	}
	return s.site.pages[s.tape.hist[s.hist].page].login
}

// spend takes n UI operations from the budget.
func (s *State) spend(n int32) { s.budget = max(s.budget-n, 0) }
