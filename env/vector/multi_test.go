package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
)

// policySeed is the seed of the random policies of agent j.
func policySeed(j int) uint64 { return 100 + uint64(j) }

// aloneCopy is one maze runtime stepped by itself, with its own per-agent policies.
type aloneCopy struct {
	env      env.MultiAgent
	policies map[string]agent.Policy
	turn     env.Turn
	episode  int
}

// checkGroups checks m's groups against the acting reports of the copies alone.
func checkGroups(t *testing.T, m *vector.Multi, alone []*aloneCopy, where string) {
	t.Helper()
	rows := make([]int, len(m.Agents()))
	groups := m.Groups()
	require.Len(t, groups, len(m.Agents()))
	for i, c := range alone {
		rep := c.turn.Acting()
		require.NotNil(t, rep, where)
		j := slices.IndexFunc(m.Agents(), func(s env.Spec) bool { return s.Name == rep.Agent })
		g := groups[j]
		r := rows[j]
		rows[j]++
		require.Equal(t, rep.Agent, g.Agent, where)
		require.Equal(t, j, g.Index, where)
		require.Equal(t, i, g.Copies[r], "%s: copy %d row %d", where, i, r)
		require.Equal(t, rep.AgentID, g.IDs[r], "%s: copy %d", where, i)
		require.Equal(t, rep.Obs, g.Row(r), "%s: copy %d", where, i)
		require.Equal(t, rep.Mask, g.Mask(r), "%s: copy %d", where, i)
	}
	for j, g := range groups {
		require.Equal(t, rows[j], g.Len(), "%s: group %s", where, g.Agent)
		require.Len(t, g.Obs, rows[j]*g.ObsDim, where)
		require.Len(t, g.Masks, rows[j]*g.MaskLen, where)
		require.Len(t, g.IDs, rows[j], where)
		require.Len(t, g.Actions, rows[j], where)
	}
}

func requireSameTurn(t *testing.T, want, got env.Turn, where string) {
	t.Helper()
	if reflect.DeepEqual(want.Reports, got.Reports) && reflect.DeepEqual(want.Next, got.Next) &&
		want.Over == got.Over && want.Tick == got.Tick {
		return // testify's diff only where they differ: the race detector makes it slow
	}
	require.Equal(t, want.Reports, got.Reports, where)
	require.Equal(t, want.Next, got.Next, where)
	require.Equal(t, want.Over, got.Over, where)
	require.Equal(t, want.Tick, got.Tick, where)
}

