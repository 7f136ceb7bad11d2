package capi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/registry"
)

func failing(*registry.Registry) error { return errors.New("keydoor: no doors") }

func TestRegistry(t *testing.T) {
	type use []func(*registry.Registry) error
	tests := []struct {
		name string
		// uses are the calls of Use before the first get; late one after it.
		uses  []use
		late  use
		names []string
		is    error
		msg   []string
	}{
		{name: "one use", uses: []use{{catalog.Register}}, names: []string{"maze", "maze-flat", "cartpole", "webtest", "rps"}},
		{name: "functions in order", uses: []use{{rps.Register, cartpole.Register}}, names: []string{"rps", "cartpole"}},
		{name: "no use", is: ErrNoRegistry, msg: []string{"capi.Use"}},
		{name: "twice", uses: []use{{rps.Register}, {cartpole.Register}}, is: ErrUse,
			msg: []string{"twice", "envs/rps.Register", "envs/cartpole.Register"}},
		{name: "none given", uses: []use{{}}, is: ErrUse, msg: []string{"no register function"}},
		{name: "nil given", uses: []use{{rps.Register, nil}}, is: ErrUse, msg: []string{"function 2 of 2 is nil"}},
		{name: "after first use", uses: []use{{rps.Register}}, late: use{cartpole.Register}, is: ErrUse,
			msg: []string{"after the library's first call", "envs/cartpole.Register"}},
		{name: "a name twice", uses: []use{{catalog.Register, cartpole.Register}}, is: registry.ErrDuplicate,
			msg: []string{`environment "cartpole" is registered twice: first by github.com/batonrl/baton/envs/cartpole.Register (`, "from github.com/batonrl/baton/envs/catalog.Register (", "then by github.com/batonrl/baton/envs/cartpole.Register ("}},
		{name: "a name twice by one function", uses: []use{{func(r *registry.Registry) error {
			if err := rps.Register(r); err != nil {
				return err
			}
			return rps.Register(r)
		}}}, is: registry.ErrDuplicate, msg: []string{`"rps"`, "capi.TestRegistry"}},
		{name: "a function fails", uses: []use{{rps.Register, failing}}, is: ErrRegister,
			msg: []string{"capi.failing", "keydoor: no doors"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r builder
			for _, u := range tt.uses {
				r.use(u)
			}
			reg, err := r.get()
			if tt.late != nil {
				require.NoError(t, err)
				r.use(tt.late)
				reg, err = r.get()
			}
			if tt.is == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.names, reg.Names())
				again, err := r.get()
				require.NoError(t, err)
				assert.Same(t, reg, again, "built once")
				return
			}
			require.ErrorIs(t, err, tt.is)
			assert.Nil(t, reg)
			for _, m := range tt.msg {
				assert.Contains(t, err.Error(), m)
			}
			assert.Equal(t, 1, int(codeOf(err)), "the registry's errors are configuration errors (code 1)")
			_, again := r.get()
			assert.Equal(t, err, again, "every call reports it")
		})
	}
}

func TestDescribeAll(t *testing.T) {
	reg, err := catalog.New()
	require.NoError(t, err)
	c := describeAll(reg)
	require.Len(t, c.Envs, len(reg.Names()))
	byName := map[string]envInfo{}
	for i, e := range c.Envs {
		assert.Equal(t, reg.Names()[i], e.Name, "in the registry's order")
		assert.Empty(t, e.Error)
		byName[e.Name] = e
	}
	maze := byName["maze"]
	assert.Equal(t, "multi", maze.Kind.String())
	require.Len(t, maze.Agents, 2)
	assert.Equal(t, "strategy", maze.Agents[0].Name)
	assert.Contains(t, maze.Agents[1].Policies, maze.Agents[1].DefaultPolicy)
	assert.NotEmpty(t, maze.Agents[0].ObservationSpace)
	cp := byName["cartpole"]
	assert.Equal(t, "single", cp.Kind.String())
	assert.Equal(t, []string{"balance", "random"}, cp.Agents[0].Policies)
	assert.Equal(t, "random", cp.Agents[0].DefaultPolicy)
}

func TestDescribeAllReportsWhatItCannotStep(t *testing.T) {
	reg := registry.New()
	require.NoError(t, rps.Register(reg))
	require.NoError(t, reg.Register(registry.Entry{
		Name: "broken", Description: "opens nothing",
		Open: func([]byte) (registry.Factory, error) { return nil, errors.New("broken: no defaults") },
	}))
	c := describeAll(reg)
	require.Len(t, c.Envs, 2)
	assert.Empty(t, c.Envs[0].Error)
	assert.Equal(t, "broken", c.Envs[1].Name)
	assert.Contains(t, c.Envs[1].Error, "broken: no defaults")
	assert.Empty(t, c.Envs[1].Agents)
}
