package webtest

import _ "embed"

// shopJSON is the shop site's file, sites/shop.json.
//
//go:embed sites/shop.json
var shopJSON []byte

// ShopJSON returns the shop site's JSON file (a copy), the example of the site format.
func ShopJSON() []byte { return append([]byte(nil), shopJSON...) }

// Shop returns the shop site: a small web shop with a catalogue, a cart with
// coupons, a checkout behind a login, an account page and a contact form, and five
// planted defects, one of each kind and two server errors. It is loaded from the JSON
// file sites/shop.json with Load, as any site file is. Shop panics if that file is
// invalid, which the package's tests rule out.
func Shop() *Site {
	s, err := Load(shopJSON)
	if err != nil {
		panic("webtest: the embedded shop site is invalid: " + err.Error())
	}
	return s
}
