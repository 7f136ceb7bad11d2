package remote

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/telemetry"
	"google.golang.org/grpc"
)

// Defaults of the options.
const (
	// DefaultAddr is where the servers of `baton serve` listen unless told otherwise:
	// loopback only.
	DefaultAddr = "127.0.0.1:50051"
	// DefaultTimeout bounds every client call (WithTimeout).
	DefaultTimeout = 5 * time.Second
	// DefaultMaxMessageSize bounds every message received, on both ends
	// (WithMaxMessageSize): 16 MiB.
	DefaultMaxMessageSize = 16 << 20
	// DefaultGracePeriod is how long a server's graceful shutdown waits for calls in
	// flight (WithGracePeriod).
	DefaultGracePeriod = 10 * time.Second
	// DefaultSessionIdle is how long an environment session may sit unused before the
	// server closes it (WithSessionIdle).
	DefaultSessionIdle = 10 * time.Minute
	// DefaultMaxSessions bounds the open environment sessions of each key
	// (WithMaxSessions).
	DefaultMaxSessions = 1024
	// DefaultClientIdleTimeout is how long a trial server's trial waits for a client
	// actor's action before it stops (WithClientIdleTimeout).
	DefaultClientIdleTimeout = 10 * time.Minute
)

// Defaults of the connection limits of a server.
const (
	// DefaultHeaderTimeout bounds how long a connection may take to show what it
	// speaks, and an HTTP/1.1 request its headers (WithHeaderTimeout).
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds how long the body of an HTTP/1.1 request may take to
	// arrive (WithReadTimeout).
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a server keeps a connection with no call in
	// flight (WithIdleTimeout).
	DefaultIdleTimeout = 30 * time.Second
)

// ServerOption configures NewServer (and ServeAgent, ServeEnv and ServeTrials).
// Options follow the one style of baton's packages (grpc-go's): an option is a value
// that only this package's With functions make; the constructor applies them in the
// order given and ignores a nil one; an option left out, or given its zero value,
// means the default its With function documents; bad values make the constructor fail
// with an error wrapping the package's sentinel (here ErrConfig) that names each of
// them. An option that configures several constructors has a type that implements the
// option interface of each (Option).
type ServerOption interface{ applyServer(*serverConfig) }

// DialOption configures DialAgent, DialEnv and DialTrials, in the style of
// ServerOption.
type DialOption interface{ applyDial(*dialConfig) }

// Option configures both servers and clients.
type Option interface {
	ServerOption
	DialOption
}

type serverConfig struct {
	keys        Keys
	tls         *tls.Config
	maxMsg      int
	grace       time.Duration
	logger      *slog.Logger
	sessionIdle time.Duration
	maxSessions int

	// The budgets of environment sessions and what their configurations may ask
	// for (the With functions grouped at the end of this file); 0 means the default.
	maxSessionBytes int64
	maxKeyBytes     int64
	envRemote       registry.Remote

	workers     int
	clientIdle  time.Duration // as given: 0 for the default, < 0 for none
	remote      []DialOption
	remoteOK    bool
	remoteKeys  Keys
	grpcOpts    []grpc.ServerOption
	unaryInts   []grpc.UnaryServerInterceptor
	streamInts  []grpc.StreamServerInterceptor
	httpHandler http.Handler
	errs        []error

	// The metrics (WithMetrics) and who may read them (WithMetricsKeys): nil
	// metricsKeys means the server's own keys.
	metrics     *telemetry.Metrics
	metricsKeys *Keys

	// The connection limits (WithHeaderTimeout, WithReadTimeout, WithIdleTimeout).
	headerTimeout time.Duration
	readTimeout   time.Duration
	idleTimeout   time.Duration
}

