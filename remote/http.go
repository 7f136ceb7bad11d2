package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// httpMethod is a method of a served service that the gateway calls.
type httpMethod struct {
	impl   any
	full   string // "/baton.v1.TrialService/Start"
	unary  *grpc.MethodDesc
	stream *grpc.StreamDesc // server streaming only
}

// expose records the unary and server-streaming methods of a service for the
// gateway. Methods with a client stream (ActStream) are gRPC only.
func (s *Server) expose(desc *grpc.ServiceDesc, impl any) {
	if s.methods == nil {
		s.methods = map[string]httpMethod{}
	}
	for i := range desc.Methods {
		m := &desc.Methods[i]
		full := "/" + desc.ServiceName + "/" + m.MethodName
		s.methods[full] = httpMethod{impl: impl, full: full, unary: m}
	}
	for i := range desc.Streams {
		sd := &desc.Streams[i]
		if sd.ClientStreams {
			continue
		}
		full := "/" + desc.ServiceName + "/" + sd.StreamName
		s.methods[full] = httpMethod{impl: impl, full: full, stream: sd}
	}
}

// ServeHTTP serves the gateway: the unary and server-streaming methods of the
// server's services (POST /baton.v1.SERVICE/METHOD) in the Connect protocol, JSON
// (application/json for unary calls, application/connect+json for streams) or
// binary (application/proto, application/connect+proto), and in gRPC-Web, binary
// (application/grpc-web, application/grpc-web+proto) or text
// (application/grpc-web-text); the key in the "Authorization: Bearer KEY" or
// "X-Baton-Key" header. Other paths go to the handler of WithHTTPHandler (404
// without one). Serve serves it on the same listener as gRPC; ServeHTTP lets it be
// mounted elsewhere too.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The body of a request must come within the read timeout: net/http bounds its
	// headers, and nothing bounds the rest unless a deadline is set.
	rc := http.NewResponseController(w)
	if r.ContentLength != 0 {
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.readTimeout))
	}
	if r.URL.Path == metricsPath && s.cfg.metrics != nil {
		s.serveMetrics(w, r)
		return
	}
	s.mu.Lock()
	m, ok := s.methods[r.URL.Path]
	s.mu.Unlock()
	if !ok && s.cfg.httpHandler != nil && !strings.HasPrefix(r.URL.Path, "/baton.v1.") {
		if r.ContentLength != 0 {
			// Once the handler has read it all, the answer may take its time.
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		s.cfg.httpHandler.ServeHTTP(w, r)
		return
	}
	if !ok && !strings.HasPrefix(r.URL.Path, "/baton.v1.") {
		http.NotFound(w, r)
		return
	}
	// The protocol of the call, from its content type: its answers, refusals
	// included, are in that protocol. Before the call is known to be a method's in a
	// form the method takes, Connect's are its unary JSON errors.
	wi, known := wireOf(r.Header.Get("Content-Type"))
	early := defaultWire
	if wi.kind == grpcWeb {
		early = wi
	}
	if !ok {
		refuse(w, r, s.linger(), early, http.StatusNotImplemented, status.Errorf(codes.Unimplemented, "no method %s over HTTP (POST /baton.v1.SERVICE/METHOD; client streams are gRPC only)", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, r, s.linger(), early, http.StatusMethodNotAllowed, status.Errorf(codes.Unimplemented, "%s %s: use POST", r.Method, r.URL.Path))
		return
	}
	// Nothing of the body is read before the key is checked: a refused request is
	// answered at once, and its connection closed (refuse).
	ctx := r.Context()
	md := incomingMetadata(r.Header)
	ctx = metadata.NewIncomingContext(ctx, md)
	if !s.cfg.keys.Empty() {
		g, err := s.cfg.keys.authenticate(md)
		if err != nil {
			refuse(w, r, s.linger(), wi, http.StatusUnauthorized, err)
			return
		}
		ctx = context.WithValue(ctx, grantKey{}, g)
	}
	if !known || !wi.takes(m) {
		w.Header().Set("Accept-Post", acceptPost(m))
		refuse(w, r, s.linger(), defaultWire, http.StatusUnsupportedMediaType, status.Errorf(codes.InvalidArgument, "content type %q: %s", mediaType(r.Header.Get("Content-Type")), wantContentType(m)))
		return
	}
	timeout, err := wi.checkHeaders(r.Header)
	if err != nil {
		refuse(w, r, s.linger(), wi, 0, err)
		return
	}
	body, err := s.readBody(w, r, m.full, wi)
	if err != nil {
		return
	}
	// The answer may take long (a Watch, a Pending that waits): the deadline was
	// the request's. (A failed read sets its own, in refuse.)
	_ = rc.SetReadDeadline(time.Time{})
	msg, err := wi.request(body)
	if err != nil {
		wi.fail(w, 0, err)
		return
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if m.unary != nil {
		s.serveUnary(ctx, w, m, wi, msg)
		return
	}
	s.serveStream(ctx, w, m, wi, msg)
}

// incomingMetadata returns a request's metadata, as gRPC's calls carry theirs: its
// headers by lower-case name, those of "-bin" names decoded from base64, less those
// of the protocols (HTTP's connection headers, Content-Length and the encodings,
// Connect-* and Grpc-*) and Cookie, which is the browser's and not the call's.
func incomingMetadata(h http.Header) metadata.MD {
	md := make(metadata.MD, len(h))
	for k, vs := range h {
		k = strings.ToLower(k)
		if protocolHeaders[k] || strings.HasPrefix(k, "connect-") || strings.HasPrefix(k, "grpc-") {
			continue
		}
		if strings.HasSuffix(k, "-bin") {
			for _, v := range vs {
				if b, err := decodeBinHeader(v); err == nil {
					md[k] = append(md[k], string(b))
				}
			}
			continue
		}
		md[k] = append(md[k], vs...)
	}
	return md
}

// protocolHeaders are the request headers that incomingMetadata leaves out.
var protocolHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "host": true, "content-length": true,
	"content-encoding": true, "accept-encoding": true, "cookie": true,
}

// decodeBinHeader decodes the base64 of a binary header, padded or not.
func decodeBinHeader(v string) ([]byte, error) {
	if len(v)%4 == 0 {
		return base64.StdEncoding.DecodeString(v)
	}
	return base64.RawStdEncoding.DecodeString(v)
}

// smallRequests are the methods whose requests hold names, ids and numbers only:
// their bodies are bounded by smallRequestLimit. The other methods' requests carry
// observations, actions, configurations or lists of ids, bounded by the maximum
// message size (WithMaxMessageSize).
var smallRequests = map[string]bool{
	"/baton.v1.AgentService/Spec":       true,
	"/baton.v1.AgentService/Agents":     true,
	"/baton.v1.EnvService/Envs":         true,
	"/baton.v1.EnvService/Spec":         true,
	"/baton.v1.EnvService/Reset":        true,
	"/baton.v1.EnvService/CloseSession": true,
	"/baton.v1.EnvService/Close":        true, // CloseSession's former name
	"/baton.v1.TrialService/List":       true,
	"/baton.v1.TrialService/Reward":     true,
	"/baton.v1.TrialService/Pending":    true,
	"/baton.v1.TrialService/Episodes":   true,
}

// smallRequestLimit bounds the bodies of smallRequests over HTTP: 64 KiB.
const smallRequestLimit = 64 << 10

// requestLimit returns the largest body the gateway reads for a method: the
// maximum message size and its 5-byte envelope, or less for small requests.
func (s *Server) requestLimit(fullMethod string) int64 {
	n := int64(s.cfg.maxMsg) + 5
	if smallRequests[fullMethod] {
		n = min(n, smallRequestLimit)
	}
	return n
}

// readBody reads the body of a request to method, within the limit of the method
// (in base64 for gRPC-Web's text form) and the read deadline set on the
// connection. It answers the request itself when it fails: 413 for a body too
// large (its declared length is checked before any of it is read), 408 for one too
// slow (or their codes in the protocol of wi).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, method string, wi wire) ([]byte, error) {
	limit := s.requestLimit(method)
	small := limit == smallRequestLimit
	if wi.text {
		limit = base64Len(limit)
	}
	// tooLarge answers 413; size is the declared length, or "" for a body that grew
	// past the limit as it came.
	tooLarge := func(size string) error {
		why := fmt.Sprintf("the server's maximum message size is %d bytes", s.cfg.maxMsg)
		if small {
			why = "its requests hold names, ids and numbers only"
		}
		if wi.text {
			why += ", in base64"
		}
		if size != "" {
			size += " bytes, "
		}
		err := status.Errorf(codes.ResourceExhausted, "request body: %smore than the %d bytes that %s takes (%s)", size, limit, method, why)
		refuse(w, r, s.linger(), wi, http.StatusRequestEntityTooLarge, err)
		return err
	}
	if r.ContentLength > limit {
		return nil, tooLarge(strconv.FormatInt(r.ContentLength, 10))
	}
	// A declared length is a promise, not bytes: the buffer grows with what comes.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 64<<10)))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return buf.Bytes(), nil
	case errors.As(err, &mbe):
		return nil, tooLarge("")
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = status.Errorf(codes.DeadlineExceeded, "request body: not received within the read timeout (%v); %d bytes came", s.cfg.readTimeout, buf.Len())
		refuse(w, r, 0, wi, http.StatusRequestTimeout, err)
		return nil, err
	}
	err = status.Errorf(codes.InvalidArgument, "request body: %v", err)
	refuse(w, r, 0, wi, http.StatusBadRequest, err)
	return nil, err
}

