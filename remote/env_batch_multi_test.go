package remote_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
)

// tripwire is the maze whose third step panics.
type tripwire struct {
	env.MultiAgent
	steps int
}

func (w *tripwire) Step(id string, a agent.RawAction) (env.Turn, error) {
	if w.steps++; w.steps == 3 {
		panic("blown")
	}
	return w.MultiAgent.Step(id, a)
}

// multiRegistry is batchRegistry with the tripwire maze.
func multiRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := batchRegistry(t)
	entry, err := reg.Lookup("maze")
	require.NoError(t, err)
	f, err := entry.Open(nil)
	require.NoError(t, err)
	require.NoError(t, reg.Register(registry.Entry{Name: "tripwire", Open: func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(o registry.EnvOptions) (env.MultiAgent, error) {
			m, err := f.NewEnv(o)
			return &tripwire{MultiAgent: m}, err
		}), nil
	}}))
	return reg
}

func serveMulti(t testing.TB, tcp bool, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddEnvs(multiRegistry(t)))
	return start(t, s, tcp)
}

// localMulti is the fast lane's in-process Multi of n mazes, with its buffers.
func localMulti(t testing.TB, n int) (*fastlane.Multi, fastlane.MultiBuffers) {
	t.Helper()
	reg := batchRegistry(t)
	l, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	a := len(l.Agents)
	b := fastlane.MultiBuffers{Agents: make([]fastlane.AgentBuffers, a), Counts: make([]int64, a), Acting: make([]int64, n),
		Rewards: make([]float64, n*a), Spans: make([]int64, n*a), Terminated: make([]bool, n*a), Truncated: make([]bool, n*a), Ended: make([]bool, n)}
	for j, ag := range l.Agents {
		b.Agents[j] = fastlane.AgentBuffers{Copies: make([]int64, n), Obs: make([]float32, n*ag.ObsDim),
			Masks: make([]bool, n*ag.MaskLen), Actions: make([]int64, n)}
	}
	x, err := fastlane.NewMulti(reg, "maze", nil, n, 1, b)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x, b
}

// sameGroups checks that the remote groups and columns are the local ones.
func sameGroups(t *testing.T, where string, got *remote.MultiBatchEnv, want fastlane.MultiBuffers) {
	t.Helper()
	for j, g := range got.Groups() {
		k := int(want.Counts[j])
		w := want.Agents[j]
		require.Len(t, g.Copies, k, "%s: group %s", where, g.Agent)
		require.Equal(t, w.Copies[:k], g.Copies, "%s: group %s", where, g.Agent)
		d := len(w.Obs) / got.Len()
		require.Equal(t, w.Obs[:k*d], g.Obs, "%s: group %s", where, g.Agent)
		m := len(w.Masks) / got.Len()
		if m > 0 {
			require.Equal(t, w.Masks[:k*m], g.Masks, "%s: group %s", where, g.Agent)
		} else {
			require.Nil(t, g.Masks)
		}
		require.Len(t, g.Actions, k)
	}
	require.Equal(t, want.Acting, got.Acting(), where)
	require.Equal(t, want.Rewards, got.Rewards(), where)
	require.Equal(t, want.Spans, got.Spans(), where)
	require.Equal(t, want.Terminated, got.Terminated(), where)
	require.Equal(t, want.Truncated, got.Truncated(), where)
	require.Equal(t, want.Ended, got.Ended(), where)
}

// TestMultiBatchMatchesFastLane: a multi-agent batch session of the maze gives, tick
// by tick, the groups and columns of the fast lane's in-process Multi of the same
// copies with the same seed and actions, in memory and over loopback TCP.
func TestMultiBatchMatchesFastLane(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		t.Run(map[bool]string{false: "bufconn", true: "tcp"}[tcp], func(t *testing.T) {
			const n, seed = 24, 5
			c := dialEnv(t, serveMulti(t, tcp))
			b, err := c.MakeMultiBatch(t.Context(), "maze", nil, n, 2)
			require.NoError(t, err)
			assert.Equal(t, n, b.Len())
			require.Len(t, b.Agents(), 2)
			assert.Equal(t, "strategy", b.Agents()[0].Name)
			assert.Equal(t, "motion", b.Agents()[1].Name)
			x, want := localMulti(t, n)
			require.NoError(t, b.Reset(t.Context(), seed))
			require.NoError(t, x.Reset(t.Context(), seed))
			sameGroups(t, "reset", b, want)
			rng := rand.New(rand.NewPCG(3, 4))
			ended, rewarded := 0, 0
			for tick := range 300 {
				for j, g := range b.Groups() {
					m := b.Agents()[j].MaskLen
					for r := range g.Copies {
						for {
							a := rng.Int64N(int64(m))
							if g.Masks[r*m+int(a)] {
								g.Actions[r], want.Agents[j].Actions[r] = a, a
								break
							}
						}
					}
				}
				require.NoError(t, b.Step(t.Context()))
				require.NoError(t, x.Step(t.Context()))
				sameGroups(t, fmt.Sprintf("tick %d", tick), b, want)
				for i, e := range b.Ended() {
					if e {
						ended++
					}
					if b.Rewards()[2*i] != 0 {
						rewarded++
					}
				}
			}
			assert.Positive(t, ended, "episodes ended and were reset")
			assert.Positive(t, rewarded, "the strategy was rewarded")
			require.NoError(t, b.Close(t.Context()))
			require.ErrorIs(t, b.Step(t.Context()), remote.ErrNotFound, "closed")
		})
	}
}

func TestMultiBatchErrors(t *testing.T) {
	srv := serveMulti(t, false)
	c := dialEnv(t, srv)
	ctx := t.Context()
	t.Run("make", func(t *testing.T) {
		_, err := c.MakeBatch(ctx, "maze", nil, 2, 1)
		require.ErrorIs(t, err, remote.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "single-agent environment (multi_agent: false)", "an older client is refused")
		_, err = c.MakeMultiBatch(ctx, "cartpole", nil, 2, 1)
		require.ErrorIs(t, err, remote.ErrMismatch)
		assert.Contains(t, err.Error(), "single-agent environment: MakeBatch steps it")
		_, err = c.MakeMultiBatch(ctx, "nowhere", nil, 2, 1)
		require.ErrorIs(t, err, remote.ErrNotFound)
		_, err = c.MakeMultiBatch(ctx, "maze", nil, 0, 1)
		require.ErrorIs(t, err, remote.ErrInvalidArgument)
		_, err = c.MakeMultiBatch(ctx, "maze", []byte(`{"side": "wide"}`), 2, 1)
		require.ErrorIs(t, err, remote.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "config")
	})
	b, err := c.MakeMultiBatch(ctx, "tripwire", nil, 3, 1)
	require.NoError(t, err)
	err = b.Step(ctx)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "not reset: %v", err)
	require.NoError(t, b.Reset(ctx, 1))
	g := b.Groups()[0]
	require.Len(t, g.Copies, 3, "the strategy acts first in every copy")
	masked := -1
	for a, ok := range g.Masks[:4] {
		if !ok {
			masked = a
		}
	}
	require.GreaterOrEqual(t, masked, 0, "a wall forbids a direction at copy 0's start")
	g.Actions[1] = 7
	err = b.Step(ctx)
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "actions[1]")
	assert.Contains(t, err.Error(), "copy 1: agent strategy: action 7: outside Discrete(4, start=0)")
	g.Actions[0], g.Actions[1] = int64(masked), 0
	err = b.Step(ctx)
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), fmt.Sprintf("copy 0: agent strategy: action %d: masked", masked))
	for r := range g.Copies {
		g.Actions[r] = firstAllowed(g.Masks[r*4 : r*4+4])
	}
	require.NoError(t, b.Step(ctx), "the bad actions changed nothing")
	fill := func() {
		for j, g := range b.Groups() {
			m := b.Agents()[j].MaskLen
			for r := range g.Copies {
				g.Actions[r] = firstAllowed(g.Masks[r*m : r*m+m])
			}
		}
	}
	fill()
	require.NoError(t, b.Step(ctx))
	fill()
	err = b.Step(ctx)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), "copy 0 (agent ")
	assert.Contains(t, err.Error(), "blown")
	err = b.Step(ctx)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "needs a reset")
	require.NoError(t, b.Reset(ctx, 1))
	require.NoError(t, b.Close(ctx))
	require.NoError(t, b.Close(ctx), "closing twice succeeds")
}

func firstAllowed(mask []bool) int64 {
	for a, ok := range mask {
		if ok {
			return int64(a)
		}
	}
	return 0
}

