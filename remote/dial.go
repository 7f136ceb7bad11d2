package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// maxBackoff bounds the wait between retries.
const maxBackoff = 2 * time.Second

// conn is a client's connection and what every call of it shares.
type conn struct {
	cc   *grpc.ClientConn
	addr string // host:port, for messages
	cfg  dialConfig
	// base is the connection's lifetime: streams that outlive a call hang from it;
	// Close cancels it.
	base   context.Context
	cancel context.CancelFunc
}

// ParseTarget splits a target into the address to dial, whether it asks for TLS, and
// its path. "grpc://host:port/NAME" is plaintext, "grpcs://host:port/NAME" TLS, the
// path (NAME) optional; anything else is a gRPC target ("host:port",
// "dns:///host:port", ...) dialed as it is, with no path.
func ParseTarget(target string) (addr string, tlsWanted bool, path string, err error) {
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok || (scheme != "grpc" && scheme != "grpcs") {
		if target == "" {
			return "", false, "", fmt.Errorf("%w: empty target", ErrConfig)
		}
		return target, false, "", nil
	}
	u, perr := url.Parse(target)
	if perr != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || rest == "" {
		return "", false, "", fmt.Errorf("%w: target %q: want %s://HOST:PORT or %s://HOST:PORT/NAME", ErrConfig, target, scheme, scheme)
	}
	if u.Port() == "" {
		return "", false, "", fmt.Errorf("%w: target %q has no port", ErrConfig, target)
	}
	path = strings.Trim(u.Path, "/")
	if strings.Contains(path, "/") {
		return "", false, "", fmt.Errorf("%w: target %q: the path names one agent or environment", ErrConfig, target)
	}
	return u.Host, scheme == "grpcs", path, nil
}

// dial opens a client connection to target; it does not wait for the server (the
// first call does). It returns the target's path.
func dial(ctx context.Context, target string, opts []DialOption) (*conn, string, error) {
	cfg, err := newDialConfig(opts)
	if err != nil {
		return nil, "", err
	}
	addr, wantTLS, path, err := ParseTarget(target)
	if err != nil {
		return nil, "", err
	}
	var creds credentials.TransportCredentials
	switch {
	case cfg.tls != nil:
		creds = credentials.NewTLS(cfg.tls)
	case wantTLS:
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	default:
		creds = insecure.NewCredentials()
	}
	gopts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.maxMsg), grpc.MaxCallSendMsgSize(cfg.maxMsg)),
		grpc.WithInitialWindowSize(1 << 20),
		grpc.WithInitialConnWindowSize(1 << 22),
	}
	if cfg.hasKey {
		gopts = append(gopts, grpc.WithPerRPCCredentials(keyCredentials{key: cfg.key}))
	}
	cc, err := grpc.NewClient(addr, append(gopts, cfg.grpcOpts...)...)
	if err != nil {
		return nil, "", fmt.Errorf("%w: target %q: %w", ErrConfig, target, err)
	}
	c := &conn{cc: cc, addr: addr, cfg: cfg}
	c.base, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return c, path, nil
}

// close closes the connection.
func (c *conn) close() error {
	c.cancel()
	return c.cc.Close()
}

// retryable reports whether a failed attempt may be tried again.
func retryable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}

// call runs f, an attempt of a unary call, under the call deadline, retrying as
// configured, and returns the error as a *CallError.
func (c *conn) call(ctx context.Context, method, target string, f func(ctx context.Context) error) error {
	return c.callLong(ctx, method, target, 0, f)
}

// callLong is call for a call that the server may hold for up to extra (a wait it
// was asked for) beyond the call deadline.
func (c *conn) callLong(ctx context.Context, method, target string, extra time.Duration, f func(ctx context.Context) error) error {
	backoff := c.cfg.backoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.timeout+max(extra, 0))
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		err = c.fail(ctx, method, target, err, attempt)
		if !c.retry(ctx, err, attempt, &backoff) {
			return err
		}
	}
}

// fail turns the error of an attempt into a *CallError, saying so when the call
// deadline (not the caller's context) ended it.
func (c *conn) fail(ctx context.Context, method, target string, err error, attempt int) error {
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded) {
		err = status.Errorf(codes.DeadlineExceeded, "no answer within %v", c.cfg.timeout)
	}
	ce, ok := callError(ctx, c.addr, method, target, err).(*CallError)
	if ok {
		ce.attempts = attempt
		return ce
	}
	return err
}

// retry reports whether to try again after err, waiting the backoff first; it
// returns false when the caller's context ends during the wait.
func (c *conn) retry(ctx context.Context, err error, attempt int, backoff *time.Duration) bool {
	if attempt > c.cfg.retries || ctx.Err() != nil || !retryable(status.Code(err)) {
		return false
	}
	c.cfg.logger.Warn("remote: retrying", "addr", c.addr, "attempt", attempt+1, "after", *backoff, "err", err)
	t := time.NewTimer(*backoff)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	*backoff = min(2**backoff, maxBackoff)
	return true
}
