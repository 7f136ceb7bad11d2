package capi_test

import (
	"fmt"

	"github.com/batonrl/baton/capi"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/rps"
)

// A library of one's own environments is a main package that hands capi its register
// functions, built with go build -buildmode=c-shared (Python: baton.build):
//
//	// cmd/libkeydoor/main.go
//	package main
//
//	import (
//		"example.com/keydoor"
//		"github.com/batonrl/baton/capi"
//	)
//
//	func init() { capi.Use(keydoor.Register) }
//
//	func main() {}
//
// Here rps and cartpole stand for the user's packages; Registry shows what the
// library holds, as a Go test of the library would check it.
func Example() {
	capi.Use(rps.Register, cartpole.Register)
	reg, err := capi.Registry()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reg.Names())
	// Output: [rps cartpole]
}
