package telemetry

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources of steps and actions (the "source" label).
const (
	// SourceEnv counts the steps an environment server took for its clients.
	SourceEnv = "env"
	// SourceAgent counts the actions an agent server chose for its clients.
	SourceAgent = "agent"
	// SourceTrial counts the steps and actions of trials run in this process.
	SourceTrial = "trial"
)

// latencyBuckets are the upper bounds of the act and step histograms, in seconds:
// 10 µs to about 10 s.
var latencyBuckets = prometheus.ExponentialBuckets(10e-6, 4, 11)

// Metrics is a registry of baton's metrics (see the package documentation). Build
// it with New. It is safe for concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	trials   *prometheus.GaugeVec
	steps    *prometheus.CounterVec
	actions  *prometheus.CounterVec
	act      *prometheus.HistogramVec
	step     *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	feedback prometheus.Counter

	mu       sync.Mutex
	sessions []func() int
	logs     []func() datalog.Stats
	states   map[string]event.State // the last state of each live trial Sink saw
}

// New returns metrics in a registry of their own, with the Go runtime's and the
// process's collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		trials: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_trials",
			Help: "Trials in each state."}, []string{"state"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_env_steps_total",
			Help: "Environment steps, by source: env (EnvService) or trial (trials run here)."}, []string{"source"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_actions_total",
			Help: "Actions chosen, by source: agent (AgentService) or trial (decisions scored in trials run here)."}, []string{"source"}),
		act: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "baton_act_duration_seconds",
			Help: "How long a served agent took to answer, by method.", Buckets: latencyBuckets}, []string{"method"}),
		step: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "baton_step_duration_seconds",
			Help: "How long a served environment step took, by method.", Buckets: latencyBuckets}, []string{"method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_rpc_errors_total",
			Help: "Calls that failed, by method and gRPC code."}, []string{"method", "code"}),
		feedback: prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_feedback_messages_total",
			Help: "Feedback messages an agent server received."}),
		states: map[string]event.State{},
	}
	for _, s := range []event.State{event.Pending, event.Running, event.Ended, event.Stopped, event.Failed} {
		m.trials.WithLabelValues(s.String())
	}
	for _, src := range []string{SourceEnv, SourceTrial} {
		m.steps.WithLabelValues(src)
	}
	for _, src := range []string{SourceAgent, SourceTrial} {
		m.actions.WithLabelValues(src)
	}
	m.reg.MustRegister(m.trials, m.steps, m.actions, m.act, m.step, m.errors, m.feedback,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "baton_open_sessions",
			Help: "Environment sessions open."}, m.openSessions),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "baton_log_rows_total",
			Help: "Rows written to Arrow activity logs."}, func() float64 { return float64(m.logStats().Rows) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "baton_log_bytes_total",
			Help: "Bytes written to Arrow activity logs."}, func() float64 { return float64(m.logStats().Bytes) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry, to add collectors of one's own or to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in Prometheus' exposition formats (GET /metrics).
// It checks no key: remote.WithMetrics puts the server's rule in front of it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveAct records that an agent answered a call of method ("Act", "ActStream",
// "ActBatch") in d with n actions.
func (m *Metrics) ObserveAct(method string, d time.Duration, n int) {
	if m == nil {
		return
	}
	m.act.WithLabelValues(method).Observe(d.Seconds())
	m.actions.WithLabelValues(SourceAgent).Add(float64(n))
}

// ObserveStep records that an environment server answered a call of method
// ("Step", "StepBatch") in d with n steps (one per copy of a batch).
func (m *Metrics) ObserveStep(method string, d time.Duration, n int) {
	if m == nil {
		return
	}
	m.step.WithLabelValues(method).Observe(d.Seconds())
	m.steps.WithLabelValues(SourceEnv).Add(float64(n))
}

// CountError records a failed call of method ("/baton.v1.AgentService/Act") with
// its gRPC code as codes.Code's String names it ("InvalidArgument").
func (m *Metrics) CountError(method, code string) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(method, code).Inc()
}

// CountFeedback records n feedback messages received.
func (m *Metrics) CountFeedback(n int) {
	if m == nil || n == 0 {
		return
	}
	m.feedback.Add(float64(n))
}

// AddSessions adds a source of open sessions: baton_open_sessions is the sum of
// every source's count when scraped. f must be safe for concurrent use.
func (m *Metrics) AddSessions(f func() int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions = append(m.sessions, f)
}

// AddLog adds an activity log: the rows and bytes its writers wrote count in
// baton_log_rows_total and baton_log_bytes_total. Dataset.Stats is such a func.
func (m *Metrics) AddLog(stats func() datalog.Stats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, stats)
}

func (m *Metrics) openSessions() float64 {
	m.mu.Lock()
	fs := m.sessions
	m.mu.Unlock()
	n := 0
	for _, f := range fs {
		n += f()
	}
	return float64(n)
}

func (m *Metrics) logStats() datalog.Stats {
	m.mu.Lock()
	fs := m.logs
	m.mu.Unlock()
	var sum datalog.Stats
	for _, f := range fs {
		s := f()
		sum.Rows += s.Rows
		sum.Bytes += s.Bytes
		sum.Batches += s.Batches
		sum.Parts += s.Parts
	}
	return sum
}

// Sink returns a sink that counts the trials it sees by state
// (baton_trials), their environment steps (one per tick) and their scored decisions
// (baton_actions_total{source="trial"}). Give it to a Controller or a Campaign with
// runners.WithSinks; it is safe for concurrent use and never fails a trial.
func (m *Metrics) Sink() event.Sink { return sink{m} }

type sink struct{ m *Metrics }

func (s sink) Handle(_ context.Context, e *event.Event) error {
	m := s.m
	if m == nil {
		return nil
	}
	switch e.Kind {
	case event.KindState:
		m.trialState(e.Trial, e.State.State)
	case event.KindStep:
		st := e.Step
		if st.Index == 0 && st.Tick > 0 {
			m.steps.WithLabelValues(SourceTrial).Inc()
		}
		if !st.Start {
			m.actions.WithLabelValues(SourceTrial).Inc()
		}
	}
	return nil
}

// trialState moves trial id from the state it was last seen in to state. A trial
// seen in a final state is forgotten, and its count stays in that state.
func (m *Metrics) trialState(id string, state event.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.states[id]; ok {
		if old == state {
			return
		}
		m.trials.WithLabelValues(old.String()).Dec()
	}
	m.trials.WithLabelValues(state.String()).Inc()
	if state.Done() {
		delete(m.states, id)
		return
	}
	m.states[id] = state
}
