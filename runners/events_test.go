package runners_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestEnums(t *testing.T) {
	for s, want := range map[event.State]string{event.Pending: "pending", event.Running: "running", event.Ended: "ended",
		event.Stopped: "stopped", event.Failed: "failed", 0: "State(0)"} {
		assert.Equal(t, want, s.String())
	}
	assert.False(t, event.Running.Done())
	assert.True(t, event.Failed.Done())
	b, err := json.Marshal(map[string]event.State{"state": event.Stopped})
	require.NoError(t, err)
	assert.JSONEq(t, `{"state": "stopped"}`, string(b))
	for k, want := range map[event.Kind]string{event.KindState: "state", event.KindEpisode: "episode", event.KindStep: "step",
		event.KindReward: "reward", 9: "Kind(9)"} {
		assert.Equal(t, want, k.String())
	}
}

func TestMultiSink(t *testing.T) {
	var got []string
	sink := func(name string, err error) event.Sink {
		return event.SinkFunc(func(context.Context, *event.Event) error {
			got = append(got, name)
			return err
		})
	}
	broken := errors.New("broken")
	s := event.MultiSink(sink("a", nil), nil, event.MultiSink(sink("b", nil), sink("c", broken)), sink("d", nil))
	require.ErrorIs(t, s.Handle(context.Background(), &event.Event{}), broken)
	assert.Equal(t, []string{"a", "b", "c"}, got)
	require.NoError(t, event.MultiSink().Handle(context.Background(), &event.Event{}))
}

// slider is a single-agent test environment with a Box action: the reward is the sum
// of the action, and an episode lasts three steps.
type slider struct {
	t   int
	obs [1]float32
}

func (s *slider) Spec() env.Spec {
	return env.Spec{Name: "slider", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 10)), ActionSpace: spaces.Must(spaces.NewBox([]int{2}, -1, 1))}
}
func (s *slider) Reset(uint64) (env.Step, error) { s.t = 0; return env.Step{Obs: s.obs[:]}, nil }
func (s *slider) Step(a agent.RawAction) (env.Step, error) {
	s.t++
	return env.Step{Obs: s.obs[:], Reward: float64(a.Floats[0] + a.Floats[1]), Terminated: s.t == 3}, nil
}
func (s *slider) Info() any { return nil }

// An action's slices are the policy's, which reuses them: the events carry the runner's
// copy, and Event.Clone copies it again.
func TestEventActionsAreCopied(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, reg.Register(registry.Entry{
		Name: "slider",
		Open: func([]byte) (registry.Factory, error) {
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) { return registry.SingleAgent(&slider{}), nil }), nil
		},
	}))
	buf := make([]float32, 2)
	calls := 0
	policy := agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
		calls++
		buf[0], buf[1] = float32(calls)/10, float32(calls)/100
		return agent.Continuous(buf), nil
	})
	var actions [][]float32
	var live []*event.StepEvent
	sink := event.SinkFunc(func(_ context.Context, e *event.Event) error {
		if e.Kind == event.KindStep && !e.Step.Start {
			actions = append(actions, e.Clone().Step.Action.Floats)
			live = append(live, e.Step)
		}
		return nil
	})
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "slider", Actors: map[string]runners.Actor{"slider": runners.Value(policy)}}, runners.WithSinks(sink))
	require.NoError(t, err)
	assert.Equal(t, 1, c.Trials())
	assert.Equal(t, "slider", c.Agents()[0].Name)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{0.1, 0.01}, {0.2, 0.02}, {0.3, 0.03}}, actions)
	assert.InDelta(t, 0.66, s.Agents[0].Mean, 1e-6)
	buf[0] = 9
	assert.NotEqual(t, float32(9), live[2].Action.Floats[0], "the event's action is the runner's copy")
}
