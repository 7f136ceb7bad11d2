package webtest_test

import (
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each planted defect of the shop shows when the right interaction happens, and only
// then.
func TestShopDefects(t *testing.T) {
	tests := []struct {
		id string
		// play finds the defect; the browser starts home.
		play    func(b *browser)
		outcome webtest.Outcome
		page    string
	}{
		{"search-unicode", func(b *browser) {
			require.Equal(t, webtest.OutcomeLoaded, b.fill("search", int(webtest.Script)), "other values go through")
			b.back()
			assert.False(t, b.s.Found("search-unicode"))
			b.fill("search", int(webtest.Unicode))
		}, webtest.OutcomeServerError, webtest.ServerErrorPage},
		{"careers-404", func(b *browser) { b.click("careers") }, webtest.OutcomeNotFound, webtest.NotFoundPage},
		{"wishlist-dead", func(b *browser) {
			b.click("featured")
			b.click("wishlist")
		}, webtest.OutcomeNoResponse, "widget"},
		{"order-note-script", func(b *browser) {
			b.login()
			b.click("featured")
			b.click("add-to-cart")
			b.click("checkout")
			// An invalid quantity keeps the note from the server.
			require.Equal(t, webtest.OutcomeRefused, b.fill("order", valid, int(webtest.Negative), valid, int(webtest.Script), first, checked))
			assert.False(t, b.s.Found("order-note-script"))
			b.fill("order", skip, valid, skip, skip, skip, skip)
		}, webtest.OutcomeServerError, webtest.ServerErrorPage},
		{"coupon-removal", func(b *browser) {
			b.click("nav-cart")
			_, err := b.e.Step(b.s, webtest.Action{Kind: webtest.Pick, Target: b.e.Site().TargetIndex("cart", "remove-coupon")})
			require.ErrorIs(t, err, webtest.ErrNoTarget, "no coupon to remove yet")
			require.Equal(t, webtest.OutcomeRefused, b.fill("coupon", int(webtest.Script)))
			require.Equal(t, webtest.OutcomeLoaded, b.fill("coupon", valid))
			b.click("remove-coupon")
		}, webtest.OutcomeLoaded, "discount"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			b := newBrowser(t, webtest.Config{})
			tt.play(b)
			assert.Equal(t, tt.outcome, b.s.Outcome())
			assert.Equal(t, tt.page, b.s.Page())
			assert.Equal(t, []string{tt.id}, b.s.FoundIDs())
			assert.True(t, b.s.Found(tt.id))
			assert.Equal(t, 1, b.s.DefectsFound())
			assert.False(t, b.s.FoundAll())
			if tt.page == webtest.NotFoundPage || tt.page == webtest.ServerErrorPage {
				b.back() // an error page leads back only
				assert.NotEqual(t, tt.page, b.s.Page())
			}
		})
	}
}

// The sequence counts its steps in order, with other interactions between, and
// reveals its page once; after that the last step does what it normally does.
func TestSequence(t *testing.T) {
	b := newBrowser(t, webtest.Config{})
	b.click("nav-cart")
	b.fill("coupon", valid)
	b.click("continue")
	b.click("gadget")
	b.click("nav-cart")
	b.click("remove-coupon")
	assert.Equal(t, "discount", b.s.Page())
	assert.True(t, b.s.Found("coupon-removal"))
	b.back()
	b.fill("coupon", valid)
	b.click("remove-coupon")
	assert.Equal(t, "cart", b.s.Page(), "the defect shows once per episode")
	assert.False(t, b.s.Flag("coupon"))
}

func TestFoundAll(t *testing.T) {
	b := newBrowser(t, webtest.Config{})
	b.click("careers")
	b.back()
	b.fill("search", int(webtest.Unicode))
	b.back()
	b.click("featured")
	b.click("wishlist")
	b.click("add-to-cart")
	b.fill("coupon", valid)
	b.click("remove-coupon")
	b.click("nav-cart")
	b.click("nav-account")
	b.fill("login", valid, valid)
	b.click("nav-cart")
	b.click("checkout")
	assert.Equal(t, 4, b.s.DefectsFound())
	assert.False(t, b.s.FoundAll())
	b.fill("order", order(webtest.Script)...)
	assert.True(t, b.s.FoundAll())
	assert.Equal(t, []string{"search-unicode", "careers-404", "wishlist-dead", "order-note-script", "coupon-removal"}, b.s.FoundIDs())
}
