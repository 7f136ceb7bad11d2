package webtest

//go:generate go tool stringer -type=Kind -linecomment
//go:generate go tool stringer -type=Value -linecomment
//go:generate go tool stringer -type=DefectKind -linecomment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.uber.org/multierr"
)

// Limits of a site. They keep observations and states of a fixed size.
const (
	// MaxTargets is the most links, buttons and forms a page may hold: the strategy
	// agent's target slots.
	MaxTargets = 16
	// MaxFields is the most fields a form may hold: the motion agent's field slots.
	MaxFields = 8
	// MaxPageFields is the most fields the forms of one page may hold together.
	MaxPageFields = 16
	// MaxOptions is the most options a select may hold.
	MaxOptions = 6
	// MaxFlags is the most session flags a site may declare.
	MaxFlags = 8
	// MaxSequences is the most sequence defects a site may plant.
	MaxSequences = 8
	// MaxSequenceSteps is the most steps a sequence defect may have.
	MaxSequenceSteps = 32
	// MaxDefects is the most defects a site may plant.
	MaxDefects = 64
	// MaxUnits is the most coverage units (pages, targets, probes) a site may have.
	MaxUnits = 1 << 24
)

// Kind is what an element is: a strategy target (Link, Button, or a Form, which its
// submit button stands for) or a form field (Text, Select, Checkbox).
type Kind uint8

// The kinds of elements.
const (
	Link     Kind = 1 + iota // link
	Button                   // button
	Form                     // form
	Text                     // text
	Select                   // select
	Checkbox                 // checkbox
)

// Value is a class of value from the motion agent's vocabulary: what it types into a
// text field. Text returns the string each class stands for.
type Value uint8

// The value vocabulary: the field's valid value and the edge cases.
const (
	// Valid is the field's own valid value (FieldSpec.Valid).
	Valid Value = 1 + iota // valid
	// Empty is the empty string.
	Empty // empty
	// Long is 300 characters.
	Long // long
	// Negative is "-1".
	Negative // negative
	// Unicode is text beyond ASCII: accents, CJK and an emoji.
	Unicode // unicode
	// Script is script-like markup, as an injection attempt types it.
	Script // script
)

// NumValues is the size of the value vocabulary.
const NumValues = 6

// The strings the edge-case classes stand for.
var (
	longText    = strings.Repeat("a", 300)
	unicodeText = "Zoë Ångström 日本語 🙂"
	scriptText  = `<script>alert("x")</script>`
)

// Text returns the string the class stands for; valid is the field's valid value.
func (v Value) Text(valid string) string {
	switch v {
	case Valid:
		return valid
	case Long:
		return longText
	case Negative:
		return "-1"
	case Unicode:
		return unicodeText
	case Script:
		return scriptText
	}
	return ""
}

// ParseValue reads a class by its name.
func ParseValue(name string) (Value, error) {
	if v, ok := valueNamed(name); ok {
		return v, nil
	}
	return 0, fmt.Errorf("webtest: unknown value class %q (classes: %s)", name, valueClasses())
}

// valueClasses lists the names of the value classes, for messages.
func valueClasses() string {
	names := make([]string, 0, NumValues)
	for v := Valid; v <= Script; v++ {
		names = append(names, v.String())
	}
	return strings.Join(names, ", ")
}

func valueNamed(name string) (Value, bool) {
	for v := Valid; v <= Script; v++ {
		if v.String() == name {
			return v, true
		}
	}
	return 0, false
}

// DefectKind is the kind of a planted defect.
type DefectKind uint8

// The kinds of defects; see DefectSpec.
const (
	DefectServerError DefectKind = 1 + iota // server_error
	DefectBrokenLink                        // broken_link
	DefectDeadElement                       // dead_element
	DefectSequence                          // sequence
)

// Defect describes a planted defect of a compiled site.
type Defect struct {
	ID          string
	Kind        DefectKind
	Description string
	// Page is the page of the element or form, or for a sequence the page it
	// reveals; Element the element, form or "form/field" concerned ("" for a
	// sequence).
	Page, Element string
}

// ErrSite is wrapped by every problem with a site.
var ErrSite = errors.New("webtest: invalid site")

