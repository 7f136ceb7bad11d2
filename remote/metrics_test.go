package remote_test

import (
	"net/http"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/telemetry"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape gets /metrics with key ("" for none) and returns the status and, for 200,
// the families parsed by Prometheus' own text parser.
func scrape(t *testing.T, target, key string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+target+"/metrics", nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, fams
}

// gathered gathers m's registry, as a scrape would, by family name.
func gathered(t *testing.T, m *telemetry.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value is the value of the family's metric whose labels are labels (name=value
// pairs), or of a histogram its sample count; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// TestMetricsEnvServer steps a served maze and reads the steps, their latencies, the
// open session and a refused step back from /metrics.
func TestMetricsEnvServer(t *testing.T) {
	m := telemetry.New()
	srv := serveEnvs(t, true, remote.WithMetrics(m))
	c := dialEnv(t, srv)
	re, err := c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	turn, err := re.Reset(1)
	require.NoError(t, err)
	const steps = 5
	for range steps {
		rep := turn.Acting()
		turn, err = re.Step(rep.AgentID, agent.Discrete(int64(firstUnmasked(rep.Mask))))
		require.NoError(t, err)
		require.False(t, turn.Over)
	}
	// A refused step, over the JSON gateway (which goes through the same
	// interceptors as gRPC).
	httpCode, _ := newJSONClient(t, srv, "").call("EnvService/Step", `{"session": "no-such-session"}`)
	require.Equal(t, http.StatusNotFound, httpCode)

	code, fams := scrape(t, srv.target, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, float64(steps), value(fams, "baton_env_steps_total", "source", "env"))
	assert.Equal(t, float64(steps), value(fams, "baton_step_duration_seconds", "method", "Step"))
	assert.Equal(t, 1.0, value(fams, "baton_open_sessions"))
	assert.Equal(t, 1.0, value(fams, "baton_rpc_errors_total", "method", "/baton.v1.EnvService/Step", "code", "NotFound"))
	assert.Equal(t, 0.0, value(fams, "baton_trials", "state", "running"))
	assert.Contains(t, fams, "go_goroutines")

	require.NoError(t, re.Close(t.Context()))
	_, fams = scrape(t, srv.target, "")
	assert.Equal(t, 0.0, value(fams, "baton_open_sessions"))
}

func firstUnmasked(mask []bool) int {
	for i, ok := range mask {
		if ok {
			return i
		}
	}
	return 0
}

// TestMetricsAgentServer asks a served agent for actions over gRPC and the JSON
// gateway, and reads them back.
func TestMetricsAgentServer(t *testing.T) {
	m := telemetry.New()
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, remote.WithMetrics(m))
	c := dialAgent(t, srv, remote.WithAgent("strategy"), remote.WithUnary())
	rt, err := newRuntime()
	require.NoError(t, err)
	turn := mustReset(t, rt, 3)
	rep := turn.Acting()
	for range 3 {
		_, err := c.Act(t.Context(), rep.Obs, rep.Mask)
		require.NoError(t, err)
	}
	code, fams := scrape(t, srv.target, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, 3.0, value(fams, "baton_actions_total", "source", "agent"))
	assert.Equal(t, 3.0, value(fams, "baton_act_duration_seconds", "method", "Act"))
}

// TestMetricsKeys checks who may read /metrics under each rule.
func TestMetricsKeys(t *testing.T) {
	const (
		serverKey  = "server-key-0123456789"
		metricsKey = "metrics-key-0123456789"
	)
	serverKeys, err := remote.NewKeys(map[string]string{"strategy": serverKey})
	require.NoError(t, err)
	opsKeys, err := remote.NewKeys(map[string]string{"": metricsKey})
	require.NoError(t, err)
	tests := []struct {
		name string
		opts []remote.ServerOption
		want map[string]int // by presented key
	}{
		{"no keys: open", nil, map[string]int{"": 200, "whatever-key-123456": 200}},
		{"the server's keys", []remote.ServerOption{remote.WithKeys(serverKeys)},
			map[string]int{"": 401, metricsKey: 401, serverKey: 200}},
		{"keys of their own", []remote.ServerOption{remote.WithKeys(serverKeys), remote.WithMetricsKeys(opsKeys)},
			map[string]int{"": 401, serverKey: 401, metricsKey: 200}},
		{"public", []remote.ServerOption{remote.WithKeys(serverKeys), remote.WithMetricsKeys(remote.Keys{})},
			map[string]int{"": 200, serverKey: 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, append(tt.opts, remote.WithMetrics(telemetry.New()))...)
			for key, want := range tt.want {
				code, _ := scrape(t, srv.target, key)
				assert.Equal(t, want, code, "key %q", key)
			}
		})
	}
	// Without WithMetrics, /metrics is no path of the server.
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)})
	code, _ := scrape(t, srv.target, "")
	assert.Equal(t, http.StatusNotFound, code)
}