func newServerConfig(opts []ServerOption) (serverConfig, error) {
	c := serverConfig{maxMsg: DefaultMaxMessageSize, grace: DefaultGracePeriod, sessionIdle: DefaultSessionIdle, maxSessions: DefaultMaxSessions,
		headerTimeout: DefaultHeaderTimeout, readTimeout: DefaultReadTimeout, idleTimeout: DefaultIdleTimeout}
	for _, o := range opts {
		if o != nil {
			o.applyServer(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if len(c.errs) > 0 {
		return c, joinConfig(c.errs)
	}
	return c, nil
}

type dialConfig struct {
	key       string
	hasKey    bool
	tls       *tls.Config
	timeout   time.Duration
	retries   int
	backoff   time.Duration
	maxMsg    int
	unary     bool
	agent     string
	logger    *slog.Logger
	grpcOpts  []grpc.DialOption
	errs      []error
	insecure  bool // set by a grpc:// target
	secureURL bool // set by a grpcs:// target
}

func newDialConfig(opts []DialOption) (dialConfig, error) {
	c := dialConfig{timeout: DefaultTimeout, backoff: 100 * time.Millisecond, maxMsg: DefaultMaxMessageSize}
	for _, o := range opts {
		if o != nil {
			o.applyDial(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if len(c.errs) > 0 {
		return c, joinConfig(c.errs)
	}
	return c, nil
}

func joinConfig(errs []error) error {
	msg := ""
	for i, e := range errs {
		if i > 0 {
			msg += "; "
		}
		msg += e.Error()
	}
	return fmt.Errorf("%w: %s", ErrConfig, msg)
}

type serverOption func(*serverConfig)

func (o serverOption) applyServer(c *serverConfig) { o(c) }

type dialOption func(*dialConfig)

func (o dialOption) applyDial(c *dialConfig) { o(c) }

type bothOption struct {
	server func(*serverConfig)
	dial   func(*dialConfig)
}

func (o bothOption) applyServer(c *serverConfig) { o.server(c) }
func (o bothOption) applyDial(c *dialConfig)     { o.dial(c) }

// WithKeys makes a server check API keys (see Keys): every call but health checks and
// reflection must present a key that grants what it addresses. The zero Keys, the
// default, accepts every call: bind such a server to loopback.
func WithKeys(k Keys) ServerOption {
	return serverOption(func(c *serverConfig) { c.keys = k })
}

// WithKey makes a client present key on every call, as the metadata
// "authorization: Bearer KEY". Without it a client presents none.
func WithKey(key string) DialOption {
	return dialOption(func(c *dialConfig) {
		if key == "" {
			c.errs = append(c.errs, fmt.Errorf("WithKey: empty key"))
		}
		c.key, c.hasKey = key, true
	})
}

// WithTLS serves or dials over TLS. A server's cfg carries its certificate
// (ServerTLS loads one from files); a client's cfg its trusted roots (ClientTLS
// loads a CA file; nil RootCAs means the system's). Without it, a server serves
// plaintext, and a client dials plaintext unless its target starts with grpcs://,
// which uses the system's roots. A nil cfg means no TLS.
func WithTLS(cfg *tls.Config) Option {
	return bothOption{
		server: func(c *serverConfig) { c.tls = cfg },
		dial:   func(c *dialConfig) { c.tls = cfg },
	}
}

// ServerTLS returns the TLS configuration of a server from PEM files of its
// certificate (chain) and private key, with TLS 1.2 at least.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: TLS certificate %s and key %s: %w", ErrConfig, certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ClientTLS returns the TLS configuration of a client that trusts the certificates
// of a PEM file (a CA, or a server's self-signed certificate); "" means the system's
// roots.
func ClientTLS(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%w: TLS CA: %w", ErrConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: TLS CA %s: no PEM certificate in it", ErrConfig, caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}

// WithMaxMessageSize bounds the size of every message received, in bytes: a server
// refuses larger requests with RESOURCE_EXHAUSTED, a client larger responses. 0
// means DefaultMaxMessageSize.
func WithMaxMessageSize(n int) Option {
	set := func(dst *int, errs *[]error) {
		switch {
		case n < 0:
			*errs = append(*errs, fmt.Errorf("WithMaxMessageSize(%d): want 0 (the default) or more", n))
		case n == 0:
			*dst = DefaultMaxMessageSize
		default:
			*dst = n
		}
	}
	return bothOption{
		server: func(c *serverConfig) { set(&c.maxMsg, &c.errs) },
		dial:   func(c *dialConfig) { set(&c.maxMsg, &c.errs) },
	}
}

// WithLogger makes a server or client log to l: a server its start, its shutdown
// and the calls that fail on its side; a client its retries. nil, the default,
// discards.
func WithLogger(l *slog.Logger) Option {
	return bothOption{
		server: func(c *serverConfig) { c.logger = l },
		dial:   func(c *dialConfig) { c.logger = l },
	}
}

// WithGracePeriod bounds a server's graceful shutdown: once Serve's context is done,
// the server takes no new call, waits at most d for the calls in flight (trials are
// stopped), then closes every connection. 0 means DefaultGracePeriod.
func WithGracePeriod(d time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) {
		switch {
		case d < 0:
			c.errs = append(c.errs, fmt.Errorf("WithGracePeriod(%v): want 0 (the default) or more", d))
		case d == 0:
			c.grace = DefaultGracePeriod
		default:
			c.grace = d
		}
	})
}

// WithSessionIdle makes an environment server close the sessions unused for longer
// than d (checked when a session is made). 0 means DefaultSessionIdle.
func WithSessionIdle(d time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) {
		switch {
		case d < 0:
			c.errs = append(c.errs, fmt.Errorf("WithSessionIdle(%v): want 0 (the default) or more", d))
		case d == 0:
			c.sessionIdle = DefaultSessionIdle
		default:
			c.sessionIdle = d
		}
	})
}

// WithMaxSessions bounds the open sessions of each key on an environment server (all
// callers of a server without keys count as one key); Make and MakeBatch beyond it
// fail with RESOURCE_EXHAUSTED. 0 means DefaultMaxSessions. See also WithMaxKeyBytes.
func WithMaxSessions(n int) ServerOption {
	return serverOption(func(c *serverConfig) {
		switch {
		case n < 0:
			c.errs = append(c.errs, fmt.Errorf("WithMaxSessions(%d): want 0 (the default) or more", n))
		case n == 0:
			c.maxSessions = DefaultMaxSessions
		default:
			c.maxSessions = n
		}
	})
}

// WithTrialWorkers bounds how many trials a trial server runs at once; 0 means
// runtime.GOMAXPROCS(0).
func WithTrialWorkers(n int) ServerOption {
	return serverOption(func(c *serverConfig) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithTrialWorkers(%d): want 0 (GOMAXPROCS) or more", n))
		}
		c.workers = n
	})
}

