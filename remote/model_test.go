package remote_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func serveModels(t *testing.T, tcp bool, opts ...remote.ServerOption) (*server, *models.Registry) {
	t.Helper()
	d, err := models.OpenDir(t.TempDir())
	require.NoError(t, err)
	reg := models.NewRegistry(d)
	s := newServer(t, opts...)
	require.NoError(t, s.AddModels(reg))
	return start(t, s, tcp), reg
}

func dialModels(t *testing.T, srv *server, opts ...remote.DialOption) *remote.ModelClient {
	t.Helper()
	c, err := remote.DialModels(t.Context(), srv.target, append(append([]remote.DialOption{}, srv.opts...), opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestModelService(t *testing.T) {
	srv, _ := serveModels(t, false)
	c := dialModels(t, srv)
	ctx := t.Context()

	m, err := c.Put(ctx, models.Meta{Name: "maze-strategy", Format: "onnx", Env: "maze", Figures: map[string]float64{"success_rate": 0.9}}, []byte("graph one"))
	require.NoError(t, err)
	assert.Equal(t, "maze-strategy@1", m.Ref())
	_, err = c.Put(ctx, models.Meta{Name: "maze-strategy"}, []byte("graph two"))
	require.NoError(t, err)

	got, data, err := c.Get(ctx, "maze-strategy", 1)
	require.NoError(t, err)
	assert.Equal(t, "graph one", string(data))
	assert.Equal(t, "maze", got.Env)
	assert.InDelta(t, 0.9, got.Figures["success_rate"], 0)
	got, err = c.Stat(ctx, "maze-strategy", models.Latest)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version)
	all, err := c.List(ctx, "maze-strategy")
	require.NoError(t, err)
	assert.Len(t, all, 2)

	tests := []struct {
		name string
		call func() error
		want []error
	}{
		{"unknown name", func() error { _, _, err := c.Get(ctx, "nope", 0); return err }, []error{models.ErrNotFound, remote.ErrNotFound}},
		{"unknown version", func() error { _, _, err := c.Get(ctx, "maze-strategy", 9); return err }, []error{models.ErrNotFound}},
		{"bad name", func() error { _, err := c.List(ctx, "a/b"); return err }, []error{models.ErrInvalid, remote.ErrInvalidArgument}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			for _, w := range tt.want {
				assert.ErrorIs(t, err, w)
			}
		})
	}
}

func TestModelServiceWatch(t *testing.T) {
	srv, reg := serveModels(t, false)
	c := dialModels(t, srv)
	ctx := t.Context()
	got := make(chan models.Meta, 1)
	go func() {
		m, err := c.Wait(ctx, "m", 0)
		assert.NoError(t, err)
		got <- m
	}()
	_, err := reg.Put(ctx, models.Meta{Name: "m"}, []byte("x"))
	require.NoError(t, err)
	assert.Equal(t, 1, (<-got).Version)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Wait(cctx, "m", 1)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestModelServiceKeys(t *testing.T) {
	keys, err := remote.NewKeys(map[string]string{"a": "key-of-model-a-0123456789", "b": "key-of-model-b-0123456789"})
	require.NoError(t, err)
	srv, reg := serveModels(t, true, remote.WithKeys(keys))
	ctx := t.Context()
	for _, name := range []string{"a", "b"} {
		_, err := reg.Put(ctx, models.Meta{Name: name}, []byte(name))
		require.NoError(t, err)
	}
	c := dialModels(t, srv, remote.WithKey("key-of-model-a-0123456789"))
	all, err := c.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, "a", all[0].Name)
	_, _, err = c.Get(ctx, "b", 0)
	require.ErrorIs(t, err, remote.ErrPermissionDenied)
	assert.Contains(t, err.Error(), "model")
	_, err = c.Put(ctx, models.Meta{Name: "b"}, []byte("x"))
	require.ErrorIs(t, err, remote.ErrPermissionDenied)

	// The same service over JSON.
	jc := newJSONClient(t, srv, "key-of-model-a-0123456789")
	out := jc.ok("ModelService/Get", `{"name": "a"}`)
	assert.Equal(t, "a", out["model"].(map[string]any)["name"])
	code, _ := jc.call("ModelService/Get", `{"name": "b"}`)
	assert.Equal(t, http.StatusForbidden, code)
	code, _ = jc.call("ModelService/Get", `{"name": "a", "version": 4}`)
	assert.Equal(t, http.StatusNotFound, code)
	out = jc.ok("ModelService/Put", `{"name": "a", "data": "Ynl0ZXM=", "meta_json": "{\"env\": \"maze\"}"}`)
	assert.Equal(t, int64(2), num(t, out["version"]))
	code, _ = jc.call("ModelService/Put", `{"name": "a", "data": "Ynl0ZXM=", "data_sha256": "00"}`)
	assert.NotEqual(t, http.StatusOK, code)
}