// refuse answers a request whose body is not read (all of it, at least), in the
// protocol of wi (code is the HTTP status of Connect's unary answer; 0 for the
// status code's). A request that has a body gets its connection closed after the
// answer: what is left of the body is read and dropped (up to 256 KiB, net/http's
// bound; more is not read) for at most linger, so that a client still sending it
// reads the answer rather than a reset of the connection; a body that does not
// come in that time is not waited for.
func refuse(w http.ResponseWriter, r *http.Request, linger time.Duration, wi wire, code int, err error) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(linger))
	}
	wi.fail(w, code, err)
}

// maxLinger bounds how long a refused request's body is waited for (refuse), as
// net/http waits before closing a connection whose request it did not read.
const maxLinger = 500 * time.Millisecond

// linger is how long a refused request's body is waited for: maxLinger, or the
// read timeout when shorter.
func (s *Server) linger() time.Duration { return min(maxLinger, s.cfg.readTimeout) }

// deadlineBody is the body of a request with a read deadline on its connection; it
// clears the deadline once the body is read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (s *Server) serveUnary(ctx context.Context, w http.ResponseWriter, m httpMethod, wi wire, req []byte) {
	dec := func(v any) error { return s.decodeMessage(wi, req, v) }
	resp, err := m.unary.Handler(m.impl, ctx, dec, s.unary)
	if err != nil {
		wi.fail(w, 0, err)
		return
	}
	out, err := s.encodeMessage(wi, resp)
	if err != nil {
		wi.fail(w, 0, err)
		return
	}
	if wi.kind == connectUnary {
		w.Header().Set("Content-Type", wi.contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
		return
	}
	newFrameWriter(w, wi).whole(appendFrame(appendFrame(make([]byte, 0, len(out)+32), 0, out), grpcWebTrailers, trailersOf(nil)))
}

