// Package transitions describes how control passes between the agents of a
// hierarchical environment, as data the runtime checks before the first step.
//
// What you touch here: write a Machine (the initial agent, the on-done table, Triggers
// and Procedures) for your hierarchical environment; package hrl calls Compile, and
// Errors lists every problem of its error, for your tests.
//
// # The machine
//
// A Machine has three kinds of rules:
//
//   - The initial agent, which acts after every reset.
//   - The on-done table: when a sub-episode of an agent ends, control goes to another
//     agent, back to the agent whose action started the sub-episode (Parent), or the
//     episode ends (End). Every agent needs an entry.
//   - Ordered, named action triggers. After each action of an agent, the runtime checks
//     the triggers watching that agent in order; the first whose When matches fires.
//     A trigger either hands control to a child agent, which starts a sub-episode whose
//     parent is the acting agent, or runs a Procedure: a non-learned routine (a scripted
//     motion, a login) that maps the state to a new one within the same environment
//     step. Agents listed in Switching must match a trigger with every action.
//
// Swapping a learned child agent for a procedure changes the machine, not the agents.
//
// # Validation
//
// Compile checks a machine against the environment's agents and reports every problem
// together (go.uber.org/multierr), each a *RuleError naming the agent and the rule:
// invalid or duplicate agent names, unknown agents anywhere, missing on-done entries,
// malformed or duplicate triggers, agents that cannot be reached from the initial agent,
// and reachable agents from which no path ends the episode.
//
// # Diagrams
//
// Machine.Mermaid and Machine.DOT draw the machine for documentation and `baton graph`.
//
// This package is part of baton's pure core: it does no I/O, keeps no global state and
// reads no clock. Machines and Tables are safe for concurrent use once built.
package transitions
