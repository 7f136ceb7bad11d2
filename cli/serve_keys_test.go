package cli

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunRemoteKeys runs baton run against a baton serve process that serves the
// maze's strategy alone, with keys for strategy and motion, and asks it for agents
// it does not serve or does not grant: each answer names the refusal and what the
// key may use, and says nothing to a key the server does not know.
func TestRunRemoteKeys(t *testing.T) {
	serverKeys := writeFile(t, "server-keys", "strategy=strategy-key-0123456789\nmotion=motion-key-0123456789\n")
	srv := startServe(t, "agent", "--env", "maze", "--agent", "strategy", "--policy", "oracle", "--key-file", serverKeys)
	strategyOnly := writeFile(t, "strategy-only", "strategy=strategy-key-0123456789\nmotion=strategy-key-0123456789\n")
	unknownMotion := writeFile(t, "unknown-motion", "strategy=strategy-key-0123456789\nmotion=not-a-server-key-0123456789\n")
	bothKeys := serverKeys

	for _, tt := range []struct {
		name    string
		policy  string
		keyFile string
		code    int
		want    []string
		notWant string
	}{
		{"motion asked with the strategy's key", "motion=grpc://" + srv.addr, strategyOnly, 1,
			[]string{"agent motion at " + srv.addr + ": AgentService/Spec: PermissionDenied: " + `the API key does not grant agent "motion" (it grants: strategy)`}, ""},
		{"motion asked with motion's key, not served", "motion=grpc://" + srv.addr, bothKeys, 1,
			[]string{`NotFound: no agent "motion" (the API key grants no agent this server serves)`}, ""},
		{"a motion key the server does not know", "motion=grpc://" + srv.addr, unknownMotion, 1,
			[]string{"the server refused the key --key-file " + unknownMotion + " gives for motion", "Unauthenticated: invalid API key"}, "strategy"},
		{"the strategy with its key", "strategy=grpc://" + srv.addr, strategyOnly, 0, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, "run", "maze", "--trials", "2", "--policy", tt.policy, "--key-file", tt.keyFile)
			assert.Equal(t, tt.code, r.code, r.stderr)
			for _, w := range tt.want {
				assert.Contains(t, r.stderr, w)
			}
			if tt.notWant != "" {
				assert.NotContains(t, r.stderr, tt.notWant, "a key the server does not know learns nothing of what it serves")
			}
		})
	}
	assert.Equal(t, 0, srv.stop(t, syscall.SIGTERM), srv.stderr.String())
}

// TestKeyFileMissing: a --key-file (or --actor-key-file) that cannot be read is bad
// input, exit status 2, with one line naming the flag and the file, before anything
// is dialed or served.
func TestKeyFileMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-keys")
	dir := t.TempDir()
	// A port nothing listens on: the run must fail on the key file, not the dial.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	nowhere := "grpc://" + l.Addr().String()
	require.NoError(t, l.Close())
	for _, tt := range []struct {
		name string
		args []string
		flag string
	}{
		{"run, remote agent", []string{"run", "maze", "--policy", "strategy=" + nowhere, "--key-file", missing}, "--key-file"},
		{"run, no remote agent", []string{"run", "maze", "--key-file", missing}, "--key-file"},
		{"run, a folder", []string{"run", "maze", "--policy", "strategy=" + nowhere, "--key-file", dir}, "--key-file"},
		{"serve agent", []string{"serve", "agent", "--env", "maze", "--addr", "127.0.0.1:0", "--key-file", missing}, "--key-file"},
		{"serve env", []string{"serve", "env", "--addr", "127.0.0.1:0", "--key-file", missing}, "--key-file"},
		{"serve trials", []string{"serve", "trials", "--addr", "127.0.0.1:0", "--key-file", missing}, "--key-file"},
		{"serve trials, actor keys", []string{"serve", "trials", "--addr", "127.0.0.1:0", "--allow-remote-actors", "--actor-key-file", missing}, "--actor-key-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, tt.args...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, "baton: "+tt.flag+": ")
			assert.NotContains(t, r.stderr, "serving", "nothing was served")
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		})
	}
}
