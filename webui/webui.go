package webui

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
)

//go:embed assets
var assets embed.FS

// EnvInfo is an environment of the registry as the page's start form lists it.
type EnvInfo struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Agents      []AgentInfo `json:"agents"`
}

// AgentInfo is an agent with its registered policies, the default first.
type AgentInfo struct {
	Name     string   `json:"name"`
	Policies []string `json:"policies"`
}

// Envs lists the environments of reg with their agents and policies, in the
// registry's order.
func Envs(reg *registry.Registry) []EnvInfo {
	var out []EnvInfo
	for e := range reg.All() {
		info := EnvInfo{Name: e.Name, Description: e.Description}
		for _, a := range e.Agents {
			ai := AgentInfo{Name: a.Name}
			def := a.Default
			if def == "" && len(a.Policies) > 0 {
				def = a.Policies[0].Name
			}
			if def != "" {
				ai.Policies = append(ai.Policies, def)
			}
			for _, p := range a.Policies {
				if p.Name != def {
					ai.Policies = append(ai.Policies, p.Name)
				}
			}
			info.Agents = append(info.Agents, ai)
		}
		out = append(out, info)
	}
	return out
}

// An Option configures Handler.
type Option func(*handlerConfig)

type handlerConfig struct {
	trials    *runners.Controller
	keys      remote.Keys
	models    models.Store
	modelKeys remote.Keys
}

// WithTrials lets the page watch the trials of c drawn frame by frame
// ("/ui/frame"), for callers whose key (Authorization: Bearer KEY) keys grant the
// trial's environment, as the trial service's keys do. Without it the page watches
// trials in its list only.
func WithTrials(c *runners.Controller, keys remote.Keys) Option {
	return func(h *handlerConfig) { h.trials, h.keys = c, keys }
}

// Handler serves the page at "/" (index.html, app.js, style.css), the environments
// of reg at "/ui/envs.json" and, WithTrials, a trial's latest frame at
// "/ui/frame?trial=ID&pace=MS" (runners.Controller.Frame: the trial then draws each
// step for a while, waiting MS milliseconds after each) and, WithModels, the models
// of a registry with their learning curves at "/ui/models.json" (ModelInfo; without
// WithModels it answers that it serves none, and the page shows no models). Mount it on a server of the
// trial service (remote.WithHTTPHandler), which the page calls at the same origin.
func Handler(reg *registry.Registry, opts ...Option) http.Handler {
	var cfg handlerConfig
	for _, o := range opts {
		o(&cfg)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has the folder
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(sub))
	mux.HandleFunc("GET /ui/envs.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Envs(reg))
	})
	if cfg.trials != nil {
		mux.HandleFunc("GET /ui/frame", cfg.frame)
	}
	mux.HandleFunc("GET /ui/models.json", cfg.modelList)
	return securityHeaders(mux)
}

// Frame is a trial's latest frame as "/ui/frame" answers it.
type Frame struct {
	Trial   string          `json:"trial"`
	State   string          `json:"state"`
	Seq     uint64          `json:"seq"`
	Episode int             `json:"episode"`
	Tick    int             `json:"tick"`
	Text    string          `json:"text,omitempty"`
	SVG     string          `json:"svg,omitempty"`
	Scene   json.RawMessage `json:"scene,omitempty"`
}

// maxPaceMs bounds the pace a watcher asks for, in milliseconds.
var maxPaceMs = runners.MaxFramePace.Milliseconds()

// frame answers a trial's latest frame, once the caller's key grants its
// environment; its errors are JSON as the gateway's are ({"code", "message"}).
func (h *handlerConfig) frame(w http.ResponseWriter, r *http.Request) {
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if err := h.keys.Check(key, ""); errors.Is(err, remote.ErrUnauthenticated) {
		refuse(w, http.StatusUnauthorized, "unauthenticated", "no key, or a key this server does not know")
		return
	}
	q := r.URL.Query()
	id := q.Get("trial")
	pace := int64(0)
	if v := q.Get("pace"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxPaceMs {
			refuse(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("pace: %q: want milliseconds from 0 to %d", v, maxPaceMs))
			return
		}
		pace = n
	}
	st, err := h.trials.Status(id)
	if err != nil {
		refuse(w, http.StatusNotFound, "not_found", fmt.Sprintf("trial: no trial %q", id))
		return
	}
	if err := h.keys.Check(key, st.Env); err != nil {
		refuse(w, http.StatusForbidden, "permission_denied", fmt.Sprintf("the key does not grant environment %s", st.Env))
		return
	}
	f, err := h.trials.Frame(id, time.Duration(pace)*time.Millisecond)
	if err != nil {
		refuse(w, http.StatusNotFound, "not_found", fmt.Sprintf("trial: no trial %q", id))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(Frame{
		Trial: id, State: strings.ToLower(st.State.String()), Seq: f.Seq, Episode: f.Episode, Tick: f.Tick,
		Text: f.Text, SVG: f.SVG, Scene: f.Scene,
	})
}

func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }

func refuse(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message})
}

// securityHeaders keeps the page out of frames and its scripts to its own origin.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'")
		h.ServeHTTP(w, r)
	})
}
