package vector_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/spaces"
)

func TestEpisodeSeed(t *testing.T) {
	// The formula, written out again.
	mix := func(z uint64) uint64 {
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	const g = 0x9e3779b97f4a7c15
	seen := map[uint64]string{}
	for _, seed := range []uint64{0, 1, 2, 1 << 63, ^uint64(0)} {
		for i := range 50 {
			for k := range 50 {
				want := mix(mix(seed+uint64(i+1)*g) + uint64(k+1)*g)
				got := vector.EpisodeSeed(seed, i, k)
				require.Equal(t, want, got, "seed %d copy %d episode %d", seed, i, k)
				where := fmt.Sprintf("seed %d copy %d episode %d", seed, i, k)
				if prev, ok := seen[got]; ok {
					t.Fatalf("%s repeats the seed of %s", where, prev)
				}
				seen[got] = where
			}
		}
	}
	// Pinned, so that a change of the formula shows: it changes every recorded run.
	for _, p := range []struct {
		seed uint64
		i, k int
		want uint64
	}{
		{0, 0, 0, 0xa706dd2f4d197e6f},
		{1, 0, 0, 0x5e41ab087439611e},
		{1, 0, 1, 0xf18d6ce93d6cf1ee},
		{1, 3, 2, 0x3472f3c073f95f11},
	} {
		assert.Equal(t, p.want, vector.EpisodeSeed(p.seed, p.i, p.k), "seed %d copy %d episode %d", p.seed, p.i, p.k)
	}
}

// TestWorkersMatchSync steps a synchronous vector and vectors with 1, 2 and 3 workers
// with the same seed and actions (every other tick as integers, through StepDiscrete),
// and compares every buffer after every call.
func TestWorkersMatchSync(t *testing.T) {
	envs := []struct {
		name    string
		factory func(int) (env.Env, error)
		n       int64 // actions
	}{
		{"cartpole", cartpoles(cartpole.Config{MaxSteps: 40}), 2},
		{"line", lines(6, 9), 3},
	}
	for _, e := range envs {
		for _, n := range []int{1, 7, 64, 300} { // 300: ranges of several chunks
			for _, w := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/N=%d/W=%d", e.name, n, w), func(t *testing.T) {
					noLeaks(t)
					sync := newVector(t, n, e.factory, vector.WithFinalInfo(true))
					par := newVector(t, n, e.factory, vector.WithWorkers(w), vector.WithFinalInfo(true))
					require.Equal(t, 1, sync.Workers())
					require.Equal(t, min(w, n), par.Workers())
					require.NoError(t, sync.Reset(bg, 42))
					require.NoError(t, par.Reset(bg, 42))
					require.Equal(t, snap(sync), snap(par), "after Reset")
					src := newActions(1)
					actions := make([]agent.RawAction, n)
					ended := 0
					ints := make([]int64, n)
					for tick := range 300 {
						src.fill(actions, e.n, sync.Masks())
						require.NoError(t, sync.Step(bg, actions))
						if tick%2 == 0 {
							require.NoError(t, par.Step(bg, actions))
						} else { // the same actions as integers
							for i, a := range actions {
								ints[i] = a.Int
							}
							require.NoError(t, par.StepDiscrete(bg, ints))
						}
						s := snap(sync)
						require.Equal(t, s, snap(par), "tick %d", tick)
						ended += len(s.FinalObs)
					}
					assert.Positive(t, ended, "episodes ended")
				})
			}
		}
	}
}

