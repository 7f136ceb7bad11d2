package remote_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonClient calls a server's JSON gateway over HTTP/1.1, as curl does.
type jsonClient struct {
	t    *testing.T
	base string
	key  string
	hc   *http.Client
}

func newJSONClient(t *testing.T, srv *server, key string) *jsonClient {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &jsonClient{t: t, base: "http://" + srv.target, key: key, hc: &http.Client{Transport: tr}}
}

// call posts body to /baton.v1.SERVICE/METHOD and returns the status and the JSON
// answer.
func (c *jsonClient) call(method, body string) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.base+"/baton.v1."+method, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	var out map[string]any
	require.NoError(c.t, json.Unmarshal(b, &out), string(b))
	return resp.StatusCode, out
}

// ok is call for a call that must succeed.
func (c *jsonClient) ok(method, body string) map[string]any {
	c.t.Helper()
	code, out := c.call(method, body)
	require.Equal(c.t, http.StatusOK, code, "%s %s: %v", method, body, out)
	return out
}

// num reads a JSON number or a protojson int64 string.
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case nil:
		return 0
	case float64:
		return int64(n)
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		require.NoError(t, err)
		return i
	}
	t.Fatalf("not a number: %v", v)
	return 0
}

// turn is a client actor's pending turn, read from PendingResponse JSON.
type turn struct {
	acting  bool
	state   string
	tick    int64
	obs     []float32
	mask    []bool
	names   []string
	allowed map[string]bool
}

func readTurn(t *testing.T, p map[string]any) turn {
	t.Helper()
	tu := turn{state: p["state"].(string), allowed: map[string]bool{}}
	tu.acting, _ = p["acting"].(bool)
	tu.tick = num(t, p["tick"])
	obs, _ := p["observation"].([]any)
	for _, v := range obs {
		tu.obs = append(tu.obs, float32(v.(float64)))
	}
	actions, _ := p["actions"].([]any)
	for _, a := range actions {
		m := a.(map[string]any)
		allowed, _ := m["allowed"].(bool)
		tu.names = append(tu.names, m["name"].(string))
		tu.mask = append(tu.mask, allowed)
		tu.allowed[m["name"].(string)] = allowed
	}
	return tu
}

// serveLoggedTrials serves trials over TCP with one worker whose events go to a
// dataset in dir.
func serveLoggedTrials(t *testing.T, dir string, opts ...remote.ServerOption) (*server, func()) {
	t.Helper()
	ds, err := datalog.NewDataset(dir)
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	ctrl, err := runners.NewController(testRegistry(t), runners.WithWorkers(1), runners.WithSinks(w))
	require.NoError(t, err)
	s := newServer(t, opts...)
	require.NoError(t, s.AddTrials(ctrl))
	srv := start(t, s, true)
	return srv, func() {
		require.NoError(t, srv.stop())
		require.NoError(t, ds.Close())
	}
}

