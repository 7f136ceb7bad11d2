package runners_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// untimed drops the figures that depend on the clock.
func untimed(s runners.Summary) runners.Summary {
	s.Wall, s.WallSeconds, s.StepsPerSecond = 0, 0, 0
	return s
}

// The same seed gives the same events and summary whatever the number of workers.
func TestCampaignDeterministic(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	spec := runners.Spec{Env: "maze", Seed: 3, Episodes: 2, MaxTicks: 60,
		Actors: map[string]runners.Actor{maze.StrategyName: runners.Named("random")}}
	const trials = 6
	run := func(workers int) (runners.Summary, *recorder) {
		rec := newRecorder()
		c, err := runners.NewCampaign(reg, spec, runners.WithTrials(trials), runners.WithWorkers(workers), runners.WithSinks(rec))
		require.NoError(t, err)
		s, err := c.Run(t.Context())
		require.NoError(t, err)
		return s, rec
	}
	s1, rec1 := run(1)
	require.Equal(t, trials, s1.Ended)
	assert.Equal(t, 2*trials, s1.Episodes)
	for _, workers := range []int{2, 3, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s, rec := run(workers)
			assert.Equal(t, untimed(s1), untimed(s))
			for i := range trials {
				id := fmt.Sprintf("maze-%d", i)
				require.NotEmpty(t, rec1.events(id))
				assert.Equal(t, rec1.events(id), rec.events(id), "trial %s", id)
			}
		})
	}
	// Trials differ from each other: their seeds are derived from the campaign's.
	assert.NotEqual(t, lines(rec1.steps("maze-0")), lines(rec1.steps("maze-1")))
}

// A trial whose user code fails or panics fails alone, with the reason; the others
// end.
func TestCampaignFailures(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	const bad = 2 // the trial that fails
	policyErr := errors.New("policy broke")
	sinkErr := errors.New("sink broke")
	tests := []struct {
		name  string
		hook  runners.Hook
		sink  func(e *event.Event) error
		want  error  // matched with errors.Is
		where string // of a *PanicError
	}{{
		name: "policy panics",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Actors["counter"] = runners.Value(panicking("boom"))
			}
			return nil
		},
		want: runners.ErrPanic, where: "policy of counter_0",
	}, {
		name: "policy fails",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Actors["counter"] = runners.Value(agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
					return agent.RawAction{}, policyErr
				}))
			}
			return nil
		},
		want: policyErr,
	}, {
		name: "policy factory panics",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Actors["counter"] = runners.PerTrial(func(*rand.Rand) (agent.Policy, error) { panic("no policy") })
			}
			return nil
		},
		want: runners.ErrPanic, where: "building the trial",
	}, {
		name: "environment panics",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Config = []byte(`{"panic_at": 3}`)
			}
			return nil
		},
		want: runners.ErrPanic, where: "environment Step",
	}, {
		name: "environment fails",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Config = []byte(`{"fail_at": 3}`)
			}
			return nil
		},
		want: errCounter,
	}, {
		name: "bad configuration",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Config = []byte(`{"no_such_field": 3}`)
			}
			return nil
		},
		want: runners.ErrEnvConfig,
	}, {
		name: "unknown policy",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				s.Actors["counter"] = runners.Named("three")
			}
			return nil
		},
		want: registry.ErrUnknownPolicy,
	}, {
		name: "hook fails",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				return policyErr
			}
			return nil
		},
		want: runners.ErrHook,
	}, {
		name: "hook panics",
		hook: func(_ context.Context, i int, s *runners.Spec) error {
			if i == bad {
				panic("hook")
			}
			return nil
		},
		want: runners.ErrPanic, where: "pre-trial hook",
	}, {
		name: "sink panics",
		sink: func(e *event.Event) error {
			if e.Trial == "counter-2" && e.Kind == event.KindStep && e.Step.Tick == 2 {
				panic("sink")
			}
			return nil
		},
		want: runners.ErrPanic, where: "sink",
	}, {
		name: "sink fails",
		sink: func(e *event.Event) error {
			if e.Trial == "counter-2" && e.Kind == event.KindStep && e.Step.Tick == 2 {
				return sinkErr
			}
			return nil
		},
		want: sinkErr,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			rec.hook = tt.sink
			opts := []runners.CampaignOption{runners.WithTrials(5), runners.WithWorkers(2), runners.WithSinks(rec)}
			if tt.hook != nil {
				opts = append(opts, runners.WithPreTrial(tt.hook))
			}
			spec := runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.Named("two")}}
			c, err := runners.NewCampaign(reg, spec, opts...)
			require.NoError(t, err)
			s, err := c.Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 5, s.Trials)
			assert.Equal(t, 4, s.Ended)
			assert.Equal(t, 1, s.Failed)
			require.Len(t, s.Failures, 1)
			f := s.Failures[0]
			assert.Equal(t, bad, f.Index)
			assert.Equal(t, "counter-2", f.Trial)
			require.ErrorIs(t, f.Err, tt.want)
			assert.Equal(t, f.Err.Error(), f.Reason)
			var te *runners.TrialError
			require.ErrorAs(t, f.Err, &te)
			assert.Equal(t, "counter-2", te.Trial)
			if tt.where != "" {
				var pe *runners.PanicError
				require.ErrorAs(t, f.Err, &pe)
				assert.Equal(t, tt.where, pe.Where)
				assert.Contains(t, string(pe.Stack), "runtime/debug.Stack")
			}
			// The sinks hear of the failure, last.
			events := rec.events("counter-2")
			require.NotEmpty(t, events)
			final := events[len(events)-1]
			require.Equal(t, event.KindState, final.Kind)
			assert.Equal(t, event.Failed, final.State.State)
			// The other trials ended as usual.
			for _, i := range []int{0, 1, 3, 4} {
				events := rec.events(fmt.Sprintf("counter-%d", i))
				require.NotEmpty(t, events)
				assert.Equal(t, event.Ended, events[len(events)-1].State.State)
			}
			assert.Equal(t, 4, s.Episodes)
			assert.Equal(t, 8.0, s.Agents[0].Mean)
		})
	}
}