// TestAutoResetCartPole checks same-step auto-reset against cart-poles stepped alone:
// the final observation, the reset observation with the next episode seed, the flags,
// the rewards, the seeds and the final info, at every tick.
func TestAutoResetCartPole(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			const n, seed = 5, 7
			cfg := cartpole.Config{MaxSteps: 25} // short enough to truncate, long enough to terminate
			v := newVector(t, n, cartpoles(cfg), vector.WithWorkers(w), vector.WithFinalInfo(true))
			require.NoError(t, v.Reset(bg, seed))
			alone := make([]*cartpole.Env, n)
			episode := make([]int, n)
			for i := range alone {
				e, err := cartpole.NewEnv(cfg)
				require.NoError(t, err)
				alone[i] = e
				st, err := e.Reset(vector.EpisodeSeed(seed, i, 0))
				require.NoError(t, err)
				require.Equal(t, st.Obs, v.Obs()[i*4:(i+1)*4], "copy %d reset", i)
				assert.Equal(t, vector.EpisodeSeed(seed, i, 0), v.Seeds()[i])
			}
			assert.Equal(t, make([]int, n), v.Episodes())
			assert.Nil(t, v.Masks())
			src := newActions(3)
			actions := make([]agent.RawAction, n)
			var terminated, truncated int
			for tick := range 400 {
				src.fill(actions, 2, nil)
				require.NoError(t, v.Step(bg, actions))
				for i, e := range alone {
					st, err := e.Step(actions[i])
					require.NoError(t, err)
					row := func(b []float32) []float32 { return b[i*4 : (i+1)*4] }
					where := fmt.Sprintf("tick %d copy %d", tick, i)
					require.Equal(t, st.Reward, v.Rewards()[i], where)
					require.Equal(t, st.Terminated, v.Terminated()[i], where)
					require.Equal(t, st.Truncated, v.Truncated()[i], where)
					require.Equal(t, st.Done(), v.Done(i), where)
					if !st.Done() {
						require.Equal(t, st.Obs, row(v.Obs()), where)
						require.Nil(t, v.FinalInfo()[i], where)
						continue
					}
					if st.Terminated {
						terminated++
					} else {
						truncated++
						require.Equal(t, 25, e.Steps(), where)
					}
					require.Equal(t, st.Obs, row(v.FinalObs()), "%s: final observation", where)
					require.Equal(t, e.State(), v.FinalInfo()[i], "%s: final info", where)
					episode[i]++
					s := vector.EpisodeSeed(seed, i, episode[i])
					require.Equal(t, s, v.Seeds()[i], where)
					require.Equal(t, episode[i], v.Episodes()[i], where)
					st, err = e.Reset(s)
					require.NoError(t, err)
					require.Equal(t, st.Obs, row(v.Obs()), "%s: reset observation", where)
					require.NotEqual(t, row(v.FinalObs()), row(v.Obs()), where)
				}
			}
			t.Logf("%d terminated, %d truncated", terminated, truncated)
			assert.Positive(t, terminated)
			assert.Positive(t, truncated)
		})
	}
}

// TestCopyIndependentOfSize: copy i replays the same episodes in vectors of any size.
func TestCopyIndependentOfSize(t *testing.T) {
	noLeaks(t)
	small := newVector(t, 3, cartpoles(cartpole.Config{}))
	large := newVector(t, 11, cartpoles(cartpole.Config{}), vector.WithWorkers(3))
	require.NoError(t, small.Reset(bg, 9))
	require.NoError(t, large.Reset(bg, 9))
	as, al := make([]agent.RawAction, 3), make([]agent.RawAction, 11)
	for tick := range 200 {
		for i := range al {
			al[i] = agent.Discrete(int64(tick+i) % 2)
		}
		copy(as, al)
		require.NoError(t, small.Step(bg, as))
		require.NoError(t, large.Step(bg, al))
		require.Equal(t, small.Obs(), large.Obs()[:12], "tick %d", tick)
		require.Equal(t, small.Seeds(), large.Seeds()[:3], "tick %d", tick)
	}
}