// TestJSONSessionClientActor is a curl-like session: a maze trial whose strategy
// agent a client plays over JSON/HTTP, acting (with the oracle's choices) to the
// goal, with a reward for a past tick from a person; the log keeps the reward at
// that tick with its source.
func TestJSONSessionClientActor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789"})
	require.NoError(t, err)
	srv, stop := serveLoggedTrials(t, dir, remote.WithKeys(keys))
	c := newJSONClient(t, srv, "maze-key-0123456789")
	oa := oracleAgent(t)
	oracle := oa.Policy
	if oracle == nil {
		oracle, err = oa.New()
		require.NoError(t, err)
	}

	started := c.ok("TrialService/Start", `{"spec": {"id": "walk", "env": "maze", "seed": "3",
		"actors": {"strategy": {"client": {}}}}}`)
	assert.Equal(t, []any{"walk"}, started["ids"])

	var ticks []int64
	rewarded := false
	first := "" // the first action, sent with a message to the motion agent
	for {
		tu := readTurn(t, c.ok("TrialService/Pending", `{"trial": "walk", "agent": "strategy", "waitMs": "10000"}`))
		if !tu.acting {
			require.Equal(t, "TRIAL_STATE_ENDED", tu.state)
			break
		}
		require.Equal(t, "TRIAL_STATE_RUNNING", tu.state)
		assert.Equal(t, []string{"UP", "RIGHT", "DOWN", "LEFT"}, tu.names)
		ticks = append(ticks, tu.tick)
		if len(ticks) == 3 && !rewarded {
			// The person rewards the step that scored the first decision, reported
			// at the second turn's tick.
			c.ok("TrialService/Reward", `{"trial": "walk", "agentId": "strategy_0", "episode": "0", "tick": "`+
				strconv.FormatInt(ticks[1], 10)+`", "value": 1.5, "source": "human"}`)
			rewarded = true
		}
		raw, err := oracle.Act(t.Context(), tu.obs, tu.mask)
		require.NoError(t, err)
		name := tu.names[raw.Int]
		msgs := ""
		if len(ticks) == 1 {
			msgs = `, "messages": [{"to": "motion", "payload": "go ` + name + `"}]`
		}
		c.ok("TrialService/ClientAct", `{"trial": "walk", "agent": "strategy", "tick": "`+strconv.FormatInt(tu.tick, 10)+`", "name": "`+name+`"`+msgs+`}`)
		if len(ticks) == 1 {
			first = name
		}
	}
	require.True(t, rewarded, "the episode took %d turns", len(ticks))

	list := c.ok("TrialService/List", `{}`)
	trials := list["trials"].([]any)
	require.Len(t, trials, 1)
	assert.Equal(t, "TRIAL_STATE_ENDED", trials[0].(map[string]any)["state"])
	stop()

	l, err := datalog.Open(dir)
	require.NoError(t, err)
	retro, err := l.Retro()
	require.NoError(t, err)
	require.Len(t, retro, 1)
	assert.Equal(t, "human", retro[0].Source)
	assert.Equal(t, "strategy_0", retro[0].AgentID)
	assert.Equal(t, int(ticks[1]), retro[0].Tick)
	assert.InDelta(t, 1.5, retro[0].Value, 1e-6)
	var found bool
	for r, err := range l.Rows(maze.StrategyName) {
		require.NoError(t, err)
		if r.Tick == int(ticks[1]) && !r.Start {
			assert.Equal(t, []event.RewardSource{{Source: "human", Value: 1.5}}, r.Retro)
			found = true
		}
	}
	assert.True(t, found, "no strategy row at tick %d", ticks[1])
	var delivered []event.Message // at the tick after it was sent
	for r, err := range l.Rows(maze.MotionName) {
		require.NoError(t, err)
		if r.Tick == 1 {
			delivered = append(delivered, r.Messages...)
		}
	}
	assert.Contains(t, delivered, event.Message{From: "strategy_0", To: maze.MotionName, Payload: []byte("go " + first), Sent: 0})
	eps, err := l.Episodes()
	require.NoError(t, err)
	require.Len(t, eps, 1)
	assert.True(t, eps[0].Success)
}

