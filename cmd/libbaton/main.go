package main

import (
	"github.com/batonrl/baton/capi"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/scramble"
)

// The scrambled variants are what Python's scramble=SEED makes.
func init() { capi.Use(catalog.Register, scramble.Register("maze", "maze-flat", "cartpole")) }

// main is empty: the library is loaded, not run.
func main() {}
