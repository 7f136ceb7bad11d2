package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeMetrics serves trials with a key file and a metrics key file, plays a
// trial, and scrapes /metrics: refused without the metrics key, and with it the
// ended trial and its steps, in Prometheus' text format.
func TestServeMetrics(t *testing.T) {
	const trialKey, opsKey = "maze-key-0123456789ab", "ops-key-0123456789abcd"
	keys := writeFile(t, "keys", "maze="+trialKey+"\n")
	opsKeys := writeFile(t, "ops-keys", opsKey+"\n")
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- runWith(ctx, shipped(t), []string{"serve", "trials", "--addr", "127.0.0.1:0", "--workers", "1",
			"--key-file", keys, "--metrics-key-file", opsKeys, "--log", t.TempDir() + "/log"}, pw, &stderr)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, stderr.String())
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, line)
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	c, err := remote.DialTrials(t.Context(), m[1], remote.WithKey(trialKey))
	require.NoError(t, err)
	defer c.Close()
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Seed: 2, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}, MaxTicks: 100})
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State)

	get := func(key string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+m[1]+"/metrics", nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	assert.Equal(t, http.StatusUnauthorized, get("").StatusCode)
	assert.Equal(t, http.StatusUnauthorized, get(trialKey).StatusCode)
	resp := get(opsKey)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	var ended, steps float64
	for _, mt := range fams["baton_trials"].GetMetric() {
		if mt.GetLabel()[0].GetValue() == "ended" {
			ended = mt.GetGauge().GetValue()
		}
	}
	for _, mt := range fams["baton_env_steps_total"].GetMetric() {
		if mt.GetLabel()[0].GetValue() == "trial" {
			steps = mt.GetCounter().GetValue()
		}
	}
	assert.Equal(t, 1.0, ended)
	assert.Equal(t, float64(res.Steps), steps)
	assert.Contains(t, fams, "baton_log_rows_total")
	http.DefaultClient.CloseIdleConnections()
	cancel()
	assert.Equal(t, 0, <-code, stderr.String())
}
