package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Server is a gRPC server of baton's services: agents (AddAgents), environments
// (AddEnvs) and trials (AddTrials), any of them together, with gRPC health checking
// and server reflection, the API keys, TLS and message size limit of its options,
// and graceful shutdown when Serve's context is done. Build it with NewServer, add
// services, then Serve once. A Server is safe for concurrent use.
type Server struct {
	cfg    serverConfig
	gs     *grpc.Server
	health *health.Server
	// draining is closed when the shutdown begins: streams that wait for their next
	// request end then.
	draining chan struct{}
	// codec decodes the agent's requests; ActBatch gives their arrays back to it.
	codec actCodec
	// unary and stream are the interceptors of every call, on gRPC and the HTTP
	// gateway alike: baton's, then those of WithUnaryInterceptors and
	// WithStreamInterceptors.
	unary  grpc.UnaryServerInterceptor
	stream grpc.StreamServerInterceptor

	mu       sync.Mutex
	scopes   map[string]scoper   // by service name, "baton.v1.AgentService"
	served   map[string][]string // the names a service serves, where it lists them
	services []string
	closers  []func(ctx context.Context) error
	serving  bool
	methods  map[string]httpMethod // by full method name, for the HTTP gateway
}

// NewServer returns a server with the options; errors wrap ErrConfig.
func NewServer(opts ...ServerOption) (*Server, error) {
	cfg, err := newServerConfig(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, scopes: map[string]scoper{}, health: health.NewServer(), draining: make(chan struct{}), codec: newServerCodec()}
	s.unary = chainUnary(append([]grpc.UnaryServerInterceptor{s.unaryInterceptor}, cfg.unaryInts...))
	s.stream = chainStream(append([]grpc.StreamServerInterceptor{s.streamInterceptor}, cfg.streamInts...))
	gopts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.maxMsg),
		grpc.MaxSendMsgSize(cfg.maxMsg),
		grpc.ChainUnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(s.stream),
		// Clients may ping idle connections every 10 s or more.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// Connections with no stream are closed after the idle timeout; a peer that
		// stops answering pings is dropped.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cfg.idleTimeout, Time: keepaliveTime, Timeout: keepaliveTimeout}),
		// The HTTP/2 handshake (the client's preface and settings) within the header
		// timeout.
		grpc.ConnectionTimeout(cfg.headerTimeout),
		// Keys are checked on the headers, before a message is read.
		grpc.InTapHandle(s.tap),
		// Larger flow-control windows than grpc-go's 64 KiB, so that a batch of
		// observations crosses in one round trip.
		grpc.InitialWindowSize(1 << 20),
		grpc.InitialConnWindowSize(1 << 22),
		// The agent's requests and responses skip protobuf's reflection.
		grpc.ForceServerCodecV2(s.codec),
	}
	// With TLS, Serve's listener does the handshakes (gRPC and HTTP/1.1 share it).
	s.gs = grpc.NewServer(append(gopts, cfg.grpcOpts...)...)
	healthpb.RegisterHealthServer(s.gs, s.health)
	reflection.Register(s.gs)
	return s, nil
}

// The server's pings of a connection: after keepaliveTime without activity, and
// the connection is closed when the answer does not come within keepaliveTimeout.
const (
	keepaliveTime    = time.Minute
	keepaliveTimeout = 20 * time.Second
)

// tap checks a gRPC call's key on its headers, before its message is read (grpc-go
// runs it on the connection's reader): a call without a key the server knows ends
// UNAUTHENTICATED there, and its message is never read; the grant of a key it
// knows goes on in the call's context, to the interceptors.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if s.cfg.keys.Empty() || openMethod(info.FullMethodName) {
		return ctx, nil
	}
	g, err := s.cfg.keys.authenticate(info.Header)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, grantKey{}, g), nil
}

// register records a service before Serve.
func (s *Server) register(desc *grpc.ServiceDesc, impl any, scope scoper, closer func(ctx context.Context) error) error {
	name := desc.ServiceName
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving {
		return fmt.Errorf("%w: services must be added before Serve", ErrConfig)
	}
	if _, dup := s.scopes[name]; dup {
		return fmt.Errorf("%w: %s is added twice", ErrConfig, name)
	}
	desc = s.decodingDesc(desc)
	s.gs.RegisterService(desc, impl)
	s.expose(desc, impl)
	s.scopes[name] = scope
	s.services = append(s.services, name)
	if closer != nil {
		s.closers = append(s.closers, closer)
	}
	return nil
}

