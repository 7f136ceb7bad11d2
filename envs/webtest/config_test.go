package webtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfig(t *testing.T) {
	cfg, err := webtest.ParseConfig([]byte(`{"strategy": {"budget": 300, "reward_for_defect": 5}, "motion": {"max_steps": 10, "reward_per_action": 0}}`))
	require.NoError(t, err)
	e, err := webtest.NewEnv(cfg)
	require.NoError(t, err)
	got := e.Config()
	assert.Equal(t, 300, got.Strategy.Budget)
	assert.Equal(t, 5.0, *got.Strategy.DefectReward)
	assert.Equal(t, webtest.DefaultCoverageReward, *got.Strategy.CoverageReward)
	assert.Equal(t, 10, got.Motion.MaxSteps)
	assert.Equal(t, 0.0, *got.Motion.ActionReward)
	assert.Equal(t, webtest.DefaultCompletionReward, *got.Motion.CompletionReward)
	assert.Equal(t, "shop", e.Site().Name())
	assert.Equal(t, 300, e.InitialState(nil).Budget())

	zero, err := webtest.ParseConfig(nil)
	require.NoError(t, err)
	assert.Equal(t, webtest.Config{}, zero)

	// The site: inline, from a file, or generated.
	spec := mini()
	e, err = webtest.NewEnv(webtest.Config{Site: &spec})
	require.NoError(t, err)
	assert.Equal(t, "mini", e.Site().Name())
	path := filepath.Join(t.TempDir(), "shop.json")
	require.NoError(t, os.WriteFile(path, webtest.ShopJSON(), 0o644))
	cfg, err = webtest.ParseConfig([]byte(`{"site_file": "` + path + `"}`))
	require.NoError(t, err)
	e, err = webtest.NewEnv(cfg)
	require.NoError(t, err)
	assert.Equal(t, webtest.Shop().Units(), e.Site().Units())
	e, err = webtest.NewEnv(webtest.Config{Generate: &webtest.GenerateConfig{Pages: 12, Seed: 4}})
	require.NoError(t, err)
	assert.Equal(t, 12, e.Site().Pages())
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       error
		msg        string
	}{
		{"unknown field", `{"motion": {"max_step": 3}}`, webtest.ErrConfig, `unknown field "max_step"`},
		{"trailing", `{} {}`, webtest.ErrConfig, "trailing data"},
		{"negative", `{"strategy": {"budget": -1}, "motion": {"max_steps": -2}}`, webtest.ErrConfig, "strategy.budget is -1"},
		{"two sites", `{"site_file": "x.json", "generate": {"pages": 10}}`, webtest.ErrConfig, "give one of site, site_file and generate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := webtest.ParseConfig([]byte(tt.json))
			require.ErrorIs(t, err, tt.want)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
	_, err := webtest.NewEnv(webtest.Config{SiteFile: filepath.Join(t.TempDir(), "missing.json")})
	assert.ErrorIs(t, err, webtest.ErrConfig)
	_, err = webtest.NewEnv(webtest.Config{Generate: &webtest.GenerateConfig{Pages: 3}})
	assert.ErrorIs(t, err, webtest.ErrSite)
	bad := mini()
	bad.Start = ""
	_, err = webtest.NewEnv(webtest.Config{Site: &bad})
	assert.ErrorIs(t, err, webtest.ErrSite)
}
