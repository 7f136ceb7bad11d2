package runners_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/require"
)

// registry returns a registry of the maze, the cart-pole and the counter.
func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	require.NoError(t, cartpole.Register(reg))
	require.NoError(t, reg.Register(counterEntry()))
	return reg
}

// counter is a single-agent test environment: each step moves one tile and is
// rewarded its action (0, 1 or 2); the episode terminates after Length steps. It
// ignores the trial's tick limit, so that the runner applies it. PanicAt and FailAt make
// the step of that number (from 1) panic or fail.
type counter struct {
	cfg counterConfig
	pos int
	obs [1]float32
}

type counterConfig struct {
	Length  int `json:"length"`
	PanicAt int `json:"panic_at"`
	FailAt  int `json:"fail_at"`
}

var errCounter = errors.New("counter: failing as configured")

func (c *counter) Spec() env.Spec {
	return env.Spec{Name: "counter", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 100)), ActionSpace: spaces.Discrete{N: 3}}
}

func (c *counter) Reset(uint64) (env.Step, error) {
	c.pos, c.obs[0] = 0, 0
	return env.Step{Obs: c.obs[:]}, nil
}

func (c *counter) Step(a agent.RawAction) (env.Step, error) {
	if c.pos >= c.cfg.Length {
		return env.Step{}, errors.New("counter: episode over")
	}
	switch c.pos + 1 {
	case c.cfg.PanicAt:
		panic("counter: panicking as configured")
	case c.cfg.FailAt:
		return env.Step{}, errCounter
	}
	c.pos++
	c.obs[0] = float32(c.pos)
	return env.Step{Obs: c.obs[:], Reward: float64(a.Int), Terminated: c.pos >= c.cfg.Length}, nil
}

func (c *counter) Info() any { return c.pos }

// constant plays action v.
func constant(v int64) agent.Policy {
	return agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
		return agent.Discrete(v), nil
	})
}

func counterEntry() registry.Entry {
	fixed := func(v int64) registry.PolicyFactory {
		return func(registry.Factory, *rand.Rand) (agent.Policy, error) { return constant(v), nil }
	}
	return registry.Entry{
		Name:        "counter",
		Description: "a test environment: the reward is the action",
		Open: func(config []byte) (registry.Factory, error) {
			cfg := counterConfig{Length: 4}
			if len(config) > 0 {
				dec := json.NewDecoder(bytes.NewReader(config))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&cfg); err != nil {
					return nil, err
				}
			}
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
				return registry.SingleAgent(&counter{cfg: cfg}), nil
			}), nil
		},
		Agents: []registry.AgentEntry{{Name: "counter", Default: "one", Policies: []registry.PolicyEntry{
			{Name: "zero", New: fixed(0)},
			{Name: "one", New: fixed(1)},
			{Name: "two", New: fixed(2)},
		}}},
		// Success: the last step scored something.
		Success: func(final env.Turn) bool { return final.Reports[0].Reward > 0 },
	}
}

// recorder is a sink that keeps a copy of every event, by trial. Safe for concurrent
// use.
type recorder struct {
	mu     sync.Mutex
	trials map[string][]*event.Event
	// hook, if set, runs on each event before it is kept.
	hook func(e *event.Event) error
}

func newRecorder() *recorder { return &recorder{trials: map[string][]*event.Event{}} }

func (r *recorder) Handle(_ context.Context, e *event.Event) error {
	if r.hook != nil {
		if err := r.hook(e); err != nil {
			return err
		}
	}
	c := e.Clone()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trials[e.Trial] = append(r.trials[e.Trial], c)
	return nil
}

func (r *recorder) events(trial string) []*event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.trials[trial])
}

func (r *recorder) steps(trial string) []*event.StepEvent {
	var out []*event.StepEvent
	for _, e := range r.events(trial) {
		if e.Kind == event.KindStep {
			out = append(out, e.Step)
		}
	}
	return out
}

// line formats a step event on one line, for traces.
func line(s *event.StepEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "e%d t%d %s<-%s", s.Episode, s.Tick, s.AgentID, s.ParentID)
	switch {
	case s.Start:
		b.WriteString(" start")
	default:
		fmt.Fprintf(&b, " a=%v r=%g", s.Action, s.Reward)
		for _, src := range s.Sources {
			fmt.Fprintf(&b, " %s:%g", src.Source, src.Value)
		}
		fmt.Fprintf(&b, " span=%d", s.SpanTicks)
	}
	if s.Terminated {
		b.WriteString(" terminated")
	}
	if s.Truncated {
		b.WriteString(" truncated")
	}
	if s.Acting {
		b.WriteString(" acting")
	}
	for _, m := range s.Messages {
		fmt.Fprintf(&b, " msg(%s->%s@%d %q)", m.From, m.To, m.Sent, m.Payload)
	}
	return b.String()
}

func lines(steps []*event.StepEvent) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = line(s)
	}
	return out
}

// gate is a policy that plays inner, except that its call number at (from 1) tells
// reached and waits for release or ctx.
type gate struct {
	inner   agent.Policy
	at      int
	calls   int
	reached chan struct{}
	release chan struct{}
}

func newGate(inner agent.Policy, at int) *gate {
	return &gate{inner: inner, at: at, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	g.calls++
	if g.calls == g.at {
		close(g.reached)
		select {
		case <-g.release:
		case <-ctx.Done():
			return agent.RawAction{}, context.Cause(ctx)
		}
	}
	return g.inner.Act(ctx, obs, mask)
}

// blocking is a policy that tells started (once per policy) and blocks until ctx is
// done.
func blocking(started chan<- string, name string) agent.Policy {
	return agent.PolicyFunc(func(ctx context.Context, _ []float32, _ []bool) (agent.RawAction, error) {
		started <- name
		<-ctx.Done()
		return agent.RawAction{}, ctx.Err()
	})
}

func panicking(v any) agent.Policy {
	return agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
		panic(v)
	})
}

func mazeSpec(motion string) runners.Spec {
	return runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.MotionName: runners.Named(motion)}}
}

// mustReset resets m with seed and fails the test if the reset fails.
func mustReset[T any](tb testing.TB, m interface{ Reset(uint64) (T, error) }, seed uint64) T {
	tb.Helper()
	r, err := m.Reset(seed)
	require.NoError(tb, err)
	return r
}
