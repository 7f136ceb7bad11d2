package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// TestServeEnvBounds: serve env's flags reach the server: a site file is a name in
// --config-dir, a limit is raised by --env-limit, and a session over
// --max-session-bytes is refused naming the flag.
func TestServeEnvBounds(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shop.json"), webtest.ShopJSON(), 0o600))
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- runWith(ctx, shipped(t), []string{"serve", "env", "--addr", "127.0.0.1:0", "--quiet",
			"--config-dir", dir, "--env-limit", "maze-flat.side=101", "--max-session-bytes", "1000000"}, pw, &stderr)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, stderr.String())
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, line)
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	c, err := remote.DialEnv(t.Context(), m[1])
	require.NoError(t, err)
	defer c.Close()
	call, stop := context.WithTimeout(t.Context(), 5*time.Second)
	defer stop()
	e, err := c.Make(call, "webtest", []byte(`{"site_file": "shop.json"}`), 0)
	require.NoError(t, err)
	require.NoError(t, e.Close(call))
	_, err = c.Make(call, "webtest", []byte(`{"site_file": "/dev/zero"}`), 0)
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	big := []byte(`{"generate": {"rows": 101, "cols": 101}}`)
	b, err := c.MakeBatch(call, "maze-flat", big, 2, 1)
	require.NoError(t, err, "--env-limit raised the side")
	require.NoError(t, b.Close(call))
	_, err = c.MakeBatch(call, "maze-flat", big, 10, 1)
	assert.Equal(t, codes.ResourceExhausted, grpcstatus.Code(err))
	assert.Contains(t, grpcstatus.Convert(err).Message(), fmt.Sprintf("exceeds the session budget of %s (--max-session-bytes)", "977 KiB"))
	cancel()
	assert.Equal(t, 0, <-code, stderr.String())
}

// TestServeHelpLimits: the help of the servers of configurations lists the limits.
func TestServeHelpLimits(t *testing.T) {
	for _, what := range []string{"env", "trials", "ui"} {
		r := runArgs(t, "serve", what, "--help")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Limits on callers' configurations (--env-limit ENV.LIMIT=N")
		assert.Regexp(t, `maze-flat\.side +41  rows or columns of a map`, r.stdout)
		assert.Regexp(t, `webtest\.pages +1000  pages of a site`, r.stdout)
		assert.Contains(t, r.stdout, "--config-dir DIR")
	}
}
