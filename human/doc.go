// Package human lets a person take an agent's place in a trial.
//
// What you touch here: call NewInput on what the person types and New for the Policy
// they play in a terminal; implement nothing.
//
// # The policy
//
// Policy is an agent.Policy played by a person through text: at each turn of its
// agent it writes to an io.Writer what the person needs to choose (the environment
// drawn as text, by the registry entry's registry.Look, and every action of the agent,
// numbered from 1 in the order of the raw actions, as the page of baton serve ui
// numbers them, and named: 1) UP, 2) RIGHT, 3) DOWN, 4) LEFT for the maze's strategy
// agent, those the mask forbids marked "(not allowed now)"), and reads the choice from
// an io.Reader, one line: its number or its name, in any case; a terminal's arrow key
// (ESC [ A to D, or ESC O A to D) for the action named UP, DOWN, RIGHT or LEFT; or,
// when the mask allows one action alone, an empty line. Bad input writes why (an
// action not allowed: "RIGHT is not allowed now (allowed: UP, LEFT)"; an arrow key
// where no action is named for it: "the arrow keys are not actions here") and the
// choices again, and reads another line; it changes nothing.
// The trial cannot tell the person from any other policy: the actions go through the
// trial runner, with its events, logs and rewards.
//
// Policy implements runners.Interactor, to draw the trial's environment
// (runners.Exchange.Frame) and name the actions (Exchange.ActionName), and
// runners.Learner, to tell the person what each action earned. Used outside a trial,
// through Act alone, it shows the observation and raw action numbers instead.
//
// # Ending
//
// When the input ends (end of file: Ctrl-D at a terminal, a closed pipe), the policy
// returns an error wrapping ErrQuit, which wraps runners.ErrStopped: the trial stops,
// as it does when its context is cancelled (Ctrl-C), and is not failed.
//
// # Input and concurrency
//
// An Input reads the person's lines on a goroutine of its own, started by the first
// line asked for, so that a cancelled context interrupts a person who has not
// answered. The goroutine ends when the reader returns an error (io.EOF: close the
// writing end of a pipe) or, after Input.Close, when its current Read returns. The
// policies of the agents one person plays share one Input; each Policy serves one
// agent of one trial at a time, and is not safe for concurrent use.
package human