func TestMasksAndBatch(t *testing.T) {
	v := newVector(t, 4, lines(100, 100))
	require.Equal(t, 3, v.MaskLen())
	require.Equal(t, 2, v.ObsDim())
	require.Equal(t, "line", v.Spec().Name)
	require.NoError(t, v.Reset(bg, 0))
	// EpisodeSeed % 3 is each copy's start; position 0 masks action 0.
	for i := range 4 {
		pos := int(vector.EpisodeSeed(0, i, 0) % 3)
		assert.Equal(t, []float32{float32(pos), 0}, v.Obs()[2*i:2*i+2])
		assert.Equal(t, []bool{pos > 0, true, true}, v.Masks()[3*i:3*i+3])
	}
	b := v.Batch()
	assert.Equal(t, []int{0, 1, 2, 3}, b.Copies)
	assert.Equal(t, 4, b.Len())
	assert.Equal(t, v.Obs()[4:6], b.Row(2))
	assert.Equal(t, v.Masks()[6:9], b.Mask(2))
	assert.Equal(t, 2, cap(b.Row(0)), "rows are capped")

	// A random policy honours the masks.
	p, err := vector.RandomPerCopy(spaces.Discrete{N: 3}, 4, 1)
	require.NoError(t, err)
	actions := make([]agent.RawAction, 4)
	for range 500 {
		require.NoError(t, p.ActBatch(bg, v.Batch(), actions))
		require.NoError(t, v.Step(bg, actions))
	}
}

// resetFails is a line whose Reset fails from its (ok+1)-th call on.
type resetFails struct {
	*line
	ok, calls int
}

var errReset = errors.New("reset refused")

func (r *resetFails) Reset(seed uint64) (env.Step, error) {
	r.calls++
	if r.calls > r.ok {
		return env.Step{}, errReset
	}
	return r.line.Reset(seed)
}

// shortObs is a line whose steps return one float too few.
type shortObs struct{ *line }

func (s shortObs) Step(a agent.RawAction) (env.Step, error) {
	st, err := s.line.Step(a)
	st.Obs = st.Obs[:1]
	return st, err
}

// copyErrors returns the *CopyErrors in err, in order.
func copyErrors(t *testing.T, err error) []*vector.CopyError {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []*vector.CopyError
	for _, e := range errs {
		var ce *vector.CopyError
		require.ErrorAs(t, e, &ce)
		out = append(out, ce)
	}
	return out
}

func TestCopyErrors(t *testing.T) {
	messages := map[string]string{}
	for _, w := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			const n = 7
			v := newVector(t, n, func(i int) (env.Env, error) {
				return &line{goal: 100, maxSteps: 100, panicky: i == 4}, nil
			}, vector.WithWorkers(w))
			require.NoError(t, v.Reset(bg, 1))
			stay := slices.Repeat([]agent.RawAction{agent.Discrete(1)}, n)
			require.NoError(t, v.Step(bg, stay))
			before := snap(v)

			// Bad arguments and a context already done change nothing.
			require.ErrorIs(t, v.Step(bg, stay[:3]), vector.ErrActions)
			require.ErrorIs(t, v.StepDiscrete(bg, make([]int64, n+1)), vector.ErrActions)
			require.Equal(t, before, snap(v))
			done, cancel := context.WithCancel(bg)
			cancel()
			require.ErrorIs(t, v.Step(done, stay), context.Canceled)
			require.Equal(t, before, snap(v))

			// Copy 2 acts outside the space, copy 4 panics, copy 6 sets a stray field.
			actions := slices.Clone(stay)
			actions[2] = agent.Discrete(7)
			actions[4] = agent.Discrete(2)
			actions[6] = agent.RawAction{Int: 1, Floats: []float32{1}}
			err := v.Step(bg, actions)
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			assert.ErrorIs(t, err, vector.ErrPanic)
			var first *vector.CopyError
			require.ErrorAs(t, err, &first)
			assert.Equal(t, 2, first.Copy)
			assert.Equal(t, vector.OpStep, first.Op)
			ces := copyErrors(t, err)
			require.Len(t, ces, 3)
			assert.Equal(t, []int{2, 4, 6}, []int{ces[0].Copy, ces[1].Copy, ces[2].Copy})
			var pe *vector.PanicError
			require.ErrorAs(t, ces[1], &pe)
			assert.Equal(t, "line: panicky", pe.Value)
			assert.Contains(t, string(pe.Stack), "(*line).Step")
			assert.Contains(t, err.Error(), "vector: copy 4: step: vector: panic in a copy: line: panicky")
			messages[fmt.Sprint(w)] = err.Error()
			assert.Equal(t, messages["1"], err.Error(), "the same error whatever the workers")

			// The other copies stepped; the vector must be reset.
			for _, i := range []int{0, 1, 3, 5} {
				assert.Equal(t, float32(2), v.Obs()[2*i+1], "copy %d stepped twice", i)
			}
			assert.Equal(t, float32(1), v.Obs()[2*2+1], "copy 2 left as it was")
			require.ErrorIs(t, v.Step(bg, stay), vector.ErrNotReset)
			require.NoError(t, v.Reset(bg, 1))
			require.NoError(t, v.Step(bg, stay))
			assert.Equal(t, before, snap(v), "Reset starts over")
		})
	}
}

