// Package telemetry counts what baton's servers and trials do, for operators, as
// Prometheus metrics (the client_golang library and its text exposition format).
//
// What you touch here: call New, give the Metrics to servers (remote.WithMetrics) and
// its Sink to campaigns, and serve its Handler; implement nothing.
//
// # What is counted
//
// A Metrics value holds the collectors below, in a registry of its own with the Go
// runtime's and the process's collectors:
//
//	baton_trials{state}                      trials in each state (pending, running, ended, stopped, failed)
//	baton_env_steps_total{source}            environment steps: "env" (EnvService), "trial" (trials run here)
//	baton_actions_total{source}              actions chosen: "agent" (AgentService), "trial" (decisions scored in trials)
//	baton_act_duration_seconds{method}       how long an agent took to answer (Act, ActStream, ActBatch)
//	baton_step_duration_seconds{method}      how long an environment step took (Step, StepBatch)
//	baton_rpc_errors_total{method,code}      calls that failed, by gRPC code name
//	baton_open_sessions                      environment sessions open (Make and MakeBatch)
//	baton_feedback_messages_total            feedback messages an agent server received
//	baton_log_rows_total, baton_log_bytes_total  rows and bytes written to Arrow activity logs
//
// A rate over a counter is a speed: rate(baton_env_steps_total[1m]) is steps per
// second.
//
// # Who feeds it
//
// remote.WithMetrics gives a server a Metrics: the server records its calls and serves
// the registry at GET /metrics on its address, beside gRPC and the JSON gateway. Sink
// turns a trial's events into trial states, steps and actions (runners.WithSinks); AddLog
// and AddSessions read figures that others keep. Its sink is an event.Sink: the package
// imports event and datalog, not the runner, so that anything that sends events can be
// counted.
//
// # Concurrency
//
// A Metrics is safe for concurrent use. The methods of a nil *Metrics do nothing, so a
// caller without metrics needs no check.
package telemetry