func (s *Server) serveStream(ctx context.Context, w http.ResponseWriter, m httpMethod, wi wire, req []byte) {
	st := &httpStream{ctx: ctx, srv: s, wi: wi, fw: newFrameWriter(w, wi), req: req}
	info := &grpc.StreamServerInfo{FullMethod: m.full, IsServerStream: true}
	err := s.stream(m.impl, st, info, m.stream.Handler)
	st.end(err)
}

// httpStream is a server stream over a Connect or gRPC-Web streaming response.
type httpStream struct {
	ctx  context.Context
	srv  *Server
	wi   wire
	fw   *frameWriter
	req  []byte
	read bool
}

func (h *httpStream) SetHeader(metadata.MD) error  { return nil }
func (h *httpStream) SendHeader(metadata.MD) error { return nil }
func (h *httpStream) SetTrailer(metadata.MD)       {}
func (h *httpStream) Context() context.Context     { return h.ctx }

func (h *httpStream) RecvMsg(v any) error {
	if h.read {
		return io.EOF
	}
	h.read = true
	return h.srv.decodeMessage(h.wi, h.req, v)
}

func (h *httpStream) SendMsg(v any) error {
	b, err := h.srv.encodeMessage(h.wi, v)
	if err != nil {
		return err
	}
	return h.fw.frame(0, b)
}

