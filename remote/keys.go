package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// MinKeyLen is the shortest API key accepted, in bytes.
const MinKeyLen = 16

// The metadata a client presents its key in: "authorization: Bearer KEY", or
// "x-baton-key: KEY".
const (
	authorizationHeader = "authorization"
	keyHeader           = "x-baton-key"
	bearerPrefix        = "Bearer "
)

// Keys are API keys by name: the name of a served agent for an agent server, of an
// environment for an environment or trial server. A server that has keys refuses
// every call whose key does not grant the name it addresses, so a leaked key exposes
// one agent or environment only: a missing key, or one the server does not know,
// gets UNAUTHENTICATED and learns nothing more; a key the server knows gets
// PERMISSION_DENIED for a name it does not grant, naming the names it grants. A
// default key, one given without a name, grants every name that has no key of its
// own; a client uses it for every server it calls.
//
// A key file holds one entry per line: NAME=KEY, or a bare KEY for the default
// key. Blank lines and lines starting with # are ignored; white space around names
// and keys is trimmed. Keys are at least MinKeyLen bytes of printable ASCII with no
// white space; NewKey makes good ones.
//
//	# baton keys
//	strategy=3q2-7wEXAMPLEonlyXq5S1mYp0Qe4Hj8
//	motion=Zy0t-EXAMPLEonlyN4wq9R2uVb7kLd1
//
// The zero Keys has no key: a server with it accepts every call. Keys are
// immutable and safe for concurrent use.
type Keys struct {
	names []string // sorted
	keys  [][]byte // keys[i] is the key of names[i]
	def   []byte   // the default key, or nil
}

// NewKey returns a new random key: 32 bytes from crypto/rand, base64url-encoded.
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("remote: new key: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// NewKeys returns the keys of a map from names to keys; the name "" is the default
// key. Every problem is reported at once, wrapping ErrConfig.
func NewKeys(byName map[string]string) (Keys, error) {
	var k Keys
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		key := byName[name]
		if err := checkKey(key); err != "" {
			label := "the default key"
			if name != "" {
				label = "the key of " + name
			}
			problems = append(problems, label+" "+err)
			continue
		}
		if name == "" {
			k.def = []byte(key)
			continue
		}
		if strings.ContainsFunc(name, unicode.IsSpace) {
			problems = append(problems, fmt.Sprintf("name %q has white space", name))
			continue
		}
		k.names = append(k.names, name)
		k.keys = append(k.keys, []byte(key))
	}
	if len(problems) > 0 {
		return Keys{}, fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return k, nil
}

func checkKey(key string) string {
	if len(key) < MinKeyLen {
		return fmt.Sprintf("is %d bytes long, want at least %d", len(key), MinKeyLen)
	}
	for _, c := range []byte(key) {
		if c <= ' ' || c > '~' {
			return "holds a byte that is not printable ASCII or is white space"
		}
	}
	return ""
}

// ParseKeys reads keys in the key file format (see Keys). Every problem is reported
// at once, by line, wrapping ErrConfig; the keys themselves never appear in errors.
func ParseKeys(data []byte) (Keys, error) {
	byName := map[string]string{}
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<16)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, key, ok := strings.Cut(text, "=")
		if !ok {
			name, key = "", text
		}
		name, key = strings.TrimSpace(name), strings.TrimSpace(key)
		if ok && name == "" {
			problems = append(problems, fmt.Sprintf("line %d: empty name before '='", line))
			continue
		}
		if _, dup := byName[name]; dup {
			what := "the default key"
			if name != "" {
				what = "a key for " + name
			}
			problems = append(problems, fmt.Sprintf("line %d: %s is given twice", line, what))
			continue
		}
		if err := checkKey(key); err != "" {
			problems = append(problems, fmt.Sprintf("line %d: the key %s", line, err))
			continue
		}
		byName[name] = key
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("line %d: %v", line+1, err))
	}
	if len(problems) > 0 {
		return Keys{}, fmt.Errorf("%w: key file: %s", ErrConfig, strings.Join(problems, "; "))
	}
	if len(byName) == 0 {
		return Keys{}, fmt.Errorf("%w: key file: no key", ErrConfig)
	}
	return NewKeys(byName)
}