// SiteError is one problem with a site, naming the page and the element concerned.
type SiteError struct {
	// Page is the page's id, "" when the problem is not on a page.
	Page string
	// Element is the element, form, field ("form/field") or defect concerned, "" when
	// none.
	Element string
	Reason  string
}

func (e *SiteError) Error() string {
	var b strings.Builder
	b.WriteString("webtest: invalid site: ")
	if e.Page != "" {
		fmt.Fprintf(&b, "page %q: ", e.Page)
	}
	if e.Element != "" {
		fmt.Fprintf(&b, "%q: ", e.Element)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns ErrSite.
func (e *SiteError) Unwrap() error { return ErrSite }

// SiteErrors splits the error of Compile or Load into its SiteErrors.
func SiteErrors(err error) []*SiteError {
	var out []*SiteError
	for _, e := range multierr.Errors(err) {
		var se *SiteError
		if errors.As(e, &se) {
			out = append(out, se)
		}
	}
	return out
}

// Site is a compiled web application: immutable, safe for concurrent use, shared by
// every state of every episode that runs on it.
type Site struct {
	spec    SiteSpec
	name    string
	pages   []page // the site's pages, then the not-found and server-error pages
	targets []target
	forms   []form
	fields  []field
	defects []defect
	flags   []string
	seqs    []sequence

	start, loginPage, loginForm int32
	notFound, serverError       int32
	userPages                   int
	units                       int32
	allDefects                  uint64
}

type page struct {
	id, url, title string
	login          bool
	unit           int32   // coverage unit; -1 for the error pages
	targets        []int32 // in page order
	nfields        int
}

type target struct {
	id, label string
	kind      Kind // Link, Button or Form
	page      int32
	form      int32 // for a Form, else -1
	nav       nav
	visible   cond
	unit      int32
	defect    int32 // a broken_link or dead_element defect on it, else -1
}

type form struct {
	id      string
	page    int32
	target  int32
	fields  []int32
	base    int // page slot of the first field
	login   bool
	probes  int32
	crashes []crash
}

// crash is a server_error defect of a form: its field (index in the form) holding
// value.
type crash struct {
	field  int
	value  Value
	defect int32
}

type field struct {
	id, label string
	kind      Kind
	slot      int      // page slot
	ok        [8]bool  // by stored value: text 0..6 (0 is empty), select 0..6, checkbox 0..1
	valid     uint8    // the stored value of the valid value
	probe     int32    // first probe unit
	nprobes   int32    // NumValues, the options, or 2
	options   []string // of a select
	validText string   // of a text
}

type nav struct {
	to      int32 // -1: reload
	routes  []route
	effects []effect
}

type route struct {
	cond cond
	to   int32
}

// cond is a compiled Condition: loggedIn and cart are 0 (any), 1 (true, empty) or 2
// (false, nonempty); flag and noFlag are bit masks.
type cond struct {
	loggedIn, cart int8
	flag, noFlag   uint8
}

type effectOp uint8

const (
	addToCart effectOp = 1 + iota
	removeFromCart
	clearCart
	logIn
	logOut
	setFlag
	clearFlag
)

type effect struct {
	op   effectOp
	flag uint8 // bit mask, for setFlag and clearFlag
}

type defect struct {
	Defect
}

type sequence struct {
	steps   []int32 // targets
	reveals int32
	defect  int32
}

// Load reads a site from its JSON form (unknown fields are errors) and compiles it.
func Load(data []byte) (*Site, error) {
	spec, err := decodeSite(data)
	if err != nil {
		return nil, err
	}
	return Compile(spec)
}

// decodeSite reads a site's JSON form.
func decodeSite(data []byte) (SiteSpec, error) {
	var spec SiteSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return SiteSpec{}, &SiteError{Reason: "reading JSON: " + err.Error()}
	}
	if dec.More() {
		return SiteSpec{}, &SiteError{Reason: "trailing data after the JSON object"}
	}
	return spec, nil
}

// Name returns the site's name.
func (s *Site) Name() string { return s.name }

// Spec returns the document the site was compiled from (a copy): marshal it to JSON
// for a site file that Load reads back.
func (s *Site) Spec() SiteSpec { return cloneSpec(s.spec) }

// Pages returns the number of the site's pages (the error pages aside).
func (s *Site) Pages() int { return s.userPages }

// PageID returns the id of page i (0 <= i < Pages()); the error pages are "$not-found"
// and "$server-error".
func (s *Site) PageID(i int) string { return s.pages[i].id }

// Units returns the number of coverage units: pages, targets (links, buttons and
// forms) and probes (a text field tried with each value class, a select with each
// option, a checkbox unchecked and checked).
func (s *Site) Units() int { return int(s.units) }

// Defects returns the planted defects, in the site's order.
func (s *Site) Defects() []Defect {
	out := make([]Defect, len(s.defects))
	for i, d := range s.defects {
		out[i] = d.Defect
	}
	return out
}

// MarshalJSON writes the site's document.
func (s *Site) MarshalJSON() ([]byte, error) { return json.Marshal(s.spec) }

// The ids of the error pages every site has.
const (
	NotFoundPage    = "$not-found"
	ServerErrorPage = "$server-error"
)

// compiler builds a Site and collects every problem.
type compiler struct {
	spec  SiteSpec
	site  *Site
	errs  []error
	pages map[string]int32
	// by page: element id -> target, form id -> form, "form/field" -> field
	targetIDs []map[string]int32
	formIDs   []map[string]int32
	fieldIDs  []map[string]int32
	flags     map[string]uint8
	// navigation edges by page, for reachability; seqEdges lead from the page of a
	// sequence's last step to the page it reveals
	edges    [][]int32
	seqEdges [][2]int32
}

func (c *compiler) fail(page, element, format string, args ...any) {
	c.errs = append(c.errs, &SiteError{Page: page, Element: element, Reason: fmt.Sprintf(format, args...)})
}

// Compile checks a site and builds it. It reports every problem at once, each a
// *SiteError naming the page and element (see SiteErrors): missing or duplicate ids
// and URLs, unknown kinds, link targets, flags, effects and value classes, a form
// without a submit button, rules that refuse a field's own valid value, limits
// exceeded, defects that name nothing or cannot be reached, pages that nothing leads
// to.
func Compile(spec SiteSpec) (*Site, error) {
	c := &compiler{spec: spec, pages: map[string]int32{}, flags: map[string]uint8{}}
	s := &Site{spec: cloneSpec(spec), name: spec.Name, loginPage: -1, loginForm: -1}
	c.site = s
	c.compileFlags()
	c.declarePages()
	for i := range spec.Pages {
		c.compilePage(int32(i))
	}
	s.notFound = int32(len(s.pages))
	s.pages = append(s.pages, page{id: NotFoundPage, url: "/404", title: "404 Not Found", unit: -1})
	s.serverError = int32(len(s.pages))
	s.pages = append(s.pages, page{id: ServerErrorPage, url: "/500", title: "500 Internal Server Error", unit: -1})
	c.compileLogin()
	c.compileDefects()
	c.checkReachable()
	c.assignUnits()
	if err := multierr.Combine(c.errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *compiler) compileFlags() {
	if len(c.spec.Flags) > MaxFlags {
		c.fail("", "", "%d flags; at most %d", len(c.spec.Flags), MaxFlags)
	}
	for i, f := range c.spec.Flags {
		switch {
		case f == "":
			c.fail("", "", "flag #%d has no name", i)
		case c.flags[f] != 0:
			c.fail("", f, "duplicate flag")
		case i < MaxFlags:
			c.flags[f] = 1 << i
			c.site.flags = append(c.site.flags, f)
		}
	}
}

func (c *compiler) declarePages() {
	urls := map[string]string{}
	s := c.site
	for i, p := range c.spec.Pages {
		switch {
		case p.ID == "":
			c.fail("", "", "page #%d has no id", i)
		case strings.HasPrefix(p.ID, "$"):
			c.fail(p.ID, "", "page ids starting with '$' are reserved for the error pages")
		case strings.Contains(p.ID, "/"):
			c.fail(p.ID, "", "a page id must not contain '/'")
		default:
			if _, dup := c.pages[p.ID]; dup {
				c.fail(p.ID, "", "duplicate page id")
			} else {
				c.pages[p.ID] = int32(i)
			}
		}
		if p.URL == "" {
			c.fail(p.ID, "", "page has no URL")
		} else if other, dup := urls[p.URL]; dup {
			c.fail(p.ID, "", "URL %q is also the URL of page %q", p.URL, other)
		} else {
			urls[p.URL] = p.ID
		}
		s.pages = append(s.pages, page{id: p.ID, url: p.URL, title: p.Title, login: p.RequiresLogin})
	}
	s.userPages = len(c.spec.Pages)
	if s.userPages == 0 {
		c.fail("", "", "the site has no pages")
	}
	c.targetIDs = make([]map[string]int32, s.userPages)
	c.formIDs = make([]map[string]int32, s.userPages)
	c.fieldIDs = make([]map[string]int32, s.userPages)
	c.edges = make([][]int32, s.userPages)
	if c.spec.Start == "" {
		c.fail("", "", "no start page")
	} else if i, ok := c.pages[c.spec.Start]; ok {
		s.start = i
	} else {
		c.fail("", "", "the start page %q is not a page of the site", c.spec.Start)
	}
}

func (c *compiler) brokenLink(pageID, elemID string) bool {
	for _, d := range c.spec.Defects {
		if d.Kind == "broken_link" && d.Page == pageID && d.Element == elemID {
			return true
		}
	}
	return false
}

func (c *compiler) compilePage(pi int32) {
	s := c.site
	ps := &c.spec.Pages[pi]
	pg := &s.pages[pi]
	ids := map[string]bool{}
	c.targetIDs[pi], c.formIDs[pi], c.fieldIDs[pi] = map[string]int32{}, map[string]int32{}, map[string]int32{}
	claim := func(id, what string) bool {
		switch {
		case id == "":
			c.fail(ps.ID, "", "%s without an id", what)
			return false
		case strings.Contains(id, "/"):
			c.fail(ps.ID, id, "an id must not contain '/'")
			return false
		case ids[id]:
			c.fail(ps.ID, id, "duplicate id on the page")
			return false
		}
		ids[id] = true
		return true
	}
	if n := len(ps.Elements) + len(ps.Forms); n > MaxTargets {
		c.fail(ps.ID, "", "%d links, buttons and forms; at most %d", n, MaxTargets)
	}
	for _, es := range ps.Elements {
		named := claim(es.ID, "element")
		t := target{id: es.ID, label: es.Label, page: pi, form: -1, defect: -1}
		switch es.Kind {
		case "link":
			t.kind = Link
		case "button":
			t.kind = Button
		case "text", "select", "checkbox":
			c.fail(ps.ID, es.ID, "a %s is a field of a form, not an element of the page", es.Kind)
		default:
			c.fail(ps.ID, es.ID, "unknown element kind %q (kinds: link, button)", es.Kind)
		}
		t.nav = c.compileNav(pi, es.ID, es.Nav)
		t.visible = c.compileCond(ps.ID, es.ID, es.VisibleIf)
		if t.kind == Link && es.To == "" && len(es.Routes) == 0 && !c.brokenLink(ps.ID, es.ID) {
			c.fail(ps.ID, es.ID, "link has no target (\"to\"); only a broken_link defect may leave it out")
		}
		ti := int32(len(s.targets))
		s.targets = append(s.targets, t)
		pg.targets = append(pg.targets, ti)
		if named {
			c.targetIDs[pi][es.ID] = ti
		}
	}
	for _, fs := range ps.Forms {
		named := claim(fs.ID, "form")
		fi := int32(len(s.forms))
		f := form{id: fs.ID, page: pi, base: pg.nfields}
		t := target{id: fs.ID, label: fs.Label, kind: Form, page: pi, form: fi, defect: -1}
		if fs.Submit == nil {
			c.fail(ps.ID, fs.ID, "form has no submit button")
		} else if claim(fs.Submit.ID, "submit button") {
			c.targetIDs[pi][fs.Submit.ID] = int32(len(s.targets))
		}
		if len(fs.Fields) == 0 {
			c.fail(ps.ID, fs.ID, "form has no fields")
		}
		if len(fs.Fields) > MaxFields {
			c.fail(ps.ID, fs.ID, "%d fields; at most %d", len(fs.Fields), MaxFields)
		}
		for _, fd := range fs.Fields {
			fieldNamed := claim(fd.ID, "field")
			fld := c.compileField(ps.ID, fs.ID, fd)
			fld.slot = pg.nfields
			pg.nfields++
			fdi := int32(len(s.fields))
			s.fields = append(s.fields, fld)
			f.fields = append(f.fields, fdi)
			if fieldNamed {
				c.fieldIDs[pi][fs.ID+"/"+fd.ID] = fdi
			}
		}
		t.nav = c.compileNav(pi, fs.ID, fs.Nav)
		t.visible = c.compileCond(ps.ID, fs.ID, fs.VisibleIf)
		for _, e := range t.nav.effects {
			if e.op == logIn {
				f.login = true
			}
		}
		ti := int32(len(s.targets))
		f.target = ti
		s.targets = append(s.targets, t)
		s.forms = append(s.forms, f)
		pg.targets = append(pg.targets, ti)
		if named {
			c.targetIDs[pi][fs.ID] = ti
			c.formIDs[pi][fs.ID] = fi
		}
	}
	if pg.nfields > MaxPageFields {
		c.fail(ps.ID, "", "%d form fields; at most %d on one page", pg.nfields, MaxPageFields)
	}
}

func (c *compiler) compileField(pageID, formID string, fd FieldSpec) field {
	name := formID + "/" + fd.ID
	f := field{id: fd.ID, label: fd.Label}
	bad := func(format string, args ...any) { c.fail(pageID, name, format, args...) }
	known := fd.Kind == "text" || fd.Kind == "select" || fd.Kind == "checkbox"
	if known && fd.Kind != "text" && (fd.Pattern != "" || fd.Min != nil || fd.Max != nil) {
		bad("pattern, min and max are rules of text fields, not of a %s", fd.Kind)
	}
	if known && fd.Kind != "select" && len(fd.Options) > 0 {
		bad("only a select has options")
	}
	switch fd.Kind {
	case "text":
		f.kind = Text
		f.nprobes = NumValues
		var re *regexp.Regexp
		if fd.Pattern != "" {
			var err error
			if re, err = regexp.Compile("^(?:" + fd.Pattern + ")$"); err != nil {
				bad("pattern: %v", err)
			}
		}
		if fd.Min != nil && fd.Max != nil && *fd.Min > *fd.Max {
			bad("min %g is above max %g", *fd.Min, *fd.Max)
		}
		accepts := func(v string) bool {
			if v == "" {
				return !fd.Required
			}
			if re != nil && !re.MatchString(v) {
				return false
			}
			if fd.Min != nil || fd.Max != nil {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(x) || fd.Min != nil && x < *fd.Min || fd.Max != nil && x > *fd.Max {
					return false
				}
			}
			return true
		}
		f.validText = fd.Valid
		for v := Valid; v <= Script; v++ {
			f.ok[v] = accepts(v.Text(fd.Valid))
		}
		f.ok[0] = f.ok[Empty]
		f.valid = uint8(Valid)
		if !f.ok[Valid] {
			bad("its valid value %q does not pass its own rules", fd.Valid)
		}
	case "select":
		f.kind = Select
		f.options = append([]string(nil), fd.Options...)
		if n := len(fd.Options); n == 0 || n > MaxOptions {
			bad("a select needs 1 to %d options; it has %d", MaxOptions, n)
		}
		seen := map[string]bool{}
		for i, o := range fd.Options {
			if o == "" || seen[o] {
				bad("option #%d is empty or repeated", i)
			}
			seen[o] = true
			if i < MaxOptions {
				f.ok[i+1] = true
			}
		}
		f.ok[0] = !fd.Required
		f.nprobes = int32(min(len(fd.Options), MaxOptions))
		f.valid = 1
		if fd.Valid != "" {
			f.valid = 0
			for i, o := range fd.Options {
				if o == fd.Valid && i < MaxOptions {
					f.valid = uint8(i + 1)
				}
			}
			if f.valid == 0 {
				bad("its valid value %q is not one of its options", fd.Valid)
				f.valid = 1
			}
		}
	case "checkbox":
		f.kind = Checkbox
		f.nprobes = 2
		f.ok[0], f.ok[1] = !fd.Required, true
		switch fd.Valid {
		case "", "checked":
			f.valid = 1
		case "unchecked":
			f.valid = 0
			if fd.Required {
				bad("a required checkbox cannot be valid unchecked")
			}
		default:
			bad("a checkbox's valid value is \"checked\" or \"unchecked\", not %q", fd.Valid)
		}
	default:
		bad("unknown field kind %q (kinds: text, select, checkbox)", fd.Kind)
	}
	return f
}

func (c *compiler) compileNav(pi int32, elemID string, n Nav) nav {
	pageID := c.spec.Pages[pi].ID
	out := nav{to: -1}
	lookup := func(to, where string) int32 {
		i, ok := c.pages[to]
		if !ok {
			c.fail(pageID, elemID, "%s %q is not a page of the site", where, to)
			return -1
		}
		c.edges[pi] = append(c.edges[pi], i)
		return i
	}
	if n.To != "" {
		out.to = lookup(n.To, "target")
	}
	for k, r := range n.Routes {
		if r.To == "" {
			c.fail(pageID, elemID, "route #%d has no target", k)
			continue
		}
		out.routes = append(out.routes, route{cond: c.compileCond(pageID, elemID, r.If), to: lookup(r.To, fmt.Sprintf("route #%d's target", k))})
	}
	for _, e := range n.Effects {
		out.effects = append(out.effects, c.compileEffect(pageID, elemID, e))
	}
	return out
}

func (c *compiler) compileEffect(pageID, elemID, e string) effect {
	if name, ok := strings.CutPrefix(e, "set:"); ok {
		return effect{op: setFlag, flag: c.flag(pageID, elemID, name)}
	}
	if name, ok := strings.CutPrefix(e, "clear:"); ok {
		return effect{op: clearFlag, flag: c.flag(pageID, elemID, name)}
	}
	switch e {
	case "add_to_cart":
		return effect{op: addToCart}
	case "remove_from_cart":
		return effect{op: removeFromCart}
	case "clear_cart":
		return effect{op: clearCart}
	case "log_in":
		return effect{op: logIn}
	case "log_out":
		return effect{op: logOut}
	}
	c.fail(pageID, elemID, "unknown effect %q (effects: add_to_cart, remove_from_cart, clear_cart, log_in, log_out, set:FLAG, clear:FLAG)", e)
	return effect{}
}

func (c *compiler) flag(pageID, elemID, name string) uint8 {
	bit, ok := c.flags[name]
	if !ok {
		c.fail(pageID, elemID, "unknown flag %q (declare it in the site's flags)", name)
	}
	return bit
}

func (c *compiler) compileCond(pageID, elemID string, cd *Condition) cond {
	var out cond
	if cd == nil {
		return out
	}
	if cd.LoggedIn != nil {
		out.loggedIn = 2
		if *cd.LoggedIn {
			out.loggedIn = 1
		}
	}
	switch cd.Cart {
	case "":
	case "empty":
		out.cart = 1
	case "nonempty":
		out.cart = 2
	default:
		c.fail(pageID, elemID, "cart condition %q: want \"empty\" or \"nonempty\"", cd.Cart)
	}
	if cd.Flag != "" {
		out.flag = c.flag(pageID, elemID, cd.Flag)
	}
	if cd.NoFlag != "" {
		out.noFlag = c.flag(pageID, elemID, cd.NoFlag)
	}
	return out
}

func (c *compiler) compileLogin() {
	s := c.site
	needed := false
	for _, p := range c.spec.Pages {
		needed = needed || p.RequiresLogin
	}
	l := c.spec.Login
	if l == nil {
		if needed {
			c.fail("", "", "pages require login but the site names no login form (\"login\")")
		}
		return
	}
	pi, ok := c.pages[l.Page]
	if !ok {
		c.fail("", "", "the login page %q is not a page of the site", l.Page)
		return
	}
	if c.spec.Pages[pi].RequiresLogin {
		c.fail(l.Page, "", "the login page must not require login")
	}
	fi, ok := c.formIDs[pi][l.Form]
	if !ok {
		c.fail(l.Page, l.Form, "the login form is not a form of the login page")
		return
	}
	f := &s.forms[fi]
	if !f.login {
		c.fail(l.Page, l.Form, "the login form has no \"log_in\" effect")
	}
	if s.targets[f.target].visible != (cond{}) {
		c.fail(l.Page, l.Form, "the login form must always be visible")
	}
	s.loginPage, s.loginForm = pi, fi
}

func (c *compiler) compileDefects() {
	s := c.site
	if len(c.spec.Defects) > MaxDefects {
		c.fail("", "", "%d defects; at most %d", len(c.spec.Defects), MaxDefects)
	}
	ids := map[string]bool{}
	revealed := map[int32]string{}
	for k, ds := range c.spec.Defects {
		if ds.ID == "" {
			c.fail("", "", "defect #%d has no id", k)
		} else if ids[ds.ID] {
			c.fail("", ds.ID, "duplicate defect id")
		}
		ids[ds.ID] = true
		di := int32(len(s.defects))
		d := defect{Defect{ID: ds.ID, Description: ds.Description, Page: ds.Page}}
		bad := func(format string, args ...any) {
			c.fail(ds.Page, "defect "+ds.ID, format, args...)
		}
		pi, pageOK := c.pages[ds.Page]
		needPage := func() bool {
			if !pageOK {
				bad("page %q is not a page of the site", ds.Page)
			}
			return pageOK
		}
		switch ds.Kind {
		case "server_error":
			d.Kind = DefectServerError
			d.Element = ds.Form + "/" + ds.Field
			if !needPage() {
				break
			}
			fi, ok := c.formIDs[pi][ds.Form]
			if !ok {
				bad("form %q is not a form of the page", ds.Form)
				break
			}
			fdi, ok := c.fieldIDs[pi][ds.Form+"/"+ds.Field]
			if !ok {
				bad("field %q is not a field of form %q", ds.Field, ds.Form)
				break
			}
			fld := &s.fields[fdi]
			v, known := valueNamed(ds.Value)
			switch {
			case !known:
				bad("unknown value class %q (classes: %s)", ds.Value, valueClasses())
			case fld.kind == 0:
				// the field's kind is reported with the field
			case fld.kind != Text:
				bad("field %q is a %s; server errors are planted on text fields", ds.Field, fld.kind)
			case !fld.ok[v]:
				bad("field %q refuses the value %s, so the server never sees it", ds.Field, v)
			default:
				f := &s.forms[fi]
				f.crashes = append(f.crashes, crash{field: fld.slot - f.base, value: v, defect: di})
			}
		case "broken_link", "dead_element":
			d.Kind = DefectBrokenLink
			if ds.Kind == "dead_element" {
				d.Kind = DefectDeadElement
			}
			d.Element = ds.Element
			if !needPage() {
				break
			}
			ti, ok := c.targetIDs[pi][ds.Element]
			if !ok {
				bad("element %q is not an element of the page", ds.Element)
				break
			}
			t := &s.targets[ti]
			switch {
			case t.kind == Form:
				bad("%q is a form's submit button; a %s is a link or a button", ds.Element, ds.Kind)
			case d.Kind == DefectBrokenLink && t.kind != Link:
				bad("%q is a %s, not a link", ds.Element, t.kind)
			case d.Kind == DefectBrokenLink && (t.nav.to >= 0 || len(t.nav.routes) > 0):
				bad("a broken link has no target of its own; remove \"to\" and \"routes\" from %q", ds.Element)
			case t.defect >= 0:
				bad("element %q already has defect %q", ds.Element, s.defects[t.defect].ID)
			default:
				t.defect = di
			}
		case "sequence":
			d.Kind = DefectSequence
			d.Page = ds.Reveals
			c.compileSequence(ds, di, revealed)
		default:
			bad("unknown defect kind %q (kinds: server_error, broken_link, dead_element, sequence)", ds.Kind)
		}
		s.defects = append(s.defects, d)
		if int(di) < MaxDefects {
			s.allDefects |= 1 << di
		}
	}
	// A revealed page must be reachable only through its sequence.
	for pi := range c.edges {
		for _, to := range c.edges[pi] {
			if id, ok := revealed[to]; ok {
				c.fail(c.spec.Pages[to].ID, "defect "+id, "the page a sequence reveals must be reachable only through it, but page %q leads to it", c.spec.Pages[pi].ID)
			}
		}
	}
	for to, id := range revealed {
		switch to {
		case s.start:
			c.fail(c.spec.Pages[to].ID, "defect "+id, "the page a sequence reveals must not be the start page")
		case s.loginPage:
			c.fail(c.spec.Pages[to].ID, "defect "+id, "the page a sequence reveals must not be the login page")
		}
	}
}

func (c *compiler) compileSequence(ds DefectSpec, di int32, revealed map[int32]string) {
	s := c.site
	bad := func(format string, args ...any) { c.fail("", "defect "+ds.ID, format, args...) }
	if len(s.seqs) >= MaxSequences {
		bad("more than %d sequence defects", MaxSequences)
		return
	}
	if len(ds.Steps) < 2 || len(ds.Steps) > MaxSequenceSteps {
		bad("a sequence needs 2 to %d steps; it has %d", MaxSequenceSteps, len(ds.Steps))
	}
	seq := sequence{defect: di, reveals: -1}
	for _, step := range ds.Steps {
		pageID, id, ok := strings.Cut(step, "/")
		pi, known := c.pages[pageID]
		if !ok || !known {
			bad("step %q: want \"page/id\" of a link, a button or a form", step)
			continue
		}
		ti, ok := c.targetIDs[pi][id]
		if !ok {
			bad("step %q: %q is not a link, button or form of page %q", step, id, pageID)
			continue
		}
		seq.steps = append(seq.steps, ti)
	}
	if pi, ok := c.pages[ds.Reveals]; ok {
		seq.reveals = pi
		if prev, dup := revealed[pi]; dup {
			bad("page %q is revealed by defect %q too", ds.Reveals, prev)
		}
		revealed[pi] = ds.ID
	} else {
		bad("the page it reveals, %q, is not a page of the site", ds.Reveals)
	}
	if len(seq.steps) == len(ds.Steps) && len(seq.steps) >= 2 && len(seq.steps) <= MaxSequenceSteps && seq.reveals >= 0 {
		s.seqs = append(s.seqs, seq)
		last := s.targets[seq.steps[len(seq.steps)-1]].page
		c.seqEdges = append(c.seqEdges, [2]int32{last, seq.reveals})
	}
}

// checkReachable reports pages that no navigation, login or sequence leads to from
// the start page.
func (c *compiler) checkReachable() {
	s := c.site
	if len(c.errs) > 0 || s.userPages == 0 {
		return // edges are incomplete
	}
	seen := make([]bool, s.userPages)
	stack := []int32{s.start}
	if s.loginPage >= 0 {
		stack = append(stack, s.loginPage)
	}
	for _, p := range stack {
		seen[p] = true
	}
	edges := c.edges
	for _, e := range c.seqEdges {
		edges[e[0]] = append(edges[e[0]], e[1])
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, q := range edges[p] {
			if !seen[q] {
				seen[q] = true
				stack = append(stack, q)
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			c.fail(s.pages[i].id, "", "no link, form or sequence leads to the page from the start page %q", s.pages[s.start].id)
		}
	}
}

// assignUnits numbers the coverage units: pages, then targets, then probes.
func (c *compiler) assignUnits() {
	s := c.site
	u := 0
	for i := range s.userPages {
		s.pages[i].unit = int32(min(u, math.MaxInt32))
		u++
	}
	for i := range s.targets {
		s.targets[i].unit = int32(min(u, math.MaxInt32))
		u++
	}
	for fi := range s.forms {
		f := &s.forms[fi]
		for _, fdi := range f.fields {
			fd := &s.fields[fdi]
			fd.probe = int32(min(u, math.MaxInt32))
			u += int(fd.nprobes)
			f.probes += fd.nprobes
		}
	}
	if u > MaxUnits {
		c.fail("", "", "%d coverage units; at most %d", u, MaxUnits)
	}
	s.units = int32(min(u, MaxUnits))
}

func cloneSpec(s SiteSpec) SiteSpec {
	b, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var out SiteSpec
	if json.Unmarshal(b, &out) != nil {
		return s
	}
	return out
}
