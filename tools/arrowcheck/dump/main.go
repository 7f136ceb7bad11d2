// Command dump reads a baton log with the Go reader (package datalog) and prints, as
// one JSON object, the figures that ../check.mjs computes again from the same files
// with the Arrow JavaScript library: per agent the row counts, sums and checksums of
// every column, the reward sources and the return of each episode; the trials with
// their latest state; and the episodes table.
//
//	go run ./tools/arrowcheck/dump DIR
//
// Sums are float64 sums, in the log's row order (each agent's parts by shard and
// number, each part's batches in order), of float32 values widened exactly, so the
// two readers agree to the last bit when they read the same values in the same order.
// A checksum weighs element j of a row's list by j+1, so that a permutation of the
// elements changes it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/batonrl/baton/datalog"
)

type sourceSum struct {
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
}

type agentDump struct {
	Rows         int                  `json:"rows"`
	Trials       int                  `json:"trials"`
	Episodes     int                  `json:"episodes"`
	AgentIDs     int                  `json:"agent_ids"`
	ParentNull   int                  `json:"parent_null"`
	Start        int                  `json:"start"`
	Acting       int                  `json:"acting"`
	Terminated   int                  `json:"terminated"`
	Truncated    int                  `json:"truncated"`
	EpisodeSum   int64                `json:"episode_sum"`
	TickSum      int64                `json:"tick_sum"`
	IndexSum     int64                `json:"index_sum"`
	SpanTicksSum int64                `json:"span_ticks_sum"`
	ObsChecksum  float64              `json:"obs_checksum"`
	ActionNull   int                  `json:"action_null"`
	ActionSum    float64              `json:"action_checksum"`
	MaskNull     int                  `json:"mask_null"`
	MaskTrue     int                  `json:"mask_true"`
	RewardSum    float64              `json:"reward_sum"`
	RetroSum     float64              `json:"retro_sum"`
	Sources      map[string]sourceSum `json:"sources"`
	Messages     int                  `json:"messages"`
	MessageBytes int                  `json:"message_bytes"`
	// Returns is each episode's return ("TRIAL/EPISODE"): the sum of the rows'
	// rewards and their retroactive rewards.
	Returns map[string]float64 `json:"returns"`
	// Spaces and dimensions, from the first part's metadata.
	ObservationSpace json.RawMessage `json:"observation_space"`
	ActionSpace      json.RawMessage `json:"action_space"`
	ObservationDim   int             `json:"observation_dim"`
	ActionDim        int             `json:"action_dim"`
	MaskLen          int             `json:"mask_len"`
}

type trialDump struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Env      string `json:"env"`
	Seed     string `json:"seed"`
	Episodes int    `json:"episodes"`
}

type episodeDump struct {
	Trial     string             `json:"trial"`
	Episode   int                `json:"episode"`
	Seed      string             `json:"seed"`
	Ticks     int                `json:"ticks"`
	Truncated bool               `json:"truncated"`
	Success   *bool              `json:"success"`
	Returns   map[string]float64 `json:"returns"`
	Metrics   map[string]float64 `json:"metrics"`
}

type dump struct {
	Agents   map[string]*agentDump `json:"agents"`
	Parts    int                   `json:"parts"`
	Trials   []trialDump           `json:"trials"`
	Episodes []episodeDump         `json:"episodes"`
	Rewards  int                   `json:"rewards"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dump DIR")
		os.Exit(2)
	}
	d, err := read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

func read(dir string) (*dump, error) {
	l, err := datalog.Open(dir)
	if err != nil {
		return nil, err
	}
	d := &dump{Agents: map[string]*agentDump{}, Parts: len(l.Parts())}
	for _, name := range l.Agents() {
		info, err := l.Agent(name)
		if err != nil {
			return nil, err
		}
		a := &agentDump{
			Sources:          map[string]sourceSum{},
			Returns:          map[string]float64{},
			ObservationSpace: json.RawMessage(info.Metadata[datalog.MetaObservationSpace]),
			ActionSpace:      json.RawMessage(info.Metadata[datalog.MetaActionSpace]),
			ObservationDim:   info.ObservationDim,
			ActionDim:        info.ActionDim,
			MaskLen:          info.MaskLen,
		}
		trials, ids := map[string]bool{}, map[string]bool{}
		for r, err := range l.Rows(name) {
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", name, err)
			}
			a.Rows++
			trials[r.Trial] = true
			ids[r.Trial+"/"+r.AgentID] = true
			if r.ParentID == "" {
				a.ParentNull++
			}
			a.Start += b2i(r.Start)
			a.Acting += b2i(r.Acting)
			a.Terminated += b2i(r.Terminated)
			a.Truncated += b2i(r.Truncated)
			a.EpisodeSum += int64(r.Episode)
			a.TickSum += int64(r.Tick)
			a.IndexSum += int64(r.Index)
			a.SpanTicksSum += int64(r.SpanTicks)
			a.ObsChecksum += checksum(r.Obs)
			switch {
			case r.Start:
				a.ActionNull++
			case r.Action.Floats != nil:
				a.ActionSum += checksum(r.Action.Floats)
			case r.Action.Ints != nil:
				var s float64
				for j, v := range r.Action.Ints {
					s += float64(j+1) * float64(v)
				}
				a.ActionSum += s
			default:
				a.ActionSum += float64(r.Action.Int)
			}
			if info.MaskLen > 0 {
				if r.Mask == nil {
					a.MaskNull++
				}
				for _, m := range r.Mask {
					a.MaskTrue += b2i(m)
				}
			}
			a.RewardSum += r.Reward
			for _, s := range r.Sources {
				ss := a.Sources[s.Source]
				ss.Count++
				ss.Sum += s.Value
				a.Sources[s.Source] = ss
			}
			for _, s := range r.Retro {
				a.RetroSum += s.Value
			}
			a.Messages += len(r.Messages)
			for _, m := range r.Messages {
				a.MessageBytes += len(m.Payload)
			}
			a.Returns[r.Trial+"/"+strconv.Itoa(r.Episode)] += r.TotalReward()
		}
		a.Trials, a.AgentIDs, a.Episodes = len(trials), len(ids), len(a.Returns)
		d.Agents[name] = a
	}

	ts, err := l.Trials()
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		d.Trials = append(d.Trials, trialDump{ID: t.ID, State: t.State.String(), Env: t.Env, Seed: strconv.FormatUint(t.Seed, 10), Episodes: t.Episodes})
	}
	slices.SortFunc(d.Trials, func(a, b trialDump) int { return cmpStr(a.ID, b.ID) })

	eps, err := l.Episodes()
	if err != nil {
		return nil, err
	}
	for _, e := range eps {
		ed := episodeDump{Trial: e.Trial, Episode: e.Episode, Seed: strconv.FormatUint(e.Seed, 10), Ticks: e.Ticks, Truncated: e.Truncated, Returns: map[string]float64{}, Metrics: map[string]float64{}}
		if e.DefinesSuccess {
			ed.Success = &e.Success
		}
		for _, r := range e.Returns {
			ed.Returns[r.Agent] = r.Value
		}
		for _, m := range e.Metrics {
			ed.Metrics[m.Name] = m.Value
		}
		d.Episodes = append(d.Episodes, ed)
	}
	rs, err := l.Retro()
	if err != nil {
		return nil, err
	}
	d.Rewards = len(rs)
	return d, nil
}

// checksum is sum_j (j+1) * v[j], in float64.
func checksum(v []float32) float64 {
	var s float64
	for j, x := range v {
		s += float64(j+1) * float64(x)
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
