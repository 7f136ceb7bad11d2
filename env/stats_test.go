package env_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

// playMulti plays episodes of m, each agent with its policy (by name), one per seed.
func playMulti(t *testing.T, m env.MultiAgent, policies map[string]agent.Policy, seeds ...uint64) {
	t.Helper()
	for _, seed := range seeds {
		turn := mustReset(t, m, seed)
		for !turn.Over {
			r := turn.Acting()
			require.NotNil(t, r)
			a, err := policies[r.Agent].Act(t.Context(), r.Obs, r.Mask)
			require.NoError(t, err)
			turn, err = m.Step(r.AgentID, a)
			require.NoError(t, err)
		}
	}
}

func TestEpisodeStatsMultiMaze(t *testing.T) {
	rt, mz := newMaze(t, hrl.Config{})
	rec := &recorder{MultiAgent: rt}
	s := env.EpisodeStatsMulti(rec)
	assert.Equal(t, rt.Agents(), s.Agents())
	policies := map[string]agent.Policy{maze.StrategyName: maze.NewOracle(mz), maze.MotionName: random(t, 2, 9)}
	playMulti(t, s, policies, 1)

	// The twin: sub-episodes from the recorded reports.
	type sub struct {
		id string
		env.Episode
	}
	var subs []sub
	open := map[string]int{}
	for _, r := range rec.reports {
		if r.Start {
			open[r.ID] = len(subs)
			subs = append(subs, sub{id: r.ID})
			continue
		}
		e := &subs[open[r.ID]]
		e.Return += r.Reward
		e.Length++
		e.Terminated, e.Truncated = r.Term, r.Trunc
	}
	want := map[string]env.AgentStats{}
	for _, sb := range subs {
		name := maze.MotionName
		if sb.id == "strategy_0" {
			name = maze.StrategyName
		}
		a := want[name]
		a.Episodes++
		a.Steps += sb.Length
		a.Last, a.LastID = sb.Episode, sb.id
		want[name] = a
	}
	for _, name := range []string{maze.StrategyName, maze.MotionName} {
		got, ok := s.Agent(name)
		require.True(t, ok)
		assert.Equal(t, want[name], got, name)
	}
	assert.Greater(t, want[maze.MotionName].Episodes, 1)
	_, ok := s.Agent("pilot")
	assert.False(t, ok)

	assert.Equal(t, 1, s.Episodes())
	assert.Equal(t, rt.Tick(), s.Ticks())
	assert.Equal(t, rt.Tick(), s.LastTicks())
	last := []sub{subs[len(subs)-1], subs[0]} // the last motion sub-episode, then the strategy's
	wantEnded := []env.Ended{{AgentID: last[0].id, Agent: maze.MotionName, Episode: last[0].Episode}, {AgentID: "strategy_0", Agent: maze.StrategyName, Episode: last[1].Episode}}
	assert.Equal(t, wantEnded, s.Ended())
	info := s.Info().(map[string]any)
	assert.Equal(t, map[string]env.Episode{last[0].id: last[0].Episode, "strategy_0": last[1].Episode}, info[env.InfoKeyEpisode])
	assert.IsType(t, maze.Info{}, info[env.InfoKeyEnv])

	// A second episode adds up; a failed step changes nothing.
	firstTicks := s.Ticks()
	turn := mustReset(t, s, 2)
	assert.Empty(t, s.Ended())
	assert.IsType(t, maze.Info{}, s.Info(), "nothing ended")
	_, err := s.Step(turn.Next, agent.Discrete(9))
	require.ErrorIs(t, err, env.ErrOutsideSpace)
	playMulti(t, s, policies, 3)
	assert.Equal(t, 2, s.Episodes())
	assert.Equal(t, rt.Tick(), s.LastTicks())
	assert.Equal(t, firstTicks+rt.Tick(), s.Ticks())
	st, _ := s.Agent(maze.StrategyName)
	assert.Equal(t, 2, st.Episodes)

	got, ok := env.As[*hrl.Runtime[maze.State, maze.Action]](s)
	assert.True(t, ok)
	assert.Same(t, rt, got)
}

func TestEpisodeStatsMultiSequential(t *testing.T) {
	s := env.EpisodeStatsMulti(env.Sequential(&echo{}))
	turn := mustReset(t, s, 1)
	v := float32(0)
	for !turn.Over {
		v += 0.125
		var err error
		turn, err = s.Step(turn.Next, agent.Continuous([]float32{v}))
		require.NoError(t, err)
	}
	tests := []struct {
		name string
		want env.AgentStats
	}{
		{"a", env.AgentStats{Episodes: 1, Steps: 2, Last: env.Episode{Return: 0.125 + 0.375, Length: 2, Terminated: true}, LastID: "a_0"}},
		{"b", env.AgentStats{Episodes: 1, Steps: 3, Last: env.Episode{Return: 0.25 + 0.5 + 0.75, Length: 3, Truncated: true}, LastID: "b_0"}},
		{"c", env.AgentStats{Episodes: 1, Steps: 2, Last: env.Episode{Return: 0.625 + 0.875, Length: 2, Terminated: true}, LastID: "c_0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := s.Agent(tt.name)
			require.True(t, ok)
			assert.Equal(t, tt.want, got, "repeated observations are not steps")
		})
	}
	assert.Equal(t, 3, s.Ticks())
	assert.Equal(t, 1, s.Episodes())
	assert.Nil(t, s.Info().(map[string]any)[env.InfoKeyEnv], "echo has no Info")
}

func TestEpisodeStatsMultiAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt, mz := newMaze(t, hrl.Config{})
	s := env.EpisodeStatsMulti(rt)
	policies := map[string]agent.Policy{maze.StrategyName: maze.NewOracle(mz), maze.MotionName: random(t, 2, 4)}
	ctx := t.Context()
	seed := uint64(0)
	turn := mustReset(t, s, seed)
	step := func() {
		if turn.Over {
			seed++
			turn = mustReset(t, s, seed)
			return
		}
		r := turn.Acting()
		a, err := policies[r.Agent].Act(ctx, r.Obs, r.Mask)
		if err == nil {
			turn, err = s.Step(r.AgentID, a)
		}
		if err != nil {
			panic(err)
		}
	}
	for range 2000 {
		step()
	}
	assert.Zero(t, testing.AllocsPerRun(2000, step))
	assert.Positive(t, s.Episodes())
}
