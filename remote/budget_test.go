package remote_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// configRegistry registers the maze, the flat maze and the web tester: the
// environments whose configurations name files or sizes.
func configRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	require.NoError(t, maze.RegisterFlat(reg))
	require.NoError(t, webtest.Register(reg))
	return reg
}

// serveConfigs serves configRegistry in memory. At the end of a test that failed,
// it does not wait for the server to stop: a server stuck reading a file that never
// ends would hold the test forever.
func serveConfigs(t *testing.T, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddEnvs(configRegistry(t)))
	bl := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, bl) }()
	t.Cleanup(func() {
		cancel()
		if !t.Failed() {
			<-done
		}
	})
	return &server{target: "passthrough:///bufnet", opts: []remote.DialOption{remote.WithGRPCDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return bl.DialContext(ctx)
	}))}}
}

// mkfifo makes a FIFO at path. At the end of the test, it opens and closes the FIFO
// for writing, so that a reader stuck in its open (what a server that reads the
// files its callers name does) gets to its end.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil { // O_RDWR: no wait for a reader
			_ = f.Close()
		}
	})
}

// siteFile is the configuration of the web tester that names a site file.
func siteFile(name string) []byte {
	return fmt.Appendf(nil, `{"site_file": %q}`, name)
}

// quick is a context whose deadline fails a call that the server does not answer at
// once: a read of /dev/zero or of a FIFO must not hold it.
func quick(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEnvSiteFileRefused: a configuration sent to a server without a configuration
// folder names no file on the server: /dev/zero, a FIFO and a secret are refused at
// once, with the same message as a missing file, which tells nothing of them.
func TestEnvSiteFileRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("root:$6$hash:19000:0:99999:7:::\n"), 0o600))
	c := dialEnv(t, serveConfigs(t))
	var messages []string
	for _, name := range []string{"/dev/zero", fifo, secret, filepath.Join(dir, "missing")} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			_, err := c.Make(quick(t), "webtest", siteFile(name), 0)
			require.ErrorIs(t, err, remote.ErrInvalidArgument)
			msg := status.Convert(err).Message()
			assert.Contains(t, msg, "this server reads no file a configuration names")
			assert.Contains(t, msg, "--config-dir")
			assert.NotContains(t, msg, "root")
			messages = append(messages, strings.ReplaceAll(msg, name, "NAME"))
			_, err = c.Spec(quick(t), "webtest", siteFile(name))
			require.ErrorIs(t, err, remote.ErrInvalidArgument, "Spec opens the configuration too")
		})
	}
	for _, m := range messages {
		assert.Equal(t, messages[0], m, "every name gets the same answer")
	}
}

// TestEnvConfigDir: with WithConfigDir, a site file is a name inside the folder,
// read through an os.Root: a site there opens; /dev/zero, a FIFO, a path or a
// symbolic link out of the folder, and a missing file are refused at once with one
// message that says nothing of what lies outside.
func TestEnvConfigDir(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte(`{"secret": "hunter2"}`), 0o600))
	dir := t.TempDir()
	shop, err := webtest.Shop().MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shop.json"), shop, 0o600))
	mkfifo(t, filepath.Join(dir, "fifo"))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "secret-link")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero-link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	require.NoError(t, os.Symlink("../shop.json", filepath.Join(dir, "sub", "shop-link")))
	rel, err := filepath.Rel(dir, secret)
	require.NoError(t, err)

	c := dialEnv(t, serveConfigs(t, remote.WithConfigDir(dir)))
	for _, name := range []string{"shop.json", "sub/shop-link"} {
		e, err := c.Make(quick(t), "webtest", siteFile(name), 0)
		require.NoError(t, err, name)
		require.NoError(t, e.Close(t.Context()))
	}
	want := `site_file "NAME": no readable regular file of that name in the server's configuration folder (names are relative to it)`
	for _, name := range []string{"fifo", "zero-link", "/dev/zero", "secret-link", rel, secret, "missing", "sub"} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Make(quick(t), "webtest", siteFile(name), 0)
			require.ErrorIs(t, err, remote.ErrInvalidArgument)
			msg := status.Convert(err).Message()
			assert.Contains(t, strings.ReplaceAll(msg, name, "NAME"), want, "the same answer for every name")
			assert.NotContains(t, msg, "hunter2")
		})
	}

	_, err = remote.NewServer(remote.WithConfigDir(filepath.Join(dir, "missing")))
	require.ErrorIs(t, err, remote.ErrConfig)
}