// Cancelling the context stops the running trials, even in a policy that blocks until
// its context is done, and starts no other; Run returns the summary so far.
func TestCampaignCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	started := make(chan string, 8)
	spec := runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		return blocking(started, ""), nil
	})}}
	rec := newRecorder()
	c, err := runners.NewCampaign(reg, spec, runners.WithTrials(10), runners.WithWorkers(2), runners.WithSinks(rec))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var s runners.Summary
	var wg sync.WaitGroup
	wg.Go(func() { s, err = c.Run(ctx) })
	<-started
	<-started // both workers are blocked in a policy
	cancel()
	wg.Wait()
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, s.Trials)
	assert.Equal(t, 2, s.Stopped)
	assert.Equal(t, 0, s.Episodes)
	for id, events := range rec.trials {
		final := events[len(events)-1]
		assert.Equal(t, event.Stopped, final.State.State, id)
		require.ErrorIs(t, final.State.Err, context.Canceled)
	}
}

// A pre-trial hook chooses the actors: swapping the random motion policy for the
// forward one is a configuration change, and those trials reach the goal.
func TestCampaignPreTrialHook(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	results := map[int]runners.Result{}
	var policies sync.Map
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 5}, runners.WithTrials(6), runners.WithWorkers(3),
		runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
			assert.Equal(t, env.DeriveSeed(5, i), s.Seed)
			assert.Equal(t, fmt.Sprintf("maze-%d", i), s.ID)
			if i%2 == 0 {
				if s.Actors == nil {
					s.Actors = map[string]runners.Actor{}
				}
				s.Actors[maze.MotionName] = runners.Named("forward")
			}
			return nil
		}),
		runners.WithProgress(func(p runners.Progress) {
			results[p.Index] = *p.Result
			policies.Store(p.Index, p.Result.Info.Policies[1])
		}))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Len(t, results, 6)
	for i, res := range results {
		want := "random"
		if i%2 == 0 {
			want = "forward"
			assert.Equal(t, 20, res.Episodes[0].Ticks, "trial %d", i)
			assert.True(t, res.Episodes[0].Success, "trial %d", i)
		}
		p, _ := policies.Load(i)
		assert.Equal(t, want, p, "trial %d", i)
	}
	assert.GreaterOrEqual(t, s.Successes, 3)
}

