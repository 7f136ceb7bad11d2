// Command libscrambled is a fast lane library of the environments baton ships and their
// scrambled variants (package scramble): "maze-scrambled", "maze-flat-scrambled" and
// "cartpole-scrambled", each with its seed in the configuration's "scramble" field.
// Build it and train on it from Python:
//
//	go build -buildmode=c-shared -o libscrambled.so ./examples/scrambled/libscrambled
//	python -m baton.ppo --env maze-scrambled --config '{"scramble": 7}' --library ./libscrambled.so
//
// (or baton.build(package="./examples/scrambled/libscrambled")). The command line over
// the same registry is cli.Main(catalog.Register, scramble.Register("maze")).
package main

import (
	"github.com/batonrl/baton/capi"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/scramble"
)

func init() {
	capi.Use(catalog.Register, scramble.Register("maze", "maze-flat", "cartpole"))
}

// main is empty: the library is loaded, not run.
func main() {}
