package remote

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// wireKind is how the gateway frames a call over HTTP.
type wireKind int

const (
	// connectUnary is the Connect protocol's unary call: the body is the message;
	// the answer is the message, or a JSON error with an HTTP status.
	connectUnary wireKind = 1 + iota
	// connectStream is Connect's streaming call: enveloped messages (a flags byte, a
	// 4-byte big-endian length, the message), then an end-of-stream message of flag
	// 2, JSON, with the error if any; the HTTP status is 200.
	connectStream
	// grpcWeb is gRPC-Web, for unary calls and server streams alike: gRPC's
	// envelopes in the body, the status in a last frame of flag 0x80 that holds
	// trailers as HTTP/1.1 header lines, or in the headers of an answer that carries
	// no message.
	grpcWeb
)

// The flags of the frames that end a streaming answer.
const (
	connectEndStream = 0x02
	grpcWebTrailers  = 0x80
)

// wire is the protocol and codec of one call, from its content type.
type wire struct {
	kind wireKind
	// binary: the messages are protobuf's binary form, not protojson's.
	binary bool
	// text: gRPC-Web's text form: the body, both ways, is base64.
	text bool
	// contentType is the answer's.
	contentType string
}

// defaultWire answers the requests whose content type names no form the method
// takes: Connect's unary JSON errors.
var defaultWire = wire{kind: connectUnary, contentType: "application/json"}

// mediaType is a Content-Type's media type, in lower case, without parameters.
func mediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.TrimSpace(strings.ToLower(mt))
}

// wireOf returns the wire of a request's Content-Type, and false (with
// defaultWire) when it names none.
func wireOf(contentType string) (wire, bool) {
	switch mt := mediaType(contentType); mt {
	case "application/json":
		return defaultWire, true
	case "application/proto":
		return wire{kind: connectUnary, binary: true, contentType: mt}, true
	case "application/connect+json":
		return wire{kind: connectStream, contentType: mt}, true
	case "application/connect+proto":
		return wire{kind: connectStream, binary: true, contentType: mt}, true
	case "application/grpc-web", "application/grpc-web+proto":
		return wire{kind: grpcWeb, binary: true, contentType: mt}, true
	case "application/grpc-web-text", "application/grpc-web-text+proto":
		return wire{kind: grpcWeb, binary: true, text: true, contentType: mt}, true
	}
	return defaultWire, false
}

// takes reports whether m is called in this wire: Connect's unary forms for unary
// methods, its streaming forms for streams, gRPC-Web for both.
func (wi wire) takes(m httpMethod) bool {
	switch wi.kind {
	case connectUnary:
		return m.unary != nil
	case connectStream:
		return m.stream != nil
	}
	return true
}

// wantContentType says which content types m takes, for the answer to another.
func wantContentType(m httpMethod) string {
	if m.stream != nil {
		return m.full + " is a stream: send application/connect+json or application/connect+proto (Connect), or application/grpc-web+proto or application/grpc-web-text (gRPC-Web)"
	}
	return "send application/json or application/proto (Connect), or application/grpc-web+proto or application/grpc-web-text (gRPC-Web)"
}

// acceptPost is the Accept-Post header of a 415 answer: the content types m takes.
func acceptPost(m httpMethod) string {
	if m.stream != nil {
		return "application/connect+json, application/connect+proto, application/grpc-web, application/grpc-web+proto, application/grpc-web-text, application/grpc-web-text+proto"
	}
	return "application/json, application/proto, application/grpc-web, application/grpc-web+proto, application/grpc-web-text, application/grpc-web-text+proto"
}

// maxTimeout bounds the deadlines that clients ask for, as grpc-go does with the
// largest duration.
const maxTimeout = time.Duration(1<<63 - 1)