// end ends the stream with err (nil for OK): Connect's end-of-stream message, or
// gRPC-Web's trailers (in the headers when nothing was sent).
func (h *httpStream) end(err error) {
	if err != nil && !h.fw.started {
		h.wi.fail(h.fw.w, 0, err)
		return
	}
	if h.wi.kind == grpcWeb {
		_ = h.fw.frame(grpcWebTrailers, trailersOf(err))
		return
	}
	_ = h.fw.frame(connectEndStream, endStreamJSON(err))
}

// split divides the connections of a listener between gRPC (HTTP/2 with prior
// knowledge, or TLS with ALPN h2 to a client that offers no HTTP/1.1) and HTTP/1.1
// (the HTTP gateway and the handler of WithHTTPHandler). It alone calls the
// listener's Accept: it retries temporary errors (too many open files) as net/http
// does, and keeps the error that ends it for Serve to report.
type split struct {
	lis        net.Listener
	tls        *tls.Config
	timeout    time.Duration // of a connection's handshake and first bytes
	logger     *slog.Logger
	grpc, http *chanListener
	plain      *chanListener // plaintext HTTP/2 on a TLS listener; nil without TLS
	done       chan struct{} // closed when the halves are
	wg         sync.WaitGroup

	mu       sync.Mutex
	stopping bool  // the server closes the listener: its error ends nothing
	err      error // what ended run, when not stopping
}

// Accept's retries of temporary errors wait acceptBackoffMin, twice as long after
// each next failure, up to acceptBackoffMax, as net/http's do.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

func newSplit(lis net.Listener, cfg *tls.Config, timeout time.Duration, logger *slog.Logger) *split {
	done := make(chan struct{})
	var once sync.Once
	closeAll := func() { once.Do(func() { close(done) }) }
	sp := &split{lis: lis, timeout: timeout, logger: logger, done: done}
	sp.grpc = newChanListener(lis.Addr(), done, closeAll, sp.failure)
	sp.http = newChanListener(lis.Addr(), done, closeAll, sp.failure)
	if cfg != nil {
		sp.plain = newChanListener(lis.Addr(), done, closeAll, sp.failure)
		sp.tls = cfg.Clone()
		base := sp.tls
		sp.tls.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c := base.Clone()
			c.GetConfigForClient = nil
			// gRPC clients offer h2 alone; browsers and curl offer http/1.1 too, and
			// get it.
			if slices.Contains(hello.SupportedProtos, "http/1.1") {
				c.NextProtos = []string{"http/1.1"}
			} else {
				c.NextProtos = []string{"h2"}
			}
			return c, nil
		}
	}
	return sp
}

// stop closes the listener for a shutdown: run ends without an error.
func (sp *split) stop() {
	sp.mu.Lock()
	sp.stopping = true
	sp.mu.Unlock()
	_ = sp.lis.Close()
}

// isStopping reports whether stop was called.
func (sp *split) isStopping() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.stopping
}

// fail records the error of Accept that ends run, unless the server is stopping.
func (sp *split) fail(err error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.stopping {
		sp.err = fmt.Errorf("remote: accept on %s: %w", sp.lis.Addr(), err)
	}
}

// failure returns the error that ended run, nil when the server closed the
// listener itself (or run goes on).
func (sp *split) failure() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.err
}

// temporary reports whether an error of Accept is worth a retry: EMFILE, ENFILE,
// ECONNABORTED and the like, as the deprecated net.Error.Temporary says.
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// run accepts connections until the listener is closed or fails, then closes both
// halves.
func (sp *split) run() {
	defer sp.grpc.closeAll()
	var delay time.Duration
	for {
		c, err := sp.lis.Accept()
		if err != nil {
			if temporary(err) && !sp.isStopping() {
				delay = min(max(2*delay, acceptBackoffMin), acceptBackoffMax)
				sp.logger.Warn("remote: accept failed; retrying", "addr", sp.lis.Addr().String(), "err", err, "in", delay)
				t := time.NewTimer(delay)
				select {
				case <-t.C:
					continue
				case <-sp.done:
					t.Stop()
				}
			}
			sp.fail(err)
			sp.wg.Wait()
			return
		}
		delay = 0
		sp.wg.Go(func() { sp.route(c) })
	}
}

