package runners_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// blockingSpec is a counter trial whose policy says so on started and blocks until its
// context is done.
func blockingSpec(started chan string) runners.Spec {
	return runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		return blocking(started, ""), nil
	})}}
}

// A controller holds at most WithMaxLive trials pending or running: a Start past it,
// or a StartCampaign that does not fit whole, starts nothing and says why.
func TestControllerMaxLive(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1), runners.WithMaxLive(3))
	started := make(chan string, 4)
	first, err := c.Start(t.Context(), blockingSpec(started))
	require.NoError(t, err)
	<-started
	ids, err := c.StartCampaign(t.Context(), runners.Spec{ID: "camp", Env: "counter"}, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"camp-0", "camp-1"}, ids)

	_, err = c.Start(t.Context(), runners.Spec{Env: "counter"})
	require.ErrorIs(t, err, runners.ErrFull)
	assert.ErrorContains(t, err, "1 more trials asked for, 3 pending or running, at most 3 (WithMaxLive)")
	require.NoError(t, c.Stop("camp-1"))
	_, err = c.StartCampaign(t.Context(), runners.Spec{ID: "more", Env: "counter"}, 2)
	require.ErrorIs(t, err, runners.ErrFull)
	for _, st := range c.List() {
		assert.NotContains(t, st.ID, "more", "a campaign that does not fit starts no trial")
	}
	_, err = c.StartCampaign(t.Context(), runners.Spec{ID: "more", Env: "counter"}, 1)
	require.NoError(t, err, "a stopped trial frees its place")
	require.NoError(t, c.Stop(first))
	for _, id := range []string{first, "camp-0", "more-0"} {
		_, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
	}
	_, err = c.StartCampaign(t.Context(), runners.Spec{Env: "counter"}, 0)
	require.ErrorIs(t, err, runners.ErrInvalidSpec)
}

// A controller keeps the WithKeepFinished trials that finished last and forgets the
// others, in the order they finished; List pages over what it holds.
func TestControllerKeepFinished(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1), runners.WithKeepFinished(2))
	var ids []string
	for i := range 5 {
		id, err := c.Start(t.Context(), runners.Spec{ID: fmt.Sprint("t", i), Env: "counter"})
		require.NoError(t, err)
		_, err = c.Wait(t.Context(), id)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	var held []string
	for _, st := range c.List() {
		held = append(held, st.ID)
	}
	assert.Equal(t, []string{"t3", "t4"}, held)
	_, err := c.Status("t0")
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
	_, err = c.Wait(t.Context(), "t0")
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
	id, err := c.Start(t.Context(), runners.Spec{ID: "t0", Env: "counter"})
	require.NoError(t, err, "a forgotten id is free again")
	_, err = c.Wait(t.Context(), id)
	require.NoError(t, err)

	page, more := c.ListAfter(0, 1, nil)
	require.Len(t, page, 1)
	assert.Equal(t, "t4", page[0].ID)
	assert.True(t, more)
	page, more = c.ListAfter(page[0].Seq, 1, nil)
	require.Len(t, page, 1)
	assert.Equal(t, "t0", page[0].ID)
	assert.False(t, more)
	page, _ = c.ListAfter(0, 0, func(env string) bool { return env == "maze" })
	assert.Empty(t, page)
}

// A trial of many episodes keeps its last WithEpisodeWindow ones, and sums up all.
func TestControllerEpisodeWindow(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithEpisodeWindow(4))
	// Each counter episode is 4 steps rewarded 1: a return of 4.
	id, err := c.Start(t.Context(), runners.Spec{Env: "counter", Episodes: 100})
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	assert.Len(t, res.Episodes, 4)
	assert.Equal(t, 96, res.FirstEpisode)
	assert.Equal(t, runners.Totals{Episodes: 100, Complete: 100, Successes: 100, Returns: []float64{400}}, res.Totals)
	assert.Equal(t, int64(400), res.Steps)
	for _, e := range res.Episodes {
		assert.Equal(t, []float64{4}, e.Returns)
	}
	eps, first, err := c.Episodes(id, 0)
	require.NoError(t, err)
	assert.Equal(t, 96, first, "episode 0 has left the window")
	assert.Equal(t, res.Episodes, eps)
	eps, first, err = c.Episodes(id, 98)
	require.NoError(t, err)
	assert.Equal(t, 98, first)
	assert.Equal(t, res.Episodes[2:], eps)
	eps, first, err = c.Episodes(id, 100)
	require.NoError(t, err)
	assert.Equal(t, 100, first)
	assert.Empty(t, eps)
}

// attendedPolicy waits for a person: it says so on started, if there is room, and
// blocks until release.
type attendedPolicy struct {
	started chan struct{}
	release chan struct{}
}

func (p *attendedPolicy) Act(ctx context.Context, _ []float32, _ []bool) (agent.RawAction, error) {
	select {
	case p.started <- struct{}{}:
	default:
	}
	select {
	case <-p.release:
		return agent.Discrete(1), nil
	case <-ctx.Done():
		return agent.RawAction{}, ctx.Err()
	}
}

