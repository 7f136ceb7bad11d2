package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// serveController serves ctrl's trials on TCP (so that the JSON gateway answers too).
func serveController(t *testing.T, ctrl *runners.Controller, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddTrials(ctrl))
	return start(t, s, true)
}

func newTestController(t *testing.T, opts ...runners.ControllerOption) *runners.Controller {
	t.Helper()
	ctrl, err := runners.NewController(testRegistry(t), opts...)
	require.NoError(t, err)
	return ctrl
}

// long is a maze spec of more episodes than a test waits for.
var long = runners.Spec{Env: "maze", Episodes: 1 << 30, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}}

// stopAll stops trials and waits for their end.
func stopAll(t *testing.T, c *remote.TrialClient, ids ...string) {
	t.Helper()
	require.NoError(t, c.Stop(t.Context(), ids...))
	for _, id := range ids {
		_, err := c.Wait(t.Context(), id)
		require.NoError(t, err)
	}
}

// A Start past the server's bound on trials pending or running starts nothing and is
// RESOURCE_EXHAUSTED naming the bound and the flag that raises it.
func TestTrialsStartBounded(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithWorkers(1), runners.WithMaxLive(4)))
	c := dialTrials(t, srv)
	_, err := c.StartCampaign(t.Context(), long, 100000)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.ErrorContains(t, err, "100000 more trials asked for, 0 pending or running, at most 4")
	assert.ErrorContains(t, err, "--max-live-trials")
	list, err := c.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, list, "a refused campaign starts no trial")

	ids, err := c.StartCampaign(t.Context(), long, 4)
	require.NoError(t, err)
	_, err = c.Start(t.Context(), long)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	stopAll(t, c, ids...)
	id, err := c.Start(t.Context(), long)
	require.NoError(t, err, "finished trials free their places")
	stopAll(t, c, id)
}

// List answers pages of at most page_size trials that resume where the last ended,
// even when the server forgot trials in between; it forgets the trials that finished
// first past its bound.
func TestTrialsListPages(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithWorkers(1), runners.WithKeepFinished(20)))
	c := dialTrials(t, srv)
	j := newJSONClient(t, srv, "")
	// The campaign waits behind the blocker until the watch has begun.
	blocker, err := c.Start(t.Context(), long)
	require.NoError(t, err)
	spec := runners.Spec{ID: "a", Env: "maze", Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}}
	ids, err := c.StartCampaign(t.Context(), spec, 25)
	require.NoError(t, err)
	for ch, err := range c.Watch(t.Context(), append(ids, blocker)...) {
		require.NoError(t, err)
		if ch.Trial == ids[24] && ch.State == event.Pending {
			require.NoError(t, c.Stop(t.Context(), blocker))
		}
	}
	list, err := c.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 20, "the server keeps the 20 trials that finished last")

	var paged []string
	token := ""
	pages := 0
	for {
		out := j.ok("TrialService/List", `{"pageSize": 8, "pageToken": "`+token+`"}`)
		trials, _ := out["trials"].([]any)
		assert.LessOrEqual(t, len(trials), 8)
		for _, tr := range trials {
			paged = append(paged, tr.(map[string]any)["id"].(string))
		}
		pages++
		token, _ = out["nextPageToken"].(string)
		if token == "" {
			break
		}
		if pages == 1 {
			// Trials forgotten between two pages do not move the next one.
			more, err := c.StartCampaign(t.Context(), runners.Spec{ID: "b", Env: "maze"}, 10)
			require.NoError(t, err)
			for _, id := range more {
				_, err := c.Wait(t.Context(), id)
				require.NoError(t, err)
			}
		}
	}
	// The first page held a-5 ... a-12; the ten b trials finished since, and the
	// server forgot a-5 ... a-14: the next page begins at a-15.
	var want []string
	for i := range 25 {
		if i >= 5 && i <= 12 || i >= 15 {
			want = append(want, "a-"+strconv.Itoa(i))
		}
	}
	for i := range 10 {
		want = append(want, "b-"+strconv.Itoa(i))
	}
	assert.Equal(t, want, paged)
	assert.Equal(t, 4, pages)

	for _, tt := range []struct{ body, message string }{
		{`{"pageSize": -1}`, "page_size: -1, want 0 (for 1000) or more"},
		{`{"pageToken": "7"}`, `page_token: "7" is not a token this server gave`},
		{`{"pageToken": "after-x"}`, `page_token: "after-x" is not a token`},
	} {
		code, out := j.call("TrialService/List", tt.body)
		assert.Equal(t, http.StatusBadRequest, code, tt.body)
		assert.Contains(t, out["message"], tt.message)
	}
}