// ReadKeys reads a key file (see Keys).
func ReadKeys(path string) (Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Keys{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	k, err := ParseKeys(data)
	if err != nil {
		return Keys{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Empty reports whether there is no key at all.
func (k Keys) Empty() bool { return len(k.names) == 0 && k.def == nil }

// Names returns the names that have a key of their own, sorted.
func (k Keys) Names() []string { return slices.Clone(k.names) }

// For returns the key a client presents to the server of name: its own key, or the
// default key. ok is false when there is neither.
func (k Keys) For(name string) (key string, ok bool) {
	if i, found := slices.BinarySearch(k.names, name); found {
		return string(k.keys[i]), true
	}
	if k.def != nil {
		return string(k.def), true
	}
	return "", false
}

// Check reports what key, presented by a caller, grants for name, as the server's
// interceptors judge a call: nil when it grants name (its own key, or the default key
// when name has none; every key when there are no keys), an error wrapping
// ErrUnauthenticated for a key that is none of the keys, and one wrapping
// ErrPermissionDenied for a key that grants other names only. It compares key with
// every key in constant time. Handlers served beside the services
// (WithHTTPHandler) check their callers with it.
func (k *Keys) Check(key, name string) error {
	if k.Empty() {
		return nil
	}
	g := k.grantOf([]byte(key))
	switch {
	case !g.any():
		return fmt.Errorf("%w: no key, or a key this server does not know", ErrUnauthenticated)
	case !g.allows(name):
		return fmt.Errorf("%w: the key does not grant %s", ErrPermissionDenied, name)
	}
	return nil
}

// grant is what a presented key grants: which named keys it matches, and whether it
// is the default key. It is computed once per call, comparing the presented key with
// every key in constant time, without stopping at a match, so that the time taken
// tells nothing about which key matched or how much of one.
type grant struct {
	keys    *Keys
	matched []bool // per name
	def     bool
	open    bool // the server has no keys: everything is granted
}

func (k *Keys) grantOf(presented []byte) grant {
	g := grant{keys: k, matched: make([]bool, len(k.names))}
	for i, key := range k.keys {
		g.matched[i] = subtle.ConstantTimeCompare(presented, key) == 1
	}
	if k.def != nil {
		g.def = subtle.ConstantTimeCompare(presented, k.def) == 1
	}
	return g
}

// any reports whether the key matched some key.
func (g *grant) any() bool {
	if g.open || g.def {
		return true
	}
	return slices.Contains(g.matched, true)
}

// allows reports whether the key grants name: its own key, or the default key when
// name has none.
func (g *grant) allows(name string) bool {
	if g.open {
		return true
	}
	if i, found := slices.BinarySearch(g.keys.names, name); found {
		return g.matched[i]
	}
	return g.def
}

// usable returns the names of served that the key grants, in their order.
func (g *grant) usable(served []string) []string {
	var out []string
	for _, n := range served {
		if g.allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// grantsAll reports whether the key grants every name there may be: the server
// has no keys, or a default key and no key of a name.
func (g *grant) grantsAll() bool {
	return g.open || (g.def && len(g.keys.names) == 0)
}

// granted returns what the key grants among served, the names the service serves,
// or, when the service cannot list them (nil), the names the key is the key of:
// nothing the key does not grant, so that a caller learns no name it has no key
// for. kind names what the names are ("agent", "environment").
func (g *grant) granted(kind string, served []string) []string {
	if served != nil {
		return g.usable(served)
	}
	var usable []string
	for i, n := range g.keys.names {
		if g.matched[i] {
			usable = append(usable, n)
		}
	}
	if g.def {
		usable = append(usable, "any "+kind+" without a key of its own")
	}
	return usable
}

// denied is the PERMISSION_DENIED status of a key that the server knows but that
// does not grant name, a thing of kind ("agent", "environment"). It names what the
// key grants (see granted).
func (g *grant) denied(kind, name string, served []string) error {
	grants := "it grants no " + kind + " this server serves"
	if usable := g.granted(kind, served); len(usable) > 0 {
		grants = "it grants: " + strings.Join(usable, ", ")
	}
	return status.Errorf(codes.PermissionDenied, "the API key does not grant %s %q (%s)", kind, name, grants)
}

// deniedTrial is the PERMISSION_DENIED status of a key that does not grant the
// environment of trial id, or of a key that does not grant every environment when
// there is no such trial: the same answer either way, which names the
// environments the key grants and neither the trial's nor whether it exists.
func (g *grant) deniedTrial(id string) error {
	grants := "it grants the trials of no environment"
	if usable := g.granted("environment", nil); len(usable) > 0 {
		grants = "it grants the trials of: " + strings.Join(usable, ", ")
	}
	return status.Errorf(codes.PermissionDenied, "the API key does not grant trial %q (%s)", id, grants)
}

type grantKey struct{}

// openGrant is the grant of every call to a server without keys. It is never
// written.
var openGrant = &grant{open: true}

// grantFrom returns the grant of the call's key; every name is granted outside an
// authenticated server.
func grantFrom(ctx context.Context) *grant {
	if g, ok := ctx.Value(grantKey{}).(*grant); ok {
		return g
	}
	return openGrant
}

// presentedKey reads the key a call presents, from its metadata.
func presentedKey(md metadata.MD) ([]byte, bool) {
	for _, v := range md.Get(authorizationHeader) {
		if key, ok := strings.CutPrefix(v, bearerPrefix); ok {
			return []byte(strings.TrimSpace(key)), true
		}
	}
	if v := md.Get(keyHeader); len(v) > 0 {
		return []byte(strings.TrimSpace(v[0])), true
	}
	return nil, false
}

// open methods need no key: health checks and reflection.
func openMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// scoper names what a request addresses, for the key check: the served agent, the
// environment, the environment of a session or of trials. No name (nil) means
// nothing to check: the handler answers what is wrong (an unknown session is
// NOT_FOUND, which tells nothing, as the session's id is unguessable). For a
// request that addresses trials (trialIDs), the names are the environments of its
// trials in order, "" for a trial that does not exist.
type scoper func(fullMethod string, req any) (names []string, err error)

// authenticate checks the call's key against keys and returns the context carrying
// its grant. It fails with UNAUTHENTICATED for a missing key or one that matches no
// key, and says nothing more, so that a caller without a valid key learns nothing
// of what the server serves; which names the key grants is checked per request by
// check. A context that carries a grant already (the gRPC tap and the HTTP gateway
// check the key on the headers, before the request is read) is taken as it is.
func authenticate(ctx context.Context, keys *Keys) (context.Context, *grant, error) {
	if keys.Empty() {
		return ctx, openGrant, nil
	}
	if g, ok := ctx.Value(grantKey{}).(*grant); ok {
		return ctx, g, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	g, err := keys.authenticate(md)
	if err != nil {
		return nil, nil, err
	}
	return context.WithValue(ctx, grantKey{}, g), g, nil
}

// authenticate returns the grant of the key in a call's metadata (its headers):
// UNAUTHENTICATED for a missing key or one that matches no key.
func (k *Keys) authenticate(md metadata.MD) (*grant, error) {
	if k.Empty() {
		return openGrant, nil
	}
	presented, ok := presentedKey(md)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, `missing API key: send the metadata "authorization: Bearer KEY"`)
	}
	g := k.grantOf(presented)
	if !g.any() {
		return nil, status.Error(codes.Unauthenticated, "invalid API key")
	}
	return &g, nil
}

// kindOf names what the names of a method's service are, for messages.
func kindOf(fullMethod string) string {
	if strings.HasPrefix(fullMethod, "/"+pb.AgentService_ServiceDesc.ServiceName+"/") {
		return "agent"
	}
	if strings.HasPrefix(fullMethod, "/"+pb.ModelService_ServiceDesc.ServiceName+"/") {
		return "model"
	}
	return "environment"
}

// check checks that g grants every name req addresses: PERMISSION_DENIED, naming
// what g grants, for the first it does not. It returns the names.
func (s *Server) check(g *grant, scope scoper, fullMethod string, req any) ([]string, error) {
	if g.open || scope == nil {
		return nil, nil
	}
	names, err := scope(fullMethod, req)
	if err != nil {
		return nil, err
	}
	// A trial is named by its id: a key learns nothing of the trials outside its
	// scope, not even whether they exist.
	ids := trialIDs(req)
	for i, n := range names {
		switch {
		case ids != nil && n == "" && g.grantsAll():
			// No such trial: the handler says so.
		case ids != nil && (n == "" || !g.allows(n)):
			return nil, g.deniedTrial(ids[i])
		case !g.allows(n):
			return nil, g.denied(kindOf(fullMethod), n, s.servedNames(fullMethod))
		}
	}
	return names, nil
}

// authedStream is a stream of an authenticated call: every message received is
// checked against the call's grant.
type authedStream struct {
	grpc.ServerStream
	ctx    context.Context
	srv    *Server
	grant  *grant
	scope  scoper // the service's
	method string
	// last is the agent name of the last request whose single name was granted, so
	// that a stream's requests for one agent are checked once.
	last    string
	checked bool
}

func (s *authedStream) Context() context.Context { return s.ctx }

func (s *authedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if s.grant.open || s.scope == nil {
		return nil
	}
	r, named := m.(agentNamer)
	if named && s.checked && r.GetAgent() == s.last {
		return nil
	}
	names, err := s.srv.check(s.grant, s.scope, s.method, m)
	if err != nil {
		return err
	}
	if named && len(names) == 1 {
		s.last, s.checked = r.GetAgent(), true
	}
	return nil
}

// keyCredentials presents a key on every call, as "authorization: Bearer KEY".
type keyCredentials struct {
	key string
}

func (c keyCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{authorizationHeader: bearerPrefix + c.key}, nil
}

// RequireTransportSecurity returns false: keys go over plaintext too, since servers
// listen on loopback by default; use TLS (WithTLS) beyond it.
func (c keyCredentials) RequireTransportSecurity() bool { return false }