func TestResetErrors(t *testing.T) {
	noLeaks(t)
	// Copy 3 refuses its second reset (the first auto-reset); copy 5 its first.
	v := newVector(t, 6, func(i int) (env.Env, error) {
		l := &line{goal: 1, maxSteps: 1}
		switch i {
		case 3:
			return &resetFails{line: l, ok: 1}, nil
		case 5:
			return &resetFails{line: l}, nil
		}
		return l, nil
	}, vector.WithWorkers(2))
	err := v.Reset(bg, 0)
	ces := copyErrors(t, err)
	require.Len(t, ces, 1)
	assert.Equal(t, 5, ces[0].Copy)
	assert.Equal(t, vector.OpReset, ces[0].Op)
	assert.ErrorIs(t, err, errReset)
	require.ErrorIs(t, v.Step(bg, make([]agent.RawAction, 6)), vector.ErrNotReset)

	v = newVector(t, 4, func(i int) (env.Env, error) {
		l := &line{goal: 1, maxSteps: 1}
		if i == 3 {
			return &resetFails{line: l, ok: 1}, nil
		}
		return l, nil
	}, vector.WithWorkers(2))
	require.NoError(t, v.Reset(bg, 0))
	err = v.Step(bg, slices.Repeat([]agent.RawAction{agent.Discrete(1)}, 4)) // every episode is truncated
	ces = copyErrors(t, err)
	require.Len(t, ces, 1)
	assert.Equal(t, 3, ces[0].Copy)
	assert.Equal(t, vector.OpReset, ces[0].Op)
	assert.ErrorIs(t, err, errReset)
}

func TestShapeError(t *testing.T) {
	v := newVector(t, 3, func(i int) (env.Env, error) {
		if i == 1 {
			return shortObs{&line{goal: 9, maxSteps: 9}}, nil
		}
		return &line{goal: 9, maxSteps: 9}, nil
	})
	require.NoError(t, v.Reset(bg, 0))
	err := v.Step(bg, slices.Repeat([]agent.RawAction{agent.Discrete(1)}, 3))
	require.ErrorIs(t, err, vector.ErrShape)
	assert.Equal(t, 1, copyErrors(t, err)[0].Copy)
}

func TestNewErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		n       int
		factory func(int) (env.Env, error)
		opts    []vector.Option
		is      []error
		copies  []int
	}{
		{"no copies", 0, lines(1, 1), nil, nil, nil},
		{"nil factory", 2, nil, nil, nil, nil},
		{"negative workers", 2, lines(1, 1), []vector.Option{vector.WithWorkers(-1)}, []error{vector.ErrOption}, nil},
		{"negative workers after nil", 2, lines(1, 1), []vector.Option{nil, vector.WithWorkers(-1)}, []error{vector.ErrOption}, nil},
		{"factory errors", 5, func(i int) (env.Env, error) {
			if i%2 == 1 {
				return nil, boom
			}
			return &line{}, nil
		}, nil, []error{boom}, []int{1, 3}},
		{"nil env", 2, func(int) (env.Env, error) { return nil, nil }, nil, nil, []int{0, 1}},
		{"different agents", 3, func(i int) (env.Env, error) {
			if i == 2 {
				return cartpole.NewEnv(cartpole.Config{})
			}
			return &line{}, nil
		}, nil, []error{vector.ErrMismatch}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			v, err := vector.New(tt.n, tt.factory, tt.opts...)
			require.Error(t, err)
			require.Nil(t, v)
			for _, is := range tt.is {
				assert.ErrorIs(t, err, is)
			}
			if tt.copies != nil {
				var got []int
				for _, ce := range copyErrors(t, err) {
					got = append(got, ce.Copy)
				}
				assert.Equal(t, tt.copies, got)
			}
		})
	}
}