// Watch of every trial follows them with no goroutine per trial, so that it works
// whatever the number of trials the server holds (it used to refuse past 65,536).
func TestTrialsWatchAllGoroutines(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithWorkers(1)))
	c := dialTrials(t, srv)
	blocker, err := c.Start(t.Context(), long)
	require.NoError(t, err)
	const n = 3000
	ids, err := c.StartCampaign(t.Context(), runners.Spec{Env: "maze"}, n)
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pending := 0
	for ch, err := range c.Watch(ctx) {
		require.NoError(t, err)
		if ch.State == event.Pending {
			pending++
		}
		if pending == n+1 {
			assert.Less(t, runtime.NumGoroutine(), before+100, "a goroutine per trial watched")
			break
		}
	}
	require.Equal(t, n+1, pending)
	cancel()
	require.NoError(t, c.Stop(t.Context(), append(ids, blocker)...))
}

// Client actors: a trial waiting for a person holds no compute worker and says what
// it waits for; the person finds it again after losing the page; a pending trial says
// why it waits; Pending of an unknown trial is NOT_FOUND naming the trial.
func TestTrialsClientActorsHoldNoWorker(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithWorkers(1)))
	c := dialTrials(t, srv)
	j := newJSONClient(t, srv, "")
	human := runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(0, 0, ""), maze.MotionName: runners.Named("forward"),
	}}
	var people []string
	for i := range 2 {
		human.ID = fmt.Sprint("person-", i)
		id, err := c.Start(t.Context(), human)
		require.NoError(t, err)
		turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
		require.NoError(t, err)
		require.True(t, turn.Acting)
		assert.Equal(t, []string{maze.StrategyName, maze.MotionName}, turn.Receivers)
		people = append(people, id)
	}
	// Both people left their pages; plain trials run to their end all the same.
	plain, err := c.Start(t.Context(), runners.Spec{ID: "plain", Env: "maze"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := c.Wait(ctx, plain)
	require.NoError(t, err, "the people's trials hold the only worker")
	assert.Equal(t, event.Ended, res.State)

	// A pending trial says why it waits.
	blocker, err := c.Start(t.Context(), long)
	require.NoError(t, err)
	queued, err := c.Start(t.Context(), runners.Spec{ID: "queued", Env: "maze"})
	require.NoError(t, err)
	byID := map[string]map[string]any{}
	for _, tr := range j.ok("TrialService/List", `{}`)["trials"].([]any) {
		m := tr.(map[string]any)
		byID[m["id"].(string)] = m
	}
	assert.Equal(t, "TRIAL_STATE_PENDING", byID[queued]["state"])
	assert.Equal(t, "waiting for a compute worker (1 of 1 in use, baton serve --workers; 0 trials queued ahead)", byID[queued]["reason"])
	assert.Equal(t, "TRIAL_STATE_RUNNING", byID[people[0]]["state"])
	assert.Contains(t, byID[people[0]]["reason"], "waiting for the client of agent strategy (no action for ")
	assert.Contains(t, byID[people[0]]["reason"], "; the trial stops at 10m0s)", "the default idle timeout")
	assert.Equal(t, []any{maze.StrategyName}, byID[people[0]]["clients"])
	assert.Empty(t, byID[plain]["reason"])
	stopAll(t, c, blocker, queued)

	// The person reloads the page: List names the agents clients play, and Pending
	// shows the turn that waits, which the person plays on.
	for _, tr := range j.ok("TrialService/List", `{}`)["trials"].([]any) {
		m := tr.(map[string]any)
		if m["id"] != people[1] {
			continue
		}
		for _, a := range m["clients"].([]any) {
			turn, err := c.Pending(t.Context(), people[1], a.(string), 0)
			require.NoError(t, err)
			require.True(t, turn.Acting)
			assert.Equal(t, 0, turn.Tick)
			allowed := slices.IndexFunc(turn.Actions, func(a remote.ActionChoice) bool { return a.Allowed })
			require.NoError(t, c.ClientAct(t.Context(), people[1], a.(string), turn.Tick, turn.Actions[allowed].Raw))
			next, err := c.Pending(t.Context(), people[1], a.(string), 10*time.Second)
			require.NoError(t, err)
			assert.Greater(t, next.Tick, turn.Tick)
		}
	}
	stopAll(t, c, people...)

	_, err = c.Pending(t.Context(), "nobody", maze.StrategyName, 0)
	require.ErrorIs(t, err, remote.ErrNotFound)
	assert.ErrorContains(t, err, `no trial "nobody"`)
	_, err = c.Pending(t.Context(), people[0], maze.MotionName, 0)
	require.ErrorIs(t, err, remote.ErrNotFound)
	assert.ErrorContains(t, err, `agent "motion" of trial "person-0" is not played by a client (clients: strategy)`)
}

// A trial whose client has not acted for the idle timeout stops, saying so; a client
// may ask for a shorter idle timeout, not a longer one.
func TestTrialsClientIdleTimeout(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithWorkers(1)), remote.WithClientIdleTimeout(time.Hour))
	c := dialTrials(t, srv)
	j := newJSONClient(t, srv, "")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	j.ok("TrialService/Start", `{"spec": {"id": "left", "env": "maze", "actors": {"strategy": {"client": {"idleTimeoutMs": "50"}}}}}`)
	res, err := c.Wait(ctx, "left")
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "the client of agent strategy has not acted for 50ms, its idle timeout")

	// With a timeout and a default, the defaults play on until the idle timeout.
	j.ok("TrialService/Start", `{"spec": {"id": "defaults", "env": "maze", "episodes": "1000000", "actors": {"strategy": {"client": {"timeoutMs": "1", "idleTimeoutMs": "100"}}}}}`)
	res, err = c.Wait(ctx, "defaults")
	require.NoError(t, err)
	assert.Equal(t, event.Stopped, res.State)
	assert.Contains(t, res.Err.Error(), "has not acted for 100ms")

	for _, tt := range []struct{ client, message string }{
		{`{"idleTimeoutMs": "7200000"}`, "spec.actors[strategy].client.idle_timeout_ms: 7200000, want at most 3600000: the server's idle timeout (baton serve --client-idle-timeout 1h0m0s)"},
		{`{"idleTimeoutMs": "-1"}`, "spec.actors[strategy].client.idle_timeout_ms: -1, want 0 (the server's, 1h0m0s) or more"},
	} {
		code, out := j.call("TrialService/Start", `{"spec": {"env": "maze", "actors": {"strategy": {"client": `+tt.client+`}}}}`)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Equal(t, tt.message, out["message"])
	}
}