// The summary of a small campaign, checked against a hand computation: trial i plays
// action i%3 on every step of its two 4-step episodes, so each episode returns 4·(i%3)
// and succeeds unless the action is 0.
func TestCampaignSummary(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	var progress []runners.Progress
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "counter", Episodes: 2}, runners.WithTrials(5), runners.WithWorkers(1),
		runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
			s.Actors = map[string]runners.Actor{"counter": runners.Named([]string{"zero", "one", "two"}[i%3])}
			return nil
		}),
		runners.WithProgress(func(p runners.Progress) {
			p.Result = nil
			progress = append(progress, p)
		}))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)

	// Returns per episode: 0 0 | 4 4 | 8 8 | 0 0 | 4 4.
	returns := []float64{0, 0, 4, 4, 8, 8, 0, 0, 4, 4}
	mean := 32.0 / 10
	variance := 0.0
	for _, r := range returns {
		variance += (r - mean) * (r - mean)
	}
	std := math.Sqrt(variance / 10) // population
	rate := 6.0 / 10

	assert.Equal(t, "counter", s.Env)
	assert.Equal(t, 5, s.Trials)
	assert.Equal(t, 5, s.Ended)
	assert.Equal(t, 10, s.Episodes)
	assert.EqualValues(t, 40, s.EnvSteps)
	assert.Equal(t, 6, s.Successes)
	require.NotNil(t, s.SuccessRate)
	assert.InDelta(t, rate, *s.SuccessRate, 1e-12)
	require.Len(t, s.Agents, 1)
	a := s.Agents[0]
	assert.Equal(t, "counter", a.Name)
	assert.Equal(t, 10, a.Episodes)
	assert.InDelta(t, mean, a.Mean, 1e-12)
	assert.InDelta(t, std, a.Std, 1e-12)
	assert.InDelta(t, 2.9933259094191533, a.Std, 1e-12)
	assert.Equal(t, 0.0, a.Min)
	assert.Equal(t, 8.0, a.Max)
	assert.Positive(t, s.Wall)
	assert.InDelta(t, float64(s.EnvSteps)/s.WallSeconds, s.StepsPerSecond, 1e-6*s.StepsPerSecond)

	require.Len(t, progress, 5)
	for i, p := range progress {
		assert.Equal(t, runners.Progress{Done: i + 1, Total: 5, Steps: int64(8 * (i + 1)), Index: i}, p)
	}
}

// Each worker gets a sink of its own, which sees whole trials one at a time and is
// closed when the worker ends.
func TestCampaignWorkerSinks(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	var mu sync.Mutex
	sinks := map[int]*workerSink{}
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "counter"}, runners.WithTrials(7), runners.WithWorkers(3),
		runners.WithWorkerSinks(func(w int) (event.Sink, error) {
			s := &workerSink{}
			mu.Lock()
			defer mu.Unlock()
			sinks[w] = s
			return s, nil
		}))
	require.NoError(t, err)
	_, err = c.Run(t.Context())
	require.NoError(t, err)
	total := 0
	for w, s := range sinks {
		assert.True(t, s.closed, "worker %d", w)
		assert.False(t, s.interleaved, "worker %d", w)
		total += s.trials
	}
	assert.Equal(t, 7, total)

	// A sink that cannot be made stops the campaign with its error.
	broken := errors.New("no sink")
	c, err = runners.NewCampaign(reg, runners.Spec{Env: "counter"}, runners.WithTrials(7), runners.WithWorkers(3),
		runners.WithWorkerSinks(func(w int) (event.Sink, error) { return nil, broken }))
	require.NoError(t, err)
	_, err = c.Run(t.Context())
	require.ErrorIs(t, err, broken)
}

type workerSink struct {
	current     string
	trials      int
	interleaved bool
	closed      bool
}

func (w *workerSink) Handle(_ context.Context, e *event.Event) error {
	if e.Kind == event.KindState && e.State.State == event.Running {
		w.interleaved = w.interleaved || w.current != ""
		w.current = e.Trial
		w.trials++
	}
	w.interleaved = w.interleaved || e.Trial != w.current
	if e.Kind == event.KindState && e.State.State.Done() {
		w.current = ""
	}
	return nil
}

func (w *workerSink) Close() error {
	w.closed = true
	return nil
}

func TestNewCampaignErrors(t *testing.T) {
	reg := testRegistry(t)
	tests := []struct {
		name string
		spec runners.Spec
		opts []runners.CampaignOption
		want error
		msg  string
	}{
		{"unknown environment", runners.Spec{Env: "mace"}, nil, registry.ErrUnknownEnv,
			`registry: unknown environment "mace" (choices: maze, cartpole, counter)`},
		{"unknown agent", runners.Spec{Env: "maze", Actors: map[string]runners.Actor{"walker": runners.Named("random")}}, nil, registry.ErrUnknownAgent,
			`registry: unknown agent "walker" of maze (choices: strategy, motion)`},
		{"agent missing from the configuration", runners.Spec{Env: "maze", Config: []byte(`{"procedure": true}`), Actors: map[string]runners.Actor{"motion": runners.Named("forward")}}, nil, registry.ErrUnknownAgent,
			`registry: unknown agent "motion" of maze (choices: strategy)`},
		{"unknown policy", mazeSpec("backward"), nil, registry.ErrUnknownPolicy,
			`registry: unknown policy "backward" for agent motion of maze (choices: forward, random)`},
		{"bad configuration", runners.Spec{Env: "maze", Config: []byte(`{"motion": {"max_steps": -1}}`)}, nil, runners.ErrEnvConfig, ""},
		{"two policies", runners.Spec{Env: "maze", Actors: map[string]runners.Actor{"motion": {Policy: "forward", Value: maze.AlwaysForward()}}}, nil, runners.ErrInvalidSpec, ""},
		{"no policy", runners.Spec{Env: "maze", Actors: map[string]runners.Actor{"motion": {}}}, nil, runners.ErrInvalidSpec, ""},
		{"negative episodes", runners.Spec{Env: "maze", Episodes: -1}, nil, runners.ErrInvalidSpec, ""},
		{"negative tick limit", runners.Spec{Env: "maze", MaxTicks: -1}, nil, runners.ErrInvalidSpec, ""},
		{"negative trials", runners.Spec{Env: "maze"}, []runners.CampaignOption{runners.WithTrials(-1)}, runners.ErrInvalidSpec, ""},
		{"negative workers", runners.Spec{Env: "maze"}, []runners.CampaignOption{runners.WithWorkers(-1)}, runners.ErrInvalidSpec, ""},
		{"negative workers after a nil option", runners.Spec{Env: "maze"}, []runners.CampaignOption{nil, runners.WithWorkers(-1)}, runners.ErrInvalidSpec, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runners.NewCampaign(reg, tt.spec, tt.opts...)
			require.ErrorIs(t, err, tt.want)
			if tt.msg != "" {
				assert.Equal(t, tt.msg, err.Error())
			}
			var ne *registry.NameError
			if errors.As(err, &ne) {
				assert.NotContains(t, err.Error(), "\n")
			}
		})
	}
}

