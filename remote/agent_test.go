package remote_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// strategyObservations plays one episode of the maze with the oracle and random
// motion (seeded) and returns every observation and mask of the strategy agent.
func strategyObservations(t *testing.T, seed uint64) (obs [][]float32, masks [][]bool) {
	t.Helper()
	m, err := newRuntime()
	require.NoError(t, err)
	oracle, err := oracleAgent(t).New()
	require.NoError(t, err)
	var motion agent.Policy
	for _, s := range m.Agents() {
		if s.Name == maze.MotionName {
			motion, err = agent.Random(s.ActionSpace, rand.New(rand.NewPCG(seed, 1)))
			require.NoError(t, err)
		}
	}
	turn, err := m.Reset(seed)
	require.NoError(t, err)
	for !turn.Over {
		rep := turn.Acting()
		p := motion
		if rep.Agent == maze.StrategyName {
			obs, masks = append(obs, slices.Clone(rep.Obs)), append(masks, slices.Clone(rep.Mask))
			p = oracle
		}
		raw, err := p.Act(t.Context(), rep.Obs, rep.Mask)
		require.NoError(t, err)
		turn, err = m.Step(rep.AgentID, raw)
		require.NoError(t, err)
	}
	require.NotEmpty(t, obs)
	return obs, masks
}

// TestAgentActMatchesLocal asks the served oracle for the action of every strategy
// observation of an episode, one by one (streams and unary calls) and in one batch,
// and gets the local oracle's actions.
func TestAgentActMatchesLocal(t *testing.T) {
	obs, masks := strategyObservations(t, 5)
	local, err := oracleAgent(t).New()
	require.NoError(t, err)
	want := make([]agent.RawAction, len(obs))
	for i := range obs {
		want[i], err = local.Act(t.Context(), obs[i], masks[i])
		require.NoError(t, err)
	}
	srv := serveAgents(t, false, []remote.Agent{oracleAgent(t)})
	for _, tt := range []struct {
		name string
		opts []remote.DialOption
	}{{"stream", nil}, {"unary", []remote.DialOption{remote.WithUnary()}}} {
		t.Run(tt.name, func(t *testing.T) {
			c := dialAgent(t, srv, tt.opts...)
			for i := range obs {
				got, err := c.Act(t.Context(), obs[i], masks[i])
				require.NoError(t, err)
				assert.Equal(t, want[i], got, "observation %d", i)
			}
		})
	}
	t.Run("batch", func(t *testing.T) {
		c := dialAgent(t, srv)
		spec := c.Spec()
		b := vector.Batch{ObsDim: spec.ObservationSpace.FlatDim(), MaskLen: spec.MaskLen}
		for i := range obs {
			b.Copies = append(b.Copies, i)
			b.Obs = append(b.Obs, obs[i]...)
			b.Masks = append(b.Masks, masks[i]...)
		}
		got := make([]agent.RawAction, len(obs))
		require.NoError(t, c.ActBatch(t.Context(), b, got))
		assert.Equal(t, want, got)
	})
}

// echo is a policy over any action space that answers with an action derived from
// the observation: obs[0] for Discrete, obs rounded for the others.
type echo struct{ space spaces.Space }

func (e echo) Act(_ context.Context, obs []float32, _ []bool) (agent.RawAction, error) {
	switch s := e.space.(type) {
	case spaces.Discrete:
		return agent.Discrete(int64(obs[0])), nil
	case *spaces.Box:
		return agent.Continuous(slices.Clone(obs[:s.FlatDim()])), nil
	case *spaces.MultiDiscrete:
		v := make([]int64, len(s.Nvec()))
		for i := range v {
			v[i] = int64(obs[i])
		}
		return agent.MultiInts(v), nil
	default:
		v := make([]int64, s.FlatDim())
		for i := range v {
			v[i] = int64(obs[i])
		}
		return agent.MultiInts(v), nil
	}
}

