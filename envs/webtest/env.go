package webtest

//go:generate go tool stringer -type=ActionKind -linecomment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/transitions"
)

// ActionKind tells the agents' actions apart.
type ActionKind uint8

// The kinds of actions: the strategy agent's Pick, Back and Finish, the motion
// agent's UI operations.
const (
	// Pick chooses a target for the motion agent (or the login procedure).
	Pick ActionKind = 1 + iota // pick
	// Back navigates back.
	Back // back
	// Finish ends the test.
	Finish // finish
	// Focus moves the focus to the next field of the target form.
	Focus // focus
	// Type types Action.Value into the focused text field.
	Type // type
	// Toggle toggles the focused checkbox.
	Toggle // toggle
	// Choose chooses the next option of the focused select.
	Choose // choose
	// Submit submits the target form.
	Submit // submit
	// Click clicks the target link or button.
	Click // click
)

// Action is a decoded action of either agent.
type Action struct {
	Kind ActionKind
	// Target is the index of the target in its site (Site.TargetIndex): the one
	// picked, or for a UI operation the one it works on; -1 for Back and Finish.
	Target int32
	// Value is the value typed, for Type.
	Value Value
	// Login marks a Pick of a link or button, or a Back, that leads into a page
	// requiring login while the session is logged out: the login procedure handles it
	// (Step leaves such a Back to it).
	Login bool
}

// Errors of actions that do not apply.
var (
	// ErrNoTarget: the strategy picked an empty slot, or an action names a target
	// that is not visible on the current page.
	ErrNoTarget = errors.New("webtest: no such target on the page")
	// ErrNoHistory: back with nothing to go back to.
	ErrNoHistory = errors.New("webtest: no page to go back to")
	// ErrNotApplicable: a UI operation that does not apply to the target or the
	// focused field.
	ErrNotApplicable = errors.New("webtest: operation does not apply")
	// ErrNoLogin: the login procedure ran on a site without a login form.
	ErrNoLogin = errors.New("webtest: the site has no login form")
)

// Env is the web-testing environment: a strategy agent decides what to test next on
// a simulated web application and a motion agent performs the UI operations to get
// there; a login procedure steps in for targets behind a login. Safe for concurrent
// use: it holds configuration only.
type Env struct {
	cfg      Config
	site     *Site
	strategy *Strategy
	motion   *Motion
	agents   []hrl.Binding[State, Action]
}

// NewEnv builds the environment a configuration describes.
func NewEnv(cfg Config) (*Env, error) { return newEnv(cfg, nil) }

// newEnv builds the environment of a configuration from a trusted caller (remote nil)
// or from the network (see Config.build).
func newEnv(cfg Config, remote *registry.Remote) (*Env, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	site, err := cfg.build(remote)
	if err != nil {
		return nil, err
	}
	e := &Env{cfg: cfg, site: site, strategy: NewStrategy(site, cfg.Strategy), motion: NewMotion(cfg.Motion)}
	e.agents = []hrl.Binding[State, Action]{hrl.Bind(e.strategy), hrl.Bind(e.motion)}
	return e, nil
}

// Config returns the configuration with its defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// Site returns the site under test.
func (e *Env) Site() *Site { return e.site }

// Agents returns the strategy agent, then the motion agent.
func (e *Env) Agents() []hrl.Binding[State, Action] { return e.agents }

// Machine returns the switching rules: a pick or a back that needs login runs the
// Login procedure ("login"), any other pick hands control to the motion agent ("test"),
// whose end returns control to the strategy; the strategy's end ends the episode.
func (e *Env) Machine() transitions.Machine[State, Action] {
	return transitions.Machine[State, Action]{
		Initial: StrategyName,
		OnDone:  map[string]string{StrategyName: transitions.End, MotionName: transitions.Parent},
		Triggers: []transitions.Trigger[State, Action]{
			{Name: "login", From: StrategyName, When: needsLogin, Run: Login},
			{Name: "test", From: StrategyName, When: isPick, To: MotionName},
		},
	}
}

func needsLogin(a Action) bool { return a.Login && (a.Kind == Pick || a.Kind == Back) }
func isPick(a Action) bool     { return a.Kind == Pick }

// InitialState starts a session on the site's start page with the configured budget.
// The application is deterministic: an episode depends on the actions alone.
func (e *Env) InitialState(*rand.Rand) State { return NewState(e.site, e.cfg.Strategy.Budget) }