// Serve serves on lis until ctx is done, then shuts down gracefully: health checks
// report NOT_SERVING, no new call is taken, running trials are stopped, the calls in
// flight may finish within the grace period (WithGracePeriod), and every connection
// is closed. It returns nil after a shutdown that ctx asked for, or the error that
// stopped serving. lis is closed when Serve returns. Serve may be called once.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	if lis == nil {
		return fmt.Errorf("%w: Serve: nil listener", ErrConfig)
	}
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return fmt.Errorf("%w: Serve called twice", ErrConfig)
	}
	s.serving = true
	services := append([]string(nil), s.services...)
	s.mu.Unlock()
	if len(services) == 0 {
		_ = lis.Close()
		return fmt.Errorf("%w: the server serves nothing (add agents, environments or trials)", ErrConfig)
	}
	for _, name := range services {
		s.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.cfg.logger.Info("remote: serving", "addr", lis.Addr().String(), "services", strings.Join(services, ", "),
		"tls", s.cfg.tls != nil, "keys", !s.cfg.keys.Empty())

	sp := newSplit(lis, s.cfg.tls, s.cfg.headerTimeout, s.cfg.logger)
	hs := &http.Server{Handler: s, ReadHeaderTimeout: s.cfg.headerTimeout, IdleTimeout: s.cfg.idleTimeout,
		ErrorLog: slog.NewLogLogger(s.cfg.logger.Handler(), slog.LevelDebug)}
	splitDone := make(chan struct{})
	go func() {
		sp.run()
		close(splitDone)
	}()
	httpDone := make(chan struct{})
	go func() {
		_ = hs.Serve(sp.http)
		close(httpDone)
	}()
	plainDone := make(chan struct{})
	var plain *grpc.Server
	if sp.plain != nil {
		plain = newPlaintextRefuser(s.cfg.headerTimeout, s.cfg.idleTimeout)
		go func() {
			_ = plain.Serve(sp.plain)
			close(plainDone)
		}()
	} else {
		close(plainDone)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.gs.Serve(sp.grpc) }()
	// finish closes what is left once gRPC has stopped.
	finish := func() {
		_ = lis.Close()
		_ = hs.Close()
		if plain != nil {
			plain.Stop()
		}
		<-splitDone
		<-httpDone
		<-plainDone
	}
	select {
	case err := <-errc:
		s.health.Shutdown()
		s.gs.Stop()
		s.close(ctx)
		finish()
		// The listener's own error, when it stopped serving, rather than the closed
		// halves' that gRPC saw.
		if ferr := sp.failure(); ferr != nil {
			err = ferr
		}
		s.cfg.logger.Error("remote: serving stopped", "addr", lis.Addr().String(), "err", err)
		return err
	case <-ctx.Done():
	}
	s.cfg.logger.Info("remote: shutting down", "addr", lis.Addr().String(), "grace", s.cfg.grace)
	s.health.Shutdown()
	close(s.draining)
	sp.stop()
	stopped := make(chan struct{})
	go func() {
		s.gs.GracefulStop()
		close(stopped)
	}()
	grace := time.NewTimer(s.cfg.grace)
	defer grace.Stop()
	// Stop the trials, so that watchers see their final states and finish.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.grace)
	s.close(gctx)
	_ = hs.Shutdown(gctx)
	cancel()
	select {
	case <-stopped:
	case <-grace.C:
		s.cfg.logger.Warn("remote: calls still in flight after the grace period; closing their connections")
		s.gs.Stop()
		<-stopped
	}
	<-errc
	finish()
	return nil
}

// close runs the services' closers.
func (s *Server) close(ctx context.Context) {
	s.mu.Lock()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for _, c := range closers {
		if err := c(ctx); err != nil {
			s.cfg.logger.Warn("remote: closing a service", "err", err)
		}
	}
}

// ListenAndServe listens on addr (DefaultAddr when "") over TCP and serves until
// ctx is done, as Serve does.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("remote: listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, lis)
}

// scopeOf returns the scoper of the method's service.
func (s *Server) scopeOf(fullMethod string) scoper {
	service, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scopes[service]
}

