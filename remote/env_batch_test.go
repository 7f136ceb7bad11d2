package remote_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/spaces"
)

// fuse is a single-agent environment that fails its step on action 1.
type fuse struct{ obs [1]float32 }

func (f *fuse) Spec() env.Spec {
	return env.Spec{Name: "fuse", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 1e9)), ActionSpace: spaces.Discrete{N: 2}}
}
func (f *fuse) Reset(uint64) (env.Step, error) { f.obs[0] = 0; return env.Step{Obs: f.obs[:]}, nil }
func (f *fuse) Step(a agent.RawAction) (env.Step, error) {
	if a.Int == 1 {
		panic("blown")
	}
	f.obs[0]++
	return env.Step{Obs: f.obs[:], Reward: 0.5}, nil
}
func (f *fuse) Info() any { return nil }

// batchRegistry registers the maze, the cart-pole and the fuse.
func batchRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	require.NoError(t, cartpole.Register(reg))
	require.NoError(t, reg.Register(registry.Entry{Name: "fuse", Open: func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) { return registry.SingleAgent(&fuse{}), nil }), nil
	}}))
	return reg
}

func serveBatches(t *testing.T, tcp bool, opts ...remote.ServerOption) *server {
	t.Helper()
	s := newServer(t, opts...)
	require.NoError(t, s.AddEnvs(batchRegistry(t)))
	return start(t, s, tcp)
}

// TestBatchMatchesVector: a batch session gives, tick by tick, the buffers of a local
// env/vector.Env of the same copies with the same seed and actions, in memory and
// over loopback TCP.
func TestBatchMatchesVector(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		t.Run(map[bool]string{false: "bufconn", true: "tcp"}[tcp], func(t *testing.T) {
			const n, seed = 40, 11
			c := dialEnv(t, serveBatches(t, tcp))
			b, err := c.MakeBatch(t.Context(), "cartpole", []byte(`{"max_steps": 20}`), n, 2)
			require.NoError(t, err)
			assert.Equal(t, n, b.Len())
			assert.Equal(t, "cartpole", b.Spec().Name)
			want, err := vector.New(n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{MaxSteps: 20}) })
			require.NoError(t, err)
			require.NoError(t, b.Reset(t.Context(), seed))
			require.NoError(t, want.Reset(t.Context(), seed))
			require.Equal(t, want.Obs(), b.Obs())
			rng := rand.New(rand.NewPCG(3, 4))
			actions := make([]int64, n)
			ended := 0
			for tick := range 60 {
				for i := range actions {
					actions[i] = rng.Int64N(2)
				}
				require.NoError(t, b.Step(t.Context(), actions))
				require.NoError(t, want.StepDiscrete(t.Context(), actions))
				require.Equal(t, want.Obs(), b.Obs(), "tick %d", tick)
				require.Equal(t, want.Rewards(), b.Rewards(), "tick %d", tick)
				require.Equal(t, want.Terminated(), b.Terminated(), "tick %d", tick)
				require.Equal(t, want.Truncated(), b.Truncated(), "tick %d", tick)
				for i := range n {
					if want.Done(i) {
						ended++
						require.Equal(t, want.FinalObs()[i*4:i*4+4], b.FinalObs()[i*4:i*4+4], "tick %d copy %d", tick, i)
					}
				}
			}
			assert.Positive(t, ended)
			require.NoError(t, b.Close(t.Context()))
			require.ErrorIs(t, b.Step(t.Context(), actions), remote.ErrNotFound, "closed")
		})
	}
}

