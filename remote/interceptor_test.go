package remote_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const (
	mazeKey  = "maze-key-0123456789"
	otherKey = "other-key-0123456789"
	// blob is a binary metadata value: "x-blob-bin", base64 over HTTP.
	blob = "\x00\xffblob"
)

// seenCall is what the recording interceptor saw of a call.
type seenCall struct {
	method string
	auth   string // the authorization metadata
	trace  string // the x-trace metadata
	blob   string // the x-blob-bin metadata, decoded
	code   codes.Code
	sent   int // messages sent, for streams
}

// callRecorder is an interceptor, unary and stream, that records the calls it sees.
type callRecorder struct {
	mu    sync.Mutex
	calls []seenCall
}

func (r *callRecorder) see(ctx context.Context, method string, sent int, err error) {
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, seenCall{method: method, auth: first("authorization"), trace: first("x-trace"), blob: first("x-blob-bin"), code: status.Code(err), sent: sent})
}

// take returns the calls seen since the last take.
func (r *callRecorder) take() []seenCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *callRecorder) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	r.see(ctx, info.FullMethod, 0, err)
	return resp, err
}

func (r *callRecorder) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	cs := &countingSends{ServerStream: ss}
	err := h(srv, cs)
	r.see(ss.Context(), info.FullMethod, cs.sent, err)
	return err
}

type countingSends struct {
	grpc.ServerStream
	sent int
}

func (c *countingSends) SendMsg(m any) error {
	err := c.ServerStream.SendMsg(m)
	if err == nil {
		c.sent++
	}
	return err
}

// errRefused is what the refusing interceptor answers a call with "x-deny".
var errRefused = status.Error(codes.PermissionDenied, "refused by policy")

// denied reports whether a call asks to be refused ("x-deny"); it panics for one
// that asks for a panic ("x-panic").
func denied(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(md.Get("x-panic")) > 0 {
		panic("interceptor asked to")
	}
	return len(md.Get("x-deny")) > 0
}

func refuseUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if denied(ctx) {
		return nil, errRefused
	}
	return h(ctx, req)
}

func refuseStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if denied(ss.Context()) {
		return errRefused
	}
	return h(srv, ss)
}

// path calls a method one way: gRPC, or a form of the gateway.
type path struct {
	name   string
	unary  string // the gateway's content type of unary calls; "" for gRPC
	stream string // and of streams
}

var paths = []path{
	{name: "gRPC"},
	{"Connect JSON", "application/json", "application/connect+json"},
	{"Connect binary", "application/proto", "application/connect+proto"},
	{"gRPC-Web", "application/grpc-web+proto", "application/grpc-web+proto"},
}

// outcome is what a caller got: the status and how many messages.
type outcome struct {
	code codes.Code
	msg  string
	msgs int
}

// caller calls the server of the test on every path.
type caller struct {
	t   *testing.T
	srv *server
	cc  *grpc.ClientConn
}

// call calls method ("EnvService/Spec" or "TrialService/Watch", which streams) with
// req on p, presenting key ("" for none) and the headers given (name, value).
func (c *caller) call(p path, method string, req proto.Message, key string, headers ...string) outcome {
	c.t.Helper()
	streaming := strings.HasSuffix(method, "/Watch")
	if p.unary == "" {
		kv := append([]string(nil), headers...)
		if key != "" {
			kv = append(kv, "authorization", "Bearer "+key)
		}
		ctx := metadata.AppendToOutgoingContext(c.t.Context(), kv...)
		if !streaming {
			resp := new(pb.EnvSpec)
			err := c.cc.Invoke(ctx, "/baton.v1."+method, req, resp)
			st := status.Convert(err)
			n := 0
			if err == nil {
				n = 1
			}
			return outcome{st.Code(), st.Message(), n}
		}
		ws, err := pb.NewTrialServiceClient(c.cc).Watch(ctx, req.(*pb.WatchRequest))
		require.NoError(c.t, err)
		n := 0
		for {
			_, err = ws.Recv()
			if err != nil {
				break
			}
			n++
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		st := status.Convert(err)
		return outcome{st.Code(), st.Message(), n}
	}
	ct := p.unary
	if streaming {
		ct = p.stream
	}
	wc := newWireClient(c.t, c.srv, ct)
	if key != "" {
		wc.headers["Authorization"] = "Bearer " + key
	}
	for i := 0; i+1 < len(headers); i += 2 {
		k, v := headers[i], headers[i+1]
		if strings.HasSuffix(k, "-bin") {
			v = base64.StdEncoding.EncodeToString([]byte(v))
		}
		wc.headers[k] = v
	}
	a := wc.call(method, req)
	return outcome{a.st.Code(), a.st.Message(), len(a.msgs)}
}

// serveIntercepted serves environments and trials with keys of maze and of another
// environment, and the interceptors: the refusing ones, then the callRecorder's.
func serveIntercepted(t *testing.T) (*caller, *callRecorder) {
	t.Helper()
	keys, err := remote.NewKeys(map[string]string{"maze": mazeKey, "other": otherKey})
	require.NoError(t, err)
	rec := &callRecorder{}
	srv := serveEnvsAndTrials(t, remote.WithKeys(keys),
		remote.WithUnaryInterceptors(refuseUnary, rec.unary),
		remote.WithStreamInterceptors(refuseStream, rec.stream))
	cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	c := &caller{t: t, srv: srv, cc: cc}
	// A trial to watch, run to its end.
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+mazeKey)
	_, err = pb.NewTrialServiceClient(cc).Start(ctx, &pb.StartRequest{Spec: &pb.TrialSpec{Id: "w", Env: "maze", Seed: 1, MaxTicks: 20}})
	require.NoError(t, err)
	ws, err := pb.NewTrialServiceClient(cc).Watch(ctx, &pb.WatchRequest{Ids: []string{"w"}})
	require.NoError(t, err)
	for err == nil {
		_, err = ws.Recv()
	}
	require.ErrorIs(t, err, io.EOF)
	rec.take()
	return c, rec
}

// TestInterceptorsSeeEveryPath: the interceptors of WithUnaryInterceptors and
// WithStreamInterceptors see the calls of gRPC, Connect JSON, Connect binary and
// gRPC-Web callers alike, a unary method and a streaming one, succeeding and
// failing: the method, the key's and the caller's metadata, the status the caller
// gets, and for streams the messages it gets.
func TestInterceptorsSeeEveryPath(t *testing.T) {
	c, rec := serveIntercepted(t)
	calls := []struct {
		name   string
		method string
		req    proto.Message
	}{
		{"unary", "EnvService/Spec", &pb.EnvSpecRequest{Env: "maze"}},
		{"unary failing", "EnvService/Spec", &pb.EnvSpecRequest{Env: "maze", Config: `{"nope": 1}`}},
		{"stream", "TrialService/Watch", &pb.WatchRequest{Ids: []string{"w"}}},
		{"stream failing", "TrialService/Watch", &pb.WatchRequest{Ids: []string{"w", "nope"}}},
	}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			var first *outcome
			for _, p := range paths {
				got := c.call(p, call.method, call.req, mazeKey, "x-trace", p.name, "x-blob-bin", blob)
				seen := rec.take()
				require.Len(t, seen, 1, "%s: the calls the interceptor saw", p.name)
				s := seen[0]
				assert.Equal(t, "/baton.v1."+call.method, s.method, p.name)
				assert.Equal(t, "Bearer "+mazeKey, s.auth, p.name)
				assert.Equal(t, p.name, s.trace, p.name)
				assert.Equal(t, blob, s.blob, p.name)
				assert.Equal(t, got.code, s.code, "%s: the status the interceptor saw: %s", p.name, got.msg)
				if strings.HasSuffix(call.method, "/Watch") {
					assert.Equal(t, got.msgs, s.sent, "%s: the messages sent", p.name)
				}
				if first == nil {
					first = &got
					continue
				}
				assert.Equal(t, *first, got, "%s: the same answer as %s", p.name, paths[0].name)
			}
			if call.name == "unary" || call.name == "stream" {
				assert.Equal(t, codes.OK, first.code, first.msg)
				assert.Positive(t, first.msgs)
			} else {
				assert.NotEqual(t, codes.OK, first.code)
			}
		})
	}
}

