package fastlane_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

var update = flag.Bool("update", false, "rewrite testdata/cartpole_trajectory.json")

var bg = context.Background()

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := catalog.New()
	require.NoError(t, err)
	require.NoError(t, reg.Register(registry.Entry{Name: "bomb", Open: func([]byte) (registry.Factory, error) {
		return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) { return registry.SingleAgent(&bomb{}), nil }), nil
	}}))
	return reg
}

// bomb is a single-agent environment that panics on action 1; action 0 counts.
type bomb struct {
	obs [1]float32
}

func (b *bomb) Spec() env.Spec {
	return env.Spec{Name: "bomb", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, 0, 1e9)), ActionSpace: spaces.Discrete{N: 2}}
}

func (b *bomb) Reset(uint64) (env.Step, error) { b.obs[0] = 0; return env.Step{Obs: b.obs[:]}, nil }

func (b *bomb) Step(a agent.RawAction) (env.Step, error) {
	if a.Int == 1 {
		panic("boom")
	}
	b.obs[0]++
	return env.Step{Obs: b.obs[:], Reward: 1}, nil
}

func (b *bomb) Info() any { return nil }

func buffers(n, dim, mlen int) vector.Buffers {
	b := vector.Buffers{Obs: make([]float32, n*dim), FinalObs: make([]float32, n*dim),
		Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n)}
	if mlen > 0 {
		b.Masks = make([]bool, n*mlen)
	}
	return b
}

func TestDescribe(t *testing.T) {
	reg := testRegistry(t)
	cases := []struct {
		name, config string
		kind         fastlane.Kind
		agents       []string
		err          error
	}{
		{"cartpole", "", fastlane.KindSingle, []string{"cartpole"}, nil},
		{"cartpole", `{"max_steps": 9}`, fastlane.KindSingle, []string{"cartpole"}, nil},
		{"maze", "", fastlane.KindMulti, []string{"strategy", "motion"}, nil},
		{"nowhere", "", 0, nil, fastlane.ErrConfig},
		{"cartpole", `{"max_steps": -1}`, 0, nil, fastlane.ErrConfig},
		{"cartpole", `{"speed": 1}`, 0, nil, fastlane.ErrConfig},
	}
	for _, c := range cases {
		t.Run(c.name+c.config, func(t *testing.T) {
			l, err := fastlane.Describe(reg, c.name, []byte(c.config))
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				assert.Equal(t, fastlane.CodeConfig, fastlane.CodeOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.kind, l.Kind)
			var names []string
			for _, a := range l.Agents {
				names = append(names, a.Name)
				assert.Positive(t, a.ObsDim)
				assert.Positive(t, a.Actions)
			}
			assert.Equal(t, c.agents, names)
			b, err := json.Marshal(l)
			require.NoError(t, err)
			assert.Contains(t, string(b), fmt.Sprintf(`"kind":%q`, c.kind.String()))
		})
	}
}

// TestSingleMatchesVector: a Single over the caller's buffers gives, tick by tick, the
// buffers of env/vector's Env of cart-poles, synchronously and with workers.
func TestSingleMatchesVector(t *testing.T) {
	for _, w := range []int{1, 3} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const n, seed = 50, 5
			b := buffers(n, 4, 0)
			s, err := fastlane.NewSingle(testRegistry(t), "cartpole", []byte(`{"max_steps": 20}`), n, w, b)
			require.NoError(t, err)
			defer s.Close()
			want, err := vector.New(n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{MaxSteps: 20}) })
			require.NoError(t, err)
			require.NoError(t, s.Reset(bg, seed))
			require.NoError(t, want.Reset(bg, seed))
			require.Equal(t, want.Obs(), b.Obs)
			rng := rand.New(rand.NewPCG(1, 2))
			actions := make([]int64, n)
			ended := 0
			for tick := range 80 {
				for i := range actions {
					actions[i] = rng.Int64N(2)
				}
				require.NoError(t, s.Step(bg, actions))
				require.NoError(t, want.StepDiscrete(bg, actions))
				require.Equal(t, want.Obs(), b.Obs, "tick %d", tick)
				require.Equal(t, want.Rewards(), b.Rewards, "tick %d", tick)
				require.Equal(t, want.Terminated(), b.Terminated, "tick %d", tick)
				require.Equal(t, want.Truncated(), b.Truncated, "tick %d", tick)
				for i := range n {
					if want.Done(i) {
						ended++
						require.Equal(t, want.FinalObs()[i*4:i*4+4], b.FinalObs[i*4:i*4+4], "tick %d copy %d", tick, i)
					}
				}
			}
			assert.Positive(t, ended)
		})
	}
}

