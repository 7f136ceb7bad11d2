// Package fastlane is the logic of the fast lane: N copies of a registered
// environment stepped per call from another language, Python's baton.vector, through
// the C library of package capi (cmd/libbaton, or a user's). The library is a thin
// cgo wrapper that turns C pointers into slices and handles into values of this
// package; what can be tested with go test -race lives here.
//
// What you touch here: nothing from outside baton, as it is internal: package capi
// calls it, and a change to the fast lane's logic and its tests goes here rather than
// into capi.
//
// # Vectors
//
// Describe tells the caller what a vector of a registered environment needs (its
// kind and each agent's observation and mask lengths) so that the caller can
// allocate the buffers first. NewSingle then makes a vector.Env over the caller's
// buffers (vector.WithBuffers): a single-agent environment (one agent, registered
// with registry.SingleAgent, such as the cart-pole) is stepped with its copies writing
// straight into them. NewMulti makes a vector.Multi of any other environment (the
// maze's hierarchy) and writes, after each Reset and Step, each agent's group (the
// copies it acts in, their observations and masks), the acting agent of each copy,
// the rewards and ends of each agent in each copy, and which episodes ended, into
// the caller's buffers (MultiBuffers).
//
// NewAsync makes an Async, the asynchronous mode of EnvPool and PufferLib for a
// single-agent environment: Send queues actions for some copies and returns; worker
// goroutines step them; Recv returns the first batch of copies done, their ids and
// rows gathered into the caller's AsyncBatch, waiting at most a given time so that a
// caller in another language can handle its interrupts between waits. NewAsyncMulti
// makes its hierarchical form, AsyncMulti, whose batches are grouped per acting
// agent (AsyncMultiBatch).
//
// Actions are integers: the fast lane takes agents whose action space is Discrete.
//
// # Recording
//
// Single.Record and Multi.Record make a vector record its steps into an activity
// log (package datalog, the log that campaigns write) from its next Reset on, until
// CloseLog or Close: each episode of each copy is a trial of one episode, named
// "RUN-K" for the K-th episode begun (Recording.Run) and seeded with the episode's
// reset seed, so that replay.Run replays it; its rows are the copy's reports as
// a runners trial logs them (the reward's one source "env", the action that each
// reward scores), and its end writes the episode's returns, success and metrics.
// An episode cut short by a Reset or by the end of the recording is a Stopped trial;
// one whose copy failed, a Failed one. An episode's success and metrics are judged
// on its live final turn (vector.WithEpisodeEnd, for a Multi), whose typed
// observations the entry's functions may read. Recording.Policies names what chose
// each agent's actions, for the trials table.
//
// A step only stages what it reported (copies of the observations and masks) into a
// batch of a few thousand rows; a goroutine of the recording's own hands each batch
// to the log's writer, a trial's rows one after the other, and the writer's own
// goroutine compresses and writes them, while the caller steps on and computes its
// next actions. The stepping goroutine waits only when the writing is a whole batch
// behind. A process that dies loses the rows staged or buffered and not yet
// written; what was written reads as datalog says under "Crashes and Recover".
//
// # Views and turns
//
// NewView makes a vector of one agent of a multi-agent environment, each copy an
// env.View in which the registry's named policies (or policy values, such as the
// caller's callbacks) drive the other agents: a Single whose step lasts until the
// agent acts again, with each copy's span ticks beside its reward. View.Restart
// resets with new underlying episodes; Reset, and the vector's auto-reset, go on with
// an underlying episode where they can (see env.View). It is what Python's
// baton.make and baton.make_vec step for one agent of a hierarchy.
//
// NewTurns makes one environment stepped turn by turn, the acting agent's action at
// a time, writing each Turn into the caller's buffers per agent name (TurnBuffers):
// each agent's latest observation and mask, and what the Turn reported of it. It is
// what Python's baton.pettingzoo steps, for PettingZoo's AEC and parallel APIs.
//
// # Holds and frames
//
// WithHold gives a Single or a View one Hold per copy, which the caller writes
// between steps: HoldStay leaves a copy as it is for a step, HoldEnd ends its
// episode where it is (the vector then resets it). They are how Python's Gymnasium
// adapters have Gymnasium's next-step and disabled auto-reset, and end an episode on
// a refused action, over the vector's same-step one. Every vector draws its copies
// (Framer: Frame, by the registry entry's Look); a Single with holds keeps, while
// KeepFinalFrames is on, each copy's frame at the end of its episodes, before the
// auto-reset, so that a caller shows the state an episode ended in.
//
// # Errors
//
// Actions are checked before any copy steps: an action outside the agent's space,
// or masked, is an *ActionError naming the copy, the agent and the reason, and
// changes nothing, so the caller can correct it and step again. A copy that fails or
// panics during a step fails the step as package vector says (the other copies are
// stepped, and the vector needs a Reset); Failures lists each failed copy with its
// agent and reason, for the caller to raise.
//
// # Limits
//
// Admit checks a vector before its caller allocates the buffers (package capi calls
// it first in every function that makes one): at most MaxWorkers workers, 4 per CPU
// or 256 where that is more, and an estimated memory of at most the caller's limit
// (DefaultMaxBytes, 4 GiB, when it names none). The estimate of a copy is what its
// environment allocates when made and reset, measured on two probe environments with
// runtime.ReadMemStats (the smaller, so that another goroutine's allocations count
// only if they happen twice), plus its rows of the buffers on both sides: 5.7 KiB for
// a maze, of which a million took 4.3 GB in a Python process. Over a limit is
// ErrLimit (a *SizeError for the memory), CodeLimit for a C caller.
//
// # Handles
//
// Handles maps integer handles to vectors, for a C ABI in which no Go pointer may
// escape. It is safe for concurrent use and runs one call at a time on each vector
// (Handles.Do): ctypes releases Python's GIL during a call, so nothing else would
// stop two threads from stepping one vector, or closing it mid-step.
//
// # Layering
//
// The fast lane looks environments up in a registry.Registry, records through
// datalog's event sinks, and steps env/vector's copies: it does not import runners,
// since it runs no trial of its own.
//
// # Why a C library in the Python process
//
// A step of a thousand cart-poles takes Go tens of microseconds; a gRPC round trip
// takes about as long again, and copies every observation twice. Loaded in the
// process, the library costs one ctypes call a tick (a few microseconds), and the
// vector writes its results where numpy reads them: Python allocates the buffers and
// passes their addresses once (C memory to Go, which cgo's rules let it keep), so no
// Go pointer crosses the boundary and no result is copied.
package fastlane
