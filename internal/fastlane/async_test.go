package fastlane_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

func batch(b, dim, mlen int) fastlane.AsyncBatch {
	return fastlane.AsyncBatch{IDs: make([]int64, b), Obs: make([]float32, b*dim), FinalObs: make([]float32, b*dim),
		Masks: make([]bool, b*mlen), Rewards: make([]float64, b), Terminated: make([]bool, b), Truncated: make([]bool, b)}
}

// recv waits for a batch, however long the workers take.
func recv(t *testing.T, a interface {
	Recv(context.Context, time.Duration) (bool, error)
}) {
	t.Helper()
	for {
		ok, err := a.Recv(bg, time.Millisecond)
		require.NoError(t, err)
		if ok {
			return
		}
	}
}

// act is the action of copy i at its step s, whoever steps it when.
func act(i, s int) int64 { return rand.New(rand.NewPCG(uint64(i), uint64(s))).Int64N(2) }

type record struct {
	obs, final []float32
	reward     float64
	term       bool
	trunc      bool
}

// TestAsyncMatchesVector: each copy of an Async, stepped in whatever order its
// workers finish, follows the trajectory of the same copy of env/vector's Env given
// the same actions.
func TestAsyncMatchesVector(t *testing.T) {
	for _, c := range []struct{ n, workers, batch int }{{8, 1, 8}, {16, 3, 4}, {16, 4, 1}, {7, 2, 3}} {
		t.Run(fmt.Sprintf("N=%d/W=%d/B=%d", c.n, c.workers, c.batch), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const seed = 9
			rounds := 30 * c.n / c.batch // about 30 steps a copy
			out := batch(c.batch, 4, 0)
			a, err := fastlane.NewAsync(testRegistry(t), "cartpole", []byte(`{"max_steps": 15}`), c.n, c.workers, c.batch, out)
			require.NoError(t, err)
			defer a.Close()
			assert.Equal(t, c.batch, a.BatchSize())
			require.NoError(t, a.Reset(bg, seed))
			got := make([][]record, c.n) // got[i][s]: copy i after s steps (0: the reset)
			actions := make([]int64, c.batch)
			for range rounds {
				recv(t, a)
				for r, id := range out.IDs {
					got[id] = append(got[id], record{
						obs: append([]float32(nil), out.Obs[r*4:r*4+4]...), final: append([]float32(nil), out.FinalObs[r*4:r*4+4]...),
						reward: out.Rewards[r], term: out.Terminated[r], trunc: out.Truncated[r],
					})
					actions[r] = act(int(id), len(got[id])-1)
				}
				require.NoError(t, a.Send(actions, out.IDs))
			}

			want, err := vector.New(c.n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{MaxSteps: 15}) })
			require.NoError(t, err)
			require.NoError(t, want.Reset(bg, seed))
			longest, ended := 0, 0
			for _, g := range got {
				longest = max(longest, len(g))
			}
			va := make([]int64, c.n)
			for s := range longest {
				for i := range c.n {
					if s >= len(got[i]) {
						continue
					}
					g := got[i][s]
					require.Equal(t, want.Obs()[i*4:i*4+4], g.obs, "copy %d step %d", i, s)
					require.Equal(t, want.Rewards()[i], g.reward, "copy %d step %d", i, s)
					require.Equal(t, want.Terminated()[i], g.term, "copy %d step %d", i, s)
					require.Equal(t, want.Truncated()[i], g.trunc, "copy %d step %d", i, s)
					if want.Done(i) {
						ended++
						require.Equal(t, want.FinalObs()[i*4:i*4+4], g.final, "copy %d step %d", i, s)
					}
				}
				for i := range va {
					va[i] = act(i, s)
				}
				require.NoError(t, want.StepDiscrete(bg, va))
			}
			assert.Positive(t, ended)
			require.NoError(t, a.Close())
			require.NoError(t, a.Close(), "idempotent")
			_, err = a.Recv(bg, 0)
			require.ErrorIs(t, err, vector.ErrClosed)
		})
	}
}