// setServed records the names a service serves, for the messages of refused keys.
func (s *Server) setServed(service string, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.served == nil {
		s.served = map[string][]string{}
	}
	s.served[service] = names
}

// servedNames returns the names the method's service serves; nil when it does not
// list them.
func (s *Server) servedNames(fullMethod string) []string {
	service, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[service]
}

// chainUnary returns the interceptor that runs ints in order, each one's handler
// the rest of them and then the call's.
func chainUnary(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(ints) == 1 {
		return ints[0]
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return ints[0](ctx, req, info, unaryRest(ints[1:], info, handler))
	}
}

// unaryRest returns the handler that runs ints, then handler.
func unaryRest(ints []grpc.UnaryServerInterceptor, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) grpc.UnaryHandler {
	if len(ints) == 0 {
		return handler
	}
	return func(ctx context.Context, req any) (any, error) {
		return ints[0](ctx, req, info, unaryRest(ints[1:], info, handler))
	}
}

// chainStream is chainUnary for streams.
func chainStream(ints []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	if len(ints) == 1 {
		return ints[0]
	}
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return ints[0](srv, ss, info, streamRest(ints[1:], info, handler))
	}
}

// streamRest returns the handler that runs ints, then handler.
func streamRest(ints []grpc.StreamServerInterceptor, info *grpc.StreamServerInfo, handler grpc.StreamHandler) grpc.StreamHandler {
	if len(ints) == 0 {
		return handler
	}
	return func(srv any, ss grpc.ServerStream) error {
		return ints[0](srv, ss, info, streamRest(ints[1:], info, handler))
	}
}

func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	if openMethod(info.FullMethod) {
		return handler(ctx, req)
	}
	defer func() {
		if v := recover(); v != nil {
			s.cfg.logger.Error("remote: panic in a handler", "method", info.FullMethod, "panic", v, "stack", string(debug.Stack()))
			resp, err = nil, status.Errorf(codes.Internal, "panic: %v", v)
		}
	}()
	ctx, g, err := authenticate(ctx, &s.cfg.keys)
	if err != nil {
		return nil, err
	}
	if !g.open {
		if _, err := s.check(g, s.scopeOf(info.FullMethod), info.FullMethod, req); err != nil {
			return nil, err
		}
	}
	feedback, acted := requestCounts(req)
	start := time.Now()
	resp, err = handler(ctx, req)
	s.recordUnary(info.FullMethod, start, feedback, acted, resp, err)
	if err != nil {
		s.logFailure(info.FullMethod, err)
	}
	return resp, err
}

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	if openMethod(info.FullMethod) {
		return handler(srv, ss)
	}
	defer func() {
		if v := recover(); v != nil {
			s.cfg.logger.Error("remote: panic in a handler", "method", info.FullMethod, "panic", v, "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "panic: %v", v)
		}
	}()
	ctx, g, err := authenticate(ss.Context(), &s.cfg.keys)
	if err != nil {
		return err
	}
	ss = decodingStream{ServerStream: ss, codec: s.codec}
	if s.cfg.metrics != nil && info.FullMethod == "/baton.v1."+methodActStream {
		ss = &meteredStream{ServerStream: ss, srv: s}
	}
	if g.open {
		err = handler(srv, ss)
	} else {
		err = handler(srv, &authedStream{ServerStream: ss, ctx: ctx, srv: s, grant: g, scope: s.scopeOf(info.FullMethod), method: info.FullMethod})
	}
	s.recordStream(info.FullMethod, err)
	if err != nil {
		s.logFailure(info.FullMethod, err)
	}
	return err
}

func (s *Server) logFailure(method string, err error) {
	switch status.Code(err) {
	case codes.Internal, codes.Unknown:
		s.cfg.logger.Warn("remote: call failed", "method", method, "err", err)
	default:
		s.cfg.logger.Debug("remote: call failed", "method", method, "err", err)
	}
}

// statusOf turns an error of a handler into a status error: statuses pass, context
// errors become CANCELED or DEADLINE_EXCEEDED, *FieldError values INVALID_ARGUMENT,
// anything else the code given.
func statusOf(err error, code codes.Code, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if fe, ok := errors.AsType[*FieldError](err); ok {
		return invalid(fe)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Errorf(code, "%s: %v", fmt.Sprintf(format, args...), err)
}
