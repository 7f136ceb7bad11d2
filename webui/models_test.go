package webui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/webui"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func curve(n int, success func(i int) bool) []models.Point {
	out := make([]models.Point, n)
	for i := range out {
		out[i] = models.Point{Episode: i + 1, Return: float64(i), Success: success(i)}
	}
	return out
}

func getModels(t *testing.T, h http.Handler, key string) (int, []webui.ModelInfo) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/ui/models.json", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body struct {
		Served bool              `json:"served"`
		Models []webui.ModelInfo `json:"models"`
	}
	if rec.Code == http.StatusOK {
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.True(t, body.Served)
	}
	return rec.Code, body.Models
}

const (
	k1 = "learner-key-0123456789"
	k2 = "other-key-0123456789"
)

func TestModels(t *testing.T) {
	ctx := context.Background()
	dir, err := models.OpenDir(t.TempDir())
	require.NoError(t, err)
	keys, err := remote.NewKeys(map[string]string{"learner": k1, "other": k2})
	require.NoError(t, err)
	h := webui.Handler(testRegistry(t), webui.WithModels(dir, keys))

	code, got := getModels(t, h, k1)
	require.Equal(t, http.StatusOK, code)
	assert.Empty(t, got, "an empty registry")

	_, err = dir.Put(ctx, models.Meta{Name: "learner", Format: "json", Env: "maze", Agent: "strategy",
		Figures: map[string]float64{"epsilon": 0.1}, Curve: curve(10, func(i int) bool { return i >= 5 })}, []byte("v1"))
	require.NoError(t, err)
	_, err = dir.Put(ctx, models.Meta{Name: "other"}, []byte("x"))
	require.NoError(t, err)

	code, got = getModels(t, h, k1)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, got, 1, "only the models the key grants")
	m := got[0]
	assert.Equal(t, "learner@1", m.Ref)
	assert.Equal(t, "strategy", m.Agent)
	assert.Equal(t, 10, m.Episodes)
	require.Len(t, m.Curve, 10, "a short curve is sent whole")
	assert.Equal(t, webui.CurveBin{First: 6, Last: 6, Return: 5, Success: 1}, m.Curve[5])

	// A new version with a long curve: the page sees it on its next look, binned.
	_, err = dir.Put(ctx, models.Meta{Name: "learner", Curve: curve(600, func(i int) bool { return i%2 == 0 })}, []byte("v2"))
	require.NoError(t, err)
	_, got = getModels(t, h, k1)
	require.Len(t, got, 1)
	m = got[0]
	assert.Equal(t, 2, m.Version)
	assert.Equal(t, 600, m.Episodes)
	require.Len(t, m.Curve, webui.MaxCurveBins)
	assert.Equal(t, webui.CurveBin{First: 1, Last: 10, Return: 4.5, Success: 0.5}, m.Curve[0])
	assert.Equal(t, 600, m.Curve[len(m.Curve)-1].Last)

	code, _ = getModels(t, h, "wrong-key-0123456789")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = getModels(t, h, "")
	assert.Equal(t, http.StatusUnauthorized, code)

	// Without WithModels the page is told that no models are served, and hides them.
	rec := httptest.NewRecorder()
	webui.Handler(testRegistry(t)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/models.json", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"served": false, "models": []}`, rec.Body.String())
}
