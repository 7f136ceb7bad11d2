package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The curl session of the documentation (the ```sh block of docs/tutorials/
// people-in-the-loop.md that starts baton serve ui) is run
// here: each curl request against a baton serve ui process, each answer shown after
// it ("# " lines) compared, as JSON, with the server's, through the session's jq
// filters ('{a, b}' keeps those keys, .a.b picks a value). A request shown without an
// answer must succeed (200).

var (
	curlLine = regexp.MustCompile(`^curl -s \$api/(\w+) -H "\$json" -d '(.*?)'(?: \| jq -c (.+))?$`)
	jqKeys   = regexp.MustCompile(`^'\{([\w, ]+)\}'$`)
	jqPath   = regexp.MustCompile(`^(\.\w+)+$`)
)

// curlSession returns the lines of the documentation's curl session, and the file
// that shows it.
func curlSession(t *testing.T) (string, []string) {
	t.Helper()
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if l != "```sh" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "./baton serve ui ") {
				continue
			}
			for j := i + 1; j < len(lines); j++ {
				if lines[j] == "```" {
					return docName(path), lines[i+1 : j]
				}
			}
		}
	}
	t.Fatal("no page of the documentation has a ```sh block starting with ./baton serve ui")
	return "", nil
}

// jq applies the session's jq filter to a JSON answer.
func jq(t *testing.T, filter string, answer []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(answer, &v), string(answer))
	switch {
	case filter == "":
		return v
	case jqKeys.MatchString(filter):
		obj := v.(map[string]any)
		out := map[string]any{}
		for _, k := range strings.Split(jqKeys.FindStringSubmatch(filter)[1], ",") {
			k = strings.TrimSpace(k)
			out[k] = obj[k]
		}
		return out
	case jqPath.MatchString(filter):
		for _, k := range strings.Split(filter, ".")[1:] {
			v = v.(map[string]any)[k]
		}
		return v
	}
	t.Fatalf("jq filter %s: the test reads '{KEYS}' and .PATH filters only", filter)
	return nil
}

// TestDocsCurlSession runs the documentation's curl session: a person walks the maze's
// strategy agent to the goal over JSON/HTTP and rewards a past step; the log keeps
// that reward, source human, at its tick.
func TestDocsCurlSession(t *testing.T) {
	name, session := curlSession(t)
	dir := filepath.Join(t.TempDir(), "runs", "ui")
	start := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(session[0], "./baton "), "&"))
	var args []string
	for i := 0; i < len(start); i++ {
		switch start[i] {
		case "--addr":
			i++ // startServe picks a free port
		case "runs/ui":
			args = append(args, dir)
		default:
			args = append(args, start[i])
		}
	}
	require.Equal(t, "serve", args[0])
	srv := startServe(t, args[1:]...)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	requests := 0
	for i := 1; i < len(session); i++ {
		line := session[i]
		var shown []string
		for i+1 < len(session) && strings.HasPrefix(session[i+1], "# ") {
			shown = append(shown, strings.TrimPrefix(session[i+1], "# "))
			i++
		}
		switch {
		case strings.HasPrefix(line, "api="):
			require.Equal(t, `api=127.0.0.1:8080/baton.v1.TrialService; json='Content-Type: application/json'`, line)
		case curlLine.MatchString(line):
			m := curlLine.FindStringSubmatch(line)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+srv.addr+"/baton.v1.TrialService/"+m[1], strings.NewReader(m[2]))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, resp.Body.Close())
			require.NoError(t, err)
			requests++
			if len(shown) == 0 {
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s: %s", name, line, body)
				continue
			}
			require.Len(t, shown, 1, line)
			var want any
			require.NoError(t, json.Unmarshal([]byte(shown[0]), &want), shown[0])
			assert.Equal(t, want, jq(t, m[3], body), "%s: %s", name, line)
		case line == "kill -INT %1":
			require.Equal(t, 0, srv.stop(t, syscall.SIGINT), srv.stderr.String())
		case line == "./baton inspect runs/ui":
			r := runArgs(t, "inspect", dir)
			require.Equal(t, 0, r.code, r.stderr)
			for _, s := range shown {
				assert.Contains(t, lines(r.stdout), s)
			}
		default:
			t.Fatalf("%s: the curl session's line %q is not one the test runs", name, line)
		}
	}
	assert.Greater(t, requests, 10)

	l, err := datalog.Open(dir)
	require.NoError(t, err)
	retro, err := l.Retro()
	require.NoError(t, err)
	require.Len(t, retro, 1)
	assert.Equal(t, "human", retro[0].Source)
	assert.Equal(t, 2, retro[0].Tick)
	assert.Equal(t, "strategy_0", retro[0].AgentID)
}