// checkHeaders checks the headers of a call in this wire that the gateway reads:
// the Connect protocol's version, the compression of the request (none is
// implemented), and the call's timeout (Connect-Timeout-Ms; gRPC-Web's
// grpc-timeout), which it returns (0 for none).
func (wi wire) checkHeaders(h http.Header) (time.Duration, error) {
	var enc, timeout string
	switch wi.kind {
	case connectUnary, connectStream:
		if v := h.Get("Connect-Protocol-Version"); v != "" && v != "1" {
			return 0, status.Errorf(codes.InvalidArgument, "Connect-Protocol-Version %q: want 1", v)
		}
		enc = h.Get("Content-Encoding")
		if wi.kind == connectStream {
			enc = h.Get("Connect-Content-Encoding")
		}
		timeout = h.Get("Connect-Timeout-Ms")
	case grpcWeb:
		enc = h.Get("Grpc-Encoding")
	}
	if enc != "" && enc != "identity" {
		return 0, status.Errorf(codes.Unimplemented, "request compression %q: send uncompressed requests (identity)", enc)
	}
	if wi.kind == grpcWeb {
		if v := h.Get("Grpc-Timeout"); v != "" {
			return grpcTimeout(v)
		}
		return 0, nil
	}
	if timeout == "" {
		return 0, nil
	}
	ms, err := strconv.ParseUint(timeout, 10, 64)
	if err != nil || len(timeout) > 10 {
		return 0, status.Errorf(codes.InvalidArgument, "Connect-Timeout-Ms %q: want a positive integer of at most 10 digits", timeout)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// grpcTimeout parses a grpc-timeout header: at most 8 digits and a unit (H, M, S,
// m, u, n).
func grpcTimeout(v string) (time.Duration, error) {
	bad := status.Errorf(codes.InvalidArgument, "grpc-timeout %q: want at most 8 digits and a unit (H, M, S, m, u or n)", v)
	if len(v) < 2 || len(v) > 9 {
		return 0, bad
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 64)
	if err != nil {
		return 0, bad
	}
	unit := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second, 'm': time.Millisecond, 'u': time.Microsecond, 'n': time.Nanosecond}[v[len(v)-1]]
	if unit == 0 {
		return 0, bad
	}
	if n > uint64(maxTimeout/unit) {
		return maxTimeout, nil
	}
	return time.Duration(n) * unit, nil
}

// request returns the request message in a body of this wire: the body of a
// Connect unary call, the one enveloped message of the others.
func (wi wire) request(body []byte) ([]byte, error) {
	if wi.kind == connectUnary {
		return body, nil
	}
	if wi.text {
		var err error
		if body, err = decodeBase64Chunks(body); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "request: gRPC-Web text: %v", err)
		}
	}
	if len(body) < 5 || int64(binary.BigEndian.Uint32(body[1:5])) != int64(len(body)-5) {
		return nil, status.Error(codes.InvalidArgument, "request: want one enveloped message (a flags byte, a 4-byte big-endian length, the message)")
	}
	if body[0] != 0 {
		return nil, status.Errorf(codes.Unimplemented, "request: envelope flags %#x: want 0 (an uncompressed message)", body[0])
	}
	return body[5:], nil
}

// decodeBase64Chunks decodes gRPC-Web's text body: base64 with padding, in chunks
// that each end with their own padding.
func decodeBase64Chunks(b []byte) ([]byte, error) {
	out := make([]byte, 0, base64.StdEncoding.DecodedLen(len(b)))
	for len(b) > 0 {
		// A chunk ends after the first group of 4 that holds padding, or at the end.
		end := len(b)
		for i := 0; i+4 <= len(b); i += 4 {
			if bytes.IndexByte(b[i:i+4], '=') >= 0 {
				end = i + 4
				break
			}
		}
		n, err := base64.StdEncoding.Decode(out[len(out):cap(out)], b[:end])
		if err != nil {
			return nil, err
		}
		out = out[:len(out)+n]
		b = b[end:]
	}
	return out, nil
}

// base64Len is the length of n bytes in padded base64.
func base64Len(n int64) int64 { return (n + 2) / 3 * 4 }

var (
	jsonIn = protojson.UnmarshalOptions{}
	// jsonOut writes every field, zero values too ("tick": "0"), for people who read
	// the answers; Connect clients accept both forms.
	jsonOut = protojson.MarshalOptions{EmitUnpopulated: true}
)

