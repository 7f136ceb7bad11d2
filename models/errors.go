package models

import (
	"errors"
	"fmt"
)

// Errors of the package; the errors returned wrap one of them.
var (
	// ErrNotFound: the store has no model of that name, or no such version of it.
	ErrNotFound = errors.New("models: not found")
	// ErrCorrupt: a stored version cannot be read back as written: its bytes do not
	// match the recorded SHA-256, or its metadata is unreadable.
	ErrCorrupt = errors.New("models: corrupt model")
	// ErrInvalid: a name, reference, version or metadata field is malformed.
	ErrInvalid = errors.New("models: invalid")
	// ErrSpaces: a model's spaces differ from those of the agent it is meant for.
	ErrSpaces = errors.New("models: spaces do not match")
)

// NotFoundError is a name or version the store does not have.
type NotFoundError struct {
	Name    string
	Version int // 0: the name itself is unknown
}

func (e *NotFoundError) Error() string {
	if e.Version == 0 {
		return fmt.Sprintf("models: no model named %q", e.Name)
	}
	return fmt.Sprintf("models: model %q has no version %d", e.Name, e.Version)
}

// Unwrap returns ErrNotFound.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// CorruptError is a stored version that does not read back as written.
type CorruptError struct {
	Name    string
	Version int
	Reason  string // "sha256 is ab12..., metadata says cd34...", "meta.json: ..."
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("models: %s@%d is corrupt: %s", e.Name, e.Version, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// InvalidError is a malformed field: a name, reference or metadata value.
type InvalidError struct {
	Field  string // "name", "ref", "meta.format"
	Value  string
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("models: invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// SpaceError is a model whose observation or action space differs from the agent's.
type SpaceError struct {
	Model string // NAME@VERSION
	Agent string
	Which string // "observation" or "action"
	Have  string // the model's space, as JSON
	Want  string // the agent's space, as JSON
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("models: model %s has %s space %s, agent %q has %s", e.Model, e.Which, e.Have, e.Agent, e.Want)
}

// Unwrap returns ErrSpaces.
func (e *SpaceError) Unwrap() error { return ErrSpaces }
