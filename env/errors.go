package env

import "errors"

// Errors of this package's environments and wrappers. An error from an inner
// environment is returned as it is, or wrapped with %w, so errors.Is still finds its
// sentinels; a MultiAgent built here (Sequential) returns *hrl.StepError values with
// hrl's sentinels, as *hrl.Runtime does.
var (
	// ErrNotReset: Step was called before the first Reset.
	ErrNotReset = errors.New("env: environment not reset")
	// ErrEpisodeOver: Step was called after the episode ended and before the next Reset.
	ErrEpisodeOver = errors.New("env: episode is over")
	// ErrUnknownAgent: a name that is not one of the environment's agents.
	ErrUnknownAgent = errors.New("env: unknown agent")
	// ErrMissingPolicy: an agent that View must drive has no policy.
	ErrMissingPolicy = errors.New("env: no policy for agent")
	// ErrDriven: an agent that View drives with its policy failed (the policy returned
	// an error, or the environment rejected its action); the error wraps the cause too.
	ErrDriven = errors.New("env: a driven agent failed")
	// ErrNeverActs: View.Reset played MaxViewResets underlying episodes in a row in
	// which the viewed agent never acted.
	ErrNeverActs = errors.New("env: the viewed agent never acts")
)
