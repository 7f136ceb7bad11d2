// Package hrl runs hierarchical environments: several typed agents share one
// environment state and pass control to each other by rules (package transitions).
//
// What you touch here: implement HierarchicalEnv (and optionally Informer), with each
// agent wrapped by Bind; call New, then Reset and Step on the Runtime, and Obs for an
// agent's typed observation. The results are env's types (env.Turn, env.Report,
// env.StepError): a Runtime is an env.MultiAgent.
//
// # What a user writes
//
// An environment implements HierarchicalEnv[S, A]: its agents, each an
// agent.Agent[S, AS, O, R, A] erased by Bind; its transitions.Machine; InitialState; and
// Step, which applies a decoded action to the state. Everything is a pure function of
// its arguments, so a Runtime is deterministic: the same seed and actions give the same
// trajectory, and an episode can be replayed from a log.
//
// # Stepping
//
// New validates the environment (agents and machine, every problem at once) and returns
// a Runtime. Reset(seed) starts an episode (its error is always nil, there for
// env.MultiAgent); Step(agentID, rawAction) applies an action of the acting agent. Each
// returns an env.Turn listing every agent reported in the step with its flat observation,
// reward, terminated and truncated flags, parent id and span:
//
//   - normally one report: the acting agent after its action;
//   - when an action fires a trigger that hands control to a child, the child's first
//     observation (Start set; the parent is not reported until control returns);
//   - when a sub-episode ends, the finishing agent, then the agent that takes control:
//     the parent, settled with the reward for its whole decision (its view when it
//     acted, its action, its view now) and SpanTicks, the length of that decision in
//     environment steps, so a trainer can discount by gamma^SpanTicks;
//   - when a child returns control at once (see below), its one report, Start and
//     done, then the agent that takes control after it.
//
// The episode is over when every agent reported in a step is done. Config.MaxTicks
// truncates episodes: every agent in control is reported truncated.
//
// Agent ids are "<name>_<k>", k counting the sub-episodes of that agent ended in this
// episode: a maze strategy agent stays strategy_0 while its motion agent is motion_0,
// motion_1, and so on.
//
// # A sub-episode takes at least one action
//
// The runtime asks an agent's Done after each of its actions, never before the first:
// a sub-episode takes at least one action, as in the reference maze. A child that is
// already done when it takes control (a walker sent to the tile it stands on) is
// reported with its first observation, not done, and acts; its Done is asked again only
// after that action, so the walker steps away and back and its parent's reward scores
// the detour. There are two remedies:
//
//   - the parent does not hand control to a child that is done: its DecodeAction
//     refuses the action (the step fails with env.ErrInvalidAction and nothing changes), and
//     its action mask rules the action out so that policies do not pick it (a mask
//     alone is advice: a policy may still play the action);
//   - the child implements agent.AtOnceReturner. The runtime then asks its Done in its
//     first view, after its OnTakesControl, whenever a trigger or the on-done table
//     hands it control, and if it is done ends its sub-episode at once: in the same
//     step, it is reported once (Start set, done, reward 0, SpanTicks 0), gives control
//     (OnGivesControl), counts as a sub-episode in its agent ids, and the on-done table
//     passes control on. A parent that handed control to it is settled in the same step
//     with SpanTicks 1, the tick of its own action (its Reward sees its view when it
//     acted and its view after the child gave control), and acts next: a parent that picks
//     the same child again does so at its next decision, in a new step. An agent
//     returns at once at most once a step (the second time the on-done table hands it
//     control in the same step, it acts), so an on-done cycle of such agents ends; the
//     initial agent always acts after a reset, so an episode is never over at its start.
//
// hrltest.Check reports an agent that is done when it takes control and does not return
// at once, naming the agent, the tick and the action that handed it control.
//
// # Errors
//
// Step never panics on bad input and never changes the state when it fails: an action
// from an agent that is not acting, outside the action space, rejected by DecodeAction,
// by the environment or by a procedure, or a switching action that matches no trigger,
// returns an *env.StepError naming the agent id, the action and the reason; errors.Is
// matches the sentinel (env.ErrNotActing, env.ErrOutsideSpace, ..., and this package's
// ErrNoTrigger and ErrInControl) and the underlying cause.
//
// # Performance
//
// The step path allocates nothing in steady state: observations are written into
// buffers the runtime owns (valid until the next Step or Reset), agent ids are built
// once, hooks are found at bind time. Each view is translated once: the view an agent
// is reported in (TranslateState at its report's clock) is the view its next action is
// decoded in, since nothing changes the state or its clock in between, so the runtime
// relies on TranslateState being a pure function of its arguments, as agent.Agent
// requires. Agents that no trigger leaves are not matched against the triggers. The
// typed accessor Obs returns an agent's own observation type for code off the hot path.
//
// hrl is part of baton's pure core: no goroutines, no I/O, no clock, no global state.
// A Runtime is not safe for concurrent use; HierarchicalEnv values and Bindings that hold
// configuration only may be shared.
package hrl
