package remote_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func serveEnvs(t *testing.T, tcp bool, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddEnvs(testRegistry(t)))
	return start(t, s, tcp)
}

func dialEnv(t testing.TB, srv *server, opts ...remote.DialOption) *remote.EnvClient {
	t.Helper()
	c, err := remote.DialEnv(t.Context(), srv.target, append(append([]remote.DialOption{}, srv.opts...), opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// cloneTurn copies the exported fields of a turn out of its environment's buffers.
func cloneTurn(t env.Turn) env.Turn {
	out := env.Turn{Next: t.Next, Over: t.Over, Tick: t.Tick}
	for _, r := range t.Reports {
		out.Reports = append(out.Reports, env.Report{
			AgentID: r.AgentID, Agent: r.Agent, ParentID: r.ParentID,
			Obs: slices.Clone(r.Obs), Mask: slices.Clone(r.Mask), Reward: r.Reward,
			Terminated: r.Terminated, Truncated: r.Truncated, Start: r.Start,
			SpanTicks: r.SpanTicks, Clock: r.Clock,
		})
	}
	return out
}

// TestEnvMatchesLocal steps a remote session and a local maze in lockstep with the
// same policies: every turn is the same.
func TestEnvMatchesLocal(t *testing.T) {
	srv := serveEnvs(t, false)
	c := dialEnv(t, srv)
	envs, err := c.Envs(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []remote.EnvInfo{{Name: "maze", Description: "the reference maze: a strategy agent picks directions, a motion agent walks them"}}, envs)

	re, err := c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	local, err := newRuntime()
	require.NoError(t, err)
	require.Len(t, re.Agents(), len(local.Agents()))
	for i, s := range local.Agents() {
		got := re.Agents()[i]
		assert.Equal(t, s.Name, got.Name)
		assert.True(t, s.ObservationSpace.Equal(got.ObservationSpace))
		assert.True(t, s.ActionSpace.Equal(got.ActionSpace))
		assert.Equal(t, s.MaskLen, got.MaskLen)
	}
	oracle, err := oracleAgent(t).New()
	require.NoError(t, err)
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 9))
		motion, err := agent.Random(mazeSpecs(t)[maze.MotionName].ActionSpace, rng)
		require.NoError(t, err)
		want := mustReset(t, local, seed)
		got, err := re.Reset(seed)
		require.NoError(t, err)
		for steps := 0; ; steps++ {
			require.Equal(t, cloneTurn(want), cloneTurn(got), "seed %d, step %d", seed, steps)
			if want.Over {
				break
			}
			rep := want.Acting()
			p := motion
			if rep.Agent == maze.StrategyName {
				p = oracle
			}
			raw, err := p.Act(t.Context(), rep.Obs, rep.Mask)
			require.NoError(t, err)
			id := rep.AgentID // rep lives in the local runtime's buffers
			want, err = local.Step(id, raw)
			require.NoError(t, err)
			got, err = re.Step(id, raw)
			require.NoError(t, err)
		}
	}
	re.WithInfo(true)
	mustReset(t, re, 1)
	var info map[string]any
	require.NoError(t, json.Unmarshal(re.Info().(json.RawMessage), &info))
	assert.Contains(t, info, "position")
	require.NoError(t, re.Close(t.Context()))
}

// TestEnvCampaign runs a campaign over a registry entry whose environments are
// sessions of a remote maze, and gets the summary of the same campaign run locally.
func TestEnvCampaign(t *testing.T) {
	srv := serveEnvs(t, true)
	c := dialEnv(t, srv)
	local := testRegistry(t)
	entry, err := local.Lookup("maze")
	require.NoError(t, err)
	oracle, err := oracleAgent(t).New()
	require.NoError(t, err)
	motionSpace := mazeSpecs(t)[maze.MotionName].ActionSpace
	actors := map[string]runners.Actor{
		maze.StrategyName: runners.Value(oracle),
		maze.MotionName: runners.PerTrial(func(rng *rand.Rand) (agent.Policy, error) {
			return agent.Random(motionSpace, rng)
		}),
	}
	remoteReg := registry.New()
	require.NoError(t, remoteReg.Register(registry.Entry{
		Name: "remote-maze", Open: func(config []byte) (registry.Factory, error) { return c.Factory("maze", config), nil },
		Agents: entry.Agents, Success: maze.Reached,
	}))
	spec := runners.Spec{Env: "maze", Seed: 11, Actors: actors, MaxTicks: 300}
	want := campaign(t, local, spec, runners.WithTrials(12), runners.WithWorkers(2))
	spec.Env = "remote-maze"
	got := campaign(t, remoteReg, spec, runners.WithTrials(12), runners.WithWorkers(2))
	want.Env = "remote-maze"
	assert.Equal(t, comparable(want), comparable(got))
}

