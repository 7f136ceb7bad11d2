package bench_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/internal/bench"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The maps the benchmarks run on: the reference map, and a generated 101 x 101 map
// (the largest maze.Generate draws).
var benchMazes = []struct {
	name string
	cfg  maze.Config
}{
	{"ref", maze.Config{}},
	{"gen101", maze.Config{Generate: &maze.GenerateConfig{Rows: 101, Cols: 101, Seed: 1}}},
}

// policyRNG returns the generator the random policies of one side share; both sides
// get one seeded alike.
func policyRNG() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// runtimeDriver plays the hrl runtime over maze.Env with one agent.Random policy per
// agent, both drawing from one generator.
type runtimeDriver struct {
	rt               *hrl.Runtime[maze.State, maze.Action]
	strategy, motion agent.Policy
	res              env.Turn
	seed             uint64 // of the current episode
	episodes         int    // ended
}

func newRuntimeDriver(tb testing.TB, cfg maze.Config, rng *rand.Rand) *runtimeDriver {
	tb.Helper()
	env, err := maze.NewEnv(cfg)
	require.NoError(tb, err)
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](env), hrl.Config{})
	require.NoError(tb, err)
	d := &runtimeDriver{rt: rt}
	for _, spec := range rt.Agents() {
		p, err := agent.Random(spec.ActionSpace, rng)
		require.NoError(tb, err)
		switch spec.Name {
		case maze.StrategyName:
			d.strategy = p
		case maze.MotionName:
			d.motion = p
		}
	}
	require.NotNil(tb, d.strategy)
	require.NotNil(tb, d.motion)
	d.res = mustReset(tb, rt, d.seed)
	return d
}

// act plays one action of the acting agent and returns the step's result.
func (d *runtimeDriver) act(ctx context.Context) (env.Turn, error) {
	rep := d.res.Acting()
	p := d.strategy
	if rep.Agent != maze.StrategyName {
		p = d.motion
	}
	raw, err := p.Act(ctx, rep.Obs, rep.Mask)
	if err != nil {
		return env.Turn{}, err
	}
	d.res, err = d.rt.Step(rep.AgentID, raw)
	return d.res, err
}

// reset starts the next episode with the next seed.
func (d *runtimeDriver) reset() (env.Turn, error) {
	d.episodes++
	d.seed++
	var err error
	d.res, err = d.rt.Reset(d.seed)
	return d.res, err
}

// step is one benchmark iteration: an action, and a reset when the episode ends.
func (d *runtimeDriver) step(ctx context.Context) error {
	res, err := d.act(ctx)
	if err != nil {
		return err
	}
	if res.Over {
		_, err = d.reset()
	}
	return err
}

// loopDriver plays a MazeLoop with uniform random valid actions drawn by
// spaces.Discrete.SampleMasked: the same draws agent.Random makes.
type loopDriver struct {
	loop     *bench.MazeLoop
	rng      *rand.Rand
	res      bench.MazeResult
	episodes int
}

func newLoopDriver(tb testing.TB, cfg maze.Config, rng *rand.Rand) *loopDriver {
	tb.Helper()
	env, err := maze.NewEnv(cfg) // only for the map, built as the runtime's is
	require.NoError(tb, err)
	loop, err := bench.NewMazeLoop(env.Maze(), cfg.Strategy, cfg.Motion)
	require.NoError(tb, err)
	return &loopDriver{loop: loop, rng: rng, res: loop.Reset()}
}

func (d *loopDriver) act() (bench.MazeResult, error) {
	rep := d.res.Acting()
	a, err := spaces.Discrete{N: int64(len(rep.Mask))}.SampleMasked(d.rng, rep.Mask)
	if err != nil {
		return bench.MazeResult{}, err
	}
	d.res, err = d.loop.Step(a)
	return d.res, err
}

func (d *loopDriver) reset() bench.MazeResult {
	d.episodes++
	d.res = d.loop.Reset()
	return d.res
}

func (d *loopDriver) step() error {
	res, err := d.act()
	if err != nil {
		return err
	}
	if res.Over {
		d.reset()
	}
	return nil
}

// The benchmark loops live in suite.go (bench.Suite), where `baton bench` runs them
// too; the drivers above serve the tests.

