package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// line is a small single-agent Env with an action mask: a position on 0, 1, 2, ...;
// action k (0, 1, 2) moves by k-1 and earns k-1; reaching goal terminates and maxSteps
// steps truncate. The mask forbids moving below 0, and Step rejects a masked action
// with errMasked. Action 2 panics when panicky is set, and hook, when set, is called at
// the start of every Step. It allocates nothing per step.
type line struct {
	goal, maxSteps int
	panicky        bool
	hook           func()

	pos, steps int
	live       bool
	obs        [2]float32
	mask       [3]bool
}

type lineInfo struct{ Pos, Steps int }

var errMasked = errors.New("line: masked action")

func (l *line) Spec() env.Spec {
	return env.Spec{Name: "line", ObservationSpace: spaces.Must(spaces.NewBox([]int{2}, -1000, 1000)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3}
}

func (l *line) Reset(seed uint64) (env.Step, error) {
	l.pos, l.steps, l.live = int(seed%3), 0, true
	return l.out(0, false, false), nil
}

func (l *line) Step(a agent.RawAction) (env.Step, error) {
	if l.hook != nil {
		l.hook()
	}
	switch {
	case !l.live:
		return env.Step{}, env.ErrEpisodeOver
	case a.Int < 0 || a.Int > 2 || a.Ints != nil || a.Floats != nil:
		return env.Step{}, fmt.Errorf("line: action %v: %w", a, spaces.ErrOutside)
	case !l.mask[a.Int]:
		return env.Step{}, fmt.Errorf("%w %d at %d", errMasked, a.Int, l.pos)
	case a.Int == 2 && l.panicky:
		panic("line: panicky")
	}
	l.pos += int(a.Int) - 1
	l.steps++
	term := l.pos >= l.goal
	trunc := !term && l.steps >= l.maxSteps
	l.live = !term && !trunc
	return l.out(float64(a.Int-1), term, trunc), nil
}

func (l *line) out(r float64, term, trunc bool) env.Step {
	l.obs = [2]float32{float32(l.pos), float32(l.steps)}
	l.mask = [3]bool{l.pos > 0, true, true}
	return env.Step{Obs: l.obs[:], Mask: l.mask[:], Reward: r, Terminated: term, Truncated: trunc}
}

func (l *line) Info() any { return lineInfo{l.pos, l.steps} }

func lines(goal, maxSteps int) func(int) (env.Env, error) {
	return func(int) (env.Env, error) { return &line{goal: goal, maxSteps: maxSteps}, nil }
}

func cartpoles(cfg cartpole.Config) func(int) (env.Env, error) {
	return func(int) (env.Env, error) { return cartpole.NewEnv(cfg) }
}

// mazes makes hrl runtimes over the maze with cfg.
func mazes(cfg maze.Config) func(int) (env.MultiAgent, error) {
	return func(int) (env.MultiAgent, error) {
		e, err := maze.NewEnv(cfg)
		if err != nil {
			return nil, err
		}
		return hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	}
}

// The maze configuration of the tests: limits short enough that every way a
// sub-episode ends happens often.
var testMaze = maze.Config{
	Strategy: maze.StrategyConfig{MaxSteps: 6},
	Motion:   maze.MotionConfig{MaxSteps: 4},
}

// actionSource draws the actions of a test: the same seed gives the same actions.
type actionSource struct{ rng *rand.Rand }

func newActions(seed uint64) *actionSource { return &actionSource{rand.New(rand.NewPCG(seed, 7))} }

// fill draws a valid action for each row: uniformly among 0..n-1 where masks allows.
func (s *actionSource) fill(actions []agent.RawAction, n int64, masks []bool) {
	for r := range actions {
		for {
			a := s.rng.Int64N(n)
			if masks == nil || masks[r*int(n)+int(a)] {
				actions[r] = agent.Discrete(a)
				break
			}
		}
	}
}

// snapshot is a copy of an Env's buffers after one call; FinalObs keeps the rows of the
// copies that are done only.
type snapshot struct {
	Obs        []float32
	Masks      []bool
	Rewards    []float64
	Terminated []bool
	Truncated  []bool
	FinalObs   map[int][]float32
	FinalInfo  map[int]any
	Seeds      []uint64
	Episodes   []int
}

func snap(v *vector.Env) snapshot {
	s := snapshot{
		Obs: slices.Clone(v.Obs()), Masks: slices.Clone(v.Masks()), Rewards: slices.Clone(v.Rewards()),
		Terminated: slices.Clone(v.Terminated()), Truncated: slices.Clone(v.Truncated()),
		FinalObs: map[int][]float32{}, FinalInfo: map[int]any{},
		Seeds: slices.Clone(v.Seeds()), Episodes: slices.Clone(v.Episodes()),
	}
	for i := range v.Len() {
		if v.Done(i) {
			s.FinalObs[i] = slices.Clone(v.FinalObs()[i*v.ObsDim() : (i+1)*v.ObsDim()])
			if fi := v.FinalInfo(); fi != nil {
				s.FinalInfo[i] = fi[i]
			}
		}
	}
	return s
}

func newVector(t testing.TB, n int, factory func(int) (env.Env, error), opts ...vector.Option) *vector.Env {
	t.Helper()
	v, err := vector.New(n, factory, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, v.Close()) })
	return v
}

func newMulti(t testing.TB, n int, factory func(int) (env.MultiAgent, error), opts ...vector.Option) *vector.Multi {
	t.Helper()
	m, err := vector.NewMulti(n, factory, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

var bg = context.Background()

// noLeaks checks, after the test and its cleanups (registered later, so run earlier:
// the vectors' Close), that no goroutine is left.
func noLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// directLine is a line that is an env.DiscreteStepper, so that vectors step it on
// their direct path; its results are the line's.
type directLine struct{ *line }

func (d directLine) StepDiscrete(a int64, obs []float32, mask []bool) (float64, bool, bool, error) {
	st, err := d.Step(agent.Discrete(a))
	if err != nil {
		return 0, false, false, err
	}
	copy(obs, st.Obs)
	copy(mask, st.Mask)
	return st.Reward, st.Terminated, st.Truncated, nil
}

// plain hides every method of an env.Env but the interface's, so that vectors step
// it with Step.
type plain struct{ env.Env }

func directLines(goal, maxSteps int) func(int) (env.Env, error) {
	return func(int) (env.Env, error) { return directLine{&line{goal: goal, maxSteps: maxSteps}}, nil }
}

func plainCartpoles(cfg cartpole.Config) func(int) (env.Env, error) {
	return func(int) (env.Env, error) {
		e, err := cartpole.NewEnv(cfg)
		return plain{e}, err
	}
}
