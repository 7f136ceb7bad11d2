package webtest

import (
	"fmt"
	"math"
	"strings"

	"github.com/batonrl/baton/env"
)

// Scene is the browser's state as data for a page to draw: the Scene of the env.Frame
// that State.Render returns.
type Scene struct {
	// Kind is "page".
	Kind string `json:"kind"`
	// Page, URL and Title are the current page's.
	Page  string `json:"page"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Elements are the page's visible links, buttons and forms in page order: the
	// strategy agent's slots.
	Elements []Element `json:"elements"`
	// Target is the id of the motion agent's target, "" when none; Focus the id of
	// the focused field of a target form, "" when none.
	Target string `json:"target"`
	Focus  string `json:"focus"`
	// Outcome is how the application answered the target's last interaction, "" while
	// none has happened.
	Outcome string `json:"outcome,omitempty"`
	// Session is the application's session.
	Session Session `json:"session"`
	// History lists the pages "back" returns to, the most recent first.
	History []string `json:"history"`
	// Budget is the UI operations left, Coverage the share of the site covered and
	// Defects the ids of the defects found.
	Budget   int      `json:"budget"`
	Coverage float64  `json:"coverage"`
	Defects  []string `json:"defects"`
}

// Element is a link, a button or a form of a page.
type Element struct {
	// Slot is the strategy agent's action that picks the element.
	Slot int `json:"slot"`
	// ID, Kind ("link", "button" or "form") and Label are the element's.
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Covered reports that the element was tested.
	Covered bool `json:"covered"`
	// Fields are a form's fields, in form order.
	Fields []Field `json:"fields,omitempty"`
}

// Field is a field of a form and its value.
type Field struct {
	// ID, Kind ("text", "select" or "checkbox") and Label are the field's.
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Value is what the field holds: the class of value typed into a text field
	// ("valid", "unicode"; "" when empty), a select's option ("" when none is
	// chosen), "on" or "off" for a checkbox.
	Value string `json:"value"`
	// Focused reports the field that has the focus.
	Focused bool `json:"focused"`
}

// Session is the application's session as the browser holds it.
type Session struct {
	LoggedIn bool     `json:"logged_in"`
	Cart     int      `json:"cart"`
	Flags    []string `json:"flags"`
}

// Render draws the state (State implements env.Renderer): the current page with its
// elements in slot order, the target marked, the target form's fields with their
// values and focus, then the session, the budget, the coverage and the defects found;
// as text and as a Scene. The zero State draws nothing.
func (s State) Render() env.Frame {
	if s.site == nil {
		return env.Frame{}
	}
	sc := s.scene()
	return env.Frame{Text: sc.text(), Scene: sc}
}

func (s *State) scene() Scene {
	site := s.site
	p := &site.pages[s.page]
	sc := Scene{
		Kind: "page", Page: p.id, URL: p.url, Title: p.title,
		Elements: []Element{},
		Target:   s.Target(),
		Session:  Session{LoggedIn: s.loggedIn, Cart: int(s.cart), Flags: []string{}},
		History:  s.History(),
		Budget:   int(s.budget),
		Coverage: math.Round(s.Coverage()*1e4) / 1e4,
		Defects:  s.FoundIDs(),
	}
	if sc.History == nil {
		sc.History = []string{}
	}
	if s.outcome != 0 {
		sc.Outcome = s.outcome.String()
	}
	for i, f := range site.flags {
		if s.flags&(1<<i) != 0 {
			sc.Session.Flags = append(sc.Session.Flags, f)
		}
	}
	slot := 0
	for _, t := range p.targets {
		if !s.visible(t) {
			continue
		}
		tg := &site.targets[t]
		el := Element{Slot: slot, ID: tg.id, Kind: tg.kind.String(), Label: tg.label, Covered: s.isCovered(tg.unit)}
		slot++
		if tg.kind == Form {
			for k, fi := range site.forms[tg.form].fields {
				fd := &site.fields[fi]
				focused := t == s.target && int(s.focus) == k
				if focused {
					sc.Focus = fd.id
				}
				el.Fields = append(el.Fields, Field{ID: fd.id, Kind: fd.kind.String(), Label: fd.label, Value: s.shown(fd), Focused: focused})
			}
		}
		sc.Elements = append(sc.Elements, el)
	}
	return sc
}

// shown is the value of field fd as Field.Value says it.
func (s *State) shown(fd *field) string {
	v := s.values[fd.slot]
	switch fd.kind {
	case Checkbox:
		if v != 0 {
			return "on"
		}
		return "off"
	case Select:
		if v == 0 || int(v) > len(fd.options) {
			return ""
		}
		return fd.options[v-1]
	}
	if v == 0 || Value(v) == Empty {
		return ""
	}
	return Value(v).String()
}

func (sc *Scene) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "page %s %q at %s\n", sc.Page, sc.Title, sc.URL)
	for _, el := range sc.Elements {
		mark := ""
		if el.ID == sc.Target {
			mark = "  <- target"
			if sc.Outcome != "" {
				mark += ": " + sc.Outcome
			}
		}
		covered := " "
		if el.Covered {
			covered = "*"
		}
		label := el.Label
		if label == "" {
			label = el.ID
		}
		fmt.Fprintf(&b, "  %s[%d] %s %q%s\n", covered, el.Slot, el.Kind, label, mark)
		for _, f := range el.Fields {
			focus := ""
			if f.Focused {
				focus = "  <- focus"
			}
			value := f.Value
			if value == "" {
				value = "(empty)"
			}
			fmt.Fprintf(&b, "        %s %q: %s%s\n", f.Kind, f.Label, value, focus)
		}
	}
	login := "logged out"
	if sc.Session.LoggedIn {
		login = "logged in"
	}
	flags := "none"
	if len(sc.Session.Flags) > 0 {
		flags = strings.Join(sc.Session.Flags, ", ")
	}
	fmt.Fprintf(&b, "session: %s, cart %d, flags: %s\n", login, sc.Session.Cart, flags)
	defects := "none"
	if len(sc.Defects) > 0 {
		defects = strings.Join(sc.Defects, ", ")
	}
	fmt.Fprintf(&b, "budget %d, coverage %.1f%% (* tested), defects found: %s\n", sc.Budget, 100*sc.Coverage, defects)
	return b.String()
}