// A message to an address that is not a receiver is refused at once, naming the
// receivers, and nothing of the request is kept: no message goes, the action is not
// taken, and the next action (without it) is taken.
func TestClientActorBadReceiver(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	srv, stop := serveLoggedTrials(t, dir)
	c := dialTrials(t, srv)
	id, err := c.Start(t.Context(), runners.Spec{ID: "talk", Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(0, 0, ""), maze.MotionName: runners.Named("forward"),
	}})
	require.NoError(t, err)
	turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
	require.NoError(t, err)
	raw := turn.Actions[slices.IndexFunc(turn.Actions, func(a remote.ActionChoice) bool { return a.Allowed })].Raw
	for _, to := range []string{"nobody", event.EnvAddress} {
		err = c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, raw,
			event.Message{To: maze.MotionName, Payload: []byte("first")}, event.Message{To: to, Payload: []byte("second")})
		require.ErrorIs(t, err, remote.ErrInvalidArgument)
		assert.ErrorContains(t, err, fmt.Sprintf(`messages[1].to: %q is not a receiver of the trial's messages (receivers: strategy, motion); no message was sent and the action was not taken`, to))
		var ce *remote.CallError
		require.True(t, errors.As(err, &ce))
		assert.Equal(t, "messages[1].to", ce.Field.Field)
	}
	again, err := c.Pending(t.Context(), id, maze.StrategyName, 0)
	require.NoError(t, err)
	require.True(t, again.Acting)
	assert.Equal(t, turn.Tick, again.Tick, "the refused action was not taken")
	require.NoError(t, c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, raw, event.Message{To: maze.MotionName, Payload: []byte("third")}))
	next, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
	require.NoError(t, err)
	assert.Greater(t, next.Tick, turn.Tick)
	stopAll(t, c, id)
	stop()

	// The log holds the one message of the action taken, none of the refused ones.
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	payloads := map[string]bool{}
	for _, name := range l.Agents() {
		for r, err := range l.Rows(name) {
			require.NoError(t, err)
			for _, m := range r.Messages {
				payloads[string(m.Payload)] = true
			}
		}
	}
	assert.Equal(t, map[string]bool{"third": true}, payloads)
}

// A trial of many episodes keeps a bounded window of them; its result says where the
// window starts and sums up every episode.
func TestTrialsEpisodeWindow(t *testing.T) {
	srv := serveController(t, newTestController(t, runners.WithEpisodeWindow(3)))
	c := dialTrials(t, srv)
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Episodes: 10, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}})
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Len(t, res.Episodes, 3)
	assert.Equal(t, 7, res.FirstEpisode)
	assert.Equal(t, 10, res.Totals.Episodes)
	assert.Equal(t, 10, res.Totals.Complete)
	assert.Len(t, res.Totals.Returns, 2)
	eps, first, err := c.Episodes(t.Context(), id, 2)
	require.NoError(t, err)
	assert.Equal(t, 7, first)
	assert.Equal(t, res.Episodes, eps)
}