// TestMultiBatchBudget: a multi-agent batch is counted, and refused, as a
// single-agent one: its copies' memory within the session budget, its answers within
// the message limit.
func TestMultiBatchBudget(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  remote.ServerOption
		msg  string
	}{
		{"session bytes", remote.WithMaxSessionBytes(1 << 20), "MakeBatch: 4096 copies × "},
		{"message", remote.WithMaxMessageSize(1 << 20), "an answer would take"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dialEnv(t, serveMulti(t, false, tt.opt))
			_, err := c.MakeMultiBatch(t.Context(), "maze", nil, 4096, 1)
			require.ErrorIs(t, err, remote.ErrRejected)
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			assert.Contains(t, err.Error(), tt.msg)
			b, err := c.MakeMultiBatch(t.Context(), "maze", nil, 64, 1)
			require.NoError(t, err, "a smaller batch fits")
			require.NoError(t, b.Close(t.Context()))
		})
	}
}

// TestMultiBatchKeys: a multi-agent batch session's calls need a key that grants its
// environment.
func TestMultiBatchKeys(t *testing.T) {
	const cartKey, mazeKey = "cartpole-key-0123456789", "maze-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"cartpole": cartKey, "maze": mazeKey})
	require.NoError(t, err)
	srv := serveMulti(t, false, remote.WithKeys(keys))
	good := dialEnv(t, srv, remote.WithKey(mazeKey))
	b, err := good.MakeMultiBatch(t.Context(), "maze", nil, 3, 1)
	require.NoError(t, err)
	require.NoError(t, b.Reset(t.Context(), 2))
	other := dialEnv(t, srv, remote.WithKey(cartKey))
	_, err = other.MakeMultiBatch(t.Context(), "maze", nil, 3, 1)
	require.ErrorIs(t, err, remote.ErrPermissionDenied)
	// The session's calls are checked against its environment, whoever knows its id.
	cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(srv.dial))
	require.NoError(t, err)
	defer cc.Close()
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+cartKey)
	_, err = pb.NewEnvServiceClient(cc).StepBatch(ctx, &pb.StepBatchRequest{Session: b.Session(),
		Actions: &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{3}, Data: make([]byte, 24)}})
	assert.Equal(t, codes.PermissionDenied, status.Code(err))
	for j, g := range b.Groups() {
		m := b.Agents()[j].MaskLen
		for r := range g.Copies {
			g.Actions[r] = firstAllowed(g.Masks[r*m : r*m+m])
		}
	}
	require.NoError(t, b.Step(t.Context()), "the session's own key steps it")
	require.NoError(t, b.Close(context.WithoutCancel(t.Context())))
}