// TestSingleActionError: a bad action names its copy and changes nothing; the next
// good step goes on from where the vector was.
func TestSingleActionError(t *testing.T) {
	const n = 6
	cases := []struct {
		name   string
		action int64
		reason string
	}{
		{"too big", 2, "outside Discrete(2, start=0)"},
		{"negative", -1, "outside Discrete(2, start=0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := buffers(n, 4, 0)
			s, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, n, 1, b)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Reset(bg, 3))
			before := append([]float32(nil), b.Obs...)
			actions := []int64{0, 1, 0, c.action, 1, c.action}
			err = s.Step(bg, actions)
			require.ErrorIs(t, err, fastlane.ErrAction)
			ae, ok := errors.AsType[*fastlane.ActionError](err)
			require.True(t, ok)
			assert.Equal(t, fastlane.ActionError{Copy: 3, Agent: "cartpole", Action: c.action, Reason: c.reason}, *ae)
			assert.Equal(t, fastlane.CodeAction, fastlane.CodeOf(err))
			assert.Equal(t, []fastlane.Failure{{Copy: 3, Agent: "cartpole", Op: "action", Reason: c.reason}}, fastlane.Failures(err, s.Agent))
			require.Equal(t, before, b.Obs, "nothing stepped")
			require.NoError(t, s.Step(bg, []int64{0, 1, 0, 1, 1, 0}), "the vector goes on")
			require.NotEqual(t, before, b.Obs)
		})
	}
	t.Run("length", func(t *testing.T) {
		s, err := fastlane.NewSingle(testRegistry(t), "cartpole", nil, n, 1, buffers(n, 4, 0))
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Reset(bg, 3))
		err = s.Step(bg, []int64{0})
		require.ErrorIs(t, err, fastlane.ErrArgument)
		assert.Equal(t, fastlane.CodeArgument, fastlane.CodeOf(err))
	})
}

// TestPanic: a copy that panics fails the step with a report naming it and its stack;
// the other copies were stepped; the vector needs a Reset, after which it goes on.
func TestPanic(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const n = 4
			b := buffers(n, 1, 0)
			s, err := fastlane.NewSingle(testRegistry(t), "bomb", nil, n, w, b)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Reset(bg, 1))
			err = s.Step(bg, []int64{0, 0, 1, 0})
			require.ErrorIs(t, err, vector.ErrPanic)
			assert.Equal(t, fastlane.CodeCopy, fastlane.CodeOf(err))
			fs := fastlane.Failures(err, s.Agent)
			require.Len(t, fs, 1)
			assert.Equal(t, 2, fs[0].Copy)
			assert.Equal(t, "bomb", fs[0].Agent)
			assert.Equal(t, "step", fs[0].Op)
			assert.Contains(t, fs[0].Reason, "boom")
			assert.Contains(t, fs[0].Panic, "goroutine")
			assert.Equal(t, []float32{1, 1, 0, 1}, b.Obs, "the other copies stepped")
			var report struct {
				Message  string
				Failures []fastlane.Failure
			}
			require.NoError(t, json.Unmarshal(fastlane.Report(err, s.Agent), &report))
			assert.Contains(t, report.Message, "copy 2")
			assert.Equal(t, 2, report.Failures[0].Copy)

			err = s.Step(bg, []int64{0, 0, 0, 0})
			require.ErrorIs(t, err, vector.ErrNotReset)
			assert.Equal(t, fastlane.CodeState, fastlane.CodeOf(err))
			require.NoError(t, s.Reset(bg, 1))
			require.NoError(t, s.Step(bg, []int64{0, 0, 0, 0}))
			assert.Equal(t, []float32{1, 1, 1, 1}, b.Obs)
		})
	}
}