// decodeMessage decodes a request message of this wire into v. Binary messages go
// through the server's gRPC codec, which keeps a malformed one's error for the
// handler (decodingDesc, decodingStream) to answer, as it does for gRPC; an empty
// JSON body is the empty message.
func (s *Server) decodeMessage(wi wire, b []byte, v any) error {
	msg, ok := v.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "request %T is not a protobuf message", v)
	}
	if wi.binary {
		return s.codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, v)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := jsonIn.Unmarshal(b, msg); err != nil {
		return status.Errorf(codes.InvalidArgument, "request JSON: %v", err)
	}
	return nil
}

// encodeMessage encodes a response message in this wire: with the server's gRPC
// codec, or protojson.
func (s *Server) encodeMessage(wi wire, v any) ([]byte, error) {
	if wi.binary {
		bs, err := s.codec.Marshal(v)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "response: %v", err)
		}
		defer bs.Free()
		return bs.Materialize(), nil
	}
	msg, ok := v.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "response %T is not a protobuf message", v)
	}
	b, err := jsonOut.Marshal(msg)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "response JSON: %v", err)
	}
	return b, nil
}

// fail answers a call that ended with err before anything of its answer was
// written: Connect's unary JSON error with the HTTP status httpCode (0: the one of
// err's code), Connect's end-of-stream message, or gRPC-Web's status in the
// headers (a trailers-only answer).
func (wi wire) fail(w http.ResponseWriter, httpCode int, err error) {
	switch wi.kind {
	case connectStream:
		_ = newFrameWriter(w, wi).frame(connectEndStream, endStreamJSON(err))
	case grpcWeb:
		h := w.Header()
		h.Set("Content-Type", wi.contentType)
		for _, kv := range statusFields(err) {
			h.Set(kv[0], kv[1])
		}
		w.WriteHeader(http.StatusOK)
	default:
		if httpCode == 0 {
			httpCode = connectCodeOf(status.Code(err)).http
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(httpCode)
		_, _ = w.Write(errorJSON(err))
	}
}

// frameWriter writes the frames of a Connect stream or a gRPC-Web answer, flushing
// each (base64 for gRPC-Web's text form, each frame its own padded chunk); the
// headers go with the first.
type frameWriter struct {
	w       http.ResponseWriter
	wi      wire
	flush   func()
	started bool
}

func newFrameWriter(w http.ResponseWriter, wi wire) *frameWriter {
	fw := &frameWriter{w: w, wi: wi}
	if f, ok := w.(http.Flusher); ok {
		fw.flush = f.Flush
	}
	return fw
}

func (fw *frameWriter) frame(flags byte, b []byte) error {
	if !fw.started {
		fw.started = true
		fw.w.Header().Set("Content-Type", fw.wi.contentType)
		fw.w.WriteHeader(http.StatusOK)
	}
	f := appendFrame(nil, flags, b)
	if fw.wi.text {
		f = base64.StdEncoding.AppendEncode(nil, f)
	}
	if _, err := fw.w.Write(f); err != nil {
		return err
	}
	if fw.flush != nil {
		fw.flush()
	}
	return nil
}

// whole writes the whole answer of a unary call at once, with its length: the
// frames, the whole in one base64 chunk for gRPC-Web's text form.
func (fw *frameWriter) whole(f []byte) {
	if fw.wi.text {
		f = base64.StdEncoding.AppendEncode(nil, f)
	}
	fw.started = true
	fw.w.Header().Set("Content-Type", fw.wi.contentType)
	fw.w.Header().Set("Content-Length", strconv.Itoa(len(f)))
	fw.w.WriteHeader(http.StatusOK)
	_, _ = fw.w.Write(f)
}

// appendFrame appends an envelope of b with flags to dst.
func appendFrame(dst []byte, flags byte, b []byte) []byte {
	dst = append(dst, flags, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(len(b)))
	return append(dst, b...)
}

// connectCode is the Connect protocol's name of a gRPC code, and its HTTP status.
type connectCode struct {
	name string
	http int
}

// connectCodes are the Connect codes of gRPC's.
var connectCodes = map[codes.Code]connectCode{
	codes.Canceled:           {"canceled", 499},
	codes.Unknown:            {"unknown", 500},
	codes.InvalidArgument:    {"invalid_argument", 400},
	codes.DeadlineExceeded:   {"deadline_exceeded", 504},
	codes.NotFound:           {"not_found", 404},
	codes.AlreadyExists:      {"already_exists", 409},
	codes.PermissionDenied:   {"permission_denied", 403},
	codes.ResourceExhausted:  {"resource_exhausted", 429},
	codes.FailedPrecondition: {"failed_precondition", 400},
	codes.Aborted:            {"aborted", 409},
	codes.OutOfRange:         {"out_of_range", 400},
	codes.Unimplemented:      {"unimplemented", 501},
	codes.Internal:           {"internal", 500},
	codes.Unavailable:        {"unavailable", 503},
	codes.DataLoss:           {"data_loss", 500},
	codes.Unauthenticated:    {"unauthenticated", 401},
}

// connectCodeOf returns the Connect code of c (unknown for a code it lacks).
func connectCodeOf(c codes.Code) connectCode {
	if cc, ok := connectCodes[c]; ok {
		return cc
	}
	return connectCodes[codes.Unknown]
}

// connectError is the Connect protocol's error object.
type connectError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details []connectDetail `json:"details,omitempty"`
}