func BenchmarkMazeStep(b *testing.B)     { runCases(b, "MazeStep/") }
func BenchmarkMazeBaseline(b *testing.B) { runCases(b, "MazeBaseline/") }
func BenchmarkCampaignMaze(b *testing.B) { runCases(b, "CampaignMaze/") }

// runCases runs the suite's cases whose names start with prefix as sub-benchmarks.
func runCases(b *testing.B, prefix string) {
	for _, c := range bench.Suite() {
		if name, ok := strings.CutPrefix(c.Name, prefix); ok {
			b.Run(name, c.Run)
		}
	}
}

// view is what a step reports, in a form both sides share. Its slices are the sides'
// own buffers: compare a view before the next step.
type view struct {
	Next    string
	Over    bool
	Tick    int
	Reports []reportView
}

type reportView struct {
	AgentID, Agent, ParentID string
	Obs                      []float32
	Mask                     []bool
	Reward                   float64
	Terminated, Truncated    bool
	Start                    bool
	SpanTicks                int
}

func runtimeView(res env.Turn) view {
	v := view{Next: res.Next, Over: res.Over, Tick: res.Tick}
	for _, r := range res.Reports {
		v.Reports = append(v.Reports, reportView{r.AgentID, r.Agent, r.ParentID, r.Obs, r.Mask, r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks})
	}
	return v
}

func loopView(res bench.MazeResult) view {
	v := view{Next: res.Next, Over: res.Over, Tick: res.Tick}
	for _, r := range res.Reports {
		v.Reports = append(v.Reports, reportView{r.AgentID, r.Agent, r.ParentID, r.Obs, r.Mask, r.Reward, r.Terminated, r.Truncated, r.Start, r.SpanTicks})
	}
	return v
}

func (v view) equal(w view) bool {
	return v.Next == w.Next && v.Over == w.Over && v.Tick == w.Tick &&
		slices.EqualFunc(v.Reports, w.Reports, func(a, b reportView) bool {
			return a.AgentID == b.AgentID && a.Agent == b.Agent && a.ParentID == b.ParentID &&
				slices.Equal(a.Obs, b.Obs) && slices.Equal(a.Mask, b.Mask) &&
				a.Reward == b.Reward && a.Terminated == b.Terminated && a.Truncated == b.Truncated &&
				a.Start == b.Start && a.SpanTicks == b.SpanTicks
		})
}

// TestBaselineMatchesRuntime plays the runtime and MazeLoop in lockstep, the same
// policy on generators seeded alike, and checks that every step reports the same
// agents with the same ids, observations, masks, rewards, ends and spans, and that
// the episodes end together. The two sides draw the same random numbers only while
// their masks agree, so a divergence shows at the first step where they differ.
//
// The comparison is exact, report by report: the loop reports what the runtime does,
// the finishing motion agent (its last observation) followed by the strategy agent it
// returns control to, in the same step.
func TestBaselineMatchesRuntime(t *testing.T) {
	tests := []struct {
		name  string
		cfg   maze.Config
		steps int
	}{
		{"reference", maze.Config{}, 5000},
		{"generated 101", benchMazes[1].cfg, 5000},
		{"generated 21 with limits and rewards", maze.Config{
			Generate: &maze.GenerateConfig{Rows: 21, Cols: 21, Seed: 3},
			Strategy: maze.StrategyConfig{MaxSteps: 6, GoalReward: ptr(5)},
			Motion:   maze.MotionConfig{MaxSteps: 3, RightReward: ptr(0.5), WrongReward: ptr(-2)},
		}, 5000},
		{"reference with a patient strategy", maze.Config{Strategy: maze.StrategyConfig{MaxSteps: 200}}, 20000},
	}
	var goals, strategyTrunc, motionTrunc, backward int
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rd := newRuntimeDriver(t, tt.cfg, policyRNG())
			ld := newLoopDriver(t, tt.cfg, policyRNG())
			check := func(step int, rv, lv view) {
				if !rv.equal(lv) {
					require.Equal(t, rv, lv, "step %d, episode %d", step, rd.episodes)
				}
			}
			check(-1, runtimeView(rd.res), loopView(ld.res))
			for i := range tt.steps {
				rres, err := rd.act(ctx)
				require.NoError(t, err, "runtime, step %d", i)
				lres, err := ld.act()
				require.NoError(t, err, "loop, step %d", i)
				check(i, runtimeView(rres), loopView(lres))

				for _, r := range rres.Reports {
					switch {
					case r.Agent == maze.StrategyName && r.Terminated:
						goals++
					case r.Agent == maze.StrategyName && r.Truncated:
						strategyTrunc++
					case r.Agent == maze.MotionName && r.Truncated:
						motionTrunc++
					case r.Agent == maze.MotionName && !r.Start && r.Reward < 0: // every case's wrong-direction reward is negative
						backward++
					}
				}
				if rres.Over {
					rres, err := rd.reset()
					require.NoError(t, err, "runtime, reset after step %d", i)
					check(i, runtimeView(rres), loopView(ld.reset()))
				}
			}
			assert.GreaterOrEqual(t, rd.episodes, 20, "episodes")
			t.Logf("%d steps, %d episodes", tt.steps, rd.episodes)
		})
	}
	// The runs cover every way a sub-episode ends and both moves.
	t.Logf("goals %d, strategy truncated %d, motion truncated %d, backward moves %d", goals, strategyTrunc, motionTrunc, backward)
	assert.Positive(t, goals, "episodes that reach the goal")
	assert.Positive(t, strategyTrunc, "episodes cut by the strategy's step limit")
	assert.Positive(t, motionTrunc, "motion sub-episodes cut by their step limit")
	assert.Positive(t, backward, "backward moves")
}

