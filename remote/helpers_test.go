package remote_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
)

// TestMain checks that no test leaves a goroutine behind: servers, clients, streams
// and trials all start some.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// registry returns a registry of the maze.
func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	return reg
}

// mazeSpecs returns the specs of the maze's agents, by name.
func mazeSpecs(t testing.TB) map[string]env.Spec {
	t.Helper()
	rt, err := newRuntime()
	require.NoError(t, err)
	out := map[string]env.Spec{}
	for _, s := range rt.Agents() {
		out[s.Name] = s
	}
	return out
}

// newRuntime returns the maze with its defaults, as the registry builds it.
func newRuntime() (env.MultiAgent, error) {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		return nil, err
	}
	entry, err := reg.Lookup("maze")
	if err != nil {
		return nil, err
	}
	f, err := entry.Open(nil)
	if err != nil {
		return nil, err
	}
	return f.NewEnv(registry.EnvOptions{})
}

// oracleAgent is the maze's strategy agent played by the oracle, as served.
func oracleAgent(t testing.TB) remote.Agent {
	t.Helper()
	a, err := remote.RegisteredAgent(testRegistry(t), "maze", nil, maze.StrategyName, "oracle", 1)
	require.NoError(t, err)
	return a
}

// server is a server serving in the background.
type server struct {
	target string
	opts   []remote.DialOption                                   // to dial it (bufconn's dialer)
	dial   func(ctx context.Context, _ string) (net.Conn, error) // bufconn's dialer; nil over TCP
	stop   func() error                                          // cancels Serve's context and waits for it to return
}

// start serves s on a real TCP port of 127.0.0.1 (tcp) or in memory (bufconn).
func start(t testing.TB, s *remote.Server, tcp bool) *server {
	t.Helper()
	var lis net.Listener
	var out server
	if tcp {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lis, out.target = l, l.Addr().String()
	} else {
		bl := bufconn.Listen(1 << 20)
		lis, out.target = bl, "passthrough:///bufnet"
		out.dial = func(ctx context.Context, _ string) (net.Conn, error) { return bl.DialContext(ctx) }
		out.opts = []remote.DialOption{remote.WithGRPCDialOptions(grpc.WithContextDialer(out.dial))}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	var once sync.Once
	var serveErr error
	out.stop = func() error {
		once.Do(func() {
			cancel()
			serveErr = <-done
		})
		return serveErr
	}
	t.Cleanup(func() { _ = out.stop() })
	return &out
}

// newServer returns a server with the options, failing the test on error.
func newServer(t testing.TB, opts ...remote.ServerOption) *remote.Server {
	t.Helper()
	s, err := remote.NewServer(opts...)
	require.NoError(t, err)
	return s
}

// serveAgents starts a server of agents.
func serveAgents(t testing.TB, tcp bool, agents []remote.Agent, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddAgents(agents...))
	return start(t, s, tcp)
}

// dialAgent dials a served agent, closing the client at the end of the test.
func dialAgent(t testing.TB, srv *server, opts ...remote.DialOption) *remote.AgentClient {
	t.Helper()
	c, err := remote.DialAgent(t.Context(), srv.target, append(append([]remote.DialOption{}, srv.opts...), opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// gate is a policy that blocks until released or its context ends, for stalls.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 64), release: make(chan struct{})} }

func (g *gate) Act(ctx context.Context, _ []float32, _ []bool) (agent.RawAction, error) {
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return agent.Discrete(0), nil
	case <-ctx.Done():
		return agent.RawAction{}, ctx.Err()
	}
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
