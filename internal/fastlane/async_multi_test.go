package fastlane_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/internal/fastlane"
)

func multiBatch(b int, l fastlane.Layout) fastlane.AsyncMultiBatch {
	a := len(l.Agents)
	out := fastlane.AsyncMultiBatch{IDs: make([]int64, b), Acting: make([]int64, b), Counts: make([]int64, a),
		Agents: make([]fastlane.AsyncGroup, a), Rewards: make([]float64, b*a), Spans: make([]int64, b*a),
		Terminated: make([]bool, b*a), Truncated: make([]bool, b*a), Ended: make([]bool, b)}
	for j, ag := range l.Agents {
		out.Agents[j] = fastlane.AsyncGroup{Copies: make([]int64, b), Obs: make([]float32, b*ag.ObsDim), Masks: make([]bool, b*ag.MaskLen)}
	}
	return out
}

// allowed is the action of copy i at its step s, among those mask allows, whoever
// steps it when.
func allowed(i, s int, mask []bool) int64 {
	var ok []int64
	for a, m := range mask {
		if m {
			ok = append(ok, int64(a))
		}
	}
	return ok[rand.New(rand.NewPCG(uint64(i), uint64(s))).IntN(len(ok))]
}

// multiStep is what one copy saw after one step (or its reset).
type multiStep struct {
	acting  int64
	obs     []float32
	mask    []bool
	rewards []float64
	spans   []int64
	term    []bool
	trunc   []bool
	ended   bool
}

// TestAsyncMultiMatchesMulti: each copy of an AsyncMulti of the maze follows the
// trajectory of the same copy of a synchronous Multi given the same actions: acting
// agents, observations, masks, rewards, spans, ends.
func TestAsyncMultiMatchesMulti(t *testing.T) {
	for _, c := range []struct{ n, workers, batch int }{{6, 1, 6}, {12, 3, 4}, {9, 2, 1}} {
		t.Run(fmt.Sprintf("N=%d/W=%d/B=%d", c.n, c.workers, c.batch), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const seed = 5
			reg := testRegistry(t)
			l, err := fastlane.Describe(reg, "maze", nil)
			require.NoError(t, err)
			na := len(l.Agents)
			out := multiBatch(c.batch, l)
			x, err := fastlane.NewAsyncMulti(reg, "maze", nil, c.n, c.workers, c.batch, out)
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, x.Reset(bg, seed))
			got := make([][]multiStep, c.n)
			actions, ids := make([]int64, c.batch), make([]int64, c.batch)
			for range 80 * c.n / c.batch {
				recv(t, x)
				rows := make([]int, na)
				for r, id := range out.IDs {
					j := out.Acting[r]
					ag, g, k := l.Agents[j], out.Agents[j], rows[j]
					rows[j]++
					require.Equal(t, id, g.Copies[k])
					s := multiStep{acting: j, obs: slices.Clone(g.Obs[k*ag.ObsDim : (k+1)*ag.ObsDim]),
						mask:    slices.Clone(g.Masks[k*ag.MaskLen : (k+1)*ag.MaskLen]),
						rewards: slices.Clone(out.Rewards[r*na : (r+1)*na]), spans: slices.Clone(out.Spans[r*na : (r+1)*na]),
						term: slices.Clone(out.Terminated[r*na : (r+1)*na]), trunc: slices.Clone(out.Truncated[r*na : (r+1)*na]),
						ended: out.Ended[r]}
					got[id] = append(got[id], s)
					actions[r], ids[r] = allowed(int(id), len(got[id])-1, s.mask), id
				}
				for j := range na {
					require.Equal(t, int64(rows[j]), out.Counts[j])
				}
				require.NoError(t, x.Send(actions, ids))
			}

			b := multiBuffers(c.n, l)
			want, err := fastlane.NewMulti(reg, "maze", nil, c.n, 1, b)
			require.NoError(t, err)
			defer want.Close()
			require.NoError(t, want.Reset(bg, seed))
			longest := 0
			for _, g := range got {
				longest = max(longest, len(g))
			}
			ended, rewarded := 0, 0
			for s := range longest {
				row := make([]int, c.n) // each copy's row in its agent's group
				for j := range na {
					for r := range int(b.Counts[j]) {
						row[b.Agents[j].Copies[r]] = r
					}
				}
				for i := range c.n {
					if s >= len(got[i]) {
						continue
					}
					g, j := got[i][s], b.Acting[i]
					ag, r := l.Agents[j], row[i]
					where := fmt.Sprintf("copy %d step %d", i, s)
					require.Equal(t, j, g.acting, where)
					require.Equal(t, b.Agents[j].Obs[r*ag.ObsDim:(r+1)*ag.ObsDim], g.obs, where)
					require.Equal(t, b.Agents[j].Masks[r*ag.MaskLen:(r+1)*ag.MaskLen], g.mask, where)
					require.Equal(t, b.Rewards[i*na:(i+1)*na], g.rewards, where)
					require.Equal(t, b.Spans[i*na:(i+1)*na], g.spans, where)
					require.Equal(t, b.Terminated[i*na:(i+1)*na], g.term, where)
					require.Equal(t, b.Truncated[i*na:(i+1)*na], g.trunc, where)
					require.Equal(t, b.Ended[i], g.ended, where)
					ended += btoi(g.ended)
					for _, x := range g.rewards {
						rewarded += btoi(x != 0)
					}
				}
				for j := range na {
					ag := l.Agents[j]
					for r := range int(b.Counts[j]) {
						i := int(b.Agents[j].Copies[r])
						b.Agents[j].Actions[r] = allowed(i, s, b.Agents[j].Masks[r*ag.MaskLen:(r+1)*ag.MaskLen])
					}
				}
				require.NoError(t, want.Step(bg))
			}
			assert.Positive(t, ended, "episodes ended")
			assert.Positive(t, rewarded, "rewards reported")
		})
	}
}

// TestAsyncMultiActionError: a masked action names the copy and its acting agent and
// queues nothing.
func TestAsyncMultiActionError(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	l, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	out := multiBatch(2, l)
	x, err := fastlane.NewAsyncMulti(reg, "maze", nil, 2, 1, 2, out)
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, x.Reset(bg, 1))
	recv(t, x)
	j := out.Acting[0]
	ag := l.Agents[j]
	masked := int64(-1)
	for a, m := range out.Agents[j].Masks[:ag.MaskLen] {
		if !m {
			masked = int64(a)
		}
	}
	require.NotEqual(t, int64(-1), masked, "the first observation masks an action")
	good := allowed(0, 0, out.Agents[out.Acting[1]].Masks[:l.Agents[out.Acting[1]].MaskLen])
	err = x.Send([]int64{masked, good}, out.IDs)
	var ae *fastlane.ActionError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, fastlane.ActionError{Copy: int(out.IDs[0]), Agent: ag.Name, Action: masked, Reason: "masked (the action mask forbids it)"}, *ae)
	_, err = x.Recv(bg, 0)
	require.ErrorIs(t, err, fastlane.ErrCopyState, "nothing was queued")

	_, err = fastlane.NewAsyncMulti(reg, "maze", nil, 2, 1, 2, multiBatch(1, l))
	require.ErrorIs(t, err, fastlane.ErrArgument)
}
