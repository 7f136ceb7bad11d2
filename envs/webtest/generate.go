package webtest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// MinGeneratedPages and MaxGeneratedPages bound the size of a generated site.
const (
	MinGeneratedPages = 8
	MaxGeneratedPages = 100_000
)

// Generate draws a random site of n pages with rng, for tests at scale. It builds a
// SiteSpec and compiles it with Compile, so a generated site passes the checks a site
// file does (Site.Spec gives its document).
//
// The site has a home page (the start), a login page and an account page behind the
// login with a log-out button; the other pages hang in a random tree below the home
// page, with a link back home, a few cross links and, at random, buttons that add to
// the cart and forms of one to four fields (texts with patterns or numeric ranges,
// selects, checkboxes) that lead to another page or reload; about a quarter of them
// require login. It plants min(max(4, n/8), MaxDefects) defects, spread over the
// kinds: broken links, dead buttons, server errors (a value class in a free-text
// field of a form) and one sequence (a button that sets a flag, then a button of the
// same page that the flag shows, which reveals a page nothing else leads to). The
// same rng state gives the same site.
func Generate(rng *rand.Rand, n int) (*Site, error) {
	if n < MinGeneratedPages || n > MaxGeneratedPages {
		return nil, &SiteError{Reason: fmt.Sprintf("generated sites have %d to %d pages; got %d", MinGeneratedPages, MaxGeneratedPages, n)}
	}
	g := &generator{rng: rng, n: n}
	return Compile(g.site())
}

type generator struct {
	rng    *rand.Rand
	n      int
	pages  []PageSpec
	forms  int
	hidden int // the page the sequence reveals
}

const (
	genHome    = 0
	genLogin   = 1
	genAccount = 2
)

// room reports how many more links, buttons and forms page i can take.
func (g *generator) room(i int) int {
	p := &g.pages[i]
	return MaxTargets - len(p.Elements) - len(p.Forms)
}

func (g *generator) link(from, to int, id string) {
	p := &g.pages[from]
	p.Elements = append(p.Elements, ElementSpec{ID: id, Kind: "link", Label: "Go to " + g.pages[to].Title, Nav: Nav{To: g.pages[to].ID}})
}

// pick returns a random page among 3 .. n-1 other than the hidden one for which ok
// holds, or -1 after a bounded search.
func (g *generator) pick(ok func(i int) bool) int {
	for range 64 {
		i := 3 + g.rng.IntN(g.n-3)
		if i != g.hidden && ok(i) {
			return i
		}
	}
	for i := 3; i < g.n; i++ {
		if i != g.hidden && ok(i) {
			return i
		}
	}
	return -1
}

