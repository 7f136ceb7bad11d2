package runners

import (
	"context"
	"errors"
	"fmt"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// Result is what a trial did.
type Result struct {
	// ID is the trial's id.
	ID string
	// State is Ended, Stopped or Failed.
	State event.State
	// Err says why the trial failed (a *TrialError) or stopped (the cause of the
	// cancellation: ErrStopped, ErrShutdown, context.Canceled, ...); nil when it ended.
	Err error
	// Info describes the trial; nil when its spec was rejected.
	Info *event.TrialInfo
	// Episodes lists the episodes begun, the last one possibly incomplete: all of
	// them, or in a Controller the last of them (WithEpisodeWindow).
	Episodes []EpisodeResult
	// FirstEpisode is the index of Episodes[0] in the trial: 0 unless a Controller's
	// episode window let the episodes before it go.
	FirstEpisode int
	// Totals sums up every episode, those before FirstEpisode included.
	Totals Totals
	// Steps counts environment steps over all episodes.
	Steps int64
	// Retro lists the retroactive rewards the trial received for the episodes of
	// Episodes, in arrival order.
	Retro []event.RetroReward
}

// Totals sums up every episode of a trial.
type Totals struct {
	// Episodes counts the episodes begun; Complete those that ended (see
	// EpisodeResult.Complete), Successes the complete ones that succeeded.
	Episodes, Complete, Successes int
	// Returns is each agent's return summed over every episode (Info.Agents order),
	// retroactive rewards included; nil when the trial began no episode.
	Returns []float64
}

// EpisodeResult is what one episode of a trial did.
type EpisodeResult struct {
	// Seed is the episode's reset seed.
	Seed uint64
	// Ticks is the episode's length in environment steps.
	Ticks int
	// Complete reports that the episode ended (by the environment or at the tick
	// limit); false for an episode cut short by a stop or a failure.
	Complete bool
	// Truncated reports that the runner stopped the episode at the tick limit (see
	// Spec.MaxTicks).
	Truncated bool
	// Success reports a successful complete episode, where Info.DefinesSuccess.
	Success bool
	// Returns is each agent's return (Info.Agents order): the sum of the rewards of all
	// its reports, every source included, and of the retroactive rewards received
	// for them.
	Returns []float64
	// Metrics are the environment's metrics of a complete episode, in Info.Metrics
	// order: NaN for one the episode did not tell; nil for an incomplete episode or
	// an environment that defines none.
	Metrics []float64
}

// whereKind says which user code a trial is in, for the message of a panic.
type whereKind uint8

const (
	whereRunner whereKind = iota
	whereBuild
	whereReset
	whereStep
	wherePolicy
	whereSink
	whereSuccess
	whereMetric
	whereMessenger
	whereHook
)

type agentState struct {
	name   string
	source string // "actor:<name>"
	policy agent.Policy
	inter  Interactor
	// learner is the policy as a Learner; nil when it is not one.
	learner Learner
	// sinceAct sums the rewards of the agent's reports since its last action in
	// this episode (Exchange.LastReward); acted says it acted in this episode.
	sinceAct float64
	acted    bool
	// last is the agent's last action, in buffers of the trial.
	last   agent.RawAction
	ints   []int64
	floats []float32
}

// trial runs one trial in the calling goroutine: the loop of its episodes, with the
// rewards in its ledger and the messages in its mailbox. It is built for one run.
type trial struct {
	ctx     context.Context
	done    <-chan struct{}
	plan    *plan
	id      string
	env     env.MultiAgent
	msgr    Messenger
	agents  []agentState
	rngs    []pcgRand
	sink    event.Sink
	success func(env.Turn) bool

	feed *feedback      // outside rewards; nil outside a controller
	pos  *atomic.Uint64 // episode<<32 | tick, published for the controller; nil outside one
	view *viewing       // what people watch (Controller.Frame); nil outside a controller
	// onEpisode is told each complete episode, for the controller; nil outside one.
	onEpisode func(EpisodeResult)
	// window bounds the episodes the result keeps (the last ones); 0 keeps all.
	window int
	steps  *atomic.Int64 // the campaign's step count; nil outside one

	episode int
	tick    int // -1 before the episode's reset
	where   whereKind
	whereID string
	failed  bool // a sink failed: the final state is sent, its errors ignored

	ledger ledger
	mail   mailbox
	talks  bool // the environment or a policy exchanges messages; else the mailbox stays empty
	learns bool // a policy is a Learner
	fbuf   []Feedback

	ev     event.Event
	step   event.StepEvent
	epEv   event.EpisodeEvent
	state  event.StateChange
	retroE event.RetroReward
	x      Exchange
	out    Outcome
	outSrc [1]event.RewardSource

	result Result
}

func newTrial(ctx context.Context, p *plan, m env.MultiAgent, sink event.Sink) *trial {
	t := &trial{}
	t.init(ctx, p, m, sink)
	return t
}

// init prepares t for a trial, keeping the buffers of its previous one: a campaign's
// worker reuses one trial value.
func (t *trial) init(ctx context.Context, p *plan, m env.MultiAgent, sink event.Sink) {
	*t = trial{
		ctx: ctx, done: ctx.Done(), plan: p, id: p.spec.ID, env: m, sink: sink, tick: -1,
		agents: t.agents[:0], rngs: t.rngs, ledger: t.ledger, mail: t.mail, fbuf: t.fbuf[:0],
	}
	t.ledger.start() // the mailbox starts when the agents are known, in setup
}

// rng returns the generator of agent i, seeded for this trial. The generators are
// reused from trial to trial.
func (t *trial) rng(i int) *rand.Rand {
	for len(t.rngs) <= i {
		pcg := rand.NewPCG(0, 0)
		t.rngs = append(t.rngs, pcgRand{pcg, rand.New(pcg)})
	}
	r := t.rngs[i]
	r.pcg.Seed(t.plan.spec.Seed, uint64(i))
	return r.rand
}

type pcgRand struct {
	pcg  *rand.PCG
	rand *rand.Rand
}

// run plays the trial and returns its result.
func (t *trial) run() Result {
	t.result = Result{ID: t.id, Info: t.plan.info}
	err := t.guard(t.setup)
	if err == nil {
		err = t.guard(t.loop)
	}
	return t.finish(err)
}

// guard runs f, turning a panic into a failure.
func (t *trial) guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = t.fail(&PanicError{Where: t.whereString(), Value: v, Stack: debug.Stack()})
		}
	}()
	return f()
}

