package remote_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestTrialScopeHidesExistence checks what a key learns of the trials of an
// environment it does not grant: the same PERMISSION_DENIED for a trial that
// exists and one that does not, naming the trial and the environments the key
// grants, never the trial's own; a Start on the id of such a trial is refused the
// same way, not ALREADY_EXISTS. A server whose key grants everything says NOT_FOUND.
func TestTrialScopeHidesExistence(t *testing.T) {
	reg := testRegistry(t)
	e, err := reg.Lookup("maze")
	require.NoError(t, err)
	e.Name = "secret"
	require.NoError(t, reg.Register(e))
	const mazeKey, secretKey = "maze-key-0123456789", "secret-key-0123456789"
	keys, err := remote.NewKeys(map[string]string{"maze": mazeKey, "secret": secretKey})
	require.NoError(t, err)
	srv, _ := serveTrials(t, reg, remote.WithKeys(keys))
	cc := rawConnOpts(t, srv)
	api := pb.NewTrialServiceClient(cc)
	as := func(key string) context.Context {
		return metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+key)
	}
	_, err = api.Start(as(secretKey), &pb.StartRequest{Spec: &pb.TrialSpec{Id: "hidden", Env: "secret", MaxTicks: 5}})
	require.NoError(t, err)

	calls := map[string]func(ctx context.Context, id string) error{
		"Watch": func(ctx context.Context, id string) error {
			st, err := api.Watch(ctx, &pb.WatchRequest{Ids: []string{id}})
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		},
		"Stop": func(ctx context.Context, id string) error {
			_, err := api.Stop(ctx, &pb.StopRequest{Ids: []string{id}})
			return err
		},
		"Reward": func(ctx context.Context, id string) error {
			_, err := api.Reward(ctx, &pb.RewardRequest{Trial: id, AgentId: "strategy_0", NextStep: true, Value: 1})
			return err
		},
		"Pending": func(ctx context.Context, id string) error {
			_, err := api.Pending(ctx, &pb.PendingRequest{Trial: id, Agent: maze.StrategyName})
			return err
		},
		"ClientAct": func(ctx context.Context, id string) error {
			_, err := api.ClientAct(ctx, &pb.ClientActRequest{Trial: id, Agent: maze.StrategyName, Action: &pb.ClientActRequest_Raw{Raw: 0}})
			return err
		},
		"Episodes": func(ctx context.Context, id string) error {
			_, err := api.Episodes(ctx, &pb.EpisodesRequest{Trial: id})
			return err
		},
		"Start": func(ctx context.Context, id string) error {
			_, err := api.Start(ctx, &pb.StartRequest{Spec: &pb.TrialSpec{Id: id, Env: "maze", MaxTicks: 5}})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ids := []string{"hidden", "nowhere"}
			if name == "Start" {
				ids = ids[:1] // a free id starts a trial
			}
			for _, id := range ids {
				err := call(as(mazeKey), id)
				assert.Equal(t, codes.PermissionDenied, status.Code(err), "%s %s: %v", name, id, err)
				assert.Equal(t, `the API key does not grant trial "`+id+`" (it grants the trials of: maze)`, status.Convert(err).Message())
			}
		})
	}

	open, _ := serveTrials(t, testRegistry(t))
	openAPI := pb.NewTrialServiceClient(rawConnOpts(t, open))
	def, err := remote.NewKeys(map[string]string{"": "default-key-0123456789"})
	require.NoError(t, err)
	all, _ := serveTrials(t, testRegistry(t), remote.WithKeys(def))
	allAPI := pb.NewTrialServiceClient(rawConnOpts(t, all))
	for name, ctx := range map[string]context.Context{
		"no keys":           t.Context(),
		"a key to all":      as("default-key-0123456789"),
		"a key to all, raw": metadata.AppendToOutgoingContext(t.Context(), "x-baton-key", "default-key-0123456789"),
	} {
		t.Run("NOT_FOUND with "+name, func(t *testing.T) {
			a := openAPI
			if name != "no keys" {
				a = allAPI
			}
			_, err := a.Pending(ctx, &pb.PendingRequest{Trial: "nowhere", Agent: maze.StrategyName})
			assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			assert.Equal(t, `no trial "nowhere"`, status.Convert(err).Message())
			_, err = a.Stop(ctx, &pb.StopRequest{Ids: []string{"nowhere"}})
			assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		})
	}
}

// rawConnOpts is rawConn for a server of these tests, in memory or not.
func rawConnOpts(t *testing.T, srv *server) *grpc.ClientConn {
	t.Helper()
	if srv.dial == nil {
		return rawConn(t, srv.target)
	}
	return rawConn(t, srv.target, grpc.WithContextDialer(srv.dial))
}
