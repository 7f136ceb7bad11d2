package remote_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// wireClient calls the gateway in one of its forms (a content type), framing and
// reading as the protocol's clients do, independently of the server's code.
type wireClient struct {
	t           *testing.T
	base        string
	hc          *http.Client
	contentType string
	headers     map[string]string
}

func newWireClient(t *testing.T, srv *server, contentType string) *wireClient {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &wireClient{t: t, base: "http://" + srv.target, hc: &http.Client{Transport: tr}, contentType: contentType, headers: map[string]string{}}
}

func (c *wireClient) binary() bool {
	return !strings.HasSuffix(c.contentType, "json")
}

func (c *wireClient) grpcWeb() bool { return strings.HasPrefix(c.contentType, "application/grpc-web") }

func (c *wireClient) text() bool {
	return strings.HasPrefix(c.contentType, "application/grpc-web-text")
}

func (c *wireClient) enveloped() bool {
	return c.grpcWeb() || strings.HasPrefix(c.contentType, "application/connect+")
}

// answer is what a call answered: the HTTP status, the messages, the call's status.
type answer struct {
	httpStatus int
	msgs       [][]byte
	st         *status.Status
}

func (c *wireClient) marshal(m proto.Message) []byte {
	c.t.Helper()
	var b []byte
	var err error
	if c.binary() {
		b, err = proto.Marshal(m)
	} else {
		b, err = protojson.Marshal(m)
	}
	require.NoError(c.t, err)
	return b
}

// unmarshal decodes the i-th message of an answer into m.
func (c *wireClient) unmarshal(a answer, i int, m proto.Message) {
	c.t.Helper()
	require.Greater(c.t, len(a.msgs), i, "messages of the answer")
	if c.binary() {
		require.NoError(c.t, proto.Unmarshal(a.msgs[i], m))
		return
	}
	require.NoError(c.t, protojson.Unmarshal(a.msgs[i], m))
}

// call calls method ("EnvService/Make") with req.
func (c *wireClient) call(method string, req proto.Message) answer {
	c.t.Helper()
	body := c.marshal(req)
	if c.enveloped() {
		body = envelope(0, body)
	}
	if c.text() {
		body = []byte(base64.StdEncoding.EncodeToString(body))
	}
	hr, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.base+"/baton.v1."+method, bytes.NewReader(body))
	require.NoError(c.t, err)
	hr.Header.Set("Content-Type", c.contentType)
	for k, v := range c.headers {
		hr.Header.Set(k, v)
	}
	resp, err := c.hc.Do(hr)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	a := answer{httpStatus: resp.StatusCode, st: status.New(codes.OK, "")}
	switch {
	case c.grpcWeb():
		require.Equal(c.t, http.StatusOK, resp.StatusCode, string(b))
		assert.Equal(c.t, c.contentType, resp.Header.Get("Content-Type"))
		if v := resp.Header.Get("Grpc-Status"); v != "" {
			require.Empty(c.t, b, "a trailers-only answer")
			a.st = statusOfFields(c.t, resp.Header.Get)
			return a
		}
		if c.text() {
			b = decodeChunks(c.t, b)
		}
		for _, f := range frames(c.t, b) {
			if f.flags&0x80 != 0 {
				a.st = statusOfFields(c.t, trailerLines(c.t, f.msg))
				continue
			}
			a.msgs = append(a.msgs, f.msg)
		}
	case c.enveloped():
		require.Equal(c.t, http.StatusOK, resp.StatusCode, "Connect streams answer 200: %s", b)
		assert.Equal(c.t, c.contentType, resp.Header.Get("Content-Type"))
		fs := frames(c.t, b)
		require.NotEmpty(c.t, fs)
		end := fs[len(fs)-1]
		require.Equal(c.t, byte(2), end.flags, "the last frame ends the stream")
		var es struct {
			Error json.RawMessage `json:"error"`
		}
		require.NoError(c.t, json.Unmarshal(end.msg, &es), string(end.msg))
		if es.Error != nil {
			a.st = statusOfConnect(c.t, es.Error)
		}
		for _, f := range fs[:len(fs)-1] {
			a.msgs = append(a.msgs, f.msg)
		}
	default:
		if resp.StatusCode != http.StatusOK {
			assert.Equal(c.t, "application/json", resp.Header.Get("Content-Type"), "Connect's errors are JSON")
			a.st = statusOfConnect(c.t, b)
			return a
		}
		assert.Equal(c.t, c.contentType, resp.Header.Get("Content-Type"))
		a.msgs = [][]byte{b}
	}
	return a
}