// TestAgentActionSpaces serves agents of every kind of action space and checks that
// actions cross unchanged one by one and in batches.
func TestAgentActionSpaces(t *testing.T) {
	obsSpace := spaces.Must(spaces.NewBox([]int{2, 3}, -10, 10))
	cases := []struct {
		name  string
		space spaces.Space
		obs   []float32
		want  agent.RawAction
	}{
		{"discrete", spaces.Discrete{N: 5, Start: 1}, []float32{3, 0, 0, 0, 0, 0}, agent.Discrete(3)},
		{"box", spaces.Must(spaces.NewBox([]int{2, 2}, -10, 10)), []float32{1.5, -2.25, 3, 4, 9, 9}, agent.Continuous([]float32{1.5, -2.25, 3, 4})},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4})), []float32{2, 3, 0, 0, 0, 0}, agent.MultiInts([]int64{2, 3})},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(3)), []float32{1, 0, 1, 0, 0, 0}, agent.MultiInts([]int64{1, 0, 1})},
	}
	var agents []remote.Agent
	for _, c := range cases {
		agents = append(agents, remote.Agent{Spec: env.Spec{Name: c.name, ObservationSpace: obsSpace, ActionSpace: c.space}, Policy: echo{c.space}, Concurrent: true})
	}
	srv := serveAgents(t, false, agents)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, opts := range [][]remote.DialOption{nil, {remote.WithUnary()}} {
				cl := dialAgent(t, srv, append(opts, remote.WithAgent(c.name))...)
				assert.True(t, cl.Spec().ActionSpace.Equal(c.space))
				got, err := cl.Act(t.Context(), c.obs, nil)
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
			}
			cl := dialAgent(t, srv, remote.WithAgent(c.name))
			b := vector.Batch{Copies: []int{0, 1}, Obs: append(slices.Clone(c.obs), c.obs...), ObsDim: 6}
			got := make([]agent.RawAction, 2)
			require.NoError(t, cl.ActBatch(t.Context(), b, got))
			assert.Equal(t, []agent.RawAction{c.want, c.want}, got)
		})
	}
}

// rawClient is a plain generated client, to send what the Go client never would.
func rawClient(t *testing.T, target string) pb.AgentServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return pb.NewAgentServiceClient(cc)
}

func f32(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func floatTensor(v ...float32) *pb.Tensor {
	return &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{int64(len(v))}, Data: f32(v...)}
}

