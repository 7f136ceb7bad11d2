package datalog_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The episodes table holds each episode's environment metrics, named as the
// environment names them, as the campaign's events carried them; a metric an
// episode did not tell is left out.
func TestEpisodeMetrics(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, webtest.Register(reg))
	dir := t.TempDir()
	ds, err := datalog.NewDataset(dir, datalog.WithBatchRows(16))
	require.NoError(t, err)
	type key struct {
		trial   string
		episode int
	}
	var (
		mu    sync.Mutex
		names []string
		want  = map[key][]datalog.Metric{}
	)
	events := event.SinkFunc(func(_ context.Context, e *event.Event) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Kind == event.KindState && e.State.Info != nil:
			names = e.State.Info.Metrics
		case e.Kind == event.KindEpisode && e.Episode.End:
			var ms []datalog.Metric
			for i, v := range e.Episode.Metrics {
				if !math.IsNaN(v) {
					ms = append(ms, datalog.Metric{Name: names[i], Value: v})
				}
			}
			want[key{e.Trial, e.Episode.Episode}] = ms
		}
		return nil
	})
	camp, err := runners.NewCampaign(reg, runners.Spec{Env: "webtest", Seed: 5, Episodes: 2,
		Actors: map[string]runners.Actor{webtest.MotionName: runners.Named("random")}},
		runners.WithTrials(5), runners.WithWorkers(1), runners.WithSinks(events), runners.WithWorkerSinks(ds.WorkerSinks()))
	require.NoError(t, err)
	s, err := camp.Run(t.Context())
	require.NoError(t, err)
	require.NoError(t, ds.Close())
	require.Equal(t, 5, s.Ended)
	assert.Equal(t, []string{"coverage", "defects_found"}, names)

	l, err := datalog.Open(dir)
	require.NoError(t, err)
	eps, err := l.Episodes()
	require.NoError(t, err)
	require.Len(t, eps, 10)
	for _, e := range eps {
		w, ok := want[key{e.Trial, e.Episode}]
		require.True(t, ok, "%s/%d", e.Trial, e.Episode)
		require.NotEmpty(t, w)
		assert.Equal(t, w, e.Metrics, "%s/%d", e.Trial, e.Episode)
	}
}
