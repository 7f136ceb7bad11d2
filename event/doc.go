// Package event is what a trial tells the world as it runs, and the interface of
// whatever listens: the Event values a trial sends and the Sink that receives them.
// A sink's author (an activity log, metrics, a progress display, a user's callback)
// implements Sink, or adapts a function with SinkFunc, and reads events; the
// runner (package runners) sends them. datalog's writer, telemetry's metrics and
// remote's watchers are sinks, and depend on this package, not on the runner.
//
// # Events
//
// A trial sends its sinks an Event for each state change (KindState; the Running one
// carries a TrialInfo: the agents' spaces, the policies, the seed and the
// configuration), each episode's beginning and end (KindEpisode; the end has the
// episode's length, success and returns), each agent reported in each step (KindStep:
// one StepEvent per env.Report, with the observation, the mask, the raw action that
// its reward scores, the reward and its sources, the end flags, the span in ticks and
// the messages delivered at that tick) and each retroactive reward (KindReward). A
// transition of an agent is two consecutive step events of its agent id.
//
// A trial is Pending, then Running, then Ended, Stopped or Failed (State); a
// StateChange is one step of that, as sinks see it and runners.Controller.Watch
// yields it. A Message is what actors and the environment exchange during a trial,
// delivered a tick after it is sent and listed in that tick's step events.
//
// # What a sink may do
//
// Events of a trial come in order from its goroutine; an Event and its slices are
// borrowed and must not be retained after Handle returns (Event.Clone copies one). A
// sink's error fails the trial, and so does a panic. A sink shared by trials that run
// at once must be safe for concurrent use. Everything in this package may be used;
// a sink implements Sink and nothing else.
//
// # Layering
//
// event imports the core (agent, env) only: a log, a metric or a display built on
// events does not depend on the thing that runs trials.
package event
