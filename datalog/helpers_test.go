package datalog_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/require"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	return reg
}

// mazeSpec is the campaign the tests log: the oracle strategy and a random motion
// agent, several episodes, a tick limit that truncates some.
func mazeSpec() runners.Spec {
	return runners.Spec{Env: "maze", Seed: 11, Episodes: 3, MaxTicks: 40}
}

// counts is what a campaign told its sinks, counted by a sink of its own.
type counts struct {
	mu       sync.Mutex
	steps    map[string]int // per agent
	episodes int
	trials   map[string]event.State
	seeds    map[uint64]bool
	digest   map[string]uint64 // per agent, rowDigest summed over the steps
}

func newCounts() *counts {
	return &counts{steps: map[string]int{}, trials: map[string]event.State{}, seeds: map[uint64]bool{}, digest: map[string]uint64{}}
}

func (c *counts) Handle(_ context.Context, e *event.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e.Kind {
	case event.KindStep:
		s := e.Step
		c.steps[s.Agent]++
		c.digest[s.Agent] += stepDigest(e.Trial, s)
	case event.KindEpisode:
		if e.Episode.End {
			c.episodes++
		}
	case event.KindState:
		c.trials[e.Trial] = e.State.State
		if e.State.Info != nil {
			c.seeds[e.State.Info.Seed] = true
		}
	}
	return nil
}

// runCampaign runs trials of mazeSpec on two workers into a dataset in dir written
// with opts, and returns what the campaign reported.
func runCampaign(t testing.TB, dir string, trials int, opts ...datalog.WriteOption) *counts {
	t.Helper()
	ds, err := datalog.NewDataset(dir, opts...)
	require.NoError(t, err)
	c := newCounts()
	camp, err := runners.NewCampaign(testRegistry(t), mazeSpec(), runners.WithTrials(trials), runners.WithWorkers(2),
		runners.WithSinks(c), runners.WithWorkerSinks(ds.WorkerSinks()))
	require.NoError(t, err)
	s, err := camp.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, trials, s.Ended)
	require.NoError(t, ds.Close())
	return c
}

// checked returns a checked allocator and the option that passes it.
func checked(t *testing.T) (*memory.CheckedAllocator, datalog.Option) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	return mem, datalog.WithAllocator(mem)
}

// stepDigest and rowDigest hash what a step event and a logged row have in common,
// so that the sum over a log can be compared with the sum over the events.
func stepDigest(trial string, s *event.StepEvent) uint64 {
	return digest(trial, s.Episode, s.Tick, s.Index, s.AgentID, s.ParentID, s.Start, s.Acting, s.Obs, s.Mask, s.Action.Int, s.Action.Floats, s.Action.Ints, s.Start,
		float32(s.Reward), s.Sources, s.Terminated, s.Truncated, s.SpanTicks, s.Messages)
}

func rowDigest(r *datalog.Row) uint64 {
	return digest(r.Trial, r.Episode, r.Tick, r.Index, r.AgentID, r.ParentID, r.Start, r.Acting, r.Obs, r.Mask, r.Action.Int, r.Action.Floats, r.Action.Ints, r.Start,
		float32(r.Reward), r.Sources, r.Terminated, r.Truncated, r.SpanTicks, r.Messages)
}

func digest(trial string, episode, tick, index int, id, parent string, start, acting bool, obs []float32, mask []bool,
	actInt int64, actF []float32, actI []int64, isStart bool, reward float32, srcs []event.RewardSource,
	term, trunc bool, span int, msgs []event.Message) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, trial, episode, tick, index, id, parent, start, acting, mask, term, trunc, span, math.Float32bits(reward))
	for _, x := range obs {
		fmt.Fprint(h, math.Float32bits(x), ",")
	}
	if !isStart {
		fmt.Fprint(h, actInt, actF, actI)
	}
	for _, s := range srcs {
		fmt.Fprint(h, s.Source, math.Float32bits(float32(s.Value)))
	}
	for _, m := range msgs {
		fmt.Fprint(h, m.From, m.To, string(m.Payload), m.Sent)
	}
	return h.Sum64()
}

// datalogFormat formats a float32 as Mismatch does.
func datalogFormat(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }
