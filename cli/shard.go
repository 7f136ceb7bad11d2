package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
)

// trialRecord is one trial's result as baton run --results writes it, one JSON object
// a line: what the summary needs of it, so that the results of the trial ranges of a
// campaign run apart (--first) sum up, read back with --from-results, to the summary
// of the campaign run at once. JSON keeps every float64 exactly.
type trialRecord struct {
	Index  int    `json:"index"`
	ID     string `json:"id"`
	State  int    `json:"state"`
	Reason string `json:"reason,omitempty"`
	Steps  int64  `json:"steps"`
	// Info is false for a trial whose spec was rejected (no agents, no episodes).
	Info           bool            `json:"info"`
	Agents         []string        `json:"agents,omitempty"`
	Metrics        []string        `json:"metrics,omitempty"`
	DefinesSuccess bool            `json:"defines_success,omitempty"`
	Episodes       []episodeRecord `json:"episodes,omitempty"`
}

// episodeRecord is an episode of a trialRecord; a metric that is NaN is null.
type episodeRecord struct {
	Complete bool       `json:"complete"`
	Success  bool       `json:"success,omitempty"`
	Returns  []float64  `json:"returns"`
	Metrics  []*float64 `json:"metrics,omitempty"`
}

func newTrialRecord(i int, res *runners.Result) trialRecord {
	r := trialRecord{Index: i, ID: res.ID, State: int(res.State), Steps: res.Steps}
	if res.Err != nil {
		r.Reason = res.Err.Error()
	}
	if res.Info != nil {
		r.Info, r.Metrics, r.DefinesSuccess = true, res.Info.Metrics, res.Info.DefinesSuccess
		for _, a := range res.Info.Agents {
			r.Agents = append(r.Agents, a.Name)
		}
	}
	for _, ep := range res.Episodes {
		e := episodeRecord{Complete: ep.Complete, Success: ep.Success, Returns: ep.Returns}
		for _, m := range ep.Metrics {
			if math.IsNaN(m) {
				e.Metrics = append(e.Metrics, nil)
			} else {
				e.Metrics = append(e.Metrics, &m)
			}
		}
		r.Episodes = append(r.Episodes, e)
	}
	return r
}

// result is the runners.Result the record was made of, as far as a summary goes.
func (r *trialRecord) result() runners.Result {
	res := runners.Result{ID: r.ID, State: event.State(r.State), Steps: r.Steps}
	if r.Reason != "" {
		res.Err = errors.New(r.Reason)
	}
	if r.Info {
		res.Info = &event.TrialInfo{ID: r.ID, Index: r.Index, Metrics: r.Metrics, DefinesSuccess: r.DefinesSuccess}
		for _, name := range r.Agents {
			res.Info.Agents = append(res.Info.Agents, env.Spec{Name: name})
		}
	}
	for _, e := range r.Episodes {
		ep := runners.EpisodeResult{Complete: e.Complete, Success: e.Success, Returns: e.Returns}
		for _, m := range e.Metrics {
			if m == nil {
				ep.Metrics = append(ep.Metrics, math.NaN())
			} else {
				ep.Metrics = append(ep.Metrics, *m)
			}
		}
		res.Episodes = append(res.Episodes, ep)
	}
	return res
}

// writeResults writes the records to path, in trial order, one JSON object a line.
func writeResults(path string, recs []trialRecord) (err error) {
	slices.SortFunc(recs, func(a, b trialRecord) int { return a.Index - b.Index })
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--results: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("--results %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("--results %s: %w", path, err)
	}
	return nil
}

// readResults reads the records of the files (written by --results) and returns the
// results of trials 0 to trials-1, each found exactly once, in trial order.
func readResults(paths []string, trials int) ([]runners.Result, error) {
	results := make([]runners.Result, trials)
	seen := make([]bool, trials)
	n := 0
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--from-results %s: %v", path, unwrapPath(err))
		}
		dec := json.NewDecoder(bufio.NewReader(f))
		for line := 1; dec.More(); line++ {
			var r trialRecord
			if err := dec.Decode(&r); err != nil {
				f.Close()
				return nil, usagef("--from-results %s: record %d: %v", path, line, err)
			}
			switch {
			case r.Index < 0 || r.Index >= trials:
				f.Close()
				return nil, usagef("--from-results %s: trial %d: outside the campaign's %d trials", path, r.Index, trials)
			case seen[r.Index]:
				f.Close()
				return nil, usagef("--from-results %s: trial %d: found twice", path, r.Index)
			}
			results[r.Index], seen[r.Index] = r.result(), true
			n++
		}
		f.Close()
	}
	if n < trials {
		first := slices.Index(seen, false)
		return nil, usagef("--from-results: %d of %d trials found; trial %d is missing", n, trials, first)
	}
	return results, nil
}
