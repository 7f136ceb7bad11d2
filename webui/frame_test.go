package webui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/webui"
)

// TestFrame checks /ui/frame: the caller's key must grant the trial's environment, as
// the trial service's keys do, and the answer is the trial's latest frame.
func TestFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	c, err := runners.NewController(reg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789abcdef", "other": "other-key-0123456789abcdef"})
	require.NoError(t, err)
	h := webui.Handler(reg, webui.WithTrials(c, keys))

	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}})
	require.NoError(t, err)
	_, err = c.Wait(t.Context(), id)
	require.NoError(t, err)

	tests := []struct {
		name, query, key string
		status           int
		code             string
	}{
		{"no key", "trial=" + id, "", http.StatusUnauthorized, "unauthenticated"},
		{"unknown key", "trial=" + id, "not-a-key-0123456789abcdef", http.StatusUnauthorized, "unauthenticated"},
		{"another environment's key", "trial=" + id, "other-key-0123456789abcdef", http.StatusForbidden, "permission_denied"},
		{"unknown trial", "trial=trial-9", "maze-key-0123456789abcdef", http.StatusNotFound, "not_found"},
		{"pace not a number", "trial=" + id + "&pace=soon", "maze-key-0123456789abcdef", http.StatusBadRequest, "invalid_argument"},
		{"pace too long", "trial=" + id + "&pace=2001", "maze-key-0123456789abcdef", http.StatusBadRequest, "invalid_argument"},
		{"the frame", "trial=" + id + "&pace=100", "maze-key-0123456789abcdef", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/ui/frame?"+tt.query, nil)
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			if tt.code != "" {
				var e struct{ Code, Message string }
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
				assert.Equal(t, tt.code, e.Code)
				assert.NotEmpty(t, e.Message)
				return
			}
			var f webui.Frame
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &f))
			// Watched after it ended, the trial drew nothing.
			assert.Equal(t, webui.Frame{Trial: id, State: "ended"}, f)
		})
	}

	// Without WithTrials there is no /ui/frame.
	rec := httptest.NewRecorder()
	webui.Handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/frame?trial="+id, nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
}
