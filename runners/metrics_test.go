package runners_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// metricsEntry is the counter with two metrics: "last_reward" (the reward of the last
// step) and "odd_length" (the episode's length, told only when it is odd).
func metricsEntry() registry.Entry {
	e := counterEntry()
	e.Name = "metered"
	e.Metrics = []registry.Metric{
		{Name: "last_reward", Description: "the last step's reward", Value: func(final env.Turn) (float64, bool) {
			return final.Reports[0].Reward, true
		}},
		{Name: "odd_length", Description: "the length of odd episodes", Value: func(final env.Turn) (float64, bool) {
			return float64(final.Tick), final.Tick%2 == 1
		}},
	}
	return e
}

func TestMetrics(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	require.NoError(t, reg.Register(metricsEntry()))
	results := make([]*runners.Result, 3)
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "metered", Episodes: 2}, runners.WithTrials(3), runners.WithWorkers(2),
		runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
			s.Actors = map[string]runners.Actor{"counter": runners.Named([]string{"zero", "one", "two"}[i])}
			s.Config = []byte(`{"length": ` + []string{"3", "4", "5"}[i] + `}`)
			return nil
		}),
		runners.WithProgress(func(p runners.Progress) { results[p.Index] = p.Result }))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, 3, s.Ended, "%v", s.Failures)

	for i, res := range results {
		require.NotNil(t, res)
		assert.Equal(t, []string{"last_reward", "odd_length"}, res.Info.Metrics)
		for _, ep := range res.Episodes {
			require.Len(t, ep.Metrics, 2)
			assert.Equal(t, float64(i), ep.Metrics[0], "trial %d: the policy plays %d", i, i)
			if i == 1 {
				assert.True(t, math.IsNaN(ep.Metrics[1]), "an even episode does not tell its length")
			} else {
				assert.Equal(t, float64(3+i), ep.Metrics[1])
			}
		}
	}
	require.Len(t, s.Metrics, 2)
	assert.Equal(t, runners.MetricSummary{Name: "last_reward", Episodes: 6, Mean: 1, Std: math.Sqrt(2.0 / 3), Min: 0, Max: 2}, s.Metrics[0])
	assert.Equal(t, runners.MetricSummary{Name: "odd_length", Episodes: 4, Mean: 4, Std: 1, Min: 3, Max: 5}, s.Metrics[1])

	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"metrics":[{"name":"last_reward","episodes":6,`)

	// An environment without metrics has none in its results or summary.
	c, err = runners.NewCampaign(reg, runners.Spec{Env: "counter"}, runners.WithTrials(2))
	require.NoError(t, err)
	s, err = c.Run(t.Context())
	require.NoError(t, err)
	assert.Nil(t, s.Metrics)
	b, err = json.Marshal(s)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"metrics"`)
}

// A metric that panics fails its trial, and the failure names the metric.
func TestMetricPanics(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	e := metricsEntry()
	e.Metrics[1].Value = func(env.Turn) (float64, bool) { panic("no length today") }
	require.NoError(t, reg.Register(e))
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "metered"}, runners.WithTrials(1))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, s.Failed)
	assert.Contains(t, s.Failures[0].Reason, "the environment's metric odd_length")
	assert.Contains(t, s.Failures[0].Reason, "no length today")
}

func TestMetricEntryErrors(t *testing.T) {
	value := func(env.Turn) (float64, bool) { return 0, true }
	tests := []struct {
		name    string
		metrics []registry.Metric
		want    []string
	}{
		{"empty name", []registry.Metric{{Value: value}}, []string{"metric #0: the name must be non-empty without white space"}},
		{"white space", []registry.Metric{{Name: "a b", Value: value}}, []string{"metric #0: the name must be non-empty"}},
		{"twice and nil", []registry.Metric{{Name: "m", Value: value}, {Name: "m"}}, []string{`metric "m" is listed twice`, `metric "m": Value is nil`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := counterEntry()
			e.Metrics = tt.metrics
			err := registry.New().Register(e)
			require.ErrorIs(t, err, registry.ErrInvalidEntry)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The registry keeps its own copy of the metrics.
func TestMetricsCopied(t *testing.T) {
	reg := registry.New()
	e := metricsEntry()
	require.NoError(t, reg.Register(e))
	e.Metrics[0].Name = "changed"
	got, err := reg.Lookup("metered")
	require.NoError(t, err)
	assert.Equal(t, "last_reward", got.Metrics[0].Name)
}

// The event that ends an episode carries its metrics, as its result has them (NaN for
// one it did not tell), and Event.Clone copies them.
func TestMetricsInEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	require.NoError(t, reg.Register(metricsEntry()))
	var (
		ends   []*event.Event
		final  *runners.Result
		shared bool
	)
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "metered", Episodes: 2, Config: []byte(`{"length": 4}`)},
		runners.WithSinks(event.SinkFunc(func(_ context.Context, e *event.Event) error {
			if e.Kind == event.KindEpisode && e.Episode.End {
				c, other := e.Clone(), e.Clone()
				if len(other.Episode.Metrics) > 0 {
					other.Episode.Metrics[0] = -1 // a clone's copy is its own
					shared = shared || e.Episode.Metrics[0] == -1
				}
				ends = append(ends, c)
			}
			return nil
		})),
		runners.WithProgress(func(p runners.Progress) { final = p.Result }))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, s.Ended)
	require.NotNil(t, final)
	require.Len(t, ends, 2)
	assert.False(t, shared, "Event.Clone copies the metrics")
	for i, e := range ends {
		require.Len(t, e.Episode.Metrics, 2)
		want := final.Episodes[i].Metrics
		assert.Equal(t, want[0], e.Episode.Metrics[0], "episode %d", i)
		assert.True(t, math.IsNaN(e.Episode.Metrics[1]), "an even episode does not tell its length")
	}
}
