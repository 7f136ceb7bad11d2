package runners_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// looker is an actor that looks at the trial as a person would before it plays its
// policy: the frame drawn, and the names of the actions the mask allows.
type looker struct {
	agent.Policy
	frames []string
	names  [][]string
}

func (l *looker) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	l.frames = append(l.frames, x.Frame().Text)
	var names []string
	for a, ok := range mask {
		if ok {
			names = append(names, x.ActionName(agent.Discrete(int64(a))))
		}
	}
	l.names = append(l.names, names)
	return l.Policy.Act(ctx, obs, mask)
}

// TestExchangeFrame checks that an actor sees the trial's environment drawn as it
// is when it acts, and its actions named, as the registry entry's Look says.
func TestExchangeFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := newRecorder()
	c := newController(t, runners.WithSinks(rec))
	l := &looker{}
	spec := mazeSpec("forward")
	spec.Actors[maze.StrategyName] = runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		f, err := maze.ParseConfig(nil)
		if err != nil {
			return nil, err
		}
		e, err := maze.NewEnv(f)
		if err != nil {
			return nil, err
		}
		l.Policy = maze.NewOracle(e.Maze())
		return l, nil
	})
	id, err := c.Start(t.Context(), spec)
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State)
	require.NotEmpty(t, l.frames)
	assert.Contains(t, l.frames[0], "position [4 9] heading LEFT")
	assert.Contains(t, l.frames[0], "│ █ █ · · · · █ · · ← │", "the agent drawn on the map")
	assert.Equal(t, []string{"UP", "LEFT"}, l.names[0], "the walkable directions from the start")
	assert.Len(t, l.names, len(l.frames))
	assert.NotEqual(t, l.frames[0], l.frames[1], "each frame drawn when the agent acts")
}

// quitter plays its policy, then stops its trial as a person who quits does.
type quitter struct {
	agent.Policy
	left int
	err  error
}

func (q *quitter) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if q.left == 0 {
		return agent.RawAction{}, q.err
	}
	q.left--
	return q.Policy.Act(ctx, obs, mask)
}

// TestPolicyStops checks that a policy whose error wraps ErrStopped stops its trial,
// while another error fails it.
func TestPolicyStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	errOther := errors.New("broken")
	tests := []struct {
		name  string
		err   error
		state event.State
	}{
		{"quits", fmt.Errorf("no more input: %w", runners.ErrStopped), event.Stopped},
		{"fails", errOther, event.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			c := newController(t, runners.WithSinks(rec))
			spec := mazeSpec("forward")
			spec.Actors[maze.MotionName] = runners.Value(&quitter{Policy: maze.AlwaysForward(), left: 2, err: tt.err})
			id, err := c.Start(t.Context(), spec)
			require.NoError(t, err)
			res, err := c.Wait(t.Context(), id)
			require.NoError(t, err)
			assert.Equal(t, tt.state, res.State)
			require.ErrorIs(t, res.Err, tt.err)
			require.ErrorIs(t, res.Err, runners.ErrPolicy)
			require.Len(t, res.Episodes, 1)
			assert.False(t, res.Episodes[0].Complete)
			events := rec.events(id)
			assert.Equal(t, tt.state, events[len(events)-1].State.State, "the final state sent to the sinks")
			assert.Len(t, rec.steps(id), 6, "the reports of the reset and of the three ticks before it")
		})
	}
}
