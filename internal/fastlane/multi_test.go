package fastlane_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
)

func multiBuffers(n int, l fastlane.Layout) fastlane.MultiBuffers {
	a := len(l.Agents)
	b := fastlane.MultiBuffers{Agents: make([]fastlane.AgentBuffers, a), Counts: make([]int64, a), Acting: make([]int64, n),
		Rewards: make([]float64, n*a), Spans: make([]int64, n*a), Terminated: make([]bool, n*a), Truncated: make([]bool, n*a), Ended: make([]bool, n)}
	for j, ag := range l.Agents {
		b.Agents[j] = fastlane.AgentBuffers{Copies: make([]int64, n), Obs: make([]float32, n*ag.ObsDim),
			Masks: make([]bool, n*ag.MaskLen), Actions: make([]int64, n)}
	}
	return b
}

// pick chooses a valid action of each row of g, at random among those its mask allows.
func pick(rng *rand.Rand, g vector.Group, dst []int64) {
	for r := range g.Copies {
		m := g.Mask(r)
		for {
			a := rng.Int64N(int64(g.MaskLen))
			if m[a] {
				dst[r] = a
				break
			}
		}
	}
}

// TestMultiMatchesVector: a Multi of the maze fills the caller's buffers with what
// env/vector's Multi gives for the same actions: groups, acting agents, rewards and
// ends per agent, ended episodes.
func TestMultiMatchesVector(t *testing.T) {
	for _, tc := range []struct{ n, w int }{{12, 1}, {12, 2}, {200, 2}, {200, 3}} { // 200: ranges of several chunks
		n, w := tc.n, tc.w
		t.Run(fmt.Sprintf("N=%d/W=%d", n, w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const seed = 9
			reg := testRegistry(t)
			var config []byte // the reference maze
			l, err := fastlane.Describe(reg, "maze", config)
			require.NoError(t, err)
			b := multiBuffers(n, l)
			x, err := fastlane.NewMulti(reg, "maze", config, n, w, b)
			require.NoError(t, err)
			defer x.Close()
			entry, err := reg.Lookup("maze")
			require.NoError(t, err)
			f, err := entry.Open(config)
			require.NoError(t, err)
			want, err := vector.NewMulti(n, func(int) (env.MultiAgent, error) { return f.NewEnv(registry.EnvOptions{}) })
			require.NoError(t, err)
			defer want.Close()

			require.NoError(t, x.Reset(bg, seed))
			require.NoError(t, want.Reset(bg, seed))
			rng := rand.New(rand.NewPCG(3, 4))
			a := len(l.Agents)
			ended, rewarded, long := 0, 0, 0
			for tick := range 300 {
				where := fmt.Sprintf("tick %d", tick)
				for j, g := range want.Groups() {
					k := len(g.Copies)
					require.Equal(t, int64(k), b.Counts[j], where)
					for r, i := range g.Copies {
						require.Equal(t, int64(i), b.Agents[j].Copies[r], where)
						require.Equal(t, int64(j), b.Acting[i], where)
					}
					require.Equal(t, g.Obs, b.Agents[j].Obs[:k*g.ObsDim], where)
					require.Equal(t, g.Masks, b.Agents[j].Masks[:k*g.MaskLen], where)
					pick(rng, g, b.Agents[j].Actions)
					for r := range k {
						g.Actions[r] = agent.Discrete(b.Agents[j].Actions[r])
					}
				}
				require.NoError(t, x.Step(bg), where)
				require.NoError(t, want.Step(bg), where)
				for i := range n {
					require.Equal(t, want.Ended(i), b.Ended[i], where)
					ended += btoi(b.Ended[i])
					sums, spans := make([]float64, a), make([]int64, a)
					for _, r := range want.Stepped(i).Reports {
						for j, ag := range l.Agents {
							if ag.Name == r.Agent {
								sums[j] += r.Reward
								spans[j] += int64(r.SpanTicks)
							}
						}
					}
					require.Equal(t, sums, b.Rewards[i*a:i*a+a], "%s copy %d", where, i)
					require.Equal(t, spans, b.Spans[i*a:i*a+a], "%s copy %d", where, i)
					long += btoi(slices.Max(spans) > 1)
					for _, s := range sums {
						if s != 0 {
							rewarded++
						}
					}
				}
			}
			assert.Positive(t, ended, "episodes ended")
			assert.Positive(t, rewarded, "rewards reported")
			assert.Positive(t, long, "spans of more than a tick")
		})
	}
}