func (g *generator) site() SiteSpec {
	n := g.n
	g.hidden = n - 1
	g.pages = make([]PageSpec, n)
	for i := range g.pages {
		id := "p" + strconv.Itoa(i)
		g.pages[i] = PageSpec{ID: id, URL: "/" + id, Title: "Page " + strconv.Itoa(i)}
	}
	g.pages[genHome] = PageSpec{ID: "home", URL: "/", Title: "Home"}
	g.pages[genLogin] = PageSpec{ID: "login", URL: "/login", Title: "Log in"}
	g.pages[genAccount] = PageSpec{ID: "account", URL: "/account", Title: "Account", RequiresLogin: true}
	loggedOut := false
	g.link(genHome, genLogin, "log-in")
	g.pages[genHome].Elements[0].VisibleIf = &Condition{LoggedIn: &loggedOut}
	g.link(genHome, genAccount, "account")
	g.pages[genLogin].Forms = []FormSpec{{
		ID: "login", Label: "Log in", Nav: Nav{To: "account", Effects: []string{"log_in"}},
		Fields: []FieldSpec{
			{ID: "user", Kind: "text", Label: "User", Required: true, Valid: "tester"},
			{ID: "password", Kind: "text", Label: "Password", Required: true, Valid: "secret"},
		},
		Submit: &SubmitSpec{ID: "sign-in", Label: "Log in"},
	}}
	g.pages[genAccount].Elements = []ElementSpec{{ID: "log-out", Kind: "button", Label: "Log out", Nav: Nav{To: "home", Effects: []string{"log_out"}}}}
	for i := 1; i < n; i++ {
		g.link(i, genHome, "home")
	}
	// The tree: every page from 3 on, but the hidden one, under an earlier page.
	for i := 3; i < n-1; i++ {
		parent := g.parent(i)
		for tries := 0; g.room(parent) < 6 && tries < 64; tries++ {
			parent = g.parent(i)
		}
		if g.room(parent) < 6 {
			parent = i - 1 // a fresh page has room
		}
		g.link(parent, i, "to-"+g.pages[i].ID)
		g.pages[i].RequiresLogin = g.rng.IntN(4) == 0
	}
	// Cross links, buttons and forms.
	for i := 3; i < n-1; i++ {
		for k := range g.rng.IntN(3) {
			if to := 3 + g.rng.IntN(n-4); to != i && g.room(i) > 4 {
				g.link(i, to, "cross-"+strconv.Itoa(k))
			}
		}
		if g.rng.IntN(3) == 0 && g.room(i) > 4 {
			p := &g.pages[i]
			p.Elements = append(p.Elements, ElementSpec{ID: "add", Kind: "button", Label: "Add to cart", Nav: Nav{Effects: []string{"add_to_cart"}}})
		}
		for k := range g.rng.IntN(3) {
			if g.room(i) > 4 {
				g.form(i, "form-"+strconv.Itoa(k))
			}
		}
	}
	spec := SiteSpec{Name: "generated-" + strconv.Itoa(n), Start: "home", Login: &LoginSpec{Page: "login", Form: "login"}, Flags: []string{"unlocked"}}
	spec.Defects = g.defects()
	spec.Pages = g.pages
	return spec
}

// parent draws the parent of page i in the tree: home or a page before i.
func (g *generator) parent(i int) int {
	if r := g.rng.IntN(i - 2); r > 0 {
		return r + 2
	}
	return genHome
}

// fields counts the form fields of page i.
func (g *generator) fields(i int) int {
	n := 0
	for _, f := range g.pages[i].Forms {
		n += len(f.Fields)
	}
	return n
}

// patterns are the text rules a generated field may have, each with a valid value.
var patterns = []struct {
	pattern  string
	min, max *float64
	valid    string
}{
	{pattern: "[a-z]+", valid: "hello"},
	{pattern: "[0-9]{4}", valid: "2024"},
	{pattern: "[^@ ]+@[^@ ]+\\.[a-z]+", valid: "ann@example.com"},
	{min: ptr(1), max: ptr(100), valid: "42"},
	{min: ptr(-50), max: ptr(50), valid: "7"},
	{valid: "free text"},
}

// form adds a form of one to four fields to page i.
func (g *generator) form(i int, id string) {
	f := FormSpec{ID: id, Label: "Form " + id, Submit: &SubmitSpec{ID: id + "-submit", Label: "Send"}}
	for k := range 1 + g.rng.IntN(4) {
		fid := id + "-f" + strconv.Itoa(k)
		switch r := g.rng.IntN(10); {
		case r < 7:
			p := patterns[g.rng.IntN(len(patterns))]
			f.Fields = append(f.Fields, FieldSpec{ID: fid, Kind: "text", Label: "Text " + fid, Required: g.rng.IntN(2) == 0,
				Pattern: p.pattern, Min: p.min, Max: p.max, Valid: p.valid})
		case r < 9:
			opts := make([]string, 2+g.rng.IntN(MaxOptions-1))
			for o := range opts {
				opts[o] = "option " + strconv.Itoa(o+1)
			}
			f.Fields = append(f.Fields, FieldSpec{ID: fid, Kind: "select", Label: "Select " + fid, Required: g.rng.IntN(2) == 0, Options: opts})
		default:
			f.Fields = append(f.Fields, FieldSpec{ID: fid, Kind: "checkbox", Label: "Check " + fid, Required: g.rng.IntN(3) == 0})
		}
	}
	if g.rng.IntN(2) == 0 {
		f.To = g.pages[3+g.rng.IntN(g.n-4)].ID
	}
	g.pages[i].Forms = append(g.pages[i].Forms, f)
	g.forms++
}

