package datalog_test

import (
	"testing"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The trials table names the task of a schedule that each trial played, and has a
// null task outside a schedule.
func TestTrialTask(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		opts []runners.CampaignOption
		spec runners.Spec
		want []string
	}{
		{"scheduled", []runners.CampaignOption{runners.WithSchedule(runners.Schedule{Order: runners.InOrder, Tasks: []runners.Task{
			{Name: "reference", Env: "maze", Trials: 2},
			{Name: "small", Env: "maze", Config: []byte(`{"generate": {"rows": 5, "cols": 5, "seed": 3}}`), Trials: 1},
		}})}, runners.Spec{Seed: 2}, []string{"reference", "reference", "small"}},
		{"plain", []runners.CampaignOption{runners.WithTrials(2)}, mazeSpec(), []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mem, withMem := checked(t)
			ds, err := datalog.NewDataset(dir, withMem)
			require.NoError(t, err)
			c, err := runners.NewCampaign(testRegistry(t), tt.spec, append(tt.opts, runners.WithWorkers(2), runners.WithWorkerSinks(ds.WorkerSinks()))...)
			require.NoError(t, err)
			_, err = c.Run(t.Context())
			require.NoError(t, err)
			require.NoError(t, ds.Close())
			mem.AssertSize(t, 0)

			l, err := datalog.Open(dir)
			require.NoError(t, err)
			ts, err := l.Trials()
			require.NoError(t, err)
			got := map[int]string{}
			for _, tr := range ts {
				got[tr.Index] = tr.Task
			}
			want := map[int]string{}
			for i, task := range tt.want {
				want[i] = task
			}
			assert.Equal(t, want, got)
		})
	}
}
