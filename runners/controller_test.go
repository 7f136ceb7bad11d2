package runners_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func newController(t *testing.T, opts ...runners.ControllerOption) *runners.Controller {
	t.Helper()
	c, err := runners.NewController(testRegistry(t), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	return c
}

func states(t *testing.T, c *runners.Controller, id string) []event.State {
	t.Helper()
	changes, err := c.Watch(t.Context(), id)
	require.NoError(t, err)
	var out []event.State
	for sc := range changes {
		assert.Equal(t, id, sc.Trial)
		out = append(out, sc.State)
	}
	return out
}

func TestControllerStartWaitWatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := newRecorder()
	c := newController(t, runners.WithSinks(rec), runners.WithWorkers(2))
	var ids []string
	for i := range 3 {
		spec := mazeSpec("forward")
		spec.Seed = uint64(i)
		id, err := c.Start(t.Context(), spec)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	assert.Equal(t, []string{"trial-1", "trial-2", "trial-3"}, ids)
	for _, id := range ids {
		res, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, event.Ended, res.State)
		assert.Equal(t, id, res.ID)
		assert.True(t, res.Episodes[0].Success)
		assert.Equal(t, []event.State{event.Pending, event.Running, event.Ended}, states(t, c, id))
		assert.Equal(t, -1, res.Info.Index)
		events := rec.events(id)
		assert.Equal(t, event.Running, events[0].State.State)
		assert.Equal(t, event.Ended, events[len(events)-1].State.State)
	}
	list := c.List()
	require.Len(t, list, 3)
	for i, st := range list {
		require.NotNil(t, st.Info)
		assert.Equal(t, ids[i], st.Info.ID)
		st.Info = nil
		assert.Equal(t, runners.Status{ID: ids[i], Env: "maze", State: event.Ended, Tick: 20, Seq: uint64(i + 1)}, st)
	}

	// Ids are unique among the trials held; Forget drops a finished one.
	spec := mazeSpec("forward")
	spec.ID = "trial-1"
	_, err := c.Start(t.Context(), spec)
	require.ErrorIs(t, err, runners.ErrTrialExists)
	require.NoError(t, c.Forget("trial-1"))
	require.ErrorIs(t, c.Forget("trial-1"), runners.ErrUnknownTrial)
	id, err := c.Start(t.Context(), spec)
	require.NoError(t, err)
	assert.Equal(t, "trial-1", id)
	_, err = c.Wait(t.Context(), id)
	require.NoError(t, err)

	// Names are checked when a trial starts.
	_, err = c.Start(t.Context(), mazeSpec("sideways"))
	require.ErrorIs(t, err, registry.ErrUnknownPolicy)
	_, err = c.Start(t.Context(), runners.Spec{Env: "nowhere"})
	require.ErrorIs(t, err, registry.ErrUnknownEnv)
}

// Stop stops a running trial, even one whose policy blocks until its context is done,
// and a pending one at once.
func TestControllerStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := newRecorder()
	c := newController(t, runners.WithSinks(rec), runners.WithWorkers(1))
	started := make(chan string, 2)
	spec := runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.StrategyName: runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		return blocking(started, ""), nil
	})}}
	running, err := c.Start(t.Context(), spec)
	require.NoError(t, err)
	pending, err := c.Start(t.Context(), spec)
	require.NoError(t, err)
	<-started // the first trial blocks its only worker
	require.ErrorIs(t, c.Forget(running), runners.ErrNotDone)

	// Watching and waiting end with their context.
	ctx, cancel := context.WithCancel(t.Context())
	changes, err := c.Watch(ctx, running)
	require.NoError(t, err)
	var seen []event.State
	for sc := range changes {
		seen = append(seen, sc.State)
		if sc.State == event.Running {
			cancel()
		}
	}
	assert.Equal(t, []event.State{event.Pending, event.Running}, seen)
	_, err = c.Wait(ctx, running)
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, c.Stop(pending))
	res, err := c.Wait(t.Context(), pending)
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	require.ErrorIs(t, res.Err, runners.ErrStopped)
	assert.Equal(t, []event.State{event.Pending, event.Stopped}, states(t, c, pending))

	require.NoError(t, c.Stop(running))
	res, err = c.Wait(t.Context(), running)
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	require.ErrorIs(t, res.Err, runners.ErrStopped)
	assert.Equal(t, []event.State{event.Pending, event.Running, event.Stopped}, states(t, c, running))
	require.Len(t, res.Episodes, 1)
	assert.False(t, res.Episodes[0].Complete)
	events := rec.events(running)
	assert.Equal(t, event.Stopped, events[len(events)-1].State.State)
	require.NoError(t, c.Stop(running), "stopping a finished trial does nothing")
	require.ErrorIs(t, c.Stop("trial-9"), runners.ErrUnknownTrial)

	// The context given to Start bounds the trial.
	ctx, cancel = context.WithCancel(t.Context())
	id, err := c.Start(ctx, spec)
	require.NoError(t, err)
	<-started
	cancel()
	res, err = c.Wait(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	require.ErrorIs(t, res.Err, context.Canceled)
}

