package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/require"
)

// TestServePrometheus runs Debian's Prometheus server against baton serve env on
// loopback: Prometheus scrapes /metrics with the metrics key, and a query of the rate
// of environment steps answers while a client steps. The test is skipped when no
// prometheus binary is on PATH (scripts/test installs Debian's package where it can).
func TestServePrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary on PATH (Debian's package prometheus; scripts/test installs it as root)")
	}
	const opsKey = "ops-key-0123456789abcd"
	dir := t.TempDir()
	opsKeys := writeFile(t, "ops-keys", opsKey+"\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- runWith(ctx, shipped(t), []string{"serve", "env", "--addr", "127.0.0.1:0", "--metrics-key-file", opsKeys, "--quiet"}, pw, &stderr)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, stderr.String())
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, line)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	target := m[1]

	// Prometheus on a free loopback port, with storage of its own.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	promAddr := l.Addr().String()
	require.NoError(t, l.Close())
	keyFile := filepath.Join(dir, "scrape-key")
	require.NoError(t, os.WriteFile(keyFile, []byte(opsKey), 0o600))
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: baton
    authorization:
      credentials_file: %s
    static_configs:
      - targets: [%q]
`, keyFile, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(config), 0o600))
	pctx, pcancel := context.WithCancel(t.Context())
	prom := exec.CommandContext(pctx, bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	var promOut syncBuffer
	prom.Stdout, prom.Stderr = &promOut, &promOut
	require.NoError(t, prom.Start())
	defer func() {
		pcancel()
		_ = prom.Wait()
	}()

	c, err := remote.DialEnv(t.Context(), target)
	require.NoError(t, err)
	defer c.Close()
	e, err := c.Make(t.Context(), "cartpole", nil, 0)
	require.NoError(t, err)
	turn, err := e.Reset(1)
	require.NoError(t, err)

	// Step while asking Prometheus for the rate, until it answers one above 0.
	query := url.Values{"query": {`rate(baton_env_steps_total{source="env"}[5s])`}}
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for seed := uint64(2); ; seed++ {
		require.True(t, time.Now().Before(deadline), "no rate from Prometheus within 60 s; last answer %s; prometheus: %s", last, promOut.String())
		for range 20 {
			turn, err = e.Step(turn.Acting().AgentID, agent.Discrete(int64(seed%2)))
			require.NoError(t, err)
			if turn.Over {
				turn, err = e.Reset(seed)
				require.NoError(t, err)
			}
		}
		<-tick.C
		resp, err := hc.Get("http://" + promAddr + "/api/v1/query?" + query.Encode())
		if err != nil {
			last = err.Error()
			continue // Prometheus is starting
		}
		var answer struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		last = string(b)
		if json.Unmarshal(b, &answer) != nil || answer.Status != "success" || len(answer.Data.Result) == 0 {
			continue
		}
		if v, ok := answer.Data.Result[0].Value[1].(string); ok && v != "0" && v != "NaN" {
			t.Logf("Prometheus: rate(baton_env_steps_total[5s]) = %s steps/s", v)
			break
		}
	}
	require.NoError(t, e.Close(t.Context()))
	cancel()
	require.Equal(t, 0, <-code, stderr.String())
}