// TestInterceptorsAfterKeys: a call without a good key is refused before any
// interceptor sees it, and so is a unary call outside its key's scope (a stream's
// request is checked as the handler reads it, within the interceptors); a call an
// interceptor refuses is refused with its status on every path, and the
// interceptors after it never see it; a panic in one is INTERNAL on every path.
func TestInterceptorsAfterKeys(t *testing.T) {
	c, rec := serveIntercepted(t)
	spec := &pb.EnvSpecRequest{Env: "maze"}
	watch := &pb.WatchRequest{Ids: []string{"w"}}
	for _, tt := range []struct {
		name    string
		method  string
		req     proto.Message
		key     string
		headers []string
		code    codes.Code
		msg     string
		seen    bool
	}{
		{"unary, no key", "EnvService/Spec", spec, "", nil, codes.Unauthenticated, "missing API key", false},
		{"stream, no key", "TrialService/Watch", watch, "", nil, codes.Unauthenticated, "missing API key", false},
		{"unary, unknown key", "EnvService/Spec", spec, "unknown-key-0123456789", nil, codes.Unauthenticated, "invalid API key", false},
		{"stream, unknown key", "TrialService/Watch", watch, "unknown-key-0123456789", nil, codes.Unauthenticated, "invalid API key", false},
		{"unary, another environment's key", "EnvService/Spec", spec, otherKey, nil, codes.PermissionDenied, "maze", false},
		{"stream, another environment's key", "TrialService/Watch", watch, otherKey, nil, codes.PermissionDenied, "", true},
		{"unary, refused", "EnvService/Spec", spec, mazeKey, []string{"x-deny", "1"}, codes.PermissionDenied, "refused by policy", false},
		{"stream, refused", "TrialService/Watch", watch, mazeKey, []string{"x-deny", "1"}, codes.PermissionDenied, "refused by policy", false},
		{"unary, interceptor panics", "EnvService/Spec", spec, mazeKey, []string{"x-panic", "1"}, codes.Internal, "panic: interceptor asked to", false},
		{"stream, interceptor panics", "TrialService/Watch", watch, mazeKey, []string{"x-panic", "1"}, codes.Internal, "panic: interceptor asked to", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var first *outcome
			for _, p := range paths {
				got := c.call(p, tt.method, tt.req, tt.key, tt.headers...)
				assert.Equal(t, tt.code, got.code, "%s: %s", p.name, got.msg)
				assert.Contains(t, got.msg, tt.msg, p.name)
				assert.Zero(t, got.msgs, p.name)
				seen := rec.take()
				if tt.seen {
					require.Len(t, seen, 1, p.name)
					assert.Equal(t, tt.code, seen[0].code, p.name)
				} else {
					assert.Empty(t, seen, "%s: the interceptor saw the call", p.name)
				}
				if first == nil {
					first = &got
					continue
				}
				assert.Equal(t, *first, got, "%s: the same answer as %s", p.name, paths[0].name)
			}
		})
	}
}

// TestInterceptorsNil: a nil interceptor is an error of NewServer.
func TestInterceptorsNil(t *testing.T) {
	for _, opt := range []remote.ServerOption{remote.WithUnaryInterceptors(nil), remote.WithStreamInterceptors(nil)} {
		_, err := remote.NewServer(opt)
		require.ErrorIs(t, err, remote.ErrConfig)
		assert.Contains(t, err.Error(), "interceptor 0 is nil")
	}
}

// TestGRPCServerOptionsInterceptorsGRPCOnly: interceptors given as grpc-go's own
// options see gRPC's calls alone, after those of WithUnaryInterceptors; the
// gateway's calls reach the latter only.
func TestGRPCServerOptionsInterceptorsGRPCOnly(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return h(ctx, req)
		}
	}
	srv := serveEnvsAndTrials(t, remote.WithUnaryInterceptors(note("baton option")),
		remote.WithGRPCServerOptions(grpc.ChainUnaryInterceptor(note("grpc-go option"))))
	cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	c := &caller{t: t, srv: srv, cc: cc}
	for _, tt := range []struct {
		path path
		want []string
	}{
		{paths[0], []string{"baton option", "grpc-go option"}},
		{paths[1], []string{"baton option"}},
		{paths[3], []string{"baton option"}},
	} {
		got := c.call(tt.path, "EnvService/Spec", &pb.EnvSpecRequest{Env: "maze"}, "")
		require.Equal(t, codes.OK, got.code, got.msg)
		mu.Lock()
		assert.Equal(t, tt.want, order, tt.path.name)
		order = nil
		mu.Unlock()
	}
}