// WithClientIdleTimeout bounds how long a trial server's trial waits for a client
// actor that does not act: a trial whose client has not acted for d stops, its error
// saying why, so that a person who left (a page closed or reloaded) holds nothing for
// long. It is the default of ClientActor.idle_timeout_ms and the most a client may ask
// for. 0 means DefaultClientIdleTimeout; a negative d turns the bound off (clients
// may then ask for any idle timeout, and 0 waits as long as the trial runs).
func WithClientIdleTimeout(d time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) { c.clientIdle = d })
}

// WithRemoteActors lets a trial server's trials use agents served elsewhere (an
// Actor's remote address), dialed with opts (a key, TLS). Without it, a trial spec
// naming a remote actor is refused with INVALID_ARGUMENT: a server should not dial
// the addresses its callers choose unless it is meant to.
func WithRemoteActors(opts ...DialOption) ServerOption {
	return serverOption(func(c *serverConfig) {
		c.remoteOK = true
		c.remote = append(c.remote, opts...)
	})
}

// WithRemoteActorKeys gives the keys a trial server presents to remote actors, by
// agent name: an actor of agent NAME is dialed with keys.For(NAME). It takes effect
// with WithRemoteActors.
func WithRemoteActorKeys(keys Keys) ServerOption {
	return serverOption(func(c *serverConfig) { c.remoteKeys = keys })
}

