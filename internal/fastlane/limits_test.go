package fastlane_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// heavy is a single-agent environment whose reset allocates a state of 1 MiB, as an
// environment that loads a level does: made, it is small.
type heavy struct {
	state []byte
}

const heavyState = 1 << 20

func (h *heavy) Spec() env.Spec {
	return env.Spec{Name: "heavy", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 1)), ActionSpace: spaces.Discrete{N: 2}}
}

func (h *heavy) Reset(uint64) (env.Step, error) {
	h.state = make([]byte, heavyState)
	return env.Step{Obs: []float32{0}}, nil
}

func (h *heavy) Info() any { return nil }

func (h *heavy) Step(agent.RawAction) (env.Step, error) {
	return env.Step{Obs: []float32{0}, Terminated: true}, nil
}

func limitsRegistry(t *testing.T) *registry.Registry {
	reg := testRegistry(t)
	require.NoError(t, reg.Register(registry.Entry{Name: "heavy", Open: func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) { return registry.SingleAgent(&heavy{}), nil }), nil
	}}))
	return reg
}

func TestAdmit(t *testing.T) {
	reg := limitsRegistry(t)
	maxW := fastlane.MaxWorkers()
	// The maze's buffers alone, counted twice: its agents' observations (106 and 104
	// floats) and masks (4 and 2).
	mazeRows := int64(2 * (4*(106+104) + 4 + 2))
	tests := []struct {
		name     string
		env      string
		n        int
		workers  int
		maxBytes int64
		// is is the error's class (nil: admitted); size whether it is a *SizeError.
		is   error
		size bool
		says []string
	}{
		{name: "a thousand mazes", env: "maze", n: 1000, workers: 2},
		{name: "ten million mazes", env: "maze", n: 10_000_000, is: fastlane.ErrLimit, size: true,
			says: []string{"10000000 copies (num_envs) of maze take an estimated ", " GiB (", " KiB a copy), over the limit of 4 GiB (max_bytes)"}},
		{name: "a raised limit", env: "maze", n: 10_000_000, maxBytes: 1 << 50},
		{name: "a lowered limit", env: "cartpole", n: 10_000, maxBytes: 1 << 20, is: fastlane.ErrLimit, size: true,
			says: []string{"over the limit of 1 MiB (max_bytes)"}},
		{name: "one copy", env: "cartpole", n: 1, maxBytes: 100, is: fastlane.ErrLimit, size: true,
			says: []string{"1 copy (num_envs) of cartpole takes an estimated ", "over the limit of 100 B (max_bytes)"}},
		{name: "no overflow", env: "cartpole", n: 1 << 62, maxBytes: 1<<63 - 1, is: fastlane.ErrLimit, size: true},
		{name: "a reset's allocations count", env: "heavy", n: 4200, is: fastlane.ErrLimit, size: true},
		{name: "within, with them", env: "heavy", n: 3900},
		{name: "the most workers", env: "cartpole", n: 8, workers: maxW},
		{name: "too many workers", env: "cartpole", n: 8, workers: maxW + 1, is: fastlane.ErrLimit,
			says: []string{fmt.Sprintf("%d workers; the most a vector may have is %d", maxW+1, maxW)}},
		{name: "a million workers", env: "cartpole", n: 1_000_000, workers: 1_000_000, is: fastlane.ErrLimit},
		{name: "negative workers", env: "cartpole", n: 8, workers: -1, is: fastlane.ErrArgument},
		{name: "no copies", env: "cartpole", n: 0, is: fastlane.ErrArgument},
		{name: "a negative limit", env: "cartpole", n: 8, maxBytes: -1, is: fastlane.ErrArgument, says: []string{"max_bytes"}},
		{name: "an unknown environment", env: "nope", n: 8, is: fastlane.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fastlane.Admit(reg, tt.env, nil, tt.n, tt.workers, tt.maxBytes)
			if tt.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.is)
			se, ok := errors.AsType[*fastlane.SizeError](err)
			assert.Equal(t, tt.size, ok)
			for _, s := range tt.says {
				assert.Contains(t, err.Error(), s)
			}
			if errors.Is(err, fastlane.ErrLimit) {
				assert.Equal(t, fastlane.CodeLimit, fastlane.CodeOf(err))
			}
			if !ok {
				return
			}
			assert.Equal(t, tt.env, se.Env)
			assert.Equal(t, tt.n, se.Copies)
			assert.GreaterOrEqual(t, se.Bytes(), se.Limit)
			switch tt.env {
			case "maze":
				assert.Equal(t, fastlane.DefaultMaxBytes, se.Limit)
				assert.Greater(t, se.CopyBytes, mazeRows, "the environment counts beside its rows")
				assert.Less(t, se.CopyBytes, int64(64<<10))
			case "heavy":
				assert.GreaterOrEqual(t, se.CopyBytes, int64(heavyState))
				assert.Less(t, se.CopyBytes, int64(heavyState+64<<10))
			}
		})
	}
}

func TestSizeErrorBytes(t *testing.T) {
	tests := []struct {
		e    fastlane.SizeError
		want int64
	}{
		{fastlane.SizeError{Copies: 3, CopyBytes: 5}, 15},
		{fastlane.SizeError{Copies: 1 << 62, CopyBytes: 4}, 1<<63 - 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.e.Bytes())
	}
}
