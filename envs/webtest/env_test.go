package webtest_test

import (
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browser drives an environment's state with Env.Step, the way the agents' decoded
// actions do, by element ids.
type browser struct {
	t *testing.T
	e *webtest.Env
	s webtest.State
}

func newBrowser(t *testing.T, cfg webtest.Config) *browser {
	t.Helper()
	e, err := webtest.NewEnv(cfg)
	require.NoError(t, err)
	return &browser{t: t, e: e, s: e.InitialState(nil)}
}

func (b *browser) step(a webtest.Action) {
	b.t.Helper()
	s, err := b.e.Step(b.s, a)
	require.NoError(b.t, err, "%s on %s", a.Kind, b.s.URL())
	b.s = s
}

// target picks the element id of the current page.
func (b *browser) target(id string) int32 {
	b.t.Helper()
	i := b.e.Site().TargetIndex(b.s.Page(), id)
	require.GreaterOrEqual(b.t, i, int32(0), "no %q on %s", id, b.s.Page())
	b.step(webtest.Action{Kind: webtest.Pick, Target: i})
	return i
}

// click picks a link or button and clicks it.
func (b *browser) click(id string) webtest.Outcome {
	b.t.Helper()
	i := b.target(id)
	b.step(webtest.Action{Kind: webtest.Click, Target: i})
	return b.s.Outcome()
}

// fill picks a form, sets each field in order (a Value for a text, the number of
// "choose" presses for a select, the number of toggles for a checkbox), and submits.
func (b *browser) fill(id string, set ...int) webtest.Outcome {
	b.t.Helper()
	i := b.target(id)
	for _, v := range set {
		b.step(webtest.Action{Kind: webtest.Focus, Target: i})
		switch {
		case v >= 100: // toggles
			for range v - 100 {
				b.step(webtest.Action{Kind: webtest.Toggle, Target: i})
			}
		case v >= 10: // choices
			for range v - 10 {
				b.step(webtest.Action{Kind: webtest.Choose, Target: i})
			}
		case v > 0:
			b.step(webtest.Action{Kind: webtest.Type, Target: i, Value: webtest.Value(v)})
		}
	}
	b.step(webtest.Action{Kind: webtest.Submit, Target: i})
	return b.s.Outcome()
}

func (b *browser) back() {
	b.t.Helper()
	b.step(webtest.Action{Kind: webtest.Back, Target: -1})
}

// Shorthands for fill: a select's first option, a checked checkbox, no change.
const (
	first   = 11
	checked = 101
	skip    = 0
	valid   = int(webtest.Valid)
)

// order fills the shop's order form: name, quantity, card, note, shipping, terms.
func order(note webtest.Value) []int {
	return []int{valid, valid, valid, int(note), first, checked}
}

// login logs in through the shop's login page and comes back home.
func (b *browser) login() {
	b.t.Helper()
	require.Equal(b.t, webtest.OutcomeLoaded, b.click("nav-login"))
	require.Equal(b.t, webtest.OutcomeLoaded, b.fill("login", valid, valid))
	require.True(b.t, b.s.LoggedIn())
	require.Equal(b.t, "account", b.s.Page())
	require.Equal(b.t, webtest.OutcomeLoaded, b.click("nav-home"))
}

func TestNavigation(t *testing.T) {
	t.Run("link and back", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		assert.Equal(t, "/", b.s.URL())
		assert.Equal(t, webtest.OutcomeLoaded, b.click("nav-catalogue"))
		assert.Equal(t, "/catalogue", b.s.URL())
		assert.Equal(t, []string{"home"}, b.s.History())
		assert.Equal(t, webtest.OutcomeLoaded, b.click("gadget"))
		assert.Equal(t, []string{"catalogue", "home"}, b.s.History())
		b.back()
		assert.Equal(t, "catalogue", b.s.Page())
		b.back()
		assert.Equal(t, "home", b.s.Page())
		assert.Empty(t, b.s.History())
		_, err := b.e.Step(b.s, webtest.Action{Kind: webtest.Back, Target: -1})
		assert.ErrorIs(t, err, webtest.ErrNoHistory)
		assert.Equal(t, 3, b.s.PagesVisited())
		assert.True(t, b.s.Visited("gadget"))
		assert.False(t, b.s.Visited("widget"))
		assert.Equal(t, webtest.DefaultBudget-4, b.s.Budget(), "two clicks and two backs; the picks are free")
	})
	t.Run("login required", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		// Clicking into a page that requires login while logged out lands on the
		// login page (the strategy agent's login procedure avoids this).
		assert.Equal(t, webtest.OutcomeLoaded, b.click("nav-account"))
		assert.Equal(t, "login", b.s.Page())
		b.back()
		b.login()
		assert.Equal(t, webtest.OutcomeLoaded, b.click("nav-account"))
		assert.Equal(t, "account", b.s.Page())
		// Logging out, then going back into the account, lands on the login page.
		assert.Equal(t, webtest.OutcomeLoaded, b.click("log-out"))
		assert.False(t, b.s.LoggedIn())
		assert.Equal(t, "home", b.s.Page())
		b.back()
		assert.Equal(t, "login", b.s.Page())
	})
	t.Run("wrong credentials", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		b.click("nav-login")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("login", valid, int(webtest.Long)))
		assert.False(t, b.s.LoggedIn())
		assert.Equal(t, "login", b.s.Page())
	})
	t.Run("visibility", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		i := b.e.Site().TargetIndex("cart", "checkout")
		b.click("nav-cart")
		_, err := b.e.Step(b.s, webtest.Action{Kind: webtest.Pick, Target: i})
		assert.ErrorIs(t, err, webtest.ErrNoTarget, "no checkout with an empty cart")
		b.back()
		b.login()
		_, err = b.e.Step(b.s, webtest.Action{Kind: webtest.Pick, Target: b.e.Site().TargetIndex("home", "nav-login")})
		assert.ErrorIs(t, err, webtest.ErrNoTarget, "no log-in link when logged in")
		// A target of another page is not on this one.
		_, err = b.e.Step(b.s, webtest.Action{Kind: webtest.Pick, Target: i})
		assert.ErrorIs(t, err, webtest.ErrNoTarget)
	})
	t.Run("forms refuse and accept", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		assert.Equal(t, webtest.OutcomeRefused, b.fill("search", skip), "q is required")
		assert.Equal(t, "/", b.s.URL())
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("search", int(webtest.Script)))
		assert.Equal(t, "/search", b.s.URL())
		b.back()
		b.click("contact")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("message", int(webtest.Unicode), valid), "not an e-mail address")
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("message", valid, skip), "the values stay after a refusal")
		assert.Equal(t, "thanks", b.s.Page())
	})
	t.Run("numeric range", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		b.login()
		b.click("nav-account")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("profile", valid, int(webtest.Negative)), "age -1 is below 13")
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("profile", valid, int(webtest.Empty)), "age is optional")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("profile", valid, int(webtest.Long)), "not a number")
	})
	t.Run("effects and routes", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		b.login()
		b.click("featured")
		assert.Equal(t, webtest.OutcomeLoaded, b.click("add-to-cart"))
		assert.Equal(t, "cart", b.s.Page())
		assert.Equal(t, 1, b.s.Cart())
		assert.Equal(t, webtest.OutcomeLoaded, b.click("checkout"))
		assert.Equal(t, "checkout", b.s.Page())
		// With items in the cart the order goes through and empties the cart (the
		// route is chosen before the effects)...
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("order", order(webtest.Valid)...))
		assert.Equal(t, "order", b.s.Page())
		assert.Equal(t, 0, b.s.Cart())
		// ...and a second order, back on the checkout page, goes to the empty cart.
		b.back()
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("order", order(webtest.Valid)...))
		assert.Equal(t, "cart", b.s.Page())
		// Session flags: the coupon shows the remove-coupon button.
		assert.False(t, b.s.Flag("coupon"))
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("coupon", valid))
		assert.True(t, b.s.Flag("coupon"))
		assert.False(t, b.s.Flag("no such flag"))
	})
	t.Run("checkout form rules", func(t *testing.T) {
		b := newBrowser(t, webtest.Config{})
		b.login()
		b.click("featured")
		b.click("add-to-cart")
		b.click("checkout")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("order", valid, valid, valid, valid, first, skip), "terms unchecked")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("order", skip, int(webtest.Negative), skip, skip, skip, checked), "quantity -1")
		assert.Equal(t, webtest.OutcomeRefused, b.fill("order", skip, valid, int(webtest.Unicode), skip, skip, skip), "card number")
		assert.Equal(t, webtest.OutcomeLoaded, b.fill("order", skip, skip, valid, skip, 12, skip), "shipping wraps around its two options")
		assert.Equal(t, "order", b.s.Page())
	})
	t.Run("conditional routes", func(t *testing.T) {
		yes := true
		page := func(id string, elems ...webtest.ElementSpec) webtest.PageSpec {
			return webtest.PageSpec{ID: id, URL: "/" + id, Elements: append(elems, webtest.ElementSpec{ID: "home", Kind: "link", Nav: webtest.Nav{To: "home"}})}
		}
		spec := webtest.SiteSpec{Name: "routes", Start: "home", Flags: []string{"f"}, Pages: []webtest.PageSpec{
			{ID: "home", URL: "/", Elements: []webtest.ElementSpec{
				{ID: "go", Kind: "link", Nav: webtest.Nav{To: "plain", Routes: []webtest.Route{
					{If: &webtest.Condition{Flag: "f", LoggedIn: &yes}, To: "both"},
					{If: &webtest.Condition{Flag: "f"}, To: "flagged"},
					{If: &webtest.Condition{LoggedIn: &yes, Cart: "nonempty"}, To: "member"},
				}}},
				{ID: "set", Kind: "button", Nav: webtest.Nav{Effects: []string{"set:f"}}},
				{ID: "unset", Kind: "button", Nav: webtest.Nav{Effects: []string{"clear:f"}}},
				{ID: "in", Kind: "button", Nav: webtest.Nav{Effects: []string{"log_in", "add_to_cart", "add_to_cart"}}},
				{ID: "less", Kind: "button", Nav: webtest.Nav{Effects: []string{"remove_from_cart"}}},
				{ID: "out", Kind: "button", Nav: webtest.Nav{Effects: []string{"log_out"}}},
			}},
			page("plain"), page("flagged"), page("member"), page("both"),
		}}
		b := newBrowser(t, webtest.Config{Site: &spec})
		follow := func(want string) {
			t.Helper()
			b.click("go")
			assert.Equal(t, want, b.s.Page())
			b.back()
		}
		follow("plain")
		b.click("in")
		assert.True(t, b.s.LoggedIn())
		assert.Equal(t, 2, b.s.Cart())
		follow("member")
		b.click("less")
		follow("member")
		b.click("less")
		assert.Equal(t, 0, b.s.Cart())
		b.click("less")
		assert.Equal(t, 0, b.s.Cart(), "the cart does not go below empty")
		follow("plain")
		b.click("set")
		follow("both")
		b.click("out")
		follow("flagged")
		b.click("unset")
		assert.False(t, b.s.Flag("f"))
		follow("plain")
	})
	t.Run("reload", func(t *testing.T) {
		spec := mini()
		b := newBrowser(t, webtest.Config{Site: &spec})
		assert.Equal(t, webtest.OutcomeLoaded, b.click("promo"), "a button without a target reloads the page")
		assert.Equal(t, "home", b.s.Page())
		assert.Empty(t, b.s.History())
		assert.True(t, b.s.Flag("promo"))
	})
}