func ptr(v float64) *float64 { return &v }

func TestMazeLoopRejects(t *testing.T) {
	m, err := maze.Parse(maze.Reference)
	require.NoError(t, err)
	loop, err := bench.NewMazeLoop(m, maze.StrategyConfig{}, maze.MotionConfig{})
	require.NoError(t, err)
	_, err = loop.Step(0)
	require.ErrorIs(t, err, bench.ErrEpisodeOver, "before Reset")
	loop.Reset()
	for _, a := range []int64{-1, 4, int64(maze.Right), int64(maze.Down)} { // (4, 9): only UP and LEFT are open
		_, err = loop.Step(a)
		require.ErrorIs(t, err, bench.ErrInvalidAction, "strategy action %d", a)
	}
	res, err := loop.Step(int64(maze.Left))
	require.NoError(t, err)
	assert.Equal(t, "motion_0", res.Next)
	_, err = loop.Step(2)
	require.ErrorIs(t, err, bench.ErrInvalidAction, "motion action outside Discrete(2)")

	_, err = bench.NewMazeLoop(m, maze.StrategyConfig{MaxSteps: -1}, maze.MotionConfig{})
	require.Error(t, err)
	_, err = bench.NewMazeLoop(nil, maze.StrategyConfig{}, maze.MotionConfig{})
	require.Error(t, err)
}

// TestMazeStepAllocs asserts that the runtime's step path allocates nothing once warm:
// 10,000 steps, about a hundred episodes with their resets, measured as 10 runs of
// 1,000 steps. AllocsPerRun counts every allocation of the process and divides by the
// runs in integers, so a stray allocation of the test machinery cannot fail the test,
// while one allocation per step or per episode would (hundreds a run). The warm-up
// grows what grows once: agent ids up to the largest motion sub-episode count, the
// report and observation buffers.
func TestMazeStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const warmup, runs, steps = 20000, 10, 1000
	for _, m := range benchMazes {
		t.Run("runtime/"+m.name, func(t *testing.T) {
			ctx := context.Background()
			d := newRuntimeDriver(t, m.cfg, policyRNG())
			play := func(n int) {
				for range n {
					if err := d.step(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			play(warmup)
			before := d.episodes
			assert.Zero(t, testing.AllocsPerRun(runs, func() { play(steps) }), "allocations per %d steps", steps)
			assert.Greater(t, d.episodes-before, 20, "the measured steps include resets")
		})
		t.Run("baseline/"+m.name, func(t *testing.T) {
			d := newLoopDriver(t, m.cfg, policyRNG())
			play := func(n int) {
				for range n {
					if err := d.step(); err != nil {
						t.Fatal(err)
					}
				}
			}
			play(warmup)
			assert.Zero(t, testing.AllocsPerRun(runs, func() { play(steps) }), "allocations per %d steps", steps)
		})
	}
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
