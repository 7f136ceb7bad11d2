package webui

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/remote"
)

// WithModels lets the page show the models of store, each with the learning curve
// of its newest version ("/ui/models.json"), to callers whose key keys grant the
// model's name, as the model service's keys do (a key file line NAME=KEY).
func WithModels(store models.Store, keys remote.Keys) Option {
	return func(h *handlerConfig) { h.models, h.modelKeys = store, keys }
}

// MaxCurveBins bounds the points of a model's curve that "/ui/models.json" sends:
// a longer curve is summed up in bins of consecutive episodes.
const MaxCurveBins = 60

// ModelInfo is a model's newest version as "/ui/models.json" lists it.
type ModelInfo struct {
	Name    string             `json:"name"`
	Version int                `json:"version"`
	Ref     string             `json:"ref"`
	Created time.Time          `json:"created"`
	Format  string             `json:"format,omitempty"`
	Env     string             `json:"env,omitempty"`
	Agent   string             `json:"agent,omitempty"`
	Run     string             `json:"run,omitempty"`
	Figures map[string]float64 `json:"figures,omitempty"`
	// Episodes is the length of the learning curve; Curve sums it up in at most
	// MaxCurveBins bins of consecutive episodes.
	Episodes int        `json:"episodes"`
	Curve    []CurveBin `json:"curve"`
}

// CurveBin is a run of consecutive episodes of a learning curve: the first and last
// episode's numbers, their mean return and the share of them that succeeded.
type CurveBin struct {
	First   int     `json:"first"`
	Last    int     `json:"last"`
	Return  float64 `json:"return"`
	Success float64 `json:"success"`
}

// ModelInfoOf sums up a model version for the page.
func ModelInfoOf(m models.Meta) ModelInfo {
	info := ModelInfo{
		Name: m.Name, Version: m.Version, Ref: m.Ref(), Created: m.Created, Format: m.Format, Env: m.Env,
		Agent: m.Agent, Run: m.Run, Figures: m.Figures, Episodes: len(m.Curve), Curve: []CurveBin{},
	}
	size := max(1, (len(m.Curve)+MaxCurveBins-1)/MaxCurveBins)
	for lo := 0; lo < len(m.Curve); lo += size {
		pts := m.Curve[lo:min(lo+size, len(m.Curve))]
		b := CurveBin{First: pts[0].Episode, Last: pts[len(pts)-1].Episode}
		for _, p := range pts {
			b.Return += p.Return
			if p.Success {
				b.Success++
			}
		}
		b.Return /= float64(len(pts))
		b.Success /= float64(len(pts))
		info.Curve = append(info.Curve, b)
	}
	return info
}

// modelList answers the newest version of every model the caller's key grants, by
// name, each with its curve in bins: {"served": true, "models": [...]}; without a
// store, {"served": false, "models": []}.
func (h *handlerConfig) modelList(w http.ResponseWriter, r *http.Request) {
	if h.models == nil {
		w.Header().Set("Content-Type", "application/json")
		_ = jsonEncode(w, map[string]any{"served": false, "models": []ModelInfo{}})
		return
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if err := h.modelKeys.Check(key, ""); errors.Is(err, remote.ErrUnauthenticated) {
		refuse(w, http.StatusUnauthorized, "unauthenticated", "no key, or a key this server does not know")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	metas, err := h.models.List(ctx, "")
	if err != nil {
		refuse(w, http.StatusInternalServerError, "internal", "models: "+err.Error())
		return
	}
	out := []ModelInfo{}
	for _, m := range metas {
		if h.modelKeys.Check(key, m.Name) == nil {
			out = append(out, ModelInfoOf(m))
		}
	}
	slices.SortFunc(out, func(a, b ModelInfo) int { return strings.Compare(a.Name, b.Name) })
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = jsonEncode(w, map[string]any{"served": true, "models": out})
}
