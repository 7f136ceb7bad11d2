package runners_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
)

// TestControllerFrame checks that a watched trial draws its environment after each
// step, at the pace the watcher asks for, and that one nobody watches draws nothing.
func TestControllerFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1))

	// The strategy tells the test of its first decision and waits for it, so that
	// the trial is watched from its first step, the reset being over.
	acting, gate := make(chan struct{}), make(chan struct{})
	ref, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	oracle := maze.NewOracle(ref.Maze())
	first := true
	strategy := agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
		if first {
			first = false
			close(acting)
			select {
			case <-gate:
			case <-ctx.Done():
				return agent.RawAction{}, ctx.Err()
			}
		}
		return oracle.Act(ctx, obs, mask)
	})
	spec := mazeSpec("forward")
	spec.Actors[maze.StrategyName] = runners.Value(strategy)
	id, err := c.Start(t.Context(), spec)
	require.NoError(t, err)

	<-acting
	f, err := c.Frame(id, 5*time.Millisecond)
	require.NoError(t, err)
	assert.Zero(t, f.Seq, "nothing drawn before the trial was watched")
	close(gate)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State)

	f, err = c.Frame(id, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(res.Episodes[0].Ticks), f.Seq, "a frame after each step (the reset was before the first look)")
	assert.Equal(t, res.Episodes[0].Ticks, f.Tick, "the last frame is the last step's")
	assert.Contains(t, f.SVG, "<svg")
	assert.NotEmpty(t, f.Text)
	var sc maze.Scene
	require.NoError(t, json.Unmarshal(f.Scene, &sc))
	assert.Equal(t, sc.Goal, sc.Position, "the agent drawn at the goal")

	// A trial nobody watches draws nothing.
	other, err := c.Start(t.Context(), mazeSpec("forward"))
	require.NoError(t, err)
	_, err = c.Wait(t.Context(), other)
	require.NoError(t, err)
	f, err = c.Frame(other, 0)
	require.NoError(t, err)
	assert.Zero(t, f.Seq)

	for _, tt := range []struct {
		name string
		id   string
		pace time.Duration
		want error
	}{
		{"unknown trial", "trial-9", 0, runners.ErrUnknownTrial},
		{"negative pace", id, -time.Millisecond, runners.ErrInvalidSpec},
		{"pace too long", id, runners.MaxFramePace + time.Millisecond, runners.ErrInvalidSpec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Frame(tt.id, tt.pace)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestControllerStartWatched checks that a trial started watched draws from its
// first step: its frame at tick 0 is there before its first decision, and every
// step after it is drawn; a trial started unwatched has drawn nothing by then.
func TestControllerStartWatched(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := newController(t, runners.WithWorkers(1))
	ref, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)

	for _, tt := range []struct {
		name     string
		watched  bool
		wantSeq0 uint64 // frames drawn before the first decision
	}{
		{"started watched", true, 1},
		{"started unwatched", false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The strategy tells the test of its first decision and waits for it.
			acting, gate := make(chan struct{}), make(chan struct{})
			oracle := maze.NewOracle(ref.Maze())
			first := true
			strategy := agent.PolicyFunc(func(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
				if first {
					first = false
					close(acting)
					select {
					case <-gate:
					case <-ctx.Done():
						return agent.RawAction{}, ctx.Err()
					}
				}
				return oracle.Act(ctx, obs, mask)
			})
			spec := mazeSpec("forward")
			spec.Actors[maze.StrategyName] = runners.Value(strategy)
			const pace = time.Millisecond
			var id string
			if tt.watched {
				id, err = c.StartWatched(t.Context(), spec, pace)
			} else {
				id, err = c.Start(t.Context(), spec)
			}
			require.NoError(t, err)
			<-acting
			f, err := c.Frame(id, pace)
			require.NoError(t, err)
			assert.Equal(t, tt.wantSeq0, f.Seq, "frames before the first decision")
			if tt.watched {
				assert.Zero(t, f.Tick)
				assert.Contains(t, f.SVG, "<svg")
			}
			close(gate)
			res, err := c.Wait(t.Context(), id)
			require.NoError(t, err)
			require.Equal(t, event.Ended, res.State)
			f, err = c.Frame(id, 0)
			require.NoError(t, err)
			want := uint64(res.Episodes[0].Ticks) // the steps after the Frame call
			if tt.watched {
				want++ // and the reset
			}
			assert.Equal(t, want, f.Seq)
		})
	}

	for _, pace := range []time.Duration{-time.Millisecond, runners.MaxFramePace + time.Millisecond} {
		_, err := c.StartWatched(t.Context(), mazeSpec("forward"), pace)
		require.ErrorIs(t, err, runners.ErrInvalidSpec, "pace %v", pace)
	}
}
