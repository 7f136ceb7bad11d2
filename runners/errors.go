package runners

import (
	"errors"
	"fmt"
)

// Errors of the package. Functions return them wrapped, with the names and values
// involved; match them with errors.Is.
var (
	// ErrUnknownEnv, ErrUnknownAgent and ErrUnknownPolicy are the kinds of *NameError.
	ErrUnknownEnv    = errors.New("runners: unknown environment")
	ErrUnknownAgent  = errors.New("runners: unknown agent")
	ErrUnknownPolicy = errors.New("runners: unknown policy")
	// ErrUnknownLimit is the kind of the *NameError for a limit (Remote.Limits) that
	// no entry declares.
	ErrUnknownLimit = errors.New("runners: unknown limit")
	// ErrLimit: a configuration from the network asks for more than a limit of its
	// environment allows (*LimitError), or a limit is set below 1.
	ErrLimit = errors.New("runners: over a limit")
	// ErrConfigFile: a file a configuration names cannot be used (*FileError).
	ErrConfigFile = errors.New("runners: configuration file refused")
	// ErrInvalidEntry: Register was given an entry with problems (all are listed).
	ErrInvalidEntry = errors.New("runners: invalid registry entry")
	// ErrDuplicate: Register was given a name already registered.
	ErrDuplicate = errors.New("runners: environment already registered")
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

// DuplicateError is a name registered twice (Registry.Register): First and Second name
// the code that registered each, the function that called Register and the one that
// called it, with their files and lines ("github.com/batonrl/baton/examples/rps.Register
// (register.go:20) from github.com/batonrl/baton/examples/catalog.Register
// (catalog.go:18)"). It matches ErrDuplicate.
type DuplicateError struct {
	Name          string
	First, Second string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("runners: environment %q is registered twice: first by %s, then by %s", e.Name, e.First, e.Second)
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicate }
