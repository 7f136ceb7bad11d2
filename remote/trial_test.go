package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func serveTrials(t *testing.T, reg *registry.Registry, opts ...remote.ServerOption) (*server, *runners.Controller) {
	t.Helper()
	ctrl, err := runners.NewController(reg, runners.WithWorkers(2))
	require.NoError(t, err)
	s := newServer(t, opts...)
	require.NoError(t, s.AddTrials(ctrl))
	return start(t, s, false), ctrl
}

func dialTrials(t *testing.T, srv *server, opts ...remote.DialOption) *remote.TrialClient {
	t.Helper()
	c, err := remote.DialTrials(t.Context(), srv.target, append(append([]remote.DialOption{}, srv.opts...), opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestTrialsCampaign starts a campaign on a trial server, watches it to the end,
// and finds the episodes of the same campaign run locally.
func TestTrialsCampaign(t *testing.T) {
	reg := testRegistry(t)
	srv, _ := serveTrials(t, reg)
	c := dialTrials(t, srv)
	spec := runners.Spec{Env: "maze", Seed: 5, Episodes: 2, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}, MaxTicks: 200}
	ids, err := c.StartCampaign(t.Context(), spec, 4)
	require.NoError(t, err)
	assert.Equal(t, []string{"maze-0", "maze-1", "maze-2", "maze-3"}, ids)

	results := map[string]*runners.Result{}
	states := map[string][]event.State{}
	for ch, err := range c.Watch(t.Context(), ids...) {
		require.NoError(t, err)
		states[ch.Trial] = append(states[ch.Trial], ch.State)
		if ch.Result != nil {
			results[ch.Trial] = ch.Result
		}
	}
	require.Len(t, results, 4)
	for _, id := range ids {
		assert.Equal(t, []event.State{event.Pending, event.Running, event.Ended}, states[id], id)
	}

	var local []runners.Result
	camp, err := runners.NewCampaign(reg, spec, runners.WithTrials(4), runners.WithWorkers(1),
		runners.WithProgress(func(p runners.Progress) { local = append(local, *p.Result) }))
	require.NoError(t, err)
	_, err = camp.Run(t.Context())
	require.NoError(t, err)
	for _, want := range local {
		got := results[want.ID]
		require.NotNil(t, got, want.ID)
		assert.Equal(t, want.Episodes, got.Episodes, want.ID)
		assert.Equal(t, want.Steps, got.Steps)
		assert.Equal(t, []string{maze.StrategyName, maze.MotionName}, []string{got.Info.Agents[0].Name, got.Info.Agents[1].Name})
	}
	res, err := c.Wait(t.Context(), "maze-2")
	require.NoError(t, err)
	assert.Equal(t, event.Ended, res.State)

	list, err := c.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 4)
	assert.Equal(t, runners.Status{ID: "maze-0", Env: "maze", State: event.Ended, Episode: 1, Tick: list[0].Tick}, list[0])

	_, err = c.StartCampaign(t.Context(), spec, 2)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.AlreadyExists, status.Code(err))
}

// TestTrialsStopAndReward stops a trial whose remote strategy stalls, and rewards a
// running one.
func TestTrialsStopAndReward(t *testing.T) {
	g := newGate()
	spec := mazeSpecs(t)[maze.StrategyName]
	agents := serveAgents(t, true, []remote.Agent{{Spec: spec, Policy: g, Concurrent: true}})
	reg := testRegistry(t)
	srv, _ := serveTrials(t, reg, remote.WithRemoteActors(remote.WithTimeout(time.Minute)))
	c := dialTrials(t, srv)

	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.StrategyName: runners.Named("grpc://" + agents.target + "/strategy")}})
	require.NoError(t, err)
	<-g.entered // the trial waits for the remote strategy
	err = c.Reward(t.Context(), id, runners.Feedback{AgentID: "strategy_0", Tick: runners.Now, Value: 2, Source: "person"})
	require.NoError(t, err)
	err = c.Reward(t.Context(), id, runners.Feedback{AgentID: "ghost_0", Tick: runners.Now, Value: 2})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	require.NoError(t, c.Stop(t.Context(), id))
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "trial stopped")
	err = c.Reward(t.Context(), id, runners.Feedback{AgentID: "strategy_0", Tick: runners.Now, Value: 1})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))

	err = c.Stop(t.Context(), "nope")
	require.ErrorIs(t, err, remote.ErrNotFound)
	_, err = c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{"ghost": runners.Named("x")}})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `unknown agent "ghost" of maze`)
	_, err = c.Start(t.Context(), runners.Spec{Env: "nowhere"})
	require.ErrorIs(t, err, remote.ErrNotFound)
	_, err = c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.StrategyName: runners.Value(g)}})
	require.ErrorIs(t, err, remote.ErrConfig, "a policy value cannot cross the wire")
}

// TestTrialsRemoteActorsRefused refuses remote actors unless the server allows
// them, and checks keys by environment.
func TestTrialsRemoteActorsRefused(t *testing.T) {
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789", "other": "other-key-0123456789"})
	require.NoError(t, err)
	srv, _ := serveTrials(t, testRegistry(t), remote.WithKeys(keys))
	c := dialTrials(t, srv, remote.WithKey("maze-key-0123456789"))
	_, err = c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.StrategyName: runners.Named("grpc://127.0.0.1:1")}})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	var ce *remote.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "spec.actors[strategy].remote", ce.Field.Field)

	id, err := c.Start(t.Context(), runners.Spec{Env: "maze"})
	require.NoError(t, err)
	other := dialTrials(t, srv, remote.WithKey("other-key-0123456789"))
	list, err := other.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, list, "a key lists only the trials of the environments it grants")
	require.ErrorIs(t, other.Stop(t.Context(), id), remote.ErrUnauthenticated)
	_, err = other.Start(t.Context(), runners.Spec{Env: "maze"})
	require.ErrorIs(t, err, remote.ErrUnauthenticated)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := c.Wait(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, event.Ended, res.State)
}
