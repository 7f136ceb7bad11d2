package webtest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShopLoads(t *testing.T) {
	site := webtest.Shop()
	assert.Equal(t, "shop", site.Name())
	assert.Equal(t, 16, site.Pages())
	assert.Equal(t, "home", site.PageID(0))
	assert.Equal(t, webtest.NotFoundPage, site.PageID(16))
	assert.Equal(t, webtest.ServerErrorPage, site.PageID(17))
	// 16 pages, 56 targets, 89 probes (15 text fields of 6 value classes, selects of
	// 5 and 2 options, 2 checkboxes).
	assert.Equal(t, 16+56+89, site.Units())
	kinds := map[webtest.DefectKind]int{}
	for _, d := range site.Defects() {
		kinds[d.Kind]++
	}
	assert.Equal(t, map[webtest.DefectKind]int{webtest.DefectServerError: 2, webtest.DefectBrokenLink: 1, webtest.DefectDeadElement: 1, webtest.DefectSequence: 1}, kinds)
	assert.Equal(t, webtest.Defect{ID: "careers-404", Kind: webtest.DefectBrokenLink, Description: "the careers link leads to a page that no longer exists", Page: "home", Element: "careers"}, site.Defects()[1])
	assert.Equal(t, webtest.Defect{ID: "coupon-removal", Kind: webtest.DefectSequence,
		Description: "removing a coupon after applying it leaves the discount in place: the cart total goes negative", Page: "discount"}, site.Defects()[4])

	// The embedded file is what Load reads, and a site's document loads back the same.
	again, err := webtest.Load(webtest.ShopJSON())
	require.NoError(t, err)
	assert.Equal(t, site.Units(), again.Units())
	b, err := json.Marshal(site)
	require.NoError(t, err)
	round, err := webtest.Load(b)
	require.NoError(t, err)
	assert.Equal(t, site.Defects(), round.Defects())
	assert.Equal(t, site.Units(), round.Units())
	assert.Equal(t, site.Spec(), round.Spec())
}

// mini is a small valid site the error cases break one way or another.
func mini() webtest.SiteSpec {
	return webtest.SiteSpec{
		Name:  "mini",
		Start: "home",
		Login: &webtest.LoginSpec{Page: "login", Form: "login"},
		Flags: []string{"promo"},
		Pages: []webtest.PageSpec{
			{ID: "home", URL: "/", Elements: []webtest.ElementSpec{
				{ID: "to-a", Kind: "link", Nav: webtest.Nav{To: "a"}},
				{ID: "to-login", Kind: "link", Nav: webtest.Nav{To: "login"}},
				{ID: "promo", Kind: "button", Nav: webtest.Nav{Effects: []string{"set:promo"}}},
				{ID: "old", Kind: "link"},
			}},
			{ID: "a", URL: "/a", RequiresLogin: true, Elements: []webtest.ElementSpec{{ID: "home", Kind: "link", Nav: webtest.Nav{To: "home"}}},
				Forms: []webtest.FormSpec{{ID: "f", Nav: webtest.Nav{To: "home"}, Submit: &webtest.SubmitSpec{ID: "go"},
					Fields: []webtest.FieldSpec{{ID: "x", Kind: "text", Required: true, Pattern: "[a-z]+", Valid: "abc"}}}}},
			{ID: "login", URL: "/login", Forms: []webtest.FormSpec{{ID: "login", Nav: webtest.Nav{To: "a", Effects: []string{"log_in"}},
				Submit: &webtest.SubmitSpec{ID: "sign-in"}, Fields: []webtest.FieldSpec{{ID: "user", Kind: "text", Required: true, Valid: "u"}}}}},
			{ID: "secret", URL: "/secret", Elements: []webtest.ElementSpec{{ID: "home", Kind: "link", Nav: webtest.Nav{To: "home"}}}},
		},
		Defects: []webtest.DefectSpec{
			{ID: "old-404", Kind: "broken_link", Page: "home", Element: "old"},
			{ID: "x-script", Kind: "server_error", Page: "a", Form: "f", Field: "x", Value: "valid"},
			{ID: "promo-seq", Kind: "sequence", Steps: []string{"home/promo", "home/to-a"}, Reveals: "secret"},
		},
	}
}

func TestCompileMini(t *testing.T) {
	site, err := webtest.Compile(mini())
	require.NoError(t, err)
	assert.Equal(t, 4, site.Pages())
	assert.Len(t, site.Defects(), 3)
}