func (t *trial) whereString() string {
	switch t.where {
	case whereBuild:
		return "building the trial"
	case whereReset:
		return "environment Reset"
	case whereStep:
		return "environment Step"
	case wherePolicy:
		return "policy of " + t.whereID
	case whereSink:
		return "sink"
	case whereSuccess:
		return "the environment's Success"
	case whereMetric:
		return "the environment's metric " + t.whereID
	case whereMessenger:
		return "environment messages"
	case whereHook:
		return "pre-trial hook"
	}
	return "runner"
}

// fail wraps err with where the trial is.
func (t *trial) fail(err error) error {
	var te *TrialError
	if errors.As(err, &te) {
		return err
	}
	return &TrialError{Trial: t.id, Episode: t.episode, Tick: t.tick, Err: err}
}

// setup builds the environment, if the caller has not, and the policies.
func (t *trial) setup() error {
	t.where = whereBuild
	p := t.plan
	if t.env == nil {
		m, err := p.open.factory.NewEnv(registry.EnvOptions{MaxTicks: p.spec.MaxTicks})
		if err != nil {
			return t.fail(fmt.Errorf("%w: %s: %w", ErrEnv, p.open.entry.Name, err))
		}
		t.env = m
	}
	t.msgr, _ = t.env.(Messenger)
	t.success = p.open.entry.Success
	n := len(p.open.agents)
	t.agents = slices.Grow(t.agents[:0], n)[:n]
	for i, spec := range p.open.agents {
		a := &t.agents[i]
		*a = agentState{name: spec.Name, source: p.open.sources[i], ints: a.ints[:0], floats: a.floats[:0]}
		t.ledger.join(spec.Name)
		pol, err := p.policy(i, t.rng(i))
		if err != nil {
			return t.fail(err)
		}
		a.policy = pol
		a.inter, _ = pol.(Interactor)
		t.talks = t.talks || a.inter != nil
		a.learner, _ = pol.(Learner)
		t.learns = t.learns || a.learner != nil
	}
	t.talks = t.talks || t.msgr != nil
	t.mail.start(n)
	t.x.t = t
	want := min(p.spec.Episodes, 4096)
	if t.window > 0 {
		want = min(want, 2*t.window)
	}
	t.result.Episodes = make([]EpisodeResult, 0, want)
	t.where = whereRunner
	return nil
}