// defects plants min(max(4, n/8), MaxDefects) defects, cycling through the kinds,
// the last one a sequence.
func (g *generator) defects() []DefectSpec {
	var out []DefectSpec
	count := min(max(4, g.n/8), MaxDefects)
	values := []Value{Long, Negative, Unicode, Script}
	for k := range count - 1 {
		id := "d" + strconv.Itoa(k)
		switch k % 3 {
		case 0: // a broken link
			if i := g.pick(func(i int) bool { return g.room(i) > 1 }); i >= 0 {
				p := &g.pages[i]
				p.Elements = append(p.Elements, ElementSpec{ID: "broken-" + id, Kind: "link", Label: "Old page"})
				out = append(out, DefectSpec{ID: id, Kind: "broken_link", Page: p.ID, Element: "broken-" + id})
			}
		case 1: // a dead button
			if i := g.pick(func(i int) bool { return g.room(i) > 1 }); i >= 0 {
				p := &g.pages[i]
				p.Elements = append(p.Elements, ElementSpec{ID: "dead-" + id, Kind: "button", Label: "Save for later", Nav: Nav{Effects: []string{"add_to_cart"}}})
				out = append(out, DefectSpec{ID: id, Kind: "dead_element", Page: p.ID, Element: "dead-" + id})
			}
		case 2: // a server error in a free-text field of a form
			i := g.pick(func(i int) bool {
				if g.fields(i)+1 > MaxPageFields {
					return false
				}
				for _, f := range g.pages[i].Forms {
					if len(f.Fields) < MaxFields && !hasField(f, f.ID+"-notes") {
						return true
					}
				}
				return g.room(i) > 1 && g.fields(i)+5 <= MaxPageFields
			})
			if i < 0 {
				continue
			}
			p := &g.pages[i]
			fi := -1
			for j, f := range p.Forms {
				if len(f.Fields) < MaxFields && !hasField(f, f.ID+"-notes") {
					fi = j
					break
				}
			}
			if fi < 0 {
				g.form(i, "form-"+id)
				fi = len(p.Forms) - 1
			}
			f := &p.Forms[fi]
			f.Fields = append(f.Fields, FieldSpec{ID: f.ID + "-notes", Kind: "text", Label: "Notes", Valid: "none"})
			v := values[g.rng.IntN(len(values))]
			out = append(out, DefectSpec{ID: id, Kind: "server_error", Page: p.ID, Form: f.ID, Field: f.ID + "-notes", Value: v.String()})
		}
	}
	// The sequence: unlock, then reveal, which shows once unlocked, on the same page.
	a := g.pick(func(i int) bool { return g.room(i) > 2 })
	if a < 0 {
		return out
	}
	p := &g.pages[a]
	p.Elements = append(p.Elements,
		ElementSpec{ID: "unlock", Kind: "button", Label: "Try the beta", Nav: Nav{Effects: []string{"set:unlocked"}}},
		ElementSpec{ID: "reveal", Kind: "button", Label: "Beta features", VisibleIf: &Condition{Flag: "unlocked"}})
	h := &g.pages[g.hidden]
	h.Title = "Beta (unfinished)"
	return append(out, DefectSpec{ID: "d-sequence", Kind: "sequence", Steps: []string{p.ID + "/unlock", p.ID + "/reveal"}, Reveals: h.ID})
}

func hasField(f FormSpec, id string) bool {
	for _, fd := range f.Fields {
		if fd.ID == id {
			return true
		}
	}
	return false
}
