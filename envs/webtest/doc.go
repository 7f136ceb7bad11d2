// Package webtest is a hierarchical environment of a messier domain than the maze:
// an autonomous agent testing a web application. A strategy agent decides what to test
// next; a motion agent performs the UI operations that test it; a login procedure
// steps in where a page needs a login.
//
// What you touch here: call Register, Load and the constructors to test a site of your
// own; read it as a second, messier hierarchical environment. It is an example, not API
// to build on.
//
// # The application
//
// A site is described as Go types (SiteSpec) or by a JSON site file (Load); Compile
// checks it and builds an immutable Site. A site has pages with URLs; each page holds
// links and buttons and forms (at most MaxTargets together), a form holds text inputs,
// selects and checkboxes with validation rules (required, a pattern, a numeric range)
// and a submit button. Clicking a link or a button, or submitting a form the rules
// accept, applies the interaction's effects to the session (add to or empty the cart,
// log in or out, set or clear a flag) and loads the page its navigation names: the
// first route whose condition on the session holds (logged in or not, the cart empty
// or not, a flag), else its target, else the same page again. An element or a form
// may show only under a condition. A page may require login: a session that is not
// logged in lands on the login page instead. Site validation reports every problem at
// once, each a *SiteError naming the page and the element: unknown link targets,
// duplicate ids, a form without a submit button, rules that refuse a field's own valid
// value, pages nothing leads to, and more.
//
// Defects are planted in the site (DefectSpec): a server error (a form submitted with
// a given field holding a given value class, the rest valid, loads the server-error
// page), a broken link (the not-found page), an element that does nothing, and a page
// reachable only through a specific sequence of interactions (done in order, other
// interactions between allowed). A defect is found when it shows.
//
// A site file (Config.SiteFile) is read only when it is a regular file of at most
// registry.MaxConfigFileBytes, never a FIFO or a device. In a configuration that
// arrives over the network (a server's caller; registry.Registry.Remote), it is a name
// inside the folder the server's operator allows (`baton serve env --config-dir DIR`),
// read through an os.Root so that it reaches nothing outside, and refused when there is
// no such folder; and a site, generated, inline or in that file, has at most
// webtest.pages pages (LimitPages, DefaultRemotePages unless the operator raises it
// with --env-limit webtest.pages=N).
//
// Two sites ship: Shop, a small shop (home and search, catalogue, products, cart with
// coupons, a checkout behind the login, an account, a contact form) loaded from the
// embedded sites/shop.json with five planted defects; and Generate, a seeded random
// site of n pages for scale, built as a SiteSpec and compiled through the same checks.
//
// # The state
//
// State holds the browser (the current page, the history, the values in the page's
// fields, the focused field, the motion agent's target), the application's session
// (logged in, the cart, the flags), what the episode has covered and the defects it
// found, and the budget of UI operations left. Coverage counts units: pages visited,
// targets exercised (a link or button clicked, a form submitted) and probes tried (a
// text field submitted with each value class, a select with each option, a checkbox
// unchecked and checked). A State is a small value that the hrl runtime copies without
// allocating: coverage and history live in a record per episode that every copy
// shares and reads as of its own making.
//
// The value vocabulary (Value) is the field's valid value and the edge cases: empty,
// very long, negative, unicode and script-like text.
//
// # The agents
//
// The strategy agent (Strategy) observes a fixed-size encoding of the current page
// (StrategyObsSize values): for each of MaxTargets slots, the visible link, button or
// form there, its coverage, whether the page it leads to was visited and whether it
// needs login; the kinds of elements present; whether the page is an error page and
// whether there is a history; coverage so far, pages visited, defects found, the
// budget left; the session flags. Its action is Discrete(StrategyActions): a target
// slot, StrategyBack or StrategyFinish, with a mask of the targets present and not
// yet covered (a form until every probe was tried), back when there is a history, and
// finish. It is rewarded for the coverage and the defects its decision gained over the
// whole span it delegated, and is done when it finishes (terminated) or the budget is
// spent (truncated).
//
// The motion agent (Motion) takes control with the target. It observes the target's
// kind and, for a form, each field (MaxFields slots): its kind, focus, value, whether
// the rules accept it and which probes were tried. Its actions (Discrete(MotionActions))
// are UI operations: focus the next field, type a value of the vocabulary, toggle,
// choose the next option, submit, click, masked by what applies. Its sub-episode ends
// when the interaction is done (terminated; Outcome says how the application
// answered) or after MaxSteps operations or with the budget (truncated). Each
// operation earns a small negative reward, the one that completes the interaction a
// positive one.
//
// # The login procedure
//
// A pick of a link or button into a page that requires login, or a back onto one,
// while the session is logged out, runs Login instead of the motion agent: within one
// step it fills the login form with the test account (each field's valid value),
// submits it and follows the target, as the application's redirect after a login does
// (trigger "login" of Env.Machine). Swapping it for a learned agent changes the
// machine only.
//
// # Policies and success
//
// Heuristic (least-covered target first, a depth-first search with the browser
// history as its stack) and Monkey (uniform over the allowed targets and back) are the
// strategy baselines; Scripted (valid values first, then one untried probe per
// submission) and agent.Random the motion ones. Register adds the environment to a
// registry.Registry as "webtest" with those policies (heuristic and scripted by
// default); an episode succeeds when it found every planted defect (FoundAll), and its
// metrics are coverage and defects_found. On the shop the heuristic with the scripted
// motion finds every defect in every one of 200 seeds within the default budget; the
// random strategy finds 3.7 of 5 on average and all five in none (Example_baselines).
// Its registry entry names the actions for people as ActionName does: a strategy's
// slot as the element in it (`link "Cart"`, `form "Apply a coupon"`), back and finish,
// and the motion agent's operations (type unicode, submit), which baton play prints.
//
// # Performance
//
// Step, the observations and the masks allocate nothing; a reset allocates the
// episode's record (four allocations). See BenchmarkWebtestStep in package bench.
//
// The environment, the agents and a Site hold configuration only and are safe for
// concurrent use; the policies Heuristic and Monkey draw from their generator and
// serve one trial at a time.
package webtest