func (t *trial) loop() error {
	if err := t.emitState(event.Running, nil); err != nil {
		return err
	}
	for e := range t.plan.spec.Episodes {
		if err := t.play(e); err != nil {
			return err
		}
	}
	return nil
}

// play plays episode e.
func (t *trial) play(e int) error {
	seed := env.DeriveSeed(t.plan.spec.Seed, e)
	t.begin(e, seed)
	if t.sink != nil {
		t.epEv = event.EpisodeEvent{Episode: e, Seed: seed}
		t.ev = event.Event{Kind: event.KindEpisode, Trial: t.id, Episode: &t.epEv}
		if err := t.emit(); err != nil {
			return err
		}
	}
	t.where = whereReset
	turn, err := t.env.Reset(seed)
	t.where = whereRunner
	t.tick = 0
	t.publish()
	if err != nil {
		return t.fail(fmt.Errorf("%w: Reset: %w", ErrEnv, err))
	}
	if len(turn.Reports) == 0 {
		return t.fail(fmt.Errorf("%w: Reset reported no agent", ErrEnv))
	}
	if err := t.watched(); err != nil {
		return err
	}
	if t.talks {
		if err := t.exchange(0); err != nil {
			return err
		}
	}
	if err := t.report(&turn, false); err != nil {
		return err
	}
	cut := false
	for !turn.Over {
		select {
		case <-t.done:
			return t.ctx.Err()
		default:
		}
		if t.feed != nil && t.feed.any.Load() {
			if err := t.drain(); err != nil {
				return err
			}
		}
		rep := turn.Acting()
		if rep == nil {
			return t.fail(fmt.Errorf("%w: no report for the acting agent %q", ErrEnv, turn.Next))
		}
		i := t.index(rep.Agent)
		if i < 0 {
			return t.fail(fmt.Errorf("%w: acting agent %s is not one of its agents", ErrEnv, rep.AgentID))
		}
		// The policy is called here, not in a helper, to keep the action's copies few.
		a := &t.agents[i]
		t.where, t.whereID = wherePolicy, rep.AgentID
		var raw agent.RawAction
		var err error
		if a.inter == nil {
			raw, err = a.policy.Act(t.ctx, rep.Obs, rep.Mask)
		} else {
			raw, err = t.interact(i, rep, &turn)
		}
		if err != nil {
			return t.fail(fmt.Errorf("%w: %s (%s): %w", ErrPolicy, rep.AgentID, t.plan.info.Policies[i], err))
		}
		a.keep(&raw)
		a.sinceAct, a.acted = 0, true
		if len(t.ledger.unsent) > 0 {
			if err := t.flushRetro(); err != nil {
				return err
			}
		}
		t.where = whereStep
		turn, err = t.env.Step(rep.AgentID, raw)
		t.where = whereRunner
		if err != nil {
			return t.fail(fmt.Errorf("%w: %w", ErrEnv, err))
		}
		t.tick = turn.Tick
		t.publish()
		if err := t.watched(); err != nil {
			return err
		}
		if t.talks {
			if err := t.exchange(turn.Tick - 1); err != nil {
				return err
			}
		}
		cut = !turn.Over && t.plan.spec.MaxTicks > 0 && turn.Tick >= t.plan.spec.MaxTicks
		if err := t.report(&turn, cut); err != nil {
			return err
		}
		if cut {
			break
		}
	}
	return t.end(&turn, cut)
}

