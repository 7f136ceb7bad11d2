package env_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

var errRefused = errors.New("refusing: no episode today")

// refusingParallel is a Parallel whose Reset fails while refuse is set.
type refusingParallel struct {
	env.Parallel
	refuse bool
}

func (r *refusingParallel) Reset(seed uint64) (env.Round, error) {
	if r.refuse {
		return env.Round{}, errRefused
	}
	return r.Parallel.Reset(seed)
}

// refusingMulti is a MultiAgent whose Reset fails while refuse is set.
type refusingMulti struct {
	env.MultiAgent
	refuse bool
}

func (r *refusingMulti) Reset(seed uint64) (env.Turn, error) {
	if r.refuse {
		return env.Turn{}, errRefused
	}
	return r.MultiAgent.Reset(seed)
}

// A failed Reset comes back from Reset itself, through Sequential, the wrappers and
// View; once the environment resets again, so do they.
func TestResetError(t *testing.T) {
	t.Run("Sequential", func(t *testing.T) {
		p := &refusingParallel{Parallel: &rps{target: 3, rounds: 10}, refuse: true}
		m := env.Sequential(p)
		turn, err := m.Reset(1)
		require.ErrorIs(t, err, errRefused)
		assert.Empty(t, turn.Reports)
		_, err = m.Step("rock_0", agent.Discrete(0))
		require.ErrorIs(t, err, env.ErrNotReset)
		p.refuse = false
		turn = mustReset(t, m, 1)
		assert.NotEmpty(t, turn.Next)
	})
	t.Run("TimeLimitParallel", func(t *testing.T) {
		p := &refusingParallel{Parallel: &rps{target: 3, rounds: 10}, refuse: true}
		l := env.TimeLimitParallel(p, 2)
		round, err := l.Reset(1)
		require.ErrorIs(t, err, errRefused)
		assert.Empty(t, round.Reports)
		_, err = l.Step(make([]agent.RawAction, 2))
		require.ErrorIs(t, err, env.ErrNotReset)
		p.refuse = false
		round = mustReset(t, l, 1)
		assert.Len(t, round.Reports, 2)
	})
	t.Run("EpisodeStatsMulti", func(t *testing.T) {
		rt, _ := newMaze(t, hrl.Config{})
		m := &refusingMulti{MultiAgent: rt, refuse: true}
		s := env.EpisodeStatsMulti(m)
		turn, err := s.Reset(1)
		require.ErrorIs(t, err, errRefused)
		assert.Empty(t, turn.Reports)
		assert.Empty(t, s.Ended())
		assert.Zero(t, s.Episodes())
		m.refuse = false
		turn = mustReset(t, s, 1)
		assert.Equal(t, maze.StrategyName+"_0", turn.Next)
	})
	t.Run("View", func(t *testing.T) {
		rt, _ := newMaze(t, hrl.Config{})
		m := &refusingMulti{MultiAgent: rt, refuse: true}
		v, err := env.NewView(t.Context(), m, maze.MotionName, map[string]agent.Policy{maze.StrategyName: random(t, 4, 3)})
		require.NoError(t, err)
		_, err = v.Reset(1)
		require.ErrorIs(t, err, errRefused)
		_, err = v.Step(agent.Discrete(0))
		require.ErrorIs(t, err, env.ErrNotReset)
		m.refuse = false
		st, err := v.Reset(1)
		require.NoError(t, err)
		assert.NotEmpty(t, st.Obs)

		// A Reset that cuts the view's episode short resets the underlying environment:
		// its failure ends the view's episode, and the next Reset starts again.
		m.refuse = true
		_, err = v.Reset(2)
		require.ErrorIs(t, err, errRefused)
		_, err = v.Step(agent.Discrete(0))
		require.ErrorIs(t, err, env.ErrEpisodeOver)
		m.refuse = false
		st, err = v.Reset(2)
		require.NoError(t, err)
		assert.NotEmpty(t, st.Obs)
	})
}