// TestEnvLimits: a configuration over a limit of its environment is refused before
// it is built, with RESOURCE_EXHAUSTED naming the limit and the flag that raises it;
// WithEnvLimits raises it.
func TestEnvLimits(t *testing.T) {
	big := []byte(`{"generate": {"rows": 101, "cols": 101}}`)
	c := dialEnv(t, serveConfigs(t))
	for _, tt := range []struct {
		env    string
		config string
		limit  string
	}{
		{"maze-flat", string(big), "maze-flat.side"},
		{"maze", string(big), "maze.side"},
		{"maze", `{"obs_side": 101}`, "maze.side"},
		{"webtest", `{"generate": {"pages": 100000}}`, "webtest.pages"},
	} {
		t.Run(tt.env+" "+tt.config, func(t *testing.T) {
			_, err := c.Make(quick(t), tt.env, []byte(tt.config), 0)
			require.ErrorIs(t, err, remote.ErrRejected)
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			assert.Contains(t, err.Error(), "the limit "+tt.limit)
			assert.Contains(t, err.Error(), "--env-limit "+tt.limit+"=N")
		})
	}
	_, err := c.MakeBatch(quick(t), "maze-flat", big, 2, 1)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))

	raised := dialEnv(t, serveConfigs(t, remote.WithEnvLimits(map[string]int64{"maze-flat.side": 101})))
	b, err := raised.MakeBatch(quick(t), "maze-flat", big, 2, 1)
	require.NoError(t, err)
	require.NoError(t, b.Close(t.Context()))

	s := newServer(t, remote.WithEnvLimits(map[string]int64{"maze.sides": 101}))
	err = s.AddEnvs(configRegistry(t))
	require.ErrorIs(t, err, remote.ErrConfig)
	require.ErrorIs(t, err, registry.ErrUnknownLimit)
	assert.Contains(t, err.Error(), "maze.side, maze-flat.side, webtest.pages")
}

// TestEnvBudget: a MakeBatch of 4,096 copies of a 101 x 101 flat maze, some 480 MiB,
// is refused before a copy is built, naming the session budget and its flag; a batch
// whose answers would not fit a message is refused naming that limit.
func TestEnvBudget(t *testing.T) {
	big := []byte(`{"generate": {"rows": 101, "cols": 101}}`)
	c := dialEnv(t, serveConfigs(t, remote.WithEnvLimits(map[string]int64{"maze-flat.side": 101})))
	_, err := c.MakeBatch(quick(t), "maze-flat", big, 4096, 1)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	msg := status.Convert(err).Message()
	assert.Contains(t, msg, "MakeBatch: 4096 copies × ")
	assert.Contains(t, msg, "10207 observation floats held 3 times")
	assert.Contains(t, msg, "exceeds the session budget of 256 MiB (--max-session-bytes)")

	_, err = c.MakeBatch(quick(t), "maze-flat", big, 1000, 1)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "more than the message limit of 16 MiB (--max-message-bytes)")

	b, err := c.MakeBatch(quick(t), "maze-flat", big, 100, 1)
	require.NoError(t, err, "100 copies fit both")
	require.NoError(t, b.Reset(quick(t), 1))
	require.NoError(t, b.Close(t.Context()))
}

// TestEnvKeyBudgets: each key has its own share of sessions and bytes: one key that
// holds all it may does not lock the others out, and closing frees its share.
func TestEnvKeyBudgets(t *testing.T) {
	const mazeKey, webKey = "maze-key-0123456789", "webtest-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"maze": mazeKey, "maze-flat": mazeKey, "webtest": webKey})
	require.NoError(t, err)
	srv := serveConfigs(t, remote.WithKeys(keys), remote.WithMaxSessions(2), remote.WithMaxKeyBytes(4<<20))
	mc := dialEnv(t, srv, remote.WithKey(mazeKey))
	wc := dialEnv(t, srv, remote.WithKey(webKey))

	first, err := mc.Make(quick(t), "maze", nil, 0)
	require.NoError(t, err)
	_, err = mc.Make(quick(t), "maze-flat", nil, 0)
	require.NoError(t, err)
	_, err = mc.Make(quick(t), "maze", nil, 0)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "this key has 2 sessions open, the most a key may have (--max-sessions)")
	w, err := wc.Make(quick(t), "webtest", nil, 0)
	require.NoError(t, err, "another key has its own share")
	require.NoError(t, first.Close(t.Context()))
	_, err = mc.Make(quick(t), "maze", nil, 0)
	require.NoError(t, err, "closing gave the share back")

	// Bytes: a generated site of 800 pages takes some 3 MiB; two exceed the key's 4 MiB.
	site := []byte(`{"generate": {"pages": 800, "seed": 1}}`)
	require.NoError(t, w.Close(t.Context()))
	w, err = wc.Make(quick(t), "webtest", site, 0)
	require.NoError(t, err)
	_, err = wc.Make(quick(t), "webtest", site, 0)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "exceeds the key's budget of 4.0 MiB (--max-key-bytes)")
	require.NoError(t, w.Close(t.Context()))
	_, err = wc.Make(quick(t), "webtest", site, 0)
	require.NoError(t, err)
}

// TestTrialsSiteFileRefused: the trials a TrialService's caller starts open their
// configurations as ones from the network too: a site file is refused.
func TestTrialsSiteFileRefused(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- remote.ServeTrials(ctx, lis, configRegistry(t)) }()
	t.Cleanup(func() {
		cancel()
		if !t.Failed() { // else the server may be stuck reading /dev/zero
			<-done
		}
	})
	c, err := remote.DialTrials(t.Context(), lis.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Start(quick(t), runners.Spec{Env: "webtest", Config: siteFile("/dev/zero")})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "this server reads no file a configuration names")
	_, err = c.Start(quick(t), runners.Spec{Env: "webtest", Config: []byte(`{"generate": {"pages": 100000}}`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--env-limit webtest.pages=N")
}
