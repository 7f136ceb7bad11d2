package hrl_test

import (
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObsMatchesFlatObservation checks, for every report of random episodes, that the
// typed observation is the one the flat observation encodes, even where a hook changed
// the state later in the same step (hooked agents clear the target when they give
// control, after their last observation).
func TestObsMatchesFlatObservation(t *testing.T) {
	for name, env := range map[string]func() *testEnv{
		"corridor": corridorEnv, "hooks": hookedEnv, "hooked lateral": hookedLateralEnv,
		"three levels": threeLevelEnv, "procedure": procedureEnv,
	} {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, env(), hrl.Config{MaxTicks: 30})
			for s := range uint64(10) {
				res := mustReset(t, rt, s)
				checkObs(t, res)
				for !res.Over {
					acting := res.Acting()
					first := int64(rt.Tick()+int(s)) % 3
					next, err := rt.Step(acting.AgentID, agent.Discrete(first))
					for v := int64(0); err != nil && v < 3; v++ {
						next, err = rt.Step(acting.AgentID, agent.Discrete(v))
					}
					require.NoError(t, err)
					res = next
					checkObs(t, res)
				}
			}
		})
	}
}

func checkObs(t *testing.T, res env.Turn) {
	t.Helper()
	for _, r := range res.Reports {
		o, err := hrl.Obs[botObs](res, r.AgentID)
		require.NoError(t, err)
		flat := make([]float32, len(r.Obs))
		encodeObs(flat, o)
		require.Equal(t, r.Obs, flat, "tick %d, %s", res.Tick, r.AgentID)
	}
}

func TestObs(t *testing.T) {
	rt := newRuntime(t, hookedEnv(), hrl.Config{})
	res := mustReset(t, rt, seed)
	roll := rt.State().Roll
	o, err := hrl.Obs[botObs](res, "planner_0")
	require.NoError(t, err)
	assert.Equal(t, botObs{Roll: roll}, o)

	res, err = rt.Step("planner_0", agent.Discrete(1))
	require.NoError(t, err)
	o, err = hrl.Obs[botObs](res, "walker_0")
	require.NoError(t, err)
	assert.Equal(t, botObs{Target: 3, Roll: roll}, o)

	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an id not reported", obsErr[botObs](res, "planner_0"), `hrl: no agent "planner_0" reported in this step`},
		{"an unknown id", obsErr[botObs](res, "nobody_0"), `hrl: no agent "nobody_0" reported in this step`},
		{"an empty id", obsErr[botObs](res, ""), `hrl: no agent "" reported in this step`},
		{"the wrong type", obsErr[int](res, "walker_0"), `hrl: agent "walker_0" observes hrl_test.botObs, not int`},
		{"a pointer type", obsErr[*botObs](res, "walker_0"), `hrl: agent "walker_0" observes hrl_test.botObs, not *hrl_test.botObs`},
		{"the zero Result", obsErr[botObs](env.Turn{}, "walker_0"), `hrl: no agent "walker_0" reported in this step`},
		{"the Result of a failed step", obsErr[botObs](mustFail(t, rt), "walker_0"), `hrl: no agent "walker_0" reported in this step`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, tt.err, tt.want)
		})
	}
}

// TestObsStaleResult: a result used after the next step is a caller's mistake, which
// must not make Obs panic.
func TestObsStaleResult(t *testing.T) {
	rt := newRuntime(t, corridorEnv(), hrl.Config{})
	mustReset(t, rt, seed)
	playMoves(t, rt, []move{d("planner_0", 0)})
	stale, err := rt.Step("walker_0", agent.Discrete(1))
	require.NoError(t, err)
	require.Len(t, stale.Reports, 2)
	playMoves(t, rt, []move{d("planner_0", 0)})
	mustReset(t, rt, seed)
	assert.NotPanics(t, func() { _, _ = hrl.Obs[botObs](stale, stale.Reports[1].AgentID) })
}

func obsErr[O any](res env.Turn, id string) error {
	_, err := hrl.Obs[O](res, id)
	return err
}

func mustFail(t *testing.T, rt *hrl.Runtime[world, act]) env.Turn {
	t.Helper()
	res, err := rt.Step("nobody_0", agent.Discrete(0))
	require.Error(t, err)
	return res
}

// TestObsMaze reads each maze agent's own observation type.
func TestObsMaze(t *testing.T) {
	env, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](env), hrl.Config{})
	require.NoError(t, err)
	res := mustReset(t, rt, 1)
	s, err := hrl.Obs[maze.StrategyObs](res, "strategy_0")
	require.NoError(t, err)
	assert.Equal(t, maze.StrategyObs{Maze: env.Maze(), Pos: env.Maze().StartPos(), Mask: [4]bool{true, false, false, true}}, s)
	_, err = hrl.Obs[maze.MotionObs](res, "strategy_0")
	assert.EqualError(t, err, `hrl: agent "strategy_0" observes maze.StrategyObs, not maze.MotionObs`)

	res, err = rt.Step("strategy_0", agent.Discrete(int64(maze.Left)))
	require.NoError(t, err)
	m, err := hrl.Obs[maze.MotionObs](res, "motion_0")
	require.NoError(t, err)
	assert.Equal(t, maze.MotionObs{Maze: env.Maze(), Pos: env.Maze().StartPos(), Mask: [2]bool{false, true}}, m)
}

func TestInfo(t *testing.T) {
	rt := newRuntime(t, hookedEnv(), hrl.Config{})
	assert.Nil(t, rt.Info(), "before the first reset")
	assert.Nil(t, rt.AgentInfo("planner_0"), "before the first reset")
	mustReset(t, rt, seed)
	assert.Equal(t, envInfo{}, rt.Info())
	assert.Equal(t, agentInfo{Agent: "planner"}, rt.AgentInfo("planner_0"))
	playMoves(t, rt, []move{d("planner_0", 1), d("walker_0", 1)})
	assert.Equal(t, envInfo{Pos: 1, Target: 3}, rt.Info())
	assert.Equal(t, agentInfo{Agent: "walker", Pos: 1, Steps: 1}, rt.AgentInfo("walker_0"))
	assert.Nil(t, rt.AgentInfo("planner_0"), "an agent not reported in the last step")
	assert.Nil(t, rt.AgentInfo("nobody_0"))
	playMoves(t, rt, []move{d("walker_0", 1), d("walker_0", 1)})
	assert.Equal(t, agentInfo{Agent: "planner", Pos: 3, Steps: 1}, rt.AgentInfo("planner_0"))
	assert.Equal(t, agentInfo{Agent: "walker", Pos: 3, Steps: 3}, rt.AgentInfo("walker_0"))

	// Agents without an Informer, an environment without one.
	plain := newRuntime(t, corridorEnv(), hrl.Config{})
	mustReset(t, plain, seed)
	assert.Equal(t, envInfo{}, plain.Info())
	assert.Nil(t, plain.AgentInfo("planner_0"))
	bare, err := hrl.New(hrl.HierarchicalEnv[world, act](plainEnv{corridorEnv()}), hrl.Config{})
	require.NoError(t, err)
	mustReset(t, bare, seed)
	assert.Nil(t, bare.Info())
}