// TestMultiMatchesAlone steps maze runtimes through a Multi, one batched call per agent
// name per tick, and each copy alone with the same per-copy policies and episode
// seeds, and compares everything after every tick: the groups, what each copy's step
// reported (rewards, ends, spans, ids, observations), the auto-resets, the seeds, the
// final info.
func TestMultiMatchesAlone(t *testing.T) {
	for _, n := range []int{1, 7, 64, 200} { // 200: ranges of several chunks
		for _, w := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("N=%d/W=%d", n, w), func(t *testing.T) {
				noLeaks(t)
				const seed = 5
				m := newMulti(t, n, mazes(testMaze), vector.WithWorkers(w), vector.WithFinalInfo(true))
				require.Equal(t, min(n, w), m.Workers())
				require.Equal(t, n, m.Len())
				specs := m.Agents()
				require.Equal(t, []string{maze.StrategyName, maze.MotionName}, []string{specs[0].Name, specs[1].Name})

				calls := map[string]int{}
				policies := map[string]vector.BatchPolicy{}
				for j, s := range specs {
					p, err := vector.RandomPerCopy(s.ActionSpace, n, policySeed(j))
					require.NoError(t, err)
					policies[s.Name] = vector.BatchPolicyFunc(func(ctx context.Context, b vector.Batch, actions []agent.RawAction) error {
						calls[s.Name]++
						require.True(t, slices.IsSorted(b.Copies))
						require.NotZero(t, b.Len(), "a policy is not called for an empty group")
						return p.ActBatch(ctx, b, actions)
					})
				}
				alone := make([]*aloneCopy, n)
				for i := range alone {
					e, err := mazes(testMaze)(i)
					require.NoError(t, err)
					c := &aloneCopy{env: e, policies: map[string]agent.Policy{}}
					for j, s := range specs {
						p, err := agent.Random(s.ActionSpace, rand.New(rand.NewPCG(policySeed(j), uint64(i))))
						require.NoError(t, err)
						c.policies[s.Name] = p
					}
					c.turn, err = e.Reset(vector.EpisodeSeed(seed, i, 0))
					require.NoError(t, err)
					alone[i] = c
				}

				require.NoError(t, m.Reset(bg, seed))
				checkGroups(t, m, alone, "reset")
				for i, c := range alone {
					requireSameTurn(t, c.turn, m.Turn(i), "reset")
					assert.Empty(t, m.Stepped(i).Reports)
					assert.False(t, m.Ended(i))
				}
				ended, mixed := 0, 0
				ticks := 300
				if n > 64 {
					ticks = 120 // several episodes still end; the race detector makes 200 copies slow
				}
				for tick := range ticks {
					clear(calls)
					require.NoError(t, m.Act(bg, policies))
					require.NoError(t, m.Step(bg))
					for name, k := range calls {
						require.Equal(t, 1, k, "tick %d: calls of %s", tick, name)
					}
					if len(calls) == 2 {
						mixed++
					}
					for i, c := range alone {
						where := fmt.Sprintf("tick %d copy %d", tick, i)
						rep := c.turn.Acting()
						raw, err := c.policies[rep.Agent].Act(bg, rep.Obs, rep.Mask)
						require.NoError(t, err)
						turn, err := c.env.Step(rep.AgentID, raw)
						require.NoError(t, err, where)
						requireSameTurn(t, turn, m.Stepped(i), where)
						require.Equal(t, turn.Over, m.Ended(i), where)
						if turn.Over {
							ended++
							require.Equal(t, c.env.Info(), m.FinalInfo(i), where)
							c.episode++
							turn, err = c.env.Reset(vector.EpisodeSeed(seed, i, c.episode))
							require.NoError(t, err, where)
						} else {
							require.Nil(t, m.FinalInfo(i), where)
						}
						c.turn = turn
						requireSameTurn(t, turn, m.Turn(i), where)
						require.Equal(t, c.episode, m.Episodes()[i], where)
						require.Equal(t, vector.EpisodeSeed(seed, i, c.episode), m.Seeds()[i], where)
					}
					checkGroups(t, m, alone, fmt.Sprintf("tick %d", tick))
				}
				assert.Positive(t, ended, "episodes ended")
				if n > 1 {
					assert.Positive(t, mixed, "ticks where both agents act")
				}
			})
		}
	}
}

// TestMultiKeepsFinalReports: the final reports of an ended episode survive the reset,
// which reuses the runtime's buffers.
func TestMultiKeepsFinalReports(t *testing.T) {
	m := newMulti(t, 3, mazes(testMaze))
	policies := map[string]vector.BatchPolicy{}
	for j, s := range m.Agents() {
		p, err := vector.RandomPerCopy(s.ActionSpace, 3, policySeed(j))
		require.NoError(t, err)
		policies[s.Name] = p
	}
	require.NoError(t, m.Reset(bg, 1))
	seen := 0
	for range 500 {
		require.NoError(t, m.Act(bg, policies))
		require.NoError(t, m.Step(bg))
		for i := range 3 {
			if !m.Ended(i) {
				continue
			}
			seen++
			st, now := m.Stepped(i), m.Turn(i)
			require.True(t, st.Over)
			require.Equal(t, "", st.Next)
			require.False(t, now.Over)
			require.NotEmpty(t, st.Reports)
			for _, r := range st.Reports {
				require.True(t, r.Done(), "every agent reported at the end is done")
				for _, q := range now.Reports {
					if len(r.Obs) > 0 && len(q.Obs) > 0 {
						require.NotSame(t, &r.Obs[0], &q.Obs[0], "kept observations are the vector's own")
					}
				}
			}
			_, err := hrl.Obs[maze.StrategyObs](st, st.Reports[len(st.Reports)-1].AgentID)
			require.Error(t, err, "kept turns have no typed observations")
		}
	}
	assert.Positive(t, seen)
}