// TestEnvErrors checks the statuses of refused calls, which leave the session as it
// was.
func TestEnvErrors(t *testing.T) {
	srv := serveEnvs(t, true, remote.WithMaxSessions(2))
	c := dialEnv(t, srv)

	_, err := c.Make(t.Context(), "nowhere", nil, 0)
	require.ErrorIs(t, err, remote.ErrNotFound)
	assert.Contains(t, err.Error(), `unknown environment "nowhere" (choices: maze)`)
	_, err = c.Make(t.Context(), "maze", []byte(`{"nope": 1}`), 0)
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	var ce *remote.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Field)
	assert.Equal(t, "config", ce.Field.Field)
	specs, err := c.Spec(t.Context(), "maze", []byte(`{"procedure": true}`))
	require.NoError(t, err)
	assert.Len(t, specs, 1, "the procedure variant has no motion agent")

	e, err := c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	_, err = e.StepContext(t.Context(), "strategy_0", agent.Discrete(0))
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)

	turn, err := e.ResetContext(t.Context(), 1)
	require.NoError(t, err)
	rep := turn.Acting()
	require.NotNil(t, rep)
	wall := slices.Index(rep.Mask, false)
	require.GreaterOrEqual(t, wall, 0, "the reference maze starts next to a wall")
	_, err = e.StepContext(t.Context(), rep.AgentID, agent.Discrete(int64(wall)))
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "action", ce.Field.Field)
	_, err = e.StepContext(t.Context(), "motion_0", agent.Discrete(0))
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "not acting: %v", err)
	_, err = e.StepContext(t.Context(), "ghost_0", agent.Discrete(0))
	require.ErrorIs(t, err, env.ErrUnknownAgent)
	_, err = e.StepContext(t.Context(), rep.AgentID, agent.Discrete(9))
	require.Error(t, err, "outside the action space, refused before the call")
	valid := slices.Index(rep.Mask, true)
	_, err = e.StepContext(t.Context(), rep.AgentID, agent.Discrete(int64(valid)))
	require.NoError(t, err, "the refused steps left the session as it was")

	_, err = c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	_, err = c.Make(t.Context(), "maze", nil, 0)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.NoError(t, e.Close(t.Context()))
	require.NoError(t, e.Close(t.Context()), "closing twice succeeds")
	_, err = e.ResetContext(t.Context(), 1)
	require.ErrorIs(t, err, remote.ErrNotFound)
	turn, err = e.Reset(1)
	assert.Empty(t, turn.Reports)
	require.ErrorIs(t, err, remote.ErrNotFound)

	// Malformed actions sent by a plain client name the field.
	cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cc.Close()
	api := pb.NewEnvServiceClient(cc)
	mk, err := api.Make(t.Context(), &pb.MakeRequest{Env: "maze"})
	require.NoError(t, err)
	_, err = api.Reset(t.Context(), &pb.ResetRequest{Session: mk.GetSession(), Seed: 1})
	require.NoError(t, err)
	_, err = api.Step(t.Context(), &pb.StepRequest{Session: mk.GetSession(), AgentId: "strategy_0", Action: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Data: make([]byte, 4)}})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Equal(t, "action.dtype", fieldOf(t, err))
	_, err = api.Step(t.Context(), &pb.StepRequest{Session: mk.GetSession(), AgentId: "strategy"})
	assert.Equal(t, "agent_id", fieldOf(t, err))
	_, err = api.Reset(t.Context(), &pb.ResetRequest{Session: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	_, err = api.Reset(t.Context(), &pb.ResetRequest{})
	assert.Equal(t, "session", fieldOf(t, err))
}

// TestEnvSessions closes sessions left idle, and checks keys by environment name.
func TestEnvSessions(t *testing.T) {
	srv := serveEnvs(t, false, remote.WithSessionIdle(time.Nanosecond), remote.WithMaxSessions(1))
	c := dialEnv(t, srv)
	e, err := c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	_, err = c.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err, "the idle session was closed to make room")
	_, err = e.ResetContext(t.Context(), 0)
	require.ErrorIs(t, err, remote.ErrNotFound)

	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789", "cartpole": "cartpole-key-0123456789"})
	require.NoError(t, err)
	ks := serveEnvs(t, false, remote.WithKeys(keys))
	_, err = remote.DialEnv(t.Context(), ks.target, append(ks.opts, remote.WithKey("nobody-key-0123456789"))...)
	require.ErrorIs(t, err, remote.ErrUnauthenticated)
	other := dialEnv(t, ks, remote.WithKey("cartpole-key-0123456789")) // listing needs a valid key only
	envs, err := other.Envs(t.Context())
	require.NoError(t, err)
	assert.Empty(t, envs, "a key lists only the environments it grants")
	_, err = other.Make(t.Context(), "maze", nil, 0)
	require.ErrorIs(t, err, remote.ErrUnauthenticated)
	mc := dialEnv(t, ks, remote.WithKey("maze-key-0123456789"))
	me, err := mc.Make(t.Context(), "maze", nil, 0)
	require.NoError(t, err)
	_, err = me.ResetContext(t.Context(), 0)
	require.NoError(t, err)
}

