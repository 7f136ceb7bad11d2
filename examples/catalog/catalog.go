package catalog

import (
	"github.com/batonrl/baton/examples/cartpole"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/examples/rps"
	"github.com/batonrl/baton/examples/webtest"
	"github.com/batonrl/baton/runners"
)

// New returns a new registry holding the environments baton ships, in this order:
// "maze" (maze.Register), "maze-flat" (maze.RegisterFlat), "cartpole"
// (cartpole.Register), "webtest" (webtest.Register) and "rps" (rps.Register). Each
// call builds a registry of its own; the caller may register more environments into
// it.
func New() (*runners.Registry, error) {
	reg := runners.NewRegistry()
	for _, register := range []func(*runners.Registry) error{maze.Register, maze.RegisterFlat, cartpole.Register, webtest.Register, rps.Register} {
		if err := register(reg); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
