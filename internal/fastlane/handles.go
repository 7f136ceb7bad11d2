package fastlane

import (
	"context"
	"encoding/json"
	"errors"
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
type Handles struct {
	mu   sync.Mutex
	last int64
	m    map[int64]Vector
}

// Add registers v and returns its handle.
func (h *Handles) Add(v Vector) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[int64]Vector)
	}
	h.last++
	h.m[h.last] = v
	return h.last
}

// Get returns the vector of handle id.
func (h *Handles) Get(id int64) (Vector, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

// Close closes the vector of handle id and forgets it; it reports whether there was
// one, so that closing twice is harmless.
func (h *Handles) Close(id int64) bool {
	h.mu.Lock()
	v, ok := h.m[id]
	delete(h.m, id)
	h.mu.Unlock()
	if ok {
		v.Close()
	}
	return ok
}

// Len returns the number of open vectors.
func (h *Handles) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// Code is the class of an error, as a C caller sees it.
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
)

// ErrHandle: no open vector has the handle.
var ErrHandle = errors.New("fastlane: no such vector (closed?)")

// CodeOf classifies err.
func CodeOf(err error) Code {
	var ce *vector.CopyError
	switch {
	case err == nil:
		return OK
	case errors.Is(err, ErrAction):
		return CodeAction
	case errors.As(err, &ce):
		return CodeCopy
	case errors.Is(err, ErrConfig), errors.Is(err, ErrUnsupported):
		return CodeConfig
	case errors.Is(err, ErrArgument), errors.Is(err, vector.ErrOption), errors.Is(err, vector.ErrActions):
		return CodeArgument
	case errors.Is(err, ErrHandle), errors.Is(err, vector.ErrClosed), errors.Is(err, vector.ErrNotReset):
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