func envelope(flags byte, b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	out[0] = flags
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

type frame struct {
	flags byte
	msg   []byte
}

// frames splits a body into its envelopes.
func frames(t *testing.T, b []byte) []frame {
	t.Helper()
	var out []frame
	for len(b) > 0 {
		require.GreaterOrEqual(t, len(b), 5, "an envelope's header")
		n := int(binary.BigEndian.Uint32(b[1:5]))
		require.GreaterOrEqual(t, len(b)-5, n, "an envelope's message")
		out = append(out, frame{flags: b[0], msg: b[5 : 5+n]})
		b = b[5+n:]
	}
	return out
}

// decodeChunks decodes gRPC-Web's text body: padded base64 chunks, one after the
// other.
func decodeChunks(t *testing.T, b []byte) []byte {
	t.Helper()
	var out []byte
	for _, chunk := range regexp.MustCompile(`[A-Za-z0-9+/]*={0,2}`).FindAll(b, -1) {
		d, err := base64.StdEncoding.DecodeString(string(chunk))
		require.NoError(t, err, "chunk %q", chunk)
		out = append(out, d...)
	}
	return out
}

// trailerLines reads gRPC-Web's trailers frame.
func trailerLines(t *testing.T, b []byte) func(string) string {
	t.Helper()
	h := http.Header{}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\r\n"), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		require.True(t, ok, "trailer line %q", line)
		require.Equal(t, strings.ToLower(k), k, "gRPC-Web's trailer names are lower case")
		h.Add(k, strings.TrimSpace(v))
	}
	return h.Get
}

// statusOfFields reads grpc-status, grpc-message and grpc-status-details-bin.
func statusOfFields(t *testing.T, get func(string) string) *status.Status {
	t.Helper()
	code, err := strconv.Atoi(get("grpc-status"))
	require.NoError(t, err)
	if d := get("grpc-status-details-bin"); d != "" {
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d, "="))
		require.NoError(t, err)
		var sp spb.Status
		require.NoError(t, proto.Unmarshal(b, &sp))
		assert.Equal(t, int32(code), sp.GetCode())
		return status.FromProto(&sp)
	}
	msg := get("grpc-message")
	for i := 0; i+2 < len(msg); i++ {
		if msg[i] == '%' {
			n, err := strconv.ParseUint(msg[i+1:i+3], 16, 8)
			require.NoError(t, err)
			msg = msg[:i] + string(rune(n)) + msg[i+3:]
		}
	}
	return status.New(codes.Code(code), msg)
}

// connectCodes are the Connect protocol's names of the codes.
var connectCodes = map[string]codes.Code{
	"canceled": codes.Canceled, "unknown": codes.Unknown, "invalid_argument": codes.InvalidArgument,
	"deadline_exceeded": codes.DeadlineExceeded, "not_found": codes.NotFound, "already_exists": codes.AlreadyExists,
	"permission_denied": codes.PermissionDenied, "resource_exhausted": codes.ResourceExhausted,
	"failed_precondition": codes.FailedPrecondition, "aborted": codes.Aborted, "out_of_range": codes.OutOfRange,
	"unimplemented": codes.Unimplemented, "internal": codes.Internal, "unavailable": codes.Unavailable,
	"data_loss": codes.DataLoss, "unauthenticated": codes.Unauthenticated,
}

// statusOfConnect reads a Connect error object, its details included.
func statusOfConnect(t *testing.T, b []byte) *status.Status {
	t.Helper()
	var ce struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Type  string          `json:"type"`
			Value string          `json:"value"`
			Debug json.RawMessage `json:"debug"`
		} `json:"details"`
	}
	require.NoError(t, json.Unmarshal(b, &ce), string(b))
	code, ok := connectCodes[ce.Code]
	require.True(t, ok, "code %q", ce.Code)
	sp := &spb.Status{Code: int32(code), Message: ce.Message}
	for _, d := range ce.Details {
		v, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		require.NoError(t, err)
		sp.Details = append(sp.Details, &anypb.Any{TypeUrl: "type.googleapis.com/" + d.Type, Value: v})
		require.NotEmpty(t, d.Debug, "a detail's debug form")
	}
	return status.FromProto(sp)
}

// fieldViolation returns the field and description of a status's BadRequest.
func fieldViolation(t *testing.T, st *status.Status) (field, description string) {
	t.Helper()
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField(), br.GetFieldViolations()[0].GetDescription()
		}
	}
	t.Fatalf("no BadRequest detail in %v", st.Proto())
	return "", ""
}

