package webui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/webui"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	return reg
}

func TestHandler(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := webui.Handler(testRegistry(t))
	tests := []struct {
		path, contentType, contains string
		status                      int
	}{
		{"/", "text/html", `<script type="module" src="app.js">`, 200},
		{"/index.html", "", "", 301}, // the file server's canonical "/"
		{"/app.js", "text/javascript", "/baton.v1.TrialService/", 200},
		{"/style.css", "text/css", "body {", 200},
		{"/ui/envs.json", "application/json", `"name":"maze"`, 200},
		{"/missing.js", "text/plain", "404 page not found", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			resp := rec.Result()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), tt.contentType), resp.Header.Get("Content-Type"))
			assert.Contains(t, string(b), tt.contains)
			assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "the page is read only")
}

func TestEnvs(t *testing.T) {
	got := webui.Envs(testRegistry(t))
	want := []webui.EnvInfo{{
		Name:        "maze",
		Description: got[0].Description,
		Agents: []webui.AgentInfo{
			{Name: "strategy", Policies: []string{"oracle", "random"}},
			{Name: "motion", Policies: []string{"random", "forward"}},
		},
	}}
	assert.Equal(t, want, got)
	assert.NotEmpty(t, got[0].Description)
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"policies":["oracle","random"]`)
}
