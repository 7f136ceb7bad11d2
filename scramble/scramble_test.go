package scramble_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/scramble"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, catalog.Register(reg))
	require.NoError(t, scramble.Register("maze", "maze-flat", "cartpole")(reg))
	return reg
}

// The seed comes out of the configuration; the rest goes to the environment, which
// refuses what it does not know.
func TestConfig(t *testing.T) {
	reg := testRegistry(t)
	e, err := reg.Lookup("maze-scrambled")
	require.NoError(t, err)
	tests := []struct {
		name, config string
		seed         uint64
		err          string
	}{
		{"none", ``, 0, ""},
		{"seed only", `{"scramble": 7}`, 7, ""},
		{"seed and the maze's own", `{"scramble": 8, "obs_side": 0}`, 8, ""},
		{"a bad seed", `{"scramble": -1}`, 0, `"scramble" is -1`},
		{"not an object", `[1]`, 0, "not a JSON object"},
		{"a field the maze does not know", `{"scramble": 1, "sides": 3}`, 0, "sides"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := e.Open([]byte(tt.config))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			m, err := f.NewEnv(registry.EnvOptions{})
			require.NoError(t, err)
			s, ok := env.As[*env.Scrambled](m)
			require.True(t, ok)
			assert.Equal(t, tt.seed, s.Seed())
		})
	}
	_, err = reg.Lookup("cartpole-scrambled")
	require.NoError(t, err)
	assert.ErrorContains(t, scramble.Register("nowhere")(registry.New()), `unknown environment "nowhere"`)
}

// A campaign plays the scrambled maze with its random policies and logs it: the log's
// metadata records the environment and the configuration with its seed.
func TestCampaignLogsTheSeed(t *testing.T) {
	reg := testRegistry(t)
	dir := t.TempDir()
	ds, err := datalog.NewDataset(dir)
	require.NoError(t, err)
	spec := runners.Spec{Env: "maze-scrambled", Config: json.RawMessage(`{"scramble": 5}`), Seed: 1, Episodes: 2, MaxTicks: 200}
	c, err := runners.NewCampaign(reg, spec, runners.WithTrials(2), runners.WithWorkers(1), runners.WithWorkerSinks(ds.WorkerSinks()))
	require.NoError(t, err)
	s, err := c.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, ds.Close())
	assert.Equal(t, 2, s.Trials)
	assert.Positive(t, s.EnvSteps)

	r, err := datalog.Open(dir)
	require.NoError(t, err)
	info, err := r.Agent("strategy")
	require.NoError(t, err)
	assert.Equal(t, "maze-scrambled", info.Metadata[datalog.MetaEnv])
	assert.JSONEq(t, `{"scramble": 5}`, info.Metadata[datalog.MetaEnvConfig])
	trials, err := r.Trials()
	require.NoError(t, err)
	require.Len(t, trials, 2)
	assert.JSONEq(t, `{"scramble": 5}`, string(trials[0].Config))
}

// The permutations of seed 7, which python/tests/test_scramble.py checks Python's
// scramble=7 against: they are a function of the seed and the agent's name only.
func TestPermutationsOfSeven(t *testing.T) {
	reg := testRegistry(t)
	for _, tt := range []struct {
		env, agent  string
		actions     []int
		observation []int // its first entries
	}{
		{"maze-scrambled", "strategy", []int{0, 2, 3, 1}, []int{42, 96, 23, 87, 28, 77, 19, 88}},
		{"maze-scrambled", "motion", []int{0, 1}, []int{102, 88, 101, 4, 22, 97, 0, 65}},
		{"cartpole-scrambled", "cartpole", []int{1, 0}, []int{2, 1, 0, 3}},
	} {
		t.Run(tt.env+"/"+tt.agent, func(t *testing.T) {
			e, err := reg.Lookup(tt.env)
			require.NoError(t, err)
			f, err := e.Open([]byte(`{"scramble": 7}`))
			require.NoError(t, err)
			m, err := f.NewEnv(registry.EnvOptions{})
			require.NoError(t, err)
			s, ok := env.As[*env.Scrambled](m)
			require.True(t, ok)
			p, ok := s.Permutation(tt.agent)
			require.True(t, ok)
			assert.Equal(t, tt.actions, p.Actions)
			assert.Equal(t, tt.observation, p.Observation[:len(tt.observation)])
		})
	}
}