// TestAsyncFailure: a copy that panics comes back as an error naming it, its agent
// and the reason; the other copies go on, and the failed one waits for a reset.
func TestAsyncFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 4
	out := batch(2, 1, 0)
	a, err := fastlane.NewAsync(testRegistry(t), "bomb", nil, n, 2, 2, out)
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Reset(bg, 1))
	recv(t, a)
	first := append([]int64(nil), out.IDs...)
	recv(t, a)
	second := append([]int64(nil), out.IDs...)
	bad := first[1]
	require.NoError(t, a.Send([]int64{0, 1}, first))

	var failed error
	for failed == nil {
		_, failed = a.Recv(bg, time.Millisecond)
	}
	require.ErrorIs(t, failed, vector.ErrPanic)
	assert.Equal(t, fastlane.CodeCopy, fastlane.CodeOf(failed))
	fs := fastlane.Failures(failed, a.Agent)
	require.Len(t, fs, 1)
	assert.Equal(t, fastlane.Failure{Copy: int(bad), Agent: "bomb", Op: "step", Reason: fs[0].Reason, Panic: fs[0].Panic}, fs[0])
	assert.Contains(t, fs[0].Reason, "boom")

	// The others go on.
	require.NoError(t, a.Send([]int64{0, 0}, second))
	recv(t, a)
	assert.NotContains(t, out.IDs, bad)
	err = a.Send([]int64{0}, []int64{bad})
	require.ErrorIs(t, err, fastlane.ErrCopyState)
	assert.Contains(t, err.Error(), fmt.Sprintf("copy %d", bad))
	require.NoError(t, a.ResetCopies([]int64{bad}))
	recv(t, a)
	assert.Contains(t, out.IDs, bad)
	r := 0
	if out.IDs[1] == bad {
		r = 1
	}
	assert.Equal(t, float32(0), out.Obs[r], "reset")
}

func TestAsyncBadInput(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	t.Run("new", func(t *testing.T) {
		for _, c := range []struct {
			name      string
			env       string
			n, w, b   int
			out       fastlane.AsyncBatch
			err       error
			errSubstr string
		}{
			{"multi", "maze", 2, 1, 2, batch(2, 4, 0), fastlane.ErrArgument, "multi-agent"},
			{"no copies", "cartpole", 0, 1, 0, batch(0, 4, 0), fastlane.ErrArgument, "0 copies"},
			{"batch too big", "cartpole", 2, 1, 3, batch(3, 4, 0), fastlane.ErrArgument, "batch of 3"},
			{"workers", "cartpole", 2, -1, 2, batch(2, 4, 0), fastlane.ErrArgument, "-1 workers"},
			{"buffer", "cartpole", 2, 1, 2, batch(2, 3, 0), fastlane.ErrArgument, "obs has 6 elements, want 8"},
			{"unknown", "nowhere", 2, 1, 2, batch(2, 4, 0), fastlane.ErrConfig, "nowhere"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := fastlane.NewAsync(reg, c.env, nil, c.n, c.w, c.b, c.out)
				require.ErrorIs(t, err, c.err)
				assert.Contains(t, err.Error(), c.errSubstr)
			})
		}
	})
	out := batch(2, 4, 0)
	a, err := fastlane.NewAsync(reg, "cartpole", nil, 3, 2, 2, out)
	require.NoError(t, err)
	defer a.Close()
	err = a.Send([]int64{0}, []int64{0})
	require.ErrorIs(t, err, fastlane.ErrCopyState, "before the reset")
	_, err = a.Recv(bg, 0)
	require.ErrorIs(t, err, fastlane.ErrCopyState, "nothing stepping")
	require.NoError(t, a.Reset(bg, 3))
	recv(t, a)
	held := append([]int64(nil), out.IDs...)
	var busy int64
	for i := range int64(3) {
		if i != held[0] && i != held[1] {
			busy = i
		}
	}
	for _, c := range []struct {
		name         string
		actions, ids []int64
		err          error
		errSubstr    string
	}{
		{"lengths", []int64{0}, held, fastlane.ErrArgument, "actions has 1 elements, want 2"},
		{"out of range", []int64{0}, []int64{3}, fastlane.ErrArgument, "copy 3 of 3"},
		{"negative", []int64{0}, []int64{-1}, fastlane.ErrArgument, "copy -1"},
		{"twice", []int64{0, 1}, []int64{held[0], held[0]}, fastlane.ErrArgument, "given twice"},
		{"stepping", []int64{0}, []int64{busy}, fastlane.ErrCopyState, "still stepping"},
		{"action", []int64{0, 2}, held, fastlane.ErrAction, fmt.Sprintf("copy %d", held[1])},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := a.Send(c.actions, c.ids)
			require.ErrorIs(t, err, c.err)
			assert.Contains(t, err.Error(), c.errSubstr)
		})
	}
	// Nothing was queued: the held copies can still be sent, once.
	require.NoError(t, a.Send([]int64{1, 0}, held))
	require.ErrorIs(t, a.Send([]int64{1}, held[:1]), fastlane.ErrCopyState)
	recv(t, a)
	_, err = a.Recv(bg, 0)
	require.ErrorIs(t, err, fastlane.ErrCopyState, "one stepping, a batch of two")
}

// TestAsyncResetDrops: Reset while copies step waits for them and starts over;
// Close while they step stops the workers.
func TestAsyncResetDrops(t *testing.T) {
	defer goleak.VerifyNone(t)
	out := batch(4, 4, 0)
	a, err := fastlane.NewAsync(testRegistry(t), "cartpole", nil, 8, 3, 4, out)
	require.NoError(t, err)
	require.NoError(t, a.Reset(bg, 1))
	recv(t, a)
	require.NoError(t, a.Send(make([]int64, 4), out.IDs))
	require.NoError(t, a.Reset(bg, 2))
	seen := map[int64]bool{}
	for range 2 {
		recv(t, a)
		for r, id := range out.IDs {
			seen[id] = true
			assert.Zero(t, out.Rewards[r])
		}
	}
	assert.Len(t, seen, 8, "every copy reset once")
	require.NoError(t, a.Send(make([]int64, 4), out.IDs))
	require.NoError(t, a.Close())
}

// gated is a single-agent environment whose Step waits for a value on its gate.
type gated struct {
	gate chan struct{}
	obs  [1]float32
}

func (g *gated) Spec() env.Spec {
	return env.Spec{Name: "gated", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 1e9)), ActionSpace: spaces.Discrete{N: 2}}
}

func (g *gated) Reset(uint64) (env.Step, error) { g.obs[0] = 0; return env.Step{Obs: g.obs[:]}, nil }

func (g *gated) Step(agent.RawAction) (env.Step, error) {
	<-g.gate
	g.obs[0]++
	return env.Step{Obs: g.obs[:], Reward: 1}, nil
}

func (g *gated) Info() any { return nil }

// TestAsyncRecvWaitsInSlices: Recv returns false when its wait runs out with the batch
// incomplete, keeps what it received, and completes it on a later call; Close stops
// the workers once the step in progress ends.
func TestAsyncRecvWaitsInSlices(t *testing.T) {
	defer goleak.VerifyNone(t)
	gate := make(chan struct{})
	reg := testRegistry(t)
	require.NoError(t, reg.Register(registry.Entry{Name: "gated", Open: func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
			return registry.SingleAgent(&gated{gate: gate}), nil
		}), nil
	}}))
	out := batch(2, 1, 0)
	a, err := fastlane.NewAsync(reg, "gated", nil, 2, 2, 2, out)
	require.NoError(t, err)
	require.NoError(t, a.Reset(bg, 1))
	recv(t, a)
	require.NoError(t, a.Send([]int64{0, 0}, []int64{0, 1}))
	ok, err := a.Recv(bg, time.Millisecond)
	require.NoError(t, err)
	assert.False(t, ok, "both copies wait at the gate")
	gate <- struct{}{}
	ok, err = a.Recv(bg, time.Millisecond)
	require.NoError(t, err)
	require.False(t, ok, "one copy still waits")
	gate <- struct{}{}
	recv(t, a)
	assert.ElementsMatch(t, []int64{0, 1}, out.IDs)
	assert.Equal(t, []float32{1, 1}, out.Obs)

	require.NoError(t, a.Send([]int64{0, 0}, []int64{0, 1}))
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = a.Recv(ctx, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	close(gate) // let the steps in progress end, so that Close can wait for them
	require.NoError(t, a.Close())
}