// fieldOf returns the field a status's BadRequest detail names.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	st := status.Convert(err)
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// TestAgentInvalidArgument sends malformed requests with the plain generated client:
// each gets INVALID_ARGUMENT naming the field (in the message and a BadRequest
// detail), or NOT_FOUND for an unknown agent, and the server goes on serving.
func TestAgentInvalidArgument(t *testing.T) {
	obsSpace := spaces.Must(spaces.NewBox([]int{3}, -1, 1))
	masked := remote.Agent{Spec: env.Spec{Name: "masked", ObservationSpace: obsSpace, ActionSpace: spaces.Discrete{N: 2}, MaskLen: 2},
		Policy: agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(1), nil })}
	plain := remote.Agent{Spec: env.Spec{Name: "plain", ObservationSpace: obsSpace, ActionSpace: spaces.Discrete{N: 2}},
		Policy: agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(1), nil })}
	srv := serveAgents(t, true, []remote.Agent{masked, plain})
	api := rawClient(t, srv.target)
	good := floatTensor(0.5, 0, -0.5)
	goodMask := &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{1, 0}}
	cases := []struct {
		name  string
		req   *pb.ActRequest
		code  codes.Code
		field string
		msg   string
	}{
		{"missing observation", &pb.ActRequest{Agent: "plain"}, codes.InvalidArgument, "observation", "missing"},
		{"wrong dtype", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{3}, Data: make([]byte, 24)}}, codes.InvalidArgument, "observation.dtype", "DTYPE_INT64, want DTYPE_FLOAT32"},
		{"no dtype", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Shape: []int64{3}, Data: make([]byte, 12)}}, codes.InvalidArgument, "observation.dtype", "DTYPE_UNSPECIFIED"},
		{"wrong shape", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{4}, Data: make([]byte, 16)}}, codes.InvalidArgument, "observation.shape", "[4], want [3]"},
		{"negative dimension", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{-3}}}, codes.InvalidArgument, "observation.shape", "-3"},
		{"huge shape", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{1 << 40, 1 << 40}}}, codes.InvalidArgument, "observation.shape", "more than"},
		{"short data", &pb.ActRequest{Agent: "plain", Observation: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{3}, Data: make([]byte, 11)}}, codes.InvalidArgument, "observation.data", "11 bytes, want 12"},
		{"NaN", &pb.ActRequest{Agent: "plain", Observation: floatTensor(0, float32(math.NaN()), 0)}, codes.InvalidArgument, "observation.data", "NaN"},
		{"outside the box", &pb.ActRequest{Agent: "plain", Observation: floatTensor(0, 2, 0)}, codes.InvalidArgument, "observation.data", "above the high bound"},
		{"infinite", &pb.ActRequest{Agent: "plain", Observation: floatTensor(float32(math.Inf(-1)), 0, 0)}, codes.InvalidArgument, "observation.data", "below the low bound"},
		{"mask without one", &pb.ActRequest{Agent: "plain", Observation: good, Mask: goodMask}, codes.InvalidArgument, "mask", "has no action mask"},
		{"mask byte", &pb.ActRequest{Agent: "masked", Observation: good, Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{1, 7}}}, codes.InvalidArgument, "mask.data", "element 1 is 7, want 0 or 1"},
		{"mask shape", &pb.ActRequest{Agent: "masked", Observation: good, Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{3}, Data: []byte{1, 0, 1}}}, codes.InvalidArgument, "mask.shape", "[3], want [2]"},
		{"empty mask", &pb.ActRequest{Agent: "masked", Observation: good, Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{0, 0}}}, codes.InvalidArgument, "mask.data", "allows no action"},
		{"no agent named", &pb.ActRequest{Observation: good}, codes.InvalidArgument, "agent", "serves several agents: name one (agents: masked, plain)"},
		{"unknown agent", &pb.ActRequest{Agent: "nobody", Observation: good}, codes.NotFound, "", `no agent "nobody" (agents: masked, plain)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := api.Act(t.Context(), c.req)
			require.Error(t, err)
			assert.Equal(t, c.code, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), c.msg)
			if c.field != "" {
				assert.Equal(t, c.field, fieldOf(t, err))
				assert.True(t, strings.HasPrefix(status.Convert(err).Message(), c.field+": "), status.Convert(err).Message())
			}
			// The same request on a stream ends it with the same status.
			stream, err := api.ActStream(t.Context())
			require.NoError(t, err)
			require.NoError(t, stream.Send(c.req))
			_, err = stream.Recv()
			assert.Equal(t, c.code, status.Code(err), "%v", err)
		})
	}
	t.Run("batch", func(t *testing.T) {
		for _, c := range []struct {
			req   *pb.ActBatchRequest
			field string
		}{
			{&pb.ActBatchRequest{Agent: "plain"}, "observations"},
			{&pb.ActBatchRequest{Agent: "plain", Observations: floatTensor(0, 0, 0)}, "observations.shape"},
			{&pb.ActBatchRequest{Agent: "plain", Observations: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{2, 3}, Data: f32(0, 0, 0, 0, float32(math.NaN()), 0)}}, "observations.data"},
			{&pb.ActBatchRequest{Agent: "plain", Observations: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{2, 3}, Data: f32(0, 0, 0, 0, 0)}}, "observations.data"},
			{&pb.ActBatchRequest{Agent: "masked", Observations: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{1, 3}, Data: f32(0, 0, 0)},
				Masks: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2, 2}, Data: []byte{1, 1, 1, 1}}}, "masks.shape"},
		} {
			_, err := api.ActBatch(t.Context(), c.req)
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			assert.Equal(t, c.field, fieldOf(t, err), "%v", err)
		}
	})
	// The server still serves.
	resp, err := api.Act(t.Context(), &pb.ActRequest{Agent: "masked", Observation: good, Mask: goodMask})
	require.NoError(t, err)
	assert.Equal(t, pb.DType_DTYPE_INT64, resp.GetAction().GetDtype())
}

// TestAgentFaultyPolicy serves policies that fail, panic or act outside their
// space: the calls fail with a status saying so, the client error names the
// address, and the server goes on.
func TestAgentFaultyPolicy(t *testing.T) {
	obsSpace := spaces.Must(spaces.NewBox([]int{1}, -1, 1))
	mk := func(name string, f agent.PolicyFunc) remote.Agent {
		return remote.Agent{Spec: env.Spec{Name: name, ObservationSpace: obsSpace, ActionSpace: spaces.Discrete{N: 2}}, Policy: f}
	}
	srv := serveAgents(t, false, []remote.Agent{
		mk("fails", func(context.Context, []float32, []bool) (agent.RawAction, error) {
			return agent.RawAction{}, errors.New("out of coffee")
		}),
		mk("panics", func(context.Context, []float32, []bool) (agent.RawAction, error) { panic("boom") }),
		mk("outside", func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(7), nil }),
	})
	for _, tt := range []struct {
		agent string
		code  codes.Code
		msg   string
	}{
		{"fails", codes.Unknown, "agent fails: the policy failed: out of coffee"},
		{"panics", codes.Internal, "agent panics: the policy panicked: boom"},
		{"outside", codes.Internal, "chose an action outside its space"},
	} {
		for _, opts := range [][]remote.DialOption{nil, {remote.WithUnary()}} {
			c := dialAgent(t, srv, append(opts, remote.WithAgent(tt.agent))...)
			_, err := c.Act(t.Context(), []float32{0}, nil)
			require.Error(t, err)
			assert.Equal(t, tt.code, status.Code(err))
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), "remote: agent "+tt.agent+" at ")
			var ce *remote.CallError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.code, ce.Status.Code())
		}
	}
}

// TestAgentDeadline stalls the served policy: a call fails with ErrDeadline within
// the client's deadline (on a stream and unary), the caller's own context wins when
// it ends first, and with retries a stall that passes is ridden out.
func TestAgentDeadline(t *testing.T) {
	g := newGate()
	spec := env.Spec{Name: "slow", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -1, 1)), ActionSpace: spaces.Discrete{N: 2}}
	srv := serveAgents(t, false, []remote.Agent{{Spec: spec, Policy: g, Concurrent: true}})
	for _, opts := range [][]remote.DialOption{nil, {remote.WithUnary()}} {
		c := dialAgent(t, srv, append(opts, remote.WithTimeout(150*time.Millisecond))...)
		start := time.Now()
		_, err := c.Act(t.Context(), []float32{0}, nil)
		elapsed := time.Since(start)
		require.ErrorIs(t, err, remote.ErrDeadline)
		assert.Contains(t, err.Error(), "DeadlineExceeded: no answer within 150ms")
		assert.Less(t, elapsed, 3*time.Second)
		<-g.entered

		// The caller's context: cancelled while the server stalls.
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { _, err := c.Act(ctx, []float32{0}, nil); errc <- err }()
		<-g.entered
		cancel()
		err = <-errc
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, codes.Canceled, status.Code(err))
	}

	t.Run("retries", func(t *testing.T) {
		var calls sync.Map
		first := agent.PolicyFunc(func(ctx context.Context, obs []float32, _ []bool) (agent.RawAction, error) {
			if _, seen := calls.LoadOrStore("x", true); !seen {
				<-ctx.Done() // the first call stalls
				return agent.RawAction{}, ctx.Err()
			}
			return agent.Discrete(1), nil
		})
		srv := serveAgents(t, false, []remote.Agent{{Spec: spec, Policy: first, Concurrent: true}})
		c := dialAgent(t, srv, remote.WithTimeout(100*time.Millisecond), remote.WithRetries(2, time.Millisecond))
		got, err := c.Act(t.Context(), []float32{0}, nil)
		require.NoError(t, err)
		assert.Equal(t, agent.Discrete(1), got)
	})
	close(g.release)
}

// TestAgentAuth serves two agents with a key each: a missing key, or one the server
// does not know, gets UNAUTHENTICATED and learns nothing more; a key the server
// knows gets PERMISSION_DENIED for an agent it does not grant, served or not,
// naming the agents it grants; health checks and reflection stay open.
func TestAgentAuth(t *testing.T) {
	keys, err := remote.ParseKeys([]byte("# keys\nstrategy = strategy-key-0123456789\nmotion=motion-key-0123456789abc\n"))
	require.NoError(t, err)
	specs := mazeSpecs(t)
	strategy := oracleAgent(t)
	motion := remote.Agent{Spec: specs[maze.MotionName], Policy: maze.AlwaysForward(), Concurrent: true}
	srv := serveAgents(t, true, []remote.Agent{strategy, motion}, remote.WithKeys(keys))

	for _, tt := range []struct {
		name   string
		opts   []remote.DialOption
		agent  string
		code   codes.Code
		denied bool // ErrPermissionDenied
		msg    string
	}{
		{"no key", nil, maze.StrategyName, codes.Unauthenticated, false, "missing API key"},
		{"wrong key", []remote.DialOption{remote.WithKey("not-the-key-0123456789")}, maze.StrategyName, codes.Unauthenticated, false, "Unauthenticated: invalid API key"},
		{"wrong key, unserved agent", []remote.DialOption{remote.WithKey("not-the-key-0123456789")}, "planner", codes.Unauthenticated, false, "Unauthenticated: invalid API key"},
		{"other agent's key", []remote.DialOption{remote.WithKey("motion-key-0123456789abc")}, maze.StrategyName, codes.PermissionDenied, true,
			`PermissionDenied: the API key does not grant agent "strategy" (it grants: motion)`},
		{"valid key, unserved agent", []remote.DialOption{remote.WithKey("strategy-key-0123456789")}, "planner", codes.PermissionDenied, true,
			`PermissionDenied: the API key does not grant agent "planner" (it grants: strategy)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.DialAgent(t.Context(), srv.target, append(tt.opts, remote.WithAgent(tt.agent))...)
			require.ErrorIs(t, err, remote.ErrUnauthenticated)
			assert.Equal(t, tt.denied, errors.Is(err, remote.ErrPermissionDenied), "%v", err)
			assert.NotErrorIs(t, err, remote.ErrNotFound)
			assert.Equal(t, tt.code, status.Code(err))
			assert.Contains(t, err.Error(), tt.msg)
			if !tt.denied {
				assert.NotContains(t, err.Error(), "motion", "a refused key learns no agent's name")
			}
		})
	}

	t.Run("right key", func(t *testing.T) {
		obs, masks := strategyObservations(t, 1)
		for _, opts := range [][]remote.DialOption{nil, {remote.WithUnary()}} {
			c := dialAgent(t, srv, append(opts, remote.WithAgent(maze.StrategyName), remote.WithKey("strategy-key-0123456789"))...)
			_, err := c.Act(t.Context(), obs[0], masks[0])
			require.NoError(t, err)
		}
	})

	t.Run("stream switching agent", func(t *testing.T) {
		api := rawClient(t, srv.target)
		ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer strategy-key-0123456789")
		stream, err := api.ActStream(ctx)
		require.NoError(t, err)
		obs, _ := strategyObservations(t, 1)
		require.NoError(t, stream.Send(&pb.ActRequest{Agent: maze.StrategyName, Observation: floatTensor(obs[0]...)}))
		_, err = stream.Recv()
		require.NoError(t, err)
		require.NoError(t, stream.Send(&pb.ActRequest{Agent: maze.MotionName, Observation: floatTensor(obs[0]...)}))
		_, err = stream.Recv()
		assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		assert.Contains(t, status.Convert(err).Message(), `the API key does not grant agent "motion" (it grants: strategy)`)
	})

	t.Run("x-baton-key", func(t *testing.T) {
		api := rawClient(t, srv.target)
		ctx := metadata.AppendToOutgoingContext(t.Context(), "x-baton-key", "motion-key-0123456789abc")
		resp, err := api.Spec(ctx, &pb.AgentSpecRequest{Agent: maze.MotionName})
		require.NoError(t, err)
		assert.Equal(t, maze.MotionName, resp.GetName())
		list, err := api.Agents(ctx, &pb.AgentsRequest{})
		require.NoError(t, err)
		require.Len(t, list.GetAgents(), 1, "a key lists only the agents it grants")
	})

	t.Run("health and reflection are open", func(t *testing.T) {
		cc, err := grpc.NewClient(srv.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer cc.Close()
		h, err := healthpb.NewHealthClient(cc).Check(t.Context(), &healthpb.HealthCheckRequest{Service: "baton.v1.AgentService"})
		require.NoError(t, err)
		assert.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())
		rs, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(t.Context())
		require.NoError(t, err)
		require.NoError(t, rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}))
		resp, err := rs.Recv()
		require.NoError(t, err)
		var names []string
		for _, s := range resp.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		assert.Contains(t, names, "baton.v1.AgentService")
		require.NoError(t, rs.CloseSend())
	})
}