// WithUnaryInterceptors adds interceptors of unary calls, run in the order given,
// on every path a call takes: gRPC, and the HTTP gateway's Connect (JSON and
// binary) and gRPC-Web (see Server.ServeHTTP). They run after baton's own checks:
// the key (on gRPC, on the call's headers before its message is read; over HTTP
// before the body is read), then the key's scope and the checks of input, so that
// a call they see is authenticated and well-formed, and a call refused there never
// reaches them. A call's context carries its incoming metadata
// (metadata.FromIncomingContext: on gRPC the call's, over HTTP the request's
// headers less its protocol's own and Cookie) and its deadline; info.FullMethod is
// "/baton.v1.SERVICE/METHOD" on every path. An error they return ends the call
// with its status, the same on every path. They see gRPC's health checks and
// reflection too, which are open to every caller and not on the gateway. Panics
// in them are recovered as a handler's are, and their time counts in the call's
// metrics (WithMetrics). A nil interceptor is an error of NewServer.
func WithUnaryInterceptors(ints ...grpc.UnaryServerInterceptor) ServerOption {
	return serverOption(func(c *serverConfig) {
		for i, in := range ints {
			if in == nil {
				c.errs = append(c.errs, fmt.Errorf("WithUnaryInterceptors: interceptor %d is nil", i))
				return
			}
		}
		c.unaryInts = append(c.unaryInts, ints...)
	})
}

// WithStreamInterceptors adds interceptors of streaming calls, run in the order
// given, after baton's own checks, on every path a call takes, as
// WithUnaryInterceptors' (the gateway serves the server streams: Watch and the
// like; client streams, ActStream, are gRPC only). The stream they get reads the
// call's request checked against the key's scope, and its Context carries the
// call's metadata and deadline. A nil interceptor is an error of NewServer.
func WithStreamInterceptors(ints ...grpc.StreamServerInterceptor) ServerOption {
	return serverOption(func(c *serverConfig) {
		for i, in := range ints {
			if in == nil {
				c.errs = append(c.errs, fmt.Errorf("WithStreamInterceptors: interceptor %d is nil", i))
				return
			}
		}
		c.streamInts = append(c.streamInts, ints...)
	})
}

// WithGRPCServerOptions adds options of grpc-go's own to a server. They apply to
// its gRPC transport alone: interceptors given here (grpc.UnaryInterceptor,
// grpc.ChainUnaryInterceptor and their stream forms) never see the calls of the
// HTTP gateway's Connect and gRPC-Web clients, so use WithUnaryInterceptors and
// WithStreamInterceptors for logging, auth and the like. On gRPC, chained ones run
// after baton's checks and WithUnaryInterceptors', and grpc.UnaryInterceptor (or
// grpc.StreamInterceptor) runs before them all, after the key check on headers
// only (grpc-go runs the interceptor it sets ahead of the chained ones). The
// server sets grpc.InTapHandle itself, to check keys on a call's headers: another
// one makes NewServer panic, as grpc-go does.
func WithGRPCServerOptions(opts ...grpc.ServerOption) ServerOption {
	return serverOption(func(c *serverConfig) { c.grpcOpts = append(c.grpcOpts, opts...) })
}

// WithHTTPHandler serves h, on the server's listener, for the HTTP/1.1 requests whose
// path is not a method of the HTTP gateway (see Server.ServeHTTP): a page, its assets.
// nil, the default, answers them 404.
func WithHTTPHandler(h http.Handler) ServerOption {
	return serverOption(func(c *serverConfig) { c.httpHandler = h })
}

// WithMetrics has the server record its calls in m (call counts, latencies, errors
// by code, open sessions, feedback: see package telemetry) and serve m's registry at
// GET /metrics on its address, beside gRPC and the HTTP gateway, in Prometheus'
// text format. Who may read /metrics is WithMetricsKeys' rule. nil, the default,
// records nothing and serves no /metrics (the WithHTTPHandler handler gets the path).
// Several servers may share one m.
func WithMetrics(m *telemetry.Metrics) ServerOption {
	return serverOption(func(c *serverConfig) { c.metrics = m })
}