// connectDetail is an error detail of the Connect protocol: the message's full
// name, its protobuf bytes in base64 (unpadded), and its protojson form for people.
type connectDetail struct {
	Type  string          `json:"type"`
	Value string          `json:"value"`
	Debug json.RawMessage `json:"debug,omitempty"`
}

// errorJSON is the Connect error object of err: {"code": "invalid_argument",
// "message": ..., "details": [{"type": "google.rpc.BadRequest", "value": ...}]}.
func errorJSON(err error) []byte {
	st := status.Convert(err)
	ce := connectError{Code: connectCodeOf(st.Code()).name, Message: st.Message()}
	for _, d := range st.Proto().GetDetails() {
		_, name, _ := strings.Cut(d.GetTypeUrl(), "/")
		cd := connectDetail{Type: name, Value: base64.RawStdEncoding.EncodeToString(d.GetValue())}
		if m, err := d.UnmarshalNew(); err == nil {
			if b, err := protojson.Marshal(m); err == nil {
				cd.Debug = b
			}
		}
		ce.Details = append(ce.Details, cd)
	}
	b, _ := json.Marshal(ce)
	return b
}

// endStreamJSON is Connect's end-of-stream message: {} or {"error": {...}}.
func endStreamJSON(err error) []byte {
	if err == nil {
		return []byte("{}")
	}
	return fmt.Appendf(nil, `{"error":%s}`, errorJSON(err))
}

// statusFields are the status of err as gRPC sends it in trailers: grpc-status,
// grpc-message (percent-encoded) when not empty, and grpc-status-details-bin (the
// google.rpc.Status, base64) when the status has details.
func statusFields(err error) [][2]string {
	st := status.Convert(err)
	f := [][2]string{{"grpc-status", strconv.Itoa(int(st.Code()))}}
	if msg := st.Message(); msg != "" {
		f = append(f, [2]string{"grpc-message", percentEncode(msg)})
	}
	if len(st.Proto().GetDetails()) > 0 {
		if b, err := proto.Marshal(st.Proto()); err == nil {
			f = append(f, [2]string{"grpc-status-details-bin", base64.RawStdEncoding.EncodeToString(b)})
		}
	}
	return f
}

// trailersOf is gRPC-Web's trailers frame of the status of err (nil for OK).
func trailersOf(err error) []byte {
	var b []byte
	for _, kv := range statusFields(err) {
		b = fmt.Appendf(b, "%s: %s\r\n", kv[0], kv[1])
	}
	return b
}

// percentEncode encodes a grpc-message as gRPC does: bytes outside printable
// ASCII, and '%', as %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c < ' ' || c > '~' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