// TestCancelDuringStep cancels the context from inside copy 0's step: the copies after
// it in worker 0's range are not stepped, and the vector must be reset.
func TestCancelDuringStep(t *testing.T) {
	for _, w := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			const n = 9
			v := newVector(t, n, func(i int) (env.Env, error) {
				l := &line{goal: 100, maxSteps: 100}
				if i == 0 {
					l.hook = cancel
				}
				return l, nil
			}, vector.WithWorkers(w))
			require.NoError(t, v.Reset(ctx, 3))
			stay := slices.Repeat([]agent.RawAction{agent.Discrete(1)}, n)
			err := v.Step(ctx, stay)
			require.ErrorIs(t, err, context.Canceled)
			assert.Contains(t, err.Error(), "vector: step cut short")
			assert.Equal(t, float32(1), v.Obs()[1], "copy 0 stepped")
			assert.Equal(t, float32(0), v.Obs()[3], "copy 1 did not")
			require.ErrorIs(t, v.Step(bg, stay), vector.ErrNotReset)
			require.NoError(t, v.Reset(bg, 3))
			require.NoError(t, v.Step(bg, slices.Repeat([]agent.RawAction{agent.Discrete(1)}, n)))
		})
	}
}

func TestClose(t *testing.T) {
	for _, w := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			noLeaks(t)
			v, err := vector.New(8, lines(3, 5), vector.WithWorkers(w))
			require.NoError(t, err)
			require.NoError(t, v.Reset(bg, 0))
			require.NoError(t, v.Close())
			require.NoError(t, v.Close(), "idempotent")
			require.ErrorIs(t, v.Reset(bg, 0), vector.ErrClosed)
			require.ErrorIs(t, v.Step(bg, make([]agent.RawAction, 8)), vector.ErrClosed)

			m, err := vector.NewMulti(8, mazes(testMaze), vector.WithWorkers(w))
			require.NoError(t, err)
			require.NoError(t, m.Reset(bg, 0))
			require.NoError(t, m.Close())
			require.NoError(t, m.Close())
			require.ErrorIs(t, m.Step(bg), vector.ErrClosed)
			require.ErrorIs(t, m.Reset(bg, 0), vector.ErrClosed)
		})
	}
}

func TestPerCopyErrors(t *testing.T) {
	fail := errors.New("no idea")
	ps := []agent.Policy{
		agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(1), nil }),
		agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.RawAction{}, fail }),
	}
	p := vector.PerCopy(ps)
	b := vector.Batch{Copies: []int{0, 1}, Obs: make([]float32, 4), ObsDim: 2}
	actions := make([]agent.RawAction, 2)
	err := p.ActBatch(bg, b, actions)
	require.ErrorIs(t, err, fail)
	var ce *vector.CopyError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, vector.CopyError{Copy: 1, Op: vector.OpAct, Err: fail}, *ce)
	assert.Equal(t, agent.Discrete(1), actions[0])
	require.ErrorIs(t, p.ActBatch(bg, b, actions[:1]), vector.ErrActions)
	b.Copies = []int{0, 2}
	require.ErrorAs(t, p.ActBatch(bg, b, actions), &ce)
	assert.Equal(t, 2, ce.Copy)

	_, err = vector.RandomPerCopy(spaces.Discrete{N: 0}, 2, 0)
	require.Error(t, err)
	assert.Equal(t, "act", vector.OpAct.String())
	assert.Equal(t, "Op(0)", vector.Op(0).String())
}

// TestNilOption checks that the constructors ignore a nil Option.
func TestNilOption(t *testing.T) {
	noLeaks(t)
	v, err := vector.New(2, lines(1, 1), nil, vector.WithWorkers(2), nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	m, err := vector.NewMulti(2, mazes(testMaze), nil)
	require.NoError(t, err)
	require.NoError(t, m.Close())
}