// begin opens episode e in the ledger, the mailbox and the result.
func (t *trial) begin(e int, seed uint64) {
	t.episode, t.tick = e, -1
	for i := range t.agents {
		t.agents[i].sinceAct, t.agents[i].acted = 0, false
	}
	t.ledger.begin(e)
	t.mail.begin()
	t.result.Episodes = append(t.result.Episodes, EpisodeResult{Seed: seed})
	t.result.Totals.Episodes++
	if t.window > 0 && len(t.result.Episodes) >= 2*t.window {
		t.trim()
	}
}

// trim keeps the last window episodes of the result, and their returns in the ledger.
func (t *trial) trim() {
	eps := t.result.Episodes
	k := len(eps) - t.window
	if k <= 0 {
		return
	}
	copy(eps, eps[k:])
	clear(eps[t.window:])
	t.result.Episodes = eps[:t.window]
	t.result.FirstEpisode += k
	t.ledger.forget(t.result.FirstEpisode)
}

// publish makes the trial's position visible to the controller.
func (t *trial) publish() {
	if t.pos != nil {
		tick := max(t.tick, 0)
		t.pos.Store(uint64(t.episode)<<32 | uint64(uint32(tick)))
	}
}

// interact asks agent i's Interactor for its action on rep.
func (t *trial) interact(i int, rep *env.Report, turn *env.Turn) (agent.RawAction, error) {
	t.x.agent, t.x.id, t.x.tick, t.x.turn = i, rep.AgentID, turn.Tick, *turn
	raw, err := t.agents[i].inter.Interact(t.ctx, &t.x, rep.Obs, rep.Mask)
	t.x.turn = env.Turn{} // not kept past the call
	t.mail.empty(i)
	return raw, err
}

// keep copies the agent's action into its own buffers: the policy may reuse the
// action's slices.
func (a *agentState) keep(raw *agent.RawAction) {
	a.last.Int = raw.Int
	a.last.Ints, a.last.Floats = nil, nil
	if raw.Ints != nil {
		a.ints = append(a.ints[:0], raw.Ints...)
		a.last.Ints = a.ints
	}
	if raw.Floats != nil {
		a.floats = append(a.floats[:0], raw.Floats...)
		a.last.Floats = a.floats
	}
}

// exchange collects the environment's outgoing messages, sent at tick sent, and
// delivers every message sent at the previous tick: at the reset, those of the
// environment's Reset.
func (t *trial) exchange(sent int) error {
	if t.msgr != nil {
		t.where = whereMessenger
		for _, m := range t.msgr.Outbox() {
			if m.To == event.EnvAddress {
				return t.fail(fmt.Errorf("%w: the environment sent a message to itself", ErrReceiver))
			}
			if err := t.checkReceiver(m.To); err != nil {
				return t.fail(err)
			}
			t.mail.send(event.EnvAddress, m.To, m.Payload, sent)
		}
		t.where = whereRunner
	}
	for _, m := range t.mail.deliver() {
		if m.To == event.EnvAddress {
			t.where = whereMessenger
			t.msgr.Receive(m)
			t.where = whereRunner
			continue
		}
		if i := t.index(m.To); i >= 0 && t.agents[i].inter != nil {
			t.mail.post(i, m)
		}
	}
	return nil
}

