package env

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
)

// Errors of this package's environments and wrappers. An error from an inner
// environment is returned as it is, or wrapped with %w, so errors.Is still finds its
// sentinels. A MultiAgent's rejected step is a *StepError whose Kind is one of the
// first six (*hrl.Runtime adds hrl.ErrNoTrigger and hrl.ErrInControl).
var (
	// ErrNotReset: Step was called before the first Reset.
	ErrNotReset = errors.New("env: environment not reset")
	// ErrEpisodeOver: Step was called after the episode ended and before the next Reset.
	ErrEpisodeOver = errors.New("env: episode is over")
	// ErrNotActing: an action of an agent id that is not the one asked to act.
	ErrNotActing = errors.New("env: agent is not acting")
	// ErrOutsideSpace: an action outside the agent's action space.
	ErrOutsideSpace = errors.New("env: action outside the action space")
	// ErrInvalidAction: an action inside the space that the state forbids (its mask, or
	// the agent's DecodeAction).
	ErrInvalidAction = errors.New("env: action invalid in this state")
	// ErrRejected: the environment (or a procedure it runs) rejected the action.
	ErrRejected = errors.New("env: environment rejected the action")
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

// StepError is the error of a MultiAgent's rejected step, which leaves the environment
// as it was. errors.Is matches both Kind (a sentinel) and the cause in Err.
type StepError struct {
	// AgentID is the id the caller gave; Acting the id of the agent that was acting.
	AgentID, Acting string
	// Action is a copy of the raw action.
	Action agent.RawAction
	// Kind is the sentinel saying what went wrong.
	Kind error
	// Err is the underlying reason (from the space, the agent, the environment or a
	// procedure), or nil.
	Err error
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("%v: agent %s, action %v", e.Kind, e.AgentID, e.Action)
	if errors.Is(e.Kind, ErrNotActing) {
		if e.Acting == "" {
			msg += " (no agent is acting)"
		} else {
			msg += " (acting: " + e.Acting + ")"
		}
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the sentinel and the cause.
func (e *StepError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
