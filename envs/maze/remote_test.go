package maze_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// views returns a registry of the maze and the flat maze, and its remote view with
// the limits given.
func views(t *testing.T, limits map[string]int64) (local, remote *registry.Registry) {
	t.Helper()
	local = registry.New()
	require.NoError(t, maze.Register(local))
	require.NoError(t, maze.RegisterFlat(local))
	remote, err := local.Remote(registry.Remote{Limits: limits})
	require.NoError(t, err)
	return local, remote
}

func open(t *testing.T, reg *registry.Registry, name, config string) (registry.Factory, error) {
	t.Helper()
	e, err := reg.Lookup(name)
	require.NoError(t, err)
	return e.Open([]byte(config))
}

// TestRemoteSides: a configuration from the network asks for a map of at most
// maze.side (maze-flat.side) rows and columns, generated or given as text, and for
// the maze an observed side of at most that; the trusted caller's is not bounded so.
func TestRemoteSides(t *testing.T) {
	local, remote := views(t, nil)
	row := strings.Repeat("0", maze.DefaultRemoteSide+2)
	text := "23" + row[2:] + "\n" + row
	for _, tt := range []struct{ env, config string }{
		{"maze", `{"generate": {"rows": 43, "cols": 5}}`},
		{"maze", `{"generate": {"rows": 43, "cols": 5, "per_episode": true}}`},
		{"maze", fmt.Sprintf(`{"map": %q}`, text)},
		{"maze", `{"obs_side": 43}`},
		{"maze-flat", `{"generate": {"rows": 5, "cols": 101}}`},
		{"maze-flat", fmt.Sprintf(`{"map": %q}`, text)},
	} {
		t.Run(tt.env+" "+tt.config, func(t *testing.T) {
			_, err := open(t, remote, tt.env, tt.config)
			require.ErrorIs(t, err, registry.ErrLimit)
			assert.ErrorContains(t, err, fmt.Sprintf("is more than 41, the limit %s.side", tt.env))
			_, err = open(t, local, tt.env, tt.config)
			assert.NotErrorIs(t, err, registry.ErrLimit, "the command line has no such limit")
		})
	}
	for _, tt := range []struct{ env, config string }{
		{"maze", `{"generate": {"rows": 41, "cols": 41}, "obs_side": 41}`},
		{"maze", ""},
		{"maze-flat", `{"generate": {"rows": 41, "cols": 41}}`},
	} {
		_, err := open(t, remote, tt.env, tt.config)
		require.NoError(t, err, tt.config)
	}
	_, raised := views(t, map[string]int64{"maze-flat.side": 101})
	_, err := open(t, raised, "maze-flat", `{"generate": {"rows": 101, "cols": 101}}`)
	require.NoError(t, err)
	_, err = open(t, raised, "maze", `{"generate": {"rows": 101, "cols": 101}}`)
	require.ErrorIs(t, err, registry.ErrLimit, "each environment has its own limit")
}

// TestFlatCopiesShare: the flat maze's copies share their map and agent spec, and
// its factory estimates a copy at its observation.
func TestFlatCopiesShare(t *testing.T) {
	local, _ := views(t, nil)
	f, err := open(t, local, "maze-flat", `{"generate": {"rows": 21, "cols": 21, "seed": 3}}`)
	require.NoError(t, err)
	var flats []*maze.Flat
	for range 3 {
		m, err := f.NewEnv(registry.EnvOptions{MaxTicks: 7})
		require.NoError(t, err)
		fl, ok := env.As[*maze.Flat](m)
		require.True(t, ok)
		flats = append(flats, fl)
	}
	assert.Same(t, flats[0].Maze(), flats[1].Maze())
	assert.Same(t, flats[1].Maze(), flats[2].Maze())
	assert.Equal(t, 7, flats[0].Config().MaxSteps)
	s, ok := f.(registry.Sizer)
	require.True(t, ok)
	_, each := s.Size()
	assert.Equal(t, int64(4*flats[0].Spec().ObservationSpace.FlatDim()+256), each)
}
