// Command mkrich writes a synthetic baton log that the example environments do not
// produce, for python/tests/test_log_readers.py: one agent per kind of action space
// (Discrete with a mask, Box, MultiDiscrete, MultiBinary with a mask), observations in
// Dict, Tuple and Text spaces and in an unbounded Box holding infinities, masks left
// out on some rows, parent ids, decisions spanning several ticks, reward sources,
// messages, retroactive rewards (two for one step, one arriving in a later episode),
// truncated and terminated sub-episodes, episode metrics, and a trial that fails.
// Values come from a seeded generator, so the log is the same on every run.
//
//	go run ./python/tests/testdata/mkrich -dir DIR [-trials 3] [-compression zstd]
//		[-batch-rows 8] [-part-bytes 4096]
//
// (it lives under testdata, which go vet ./... and go test ./... skip).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
)

func main() {
	dir := flag.String("dir", "", "write the log into `DIR` (required)")
	trials := flag.Int("trials", 3, "number of trials")
	compression := flag.String("compression", "zstd", "body compression: none, lz4 or zstd")
	batchRows := flag.Int("batch-rows", 8, "rows per record batch")
	partBytes := flag.Int64("part-bytes", 4096, "roll parts over at about this many bytes")
	flag.Parse()
	if err := run(*dir, *trials, *compression, *batchRows, *partBytes); err != nil {
		fmt.Fprintln(os.Stderr, "mkrich:", err)
		os.Exit(1)
	}
}

type agentDef struct {
	spec env.Spec
	// every is how many ticks a decision spans.
	every int
}

func agents() []agentDef {
	text := spaces.Must(spaces.NewText(0, 4, "xyz"))
	dictObs := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: spaces.Must(spaces.NewBox([]int{2}, -1, 1))},
		spaces.DictEntry{Key: "name", Space: text},
		spaces.DictEntry{Key: "door", Space: spaces.Discrete{N: 3, Start: 1}},
	))
	tupleObs := spaces.Must(spaces.NewTuple(spaces.Must(spaces.NewMultiBinary(2, 2)), spaces.Must(spaces.NewMultiDiscrete([]int64{2, 3}))))
	inf := float32(math.Inf(1))
	return []agentDef{
		{env.Spec{Name: "chooser", ObservationSpace: dictObs, ActionSpace: spaces.Discrete{N: 4, Start: 2}, MaskLen: 4}, 1},
		{env.Spec{Name: "mover", ObservationSpace: spaces.Must(spaces.NewBox([]int{2, 2}, -inf, inf)),
			ActionSpace: spaces.Must(spaces.NewBox([]int{3}, -1, 1))}, 2},
		{env.Spec{Name: "picker", ObservationSpace: tupleObs, ActionSpace: spaces.Must(spaces.NewMultiDiscrete([]int64{3, 5}))}, 1},
		{env.Spec{Name: "switcher", ObservationSpace: text, ActionSpace: spaces.Must(spaces.NewMultiBinary(3)), MaskLen: 3}, 3},
	}
}

func run(dir string, trials int, compression string, batchRows int, partBytes int64) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	comp, err := datalog.ParseCompression(compression)
	if err != nil {
		return err
	}
	ds, err := datalog.NewDataset(dir, datalog.WithCompression(comp), datalog.WithBatchRows(batchRows), datalog.WithMaxPartBytes(partBytes))
	if err != nil {
		return err
	}
	w, err := ds.NewWriter()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for t := range trials {
		if err := trial(w, rng, t); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return ds.Close()
}

