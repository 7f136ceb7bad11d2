package remote_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// rawCodec sends and receives messages as the bytes given, so that a test sends
// what no protobuf encoder writes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// rawConn dials target in plaintext.
func rawConn(t *testing.T, target string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(target, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// TestGRPCKeyBeforeMessage sends bytes that are no protobuf message, and a message
// above the size limit, to a server with keys: without a key the call is refused
// UNAUTHENTICATED on its headers, before its message is read or decoded; with one,
// a message that does not decode is INVALID_ARGUMENT, on the hand-written codec's
// methods (Act, ActBatch, ActStream) as on the others.
func TestGRPCKeyBeforeMessage(t *testing.T) {
	const key = "strategy-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{maze.StrategyName: key})
	require.NoError(t, err)
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, remote.WithKeys(keys), remote.WithMaxMessageSize(1<<10))
	cc := rawConn(t, srv.target)
	malformed := []byte{0xff}
	large := make([]byte, 4<<10)
	withKey := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+key)

	for _, tt := range []struct {
		name    string
		ctx     context.Context
		method  string
		req     []byte
		code    codes.Code
		message string
	}{
		{"no key, malformed, hand-written codec", t.Context(), "Act", malformed, codes.Unauthenticated, "missing API key"},
		{"no key, malformed", t.Context(), "Spec", malformed, codes.Unauthenticated, "missing API key"},
		{"no key, above the size limit", t.Context(), "Act", large, codes.Unauthenticated, "missing API key"},
		{"wrong key, above the size limit", metadata.AppendToOutgoingContext(t.Context(), "x-baton-key", "not-the-key-0123456789"), "ActBatch", large, codes.Unauthenticated, "invalid API key"},
		{"key, malformed, Act", withKey, "Act", malformed, codes.InvalidArgument, "malformed request: invalid wire-format data: unexpected EOF"},
		{"key, malformed, ActBatch", withKey, "ActBatch", malformed, codes.InvalidArgument, "malformed request: invalid wire-format data: unexpected EOF"},
		{"key, malformed, Spec", withKey, "Spec", malformed, codes.InvalidArgument, "cannot parse invalid wire-format data"},
		{"key, invalid UTF-8 in a string", withKey, "Act", []byte{0x0a, 0x01, 0xff}, codes.InvalidArgument, "malformed request: string field contains invalid UTF-8"},
		{"key, above the size limit", withKey, "Act", large, codes.ResourceExhausted, "larger than max"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out []byte
			err := cc.Invoke(tt.ctx, "/baton.v1.AgentService/"+tt.method, &tt.req, &out, grpc.ForceCodecV2(rawCodec{}))
			assert.Equal(t, tt.code, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), tt.message)
		})
	}

	t.Run("key, malformed, ActStream", func(t *testing.T) {
		st, err := cc.NewStream(withKey, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, "/baton.v1.AgentService/ActStream", grpc.ForceCodecV2(rawCodec{}))
		require.NoError(t, err)
		require.NoError(t, st.SendMsg(&malformed))
		var out []byte
		err = st.RecvMsg(&out)
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		assert.Contains(t, status.Convert(err).Message(), "malformed request: ")
	})
}

// httpExchange writes req on a new connection to target and reads the answer; the
// connection is returned open, with a read deadline of guard.
func httpExchange(t *testing.T, target, req string) (*http.Response, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", target)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(guard)))
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "the server answers")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b), c, br
}

// closedByServer reads c until the server closes it; a read that reaches the
// connection's deadline fails the test.
func closedByServer(t *testing.T, br io.Reader) {
	t.Helper()
	_, err := io.Copy(io.Discard, br)
	if errors.Is(err, syscall.ECONNRESET) {
		err = nil
	}
	require.NoError(t, err, "the server closes the connection")
}

// post is an HTTP/1.1 request of the JSON gateway, with its headers given and
// body; length is its Content-Length (the body may be shorter: the rest never
// comes).
func post(method string, length int, body string, headers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST /baton.v1.%s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, length)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	return b.String() + "\r\n" + body
}

