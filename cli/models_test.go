package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModelsCommands(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "policy.onnx")
	require.NoError(t, os.WriteFile(file, []byte("graph bytes"), 0o644))
	meta := filepath.Join(t.TempDir(), "meta.json")
	require.NoError(t, os.WriteFile(meta, []byte(`{"figures": {"success_rate": 0.75}, "curve": [
		{"episode": 1, "return": -1, "success": false}, {"episode": 2, "return": 1, "success": true}]}`), 0o644))

	r := runArgs(t, "models", "push", "maze-strategy", file, "--dir", dir, "--format", "onnx", "--env", "maze", "--agent", "strategy", "--meta", meta)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "pushed maze-strategy@1 (11 bytes")
	r = runArgs(t, "models", "push", "maze-strategy", file, "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "pushed maze-strategy@2")

	r = runArgs(t, "models", "ls", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "maze-strategy@2")
	r = runArgs(t, "models", "ls", "maze-strategy", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "maze-strategy@1  onnx    maze")
	assert.Contains(t, r.stdout, "success_rate=0.75")

	r = runArgs(t, "models", "show", "maze-strategy@1", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "learning curve (2 episodes)")
	assert.Contains(t, r.stdout, "100%")

	out := filepath.Join(t.TempDir(), "got.onnx")
	r = runArgs(t, "models", "pull", "maze-strategy@latest", "--dir", dir, "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "graph bytes", string(got))

	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"models", "show", "maze-strategy@9", "--dir", dir}, 1, `model "maze-strategy" has no version 9`},
		{[]string{"models", "show", "nope", "--dir", dir}, 1, `no model named "nope"`},
		{[]string{"models", "show", "maze@x", "--dir", dir}, 2, `invalid ref "maze@x"`},
		{[]string{"models", "push", "a/b", file, "--dir", dir}, 2, `invalid name "a/b"`},
		{[]string{"models"}, 2, "models needs a command"},
		{[]string{"models", "ls", "--dir", dir, "--server", "grpc://127.0.0.1:1"}, 2, "--dir and --server are exclusive"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:min(3, len(tt.args))], " "), func(t *testing.T) {
			r := runArgs(t, tt.args...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
		})
	}

	// A corrupt version is refused by its checksum.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "maze-strategy", "v000002", "model"), []byte("graph bytez"), 0o644))
	r = runArgs(t, "models", "pull", "maze-strategy", "--dir", dir, "-o", "-")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "maze-strategy@2 is corrupt")
}

func TestModelsServer(t *testing.T) {
	d, err := models.OpenDir(t.TempDir())
	require.NoError(t, err)
	s, err := remote.NewServer()
	require.NoError(t, err)
	require.NoError(t, s.AddModels(models.NewRegistry(d)))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	target := "grpc://" + lis.Addr().String()
	file := filepath.Join(t.TempDir(), "m.bin")
	require.NoError(t, os.WriteFile(file, []byte("bytes"), 0o644))
	r := runArgs(t, "models", "push", "m", file, "--server", target)
	require.Equal(t, 0, r.code, r.stderr)
	r = runArgs(t, "models", "show", "m", "--server", target, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"version": 1`)
	r = runArgs(t, "models", "pull", "m@2", "--server", target)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "NotFound")
}