// Shutdown stops the trials still running and waits for the workers.
func TestControllerShutdown(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, err := runners.NewController(testRegistry(t), runners.WithWorkers(2))
	require.NoError(t, err)
	started := make(chan string, 3)
	spec := runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		return blocking(started, ""), nil
	})}}
	var ids []string
	for range 3 {
		id, err := c.Start(t.Context(), spec)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	<-started
	<-started
	require.NoError(t, c.Shutdown(t.Context()))
	for _, id := range ids {
		res, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, event.Stopped, res.State, id)
		require.ErrorIs(t, res.Err, runners.ErrShutdown)
	}
	_, err = c.Start(t.Context(), spec)
	require.ErrorIs(t, err, runners.ErrShutdown)
}

// Outside rewards reach the events and the result: one for the agent's next step, one
// for an agent whose sub-episode has ended (retroactive to its last step), one for a
// past tick (retroactive); a future tick is rejected.
func TestControllerFeedback(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := newRecorder()
	c := newController(t, runners.WithSinks(rec))
	// The motion agent (forward) stops at its 4th call: motion_2 about to act at tick
	// 6 (see TestTrialMazeOracleForward).
	g := newGate(maze.AlwaysForward(), 4)
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.MotionName: runners.Value(g)}})
	require.NoError(t, err)
	<-g.reached
	steps := rec.steps(id)
	require.Equal(t, "e0 t6 motion_2<-strategy_0 start acting", line(steps[len(steps)-1]))

	for _, fb := range []runners.Feedback{
		{AgentID: "motion_2", Tick: runners.Now, Value: 0.5, Source: "human"},
		{AgentID: "motion_1", Tick: runners.Now, Value: 0.25},
		{AgentID: "motion_0", Episode: 0, Tick: 2, Value: 5, Source: "script"},
	} {
		require.NoError(t, c.Reward(id, fb), "%+v", fb)
	}
	for _, tt := range []struct {
		fb   runners.Feedback
		want error
	}{
		{runners.Feedback{AgentID: "motion_2", Tick: 7, Value: 1}, runners.ErrReward},
		{runners.Feedback{AgentID: "motion_2", Episode: 1, Tick: 0, Value: 1}, runners.ErrReward},
		{runners.Feedback{AgentID: "walker_0", Tick: runners.Now, Value: 1}, runners.ErrReward},
		{runners.Feedback{AgentID: "motion", Tick: runners.Now, Value: 1}, runners.ErrReward},
		{runners.Feedback{AgentID: "motion_0", Tick: -2, Value: 1}, runners.ErrReward},
	} {
		require.ErrorIs(t, c.Reward(id, tt.fb), tt.want, "%+v", tt.fb)
	}
	require.ErrorIs(t, c.Reward("trial-9", runners.Feedback{}), runners.ErrUnknownTrial)
	close(g.release)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)

	// The rewards arrived between ticks 6 and 7; the one for motion_2's next step
	// went to its step at tick 8 (its step at 7 was reported before they were read).
	want := []string{
		"e0 t7 motion_2<-strategy_0 a=1 r=1 env:1 span=1 acting",
		"e0 t8 motion_2<-strategy_0 a=1 r=1.5 env:1 human:0.5 span=1 acting",
		"e0 t9 motion_2<-strategy_0 a=1 r=1 env:1 span=1 terminated",
	}
	got := lines(rec.steps(id))
	i := slices.Index(got, want[0])
	require.GreaterOrEqual(t, i, 0, "%v", got)
	assert.Equal(t, want, got[i:i+3])

	retro := []event.RetroReward{
		{Episode: 0, Tick: 5, AgentID: "motion_1", Agent: "motion", Source: event.SourceController, Value: 0.25, ArrivedTick: 7},
		{Episode: 0, Tick: 2, AgentID: "motion_0", Agent: "motion", Source: "script", Value: 5, ArrivedTick: 7},
	}
	assert.Equal(t, retro, res.Retro)
	var events []event.RetroReward
	for _, e := range rec.events(id) {
		if e.Kind == event.KindReward {
			events = append(events, *e.Reward)
		}
	}
	assert.Equal(t, retro, events)
	assert.Equal(t, []float64{1, 13 + 0.5 + 0.25 + 5}, res.Episodes[0].Returns)

	// A finished trial takes no reward.
	require.ErrorIs(t, c.Reward(id, runners.Feedback{AgentID: "motion_0", Tick: runners.Now}), runners.ErrNotRunning)
}

