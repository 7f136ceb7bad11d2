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
//
// With -rows the dump also carries every value the Go reader reads: per agent
// "row_values", one object per row in the log's order with every column (observation,
// action, mask, reward sources, retroactive rewards, messages, ...), and "retro", the
// rewards table row by row. Floats are written as the shortest decimal that reads back
// as the same float32; infinities and NaN as the strings "inf", "-inf" and "nan".
//
//	go run ./tools/arrowcheck/dump -rows DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/spaces"
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
	ObsChecksum  f64                  `json:"obs_checksum"`
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
	// RowValues is every row, with -rows.
	RowValues []rowDump `json:"row_values,omitempty"`
}

// f64 is a float64 written as JSON, "inf", "-inf" or "nan" where it is not finite (a
// checksum of observations that hold infinities).
type f64 float64

func (f f64) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 0):
		return f32(v).MarshalJSON()
	}
	return json.Marshal(v)
}

// f32 is a float32 written as JSON: the shortest decimal that reads back as the same
// float32, or "inf", "-inf", "nan".
type f32 float32

func (f f32) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 32), nil
}

func f32s(v []float32) []f32 {
	out := make([]f32, len(v))
	for i, x := range v {
		out[i] = f32(x)
	}
	return out
}

type sourceDump struct {
	Source string `json:"source"`
	Value  f32    `json:"value"`
}

type messageDump struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Payload []byte `json:"payload"` // base64, as encoding/json writes []byte
	Sent    int    `json:"sent"`
}

// rowDump is one row as datalog.Row reads it, its slices copied (a Row's slices are
// valid only until the next row). Action is null on a start row, an
// integer for a Discrete action, a list otherwise; Mask is null where the row has
// none; ParentID is null for no parent.
type rowDump struct {
	Trial      string        `json:"trial_id"`
	Episode    int           `json:"episode"`
	Tick       int           `json:"tick"`
	Index      int           `json:"index"`
	AgentID    string        `json:"agent_id"`
	ParentID   *string       `json:"parent_agent_id"`
	Start      bool          `json:"start"`
	Acting     bool          `json:"acting"`
	Obs        []f32         `json:"observation"`
	Action     any           `json:"action"`
	Mask       []bool        `json:"action_mask"`
	Reward     f32           `json:"reward"`
	Sources    []sourceDump  `json:"reward_sources"`
	Retro      []sourceDump  `json:"retro"`
	Terminated bool          `json:"terminated"`
	Truncated  bool          `json:"truncated"`
	SpanTicks  int           `json:"span_ticks"`
	Messages   []messageDump `json:"messages"`
}

// retroDump is a row of the rewards table.
type retroDump struct {
	Trial          string `json:"trial_id"`
	Episode        int    `json:"episode"`
	Tick           int    `json:"tick"`
	Agent          string `json:"agent"`
	AgentID        string `json:"agent_id"`
	Source         string `json:"source"`
	Value          f32    `json:"value"`
	ArrivedEpisode int    `json:"arrived_episode"`
	ArrivedTick    int    `json:"arrived_tick"`
}

func rowValues(r *datalog.Row, actKind spaces.Kind) rowDump {
	d := rowDump{
		Trial: r.Trial, Episode: r.Episode, Tick: r.Tick, Index: r.Index, AgentID: r.AgentID,
		Start: r.Start, Acting: r.Acting, Obs: f32s(r.Obs), Mask: slices.Clone(r.Mask), Reward: f32(r.Reward),
		Sources: []sourceDump{}, Retro: []sourceDump{}, Messages: []messageDump{},
		Terminated: r.Terminated, Truncated: r.Truncated, SpanTicks: r.SpanTicks,
	}
	if r.ParentID != "" {
		p := r.ParentID
		d.ParentID = &p
	}
	switch {
	case r.Start:
	case actKind == spaces.KindBox:
		d.Action = f32s(r.Action.Floats)
	case actKind == spaces.KindMultiDiscrete || actKind == spaces.KindMultiBinary:
		d.Action = slices.Clone(r.Action.Ints)
	default:
		d.Action = r.Action.Int
	}
	for _, s := range r.Sources {
		d.Sources = append(d.Sources, sourceDump{s.Source, f32(s.Value)})
	}
	for _, s := range r.Retro {
		d.Retro = append(d.Retro, sourceDump{s.Source, f32(s.Value)})
	}
	for _, m := range r.Messages {
		d.Messages = append(d.Messages, messageDump{m.From, m.To, slices.Clone(m.Payload), m.Sent})
	}
	return d
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
	// Retro is the rewards table, with -rows.
	Retro []retroDump `json:"retro,omitempty"`
}

func main() {
	rows := flag.Bool("rows", false, "also dump every row's values")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: dump [-rows] DIR") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	d, err := read(flag.Arg(0), *rows)
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

func read(dir string, rows bool) (*dump, error) {
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
		actKind := info.ActionSpace.Kind()
		trials, ids := map[string]bool{}, map[string]bool{}
		for r, err := range l.Rows(name) {
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", name, err)
			}
			a.Rows++
			if rows {
				a.RowValues = append(a.RowValues, rowValues(&r, actKind))
			}
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
			a.ObsChecksum += f64(checksum(r.Obs))
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
	if rows {
		for _, r := range rs {
			d.Retro = append(d.Retro, retroDump{Trial: r.Trial, Episode: r.Episode, Tick: r.Tick, Agent: r.Agent,
				AgentID: r.AgentID, Source: r.Source, Value: f32(r.Value), ArrivedEpisode: r.ArrivedEpisode, ArrivedTick: r.ArrivedTick})
		}
	}
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
