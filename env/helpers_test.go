package env_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
)

// counter is a single-agent Env on the integers 0..goal: action k (0, 1, 2) moves by
// k-1 and earns k-1; reaching goal terminates. Its mask forbids moving below 0, and Step
// rejects a masked action. It allocates nothing per step.
type counter struct {
	goal    int
	pos     int
	started bool
	over    bool
	obs     [1]float32
	mask    [3]bool
}

type counterInfo struct{ Pos int }

var errBelowZero = errors.New("counter: below zero")

func newCounter(goal int) *counter { return &counter{goal: goal} }

func (c *counter) Spec() env.Spec {
	return env.Spec{Name: "counter", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -100, 100)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3}
}

func (c *counter) Reset(seed uint64) (env.Step, error) {
	c.pos, c.started, c.over = int(seed%2), true, false // odd seeds start at 1
	return c.step(0, false), nil
}

func (c *counter) Step(a agent.RawAction) (env.Step, error) {
	switch {
	case !c.started:
		return env.Step{}, env.ErrNotReset
	case c.over:
		return env.Step{}, env.ErrEpisodeOver
	}
	if err := a.Check(spaces.Discrete{N: 3}); err != nil {
		return env.Step{}, err
	}
	if !c.mask[a.Int] {
		return env.Step{}, errBelowZero
	}
	c.pos += int(a.Int) - 1
	c.over = c.pos == c.goal
	return c.step(float64(a.Int-1), c.over), nil
}

func (c *counter) step(reward float64, term bool) env.Step {
	c.obs[0] = float32(c.pos)
	c.mask = [3]bool{c.pos > 0, true, true}
	return env.Step{Obs: c.obs[:], Mask: c.mask[:], Reward: reward, Terminated: term}
}

func (c *counter) Info() any { return counterInfo{c.pos} }

// newMaze returns the reference maze's runtime.
func newMaze(t testing.TB, cfg hrl.Config) (*hrl.Runtime[maze.State, maze.Action], *maze.Maze) {
	t.Helper()
	e, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), cfg)
	require.NoError(t, err)
	return rt, e.Maze()
}

// random returns a seeded random policy over a Discrete space of n actions.
func random(t testing.TB, n int64, seed uint64) agent.Policy {
	t.Helper()
	p, err := agent.Random(spaces.Discrete{N: n}, rand.New(rand.NewPCG(seed, 0)))
	require.NoError(t, err)
	return p
}

// report is a copy of an env.Report, out of the environment's buffers.
type report struct {
	ID, Agent   string
	Obs         []float32
	Mask        []bool
	Reward      float64
	Term, Trunc bool
	Start       bool
	Span        int
}

func (r report) String() string {
	return fmt.Sprintf("%s r=%v term=%v trunc=%v start=%v span=%d", r.ID, r.Reward, r.Term, r.Trunc, r.Start, r.Span)
}

func copyReports(reps []env.Report) []report {
	out := make([]report, 0, len(reps))
	for _, r := range reps {
		out = append(out, report{r.AgentID, r.Agent, slices.Clone(r.Obs), slices.Clone(r.Mask), r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks})
	}
	return out
}

// recorder is a MultiAgent that records the seeds of its resets and every report.
type recorder struct {
	env.MultiAgent
	seeds   []uint64
	reports []report
}

func (r *recorder) Unwrap() env.MultiAgent { return r.MultiAgent }

func (r *recorder) Reset(seed uint64) (env.Turn, error) {
	r.seeds = append(r.seeds, seed)
	t, err := r.MultiAgent.Reset(seed)
	if err == nil {
		r.reports = append(r.reports, copyReports(t.Reports)...)
	}
	return t, err
}

func (r *recorder) Step(id string, a agent.RawAction) (env.Turn, error) {
	t, err := r.MultiAgent.Step(id, a)
	if err == nil {
		r.reports = append(r.reports, copyReports(t.Reports)...)
	}
	return t, err
}

// of returns the recorded reports of the agent called name.
func (r *recorder) of(name string) []report {
	var out []report
	for _, rep := range r.reports {
		if rep.Agent == name {
			out = append(out, rep)
		}
	}
	return out
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