func TestNewControllerErrors(t *testing.T) {
	_, err := runners.NewController(testRegistry(t), runners.WithWorkers(-2))
	require.ErrorIs(t, err, runners.ErrInvalidSpec)
	_, err = runners.NewController(testRegistry(t), nil, runners.WithWorkers(-2))
	require.ErrorIs(t, err, runners.ErrInvalidSpec, "a nil option is ignored")
	c := newController(t)
	_, err = c.Watch(t.Context(), "nope")
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
	_, err = c.Wait(t.Context(), "nope")
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Start(ctx, mazeSpec("forward"))
	require.ErrorIs(t, err, context.Canceled)
}

// episodeGate is a maze strategy that takes the first action its mask allows, and at
// the first turn of episode gateAt says so on at and waits for release.
type episodeGate struct {
	gateAt  int
	at      chan struct{}
	release chan struct{}
}

func (g *episodeGate) Act(_ context.Context, _ []float32, mask []bool) (agent.RawAction, error) {
	return agent.Discrete(int64(max(slices.Index(mask, true), 0))), nil
}

func (g *episodeGate) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	if x.Episode() == g.gateAt && x.Tick() == 0 {
		close(g.at)
		select {
		case <-g.release:
		case <-ctx.Done():
			return agent.RawAction{}, ctx.Err()
		}
	}
	return g.Act(ctx, obs, mask)
}

// Episodes shows the complete episodes of a running trial, then of the finished one,
// with the returns of its result.
func TestControllerEpisodes(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t)
	g := &episodeGate{gateAt: 1, at: make(chan struct{}), release: make(chan struct{})}
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Seed: 4, Episodes: 3, MaxTicks: 30, Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(g), maze.MotionName: runners.Named("forward"),
	}})
	require.NoError(t, err)
	<-g.at // episode 0 ended within its 30 ticks
	live, _, err := c.Episodes(id, 0)
	require.NoError(t, err)
	require.Len(t, live, 1, "episode 0 is over, episode 1 waits")
	close(g.release)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Len(t, res.Episodes, 3)

	tests := []struct {
		name string
		from int
		want []runners.EpisodeResult
	}{
		{"all", 0, res.Episodes},
		{"from the second", 1, res.Episodes[1:]},
		{"past the end", 3, nil},
		{"negative", -1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := c.Episodes(id, tt.from)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, res.Episodes[0], live[0])
	_, _, err = c.Episodes("trial-99", 0)
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
}
