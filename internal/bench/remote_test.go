package bench_test

import (
	"context"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/internal/bench"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func BenchmarkRemoteAct(b *testing.B)  { runCases(b, "RemoteAct/") }
func BenchmarkRemoteEcho(b *testing.B) { runCases(b, "RemoteEcho/") }

// TestRemoteFixture checks what the remote cases measure: the served strategy agent
// answers every observation with its first allowed action, one by one and in a
// batch, and the echo's payloads are those of real Act and ActBatch calls.
func TestRemoteFixture(t *testing.T) {
	defer goleak.VerifyNone(t) // the server, the clients and their streams end
	f, err := bench.NewRemoteFixture()
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, maze.StrategyName, f.Spec.Name)
	assert.Len(t, f.Obs, 106)
	assert.Equal(t, 256, f.Batch.Len())

	for _, unary := range []bool{false, true} {
		var opts []remote.DialOption
		if unary {
			opts = append(opts, remote.WithUnary())
		}
		c, err := f.Dial(opts...)
		require.NoError(t, err)
		got, err := c.Act(context.Background(), f.Obs, f.Mask)
		require.NoError(t, err)
		assert.Equal(t, agent.Discrete(int64(slices.Index(f.Mask, true))), got)
		require.NoError(t, c.Close())
	}
	c, err := f.Dial()
	require.NoError(t, err)
	defer c.Close()
	actions := make([]agent.RawAction, f.Batch.Len())
	require.NoError(t, c.ActBatch(context.Background(), f.Batch, actions))
	for r := range actions {
		assert.Equal(t, int64(slices.Index(f.Batch.Mask(r), true)), actions[r].Int, "row %d", r)
	}

	actReq, actResp, batchReq, batchResp, err := f.Payloads()
	require.NoError(t, err)
	assert.Greater(t, len(actReq), 4*106, "the observation's bytes and more")
	assert.Less(t, len(actResp), 64)
	assert.Greater(t, len(batchReq), 256*(4*106+4))
	assert.Greater(t, len(batchResp), 256*8)
}
