package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batonrl/baton/spaces"
)

// MaxNameLen is the longest model name accepted, in bytes.
const MaxNameLen = 128

// Meta describes one version of a model. Put fills Name, Version, SHA256, Size and
// Created; the caller fills the rest.
type Meta struct {
	Name    string    `json:"name"`
	Version int       `json:"version"` // from 1, assigned by the store
	SHA256  string    `json:"sha256"`  // hex of the bytes
	Size    int64     `json:"size"`    // of the bytes
	Created time.Time `json:"created"`

	// Format says what the bytes are: "onnx" (a policy graph: observation [and mask]
	// in, action logits out), "torch" (a state dict), or a caller's own word.
	Format string `json:"format,omitempty"`
	// Env and Agent are the environment and agent the model acts for.
	Env   string `json:"env,omitempty"`
	Agent string `json:"agent,omitempty"`
	// ObservationSpace and ActionSpace are the agent's spaces as baton's JSON spec
	// (spaces.Marshal); CheckSpaces compares them with an agent's.
	ObservationSpace json.RawMessage `json:"observation_space,omitempty"`
	ActionSpace      json.RawMessage `json:"action_space,omitempty"`
	// Run names the training run that made the model (a script, a log directory).
	Run string `json:"run,omitempty"`
	// Figures are the run's measures: "success_rate", "mean_return", "episodes".
	Figures map[string]float64 `json:"figures,omitempty"`
	// Curve is the learning curve behind the model: episodes' returns and success
	// in the order they ended, from the feedback a learner received.
	Curve []Point `json:"curve,omitempty"`
	// Labels are free-form strings ("parent": "maze-strategy@3").
	Labels map[string]string `json:"labels,omitempty"`
}

// Point is one episode of a learning curve.
type Point struct {
	Episode int       `json:"episode"` // from 1, over the model's whole history
	Return  float64   `json:"return"`
	Success bool      `json:"success"`
	Time    time.Time `json:"time,omitzero"`
}

// Ref returns NAME@VERSION.
func (m Meta) Ref() string { return m.Name + "@" + strconv.Itoa(m.Version) }

// CheckName returns an *InvalidError if name is not a model name: 1 to MaxNameLen
// bytes of letters, digits, '.', '_' and '-', not starting with '.' or '-'.
func CheckName(name string) error {
	bad := func(reason string) error { return &InvalidError{Field: "name", Value: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxNameLen))
	case name[0] == '.' || name[0] == '-':
		return bad("starts with '.' or '-'")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return bad(fmt.Sprintf("has %q: use letters, digits, '.', '_' and '-'", r))
		}
	}
	return nil
}

// Latest is the version number that stands for a name's newest version.
const Latest = 0

// ParseRef reads NAME, NAME@latest or NAME@VERSION (VERSION ≥ 1) and returns the name
// and the version, Latest for the first two.
func ParseRef(ref string) (name string, version int, err error) {
	name, v, found := strings.Cut(ref, "@")
	if err := CheckName(name); err != nil {
		return "", 0, &InvalidError{Field: "ref", Value: ref, Reason: err.(*InvalidError).Reason + " (want NAME, NAME@latest or NAME@VERSION)"}
	}
	if !found || v == "latest" {
		return name, Latest, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return "", 0, &InvalidError{Field: "ref", Value: ref, Reason: "version is not latest or a number from 1"}
	}
	return name, n, nil
}

// CheckSpaces returns a *SpaceError if the model's spaces, as its metadata records
// them, differ from the agent's; a model that records no space is refused too, for
// it cannot be checked.
func (m Meta) CheckSpaces(agent string, obs, act spaces.Space) error {
	for _, c := range []struct {
		which string
		have  json.RawMessage
		want  spaces.Space
	}{{"observation", m.ObservationSpace, obs}, {"action", m.ActionSpace, act}} {
		want, err := spaces.Marshal(c.want)
		if err != nil {
			return fmt.Errorf("models: agent %q's %s space: %w", agent, c.which, err)
		}
		if len(c.have) == 0 {
			return &SpaceError{Model: m.Ref(), Agent: agent, Which: c.which, Have: "(none recorded)", Want: string(want)}
		}
		have, err := spaces.Unmarshal(c.have)
		if err != nil || !have.Equal(c.want) {
			return &SpaceError{Model: m.Ref(), Agent: agent, Which: c.which, Have: string(compact(c.have)), Want: string(want)}
		}
	}
	return nil
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