// serveEnvsAndTrials serves environments and trials over TCP, as baton serve ui
// does.
func serveEnvsAndTrials(t *testing.T, opts ...remote.ServerOption) *server {
	t.Helper()
	ctrl, err := runners.NewController(testRegistry(t), runners.WithWorkers(1))
	require.NoError(t, err)
	s := newServer(t, opts...)
	require.NoError(t, s.AddEnvs(testRegistry(t)))
	require.NoError(t, s.AddTrials(ctrl))
	return start(t, s, true)
}

// TestGatewayUnaryWires calls unary methods in each form the gateway speaks: a
// session made, reset and closed, and a refused Make whose error carries its
// google.rpc.BadRequest detail as gRPC's does.
func TestGatewayUnaryWires(t *testing.T) {
	srv := serveEnvsAndTrials(t)
	for _, ct := range []string{"application/json", "application/proto", "application/grpc-web+proto", "application/grpc-web", "application/grpc-web-text", "application/grpc-web-text+proto"} {
		t.Run(ct, func(t *testing.T) {
			c := newWireClient(t, srv, ct)
			a := c.call("EnvService/Make", &pb.MakeRequest{Env: "maze"})
			require.Equal(t, codes.OK, a.st.Code(), "%v", a.st.Proto())
			require.Len(t, a.msgs, 1)
			var made pb.MakeResponse
			c.unmarshal(a, 0, &made)
			require.NotEmpty(t, made.GetSession())
			assert.Equal(t, "maze", made.GetSpec().GetEnv())

			a = c.call("EnvService/Reset", &pb.ResetRequest{Session: made.GetSession(), Seed: 1})
			require.Equal(t, codes.OK, a.st.Code(), "%v", a.st.Proto())
			var turn pb.Turn
			c.unmarshal(a, 0, &turn)
			assert.Equal(t, "strategy_0", turn.GetNext())

			a = c.call("EnvService/CloseSession", &pb.CloseRequest{Session: made.GetSession()})
			require.Equal(t, codes.OK, a.st.Code(), "%v", a.st.Proto())
			a = c.call("EnvService/Reset", &pb.ResetRequest{Session: made.GetSession(), Seed: 1})
			assert.Equal(t, codes.NotFound, a.st.Code(), "closed: %v", a.st.Proto())

			a = c.call("EnvService/Make", &pb.MakeRequest{Env: "maze", Config: `{"nope": 1}`})
			require.Equal(t, codes.InvalidArgument, a.st.Code(), "%v", a.st.Proto())
			assert.Contains(t, a.st.Message(), "nope")
			if !c.grpcWeb() {
				assert.Equal(t, http.StatusBadRequest, a.httpStatus)
			}
			field, why := fieldViolation(t, a.st)
			assert.Equal(t, "config", field)
			assert.Contains(t, why, "nope")
		})
	}
}

// TestGatewayStreamWires watches a trial in each streaming form: its changes, then
// the end of the stream, and a Watch refused in the stream's end.
func TestGatewayStreamWires(t *testing.T) {
	srv := serveEnvsAndTrials(t)
	js := newJSONClient(t, srv, "")
	js.ok("TrialService/Start", `{"spec": {"id": "w", "env": "maze", "seed": "1", "maxTicks": "20"}}`)
	for _, ct := range []string{"application/connect+json", "application/connect+proto", "application/grpc-web+proto", "application/grpc-web-text"} {
		t.Run(ct, func(t *testing.T) {
			c := newWireClient(t, srv, ct)
			a := c.call("TrialService/Watch", &pb.WatchRequest{Ids: []string{"w"}})
			require.Equal(t, codes.OK, a.st.Code(), "%v", a.st.Proto())
			require.NotEmpty(t, a.msgs)
			var last pb.TrialStateChange
			c.unmarshal(a, len(a.msgs)-1, &last)
			assert.Equal(t, pb.TrialState_TRIAL_STATE_ENDED, last.GetState())
			assert.Equal(t, "w", last.GetTrial())
			require.Len(t, last.GetResult().GetEpisodes(), 1)

			a = c.call("TrialService/Watch", &pb.WatchRequest{Ids: []string{"nope"}})
			assert.Equal(t, codes.NotFound, a.st.Code(), "%v", a.st.Proto())
			assert.Contains(t, a.st.Message(), "nope")
			assert.Empty(t, a.msgs)
		})
	}
}