// report accounts for every report of a turn and sends the step events. cut marks the
// turn at which the runner stops the episode.
func (t *trial) report(turn *env.Turn, cut bool) error {
	for k := range turn.Reports {
		rep := &turn.Reports[k]
		i := t.index(rep.Agent)
		if i < 0 {
			return t.fail(fmt.Errorf("%w: reported agent %s is not one of its agents", ErrEnv, rep.AgentID))
		}
		truncated := rep.Truncated || cut && !rep.Terminated
		total, sources := t.ledger.settle(i, rep.AgentID, rep.Reward, turn.Tick, rep.Terminated || truncated)
		t.agents[i].sinceAct += total
		if t.agents[i].learner != nil {
			if err := t.learnStep(i, turn.Tick, rep, total, sources, truncated); err != nil {
				return err
			}
		}
		if t.sink == nil {
			continue
		}
		// Field by field: every field is set, and the event is not built and copied.
		s := &t.step
		s.Episode, s.Tick, s.Index = t.episode, turn.Tick, k
		s.Agent, s.AgentID, s.ParentID = rep.Agent, rep.AgentID, rep.ParentID
		s.Start, s.Acting = rep.Start, !cut && !turn.Over && rep.AgentID == turn.Next
		s.Obs, s.Mask = rep.Obs, rep.Mask
		if rep.Start {
			s.Action = agent.RawAction{}
		} else {
			s.Action = t.agents[i].last
		}
		s.Reward, s.Sources = total, sources
		s.Terminated, s.Truncated, s.SpanTicks = rep.Terminated, truncated, rep.SpanTicks
		s.Messages = t.mail.current()
		t.ev = event.Event{Kind: event.KindStep, Trial: t.id, Step: s}
		if err := t.emit(); err != nil {
			return err
		}
	}
	return nil
}

// end closes an episode that reached its end.
func (t *trial) end(turn *env.Turn, cut bool) error {
	t.ledger.unpend(max(t.tick, 0))
	er := &t.result.Episodes[t.episode-t.result.FirstEpisode]
	er.Ticks, er.Complete, er.Truncated = turn.Tick, true, cut
	t.result.Totals.Complete++
	t.result.Steps += int64(turn.Tick)
	if t.steps != nil {
		t.steps.Add(int64(turn.Tick))
	}
	if t.success != nil {
		t.where = whereSuccess
		er.Success = t.success(*turn)
		t.where = whereRunner
		if er.Success {
			t.result.Totals.Successes++
		}
	}
	if ms := t.plan.open.entry.Metrics; len(ms) > 0 {
		er.Metrics = make([]float64, len(ms))
		for i, m := range ms {
			t.where, t.whereID = whereMetric, m.Name
			v, ok := m.Value(*turn)
			if !ok {
				v = math.NaN()
			}
			er.Metrics[i] = v
		}
		t.where = whereRunner
	}
	if err := t.flushRetro(); err != nil {
		return err
	}
	if t.onEpisode != nil {
		e := *er
		e.Returns, e.Metrics = slices.Clone(t.ledger.returns(t.episode)), slices.Clone(er.Metrics)
		t.onEpisode(e)
	}
	if t.learns {
		if err := t.learnEnd(er.Ticks, cut); err != nil {
			return err
		}
	}
	if t.sink == nil {
		return nil
	}
	t.epEv = event.EpisodeEvent{Episode: t.episode, Seed: er.Seed, End: true, Ticks: er.Ticks, Truncated: cut, Success: er.Success, Returns: t.ledger.returns(t.episode), Metrics: er.Metrics}
	t.ev = event.Event{Kind: event.KindEpisode, Trial: t.id, Episode: &t.epEv}
	return t.emit()
}

// reward gives value from source to agent id, as the ledger's address does, at the
// current tick.
func (t *trial) reward(id, source string, value float64) error {
	return t.ledger.address(id, source, value, max(t.tick, 0))
}

