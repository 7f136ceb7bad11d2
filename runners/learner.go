package runners

import (
	"context"
	"fmt"
	"github.com/batonrl/baton/event"

	"github.com/batonrl/baton/env"
)

//go:generate go tool stringer -type=OutcomeKind -linecomment

// Learner is implemented by policies that learn online: after the trial settles a step
// of an agent id they act for, it tells them what came of it. The runner finds it once,
// when it builds the trial, next to Interactor; a trial whose policies are not Learners
// does no work for it. An error from Learn fails the trial as an error of Act does
// (ErrPolicy); a panic in it is recovered as one in Act is.
//
// o and its slices (Sources, Obs, Mask) belong to the trial and are valid only during
// the call: copy what must outlive it.
type Learner interface {
	Learn(ctx context.Context, o *Outcome) error
}

// LearnerFunc adapts a function to a Learner.
type LearnerFunc func(ctx context.Context, o *Outcome) error

// Learn calls f.
func (f LearnerFunc) Learn(ctx context.Context, o *Outcome) error { return f(ctx, o) }

// OutcomeKind says what an Outcome tells.
type OutcomeKind uint8

// The kinds of outcome.
const (
	// OutcomeStep: the environment reported the agent id (Tick, Reward, Sources,
	// Terminated, Truncated, SpanTicks, Obs, Mask, Start, Last are set). A Start
	// report opens the id's sub-episode; its reward is that of the reset or of the
	// parent's step that started it.
	OutcomeStep OutcomeKind = iota + 1 // step
	// OutcomeRetro: a retroactive reward arrived for a past step of the agent id:
	// Tick and RetroEpisode address that step, Reward and Sources (one source) give the
	// reward, ArrivedTick says when it arrived.
	OutcomeRetro // retro
	// OutcomeEpisodeEnd: the episode ended (by the environment or at the tick limit;
	// Truncated says the latter), told once per agent of the policy, after the
	// episode's steps and the retroactive rewards received in it; Tick is the
	// episode's length. An episode cut short by a stop or a failure is not told.
	// Outside feedback (Controller.Reward) for the episode may still arrive after it,
	// as OutcomeRetro.
	OutcomeEpisodeEnd // episode end
)

// Outcome is what a Learner is told. The fields a kind does not set are zero.
type Outcome struct {
	Kind OutcomeKind
	// Trial is the trial's id; Episode the episode, counted from 0, the outcome
	// arrives in; Tick the tick it tells of (see the kinds).
	Trial   string
	Episode int
	Tick    int
	// Agent is the agent's name, AgentID the id of the sub-episode ("" for
	// OutcomeEpisodeEnd).
	Agent, AgentID string
	// Reward is the step's total reward (every source included), or the retroactive
	// reward; Sources its parts, the environment's first for a step.
	Reward  float64
	Sources []event.RewardSource
	// Terminated and Truncated are the report's flags (Truncated also at the
	// runner's tick limit).
	Terminated, Truncated bool
	// Start marks the report that opens the sub-episode; Last the one that ends it
	// (Terminated or Truncated): it is the id's last report, told once. An id that
	// the episode's end leaves without such a report (the runner's tick limit cuts
	// the agents reported at its tick, not those waiting for a sub-agent) ends with
	// the episode: OutcomeEpisodeEnd.
	Start, Last bool
	// SpanTicks is how many environment ticks the step took.
	SpanTicks int
	// Obs and Mask are the next observation and action mask of the agent id (Mask
	// nil when the agent has none).
	Obs  []float32
	Mask []bool
	// RetroEpisode is the episode of the step an OutcomeRetro rewards; ArrivedTick
	// the tick of Episode it arrived at.
	RetroEpisode, ArrivedTick int
}

// learn tells agent i's Learner o, as the policy's user code.
func (t *trial) learn(i int, id string) error {
	prev := t.where
	t.where, t.whereID = wherePolicy, id
	err := t.agents[i].learner.Learn(t.ctx, &t.out)
	t.where = prev
	if err != nil {
		return t.fail(fmt.Errorf("%w: %s (%s): learn: %w", ErrPolicy, id, t.plan.info.Policies[i], err))
	}
	return nil
}

// learnStep tells agent i's Learner of its report rep at tick, settled with the total
// reward and its sources; truncated includes the runner's cut.
func (t *trial) learnStep(i, tick int, rep *env.Report, total float64, sources []event.RewardSource, truncated bool) error {
	t.out = Outcome{
		Kind: OutcomeStep, Trial: t.id, Episode: t.episode, Tick: tick,
		Agent: t.agents[i].name, AgentID: rep.AgentID, Reward: total, Sources: sources,
		Terminated: rep.Terminated, Truncated: truncated, Start: rep.Start, Last: rep.Terminated || truncated,
		SpanTicks: rep.SpanTicks, Obs: rep.Obs, Mask: rep.Mask,
	}
	return t.learn(i, rep.AgentID)
}

// learnRetro tells the Learner of the rewarded agent of a retroactive reward.
func (t *trial) learnRetro(r *event.RetroReward) error {
	i := t.index(r.Agent)
	if i < 0 || t.agents[i].learner == nil {
		return nil
	}
	t.outSrc[0] = event.RewardSource{Source: r.Source, Value: r.Value}
	t.out = Outcome{
		Kind: OutcomeRetro, Trial: t.id, Episode: r.ArrivedEpisode, Tick: r.Tick,
		Agent: r.Agent, AgentID: r.AgentID, Reward: r.Value, Sources: t.outSrc[:],
		RetroEpisode: r.Episode, ArrivedTick: r.ArrivedTick,
	}
	return t.learn(i, r.AgentID)
}

// learnEnd tells every Learner of the end of the episode.
func (t *trial) learnEnd(ticks int, cut bool) error {
	for i := range t.agents {
		if t.agents[i].learner == nil {
			continue
		}
		t.out = Outcome{Kind: OutcomeEpisodeEnd, Trial: t.id, Episode: t.episode, Tick: ticks, Agent: t.agents[i].name, Truncated: cut}
		if err := t.learn(i, t.agents[i].name); err != nil {
			return err
		}
	}
	return nil
}