// TestGatewayTimeouts: a call's deadline from Connect-Timeout-Ms or grpc-timeout
// ends a Watch that would wait (a trial waiting for its client), and a malformed
// one is refused.
func TestGatewayTimeouts(t *testing.T) {
	srv := serveEnvsAndTrials(t)
	js := newJSONClient(t, srv, "")
	js.ok("TrialService/Start", `{"spec": {"id": "waits", "env": "maze", "seed": "1", "actors": {"strategy": {"client": {}}}}}`)
	defer js.ok("TrialService/Stop", `{"ids": ["waits"]}`)
	tests := []struct {
		contentType, header, value string
		want                       codes.Code
		message                    string
	}{
		{"application/connect+json", "Connect-Timeout-Ms", "50", codes.DeadlineExceeded, ""},
		{"application/grpc-web+proto", "Grpc-Timeout", "50m", codes.DeadlineExceeded, ""},
		{"application/connect+proto", "Connect-Timeout-Ms", "soon", codes.InvalidArgument, `Connect-Timeout-Ms "soon"`},
		{"application/grpc-web+proto", "Grpc-Timeout", "50", codes.InvalidArgument, `grpc-timeout "50"`},
		{"application/grpc-web+proto", "Grpc-Encoding", "gzip", codes.Unimplemented, `request compression "gzip"`},
		{"application/connect+json", "Connect-Content-Encoding", "gzip", codes.Unimplemented, `request compression "gzip"`},
		{"application/connect+json", "Connect-Protocol-Version", "2", codes.InvalidArgument, `Connect-Protocol-Version "2": want 1`},
	}
	for _, tt := range tests {
		t.Run(tt.contentType+" "+tt.header+" "+tt.value, func(t *testing.T) {
			c := newWireClient(t, srv, tt.contentType)
			c.headers[tt.header] = tt.value
			a := c.call("TrialService/Watch", &pb.WatchRequest{Ids: []string{"waits"}})
			assert.Equal(t, tt.want, a.st.Code(), "%v", a.st.Proto())
			assert.Contains(t, a.st.Message(), tt.message)
		})
	}
}

// TestGatewayRefusals: the checks of the JSON gateway hold in every form, each
// answered in the form's own way: the key before the body (the connection closed),
// the size limit, and content types a method does not take.
func TestGatewayRefusals(t *testing.T) {
	const key = "maze-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"maze": key})
	require.NoError(t, err)
	srv := serveEnvsAndTrials(t, remote.WithKeys(keys), remote.WithMaxMessageSize(1<<20))
	auth := "Authorization: Bearer " + key
	req := func(method, contentType string, length int, body string, headers ...string) string {
		return strings.Replace(post(method, length, body, headers...), "Content-Type: application/json", "Content-Type: "+contentType, 1)
	}
	for _, tt := range []struct {
		name, req string
		status    int
		header    map[string]string // the answer's headers start so
		answer    string            // in the body
		refused   bool              // the body is not read: the connection is closed
	}{
		{"gRPC-Web, no key, a body that never comes", req("EnvService/Make", "application/grpc-web+proto", 16<<20, "\x00"), 200,
			map[string]string{"Grpc-Status": "16", "Grpc-Message": "missing API key", "Content-Type": "application/grpc-web+proto"}, "", true},
		{"gRPC-Web text, too large", req("EnvService/Reset", "application/grpc-web-text", 100<<10, "AAAA", auth), 200,
			map[string]string{"Grpc-Status": "8", "Grpc-Message": "request body: 102400 bytes, more than the 87384 bytes that /baton.v1.EnvService/Reset takes (its requests hold names, ids and numbers only, in base64)"}, "", true},
		{"Connect stream, no key", req("TrialService/Watch", "application/connect+proto", 16<<20, "\x00"), 200,
			map[string]string{"Content-Type": "application/connect+proto"}, `{"error":{"code":"unauthenticated","message":"missing API key`, true},
		{"Connect binary, too large", req("EnvService/Make", "application/proto", 2<<20, "\x00", auth), 413,
			map[string]string{"Content-Type": "application/json"}, `"code":"resource_exhausted","message":"request body: 2097152 bytes, more than the 1048581 bytes`, true},
		{"a stream's content type for a unary method", req("EnvService/Envs", "application/connect+json", 2, "{}", auth), 415,
			map[string]string{"Accept-Post": "application/json, application/proto, application/grpc-web, application/grpc-web+proto, application/grpc-web-text, application/grpc-web-text+proto"},
			`"code":"invalid_argument","message":"content type \"application/connect+json\": send application/json or application/proto`, true},
		{"a unary content type for a stream", req("TrialService/Watch", "application/proto", 2, "{}", auth), 415, nil,
			`/baton.v1.TrialService/Watch is a stream: send application/connect+json or application/connect+proto (Connect), or application/grpc-web+proto`, true},
		{"gRPC-Web, no such method", req("EnvService/Dance", "application/grpc-web", 2, "{}", auth), 200,
			map[string]string{"Grpc-Status": "12"}, "", true},
		{"gRPC-Web, two messages", req("EnvService/Envs", "application/grpc-web", 10, "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", auth), 200,
			map[string]string{"Grpc-Status": "3", "Grpc-Message": "request: want one enveloped message (a flags byte, a 4-byte big-endian length, the message)"}, "", false},
		{"gRPC-Web, a compressed message", req("EnvService/Envs", "application/grpc-web", 5, "\x01\x00\x00\x00\x00", auth), 200,
			map[string]string{"Grpc-Status": "12", "Grpc-Message": "request: envelope flags 0x1: want 0 (an uncompressed message)"}, "", false},
		{"Connect binary, malformed", req("EnvService/Envs", "application/proto", 2, "\xff\xff", auth), 400,
			nil, `"code":"invalid_argument","message":"malformed request`, false},
		{"gRPC-Web, malformed", req("EnvService/Envs", "application/grpc-web", 7, "\x00\x00\x00\x00\x02\xff\xff", auth), 200,
			map[string]string{"Grpc-Status": "3", "Grpc-Message": "malformed request: proto:"}, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body, _, br := httpExchange(t, srv.target, tt.req)
			assert.Equal(t, tt.status, resp.StatusCode, body)
			for k, v := range tt.header {
				assert.True(t, strings.HasPrefix(resp.Header.Get(k), v), "%s: %q, want %q", k, resp.Header.Get(k), v)
			}
			if tt.answer != "" {
				assert.Contains(t, body, tt.answer)
			} else {
				assert.Empty(t, body)
			}
			assert.Equal(t, tt.refused, resp.Close, "a request whose body is not read closes its connection")
			if tt.refused {
				closedByServer(t, br)
			}
		})
	}
}

