package remote_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestAgentKeyScope checks what each key learns from an agent server with a key of
// its own for strategy and motion and a default key for the rest (scout), in memory:
// a key the server does not know gets UNAUTHENTICATED and nothing more; a key it
// knows gets PERMISSION_DENIED for an agent it does not grant, served or not, with
// the agents it grants named; an agent the key would grant that is not served is
// NOT_FOUND, naming the agents the key grants, and only those.
func TestAgentKeyScope(t *testing.T) {
	const (
		strategyKey = "strategy-key-0123456789"
		motionKey   = "motion-key-0123456789"
		defaultKey  = "default-key-0123456789"
	)
	keys, err := remote.NewKeys(map[string]string{maze.StrategyName: strategyKey, maze.MotionName: motionKey, "": defaultKey})
	require.NoError(t, err)
	specs := mazeSpecs(t)
	scout := specs[maze.MotionName]
	scout.Name = "scout"
	agents := []remote.Agent{
		oracleAgent(t),
		{Spec: specs[maze.MotionName], Policy: maze.AlwaysForward(), Concurrent: true},
		{Spec: scout, Policy: maze.AlwaysForward(), Concurrent: true},
	}
	srv := serveAgents(t, false, agents, remote.WithKeys(keys))
	open := serveAgents(t, false, agents)

	for _, tt := range []struct {
		name  string
		srv   *server
		key   string // "" for none
		agent string
		code  codes.Code
		is    []error
		msg   string
	}{
		{"own key", srv, strategyKey, maze.StrategyName, codes.OK, nil, ""},
		{"default key", srv, defaultKey, "scout", codes.OK, nil, ""},
		{"missing key", srv, "", maze.StrategyName, codes.Unauthenticated, []error{remote.ErrUnauthenticated},
			`Unauthenticated: missing API key: send the metadata "authorization: Bearer KEY"`},
		{"unknown key", srv, "unknown-key-0123456789", maze.StrategyName, codes.Unauthenticated, []error{remote.ErrUnauthenticated},
			"Unauthenticated: invalid API key"},
		{"unknown key, unserved agent", srv, "unknown-key-0123456789", "ghost", codes.Unauthenticated, []error{remote.ErrUnauthenticated},
			"Unauthenticated: invalid API key"},
		{"another agent's key", srv, strategyKey, maze.MotionName, codes.PermissionDenied, []error{remote.ErrPermissionDenied, remote.ErrUnauthenticated},
			`PermissionDenied: the API key does not grant agent "motion" (it grants: strategy)`},
		{"own key, unserved agent", srv, motionKey, "ghost", codes.PermissionDenied, []error{remote.ErrPermissionDenied, remote.ErrUnauthenticated},
			`PermissionDenied: the API key does not grant agent "ghost" (it grants: motion)`},
		{"default key, agent with a key", srv, defaultKey, maze.StrategyName, codes.PermissionDenied, []error{remote.ErrPermissionDenied, remote.ErrUnauthenticated},
			`PermissionDenied: the API key does not grant agent "strategy" (it grants: scout)`},
		{"default key, unserved agent", srv, defaultKey, "ghost", codes.NotFound, []error{remote.ErrNotFound},
			`NotFound: no agent "ghost" (agents: scout)`},
		{"no keys, unserved agent", open, "", "ghost", codes.NotFound, []error{remote.ErrNotFound},
			`NotFound: no agent "ghost" (agents: strategy, motion, scout)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := append([]remote.DialOption{remote.WithAgent(tt.agent)}, tt.srv.opts...)
			if tt.key != "" {
				opts = append(opts, remote.WithKey(tt.key))
			}
			c, err := remote.DialAgent(t.Context(), tt.srv.target, opts...)
			if tt.code == codes.OK {
				require.NoError(t, err)
				assert.Equal(t, tt.agent, c.Spec().Name)
				require.NoError(t, c.Close())
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.code, status.Code(err), "%v", err)
			for _, sentinel := range []error{remote.ErrPermissionDenied, remote.ErrUnauthenticated, remote.ErrNotFound} {
				assert.Equal(t, slices.Contains(tt.is, sentinel), errors.Is(err, sentinel), "errors.Is(%v, %v)", err, sentinel)
			}
			var ce *remote.CallError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "AgentService/Spec", ce.Method)
			assert.Contains(t, err.Error(), "agent "+tt.agent+" at ")
			assert.Contains(t, err.Error(), tt.msg)
		})
	}

	t.Run("listing and an empty name", func(t *testing.T) {
		tcp := serveAgents(t, true, agents, remote.WithKeys(keys))
		api := rawClient(t, tcp.target)
		ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+defaultKey)
		list, err := api.Agents(ctx, &pb.AgentsRequest{})
		require.NoError(t, err)
		require.Len(t, list.GetAgents(), 1)
		assert.Equal(t, "scout", list.GetAgents()[0].GetName())
		_, err = api.Spec(ctx, &pb.AgentSpecRequest{})
		assert.Equal(t, codes.InvalidArgument, status.Code(err))
		assert.Equal(t, "agent: empty, but the server serves several agents: name one (agents: scout)", status.Convert(err).Message())
	})
}
