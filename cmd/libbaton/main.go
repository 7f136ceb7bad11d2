package main

import (
	"github.com/batonrl/baton/capi"
	"github.com/batonrl/baton/examples/catalog"
)

func init() { capi.Use(catalog.Register) }

// main is empty: the library is loaded, not run.
func main() {}
