package webui

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"

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
func Envs(reg *runners.Registry) []EnvInfo {
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

// Handler serves the page at "/" (index.html, app.js, style.css) and the
// environments of reg at "/ui/envs.json". Mount it on a server of the trial service
// (remote.WithHTTPHandler), which the page calls at the same origin.
func Handler(reg *runners.Registry) http.Handler {
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
	return securityHeaders(mux)
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
