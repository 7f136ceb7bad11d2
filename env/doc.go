// Package env defines baton's plain environment interfaces, single-agent and
// multi-agent, the conversions between them, and wrappers that add behaviour to any
// environment.
//
// What you touch here: implement Env (single agent), MultiAgent (agents taking turns)
// or Parallel (agents moving at once) for an environment that is not hierarchical, and
// Renderer to draw it for people; call the wrappers (TimeLimit, EpisodeStats, ...),
// NewView, Sequential and As. Spec, Step, Turn, Report and StepError are the contract
// every environment and runner shares, the hierarchical runtime (package hrl) included;
// env imports nothing above it.
//
// # Single-agent environments
//
// Env has Gymnasium's semantics. Reset(seed) starts an episode and returns its first
// Step (the observation, the action mask if any, reward 0); Step(action) applies one
// raw action and returns the next observation, the reward, and whether the episode
// terminated (a natural end) or was truncated (a limit cut it short), reported apart so
// that a learner bootstraps from a truncated episode's last observation and not from a
// terminated one's. After the episode ends, Step fails until the next Reset. The same
// seed gives the same episode.
//
// # Multi-agent environments
//
// MultiAgent is the turn-taking form, PettingZoo's AEC API: after Reset and each Step,
// Turn.Next names the agent id that acts next and Turn.Reports lists every agent whose
// observation, reward or end is new; Turn.Acting returns the report of the agent asked to
// act. Agent ids are "<name>_<k>", one per sub-episode of an agent. A rejected step is a
// *StepError whose Kind is one of this package's sentinels. These types are the
// contract every multi-agent environment meets: package hrl builds on them
// (*hrl.Runtime is a MultiAgent), and env imports no package above it.
//
// Reset returns an error as Step does: an environment in another process (remote.Env)
// may be unreachable or refuse, a single-agent environment behind an adapter may fail
// its own Reset. The error comes back from the call that failed, never later from
// elsewhere, and a runner fails the trial with it. Neither Reset nor Step takes a
// context.Context: neither blocks on anything to cancel, and an environment that
// crosses a process bounds each call with its own deadline.
//
// Agents that move simultaneously, PettingZoo's parallel API, implement Parallel: Reset
// and Step return a Round with one report per agent, and Step takes one action per live
// agent, positionally, so that nothing is allocated. Sequential turns a Parallel into a
// MultiAgent, as PettingZoo's parallel_to_aec does: it asks the live agents one after
// the other, keeps their actions and steps the parallel environment when the last one
// is in. The Turn after an agent that is not the last repeats the next agent's
// observation with SpanTicks 0 and Tick unchanged: nothing new happened.
//
// # One agent of many, as an Env
//
// NewView presents one agent of a MultiAgent as an Env, so a single-agent learner can
// train it while policies (scripted, random, a trained model, a remote agent) drive the
// other agents. Each sub-episode of the agent is one episode of the view; a parent
// agent's step covers the whole span its child runs, rewarded when control returns to
// it, and View.SpanTicks says how many ticks that was. View documents how Reset goes on
// with the underlying episode and how it seeds the underlying resets (DeriveSeed).
//
// # Seeds
//
// DeriveSeed is baton's one derivation of a sequence of seeds from one seed (SplitMix64):
// View seeds its underlying resets with it, package runners its trials and episodes,
// and package vector its copies' episodes (vector.EpisodeSeed). Logs are replayed from
// the seeds it gives, so its values never change.
//
// # Wrappers
//
// A wrapper is an environment that holds another and adds one behaviour, as net/http
// middleware wraps a Handler: TimeLimit truncates long episodes, EpisodeStats records
// each episode's return and length, ActionMaskInfo copies the action mask into Info.
// The multi-agent counterparts are EpisodeStatsMulti and, for simultaneous agents,
// TimeLimitParallel (a turn-taking environment limits its own episodes, as
// hrl.Config.MaxTicks does); Scramble permutes every agent's discrete actions and
// observation features by a seed (CommAI's scrambled mode). They compose by wrapping; the outermost wrapper sees the
// effects of the inner ones:
//
//	e := env.EpisodeStats(env.TimeLimit(inner, 200)) // returns include truncated episodes
//
// Every wrapper keeps the inner environment's error semantics: an error from the inner
// environment is returned as it is and leaves both the inner environment and the
// wrapper as they were. Each has an Unwrap method returning the inner environment, and
// As finds an environment of a given type in the chain, as errors.As does:
//
//	stats, ok := env.As[*env.Stats](e)
//
// Wrappers that add to Info return a map[string]any, Gymnasium's info dict: the inner
// Info's entries if it is such a map, or the inner Info under InfoKeyEnv otherwise, plus
// their own keys (InfoKeyEpisode, InfoKeyActionMask).
//
// # Buffers
//
// The Obs and Mask of a Step, and the slices of a Turn or Round and of their reports,
// belong to the environment and stay valid until its next Reset or Step, which may
// overwrite them: copy what must live longer. A wrapper passes the inner environment's
// buffers through; View copies the viewed agent's observation and mask into buffers of
// its own, because it steps the underlying environment again before returning. Actions
// passed to Step are not retained: Sequential copies the actions it keeps.
//
// # Drawing for people
//
// An environment that can show its state to people implements Renderer: Render
// returns a Frame, the state as text for a terminal, as data that a web page draws
// (Scene, its JSON) and, optionally, as an SVG picture. Displays find it with As, so
// that adapters which unwrap (Sequential, registry.SingleAgent) pass it on; the state
// of a hierarchical environment can implement it too, and a registry entry then
// draws the runtime's state (registry.RenderState). Package env/raster draws a Frame
// as pixels (its SVG picture, else its text), which Gymnasium's render_mode
// "rgb_array" returns from Python.
//
// # Concurrency
//
// No environment or wrapper of this package is safe for concurrent use: run one per
// goroutine (a vector of environments steps many). None starts a goroutine, and the
// step paths allocate nothing in steady state when the inner environments and policies
// do not; Info may allocate and is not meant for the step path. View is the only type
// that keeps a context.Context: it passes it to the policies it calls.
package env