func TestNewErrors(t *testing.T) {
	reg := testRegistry(t)
	_, err := fastlane.NewSingle(reg, "maze", nil, 2, 1, buffers(2, 4, 0))
	require.ErrorIs(t, err, fastlane.ErrArgument)
	_, err = fastlane.NewSingle(reg, "cartpole", nil, 2, 1, buffers(2, 3, 0))
	require.ErrorIs(t, err, vector.ErrOption)
	assert.Equal(t, fastlane.CodeArgument, fastlane.CodeOf(err))
	_, err = fastlane.NewSingle(reg, "cartpole", nil, 0, 1, buffers(0, 4, 0))
	require.ErrorIs(t, err, fastlane.ErrArgument)
	_, err = fastlane.NewMulti(reg, "maze", nil, 2, 1, fastlane.MultiBuffers{})
	require.ErrorIs(t, err, fastlane.ErrArgument)
}

// trajectory is the golden cart-pole trajectory that Python's tests compare the
// library with: env/vector's Env, stepped with seeded random actions.
type trajectory struct {
	Config  string      `json:"config"`
	N       int         `json:"n"`
	Seed    uint64      `json:"seed"`
	Reset   []float32   `json:"reset"`
	Actions [][]int64   `json:"actions"`
	Obs     [][]float32 `json:"obs"`
	Final   [][]float32 `json:"final_obs"` // rows of done copies, zeros elsewhere
	Rewards [][]float64 `json:"rewards"`
	Term    [][]bool    `json:"terminated"`
	Trunc   [][]bool    `json:"truncated"`
}

func cartpoleTrajectory(t *testing.T) trajectory {
	const n, seed, ticks = 8, 42, 100
	tr := trajectory{Config: `{"max_steps": 30}`, N: n, Seed: seed}
	v, err := vector.New(n, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{MaxSteps: 30}) })
	require.NoError(t, err)
	require.NoError(t, v.Reset(bg, seed))
	tr.Reset = append([]float32(nil), v.Obs()...)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range ticks {
		actions := make([]int64, n)
		for i := range actions {
			actions[i] = rng.Int64N(2)
		}
		require.NoError(t, v.StepDiscrete(bg, actions))
		final := make([]float32, n*4)
		for i := range n {
			if v.Done(i) {
				copy(final[i*4:i*4+4], v.FinalObs()[i*4:i*4+4])
			}
		}
		tr.Actions = append(tr.Actions, actions)
		tr.Obs = append(tr.Obs, append([]float32(nil), v.Obs()...))
		tr.Final = append(tr.Final, final)
		tr.Rewards = append(tr.Rewards, append([]float64(nil), v.Rewards()...))
		tr.Term = append(tr.Term, append([]bool(nil), v.Terminated()...))
		tr.Trunc = append(tr.Trunc, append([]bool(nil), v.Truncated()...))
	}
	return tr
}

// TestGoldenTrajectory keeps testdata/cartpole_trajectory.json, which Python's
// tests/test_vector.py replays through the library, equal to what env/vector does
// now (go test -update rewrites it), and checks that a Single replays it.
func TestGoldenTrajectory(t *testing.T) {
	tr := cartpoleTrajectory(t)
	path := filepath.Join("testdata", "cartpole_trajectory.json")
	if *update {
		b, err := json.Marshal(tr)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var golden trajectory
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.Equal(t, tr, golden, "run go test ./internal/fastlane -run Golden -update")

	b := buffers(tr.N, 4, 0)
	s, err := fastlane.NewSingle(testRegistry(t), "cartpole", []byte(tr.Config), tr.N, 1, b)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Reset(bg, tr.Seed))
	require.Equal(t, tr.Reset, b.Obs)
	var terminated, truncated int
	for k, actions := range tr.Actions {
		require.NoError(t, s.Step(bg, actions))
		require.Equal(t, tr.Obs[k], b.Obs, "tick %d", k)
		require.Equal(t, tr.Rewards[k], b.Rewards, "tick %d", k)
		require.Equal(t, tr.Term[k], b.Terminated, "tick %d", k)
		require.Equal(t, tr.Trunc[k], b.Truncated, "tick %d", k)
		for i := range tr.N {
			terminated += btoi(b.Terminated[i])
			truncated += btoi(b.Truncated[i])
		}
	}
	assert.Positive(t, terminated, "the trajectory has terminations")
	assert.Positive(t, truncated, "and truncations")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