// TestJSONKeyBeforeBody checks the order of the gateway's checks: the key on the
// headers before any of the body is read (a body that never comes is refused
// 401), a declared length above the method's limit before the body is read (413),
// then the body, malformed JSON being 400.
func TestJSONKeyBeforeBody(t *testing.T) {
	const key = "maze-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"maze": key})
	require.NoError(t, err)
	srv := serveEnvs(t, true, remote.WithKeys(keys), remote.WithMaxMessageSize(1<<20))
	auth := "Authorization: Bearer " + key

	for _, tt := range []struct {
		name, req string
		status    int
		answer    string
		refused   bool // the body is not read: the connection is closed
	}{
		{"no key, a body that never comes", post("EnvService/Make", 16<<20, "{"), 401, `"code":"unauthenticated","message":"missing API key`, true},
		{"wrong key, a body that never comes", post("EnvService/Make", 16<<20, "{", "X-Baton-Key: not-the-key-0123456789"), 401, `invalid API key`, true},
		{"no key, malformed JSON", post("EnvService/Make", 1, "{"), 401, `missing API key`, true},
		{"no key, another content type", strings.Replace(post("EnvService/Make", 1, "{"), "application/json", "text/plain", 1), 401, `missing API key`, true},
		{"key, malformed JSON", post("EnvService/Make", 1, "{", auth), 400, `"code":"invalid_argument","message":"request JSON`, false},
		{"key, too large for the method, never read", post("EnvService/Make", 100<<20, "{", auth), 413,
			`"code":"resource_exhausted","message":"request body: 104857600 bytes, more than the 1048581 bytes that /baton.v1.EnvService/Make takes (the server's maximum message size is 1048576 bytes)"`, true},
		{"key, too large for a small method", post("EnvService/Reset", 100<<10, "{", auth), 413,
			`"request body: 102400 bytes, more than the 65536 bytes that /baton.v1.EnvService/Reset takes (its requests hold names, ids and numbers only)"`, true},
		{"key, too large, no length", "POST /baton.v1.EnvService/Envs HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n" + auth + "\r\n\r\n" +
			"11000\r\n" + strings.Repeat(" ", 0x11000) + "\r\n0\r\n\r\n", 413, `"request body: more than the 65536 bytes that /baton.v1.EnvService/Envs takes (its requests hold names, ids and numbers only)"`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body, _, br := httpExchange(t, srv.target, tt.req)
			assert.Equal(t, tt.status, resp.StatusCode, body)
			assert.Contains(t, body, tt.answer)
			assert.Equal(t, tt.refused, resp.Close, "a request whose body is not read closes its connection")
			if tt.refused {
				closedByServer(t, br)
			}
		})
	}

	t.Run("key, the same body below the limit", func(t *testing.T) {
		resp, body, _, _ := httpExchange(t, srv.target, post("EnvService/Envs", 2, "{}", auth))
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.False(t, resp.Close)
	})
}

// TestConnectionTimeouts serves with short timeouts and checks that the server
// closes what holds a connection without a call: an idle HTTP/1.1 keep-alive
// connection, a request body that trickles (408), headers that never end, a
// connection that sends nothing, and a gRPC connection with no stream (GOAWAY).
func TestConnectionTimeouts(t *testing.T) {
	const short = 50 * time.Millisecond
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)},
		remote.WithIdleTimeout(short), remote.WithReadTimeout(short), remote.WithHeaderTimeout(short))

	t.Run("idle keep-alive", func(t *testing.T) {
		resp, body, _, br := httpExchange(t, srv.target, post("AgentService/Agents", 2, "{}"))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		require.False(t, resp.Close, "the connection is kept alive")
		closedByServer(t, br)
	})
	t.Run("trickling body", func(t *testing.T) {
		resp, body, _, br := httpExchange(t, srv.target, post("AgentService/Spec", 100, `{"agent": `))
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, body)
		assert.Contains(t, body, `"code":"deadline_exceeded","message":"request body: not received within the read timeout (50ms); 10 bytes came"`)
		closedByServer(t, br)
	})
	for name, first := range map[string]string{
		"headers that never end": "POST /baton.v1.AgentService/Agents HTTP/1.1\r\nHost: te",
		"nothing":                "",
		"part of the preface":    "PRI * HTTP/2.0\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.target)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(guard)))
			_, err = io.WriteString(c, first)
			require.NoError(t, err)
			closedByServer(t, c)
		})
	}
	t.Run("gRPC connection with no stream", func(t *testing.T) {
		cc := rawConn(t, srv.target)
		api := pb.NewAgentServiceClient(cc)
		_, err := api.Agents(t.Context(), &pb.AgentsRequest{})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), guard)
		defer cancel()
		for s := cc.GetState(); s == connectivity.Ready; s = cc.GetState() {
			require.True(t, cc.WaitForStateChange(ctx, s), "the server closes the idle connection")
		}
		_, err = api.Agents(t.Context(), &pb.AgentsRequest{})
		require.NoError(t, err, "the client dials again")
	})
}

// TestTimeoutOptions refuses negative timeouts, naming each.
func TestTimeoutOptions(t *testing.T) {
	_, err := remote.NewServer(remote.WithHeaderTimeout(-1), remote.WithReadTimeout(-time.Second), remote.WithIdleTimeout(-time.Minute))
	require.ErrorIs(t, err, remote.ErrConfig)
	assert.Contains(t, err.Error(), "WithHeaderTimeout(-1ns): want 0 (the default, 10s) or more")
	assert.Contains(t, err.Error(), "WithReadTimeout(-1s): want 0 (the default, 30s) or more")
	assert.Contains(t, err.Error(), "WithIdleTimeout(-1m0s): want 0 (the default, 30s) or more")
	_, err = remote.NewServer(remote.WithHeaderTimeout(0), remote.WithReadTimeout(0), remote.WithIdleTimeout(0))
	require.NoError(t, err)
}

// TestJSONDeclaredLengthCostsNothing sends requests that declare bodies of 64 MiB
// and send 1 byte: the server answers them 408 once the read timeout has passed,
// having allocated far less than what they declared.
func TestJSONDeclaredLengthCostsNothing(t *testing.T) {
	const declared, n = 64 << 20, 8
	srv := serveEnvs(t, true, remote.WithMaxMessageSize(declared), remote.WithReadTimeout(50*time.Millisecond))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		resp, body, _, _ := httpExchange(t, srv.target, post("EnvService/Make", declared, "{"))
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, body)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(declared), "allocated for %d requests that declared %d MiB each", n, declared>>20)
}
