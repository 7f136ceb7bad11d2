package remote_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// comparable drops a summary's timing, which differs from run to run.
func comparable(s runners.Summary) runners.Summary {
	s.Wall, s.WallSeconds, s.StepsPerSecond = 0, 0, 0
	for i := range s.Failures {
		s.Failures[i].Err = nil
	}
	return s
}

func campaign(t *testing.T, reg *registry.Registry, spec runners.Spec, opts ...runners.CampaignOption) runners.Summary {
	t.Helper()
	c, err := runners.NewCampaign(reg, spec, opts...)
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	return s
}

// TestCampaignRemoteStrategy runs the same maze campaign with the strategy agent
// local and served remotely, over streams and unary calls, and gets the same
// summary.
func TestCampaignRemoteStrategy(t *testing.T) {
	reg := testRegistry(t)
	spec := runners.Spec{Env: "maze", Seed: 7, Episodes: 2}
	local := campaign(t, reg, spec, runners.WithTrials(40), runners.WithWorkers(2))
	require.Equal(t, 40, local.Ended)

	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)})
	for _, tt := range []struct {
		name string
		opts []remote.DialOption
	}{
		{"stream", nil},
		{"unary", []remote.DialOption{remote.WithUnary()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A deadline that a loaded test machine cannot miss: this test is about
			// the summary.
			client := dialAgent(t, srv, append(tt.opts, remote.WithTimeout(time.Minute))...)
			require.NoError(t, client.Check(mazeSpecs(t)[maze.StrategyName]))
			rs := spec
			rs.Actors = map[string]runners.Actor{maze.StrategyName: runners.Value(client)}
			got := campaign(t, reg, rs, runners.WithTrials(40), runners.WithWorkers(2))
			assert.Equal(t, comparable(local), comparable(got))
		})
	}
}

// faulty is a policy served remotely that plays the oracle and, on its call number
// at (counted from 1 over every caller), does something else: stall until its
// context ends, or tell the test to kill the server and block.
type faulty struct {
	oracle agent.Policy
	at     int64
	calls  atomic.Int64
	stall  bool
	dying  chan struct{}
}

func (f *faulty) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if f.calls.Add(1) == f.at {
		if !f.stall {
			close(f.dying)
		}
		<-ctx.Done()
		return agent.RawAction{}, ctx.Err()
	}
	return f.oracle.Act(ctx, obs, mask)
}

// TestCampaignRemoteFaults runs campaigns whose odd trials play a remote strategy
// that stalls or dies in the middle of a trial: that trial fails, within the
// deadline, with a reason naming the address and the status; the campaign goes on;
// and the activity log keeps every step up to the failure.
func TestCampaignRemoteFaults(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stall  bool
		reason string
	}{
		{"stall", true, "DeadlineExceeded: no answer within 300ms"},
		{"die", false, "Unavailable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := testRegistry(t)
			oracle := oracleAgent(t)
			p, err := oracle.New()
			require.NoError(t, err)
			f := &faulty{oracle: p, at: 5, stall: tt.stall, dying: make(chan struct{})}
			served := remote.Agent{Spec: oracle.Spec, Policy: f}
			srv := serveAgents(t, true, []remote.Agent{served}, remote.WithGracePeriod(50*time.Millisecond))
			client := dialAgent(t, srv, remote.WithTimeout(300*time.Millisecond))
			if !tt.stall {
				go func() {
					<-f.dying
					_ = srv.stop()
				}()
			}

			dir := filepath.Join(t.TempDir(), "log")
			ds, err := datalog.NewDataset(dir)
			require.NoError(t, err)
			remoteOdd := runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
				if i%2 == 1 {
					s.Actors = map[string]runners.Actor{maze.StrategyName: runners.Value(client)}
				}
				return nil
			})
			start := time.Now()
			sum := campaign(t, reg, runners.Spec{Env: "maze", Seed: 3}, runners.WithTrials(6), runners.WithWorkers(1),
				remoteOdd, runners.WithWorkerSinks(ds.WorkerSinks()))
			require.NoError(t, ds.Close())
			assert.Less(t, time.Since(start), 20*time.Second)

			assert.Equal(t, 6, sum.Trials, "the campaign runs every trial")
			require.NotEmpty(t, sum.Failures)
			first := sum.Failures[0]
			t.Logf("the failed trial: %s", first.Reason)
			assert.Equal(t, 1, first.Index, "the first remote trial meets the fault")
			assert.Contains(t, first.Reason, "agent strategy at "+srv.target)
			assert.Contains(t, first.Reason, tt.reason)
			for _, fl := range sum.Failures {
				assert.Equal(t, 1, fl.Index%2, "only remote trials fail: %s", fl.Reason)
			}
			assert.GreaterOrEqual(t, sum.Ended, 3, "the local trials end")
			if tt.stall {
				assert.Len(t, sum.Failures, 1, "after the stall the server answers again")
			}

			// The log keeps the failed trial's steps up to its failure.
			l, err := datalog.Open(dir)
			require.NoError(t, err)
			rows := 0
			perTrial := map[string]int{}
			for row, err := range l.Rows(maze.StrategyName) {
				require.NoError(t, err)
				perTrial[row.Trial]++
				if row.Trial == first.Trial {
					rows++
				}
			}
			t.Logf("strategy rows per trial: %v", perTrial)
			assert.Positive(t, rows, "the failed trial's steps before the failure are logged")
			trials, err := l.Trials()
			require.NoError(t, err)
			require.Len(t, trials, 6)
			assert.Equal(t, event.Failed, trials[1].State)
			assert.Contains(t, trials[1].Err, tt.reason)
		})
	}
}
