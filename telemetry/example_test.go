package telemetry_test

import (
	"context"
	"fmt"
	"os"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/telemetry"
	dto "github.com/prometheus/client_model/go"
)

// A campaign of maze trials counted by the metrics' sink and logged to an Arrow
// activity log that the metrics watch; then the registry is gathered, as a scrape of
// /metrics would.
func ExampleMetrics_Sink() {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "telemetry")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ds, err := datalog.NewDataset(dir)
	if err != nil {
		panic(err)
	}
	m := telemetry.New()
	m.AddLog(ds.Stats)
	spec := runners.Spec{Env: "maze", Seed: 1, Episodes: 2,
		Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}}
	c, err := runners.NewCampaign(reg, spec, runners.WithTrials(4), runners.WithWorkers(2),
		runners.WithSinks(m.Sink()), runners.WithWorkerSinks(ds.WorkerSinks()))
	if err != nil {
		panic(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	if err := ds.Close(); err != nil {
		panic(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		panic(err)
	}
	fmt.Println("campaign env steps:", s.EnvSteps)
	for _, f := range fams {
		switch f.GetName() {
		case "baton_trials", "baton_env_steps_total", "baton_actions_total":
			for _, mt := range f.GetMetric() {
				fmt.Printf("%s{%s} %g\n", f.GetName(), labels(mt), value(mt))
			}
		case "baton_log_rows_total":
			fmt.Println("log rows counted:", value(f.GetMetric()[0]) == float64(ds.Stats().Rows) && ds.Stats().Rows > 0)
		}
	}
	// Output:
	// campaign env steps: 160
	// baton_actions_total{source="agent"} 0
	// baton_actions_total{source="trial"} 160
	// baton_env_steps_total{source="env"} 0
	// baton_env_steps_total{source="trial"} 160
	// log rows counted: true
	// baton_trials{state="ended"} 4
	// baton_trials{state="failed"} 0
	// baton_trials{state="pending"} 0
	// baton_trials{state="running"} 0
	// baton_trials{state="stopped"} 0
}

func labels(m *dto.Metric) string {
	out := ""
	for i, lp := range m.GetLabel() {
		if i > 0 {
			out += ","
		}
		out += lp.GetName() + "=" + fmt.Sprintf("%q", lp.GetValue())
	}
	return out
}

func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