// route reads a connection's first bytes (after its TLS handshake) and hands it on.
// A plaintext client on a TLS listener is told so, in its protocol, and closed.
func (sp *split) route(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(sp.timeout))
	if sp.tls != nil {
		br := bufio.NewReader(c)
		head, err := br.Peek(1)
		if err != nil {
			_ = c.Close()
			return
		}
		if head[0] != tlsHandshakeRecord {
			sp.routePlaintext(c, br)
			return
		}
		tc := tls.Server(&peekedConn{Conn: c, r: br}, sp.tls)
		if err := tc.Handshake(); err != nil {
			_ = c.Close()
			return
		}
		c = tc
	}
	br := bufio.NewReader(c)
	head, err := br.Peek(3)
	if err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: br}
	to := sp.http
	if string(head) == "PRI" {
		to = sp.grpc
	}
	if !to.put(pc) {
		_ = c.Close()
	}
}

// tlsHandshakeRecord is the first byte of every TLS connection: the record type of
// the client's hello.
const tlsHandshakeRecord = 0x16

// http2Preface is the first bytes of an HTTP/2 connection with prior knowledge.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// plaintextAnswer is what an HTTP/1.x client on a TLS listener is told (net/http
// answers it the same way); a gRPC client gets plaintextStatus.
const plaintextAnswer = "this port speaks TLS: use https:// (or grpcs:// for gRPC)\n"

// plaintextStatus is the status of every call of a plaintext gRPC client on a TLS
// listener.
var plaintextStatus = status.Error(codes.Unavailable, "this port speaks TLS: dial it with TLS (grpcs://), not plaintext")

// newPlaintextRefuser returns the gRPC server that answers the plaintext HTTP/2
// connections of a TLS listener: every call ends with plaintextStatus on its
// headers, and no message is read.
func newPlaintextRefuser(headerTimeout, idleTimeout time.Duration) *grpc.Server {
	return grpc.NewServer(
		grpc.InTapHandle(func(ctx context.Context, _ *tap.Info) (context.Context, error) { return ctx, plaintextStatus }),
		grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { return plaintextStatus }),
		grpc.ConnectionTimeout(headerTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout}),
	)
}

// routePlaintext handles a connection that sent plaintext to a TLS listener. An
// HTTP/2 client (gRPC without TLS) goes to the plaintext half, whose server answers
// its calls with plaintextStatus; an HTTP/1.x request gets 400 Bad Request saying
// so; anything else is closed. The 400 is followed by a close after what the client
// sent is read (within the connection's deadline), so that the answer is not lost
// to a reset.
func (sp *split) routePlaintext(c net.Conn, br *bufio.Reader) {
	head, _ := br.Peek(min(max(br.Buffered(), 1), len(http2Preface)))
	if len(head) < len(http2Preface) && strings.HasPrefix(http2Preface, string(head)) {
		head, _ = br.Peek(len(http2Preface))
	}
	switch {
	case string(head) == http2Preface && sp.plain != nil:
		_ = c.SetDeadline(time.Time{})
		if !sp.plain.put(&peekedConn{Conn: c, r: br}) {
			_ = c.Close()
		}
		return
	case looksLikeHTTP1(head):
		_, _ = fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			len(plaintextAnswer), plaintextAnswer)
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(br, 1<<16))
	}
	_ = c.Close()
}

// looksLikeHTTP1 reports whether b starts as an HTTP/1.x request line: a method
// token of upper-case letters and a space.
func looksLikeHTTP1(b []byte) bool {
	i := 0
	for i < len(b) && b[i] >= 'A' && b[i] <= 'Z' {
		i++
	}
	return i > 0 && i < len(b) && b[i] == ' '
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read reads what was peeked, then straight from the connection.
func (p *peekedConn) Read(b []byte) (int, error) {
	if p.r != nil && p.r.Buffered() > 0 {
		return p.r.Read(b)
	}
	return p.Conn.Read(b)
}

// chanListener is a listener whose connections another goroutine hands it.
type chanListener struct {
	addr     net.Addr
	conns    chan net.Conn
	done     chan struct{}
	closeAll func()
	failure  func() error // what closed it, nil for a close
}

func newChanListener(addr net.Addr, done chan struct{}, closeAll func(), failure func() error) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: done, closeAll: closeAll, failure: failure}
}

func (l *chanListener) put(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// Accept returns the next connection; once the split has ended, the error that
// ended it, or net.ErrClosed.
func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		if err := l.failure(); err != nil {
			return nil, err
		}
		return nil, net.ErrClosed
	}
}

// Close closes every half of the split (the server stops taking connections).
func (l *chanListener) Close() error {
	l.closeAll()
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
