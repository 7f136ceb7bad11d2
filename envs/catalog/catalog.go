package catalog

import (
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/registry"
)

// Register adds the environments baton ships to reg, in this order: "maze"
// (maze.Register), "maze-flat" (maze.RegisterFlat), "cartpole" (cartpole.Register),
// "webtest" (webtest.Register) and "rps" (rps.Register). It is a register function as
// the command line (cli.Main) and the fast lane's library (capi.Use) take them, so that
// a program of a user's own environments can hold baton's too:
// cli.Main(catalog.Register, keydoor.Register).
func Register(reg *registry.Registry) error {
	for _, register := range []func(*registry.Registry) error{maze.Register, maze.RegisterFlat, cartpole.Register, webtest.Register, rps.Register} {
		if err := register(reg); err != nil {
			return err
		}
	}
	return nil
}

// New returns a new registry holding the environments baton ships (Register). Each
// call builds a registry of its own; the caller may register more environments into
// it.
func New() (*registry.Registry, error) {
	reg := registry.New()
	if err := Register(reg); err != nil {
		return nil, err
	}
	return reg, nil
}