// Every problem of a site is reported at once, each naming its page and element.
func TestCompileErrors(t *testing.T) {
	type want struct{ page, element, reason string }
	tests := []struct {
		name   string
		change func(s *webtest.SiteSpec)
		want   []want
	}{
		{"unknown link target", func(s *webtest.SiteSpec) { s.Pages[0].Elements[0].To = "nowhere" },
			[]want{{"home", "to-a", `target "nowhere" is not a page of the site`}}},
		{"unknown route target", func(s *webtest.SiteSpec) {
			s.Pages[1].Forms[0].Routes = []webtest.Route{{If: &webtest.Condition{Cart: "empty"}, To: "void"}}
		}, []want{{"a", "f", `route #0's target "void" is not a page of the site`}}},
		{"duplicate ids", func(s *webtest.SiteSpec) {
			s.Pages = append(s.Pages, webtest.PageSpec{ID: "a", URL: "/other"})
			s.Pages[0].Elements = append(s.Pages[0].Elements, webtest.ElementSpec{ID: "to-a", Kind: "link", Nav: webtest.Nav{To: "a"}})
			f := &s.Pages[1].Forms[0]
			f.Fields = append(f.Fields, webtest.FieldSpec{ID: "go", Kind: "checkbox"})
		}, []want{{"a", "", "duplicate page id"}, {"home", "to-a", "duplicate id on the page"}, {"a", "go", "duplicate id on the page"}}},
		{"duplicate URL", func(s *webtest.SiteSpec) { s.Pages[3].URL = "/a" }, []want{{"secret", "", `URL "/a" is also the URL of page "a"`}}},
		{"form without a submit", func(s *webtest.SiteSpec) { s.Pages[1].Forms[0].Submit = nil }, []want{{"a", "f", "form has no submit button"}}},
		{"form without fields", func(s *webtest.SiteSpec) {
			s.Pages[3].Forms = []webtest.FormSpec{{ID: "empty", Submit: &webtest.SubmitSpec{ID: "send"}}}
		}, []want{{"secret", "empty", "form has no fields"}}},
		{"bad kinds", func(s *webtest.SiteSpec) {
			s.Pages[0].Elements[0].Kind = "anchor"
			s.Pages[3].Elements[0].Kind = "text"
			s.Pages[1].Forms[0].Fields[0].Kind = "textarea"
		}, []want{{"home", "to-a", `unknown element kind "anchor"`}, {"a", "f/x", `unknown field kind "textarea"`}, {"secret", "home", "a text is a field of a form"}}},
		{"link without target", func(s *webtest.SiteSpec) { s.Defects = s.Defects[1:] }, []want{{"home", "old", "link has no target"}}},
		{"rules", func(s *webtest.SiteSpec) {
			f := &s.Pages[1].Forms[0]
			f.Fields[0].Valid = "ABC"
			f.Fields = append(f.Fields,
				webtest.FieldSpec{ID: "n", Kind: "text", Min: ptr(5), Max: ptr(1), Valid: "3"},
				webtest.FieldSpec{ID: "p", Kind: "text", Pattern: "[", Valid: "x"},
				webtest.FieldSpec{ID: "s", Kind: "select", Valid: "z"},
				webtest.FieldSpec{ID: "c", Kind: "checkbox", Pattern: "x", Valid: "maybe"})
		}, []want{
			{"a", "f/x", `its valid value "ABC" does not pass its own rules`},
			{"a", "f/n", "min 5 is above max 1"},
			{"a", "f/n", `its valid value "3" does not pass its own rules`},
			{"a", "f/p", "pattern: error parsing regexp"},
			{"a", "f/s", "a select needs 1 to 6 options; it has 0"},
			{"a", "f/s", `its valid value "z" is not one of its options`},
			{"a", "f/c", "pattern, min and max are rules of text fields, not of a checkbox"},
			{"a", "f/c", `a checkbox's valid value is "checked" or "unchecked", not "maybe"`},
			{"a", "defect x-script", `field "x" refuses the value valid, so the server never sees it`},
		}},
		{"session", func(s *webtest.SiteSpec) {
			s.Pages[0].Elements[2].Effects = []string{"set:vip", "teleport"}
			s.Pages[0].Elements[0].VisibleIf = &webtest.Condition{Cart: "full", NoFlag: "gold"}
		}, []want{
			{"home", "to-a", `cart condition "full"`},
			{"home", "to-a", `unknown flag "gold"`},
			{"home", "promo", `unknown flag "vip"`},
			{"home", "promo", `unknown effect "teleport"`},
		}},
		{"no login", func(s *webtest.SiteSpec) { s.Login = nil }, []want{{"", "", "pages require login but the site names no login form"}}},
		{"login form", func(s *webtest.SiteSpec) {
			s.Pages[2].Forms[0].Effects = nil
			s.Pages[2].RequiresLogin = true
		}, []want{{"login", "", "the login page must not require login"}, {"login", "login", `the login form has no "log_in" effect`}}},
		{"defects", func(s *webtest.SiteSpec) {
			s.Defects = append(s.Defects,
				webtest.DefectSpec{ID: "d1", Kind: "broken_link", Page: "home", Element: "to-a"},
				webtest.DefectSpec{ID: "d2", Kind: "dead_element", Page: "home", Element: "ghost"},
				webtest.DefectSpec{ID: "d3", Kind: "server_error", Page: "a", Form: "f", Field: "x", Value: "empty"},
				webtest.DefectSpec{ID: "d4", Kind: "server_error", Page: "a", Form: "f", Field: "x", Value: "loud"},
				webtest.DefectSpec{ID: "d5", Kind: "typo", Page: "home"},
				webtest.DefectSpec{ID: "d6", Kind: "sequence", Steps: []string{"home/to-a"}, Reveals: "a"},
				webtest.DefectSpec{ID: "old-404", Kind: "dead_element", Page: "nowhere", Element: "x"})
		}, []want{
			{"home", "defect d1", "a broken link has no target of its own"},
			{"home", "defect d2", `element "ghost" is not an element of the page`},
			{"a", "defect d3", "field \"x\" refuses the value empty, so the server never sees it"},
			{"a", "defect d4", `unknown value class "loud"`},
			{"home", "defect d5", `unknown defect kind "typo"`},
			{"", "defect d6", "a sequence needs 2 to 32 steps; it has 1"},
			{"", "old-404", "duplicate defect id"},
			{"nowhere", "defect old-404", `page "nowhere" is not a page of the site`},
			{"a", "defect d6", `the page a sequence reveals must be reachable only through it, but page "home" leads to it`},
			{"a", "defect d6", `the page a sequence reveals must be reachable only through it, but page "login" leads to it`},
		}},
		{"unreachable", func(s *webtest.SiteSpec) { s.Defects = s.Defects[:2] }, []want{{"secret", "", `no link, form or sequence leads to the page from the start page "home"`}}},
		{"start", func(s *webtest.SiteSpec) { s.Start = "lobby" }, []want{{"", "", `the start page "lobby" is not a page of the site`}}},
		{"too many targets", func(s *webtest.SiteSpec) {
			for i := range webtest.MaxTargets {
				s.Pages[3].Elements = append(s.Pages[3].Elements, webtest.ElementSpec{ID: "b" + string(rune('a'+i)), Kind: "button"})
			}
		}, []want{{"secret", "", "17 links, buttons and forms; at most 16"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := mini()
			tt.change(&spec)
			site, err := webtest.Compile(spec)
			require.Error(t, err)
			assert.Nil(t, site)
			require.ErrorIs(t, err, webtest.ErrSite)
			got := webtest.SiteErrors(err)
			require.Len(t, got, len(tt.want), "%v", err)
			for i, w := range tt.want {
				assert.Equal(t, w.page, got[i].Page, "problem %d: %v", i, got[i])
				assert.Equal(t, w.element, got[i].Element, "problem %d: %v", i, got[i])
				assert.Contains(t, got[i].Reason, w.reason, "problem %d", i)
				assert.True(t, strings.HasPrefix(got[i].Error(), "webtest: invalid site: "), got[i].Error())
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

// Load reads JSON strictly and reports the same problems as Compile.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"syntax", `{"name": `, "reading JSON: unexpected EOF"},
		{"unknown field", `{"name": "x", "colour": "red"}`, `reading JSON: json: unknown field "colour"`},
		{"trailing", `{"name": "x", "start": "a", "pages": [{"id": "a", "url": "/"}]} {}`, "trailing data"},
		{"unknown link target", `{"start": "a", "pages": [{"id": "a", "url": "/", "elements": [{"id": "l", "kind": "link", "to": "b"}]}]}`,
			`page "a": "l": target "b" is not a page of the site`},
		{"form without a submit", `{"start": "a", "pages": [{"id": "a", "url": "/", "forms": [{"id": "f", "fields": [{"id": "q", "kind": "text"}]}]}]}`,
			`page "a": "f": form has no submit button`},
		{"duplicate ids", `{"start": "a", "pages": [{"id": "a", "url": "/", "elements": [{"id": "l", "kind": "button"}, {"id": "l", "kind": "button"}]}]}`,
			`page "a": "l": duplicate id on the page`},
		{"no pages", `{"start": "a", "pages": []}`, "the site has no pages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := webtest.Load([]byte(tt.json))
			require.ErrorIs(t, err, webtest.ErrSite)
			assert.Contains(t, err.Error(), tt.want)
			var se *webtest.SiteError
			assert.True(t, errors.As(err, &se))
		})
	}
}

func TestValues(t *testing.T) {
	for v := webtest.Valid; v <= webtest.Script; v++ {
		got, err := webtest.ParseValue(v.String())
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
	_, err := webtest.ParseValue("huge")
	assert.ErrorContains(t, err, `unknown value class "huge" (classes: valid, empty, long, negative, unicode, script)`)
	assert.Equal(t, "abc", webtest.Valid.Text("abc"))
	assert.Equal(t, "", webtest.Empty.Text("abc"))
	assert.Len(t, webtest.Long.Text(""), 300)
	assert.Equal(t, "-1", webtest.Negative.Text(""))
	assert.Contains(t, webtest.Unicode.Text(""), "日本語")
	assert.Contains(t, webtest.Script.Text(""), "<script>")
	assert.Equal(t, "Value(9)", webtest.Value(9).String())
	assert.Equal(t, "checkbox", webtest.Checkbox.String())
	assert.Equal(t, "sequence", webtest.DefectSequence.String())
	assert.Equal(t, "server error", webtest.OutcomeServerError.String())
	assert.Equal(t, "submit", webtest.Submit.String())
}
