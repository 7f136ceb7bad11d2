// Package runners runs trials of baton environments: actors bound to policies, the
// trial loop, the events it sends to sinks, rewards from several sources, messages
// between actors and the environment, a controller that starts, watches, rewards and
// stops trials, and campaigns of many trials on a bounded pool of goroutines.
//
// What you touch here: call NewCampaign and NewController to run trials, with a
// registry.Registry of environments; implement Interactor, Messenger or Learner for a
// policy that does more than act. ParseSchedule and Schedule are the curricula that
// baton run --schedule and Python's baton.schedule take.
//
// # What lives here, and what does not
//
// runners holds the trial loop and what drives it: Spec, Result, the
// Controller, Campaign, Schedule (curricula), and the interfaces a policy or an
// environment implements to take part in a trial beyond acting (Interactor and its
// Exchange, Messenger, Learner and its Outcome, Attended). What an environment's
// author registers (Entry, Factory, Look, the Registry) is package registry; what a
// trial tells its sinks (Event, Sink, the trial's State, Message) is package event.
// Code that only describes environments or only consumes events imports those small
// packages and not this one.
//
// # Trials
//
// A Spec names the environment, its configuration, the policy of each agent (Actors:
// a registered policy by Named, a policy value by Value, or one built per trial by
// PerTrial; agents left out play their default), the seed, the number of episodes and
// a tick limit. Swapping a learned agent for a scripted one is a change of the Spec.
//
// A trial plays its episodes in one goroutine: it resets the environment with the
// episode's seed, asks the acting agent's policy for an action (passing the trial's
// context), steps, and reports every agent of every step, until the episode is over.
// Seeds derive deterministically (env.DeriveSeed, SplitMix64): episode e of a trial
// of seed s resets with env.DeriveSeed(s, e), and agent i of the environment draws
// from rand.New(rand.NewPCG(s, i)) for the whole trial, so
// the first episode of a trial of seed s is `baton play --seed s`. Trial i of a
// campaign of seed s has the seed env.DeriveSeed(s, i).
//
// A trial is Pending, then Running, then Ended, Stopped (cancelled, or stopped by a
// policy whose error wraps ErrStopped: a person who quits) or Failed (event.State). A panic
// in user code (a policy, the environment, a sink, a hook) is recovered into a failed
// trial whose *PanicError carries the panic value and the stack; an error from user
// code fails the trial too (*TrialError says where). Either way, other trials go on.
//
// # Events and sinks
//
// With sinks (WithSinks, WithWorkerSinks), a trial sends them an event.Event for each
// state change, each episode's beginning and end, each agent reported in each step and
// each retroactive reward (package event describes them). Events of a trial come in
// order from its goroutine; a sink's error fails the trial (ErrSink). Without sinks,
// events are not built at all.
//
// # Rewards
//
// A step's reward is the sum of its sources: the environment's reward (event.SourceEnv,
// always listed first), rewards from other actors (an Interactor's Exchange.Reward,
// source "actor:NAME", or Exchange.RewardAs with a source of the actor's: a client
// actor marks the steps of its default actions with a zero reward of source
// "default"), and outside feedback through Controller.Reward (a person or a
// script, with a source of its choice). A reward for a live agent id goes to its next
// step. A reward for a step already reported (a past tick, or an agent id whose
// sub-episode has ended) is retroactive: the step's event is gone, so an event.KindReward
// event addresses the step by episode, tick and agent id; the trial keeps it in
// Result.Retro and adds it to the episode's return. An episode's return for an agent
// name is the sum of the rewards of all the reports of that name in the episode, every
// source and retroactive reward included.
//
// # Messages
//
// Actors that implement Interactor get an Exchange on each call: the messages
// delivered to their agent (Inbox), Send to another agent by name or to the
// environment (EnvAddress), and Reward. An environment that implements Messenger
// receives the messages addressed to it and sends its own. A message sent at tick t is
// delivered at tick t+1 and listed in the step events of that tick. An Exchange also
// shows the actor the trial's environment drawn for people (Exchange.Frame, by the
// entry's Look) and names its actions (Exchange.ActionName), with the acting agent's
// spec (Exchange.Spec): package human's policy, a person in an agent's place, shows
// both before asking, and remote's client actors send both to their clients. The hrl runtime
// hides the hierarchical environment: to exchange messages, wrap the runtime in a type
// that implements Messenger.
//
// # Online learning
//
// A policy that implements Learner is told what came of what it did, as it happens,
// for every agent id it acts for: after each report of the id, an Outcome of kind
// OutcomeStep with the step's total reward and its sources, the end flags, the span in
// ticks and the next observation and mask (Start marks the report that opens the
// sub-episode, Last the one that ends it, told once); each retroactive reward for one
// of its steps as it arrives (OutcomeRetro, with the episode and tick of the step it
// rewards); and the end of each complete episode (OutcomeEpisodeEnd, once per agent).
// The outcomes carry what the step events carry, with or without sinks. The runner
// finds Learner once, when it binds the trial's policies: a trial whose policies are
// not Learners does no work for it, and telling one allocates nothing per step. An
// Outcome and its slices are valid only during Learn. An error from Learn fails the
// trial as a policy's error does (ErrPolicy); a panic in it is recovered as one.
//
// # Controller and campaigns
//
// A Controller runs trials in the background on at most WithWorkers goroutines: Start
// queues a trial and returns its id (StartCampaign queues K trials of one spec, all or
// none), Watch iterates over its state changes as they happen (WatchMany over those of
// many trials, with no goroutine per trial), Reward sends outside feedback, Stop
// cancels it, Wait returns its Result, List shows every trial (ListAfter a page of
// them; Status one, with what a pending one waits for); Shutdown stops everything and
// waits for the workers. A trial whose policy waits for a person (Attended) runs on a
// goroutine of its own, so that people who take their time hold no worker.
//
// A long-lived Controller holds bounded memory whatever it is asked: at most
// WithMaxLive trials pending or running (a Start past it fails with ErrFull and starts
// nothing), the WithKeepFinished trials that finished last (older ones are forgotten;
// their steps and results are in the sinks, an activity log), and the last
// WithEpisodeWindow episodes of each trial, with every episode summed up in
// Result.Totals.
//
// A Campaign runs K trials (WithTrials) of one spec on W workers (WithWorkers), with
// pre-trial hooks that may change each trial's spec (WithPreTrial), progress callbacks
// (WithProgress), and cancellation through the context of Run, which stops running
// trials promptly and leaves no goroutine behind. Run returns a Summary: trials,
// episodes, environment steps, wall time and steps per second, the success rate where
// the environment defines success, and each agent's episode returns (mean, population
// standard deviation, minimum, maximum, with gonum/stat). The same seed gives the same
// summary, apart from the timing, whatever the number of workers.
//
// # Schedules
//
// A Schedule is a curriculum: a list of Tasks (an environment, its configuration, the
// policies of its agents, a name) taken in an Order. WithSchedule makes a campaign
// play trial i on the task the schedule picks for it, with Spec.Task set to the
// task's name (event.TrialInfo.Task carries it to sinks and the activity log), and its
// Summary then sums up each task (Tasks) and lists the tasks in the order the trials
// took them (Runs). ParseSchedule reads the JSON form that baton run --schedule takes;
// problems come back all at once as *ScheduleError values naming the task and the
// field (ErrSchedule).
//
// InOrder plays each task for its count of trials. AtRandom draws trial i's task by
// the weights from the trial's seed alone (RandomTask). BySuccess begins with the
// first task and promotes the learner to the next one when its success rate passes a
// threshold (Promotion), and may demote it. A trial succeeds when the mean of a
// Criterion's metric over its complete episodes (the environment's success, one of its
// metrics, or an agent's return) reaches the criterion's minimum.
//
// Promotion is deterministic whatever the number of workers: the trials are cut into
// windows of Promotion.Window consecutive trial indices; every trial of a window plays
// the same task, and once all of them have ended their success rate, counted in trial
// order, decides the next window's task (Promote). A worker that claims the first trial
// of a window waits until the window before it is decided (or the campaign's context
// is done), so at a window's end the campaign runs at most the slowest trial of the
// window. The Python baton.schedule module reads the same JSON and applies the same
// rules to a training loop.
//
// # Concurrency and performance
//
// Campaign and Controller are safe for concurrent use; Exchange and the
// events are valid only during the call that receives them. Sinks shared by trials
// that run at once must be safe for concurrent use; a worker sink sees one trial at a
// time. A trial's step path allocates nothing in steady state, with or without sinks;
// a campaign's worker reuses the environment, the trial's buffers and the policies'
// generators from one trial to the next (a policy must not keep the generator it was
// built with beyond its trial).
package runners
