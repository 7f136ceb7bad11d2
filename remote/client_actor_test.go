package remote_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrialClientClientActor plays the maze's strategy agent from a Go TrialClient
// over gRPC: Pending shows each turn, ClientAct plays the oracle's choice (after a
// masked action is refused), Episodes and Wait see the goal reached.
func TestTrialClientClientActor(t *testing.T) {
	srv, _ := serveTrials(t, testRegistry(t))
	c := dialTrials(t, srv)
	oa := oracleAgent(t)
	oracle, err := oa.New()
	require.NoError(t, err)

	id, err := c.Start(t.Context(), runners.Spec{ID: "go", Env: "maze", Seed: 3, Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(time.Minute, 0, ""), maze.MotionName: runners.Named("forward"),
	}})
	require.NoError(t, err)
	turns := 0
	for {
		turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
		require.NoError(t, err)
		if !turn.Acting {
			assert.Equal(t, event.Ended, turn.State)
			break
		}
		turns++
		assert.Equal(t, "strategy_0", turn.AgentID)
		assert.Positive(t, turn.Remaining)
		assert.Contains(t, turn.Frame.Text, "goal")
		assert.True(t, json.Valid(turn.Frame.Scene.(json.RawMessage)))
		mask := make([]bool, len(turn.Actions))
		for i, a := range turn.Actions {
			mask[i] = a.Allowed
			if !a.Allowed && turns == 1 {
				err := c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, a.Raw)
				require.ErrorIs(t, err, remote.ErrInvalidArgument)
				var ce *remote.CallError
				require.True(t, errors.As(err, &ce))
				assert.Contains(t, err.Error(), "is masked at tick 0")
			}
		}
		raw, err := oracle.Act(t.Context(), turn.Obs, mask)
		require.NoError(t, err)
		require.NoError(t, c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, raw.Int))
	}
	assert.Equal(t, 7, turns)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	eps, _, err := c.Episodes(t.Context(), id, 0)
	require.NoError(t, err)
	require.Len(t, eps, 1)
	assert.True(t, eps[0].Success)
	assert.Equal(t, res.Episodes, eps)

	_, err = c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Named("client://?timeout_ms=soon"),
	}})
	require.ErrorIs(t, err, remote.ErrConfig)
	_, err = c.Pending(t.Context(), id, maze.MotionName, 0)
	require.ErrorIs(t, err, remote.ErrNotFound)
}

// TestClientActorLastReward plays the maze's strategy over gRPC with an outside
// reward at its first turn: Pending shows no last reward at the first turn, then the
// reward of each previous turn, which sum, with the goal's reward of the last turn,
// to the agent's return as Episodes reports it.
func TestClientActorLastReward(t *testing.T) {
	srv, _ := serveTrials(t, testRegistry(t))
	c := dialTrials(t, srv)
	oracle, err := oracleAgent(t).New()
	require.NoError(t, err)
	id, err := c.Start(t.Context(), runners.Spec{ID: "rewarded", Env: "maze", Seed: 3, Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(time.Minute, 0, ""), maze.MotionName: runners.Named("forward"),
	}})
	require.NoError(t, err)
	seen, turns := 0.0, 0
	for {
		turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
		require.NoError(t, err)
		if !turn.Acting {
			break
		}
		turns++
		if turns == 1 {
			assert.False(t, turn.HasLastReward, "the first turn follows no turn")
			require.NoError(t, c.Reward(t.Context(), id, runners.Feedback{AgentID: turn.AgentID, Tick: runners.Now, Value: 0.25, Source: "human"}))
		} else {
			assert.True(t, turn.HasLastReward, "turn %d", turns)
			seen += turn.LastReward
		}
		mask := make([]bool, len(turn.Actions))
		for i, a := range turn.Actions {
			mask[i] = a.Allowed
		}
		raw, err := oracle.Act(t.Context(), turn.Obs, mask)
		require.NoError(t, err)
		require.NoError(t, c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, raw.Int))
	}
	require.Equal(t, 7, turns)
	assert.InDelta(t, 0.25, seen, 1e-9)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	eps, _, err := c.Episodes(t.Context(), id, 0)
	require.NoError(t, err)
	require.Len(t, eps, 1)
	k := slices.IndexFunc(res.Info.Agents, func(s env.Spec) bool { return s.Name == maze.StrategyName })
	require.GreaterOrEqual(t, k, 0)
	assert.InDelta(t, seen+maze.DefaultGoalReward, eps[0].Returns[k], 1e-9)
}

// TestClientActorTurnWithdrawn checks that a turn is gone once ClientAct has answered:
// a Pending sent right after the answer shows the next turn or none, never the turn
// just played (a client that saw it again would act on a tick that has passed).
func TestClientActorTurnWithdrawn(t *testing.T) {
	srv, _ := serveTrials(t, testRegistry(t))
	c := dialTrials(t, srv)
	oa := oracleAgent(t)
	oracle, err := oa.New()
	require.NoError(t, err)
	const episodes = 30
	id, err := c.Start(t.Context(), runners.Spec{ID: "again", Env: "maze", Seed: 5, Episodes: episodes, Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(time.Minute, 0, ""), maze.MotionName: runners.Named("forward"),
	}})
	require.NoError(t, err)
	turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
	require.NoError(t, err)
	plays := 0
	for turn.Acting {
		mask := make([]bool, len(turn.Actions))
		for i, a := range turn.Actions {
			mask[i] = a.Allowed
		}
		raw, err := oracle.Act(t.Context(), turn.Obs, mask)
		require.NoError(t, err)
		require.NoError(t, c.ClientAct(t.Context(), id, maze.StrategyName, turn.Tick, raw.Int))
		plays++
		now, err := c.Pending(t.Context(), id, maze.StrategyName, 0)
		require.NoError(t, err)
		if now.Acting {
			require.False(t, now.Episode == turn.Episode && now.Tick == turn.Tick,
				"play %d: Pending after ClientAct shows the turn just played (episode %d, tick %d)", plays, turn.Episode, turn.Tick)
		}
		turn, err = c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
		require.NoError(t, err)
	}
	assert.Equal(t, 7*episodes, plays)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	assert.Len(t, res.Episodes, episodes)
}

// TestTrialClientStartWatched starts a maze trial watched over gRPC, its strategy
// played by the test: by the strategy's first turn the trial has drawn its frame at
// tick 0. A pace out of range is refused.
func TestTrialClientStartWatched(t *testing.T) {
	srv, ctrl := serveTrials(t, testRegistry(t))
	c := dialTrials(t, srv)
	id, err := c.StartWatched(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: remote.ClientActor(time.Minute, 0, ""),
	}}, time.Millisecond)
	require.NoError(t, err)
	turn, err := c.Pending(t.Context(), id, maze.StrategyName, 10*time.Second)
	require.NoError(t, err)
	require.True(t, turn.Acting)
	f, err := ctrl.Frame(id, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), f.Seq, "the frame of the reset")
	assert.Zero(t, f.Tick)
	require.NoError(t, c.Stop(t.Context(), id))

	_, err = c.StartWatched(t.Context(), runners.Spec{Env: "maze"}, runners.MaxFramePace+time.Millisecond)
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "watch_pace_ms")
}