// TestMultiEpisodeEnd: WithEpisodeEnd is called once per ended episode, from the
// workers, with the live final Turn, whose typed observations are valid; it is the
// Turn that Stepped keeps. New rejects it.
func TestMultiEpisodeEnd(t *testing.T) {
	for _, w := range []int{1, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			const n = 6
			type end struct {
				reports int
				typed   bool
			}
			ends := make([][]end, n) // each copy's, written by the goroutine stepping it
			m := newMulti(t, n, mazes(testMaze), vector.WithWorkers(w), vector.WithEpisodeEnd(func(i int, final env.Turn) {
				e := end{reports: len(final.Reports)}
				for _, r := range final.Reports {
					if r.Agent == maze.StrategyName {
						_, err := hrl.Obs[maze.StrategyObs](final, r.AgentID)
						e.typed = err == nil
					}
				}
				ends[i] = append(ends[i], e)
			}))
			policies := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, n, policySeed(j))
				require.NoError(t, err)
				policies[s.Name] = p
			}
			require.NoError(t, m.Reset(bg, 3))
			ended := 0
			for range 300 {
				require.NoError(t, m.Act(bg, policies))
				require.NoError(t, m.Step(bg))
				for i := range n {
					if !m.Ended(i) {
						continue
					}
					ended++
					require.NotEmpty(t, ends[i])
					e := ends[i][len(ends[i])-1]
					assert.Len(t, m.Stepped(i).Reports, e.reports)
				}
			}
			total, typed := 0, 0
			for i := range n {
				total += len(ends[i])
				for _, e := range ends[i] {
					if e.typed {
						typed++
					}
				}
			}
			assert.Positive(t, ended)
			assert.Equal(t, ended, total, "one call per ended episode")
			assert.Equal(t, total, typed, "typed observations of every final turn")
		})
	}
	_, err := vector.New(2, cartpoles(cartpole.Config{}), vector.WithEpisodeEnd(func(int, env.Turn) {}))
	require.ErrorIs(t, err, vector.ErrOption)
}

func TestMultiErrors(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			m := newMulti(t, 5, mazes(testMaze), vector.WithWorkers(w))
			require.ErrorIs(t, m.Step(bg), vector.ErrNotReset)
			require.ErrorIs(t, m.Act(bg, nil), vector.ErrNotReset)
			require.NoError(t, m.Reset(bg, 0))

			// Every copy starts with the strategy acting.
			g := m.Groups()[0]
			require.Equal(t, maze.StrategyName, g.Agent)
			require.Equal(t, []int{0, 1, 2, 3, 4}, g.Copies)
			require.Equal(t, []string{"strategy_0", "strategy_0", "strategy_0", "strategy_0", "strategy_0"}, g.IDs)
			require.Empty(t, m.Groups()[1].Copies)

			err := m.Act(bg, map[string]vector.BatchPolicy{})
			require.ErrorIs(t, err, vector.ErrNoPolicy)
			refuse := errors.New("refused")
			err = m.Act(bg, map[string]vector.BatchPolicy{maze.StrategyName: vector.BatchPolicyFunc(func(context.Context, vector.Batch, []agent.RawAction) error { return refuse })})
			require.ErrorIs(t, err, refuse)
			assert.Contains(t, err.Error(), `policy of "strategy"`)

			// A pre-cancelled context changes nothing.
			ctx, cancel := context.WithCancel(bg)
			cancel()
			require.ErrorIs(t, m.Step(ctx), context.Canceled)
			require.ErrorIs(t, m.Reset(ctx, 0), context.Canceled)

			// Copies 1 and 3 act outside the space; the others walk into a wall or not.
			for r := range g.Actions {
				g.Actions[r] = agent.Discrete(int64(maze.Left))
			}
			g.Actions[1] = agent.Discrete(9)
			g.Actions[3] = agent.Discrete(-1)
			err = m.Step(bg)
			require.ErrorIs(t, err, env.ErrOutsideSpace)
			ces := copyErrors(t, err)
			require.Len(t, ces, 2)
			assert.Equal(t, 1, ces[0].Copy)
			assert.Equal(t, 3, ces[1].Copy)
			assert.Equal(t, vector.OpStep, ces[0].Op)
			var se *env.StepError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "strategy_0", se.AgentID)
			for _, g := range m.Groups() {
				assert.Zero(t, g.Len(), "no groups after a failure")
			}
			require.ErrorIs(t, m.Step(bg), vector.ErrNotReset)
			require.NoError(t, m.Reset(bg, 0))
			assert.Equal(t, 5, m.Groups()[0].Len())
		})
	}
}

func TestNewMultiErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := vector.NewMulti(0, mazes(testMaze))
	require.Error(t, err)
	_, err = vector.NewMulti(2, nil)
	require.Error(t, err)
	_, err = vector.NewMulti(2, mazes(testMaze), vector.WithWorkers(-2))
	require.ErrorIs(t, err, vector.ErrOption)
	_, err = vector.NewMulti(3, func(i int) (env.MultiAgent, error) {
		if i == 1 {
			return nil, boom
		}
		if i == 2 {
			return mazes(maze.Config{Procedure: true})(i) // the strategy agent alone
		}
		return mazes(testMaze)(i)
	})
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, err, vector.ErrMismatch)
	assert.Contains(t, err.Error(), "copy 2 has agents [strategy(obs 106, mask 4)]")
}

