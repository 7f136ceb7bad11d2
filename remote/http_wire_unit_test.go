package remote

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestErrorEncodings checks the three encodings of a status with a detail: Connect's
// error object (details as type, unpadded base64 value and debug JSON), its
// end-of-stream message, and gRPC-Web's trailers.
func TestErrorEncodings(t *testing.T) {
	br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "config", Description: "unknown field \"nope\""}}}
	st, err := status.New(codes.InvalidArgument, "config: 100% wrong\n").WithDetails(br)
	require.NoError(t, err)
	detail := base64.RawStdEncoding.EncodeToString(st.Proto().GetDetails()[0].GetValue())

	want := `{"code":"invalid_argument","message":"config: 100% wrong\n","details":[{"type":"google.rpc.BadRequest","value":"` + detail +
		`","debug":{"fieldViolations":[{"field":"config","description":"unknown field \"nope\""}]}}]}`
	assert.JSONEq(t, want, string(errorJSON(st.Err())))
	assert.JSONEq(t, `{"error":`+want+`}`, string(endStreamJSON(st.Err())))
	assert.JSONEq(t, `{}`, string(endStreamJSON(nil)))
	assert.JSONEq(t, `{"code":"unknown","message":"plain"}`, string(errorJSON(status.Error(codes.Code(99), "plain"))), "a code Connect lacks is unknown")

	tr := string(trailersOf(st.Err()))
	assert.Contains(t, tr, "grpc-status: 3\r\ngrpc-message: config: 100%25 wrong%0A\r\ngrpc-status-details-bin: ")
	assert.Equal(t, "grpc-status: 0\r\n", string(trailersOf(nil)))
}

// TestDecodeBase64Chunks decodes gRPC-Web text bodies sent in one piece or in
// chunks each padded, and refuses what is not base64.
func TestDecodeBase64Chunks(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		fails          bool
	}{
		{"one chunk", base64.StdEncoding.EncodeToString([]byte("hello")), "hello", false},
		{"chunks each padded", base64.StdEncoding.EncodeToString([]byte("he")) + base64.StdEncoding.EncodeToString([]byte("llo!")), "hello!", false},
		{"no padding needed", base64.StdEncoding.EncodeToString([]byte("abc")) + base64.StdEncoding.EncodeToString([]byte("d")), "abcd", false},
		{"empty", "", "", false},
		{"unpadded tail", "aGVsbG8", "", true},
		{"not base64", "!!!!", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeBase64Chunks([]byte(tt.in))
			if tt.fails {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestGRPCTimeout parses grpc-timeout values and refuses malformed ones.
func TestGRPCTimeout(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"50m", 50 * time.Millisecond, true},
		{"2S", 2 * time.Second, true},
		{"1H", time.Hour, true},
		{"99999999H", maxTimeout, true},
		{"7n", 7, true},
		{"50", 0, false},
		{"m", 0, false},
		{"123456789S", 0, false},
		{"5x", 0, false},
		{"-5S", 0, false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := grpcTimeout(tt.in)
			if !tt.ok {
				assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestIncomingMetadata: a gateway call's metadata is its request's headers by
// lower-case name, "-bin" ones decoded, less its protocol's and Cookie.
func TestIncomingMetadata(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header http.Header
		want   metadata.MD
	}{
		{"keys and the caller's", http.Header{"Authorization": {"Bearer k"}, "X-Baton-Key": {"k2"}, "X-Trace": {"a", "b"}, "User-Agent": {"curl/8"}},
			metadata.MD{"authorization": {"Bearer k"}, "x-baton-key": {"k2"}, "x-trace": {"a", "b"}, "user-agent": {"curl/8"}}},
		{"protocol's left out", http.Header{"Content-Length": {"3"}, "Connect-Protocol-Version": {"1"}, "Connect-Timeout-Ms": {"9"},
			"Grpc-Timeout": {"1S"}, "Accept-Encoding": {"gzip"}, "Connection": {"close"}, "Te": {"trailers"}, "Cookie": {"s=1"}, "Content-Type": {"application/json"}},
			metadata.MD{"content-type": {"application/json"}}},
		{"binary, padded or not", http.Header{"X-Blob-Bin": {base64.StdEncoding.EncodeToString([]byte("\x00\xff")), base64.RawStdEncoding.EncodeToString([]byte("ab"))}},
			metadata.MD{"x-blob-bin": {"\x00\xff", "ab"}}},
		{"binary, malformed dropped", http.Header{"X-Blob-Bin": {"!!!"}}, metadata.MD{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, incomingMetadata(tt.header))
		})
	}
}
