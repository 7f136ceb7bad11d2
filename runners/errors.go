package runners

import (
	"errors"
	"fmt"
)

// Errors of the package. Functions return them wrapped, with the names and values
// involved; match them with errors.Is.
var (
	// ErrEnvConfig: the environment rejected the configuration of a Spec.
	ErrEnvConfig = errors.New("runners: invalid environment configuration")
	// ErrInvalidSpec: a Spec or an option is invalid (the message says why).
	ErrInvalidSpec = errors.New("runners: invalid trial spec")
	// ErrUnknownTrial: the controller has no trial of that id.
	ErrUnknownTrial = errors.New("runners: unknown trial")
	// ErrTrialExists: Start was given the id of a trial the controller still holds.
	ErrTrialExists = errors.New("runners: trial id in use")
	// ErrNotRunning: a reward was sent to a trial that is not running.
	ErrNotRunning = errors.New("runners: trial is not running")
	// ErrFull: a Controller holds as much as it may: as many unfinished trials as
	// WithMaxLive allows, or as many rewards waiting for a trial's next step as a
	// trial takes (4096).
	ErrFull = errors.New("runners: full")
	// ErrNotDone: Forget was given a trial that has not finished.
	ErrNotDone = errors.New("runners: trial has not finished")
	// ErrStopped is the cause of a trial stopped by Controller.Stop. A policy stops
	// its trial by returning an error that wraps it from Act or Interact (a person
	// who quits): the trial is then Stopped, not Failed, and its Result.Err is that
	// error.
	ErrStopped = errors.New("runners: trial stopped")
	// ErrShutdown is the cause of the trials stopped by Controller.Shutdown, and the
	// error of Start after it.
	ErrShutdown = errors.New("runners: controller shut down")
	// ErrPanic is wrapped by *PanicError.
	ErrPanic = errors.New("runners: panic in user code")
	// ErrPolicy: a policy returned an error.
	ErrPolicy = errors.New("runners: policy failed")
	// ErrEnv: the environment returned an error or broke its contract.
	ErrEnv = errors.New("runners: environment failed")
	// ErrSink: a sink returned an error.
	ErrSink = errors.New("runners: sink failed")
	// ErrHook: a pre-trial hook returned an error.
	ErrHook = errors.New("runners: pre-trial hook failed")
	// ErrReward: a reward is addressed to an agent id or a tick that does not exist.
	ErrReward = errors.New("runners: invalid reward address")
	// ErrReceiver: a message is addressed to no agent of the trial, or to an
	// environment that takes no messages.
	ErrReceiver = errors.New("runners: invalid message receiver")
)

// PanicError is the failure of a trial in which user code panicked: a policy, the
// environment, a sink, a hook. The trial fails; other trials go on.
type PanicError struct {
	// Where names the code that panicked: "policy of motion_3", "environment Step",
	// "sink", ...
	Where string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as debug.Stack formats it.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("runners: panic in %s: %v", e.Where, e.Value)
}

// Unwrap returns ErrPanic, and the panic value when it is an error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// TrialError is the failure of a trial: where it happened and why.
type TrialError struct {
	// Trial is the trial's id.
	Trial string
	// Episode and Tick locate the failure; Tick is -1 before the episode's reset.
	Episode, Tick int
	// Err is the reason: it wraps ErrPolicy, ErrEnv, ErrSink, ErrHook, ErrReceiver,
	// ErrReward or ErrInvalidSpec with the cause, or is a *PanicError.
	Err error
}

func (e *TrialError) Error() string {
	return fmt.Sprintf("trial %s, episode %d, tick %d: %v", e.Trial, e.Episode, e.Tick, e.Err)
}

// Unwrap returns Err.
func (e *TrialError) Unwrap() error { return e.Err }