// TestAgentConfig reports every problem of the served agents at once.
func TestAgentConfig(t *testing.T) {
	keys, err := remote.NewKeys(map[string]string{"a": "key-of-a-0123456789"})
	require.NoError(t, err)
	s := newServer(t, remote.WithKeys(keys))
	box := spaces.Must(spaces.NewBox([]int{1}, 0, 1))
	p := agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(0), nil })
	err = s.AddAgents(
		remote.Agent{Spec: env.Spec{ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}}, Policy: p},
		remote.Agent{Spec: env.Spec{Name: "both", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}}, Policy: p, New: func() (agent.Policy, error) { return p, nil }},
		remote.Agent{Spec: env.Spec{Name: "mask", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}, MaskLen: 3}, Policy: p},
		remote.Agent{Spec: env.Spec{Name: "text", ObservationSpace: box, ActionSpace: spaces.Must(spaces.NewText(0, 3, ""))}, Policy: p},
		remote.Agent{Spec: env.Spec{Name: "a", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}}, Policy: p},
		remote.Agent{Spec: env.Spec{Name: "b", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}}, Policy: p},
	)
	require.ErrorIs(t, err, remote.ErrConfig)
	for _, want := range []string{`agent "": the spec has no name`, `agent "both": set exactly one of Policy and New`,
		"agent mask: mask length 3", "agent text: agent: not an action space", "agent b has no API key"} {
		assert.Contains(t, err.Error(), want)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	err = s.Serve(t.Context(), lis)
	require.ErrorIs(t, err, remote.ErrConfig)
	assert.Contains(t, err.Error(), "serves nothing")

	_, err = remote.NewServer(remote.WithMaxMessageSize(-1), remote.WithGracePeriod(-time.Second))
	require.ErrorIs(t, err, remote.ErrConfig)
	assert.Contains(t, err.Error(), "WithMaxMessageSize(-1)")
	assert.Contains(t, err.Error(), "WithGracePeriod(-1s)")
}

