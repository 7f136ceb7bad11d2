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
	"github.com/batonrl/baton/spaces"
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

func TestRunModelPolicy(t *testing.T) {
	graph, err := os.ReadFile("../models/onnx/testdata/maze-strategy.onnx")
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "s.onnx")
	require.NoError(t, os.WriteFile(file, graph, 0o644))
	// A model without spaces cannot be checked against the agent's.
	r := runArgs(t, "models", "push", "bare", file, "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	r = runArgs(t, "run", "maze", "--trials", "2", "--policy", "strategy=model:bare", "--models", dir)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "model bare@1 has observation space (none recorded)")

	// With the strategy's spaces recorded.
	o, err := shipped(t).open("maze", nil, 0)
	require.NoError(t, err)
	obs, err := spaces.Marshal(o.agents[0].ObservationSpace)
	require.NoError(t, err)
	act, err := spaces.Marshal(o.agents[0].ActionSpace)
	require.NoError(t, err)
	meta := filepath.Join(t.TempDir(), "meta.json")
	require.NoError(t, os.WriteFile(meta, []byte(`{"observation_space": `+string(obs)+`, "action_space": `+string(act)+`}`), 0o644))
	r = runArgs(t, "models", "push", "maze-strategy", file, "--dir", dir, "--meta", meta)
	require.Equal(t, 0, r.code, r.stderr)

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "strategy=model:" + file}, `"strategy":"model:` + file},
		{[]string{"--policy", "strategy=model:maze-strategy@1", "--models", dir}, `"strategy":"model:maze-strategy@1"`},
		{[]string{"--policy", "strategy=model:maze-strategy", "--models", dir, "--follow-models"}, `"strategy":"model:maze-strategy@latest"`},
	}
	for _, tt := range tests {
		r := runArgs(t, append([]string{"run", "maze", "--trials", "2", "--json"}, tt.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, tt.want)
	}
	r = runArgs(t, "run", "maze", "--policy", "motion=model:"+file)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `the graph takes 106 observation values and gives 4 logits; agent "motion" has 104 and 2 actions`)
}