// TestJSONClientActRefused checks that a bad action, a stale tick or a missing key
// gets a 4xx that names why, and that the trial goes on waiting for the action.
func TestJSONClientActRefused(t *testing.T) {
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789", "other": "other-key-0123456789"})
	require.NoError(t, err)
	srv, stop := serveLoggedTrials(t, filepath.Join(t.TempDir(), "log"), remote.WithKeys(keys))
	defer stop()
	c := newJSONClient(t, srv, "maze-key-0123456789")
	c.ok("TrialService/Start", `{"spec": {"id": "t", "env": "maze", "seed": "1", "actors": {"strategy": {"client": {}}}}}`)
	tu := readTurn(t, c.ok("TrialService/Pending", `{"trial": "t", "agent": "strategy", "waitMs": "10000"}`))
	require.True(t, tu.acting)
	masked := ""
	for _, n := range tu.names {
		if !tu.allowed[n] {
			masked = n
		}
	}
	require.NotEmpty(t, masked, "the first turn masks no action: %v", tu.allowed)
	tick := strconv.FormatInt(tu.tick, 10)

	tests := []struct {
		name, key, method, body string
		status                  int
		code, message           string
	}{
		{"unknown name", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `", "name": "JUMP"}`,
			400, "invalid_argument", `name: "JUMP" is not an action of strategy_0 (actions: UP, RIGHT, DOWN, LEFT)`},
		{"masked name", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `", "name": "` + strings.ToLower(masked) + `"}`,
			400, "invalid_argument", "name: " + masked + " is masked at tick " + tick},
		{"raw out of the space", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `", "raw": "4"}`,
			400, "invalid_argument", "raw: 4 is outside the action space of strategy_0 (0 to 3)"},
		{"a message to nobody", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `", "name": "UP", "messages": [{"to": "ghost", "payload": "boo"}]}`,
			400, "invalid_argument", `messages[0].to: `},
		{"no action", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `"}`,
			400, "invalid_argument", "action: sets neither name nor raw"},
		{"another tick", "maze-key-0123456789", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "99", "name": "UP"}`,
			400, "failed_precondition", "agent strategy acts at tick " + tick + ", not 99"},
		{"agent not a client's", "maze-key-0123456789", "Pending", `{"trial": "t", "agent": "motion"}`,
			404, "not_found", `agent "motion" of trial "t" is not played by a client`},
		{"no key", "", "ClientAct", `{"trial": "t", "agent": "strategy", "tick": "` + tick + `", "name": "UP"}`,
			401, "unauthenticated", "missing API key"},
		{"unknown key", "nope", "Pending", `{"trial": "t", "agent": "strategy"}`,
			401, "unauthenticated", "invalid API key"},
		{"key of another environment", "other-key-0123456789", "Pending", `{"trial": "t", "agent": "strategy"}`,
			403, "permission_denied", "other"},
		{"malformed JSON", "maze-key-0123456789", "Pending", `{"trial": 7}`,
			400, "invalid_argument", "request JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := *c
			cc.t, cc.key = t, tt.key
			status, out := cc.call("TrialService/"+tt.method, tt.body)
			assert.Equal(t, tt.status, status, "%v", out)
			assert.Equal(t, tt.code, out["code"])
			assert.Contains(t, out["message"], tt.message)
			// The trial still waits for the same turn.
			again := readTurn(t, c.ok("TrialService/Pending", `{"trial": "t", "agent": "strategy"}`))
			assert.True(t, again.acting)
			assert.Equal(t, tu.tick, again.tick)
		})
	}
	c.ok("TrialService/Stop", `{"ids": ["t"]}`)
}

// TestJSONClientActorDefault checks that a client that does not act in time gets
// the default, an action or a policy, marked by the source "default" on the steps it
// scores.
func TestJSONClientActorDefault(t *testing.T) {
	// DOWN, or the first allowed action where the mask forbids it.
	down := func(mask []bool) agent.RawAction {
		if mask != nil && !mask[2] {
			return agent.Discrete(int64(slices.Index(mask, true)))
		}
		return agent.Discrete(2)
	}
	tests := []struct {
		name, client string
		want         func(mask []bool) agent.RawAction // nil: any action
		success      bool
	}{
		{"an action", `{"timeoutMs": "1", "defaultAction": "2"}`, down, false},
		{"a policy", `{"timeoutMs": "1", "defaultAction": "2", "defaultPolicy": "oracle"}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "log")
			srv, stop := serveLoggedTrials(t, dir)
			c := newJSONClient(t, srv, "")
			c.ok("TrialService/Start", `{"spec": {"id": "idle", "env": "maze", "seed": "2", "maxTicks": "60",
				"actors": {"strategy": {"client": `+tt.client+`}, "motion": {"policy": "forward"}}}}`)
			// Nobody acts: the trial plays the defaults.
			for {
				tu := readTurn(t, c.ok("TrialService/Pending", `{"trial": "idle", "agent": "strategy", "waitMs": "10000"}`))
				if tu.state != "TRIAL_STATE_RUNNING" {
					break
				}
			}
			stop()
			l, err := datalog.Open(dir)
			require.NoError(t, err)
			steps := 0
			var mask []bool // of the row before, where the agent acted
			for r, err := range l.Rows(maze.StrategyName) {
				require.NoError(t, err)
				if !r.Start {
					steps++
					assert.Contains(t, r.Sources, event.RewardSource{Source: remote.DefaultSource, Value: 0}, "tick %d", r.Tick)
					if tt.want != nil {
						assert.Equal(t, tt.want(mask), r.Action, "tick %d", r.Tick)
					}
				}
				mask = slices.Clone(r.Mask)
			}
			assert.Positive(t, steps)
			eps, err := l.Episodes()
			require.NoError(t, err)
			require.Len(t, eps, 1)
			assert.Equal(t, tt.success, eps[0].Success, "the oracle finds the goal, DOWN does not")
		})
	}

	srv, stop := serveLoggedTrials(t, filepath.Join(t.TempDir(), "log"))
	defer stop()
	c := newJSONClient(t, srv, "")
	code, out := c.call("TrialService/Start", `{"spec": {"env": "maze", "actors": {"strategy": {"client": {"defaultPolicy": "genius"}}}}}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, `spec.actors[strategy].client.default_policy: agent strategy has no policy "genius" (policies: oracle, random)`, out["message"])
}

// TestJSONWatchStream reads Watch as a Connect stream: enveloped JSON messages and
// the end of the stream.
func TestJSONWatchStream(t *testing.T) {
	srv, stop := serveLoggedTrials(t, filepath.Join(t.TempDir(), "log"))
	defer stop()
	c := newJSONClient(t, srv, "")
	c.ok("TrialService/Start", `{"spec": {"id": "w", "env": "maze", "seed": "1", "maxTicks": "20", "episodes": "3"}}`)
	body := []byte(`{"ids": ["w"]}`)
	env := append([]byte{0, 0, 0, 0, 0}, body...)
	binary.BigEndian.PutUint32(env[1:5], uint32(len(body)))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.base+"/baton.v1.TrialService/Watch", bytes.NewReader(env))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/connect+json")
	resp, err := c.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var states []string
	var result map[string]any
	for {
		var hdr [5]byte
		_, err := io.ReadFull(resp.Body, hdr[:])
		require.NoError(t, err)
		msg := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
		_, err = io.ReadFull(resp.Body, msg)
		require.NoError(t, err)
		if hdr[0]&2 != 0 {
			assert.JSONEq(t, `{}`, string(msg))
			break
		}
		var ch map[string]any
		require.NoError(t, json.Unmarshal(msg, &ch))
		states = append(states, ch["state"].(string))
		if r, ok := ch["result"].(map[string]any); ok {
			result = r
		}
	}
	assert.Equal(t, "TRIAL_STATE_ENDED", states[len(states)-1])
	require.NotNil(t, result)

	// Episodes shows the same episodes, from any index.
	tests := []struct {
		name, body string
		want       []any
	}{
		{"all", `{"trial": "w"}`, result["episodes"].([]any)},
		{"from the third", `{"trial": "w", "from": "2"}`, result["episodes"].([]any)[2:]},
		{"past the end", `{"trial": "w", "from": "3"}`, []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps := c.ok("TrialService/Episodes", tt.body)
			assert.Equal(t, []any{"strategy", "motion"}, eps["agents"])
			assert.Equal(t, tt.want, eps["episodes"])
		})
	}
	code, out := c.call("TrialService/Episodes", `{"trial": "nope"}`)
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
	code, out = c.call("TrialService/Episodes", `{"trial": "w", "from": "-1"}`)
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
}

// TestJSONGateway checks the gateway's protocol: methods of any service, and the
// answers to requests it cannot take.
func TestJSONGateway(t *testing.T) {
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, remote.WithMaxMessageSize(1<<10),
		remote.WithHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "page at "+r.URL.Path)
		})))
	c := newJSONClient(t, srv, "")
	spec := c.ok("AgentService/Spec", `{"agent": "strategy"}`)
	assert.Equal(t, "strategy", spec["name"])

	tests := []struct {
		name, method, path, contentType, body string
		status                                int
		answer                                string
	}{
		{"a unary call", http.MethodPost, "/baton.v1.AgentService/Agents", "application/json", `{}`, 200, `"name":"strategy"`},
		{"an empty body is the empty request", http.MethodPost, "/baton.v1.AgentService/Agents", "application/json", ``, 200, `"name":"strategy"`},
		{"charset in the content type", http.MethodPost, "/baton.v1.AgentService/Agents", "application/json; charset=utf-8", `{}`, 200, `"name":"strategy"`},
		{"unknown agent", http.MethodPost, "/baton.v1.AgentService/Spec", "application/json", `{"agent": "ghost"}`, 404, `"code":"not_found"`},
		{"GET", http.MethodGet, "/baton.v1.AgentService/Agents", "application/json", ``, 405, `use POST`},
		{"another content type", http.MethodPost, "/baton.v1.AgentService/Agents", "text/plain", `{}`, 415, `send application/json or application/proto`},
		{"a binary body that does not decode", http.MethodPost, "/baton.v1.AgentService/Agents", "application/proto", `{}`, 400, `"code":"invalid_argument","message":"malformed request`},
		{"unknown method", http.MethodPost, "/baton.v1.AgentService/Dance", "application/json", `{}`, 501, `"code":"unimplemented"`},
		{"a client stream", http.MethodPost, "/baton.v1.AgentService/ActStream", "application/json", `{}`, 501, `client streams are gRPC only`},
		{"a service not served", http.MethodPost, "/baton.v1.TrialService/List", "application/json", `{}`, 501, `"code":"unimplemented"`},
		{"above the size limit", http.MethodPost, "/baton.v1.AgentService/Spec", "application/json", `{"agent": "` + strings.Repeat("a", 2000) + `"}`, 413, `"code":"resource_exhausted"`},
		{"unknown field", http.MethodPost, "/baton.v1.AgentService/Spec", "application/json", `{"agnet": "strategy"}`, 400, `request JSON`},
		{"another path goes to the HTTP handler", http.MethodGet, "/index.html", "", ``, 200, `page at /index.html`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, c.base+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := c.hc.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode, string(b))
			assert.Contains(t, strings.ReplaceAll(string(b), " ", ""), strings.ReplaceAll(tt.answer, " ", ""))
		})
	}
}