func TestBatchErrors(t *testing.T) {
	srv := serveBatches(t, false)
	c := dialEnv(t, srv)
	ctx := t.Context()
	t.Run("make", func(t *testing.T) {
		for _, tt := range []struct {
			name, env string
			n, w      int
			code      codes.Code
			is        error
			msg       string
		}{
			{"hierarchical", "maze", 2, 1, codes.InvalidArgument, remote.ErrInvalidArgument, "single-agent"},
			{"no copies", "cartpole", 0, 1, codes.InvalidArgument, remote.ErrInvalidArgument, "num_envs: 0"},
			{"workers", "cartpole", 2, -1, codes.InvalidArgument, remote.ErrInvalidArgument, "workers: -1"},
			{"unknown", "nowhere", 2, 1, codes.NotFound, remote.ErrNotFound, "nowhere"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := c.MakeBatch(ctx, tt.env, nil, tt.n, tt.w)
				require.ErrorIs(t, err, tt.is)
				assert.Equal(t, tt.code, status.Code(err))
				assert.Contains(t, err.Error(), tt.msg)
			})
		}
	})
	b, err := c.MakeBatch(ctx, "fuse", nil, 4, 1)
	require.NoError(t, err)
	err = b.Step(ctx, []int64{0, 0, 0, 0})
	require.ErrorIs(t, err, remote.ErrRejected, "not reset")
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	require.NoError(t, b.Reset(ctx, 1))
	require.ErrorIs(t, b.Step(ctx, []int64{0, 0}), remote.ErrMismatch, "two actions for four copies")

	err = b.Step(ctx, []int64{0, 0, 0, 5})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "actions[3]")
	assert.Contains(t, err.Error(), "copy 3: agent fuse: action 5")
	require.NoError(t, b.Step(ctx, []int64{0, 0, 0, 0}), "the bad action changed nothing")
	assert.Equal(t, []float32{1, 1, 1, 1}, b.Obs())
	assert.Equal(t, []float64{0.5, 0.5, 0.5, 0.5}, b.Rewards())

	err = b.Step(ctx, []int64{0, 1, 0, 0})
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), "copy 1 (agent fuse, step)")
	assert.Contains(t, err.Error(), "blown")
	err = b.Step(ctx, []int64{0, 0, 0, 0})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "needs a reset")
	require.NoError(t, b.Reset(ctx, 1))
	require.NoError(t, b.Step(ctx, []int64{0, 0, 0, 0}))
	require.NoError(t, b.Close(ctx))
	require.NoError(t, b.Close(ctx), "closing twice succeeds")
}

// TestBatchKeys: a batch session's calls need a key that grants its environment.
func TestBatchKeys(t *testing.T) {
	const cartKey, mazeKey = "cartpole-key-0123456789", "maze-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"cartpole": cartKey, "maze": mazeKey})
	require.NoError(t, err)
	srv := serveBatches(t, false, remote.WithKeys(keys))
	good := dialEnv(t, srv, remote.WithKey(cartKey))
	b, err := good.MakeBatch(t.Context(), "cartpole", nil, 3, 1)
	require.NoError(t, err)
	require.NoError(t, b.Reset(t.Context(), 2))

	other := dialEnv(t, srv, remote.WithKey(mazeKey))
	_, err = other.MakeBatch(t.Context(), "cartpole", nil, 3, 1)
	require.ErrorIs(t, err, remote.ErrPermissionDenied)
	_, err = remote.DialEnv(t.Context(), srv.target, append([]remote.DialOption{remote.WithKey("unknown-key-0123456789")}, srv.opts...)...)
	require.ErrorIs(t, err, remote.ErrUnauthenticated)
	require.NoError(t, b.Close(context.WithoutCancel(t.Context())))
}

// TestBatchSessionsCount: batch sessions and plain ones share the server's bound.
func TestBatchSessionsCount(t *testing.T) {
	c := dialEnv(t, serveBatches(t, false, remote.WithMaxSessions(1)))
	b, err := c.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	require.NoError(t, err)
	_, err = c.Make(t.Context(), "cartpole", nil, 0)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	_, err = c.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.NoError(t, b.Close(t.Context()))
	e, err := c.Make(t.Context(), "cartpole", nil, 0)
	require.NoError(t, err)
	_, err = c.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.NoError(t, e.Close(t.Context()))
}

// TestBatchClosedWithTheClient: the client's Close ends its batch sessions on the
// server, which then has room for another.
func TestBatchClosedWithTheClient(t *testing.T) {
	srv := serveBatches(t, false, remote.WithMaxSessions(1))
	c, err := remote.DialEnv(t.Context(), srv.target, srv.opts...)
	require.NoError(t, err)
	_, err = c.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	require.Error(t, err, "the client is closed")
	other := dialEnv(t, srv)
	_, err = other.MakeBatch(t.Context(), "cartpole", nil, 2, 1)
	require.NoError(t, err, "the first client's session was closed")
}