// Step applies an action. A Pick sets the motion agent's target, Back navigates back
// (one UI operation), Finish ends the test; the motion agent's operations each spend
// one UI operation, and Submit and Click make the application answer (see Outcome).
// An action that does not apply is an error wrapping ErrNoTarget, ErrNoHistory or
// ErrNotApplicable, and the state is left as it was.
func (e *Env) Step(s State, a Action) (State, error) {
	switch a.Kind {
	case Pick:
		if err := checkTarget(&s, a.Target); err != nil {
			return s, err
		}
		s.target, s.focus, s.outcome = a.Target, -1, 0
		return s, nil
	case Back:
		if s.hist < 0 {
			return s, fmt.Errorf("%w: on %s", ErrNoHistory, s.URL())
		}
		s.target, s.outcome = -1, 0
		if a.Login {
			return s, nil // the login procedure logs in first, then goes back
		}
		s.spend(1)
		s.back()
		return s, nil
	case Finish:
		s.finished = true
		s.target, s.outcome = -1, 0
		return s, nil
	}
	raw := int64(0)
	switch a.Kind {
	case Focus:
		raw = MotionFocus
	case Type:
		if a.Value < Valid || a.Value > Script {
			return s, fmt.Errorf("%w: type %s", ErrNotApplicable, a.Value)
		}
		raw = MotionType(a.Value)
	case Toggle:
		raw = MotionToggle
	case Choose:
		raw = MotionChoose
	case Submit:
		raw = MotionSubmit
	case Click:
		raw = MotionClick
	default:
		return s, fmt.Errorf("%w: unknown action kind %d", ErrNotApplicable, a.Kind)
	}
	if a.Target != s.target {
		return s, fmt.Errorf("%w: the operation's target %d is not the current target %d", ErrNotApplicable, a.Target, s.target)
	}
	if _, err := decodeMotion(&s, raw); err != nil {
		return s, err
	}
	s.spend(1)
	site := s.site
	tg := &site.targets[s.target]
	switch a.Kind {
	case Focus:
		n := int8(len(site.forms[tg.form].fields))
		s.focus = (s.focus + 1) % n
	case Type:
		fd := s.focused()
		s.values[fd.slot] = uint8(a.Value)
	case Toggle:
		fd := s.focused()
		s.values[fd.slot] ^= 1
	case Choose:
		fd := s.focused()
		s.values[fd.slot] = s.values[fd.slot]%uint8(len(fd.options)) + 1
	case Submit:
		s.submit(tg.form, true)
	case Click:
		s.click(s.target)
	}
	return s, nil
}

// focused returns the focused field of the target form.
func (s *State) focused() *field {
	return &s.site.fields[s.site.forms[s.site.targets[s.target].form].fields[s.focus]]
}

// checkTarget checks that target t is visible on the current page.
func checkTarget(s *State, t int32) error {
	if t < 0 || int(t) >= len(s.site.targets) || s.site.targets[t].page != s.page || !s.visible(t) {
		return fmt.Errorf("%w: target %d on %s", ErrNoTarget, t, s.URL())
	}
	return nil
}

// Login is the login procedure, which runs instead of the motion agent when the
// strategy picks a link or button into a page that requires login, or navigates back
// to such a page, while the session is logged out. Within one step it goes to the
// login page, fills the login form with each field's valid value (the test account),
// submits it and, logged in, follows the picked target or goes back, as the
// application's redirect after a login does; the login page does not stay in the
// history. It spends one UI operation per field focused and per field typed, one for
// the submission and one for the click or the back. If the application refuses the
// login or fails, the session stays on the page that says so.
func Login(s State, a Action) (State, error) {
	site := s.site
	if site.loginForm < 0 {
		return s, ErrNoLogin
	}
	switch a.Kind {
	case Pick:
		if err := checkTarget(&s, a.Target); err != nil {
			return s, err
		}
	case Back:
		if s.hist < 0 {
			return s, fmt.Errorf("%w: on %s", ErrNoHistory, s.URL())
		}
	default:
		return s, fmt.Errorf("%w: the login procedure follows a pick or a back, not %s", ErrNotApplicable, a.Kind)
	}
	origin, hist := s.page, s.hist
	s.visit(site.loginPage)
	f := &site.forms[site.loginForm]
	for _, fdi := range f.fields {
		fd := &site.fields[fdi]
		s.values[fd.slot] = fd.valid
	}
	s.spend(int32(min(2*len(f.fields)+1, math.MaxInt32)))
	s.submit(site.loginForm, false)
	s.target, s.focus = -1, -1
	if s.outcome != OutcomeLoaded {
		return s, nil
	}
	s.page, s.hist = origin, hist
	s.values = [MaxPageFields]uint8{}
	s.spend(1)
	if a.Kind == Back {
		s.back()
		s.outcome = OutcomeLoaded
		return s, nil
	}
	s.click(a.Target)
	return s, nil
}

// Info describes a state for people and logs (the --json output of baton play).
type Info struct {
	// URL is the current page's URL.
	URL string `json:"url"`
	// Target is the motion agent's target ("" when none); Outcome how the
	// application answered the last interaction ("" when none).
	Target  string `json:"target,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// LoggedIn and Cart are the session.
	LoggedIn bool `json:"logged_in"`
	Cart     int  `json:"cart"`
	// Coverage is the share of the site covered, to 4 decimals.
	Coverage float64 `json:"coverage"`
	// Defects lists the ids of the defects found.
	Defects []string `json:"defects"`
	// Budget is the UI operations left.
	Budget int `json:"budget"`
}

// Info describes the state.
func (e *Env) Info(s State) any {
	in := Info{URL: s.URL(), Target: s.Target(), LoggedIn: s.loggedIn, Cart: int(s.cart),
		Coverage: math.Round(s.Coverage()*1e4) / 1e4, Defects: s.FoundIDs(), Budget: int(s.budget)}
	if s.outcome != 0 {
		in.Outcome = s.outcome.String()
	}
	return in
}

// TargetIndex returns the index of the link, button or form id on page pageID, as
// Action.Target holds it, or -1.
func (s *Site) TargetIndex(pageID, id string) int32 {
	for i := range s.userPages {
		if s.pages[i].id != pageID {
			continue
		}
		for _, t := range s.pages[i].targets {
			if s.targets[t].id == id {
				return t
			}
		}
	}
	return -1
}
