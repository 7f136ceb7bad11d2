package webtest

// The JSON form of a site: what a site file holds and what Generate draws. Compile
// checks a SiteSpec and builds the immutable Site the environment runs on.

// SiteSpec describes a web application: its pages, their links, buttons and forms,
// how they navigate, the test account, the session flags it keeps, and the defects
// planted in it. Load reads one from JSON; Compile checks it.
type SiteSpec struct {
	// Name names the site in messages.
	Name string `json:"name"`
	// Start is the id of the page every session starts on.
	Start string `json:"start"`
	// Login names the login page and its form, which the login procedure fills with
	// each field's valid value (the test account). Needed when a page requires login.
	Login *LoginSpec `json:"login,omitempty"`
	// Flags names the session flags (at most MaxFlags) that effects set and clear and
	// conditions test, such as "coupon".
	Flags []string `json:"flags,omitempty"`
	// Pages lists the pages; their ids and URLs are unique.
	Pages []PageSpec `json:"pages"`
	// Defects lists the planted defects (at most MaxDefects).
	Defects []DefectSpec `json:"defects,omitempty"`
}

// LoginSpec names the login form: Form on Page. The form needs the "log_in" effect.
type LoginSpec struct {
	Page string `json:"page"`
	Form string `json:"form"`
}

// PageSpec is one page. Ids of its elements, forms, fields and submit buttons share
// one namespace per page; defects and sequences name them "page/id".
type PageSpec struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Title is for people; optional.
	Title string `json:"title,omitempty"`
	// RequiresLogin sends a session that is not logged in to the login page instead.
	RequiresLogin bool `json:"requires_login,omitempty"`
	// Elements are the page's links and buttons, in page order.
	Elements []ElementSpec `json:"elements,omitempty"`
	// Forms are the page's forms, after the elements in page order.
	Forms []FormSpec `json:"forms,omitempty"`
}

// ElementSpec is a link or a button. Clicking it applies its effects and loads the
// page its navigation leads to.
type ElementSpec struct {
	ID string `json:"id"`
	// Kind is "link" or "button". Text inputs, selects and checkboxes are fields of
	// forms.
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	Nav
	// VisibleIf shows the element only in sessions where the condition holds.
	VisibleIf *Condition `json:"visible_if,omitempty"`
}

// Nav is where an interaction leads and what it changes in the session. The first
// route whose condition holds gives the page, else To. Routes are chosen with the
// session as it was before the interaction's effects; a page that requires login
// sends a session that is not logged in (after the effects) to the login page.
type Nav struct {
	// To is the page id the interaction leads to by default. "" reloads the page
	// (a link needs a target, unless a broken_link defect names it).
	To string `json:"to,omitempty"`
	// Routes are conditional targets, checked in order before To.
	Routes []Route `json:"routes,omitempty"`
	// Effects change the session: "add_to_cart", "remove_from_cart", "clear_cart",
	// "log_in", "log_out", "set:FLAG", "clear:FLAG".
	Effects []string `json:"effects,omitempty"`
}

// Route is a conditional navigation target.
type Route struct {
	If *Condition `json:"if,omitempty"`
	To string     `json:"to"`
}

// Condition tests the session; every field given must hold, and the empty
// condition always holds.
type Condition struct {
	// LoggedIn, when given, must equal the session's login state.
	LoggedIn *bool `json:"logged_in,omitempty"`
	// Cart is "empty" or "nonempty" ("" for either).
	Cart string `json:"cart,omitempty"`
	// Flag must be set and NoFlag must not be.
	Flag   string `json:"flag,omitempty"`
	NoFlag string `json:"no_flag,omitempty"`
}

// FormSpec is a form: its fields and its submit button. A submission the fields'
// rules accept applies the form's effects and navigates; one they refuse stays on the
// page with the values typed.
type FormSpec struct {
	ID     string      `json:"id"`
	Label  string      `json:"label,omitempty"`
	Fields []FieldSpec `json:"fields"`
	// Submit is the form's submit button; a form needs one.
	Submit *SubmitSpec `json:"submit"`
	Nav
	VisibleIf *Condition `json:"visible_if,omitempty"`
}

// SubmitSpec is a form's submit button.
type SubmitSpec struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
}

// FieldSpec is a form field with its validation rules.
type FieldSpec struct {
	ID string `json:"id"`
	// Kind is "text", "select" or "checkbox".
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	// Required: a text must not be empty, a select must have an option chosen, a
	// checkbox must be checked.
	Required bool `json:"required,omitempty"`
	// Pattern is a regular expression (Go syntax) a non-empty text must match whole.
	Pattern string `json:"pattern,omitempty"`
	// Min and Max make a non-empty text a number in [Min, Max] (either may be
	// omitted).
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Options are a select's options (1 to MaxOptions).
	Options []string `json:"options,omitempty"`
	// Valid is the value a tester types to pass the rules (the test account's
	// credentials on the login form): a text that the rules accept, a select's
	// option (default: the first), or "checked" or "unchecked" for a checkbox
	// (default: "checked").
	Valid string `json:"valid,omitempty"`
}

// DefectSpec is a planted defect.
type DefectSpec struct {
	ID string `json:"id"`
	// Kind is one of:
	//
	//	server_error  submitting Form on Page with Field holding Value (a value class:
	//	              valid, empty, long, negative, unicode, script) loads the server-
	//	              error page, when the rest of the form is valid
	//	broken_link   the link Element on Page leads to the not-found page; the link
	//	              has no target of its own
	//	dead_element  clicking the link or button Element on Page does nothing
	//	sequence      going through Steps in order ("page/id" of links, buttons or
	//	              forms; other interactions may come between) makes the last step
	//	              load the page Reveals, which nothing else leads to
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"`

	Page    string `json:"page,omitempty"`
	Element string `json:"element,omitempty"`
	Form    string `json:"form,omitempty"`
	Field   string `json:"field,omitempty"`
	Value   string `json:"value,omitempty"`

	Steps   []string `json:"steps,omitempty"`
	Reveals string   `json:"reveals,omitempty"`
}
