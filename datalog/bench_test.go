package datalog_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/require"
)

// synthetic feeds a writer the events of a two-agent trial without running one: a
// parent with a Discrete action and a child with a Box action and a mask.
type synthetic struct {
	info   *event.TrialInfo
	obs    [2][]float32
	step   event.StepEvent
	ev     event.Event
	sc     event.StateChange
	floats []float32
	mask   []bool
	srcs   []event.RewardSource
	n      int
}

func newSynthetic(obsDim int) *synthetic {
	parent := env.Spec{Name: "parent", ObservationSpace: spaces.Must(spaces.NewBox([]int{obsDim}, -10, 10)), ActionSpace: spaces.Discrete{N: 4}, MaskLen: 4}
	child := env.Spec{Name: "child", ObservationSpace: spaces.Must(spaces.NewBox([]int{obsDim}, -10, 10)), ActionSpace: spaces.Must(spaces.NewBox([]int{2}, -1, 1))}
	s := &synthetic{
		info:   &event.TrialInfo{ID: "t-0", Env: "synthetic", Seed: 7, Episodes: 1, Agents: []env.Spec{parent, child}, Policies: []string{"a", "b"}},
		floats: []float32{0.25, -0.5},
		mask:   []bool{true, false, true, true},
		srcs:   []event.RewardSource{{Source: event.SourceEnv, Value: 1}},
	}
	for i := range s.obs {
		s.obs[i] = make([]float32, obsDim)
		for j := range s.obs[i] {
			s.obs[i][j] = float32(i*obsDim + j)
		}
	}
	return s
}

// start sends the Running state of trial id.
func (s *synthetic) start(t testing.TB, w event.Sink, id string) {
	s.info.ID = id
	s.sc = event.StateChange{Trial: id, State: event.Running, Info: s.info}
	s.ev = event.Event{Kind: event.KindState, Trial: id, State: &s.sc}
	require.NoError(t, w.Handle(context.Background(), &s.ev))
}

// end sends the Ended state of trial id.
func (s *synthetic) end(t testing.TB, w event.Sink, id string) {
	s.sc = event.StateChange{Trial: id, State: event.Ended, Info: s.info}
	s.ev = event.Event{Kind: event.KindState, Trial: id, State: &s.sc}
	require.NoError(t, w.Handle(context.Background(), &s.ev))
}

// row sends the next step event of trial id.
func (s *synthetic) row(w event.Sink, id string) error {
	k := s.n % 2
	s.n++
	st := &s.step
	*st = event.StepEvent{Episode: 0, Tick: s.n, Obs: s.obs[k], Reward: 1, Sources: s.srcs, SpanTicks: 1}
	if k == 0 {
		st.Agent, st.AgentID = "parent", "parent_0"
		st.Mask = s.mask
		st.Action.Int = 2
	} else {
		st.Agent, st.AgentID, st.ParentID = "child", "child_3", "parent_0"
		st.Action.Floats = s.floats
	}
	s.obs[k][0] = float32(s.n)
	s.ev = event.Event{Kind: event.KindStep, Trial: id, Step: st}
	return w.Handle(context.Background(), &s.ev)
}

// BenchmarkWriter measures the writer alone: one op is one logged row of 64 floats of
// observation (the maze's rows hold about 105).
func BenchmarkWriter(b *testing.B) {
	for _, comp := range []datalog.Compression{datalog.Uncompressed, datalog.LZ4, datalog.ZSTD} {
		b.Run("compression="+comp.String(), func(b *testing.B) {
			ds, err := datalog.NewDataset(b.TempDir(), datalog.WithCompression(comp))
			require.NoError(b, err)
			w, err := ds.NewWriter()
			require.NoError(b, err)
			s := newSynthetic(64)
			s.start(b, w, "t-0")
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			for range b.N {
				if err := s.row(w, "t-0"); err != nil {
					b.Fatal(err)
				}
			}
			s.end(b, w, "t-0")
			require.NoError(b, w.Close())
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N), "allocs/row")
			st := ds.Stats()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/secs, "rows/s")
			b.ReportMetric(float64(st.Bytes)/secs/1e6, "MB/s")
			b.ReportMetric(float64(st.Bytes)/float64(b.N), "B/row")
			require.NoError(b, ds.Close())
		})
	}
}