// WithMetricsKeys sets who may read /metrics: a scrape must present one of k's keys
// (any name's or the default key), as "Authorization: Bearer KEY" or "X-Baton-Key:
// KEY"; a zero Keys serves /metrics to anyone who reaches the address. Without this
// option /metrics follows the server's keys (WithKeys): open on a server without
// keys, else any key the server knows. A scrape without a good key gets 401 and
// nothing else.
func WithMetricsKeys(k Keys) ServerOption {
	return serverOption(func(c *serverConfig) { c.metricsKeys = &k })
}

// The connection limits of a server. A server reads nothing of a call before it has
// checked its key; these bound how long a connection may hold the server's
// resources while it sends slowly or nothing at all.

// durationOption is a server option of a duration whose zero means def.
func durationOption(name string, d, def time.Duration, dst func(*serverConfig) *time.Duration) ServerOption {
	return serverOption(func(c *serverConfig) {
		switch {
		case d < 0:
			c.errs = append(c.errs, fmt.Errorf("%s(%v): want 0 (the default, %v) or more", name, d, def))
		case d == 0:
			*dst(c) = def
		default:
			*dst(c) = d
		}
	})
}

// WithHeaderTimeout bounds how long a new connection may take to show what it speaks
// (its TLS handshake and first bytes, the HTTP/2 handshake of gRPC) and how long an
// HTTP/1.1 request may take to send its headers: the server closes a connection that
// is slower. 0 means DefaultHeaderTimeout.
func WithHeaderTimeout(d time.Duration) ServerOption {
	return durationOption("WithHeaderTimeout", d, DefaultHeaderTimeout, func(c *serverConfig) *time.Duration { return &c.headerTimeout })
}

// WithReadTimeout bounds how long the body of an HTTP/1.1 request (the HTTP gateway)
// may take to arrive once its headers have: a slower one is answered 408 Request
// Timeout and its connection closed. It bounds the request only, not the answer, so
// that a Watch or a Pending that waits is not cut short. 0 means DefaultReadTimeout.
func WithReadTimeout(d time.Duration) ServerOption {
	return durationOption("WithReadTimeout", d, DefaultReadTimeout, func(c *serverConfig) *time.Duration { return &c.readTimeout })
}

// WithIdleTimeout closes the connections that have had no call in flight for d: an
// HTTP/1.1 keep-alive connection between requests, a gRPC connection with no stream
// open (after a GOAWAY, so that clients dial again for their next call, as grpc-go
// and grpcio do by themselves). 0 means DefaultIdleTimeout.
func WithIdleTimeout(d time.Duration) ServerOption {
	return durationOption("WithIdleTimeout", d, DefaultIdleTimeout, func(c *serverConfig) *time.Duration { return &c.idleTimeout })
}

// WithTimeout bounds every call of a client (each attempt, with retries): a server
// that does not answer within d fails the call with ErrDeadline. The caller's
// context may end a call sooner. 0 means DefaultTimeout.
func WithTimeout(d time.Duration) DialOption {
	return dialOption(func(c *dialConfig) {
		switch {
		case d < 0:
			c.errs = append(c.errs, fmt.Errorf("WithTimeout(%v): want 0 (the default) or more", d))
		case d == 0:
			c.timeout = DefaultTimeout
		default:
			c.timeout = d
		}
	})
}

// WithRetries makes a client try a failed call up to n more times when the server was
// unavailable or did not answer within the deadline, waiting backoff before the
// first retry and twice as long before each next one (at most 2 s; 0 means 100 ms).
// The caller's context bounds the whole. The default, 0, never retries: an agent
// that fails fails its trial.
func WithRetries(n int, backoff time.Duration) DialOption {
	return dialOption(func(c *dialConfig) {
		if n < 0 || backoff < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithRetries(%d, %v): want n >= 0 and backoff >= 0", n, backoff))
		}
		c.retries = n
		if backoff > 0 {
			c.backoff = backoff
		}
	})
}

// WithUnary makes an agent client send each observation in its own call (Act)
// instead of on a stream (ActStream). A client falls back to unary calls by itself
// when the server has no ActStream.
func WithUnary() DialOption {
	return dialOption(func(c *dialConfig) { c.unary = true })
}

// WithAgent names the served agent an agent client acts for, when the server serves
// several; a target's path (grpc://host:port/AGENT) names it too. "", the default,
// leaves the choice to the target's path, or else to the server (its one agent).
func WithAgent(name string) DialOption {
	return dialOption(func(c *dialConfig) { c.agent = name })
}

// WithGRPCDialOptions adds options of grpc-go's own to a client (a custom dialer,
// interceptors).
func WithGRPCDialOptions(opts ...grpc.DialOption) DialOption {
	return dialOption(func(c *dialConfig) { c.grpcOpts = append(c.grpcOpts, opts...) })
}

// The budgets and bounds of an environment server's sessions (AddEnvs). A session
// costs the memory its factory estimates (registry.Sizer) or else its observations,
// once per copy of a batch and twice more for the batch's buffers; a key holds at most
// WithMaxSessions sessions and WithMaxKeyBytes bytes of them, so that one key cannot
// lock the others out (every caller of a server without keys counts as one key), and
// a session at most WithMaxSessionBytes, its answers at most a message
// (WithMaxMessageSize). Beyond a bound, Make and MakeBatch fail with
// RESOURCE_EXHAUSTED, whose message names the bound and the flag of baton serve env
// that raises it.

// Defaults of the byte budgets of environment sessions.
const (
	// DefaultMaxSessionBytes bounds the memory of one environment session
	// (WithMaxSessionBytes): 256 MiB.
	DefaultMaxSessionBytes = 256 << 20
	// DefaultMaxKeyBytes bounds the memory of the environment sessions of each key
	// together (WithMaxKeyBytes): 1 GiB.
	DefaultMaxKeyBytes = 1 << 30
)

// WithMaxSessionBytes bounds the estimated memory of one environment session, in
// bytes: a MakeBatch of more copies than fit is refused before they are built. 0
// means DefaultMaxSessionBytes.
func WithMaxSessionBytes(n int64) ServerOption {
	return serverOption(func(c *serverConfig) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithMaxSessionBytes(%d): want 0 (the default) or more", n))
		}
		c.maxSessionBytes = n
	})
}

// WithMaxKeyBytes bounds the estimated memory of the environment sessions of each key
// together, in bytes. 0 means DefaultMaxKeyBytes.
func WithMaxKeyBytes(n int64) ServerOption {
	return serverOption(func(c *serverConfig) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithMaxKeyBytes(%d): want 0 (the default) or more", n))
		}
		c.maxKeyBytes = n
	})
}

// WithConfigDir lets the configurations that an environment server's callers send
// (AddEnvs; ServeTrials's trials too) name files in dir, and nowhere else
// (registry.Remote.Dir: webtest's site_file, a name relative to dir, read through an
// os.Root). "", the default, lets them name none. NewServer fails when dir is not a
// folder it can open.
func WithConfigDir(dir string) ServerOption {
	return serverOption(func(c *serverConfig) {
		c.envRemote.Dir = ""
		if dir == "" {
			return
		}
		abs, err := filepath.Abs(dir)
		if err == nil {
			var r *os.Root
			if r, err = os.OpenRoot(abs); err == nil {
				err = r.Close()
			}
		}
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithConfigDir(%q): %w", dir, err))
			return
		}
		c.envRemote.Dir = abs
	})
}

// WithEnvLimits sets the bounds of the registered environments' limits on the
// configurations that an environment server's callers send (AddEnvs; ServeTrials's
// trials too), by full name ("maze.side", "webtest.pages"; see registry.Limit); a
// limit left out keeps its default. AddEnvs and ServeTrials fail for a name that no
// registered environment declares, or a bound below 1.
func WithEnvLimits(limits map[string]int64) ServerOption {
	return serverOption(func(c *serverConfig) {
		if c.envRemote.Limits == nil {
			c.envRemote.Limits = map[string]int64{}
		}
		maps.Copy(c.envRemote.Limits, limits)
	})
}