// flushRetro sends the retroactive rewards received since the last flush to the
// Learners of their agents and to the sinks.
func (t *trial) flushRetro() error {
	defer t.ledger.sent()
	if t.learns {
		for k := range t.ledger.unsent {
			if err := t.learnRetro(&t.ledger.unsent[k]); err != nil {
				return err
			}
		}
	}
	if t.sink == nil {
		return nil
	}
	for _, r := range t.ledger.unsent {
		t.retroE = r
		t.ev = event.Event{Kind: event.KindReward, Trial: t.id, Reward: &t.retroE}
		if err := t.emit(); err != nil {
			return err
		}
	}
	return nil
}

// drain applies the outside rewards queued by the controller.
func (t *trial) drain() error {
	t.fbuf = t.feed.take(t.fbuf[:0], false)
	for _, f := range t.fbuf {
		t.ledger.feedback(f, max(t.tick, 0))
	}
	clear(t.fbuf)
	return t.flushRetro()
}

func (t *trial) emit() error {
	prev := t.where
	t.where = whereSink
	err := t.sink.Handle(t.ctx, &t.ev)
	t.where = prev
	if err != nil {
		t.failed = true
		return t.fail(fmt.Errorf("%w: %w", ErrSink, err))
	}
	return nil
}

func (t *trial) emitState(s event.State, err error) error {
	if t.sink == nil {
		return nil
	}
	t.state = event.StateChange{Trial: t.id, State: s, Err: err, Info: t.plan.info}
	t.ev = event.Event{Kind: event.KindState, Trial: t.id, State: &t.state}
	return t.emit()
}

// finish closes the trial after err (nil when it ended) and sends its final state.
func (t *trial) finish(err error) Result {
	state := event.Ended
	if err != nil {
		state = event.Failed
		var pe *PanicError
		switch {
		case errors.As(err, &pe) || t.failed:
		case t.ctx.Err() != nil:
			state, err = event.Stopped, context.Cause(t.ctx)
		case t.where == wherePolicy && errors.Is(err, ErrStopped):
			state = event.Stopped // the policy stopped the trial: a person who quit
		}
	}
	if t.feed != nil {
		t.fbuf = t.feed.take(t.fbuf[:0], true)
		if len(t.result.Episodes) > 0 {
			for _, f := range t.fbuf {
				t.ledger.feedback(f, max(t.tick, 0))
			}
		}
	}
	if n := len(t.result.Episodes); n > 0 {
		t.ledger.unpend(max(t.tick, 0))
		if last := &t.result.Episodes[n-1]; !last.Complete {
			last.Ticks = max(t.tick, 0)
			t.result.Steps += int64(last.Ticks)
			if t.steps != nil {
				t.steps.Add(int64(last.Ticks))
			}
		}
	}
	if !t.failed && state != event.Failed && len(t.ledger.unsent) > 0 {
		if ferr := t.guard(t.flushRetro); ferr != nil && state == event.Ended {
			state, err = event.Failed, ferr
		}
	}
	t.ledger.sent()
	if t.window > 0 {
		t.trim()
	}
	t.result.Retro = t.ledger.received
	for e := range t.result.Episodes {
		t.result.Episodes[e].Returns = t.ledger.returns(t.result.FirstEpisode + e)
	}
	if t.result.Totals.Episodes > 0 {
		t.result.Totals.Returns = t.ledger.totals()
	}
	if t.sink != nil {
		serr := t.guard(func() error { return t.emitState(state, err) })
		if serr != nil && state == event.Ended && !t.failed {
			state, err = event.Failed, serr
		}
	}
	t.result.State, t.result.Err = state, err
	return t.result
}

func (t *trial) index(name string) int {
	for i := range t.agents {
		if t.agents[i].name == name {
			return i
		}
	}
	return -1
}

func (t *trial) names() []string {
	names := make([]string, len(t.agents))
	for i := range t.agents {
		names[i] = t.agents[i].name
	}
	return names
}