// TestEnvCloseAlias: CloseSession's former name, Close, still closes a session, over
// gRPC and the gateway.
func TestEnvCloseAlias(t *testing.T) {
	srv := serveEnvs(t, true)
	cc := rawConn(t, srv.target)
	api := pb.NewEnvServiceClient(cc)
	js := newJSONClient(t, srv, "")
	for _, over := range []string{"gRPC", "HTTP"} {
		t.Run(over, func(t *testing.T) {
			made, err := api.Make(t.Context(), &pb.MakeRequest{Env: "maze"})
			require.NoError(t, err)
			if over == "gRPC" {
				require.NoError(t, cc.Invoke(t.Context(), "/baton.v1.EnvService/Close", &pb.CloseRequest{Session: made.GetSession()}, &pb.CloseResponse{}))
			} else {
				js.ok("EnvService/Close", `{"session": "`+made.GetSession()+`"}`)
			}
			_, err = api.Reset(t.Context(), &pb.ResetRequest{Session: made.GetSession()})
			assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		})
	}
}

// TestRefusalDropsLateBody: a client that sends its body only once it has the
// answer to its headers (a refusal for want of a key) then sees the connection end
// cleanly, not reset: the server reads and drops the rest of a refused body before
// it closes the connection, as HTTP/1.1 clients that write the body after the
// headers (connect-node's gRPC-Web) need to read the answer at all.
func TestRefusalDropsLateBody(t *testing.T) {
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789"})
	require.NoError(t, err)
	srv := serveEnvs(t, true, remote.WithKeys(keys))
	for _, ct := range []string{"application/json", "application/grpc-web+proto"} {
		t.Run(ct, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.target)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(guard)))
			body := "\x00\x00\x00\x00\x00"
			_, err = io.WriteString(c, strings.Replace(post("EnvService/Envs", len(body), ""), "application/json", ct, 1))
			require.NoError(t, err)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, err)
			assert.True(t, resp.StatusCode == http.StatusUnauthorized || resp.Header.Get("Grpc-Status") == "16", "refused: %d %v", resp.StatusCode, resp.Header)
			assert.True(t, resp.Close)

			for i := range len(body) { // in writes of their own, as a client's writes may come
				_, err = io.WriteString(c, body[i:i+1])
				require.NoError(t, err, "byte %d of the body", i)
			}
			_, err = io.Copy(io.Discard, br)
			require.NoError(t, err, "the connection ends with EOF, not a reset")
		})
	}
}