func (p *attendedPolicy) Attended() bool { return true }

// A trial that waits for a person holds no worker: two of them on one worker leave it
// free for the others, which run to their end. A trial queued for a worker says how
// many are ahead of it.
func TestControllerAttendedHoldsNoWorker(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1))
	p := &attendedPolicy{started: make(chan struct{}, 2), release: make(chan struct{})}
	var people []string
	for range 2 {
		id, err := c.Start(t.Context(), runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.Value(p)}})
		require.NoError(t, err)
		people = append(people, id)
		<-p.started
		busy, _ := c.Workers()
		require.Equal(t, 0, busy, "a trial that waits for a person holds a worker")
	}
	for _, id := range people {
		st, err := c.Status(id)
		require.NoError(t, err)
		assert.True(t, st.Attended)
		assert.Equal(t, event.Running, st.State)
	}
	busy, limit := c.Workers()
	require.Equal(t, 0, busy, "the people's trials hold no worker")
	assert.Equal(t, 1, limit)

	// Plain trials run, one at a time, while the people think.
	started := make(chan string, 1)
	blocker, err := c.Start(t.Context(), blockingSpec(started))
	require.NoError(t, err)
	<-started
	queued, err := c.StartCampaign(t.Context(), runners.Spec{ID: "q", Env: "counter"}, 3)
	require.NoError(t, err)
	for i, id := range queued {
		st, err := c.Status(id)
		require.NoError(t, err)
		assert.Equal(t, event.Pending, st.State)
		assert.Equal(t, i, st.Ahead, id)
	}
	require.NoError(t, c.Stop(queued[0]))
	st, err := c.Status(queued[2])
	require.NoError(t, err)
	assert.Equal(t, 1, st.Ahead, "a stopped trial leaves the queue")
	require.NoError(t, c.Stop(blocker))
	for _, id := range queued[1:] {
		res, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, event.Ended, res.State)
	}
	close(p.release)
	for _, id := range people {
		res, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, event.Ended, res.State)
	}
}

// WatchMany follows every trial with no goroutine of its own, yields each trial's
// changes in order and its Result with the final one, and ends when all have ended.
func TestControllerWatchMany(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1))
	started := make(chan string, 1)
	blocker, err := c.Start(t.Context(), blockingSpec(started))
	require.NoError(t, err)
	<-started
	const n = 500
	ids, err := c.StartCampaign(t.Context(), runners.Spec{Env: "counter"}, n)
	require.NoError(t, err)

	before := runtime.NumGoroutine()
	changes, err := c.WatchMany(t.Context(), nil, func(env string) bool { return env == "counter" })
	require.NoError(t, err)
	got := map[string][]event.State{}
	results := map[string]*runners.Result{}
	seen := 0
	for sc, res := range changes {
		got[sc.Trial] = append(got[sc.Trial], sc.State)
		if res != nil {
			results[sc.Trial] = res
			assert.True(t, sc.State.Done())
		}
		seen++
		if seen == n+2 { // every trial's Pending, the blocker's Running
			assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "no goroutine per trial followed")
			require.NoError(t, c.Stop(blocker))
		}
	}
	require.Len(t, got, n+1)
	for _, id := range ids {
		assert.Equal(t, []event.State{event.Pending, event.Running, event.Ended}, got[id], id)
		require.NotNil(t, results[id], id)
		assert.Equal(t, event.Ended, results[id].State)
	}
	assert.Equal(t, []event.State{event.Pending, event.Running, event.Stopped}, got[blocker])

	// Named trials, an unknown one, and none that match.
	changes, err = c.WatchMany(t.Context(), []string{ids[1], ids[1], ids[0]}, nil)
	require.NoError(t, err)
	var order []string
	for sc := range changes {
		order = append(order, sc.Trial)
	}
	assert.Equal(t, []string{ids[1], ids[1], ids[1], ids[0], ids[0], ids[0]}, order)
	_, err = c.WatchMany(t.Context(), []string{"nope"}, nil)
	require.ErrorIs(t, err, runners.ErrUnknownTrial)
	changes, err = c.WatchMany(t.Context(), nil, func(string) bool { return false })
	require.NoError(t, err)
	for range changes {
		t.Fatal("no trial matches")
	}
}

// A trial that waits (for a person) takes at most 4096 rewards before its next step.
func TestControllerRewardsBounded(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t)
	started := make(chan string, 1)
	id, err := c.Start(t.Context(), blockingSpec(started))
	require.NoError(t, err)
	<-started
	fb := runners.Feedback{AgentID: "counter_0", Tick: runners.Now, Value: 1}
	for range 4096 {
		require.NoError(t, c.Reward(id, fb))
	}
	err = c.Reward(id, fb)
	require.ErrorIs(t, err, runners.ErrFull)
	assert.ErrorContains(t, err, "4096 rewards wait for the trial's next step already")
	require.NoError(t, c.Stop(id))
	_, err = c.Wait(t.Context(), id)
	require.NoError(t, err)
}