// refusingMaze is the maze with a Reset that fails with the configured reason, or
// panics with it when panics is set.
type refusingMaze struct {
	env.MultiAgent
	reason string
	panics bool
}

func (r refusingMaze) Reset(uint64) (env.Turn, error) {
	if r.panics {
		panic(r.reason)
	}
	return env.Turn{}, errors.New(r.reason)
}

// refusingEntry is a registry entry of the maze whose sessions refuse every Reset
// when its configuration names a reason ({"refuse": "...", "panic": false}).
func refusingEntry(t testing.TB) registry.Entry {
	t.Helper()
	entry, err := testRegistry(t).Lookup("maze")
	require.NoError(t, err)
	return registry.Entry{
		Name: "refusing-maze",
		Open: func(config []byte) (registry.Factory, error) {
			var cfg struct {
				Refuse string `json:"refuse"`
				Panic  bool   `json:"panic"`
			}
			if err := json.Unmarshal(config, &cfg); err != nil {
				return nil, err
			}
			mazes, err := entry.Open(nil)
			if err != nil {
				return nil, err
			}
			return registry.FactoryFunc(func(o registry.EnvOptions) (env.MultiAgent, error) {
				m, err := mazes.NewEnv(o)
				if err != nil || cfg.Refuse == "" {
					return m, err
				}
				return refusingMaze{MultiAgent: m, reason: cfg.Refuse, panics: cfg.Panic}, nil
			}), nil
		},
		Agents: entry.Agents,
	}
}

// TestEnvResetError: a session whose environment refuses to reset fails each trial
// with the server's message in its reason, and the campaign goes on to the next.
func TestEnvResetError(t *testing.T) {
	s := newServer(t)
	reg := testRegistry(t)
	require.NoError(t, reg.Register(refusingEntry(t)))
	require.NoError(t, s.AddEnvs(reg))
	srv := start(t, s, false)
	c := dialEnv(t, srv)

	const reason = "the map file maps/nowhere.txt is unreadable"
	config := []byte(`{"refuse": "` + reason + `"}`)
	e, err := c.Make(t.Context(), "refusing-maze", config, 0)
	require.NoError(t, err, "the configuration is accepted; the reset fails")
	turn, err := e.Reset(1)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	assert.Contains(t, err.Error(), "Reset: "+reason)
	assert.Empty(t, turn.Reports)
	_, err = e.Step(maze.StrategyName+"_0", agent.Discrete(0))
	require.ErrorIs(t, err, remote.ErrRejected, "the session was never reset")
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	_, err = e.Reset(2)
	require.ErrorIs(t, err, remote.ErrRejected, "a refused Reset leaves the session open")
	assert.Contains(t, err.Error(), reason)

	// A Reset that panics is INTERNAL, and breaks the session.
	p, err := c.Make(t.Context(), "refusing-maze", []byte(`{"refuse": "boom", "panic": true}`), 0)
	require.NoError(t, err)
	_, err = p.Reset(1)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), "boom")
	_, err = p.Reset(1)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	assert.Contains(t, err.Error(), "panicked earlier")

	entry := refusingEntry(t)
	entry.Open = func(config []byte) (registry.Factory, error) { return c.Factory("refusing-maze", config), nil }
	client := registry.New()
	require.NoError(t, client.Register(entry))
	actors := map[string]runners.Actor{}
	for name, spec := range mazeSpecs(t) {
		actors[name] = runners.PerTrial(func(rng *rand.Rand) (agent.Policy, error) { return agent.Random(spec.ActionSpace, rng) })
	}
	spec := runners.Spec{Env: "refusing-maze", Config: config, Seed: 5, Actors: actors, MaxTicks: 50}
	sum := campaign(t, client, spec, runners.WithTrials(3), runners.WithWorkers(1))
	assert.Equal(t, 3, sum.Failed, "every trial is tried")
	require.Len(t, sum.Failures, 3)
	for i, f := range sum.Failures {
		assert.Equal(t, i, f.Index)
		require.ErrorIs(t, f.Err, runners.ErrEnv)
		require.ErrorIs(t, f.Err, remote.ErrRejected)
		assert.Equal(t, codes.FailedPrecondition, status.Code(f.Err))
		assert.Contains(t, f.Reason, reason)
	}

	// The same configuration without a reason plays.
	spec.Config = []byte(`{}`)
	sum = campaign(t, client, spec, runners.WithTrials(2), runners.WithWorkers(1))
	assert.Equal(t, 2, sum.Ended)
	assert.Empty(t, sum.Failures)
}