// TestBatchJSON: batch sessions of both kinds over the JSON gateway, as curl calls
// them: MakeBatch, ResetBatch, StepBatch with the actions as base64 bytes.
func TestBatchJSON(t *testing.T) {
	srv := serveMulti(t, true)
	c := newJSONClient(t, srv, "")
	actions := func(v ...int64) string {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
		return fmt.Sprintf(`{"dtype": "DTYPE_INT64", "shape": ["%d"], "data": %q}`, len(v), base64.StdEncoding.EncodeToString(b))
	}

	made := c.ok("EnvService/MakeBatch", `{"env": "cartpole", "numEnvs": "2"}`)
	session := made["session"].(string)
	assert.Equal(t, false, made["multiAgent"])
	turn := c.ok("EnvService/ResetBatch", fmt.Sprintf(`{"session": %q, "seed": "3"}`, session))
	assert.Equal(t, []any{"2", "4"}, turn["observations"].(map[string]any)["shape"])
	turn = c.ok("EnvService/StepBatch", fmt.Sprintf(`{"session": %q, "actions": %s}`, session, actions(0, 1)))
	assert.Equal(t, []any{"2"}, turn["rewards"].(map[string]any)["shape"])

	code, out := c.call("EnvService/MakeBatch", `{"env": "maze", "numEnvs": "2"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, out["message"], "multi_agent")
	made = c.ok("EnvService/MakeBatch", `{"env": "maze", "numEnvs": "2", "multiAgent": true}`)
	session = made["session"].(string)
	assert.Equal(t, true, made["multiAgent"])
	turn = c.ok("EnvService/ResetBatch", fmt.Sprintf(`{"session": %q, "seed": "3"}`, session))
	groups := turn["groups"].([]any)
	require.Len(t, groups, 2)
	strategy := groups[0].(map[string]any)
	assert.Equal(t, "strategy", strategy["agent"])
	assert.Equal(t, []any{"2", "106"}, strategy["observations"].(map[string]any)["shape"])
	masks, err := base64.StdEncoding.DecodeString(strategy["masks"].(map[string]any)["data"].(string))
	require.NoError(t, err)
	turn = c.ok("EnvService/StepBatch", fmt.Sprintf(`{"session": %q, "actions": %s}`, session,
		actions(firstAllowed(bytesBools(masks[:4])), firstAllowed(bytesBools(masks[4:8])))))
	assert.Equal(t, []any{"2", "2"}, turn["rewards"].(map[string]any)["shape"])
	assert.Equal(t, []any{"2"}, turn["ended"].(map[string]any)["shape"])
	code, out = c.call("EnvService/StepBatch", fmt.Sprintf(`{"session": %q, "actions": %s}`, session, actions(9, 9)))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, out["message"], "actions[0]")
	c.ok("EnvService/Close", fmt.Sprintf(`{"session": %q}`, session))
}

func bytesBools(b []byte) []bool {
	out := make([]bool, len(b))
	for i, x := range b {
		out[i] = x != 0
	}
	return out
}

// BenchmarkMultiBatch steps N mazes batched per acting agent, random valid actions
// chosen in Go: over loopback TCP (a MultiBatchEnv, one StepBatch call per tick) and
// in process (the fast lane's Multi the server steps), so that the ratio is what the
// network costs. steps/s counts N env steps per tick.
func BenchmarkMultiBatch(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		rng := rand.New(rand.NewPCG(1, 2))
		pick := func(mask []bool) int64 {
			for {
				if a := rng.Int64N(int64(len(mask))); mask[a] {
					return a
				}
			}
		}
		b.Run(fmt.Sprintf("N=%d/remote", n), func(b *testing.B) {
			c := dialEnv(b, serveMulti(b, true))
			v, err := c.MakeMultiBatch(b.Context(), "maze", nil, n, 1)
			require.NoError(b, err)
			require.NoError(b, v.Reset(b.Context(), 1))
			b.ReportAllocs()
			for b.Loop() {
				for j, g := range v.Groups() {
					m := v.Agents()[j].MaskLen
					for r := range g.Copies {
						g.Actions[r] = pick(g.Masks[r*m : r*m+m])
					}
				}
				require.NoError(b, v.Step(b.Context()))
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "steps/s")
		})
		b.Run(fmt.Sprintf("N=%d/local", n), func(b *testing.B) {
			x, buf := localMulti(b, n)
			require.NoError(b, x.Reset(b.Context(), 1))
			l := x.Layout()
			b.ReportAllocs()
			for b.Loop() {
				for j, ag := range l.Agents {
					g, m := &buf.Agents[j], ag.MaskLen
					for r := range int(buf.Counts[j]) {
						g.Actions[r] = pick(g.Masks[r*m : r*m+m])
					}
				}
				require.NoError(b, x.Step(b.Context()))
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// liar is an environment server that answers every ResetBatch with the turn it is
// given, as a broken or hostile server might.
type liar struct {
	pb.UnimplementedEnvServiceServer
	made *pb.MakeBatchResponse
	mu   sync.Mutex
	turn *pb.BatchTurn
}

func (l *liar) Envs(context.Context, *pb.EnvsRequest) (*pb.EnvsResponse, error) {
	return &pb.EnvsResponse{}, nil
}

func (l *liar) MakeBatch(context.Context, *pb.MakeBatchRequest) (*pb.MakeBatchResponse, error) {
	return l.made, nil
}

func (l *liar) ResetBatch(context.Context, *pb.ResetBatchRequest) (*pb.BatchTurn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.turn, nil
}

func (l *liar) Close(context.Context, *pb.CloseRequest) (*pb.CloseResponse, error) {
	return &pb.CloseResponse{}, nil
}

// TestMultiBatchChecksTurns: a MultiBatchEnv refuses a turn whose groups or columns
// do not fit its copies and agents (ErrMismatch naming the field), and keeps its
// buffers as they were.
func TestMultiBatchChecksTurns(t *testing.T) {
	const n = 4
	// A true turn of 4 mazes, from a real server, for the liar to bend.
	srv := serveMulti(t, false)
	cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(srv.dial))
	require.NoError(t, err)
	defer cc.Close()
	api := pb.NewEnvServiceClient(cc)
	made, err := api.MakeBatch(t.Context(), &pb.MakeBatchRequest{Env: "maze", NumEnvs: n, MultiAgent: true})
	require.NoError(t, err)
	good, err := api.ResetBatch(t.Context(), &pb.ResetBatchRequest{Session: made.GetSession(), Seed: 1})
	require.NoError(t, err)
	require.Len(t, good.GetGroups()[0].GetCopies().GetData(), 8*n, "the strategy acts in every copy")

	l := &liar{made: made, turn: good}
	gs := grpc.NewServer()
	pb.RegisterEnvServiceServer(gs, l)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()
	c, err := remote.DialEnv(t.Context(), "passthrough:///liar", remote.WithGRPCDialOptions(grpc.WithContextDialer(
		func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) })))
	require.NoError(t, err)
	defer c.Close()
	b, err := c.MakeMultiBatch(t.Context(), "maze", nil, n, 1)
	require.NoError(t, err)
	require.NoError(t, b.Reset(t.Context(), 1))
	copies := slices.Clone(b.Groups()[0].Copies)
	obs := slices.Clone(b.Groups()[0].Obs)
	assert.Equal(t, []int64{0, 1, 2, 3}, copies)

	int64s := func(v ...int64) []byte {
		out := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
		return out
	}
	for _, tt := range []struct {
		name, field string
		bend        func(t *pb.BatchTurn)
	}{
		{"one group", "groups", func(t *pb.BatchTurn) { t.Groups = t.Groups[:1] }},
		{"agent", "groups[1].agent", func(t *pb.BatchTurn) { t.Groups[1].Agent = "pilot" }},
		{"descending", "groups[0].copies.data", func(t *pb.BatchTurn) { t.Groups[0].Copies.Data = int64s(0, 2, 1, 3) }},
		{"outside", "groups[0].copies.data", func(t *pb.BatchTurn) { t.Groups[0].Copies.Data = int64s(0, 1, 2, 4) }},
		{"twice", "groups[1].copies.data", func(t *pb.BatchTurn) {
			t.Groups[0].Copies.Data, t.Groups[0].Copies.Shape = int64s(0, 1, 2), []int64{3}
			t.Groups[0].Observations.Data, t.Groups[0].Observations.Shape = t.Groups[0].Observations.Data[:3*4*106], []int64{3, 106}
			t.Groups[0].Masks.Data, t.Groups[0].Masks.Shape = t.Groups[0].Masks.Data[:3*4], []int64{3, 4}
			t.Groups[1].Copies.Data, t.Groups[1].Copies.Shape = int64s(2), []int64{1}
			t.Groups[1].Observations.Data, t.Groups[1].Observations.Shape = make([]byte, 4*104), []int64{1, 104}
			t.Groups[1].Masks.Data, t.Groups[1].Masks.Shape = make([]byte, 2), []int64{1, 2}
		}},
		{"too many", "groups[1].copies.shape", func(t *pb.BatchTurn) { t.Groups[1].Copies.Shape = []int64{1} }},
		{"observations", "groups[0].observations.shape", func(t *pb.BatchTurn) { t.Groups[0].Observations.Shape = []int64{4, 105} }},
		{"masks", "groups[0].masks", func(t *pb.BatchTurn) { t.Groups[0].Masks = nil }},
		{"rewards", "rewards.shape", func(t *pb.BatchTurn) { t.Rewards.Shape = []int64{n} }},
		{"spans", "spans.dtype", func(t *pb.BatchTurn) { t.Spans.Dtype = pb.DType_DTYPE_FLOAT64 }},
		{"ended", "ended", func(t *pb.BatchTurn) { t.Ended = nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := proto.CloneOf(good)
			tt.bend(bad)
			l.mu.Lock()
			l.turn = bad
			l.mu.Unlock()
			err := b.Reset(t.Context(), 1)
			require.ErrorIs(t, err, remote.ErrMismatch)
			assert.Contains(t, err.Error(), tt.field)
			assert.Equal(t, copies, b.Groups()[0].Copies, "unchanged")
			assert.Equal(t, obs, b.Groups()[0].Obs, "unchanged")
		})
	}
}
