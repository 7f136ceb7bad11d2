package telemetry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/telemetry"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A trial moves from state to state: it counts in its latest state only, and stays
// counted in its final state.
func TestSinkTrialStates(t *testing.T) {
	m := telemetry.New()
	sink := m.Sink()
	events := []struct {
		trial string
		state event.State
	}{
		{"a", event.Pending}, {"b", event.Pending}, {"a", event.Running},
		{"a", event.Running}, {"b", event.Running}, {"a", event.Ended}, {"b", event.Failed},
		{"c", event.Pending},
	}
	for _, e := range events {
		require.NoError(t, sink.Handle(t.Context(), &event.Event{Kind: event.KindState, Trial: e.trial,
			State: &event.StateChange{Trial: e.trial, State: e.state}}))
	}
	want := `
# HELP baton_trials Trials in each state.
# TYPE baton_trials gauge
baton_trials{state="ended"} 1
baton_trials{state="failed"} 1
baton_trials{state="pending"} 1
baton_trials{state="running"} 0
baton_trials{state="stopped"} 0
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), stringsReader(want), "baton_trials"))
}

// The methods of a nil *Metrics do nothing.
func TestNilMetrics(t *testing.T) {
	var m *telemetry.Metrics
	assert.NotPanics(t, func() {
		m.ObserveAct("Act", time.Millisecond, 1)
		m.ObserveStep("Step", time.Millisecond, 1)
		m.CountError("/baton.v1.EnvService/Step", "NotFound")
		m.CountFeedback(2)
		m.AddSessions(func() int { return 1 })
		_ = m.Sink().Handle(t.Context(), &event.Event{Kind: event.KindState, State: &event.StateChange{State: event.Running}})
	})
}

// Sessions and feedback sum up over their sources.
func TestSessionsAndFeedback(t *testing.T) {
	m := telemetry.New()
	m.AddSessions(func() int { return 2 })
	m.AddSessions(func() int { return 3 })
	m.CountFeedback(4)
	m.CountFeedback(0)
	want := `
# HELP baton_feedback_messages_total Feedback messages an agent server received.
# TYPE baton_feedback_messages_total counter
baton_feedback_messages_total 4
# HELP baton_open_sessions Environment sessions open.
# TYPE baton_open_sessions gauge
baton_open_sessions 5
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), stringsReader(want), "baton_open_sessions", "baton_feedback_messages_total"))
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