// TestJSONOverTLS serves agents over TLS: a gRPC client and an HTTPS client (which
// offers HTTP/1.1 in ALPN) share the address; a plaintext HTTP client is answered
// 400, saying why.
func TestJSONOverTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "server")
	scfg, err := remote.ServerTLS(cert, key)
	require.NoError(t, err)
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, remote.WithTLS(scfg))
	ccfg, err := remote.ClientTLS(cert)
	require.NoError(t, err)

	g, err := remote.DialAgent(t.Context(), "grpcs://"+srv.target+"/strategy", remote.WithTLS(ccfg))
	require.NoError(t, err)
	defer g.Close()
	assert.Equal(t, maze.StrategyName, g.Spec().Name)

	tr := &http.Transport{TLSClientConfig: ccfg, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+srv.target+"/baton.v1.AgentService/Spec", strings.NewReader(`{"agent": "strategy"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "HTTP/1.1", resp.Proto)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, strings.ReplaceAll(string(b), " ", ""), `"name":"strategy"`)

	plain := newJSONClient(t, srv, "")
	req, err = http.NewRequestWithContext(t.Context(), http.MethodPost, plain.base+"/baton.v1.AgentService/Agents", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp, err = plain.hc.Do(req)
	require.NoError(t, err, "plain HTTP to a TLS server is answered")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	b, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "this port speaks TLS: use https:// (or grpcs:// for gRPC)\n", string(b))
}

// TestJSONStartWatched starts trials through the JSON gateway, watched or not, with
// the maze's strategy played by the test: a trial started watched has drawn its
// frame at tick 0 by its first turn, one started unwatched nothing. A pace out of
// range, or a watched campaign, is refused naming the field.
func TestJSONStartWatched(t *testing.T) {
	ctrl, err := runners.NewController(testRegistry(t), runners.WithWorkers(1))
	require.NoError(t, err)
	s := newServer(t)
	require.NoError(t, s.AddTrials(ctrl))
	c := newJSONClient(t, start(t, s, true), "")
	for _, tt := range []struct {
		id, extra string
		wantSeq   uint64
	}{
		{"watched", `, "watched": true, "watchPaceMs": "1"`, 1},
		{"unwatched", ``, 0},
	} {
		t.Run(tt.id, func(t *testing.T) {
			c.ok("TrialService/Start", `{"spec": {"id": "`+tt.id+`", "env": "maze", "seed": "3",
				"actors": {"strategy": {"client": {}}}}`+tt.extra+`}`)
			tu := readTurn(t, c.ok("TrialService/Pending", `{"trial": "`+tt.id+`", "agent": "strategy", "waitMs": "10000"}`))
			require.True(t, tu.acting)
			require.Zero(t, tu.tick)
			f, err := ctrl.Frame(tt.id, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.wantSeq, f.Seq, "frames drawn by the first turn")
			assert.Zero(t, f.Tick)
			if tt.wantSeq > 0 {
				assert.Contains(t, f.SVG, "<svg")
			}
			c.ok("TrialService/Stop", `{"ids": ["`+tt.id+`"]}`)
		})
	}
	for _, tt := range []struct{ body, field string }{
		{`{"spec": {"env": "maze"}, "watched": true, "watchPaceMs": "2001"}`, "watch_pace_ms"},
		{`{"spec": {"env": "maze"}, "watched": true, "watchPaceMs": "-1"}`, "watch_pace_ms"},
		{`{"spec": {"env": "maze"}, "watched": true, "trials": "2"}`, "trials"},
	} {
		code, out := c.call("TrialService/Start", tt.body)
		assert.Equal(t, http.StatusBadRequest, code, tt.body)
		assert.Equal(t, "invalid_argument", out["code"], tt.body)
		assert.Contains(t, out["message"], tt.field, tt.body)
	}
}
