package fastlane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/batonrl/baton/env/vector"
)

// Vector is what Single and Multi have in common.
type Vector interface {
	Layout() Layout
	Len() int
	Reset(ctx context.Context, seed uint64) error
	// Agent names the agent of copy i, for Failures.
	Agent(i int) string
	Close() error
}

// Handles maps integer handles, which a C caller holds, to vectors. The zero value is
// ready to use; it is safe for concurrent use. Handles start at 1, so that 0 is never
// one, and are never reused.
//
// Do runs one call on a vector at a time: a caller that closes a vector while another
// thread steps it (a Python thread closing what another steps, which the caller's
// documentation forbids but a C ABI cannot prevent) waits for the step to end, and
// the step of a closed vector finds no vector rather than freed state.
type Handles struct {
	mu   sync.Mutex
	last int64
	m    map[int64]*entry
}

type entry struct {
	mu sync.Mutex
	v  Vector
}

// Add registers v and returns its handle.
func (h *Handles) Add(v Vector) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[int64]*entry)
	}
	h.last++
	h.m[h.last] = &entry{v: v}
	return h.last
}

// Do calls f with the vector of handle id, alone: no other Do or Close of the same
// handle runs meanwhile. It returns an error wrapping ErrHandle when there is no such
// vector (or it was closed), else f's error.
func (h *Handles) Do(id int64, f func(Vector) error) error {
	h.mu.Lock()
	e, ok := h.m[id]
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: handle %d", ErrHandle, id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.v == nil {
		return fmt.Errorf("%w: handle %d", ErrHandle, id)
	}
	return f(e.v)
}

// Close closes the vector of handle id, after any call in progress on it, and forgets
// it; it reports whether there was one, so that closing twice is harmless.
func (h *Handles) Close(id int64) bool {
	h.mu.Lock()
	e, ok := h.m[id]
	delete(h.m, id)
	h.mu.Unlock()
	if !ok {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.v.Close()
	e.v = nil
	return true
}

// Len returns the number of open vectors.
func (h *Handles) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// Code is the class of an error, as a C caller sees it. Unlike baton's enums, its zero
// value means something: OK, the 0 that C functions return on success.
type Code int32

// The codes; OK is 0.
const (
	OK Code = iota
	// CodeConfig: an unknown environment, a bad configuration, an unsupported one.
	CodeConfig
	// CodeArgument: a buffer, a count or an option is bad.
	CodeArgument
	// CodeAction: an action was rejected before any copy stepped; nothing changed.
	CodeAction
	// CodeCopy: a copy failed or panicked; the vector needs a Reset.
	CodeCopy
	// CodeState: the vector is closed, unknown, or needs a Reset.
	CodeState
	// CodeInternal: anything else.
	CodeInternal
	// CodeLog: the vector's activity log could not be opened or written (ErrLog).
	CodeLog
	// CodeLimit: the vector would be over a limit: its memory or its workers (ErrLimit).
	CodeLimit
)

// ErrHandle: no open vector has the handle.
var ErrHandle = errors.New("fastlane: no such vector (closed?)")

// CodeOf classifies err.
func CodeOf(err error) Code {
	var ce *vector.CopyError
	switch {
	case err == nil:
		return OK
	case errors.Is(err, ErrLog):
		return CodeLog
	case errors.Is(err, ErrAction):
		return CodeAction
	case errors.Is(err, ErrLimit):
		return CodeLimit
	case errors.As(err, &ce):
		return CodeCopy
	case errors.Is(err, ErrConfig), errors.Is(err, ErrUnsupported):
		return CodeConfig
	case errors.Is(err, ErrArgument), errors.Is(err, vector.ErrOption), errors.Is(err, vector.ErrActions):
		return CodeArgument
	case errors.Is(err, ErrHandle), errors.Is(err, vector.ErrClosed), errors.Is(err, vector.ErrNotReset), errors.Is(err, ErrCopyState):
		return CodeState
	}
	return CodeInternal
}

// maxFailures bounds the failures a Report lists, and maxStack the stack it keeps
// of each panic, so that a report fits the caller's buffer.
const (
	maxFailures = 32
	maxStack    = 4096
)

// Report is an error as JSON for a C caller: {"message": ..., "failures": [...]}, with
// Failures(err, agent), the first 32 of them (with "more" the number left out), each
// panic's stack and the message cut at 4 KiB.
func Report(err error, agent func(i int) string) []byte {
	fs := Failures(err, agent)
	more := 0
	if len(fs) > maxFailures {
		fs, more = fs[:maxFailures], len(fs)-maxFailures
	}
	for i := range fs {
		if len(fs[i].Panic) > maxStack {
			fs[i].Panic = fs[i].Panic[:maxStack]
		}
	}
	msg := err.Error()
	if len(msg) > maxStack {
		msg = msg[:maxStack] + "..."
	}
	b, jerr := json.Marshal(struct {
		Message  string    `json:"message"`
		Failures []Failure `json:"failures"`
		More     int       `json:"more,omitempty"`
	}{msg, fs, more})
	if jerr != nil {
		b, _ = json.Marshal(map[string]string{"message": msg})
	}
	return b
}