// hooked is a multi-agent environment whose Step calls a hook first.
type hooked struct {
	env.MultiAgent
	hook func()
}

func (h hooked) Step(id string, a agent.RawAction) (env.Turn, error) {
	h.hook()
	return h.MultiAgent.Step(id, a)
}

func TestMultiCancelAndPanic(t *testing.T) {
	for _, w := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			const n = 6
			m := newMulti(t, n, func(i int) (env.MultiAgent, error) {
				e, err := mazes(testMaze)(i)
				switch i {
				case 0:
					return hooked{e, cancel}, err
				case 4:
					return hooked{e, func() { panic(fmt.Errorf("copy %d: %w", i, errBoom)) }}, err
				}
				return e, err
			}, vector.WithWorkers(w))
			policies := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, n, policySeed(j))
				require.NoError(t, err)
				policies[s.Name] = p
			}
			require.NoError(t, m.Reset(ctx, 0))
			require.NoError(t, m.Act(ctx, policies))
			err := m.Step(ctx)
			require.ErrorIs(t, err, context.Canceled)
			assert.Contains(t, err.Error(), "vector: step cut short")
			require.ErrorIs(t, m.Step(bg), vector.ErrNotReset)

			// Without the cancellation, copy 4 panics.
			require.NoError(t, m.Reset(bg, 0))
			require.NoError(t, m.Act(bg, policies))
			err = m.Step(bg)
			require.ErrorIs(t, err, vector.ErrPanic)
			require.ErrorIs(t, err, errBoom, "the panic value is an error, and wrapped")
			ces := copyErrors(t, err)
			require.Len(t, ces, 1)
			assert.Equal(t, 4, ces[0].Copy)
		})
	}
}

var errBoom = errors.New("boom")

// multiResetFails is a multi-agent environment whose Reset fails from its (ok+1)-th
// call on.
type multiResetFails struct {
	env.MultiAgent
	ok, calls int
}

func (r *multiResetFails) Reset(seed uint64) (env.Turn, error) {
	r.calls++
	if r.calls > r.ok {
		return env.Turn{}, errReset
	}
	return r.MultiAgent.Reset(seed)
}

// A copy's failed Reset, the vector's or an auto-reset, is a *CopyError naming the copy
// with OpReset, and breaks the vector until the next Reset.
func TestMultiResetErrors(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			// Copy 2 refuses its first reset; copy 1 its second, the first auto-reset.
			m := newMulti(t, 4, func(i int) (env.MultiAgent, error) {
				e, err := mazes(testMaze)(i)
				switch i {
				case 1:
					return &multiResetFails{MultiAgent: e, ok: 1}, err
				case 2:
					return &multiResetFails{MultiAgent: e}, err
				}
				return e, err
			}, vector.WithWorkers(w))
			err := m.Reset(bg, 0)
			require.ErrorIs(t, err, errReset)
			ces := copyErrors(t, err)
			require.Len(t, ces, 1)
			assert.Equal(t, 2, ces[0].Copy)
			assert.Equal(t, vector.OpReset, ces[0].Op)
			assert.Equal(t, "vector: copy 2: reset: reset refused", err.Error())
			require.ErrorIs(t, m.Step(bg), vector.ErrNotReset)

			m = newMulti(t, 4, func(i int) (env.MultiAgent, error) {
				e, err := mazes(testMaze)(i)
				if i == 1 {
					return &multiResetFails{MultiAgent: e, ok: 1}, err
				}
				return e, err
			}, vector.WithWorkers(w))
			policies := map[string]vector.BatchPolicy{}
			for j, s := range m.Agents() {
				p, err := vector.RandomPerCopy(s.ActionSpace, 4, policySeed(j))
				require.NoError(t, err)
				policies[s.Name] = p
			}
			require.NoError(t, m.Reset(bg, 0))
			for tick := 0; ; tick++ {
				require.Less(t, tick, 1000, "copy 1's episode never ended")
				require.NoError(t, m.Act(bg, policies))
				if err = m.Step(bg); err != nil {
					break
				}
			}
			require.ErrorIs(t, err, errReset)
			ces = copyErrors(t, err)
			require.Len(t, ces, 1)
			assert.Equal(t, 1, ces[0].Copy)
			assert.Equal(t, vector.OpReset, ces[0].Op)
			require.ErrorIs(t, m.Step(bg), vector.ErrNotReset)
		})
	}
}