// TestAgentMessageLimit refuses a request above the server's size limit.
func TestAgentMessageLimit(t *testing.T) {
	spec := env.Spec{Name: "a", ObservationSpace: spaces.Must(spaces.NewBox([]int{64}, -1, 1)), ActionSpace: spaces.Discrete{N: 2}}
	p := agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(0), nil })
	srv := serveAgents(t, false, []remote.Agent{{Spec: spec, Policy: p}}, remote.WithMaxMessageSize(4096))
	c := dialAgent(t, srv)
	_, err := c.Act(t.Context(), make([]float32, 64), nil)
	require.NoError(t, err, "256 bytes pass")
	n := 64
	b := vector.Batch{Copies: make([]int, n), Obs: make([]float32, n*64), ObsDim: 64}
	err = c.ActBatch(t.Context(), b, make([]agent.RawAction, n))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}

// TestAgentConcurrent calls one client from many goroutines, over a shared policy
// that is not safe for concurrent use (the server serialises it) and over policies
// built per stream.
func TestAgentConcurrent(t *testing.T) {
	obs, masks := strategyObservations(t, 2)
	local, err := oracleAgent(t).New()
	require.NoError(t, err)
	shared, err := oracleAgent(t).New()
	require.NoError(t, err)
	for _, a := range []remote.Agent{oracleAgent(t), {Spec: oracleAgent(t).Spec, Policy: shared}} {
		srv := serveAgents(t, false, []remote.Agent{a})
		c := dialAgent(t, srv)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := g; i < len(obs); i += 3 {
					got, err := c.Act(context.Background(), obs[i], masks[i])
					if !assert.NoError(t, err) {
						return
					}
					want, _ := local.Act(context.Background(), obs[i], masks[i])
					assert.Equal(t, want, got)
				}
			})
		}
		wg.Wait()
	}
}

// TestAgentClientChecks refuses inputs that do not fit the agent before any call.
func TestAgentClientChecks(t *testing.T) {
	srv := serveAgents(t, false, []remote.Agent{oracleAgent(t)})
	c := dialAgent(t, srv)
	_, err := c.Act(t.Context(), []float32{1, 2}, nil)
	require.ErrorIs(t, err, remote.ErrMismatch)
	assert.Contains(t, err.Error(), "observation of 2 floats")
	specs := mazeSpecs(t)
	require.ErrorIs(t, c.Check(specs[maze.MotionName]), remote.ErrMismatch)

	_, err = remote.DialAgent(t.Context(), srv.target, append(srv.opts, remote.WithAgent("nobody"))...)
	require.ErrorIs(t, err, remote.ErrNotFound)
	for _, target := range []string{"", "grpc://", "grpc://host", "grpc://h:1/a/b", "grpc://u@h:1"} {
		_, err := remote.DialAgent(t.Context(), target)
		assert.ErrorIs(t, err, remote.ErrConfig, target)
	}
	_, err = remote.DialAgent(t.Context(), "grpc://127.0.0.1:1/strategy", remote.WithTimeout(time.Second))
	require.ErrorIs(t, err, remote.ErrUnavailable)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
}
