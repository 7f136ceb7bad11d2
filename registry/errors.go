package registry

import (
	"errors"
	"fmt"
)

// Errors of the package. Functions return them wrapped, with the names and values
// involved; match them with errors.Is.
var (
	// ErrUnknownEnv, ErrUnknownAgent and ErrUnknownPolicy are the kinds of *NameError.
	ErrUnknownEnv    = errors.New("registry: unknown environment")
	ErrUnknownAgent  = errors.New("registry: unknown agent")
	ErrUnknownPolicy = errors.New("registry: unknown policy")
	// ErrUnknownLimit is the kind of the *NameError for a limit (Remote.Limits) that
	// no entry declares.
	ErrUnknownLimit = errors.New("registry: unknown limit")
	// ErrLimit: a configuration from the network asks for more than a limit of its
	// environment allows (*LimitError), or a limit is set below 1.
	ErrLimit = errors.New("registry: over a limit")
	// ErrConfigFile: a file a configuration names cannot be used (*FileError).
	ErrConfigFile = errors.New("registry: configuration file refused")
	// ErrInvalidEntry: Register was given an entry with problems (all are listed).
	ErrInvalidEntry = errors.New("registry: invalid registry entry")
	// ErrDuplicate: Register was given a name already registered.
	ErrDuplicate = errors.New("registry: environment already registered")
)

// DuplicateError is a name registered twice (Registry.Register): First and Second name
// the code that registered each, the function that called Register and the one that
// called it, with their files and lines ("github.com/batonrl/baton/envs/rps.Register
// (register.go:20) from github.com/batonrl/baton/envs/catalog.Register
// (catalog.go:18)"). It matches ErrDuplicate.
type DuplicateError struct {
	Name          string
	First, Second string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("registry: environment %q is registered twice: first by %s, then by %s", e.Name, e.First, e.Second)
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicate }
