package catalog_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/registry"
)

func TestNew(t *testing.T) {
	reg, err := catalog.New()
	require.NoError(t, err)
	assert.Equal(t, []string{"maze", "maze-flat", "cartpole", "webtest", "rps"}, reg.Names())
	for _, name := range reg.Names() {
		t.Run(name, func(t *testing.T) {
			e, err := reg.Lookup(name)
			require.NoError(t, err)
			f, err := e.Open(nil)
			require.NoError(t, err)
			m, err := f.NewEnv(registry.EnvOptions{})
			require.NoError(t, err)
			assert.NotEmpty(t, m.Agents())
		})
	}
	other, err := catalog.New()
	require.NoError(t, err)
	assert.NotSame(t, reg, other, "each call builds its own registry")
}

func TestRegister(t *testing.T) {
	reg := registry.New()
	require.NoError(t, catalog.Register(reg))
	assert.Equal(t, []string{"maze", "maze-flat", "cartpole", "webtest", "rps"}, reg.Names())
	err := catalog.Register(reg)
	require.ErrorIs(t, err, registry.ErrDuplicate, "a second Register clashes with the first")
}
