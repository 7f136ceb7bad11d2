package vector

//go:generate go tool stringer -type=Op -linecomment

import (
	"errors"
	"fmt"
)

// Errors of the package. Errors of one copy come wrapped in a *CopyError that names the
// copy; errors.Is still finds the environment's own sentinels through it.
var (
	// ErrNotReset: Step was called before the first Reset, or after a Step or Reset
	// that failed (see the package documentation, "Errors"), before the next Reset.
	ErrNotReset = errors.New("vector: not reset")
	// ErrClosed: the vector was closed.
	ErrClosed = errors.New("vector: closed")
	// ErrActions: the actions do not fit the vector (Step was given a slice whose length
	// is not the number of copies, or a policy a batch of the wrong size).
	ErrActions = errors.New("vector: actions do not match the copies")
	// ErrShape: a copy returned an observation or a mask of a length other than its
	// spec's.
	ErrShape = errors.New("vector: observation or mask of the wrong length")
	// ErrMismatch: the copies made by a factory do not describe the same agents.
	ErrMismatch = errors.New("vector: copies differ")
	// ErrNoActing: a multi-agent copy's turn names no acting agent it reports, or its
	// episode is over right after a reset.
	ErrNoActing = errors.New("vector: no acting agent")
	// ErrNoPolicy: Multi.Act has no policy for an agent that acts.
	ErrNoPolicy = errors.New("vector: no policy for agent")
	// ErrPanic is wrapped by a *PanicError: a copy panicked.
	ErrPanic = errors.New("vector: panic in a copy")
	// ErrOption is wrapped by the error of New or NewMulti for an option with a bad
	// value (WithWorkers(-1)).
	ErrOption = errors.New("vector: invalid option")
)

// Op is what a vector was doing to a copy when it failed. Its String names it: "reset",
// "step" or "act".
type Op int

// The operations. The zero Op is not one of them.
const (
	// OpReset is a copy's Reset, by Reset or by an auto-reset.
	OpReset Op = 1 + iota // reset
	// OpStep is a copy's Step.
	OpStep // step
	// OpAct is a per-copy policy's Act (PerCopy).
	OpAct // act
)

// CopyError is the error of one copy: its index, the operation and the cause.
// When several copies fail in one call, the vector returns their CopyErrors joined
// (errors.Join) in copy order, whatever the number of workers; errors.As finds the
// first.
type CopyError struct {
	// Copy is the copy's index, 0 to N-1.
	Copy int
	// Op is what failed.
	Op Op
	// Err is the cause: the copy's own error, a *PanicError, or an error wrapping
	// ErrShape or ErrNoActing.
	Err error
}

func (e *CopyError) Error() string {
	return fmt.Sprintf("vector: copy %d: %v: %v", e.Copy, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *CopyError) Unwrap() error { return e.Err }

// PanicError is a panic of a copy's environment or policy, recovered where the vector
// called it. It wraps ErrPanic.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine, as runtime/debug.Stack formats it.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrPanic, e.Value) }

// Unwrap returns ErrPanic, and the panic value when it is an error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}