// TestMultiActionError: a masked or outside action names the copy and the agent,
// changes nothing, and the corrected step goes on.
func TestMultiActionError(t *testing.T) {
	const n = 3
	reg := testRegistry(t)
	l, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	b := multiBuffers(n, l)
	x, err := fastlane.NewMulti(reg, "maze", nil, n, 1, b)
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, x.Reset(bg, 1))
	var j int
	for j = range l.Agents {
		if b.Counts[j] > 0 {
			break
		}
	}
	ag, g := l.Agents[j], &b.Agents[j]
	masked := int64(-1)
	for a := range ag.MaskLen {
		if !g.Masks[a] {
			masked = int64(a)
			break
		}
	}
	require.GreaterOrEqual(t, masked, int64(0), "the first row masks an action")
	cases := []struct {
		name   string
		action int64
		reason string
	}{
		{"masked", masked, "masked (the action mask forbids it)"},
		{"outside", ag.Actions, fmt.Sprintf("outside Discrete(%d, start=0)", ag.Actions)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := append([]float32(nil), g.Obs...)
			g.Actions[0] = c.action
			err := x.Step(bg)
			ae, ok := errors.AsType[*fastlane.ActionError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, fastlane.ActionError{Copy: int(g.Copies[0]), Agent: ag.Name, Action: c.action, Reason: c.reason}, *ae)
			assert.Equal(t, before, g.Obs)
		})
	}
	for r := range b.Counts[j] {
		for a := range ag.MaskLen {
			if g.Masks[int(r)*ag.MaskLen+a] {
				g.Actions[r] = int64(a)
				break
			}
		}
	}
	require.NoError(t, x.Step(bg))
}

func TestHandles(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h fastlane.Handles
	reg := testRegistry(t)
	s1, err := fastlane.NewSingle(reg, "cartpole", nil, 4, 2, buffers(4, 4, 0))
	require.NoError(t, err)
	s2, err := fastlane.NewSingle(reg, "cartpole", nil, 4, 1, buffers(4, 4, 0))
	require.NoError(t, err)
	id1, id2 := h.Add(s1), h.Add(s2)
	assert.Equal(t, int64(1), id1)
	assert.Equal(t, int64(2), id2)
	assert.Equal(t, 2, h.Len())
	require.NoError(t, h.Do(id1, func(v fastlane.Vector) error {
		assert.Same(t, s1, v)
		return nil
	}))
	boom := errors.New("boom")
	require.ErrorIs(t, h.Do(id1, func(fastlane.Vector) error { return boom }), boom)
	assert.True(t, h.Close(id1))
	assert.False(t, h.Close(id1), "closing twice")
	require.ErrorIs(t, h.Do(id1, func(fastlane.Vector) error { return nil }), fastlane.ErrHandle)
	assert.True(t, h.Close(id2))
	assert.Equal(t, 0, h.Len())
	assert.Equal(t, int64(3), h.Add(s2), "handles are not reused")
	assert.Equal(t, fastlane.CodeState, fastlane.CodeOf(fmt.Errorf("%w: handle 1", fastlane.ErrHandle)))
	assert.Equal(t, fastlane.CodeInternal, fastlane.CodeOf(errors.New("other")))
	assert.Equal(t, fastlane.OK, fastlane.CodeOf(nil))
}

// TestHandlesCloseWhileStepping: a Close from another goroutine waits for the step in
// progress; later steps find no vector. Run with -race.
func TestHandlesCloseWhileStepping(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h fastlane.Handles
	const n = 64
	s, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, n, 2, buffers(n, 4, 0))
	require.NoError(t, err)
	id := h.Add(s)
	require.NoError(t, h.Do(id, func(v fastlane.Vector) error { return v.Reset(bg, 1) }))
	actions := make([]int64, n)
	stepped := make(chan struct{})
	done := make(chan error)
	go func() {
		first := true
		for {
			err := h.Do(id, func(fastlane.Vector) error { return s.Step(bg, actions) })
			if first {
				close(stepped)
				first = false
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	<-stepped
	assert.True(t, h.Close(id))
	require.ErrorIs(t, <-done, fastlane.ErrHandle)
}