// A worker's trials whose hooks change the configuration from one trial to the next
// each run with their own: trials 1 and 3 fail at tick 3, the others end.
func TestCampaignPreTrialConfigs(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := runners.Spec{Env: "counter", Actors: map[string]runners.Actor{"counter": runners.Named("two")}}
	c, err := runners.NewCampaign(testRegistry(t), spec, runners.WithTrials(5), runners.WithWorkers(1),
		runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
			if i%2 == 1 {
				s.Config = []byte(`{"fail_at": 3}`)
			}
			return nil
		}))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, s.Ended)
	require.Len(t, s.Failures, 2)
	for k, f := range s.Failures {
		assert.Equal(t, 2*k+1, f.Index)
		require.ErrorIs(t, f.Err, errCounter)
	}
}

// Campaigns of ranges of trial indices (WithFirstTrial) run the trials of the whole
// campaign, each as in it, and their results, put back in trial order, sum up
// (Summarize) as the whole campaign's do.
func TestCampaignFirstTrial(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := testRegistry(t)
	spec := runners.Spec{Env: "maze", Seed: 5, Episodes: 2}
	run := func(first, trials int) map[int]runners.Result {
		got := map[int]runners.Result{}
		c, err := runners.NewCampaign(reg, spec, runners.WithTrials(trials), runners.WithWorkers(2), runners.WithFirstTrial(first),
			runners.WithProgress(func(p runners.Progress) { got[p.Index] = *p.Result }))
		require.NoError(t, err)
		_, err = c.Run(t.Context())
		require.NoError(t, err)
		return got
	}
	whole := run(0, 10)
	c, err := runners.NewCampaign(reg, spec, runners.WithTrials(10), runners.WithWorkers(3))
	require.NoError(t, err)
	want, err := c.Run(t.Context())
	require.NoError(t, err)
	for _, ranges := range [][][2]int{{{0, 10}}, {{0, 4}, {4, 6}}, {{7, 3}, {0, 1}, {1, 6}}} {
		t.Run(fmt.Sprint(ranges), func(t *testing.T) {
			results := make([]runners.Result, 10)
			for _, r := range ranges {
				got := run(r[0], r[1])
				require.Len(t, got, r[1])
				for i, res := range got {
					require.GreaterOrEqual(t, i, r[0])
					require.Less(t, i, r[0]+r[1])
					assert.Equal(t, fmt.Sprintf("maze-%d", i), res.ID)
					assert.Equal(t, i, res.Info.Index)
					assert.Equal(t, env.DeriveSeed(5, i), res.Info.Seed)
					assert.Equal(t, whole[i].Episodes, res.Episodes, "trial %d", i)
					results[i] = res
				}
			}
			assert.Equal(t, untimed(want), untimed(runners.Summarize("maze", results, 0)))
		})
	}
}

func TestCampaignFirstTrialBad(t *testing.T) {
	reg := testRegistry(t)
	_, err := runners.NewCampaign(reg, runners.Spec{Env: "maze"}, runners.WithFirstTrial(-1))
	require.ErrorIs(t, err, runners.ErrInvalidSpec)
	assert.ErrorContains(t, err, "WithFirstTrial(-1): want 0 or more")
	sched := runners.Schedule{Tasks: []runners.Task{{Name: "a", Env: "maze", Trials: 1}}, Order: runners.InOrder}
	_, err = runners.NewCampaign(reg, runners.Spec{Seed: 1}, runners.WithFirstTrial(3), runners.WithSchedule(sched), runners.WithTrials(2))
	require.ErrorIs(t, err, runners.ErrInvalidSpec)
	assert.ErrorContains(t, err, "a schedule's trials start at 0")
}