func trial(w *datalog.Writer, rng *rand.Rand, index int) error {
	ctx := context.Background()
	id := fmt.Sprintf("rich-%d", index)
	defs := agents()
	info := &event.TrialInfo{ID: id, Index: index, Env: "rich", Config: []byte(`{"level":2}`), Seed: uint64(100 + index),
		Episodes: 2, MaxTicks: 40, Policies: make([]string, len(defs)), DefinesSuccess: true, Metrics: []string{"coverage", "found"}}
	for _, d := range defs {
		info.Agents = append(info.Agents, d.spec)
	}
	send := func(e event.Event) error {
		e.Trial = id
		return w.Handle(ctx, &e)
	}
	if err := send(event.Event{Kind: event.KindState, State: &event.StateChange{Trial: id, State: event.Running, Info: info}}); err != nil {
		return err
	}
	for ep := range 2 {
		ticks := 6 + rng.IntN(6)
		returns := make([]float64, len(defs))
		for tick := 0; tick <= ticks; tick++ {
			var msgs []event.Message
			if tick%4 == 1 {
				msgs = []event.Message{
					{From: event.EnvAddress, To: "chooser", Payload: []byte(fmt.Sprintf("tick %d", tick)), Sent: tick},
					{From: fmt.Sprintf("chooser_%d", ep), To: event.EnvAddress, Payload: []byte{0, 255, byte(tick)}, Sent: tick - 1},
				}
			}
			index := 0
			for i, d := range defs {
				if tick%d.every != 0 && tick != ticks {
					continue
				}
				s := step(rng, d, ep, tick, ticks, index, i)
				s.Messages = msgs
				returns[i] += s.Reward
				if err := send(event.Event{Kind: event.KindStep, Step: &s}); err != nil {
					return err
				}
				index++
			}
		}
		// Two retroactive rewards for one step of the chooser, one for the mover's
		// first decision arriving in the next episode's first tick (or this one's end).
		for _, r := range []event.RetroReward{
			{Episode: ep, Tick: 2, AgentID: fmt.Sprintf("chooser_%d", ep), Agent: "chooser", Source: "controller", Value: 0.25, ArrivedEpisode: ep, ArrivedTick: 3},
			{Episode: ep, Tick: 2, AgentID: fmt.Sprintf("chooser_%d", ep), Agent: "chooser", Source: "actor:human", Value: -1.5, ArrivedEpisode: ep, ArrivedTick: 4},
			{Episode: ep, Tick: 2, AgentID: fmt.Sprintf("mover_%d", ep), Agent: "mover", Source: "controller", Value: float64(float32(rng.Float64())), ArrivedEpisode: ep, ArrivedTick: ticks},
		} {
			returns[0] += r.Value
			if err := send(event.Event{Kind: event.KindReward, Reward: &r}); err != nil {
				return err
			}
		}
		metrics := []float64{rng.Float64(), math.NaN()}
		if ep == 1 {
			metrics[1] = 3
		}
		if err := send(event.Event{Kind: event.KindEpisode, Episode: &event.EpisodeEvent{Episode: ep, Seed: rng.Uint64(), End: true,
			Ticks: ticks, Truncated: ep == 1, Success: ep == 0, Returns: returns, Metrics: metrics}}); err != nil {
			return err
		}
	}
	end := event.StateChange{Trial: id, State: event.Ended, Info: info}
	if index == 1 {
		end.State, end.Err = event.Failed, errors.New("rich: the environment gave up")
	}
	return send(event.Event{Kind: event.KindState, State: &end})
}

// step is agent d's row at tick: a start row at 0, its last row (terminated, or
// truncated in episode 1) at the episode's last tick.
func step(rng *rand.Rand, d agentDef, ep, tick, last, index, i int) event.StepEvent {
	s := event.StepEvent{Episode: ep, Tick: tick, Index: index, Agent: d.spec.Name, AgentID: fmt.Sprintf("%s_%d", d.spec.Name, ep),
		Start: tick == 0, Acting: tick != last}
	if i > 0 {
		s.ParentID = fmt.Sprintf("chooser_%d", ep)
	}
	obs := d.spec.ObservationSpace.Sample(rng)
	flat, err := spaces.Flatten(d.spec.ObservationSpace, obs)
	if err != nil {
		panic(err)
	}
	if d.spec.Name == "mover" && tick%3 == 1 {
		flat[0], flat[3] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	s.Obs = flat
	if d.spec.MaskLen > 0 && tick%5 != 4 { // no mask on some rows
		s.Mask = make([]bool, d.spec.MaskLen)
		for j := range s.Mask {
			s.Mask[j] = rng.IntN(2) == 0
		}
	}
	if s.Start {
		s.Sources = []event.RewardSource{{Source: event.SourceEnv}}
		return s
	}
	s.SpanTicks = d.every
	if tick == last && tick%d.every != 0 {
		s.SpanTicks = tick % d.every
	}
	switch sp := d.spec.ActionSpace.(type) {
	case spaces.Discrete:
		s.Action = agent.Discrete(sp.Start + rng.Int64N(int64(sp.N)))
	case *spaces.Box:
		v := sp.Sample(rng).([]float32)
		s.Action = agent.Continuous(v)
	case *spaces.MultiDiscrete:
		s.Action = agent.MultiInts(sp.Sample(rng).([]int64))
	case *spaces.MultiBinary:
		bits := sp.Sample(rng).([]int8)
		v := make([]int64, len(bits))
		for j, b := range bits {
			v[j] = int64(b)
		}
		s.Action = agent.MultiInts(v)
	}
	env := float64(float32(rng.NormFloat64()))
	s.Sources = []event.RewardSource{{Source: event.SourceEnv, Value: env}}
	s.Reward = env
	if tick%3 == 0 {
		s.Sources = append(s.Sources, event.RewardSource{Source: "actor:chooser", Value: 0.5})
		s.Reward += 0.5
	}
	s.Reward = float64(float32(s.Reward))
	if tick == last {
		s.Terminated, s.Truncated = ep == 0, ep == 1
	}
	return s
}
