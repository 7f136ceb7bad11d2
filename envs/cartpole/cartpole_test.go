package cartpole_test

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trajectories is testdata/trajectory.json, written by testdata/trajectory.py with NumPy.
type trajectories struct {
	Constants struct {
		Gravity         float64     `json:"gravity"`
		MassCart        float64     `json:"masscart"`
		MassPole        float64     `json:"masspole"`
		TotalMass       float64     `json:"total_mass"`
		Length          float64     `json:"length"`
		PoleMassLength  float64     `json:"polemass_length"`
		ForceMag        float64     `json:"force_mag"`
		Tau             float64     `json:"tau"`
		ThetaThreshold  float64     `json:"theta_threshold_radians"`
		XThreshold      float64     `json:"x_threshold"`
		ObservationHigh []jsonFloat `json:"observation_high"`
	} `json:"constants"`
	Trig  string       `json:"trig"`
	Cases []goldenCase `json:"cases"`
}

// goldenPath lets the golden tests read another file written by trajectory.py, such as
// the one with NumPy's cosine and sine:
//
//	python3 testdata/trajectory.py --trig numpy > /tmp/numpy.json
//	go test -run Golden -v . -args -golden /tmp/numpy.json
var goldenPath = flag.String("golden", "testdata/trajectory.json", "the golden trajectories to check")

type goldenCase struct {
	Name       string     `json:"name"`
	Integrator string     `json:"integrator"`
	Initial    [4]float64 `json:"initial"`
	InitialObs [4]float64 `json:"initial_obs"`
	Steps      []struct {
		Action     int64      `json:"action"`
		State      [4]float64 `json:"state"`
		Obs        [4]float64 `json:"obs"`
		Reward     float64    `json:"reward"`
		Terminated bool       `json:"terminated"`
	} `json:"steps"`
}

// jsonFloat reads a number or Python's "inf" and "-inf".
type jsonFloat float64

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"inf"`:
		*f = jsonFloat(math.Inf(1))
	case `"-inf"`:
		*f = jsonFloat(math.Inf(-1))
	default:
		return json.Unmarshal(b, (*float64)(f))
	}
	return nil
}

func loadGolden(t *testing.T) trajectories {
	t.Helper()
	data, err := os.ReadFile(*goldenPath)
	require.NoError(t, err)
	var g trajectories
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Cases)
	return g
}

func integrator(t *testing.T, name string) cartpole.Integrator {
	t.Helper()
	var in cartpole.Integrator
	require.NoError(t, in.UnmarshalText([]byte(name)))
	return in
}

func vec(s cartpole.State) [4]float64 { return [4]float64{s.X, s.XDot, s.Theta, s.ThetaDot} }

func state(v [4]float64) cartpole.State {
	return cartpole.State{X: v[0], XDot: v[1], Theta: v[2], ThetaDot: v[3]}
}

func newEnv(t testing.TB, cfg cartpole.Config) *cartpole.Env {
	t.Helper()
	e, err := cartpole.NewEnv(cfg)
	require.NoError(t, err)
	return e
}

// float32Near reports whether got is want or one of its float32 neighbours: a state
// one float64 ulp away may round to the next float32.
func float32Near(want, got float32) bool {
	return got == want || got == math.Nextafter32(want, float32(math.Inf(1))) || got == math.Nextafter32(want, float32(math.Inf(-1)))
}

func TestConstantsMatchPython(t *testing.T) {
	g := loadGolden(t)
	c := g.Constants
	// Python's expressions, evaluated in float64 one operation at a time.
	pi, masspole, masscart, length := math.Pi, 0.1, 1.0, 0.5
	for _, tc := range []struct {
		name             string
		got, python, gen float64
	}{
		{"gravity", cartpole.Gravity, 9.8, c.Gravity},
		{"masscart", cartpole.MassCart, masscart, c.MassCart},
		{"masspole", cartpole.MassPole, masspole, c.MassPole},
		{"total_mass", cartpole.TotalMass, masspole + masscart, c.TotalMass},
		{"length", cartpole.Length, length, c.Length},
		{"polemass_length", cartpole.PoleMassLength, masspole * length, c.PoleMassLength},
		{"force_mag", cartpole.ForceMag, 10.0, c.ForceMag},
		{"tau", cartpole.Tau, 0.02, c.Tau},
		{"theta_threshold_radians", cartpole.ThetaThreshold, 12 * 2 * pi / 360, c.ThetaThreshold},
		{"x_threshold", cartpole.XThreshold, 2.4, c.XThreshold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.python, tc.got, "Go's evaluation of the Python expression")
			assert.Equal(t, tc.gen, tc.got, "the value in trajectory.json")
		})
	}
}

func TestSpec(t *testing.T) {
	g := loadGolden(t)
	spec := newEnv(t, cartpole.Config{}).Spec()
	assert.Equal(t, cartpole.Name, spec.Name)
	assert.Equal(t, 0, spec.MaskLen)
	assert.Equal(t, spaces.Discrete{N: 2}, spec.ActionSpace)
	box, ok := spec.ObservationSpace.(*spaces.Box)
	require.True(t, ok, "observation space %v", spec.ObservationSpace)
	require.Equal(t, []int{4}, box.Shape())
	require.Len(t, g.Constants.ObservationHigh, 4)
	for i, h := range g.Constants.ObservationHigh {
		lo, hi := box.Bounds(i)
		assert.Equal(t, float32(h), hi, "high[%d]", i)
		assert.Equal(t, -float32(h), lo, "low[%d]", i)
	}
}

// TestGoldenTrajectories checks Env against the NumPy transcription of Gymnasium's step
// in testdata/trajectory.json, in two ways: one step from each golden state, which must
// land within a few float64 ulps of the next golden state; and the whole recorded
// action sequence replayed from the initial state. Go's math.Cos and the C library's
// cos that Python calls differ in the last bit for some angles, and the replay is open
// loop, so those differences grow with the pole's instability (by about e^(5.5 t/s));
// the replay's tolerance allows for 200 steps of that.
func TestGoldenTrajectories(t *testing.T) {
	g := loadGolden(t)
	var stepDiff, replayDiff float64
	for _, c := range g.Cases {
		in := integrator(t, c.Integrator)
		t.Run(c.Name+"/step", func(t *testing.T) {
			e := newEnv(t, cartpole.Config{Integrator: in})
			prev := c.Initial
			for k, want := range c.Steps {
				_, err := e.ResetTo(state(prev))
				require.NoError(t, err)
				st, err := e.Step(agent.Discrete(want.Action))
				require.NoError(t, err, "step %d", k+1)
				got := vec(e.State())
				for i := range 4 {
					d := math.Abs(got[i] - want.State[i])
					stepDiff = max(stepDiff, d)
					require.LessOrEqual(t, d, 1e-14*max(1, math.Abs(want.State[i])), "step %d state[%d]: got %v, want %v", k+1, i, got[i], want.State[i])
					require.True(t, float32Near(float32(want.Obs[i]), st.Obs[i]), "step %d obs[%d]: got %v, want %v", k+1, i, st.Obs[i], float32(want.Obs[i]))
				}
				require.Equal(t, want.Reward, st.Reward, "step %d reward", k+1)
				require.Equal(t, want.Terminated, st.Terminated, "step %d terminated", k+1)
				prev = want.State
			}
		})
		t.Run(c.Name+"/replay", func(t *testing.T) {
			e := newEnv(t, cartpole.Config{Integrator: in})
			st, err := e.ResetTo(state(c.Initial))
			require.NoError(t, err)
			for i := range 4 {
				require.Equal(t, float32(c.InitialObs[i]), st.Obs[i], "initial obs[%d]", i)
			}
			for k, want := range c.Steps {
				st, err = e.Step(agent.Discrete(want.Action))
				require.NoError(t, err, "step %d", k+1)
				got := vec(e.State())
				for i := range 4 {
					d := math.Abs(got[i] - want.State[i])
					replayDiff = max(replayDiff, d)
					require.LessOrEqual(t, d, 1e-8*max(1, math.Abs(want.State[i])), "step %d state[%d]: got %v, want %v", k+1, i, got[i], want.State[i])
				}
				require.Equal(t, want.Reward, st.Reward, "step %d reward", k+1)
				require.Equal(t, want.Terminated, st.Terminated, "step %d terminated", k+1)
				require.False(t, st.Truncated, "step %d truncated", k+1)
			}
			require.Equal(t, len(c.Steps), e.Steps())
		})
	}
	t.Logf("%s (%s trig): max |Go - Python| over the state components: %g from a golden state, %g over a replay", *goldenPath, g.Trig, stepDiff, replayDiff)
}

// step is a straightforward transcription of Gymnasium's CartPoleEnv.step, written
// apart from the package so that a mistake in one does not hide in the other.
func step(s [4]float64, action int64, integrator string) ([4]float64, bool) {
	gravity, masscart, masspole := 9.8, 1.0, 0.1
	totalMass := masspole + masscart
	length := 0.5
	polemassLength := masspole * length
	forceMag, tau := 10.0, 0.02
	thetaThresholdRadians := 12 * 2 * math.Pi / 360
	xThreshold := 2.4

	x, xDot, theta, thetaDot := s[0], s[1], s[2], s[3]
	force := -forceMag
	if action == 1 {
		force = forceMag
	}
	costheta := math.Cos(theta)
	sintheta := math.Sin(theta)
	temp := (force + polemassLength*math.Pow(thetaDot, 2)*sintheta) / totalMass
	thetaacc := (gravity*sintheta - costheta*temp) / (length * (4.0/3.0 - masspole*math.Pow(costheta, 2)/totalMass))
	xacc := temp - polemassLength*thetaacc*costheta/totalMass
	if integrator == "euler" {
		x = x + tau*xDot
		xDot = xDot + tau*xacc
		theta = theta + tau*thetaDot
		thetaDot = thetaDot + tau*thetaacc
	} else {
		xDot = xDot + tau*xacc
		x = x + tau*xDot
		thetaDot = thetaDot + tau*thetaacc
		theta = theta + tau*thetaDot
	}
	terminated := x < -xThreshold || x > xThreshold || theta < -thetaThresholdRadians || theta > thetaThresholdRadians
	return [4]float64{x, xDot, theta, thetaDot}, terminated
}

func TestStepMatchesTranscription(t *testing.T) {
	actions := []int64{1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1}
	for _, tc := range []struct {
		name       string
		integrator string
		initial    [4]float64
	}{
		{"euler/small", "euler", [4]float64{0.01, -0.02, 0.03, -0.04}},
		{"euler/zero", "euler", [4]float64{}},
		{"euler/moving", "euler", [4]float64{-1, 0.8, -0.1, 0.5}},
		{"semi-implicit/small", "semi-implicit euler", [4]float64{0.01, -0.02, 0.03, -0.04}},
		{"semi-implicit/moving", "semi-implicit euler", [4]float64{1.5, -0.3, 0.12, -0.7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cartpole.Config{Integrator: integrator(t, tc.integrator)})
			_, err := e.ResetTo(state(tc.initial))
			require.NoError(t, err)
			want := tc.initial
			for k := 0; ; k++ {
				a := actions[k%len(actions)]
				var term bool
				want, term = step(want, a, tc.integrator)
				st, err := e.Step(agent.Discrete(a))
				require.NoError(t, err, "step %d", k+1)
				got := vec(e.State())
				for i := range 4 {
					require.InDelta(t, want[i], got[i], 1e-12, "step %d state[%d]", k+1, i)
					require.Equal(t, float32(got[i]), st.Obs[i], "step %d obs[%d] is the state as float32", k+1, i)
				}
				require.Equal(t, 1.0, st.Reward)
				require.Equal(t, term, st.Terminated, "step %d", k+1)
				require.Equal(t, k+1, e.Steps())
				if term {
					return
				}
				require.Less(t, k, 500, "the action pattern should topple the pole")
			}
		})
	}
}

func TestDynamicsIntegrators(t *testing.T) {
	s := cartpole.State{X: 0.1, XDot: -0.2, Theta: 0.05, ThetaDot: 0.3}
	euler := cartpole.Dynamics(s, cartpole.PushRight, cartpole.Euler)
	assert.Equal(t, euler, cartpole.Dynamics(s, cartpole.PushRight, 0), "the zero Integrator is Euler")
	assert.Equal(t, s.X+cartpole.Tau*s.XDot, euler.X, "Euler moves with the old velocity")
	semi := cartpole.Dynamics(s, cartpole.PushRight, cartpole.SemiImplicitEuler)
	assert.Equal(t, s.X+cartpole.Tau*semi.XDot, semi.X, "semi-implicit Euler moves with the new velocity")
	assert.Equal(t, euler.XDot, semi.XDot, "both integrate the velocities alike")
	assert.Equal(t, cartpole.Dynamics(s, cartpole.PushLeft, cartpole.Euler), cartpole.Dynamics(s, 7, cartpole.Euler), "any action but 1 pushes left")
	assert.Greater(t, euler.XDot, s.XDot, "pushing right speeds the cart up to the right")
}

func TestTerminatedThresholds(t *testing.T) {
	up, down := math.Inf(1), math.Inf(-1)
	x, th := cartpole.XThreshold, cartpole.ThetaThreshold
	assert.InDelta(t, 0.2094, th, 1e-4)
	for _, tc := range []struct {
		name string
		s    cartpole.State
		want bool
	}{
		{"upright", cartpole.State{}, false},
		{"x at +threshold", cartpole.State{X: x}, false},
		{"x above +threshold", cartpole.State{X: math.Nextafter(x, up)}, true},
		{"x at -threshold", cartpole.State{X: -x}, false},
		{"x below -threshold", cartpole.State{X: math.Nextafter(-x, down)}, true},
		{"theta at +threshold", cartpole.State{Theta: th}, false},
		{"theta above +threshold", cartpole.State{Theta: math.Nextafter(th, up)}, true},
		{"theta at -threshold", cartpole.State{Theta: -th}, false},
		{"theta below -threshold", cartpole.State{Theta: math.Nextafter(-th, down)}, true},
		{"fast but inside", cartpole.State{XDot: 1e9, ThetaDot: -1e9}, false},
		{"NaN", cartpole.State{X: math.NaN(), Theta: math.NaN()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.s.Terminated())
		})
	}
}

func TestTerminationEndsEpisode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  cartpole.State
		action int64
	}{
		{"x beyond +2.4", cartpole.State{X: 2.39, XDot: 1}, cartpole.PushRight},
		{"x beyond -2.4", cartpole.State{X: -2.39, XDot: -1}, cartpole.PushLeft},
		{"theta beyond +12°", cartpole.State{Theta: 0.2, ThetaDot: 1}, cartpole.PushLeft},
		{"theta beyond -12°", cartpole.State{Theta: -0.2, ThetaDot: -1}, cartpole.PushRight},
		{"already beyond", cartpole.State{X: 3}, cartpole.PushRight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cartpole.Config{})
			_, err := e.ResetTo(tc.start)
			require.NoError(t, err)
			st, err := e.Step(agent.Discrete(tc.action))
			require.NoError(t, err)
			assert.True(t, st.Terminated)
			assert.False(t, st.Truncated)
			assert.Equal(t, 1.0, st.Reward, "the terminating step is rewarded 1")
			assert.Equal(t, cartpole.Dynamics(tc.start, tc.action, cartpole.Euler), e.State())
			_, err = e.Step(agent.Discrete(tc.action))
			require.ErrorIs(t, err, cartpole.ErrEpisodeOver)
		})
	}
}

// pd is the balancing controller of the tests: push toward where the pole is falling.
func pd(obs []float32) agent.RawAction {
	if obs[2]+0.5*obs[3] > 0 {
		return agent.Discrete(cartpole.PushRight)
	}
	return agent.Discrete(cartpole.PushLeft)
}

// play runs one episode with pd and returns its length, its return and its last step.
func play(t testing.TB, e *cartpole.Env, seed uint64) (int, float64, env.Step) {
	t.Helper()
	st, err := e.Reset(seed)
	require.NoError(t, err)
	n, ret := 0, 0.0
	for !st.Done() {
		st, err = e.Step(pd(st.Obs))
		require.NoError(t, err)
		n++
		ret += st.Reward
		require.Equal(t, n, e.Steps())
	}
	return n, ret, st
}

func TestTruncation(t *testing.T) {
	t.Run("500 steps by default", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		assert.Equal(t, cartpole.DefaultMaxSteps, e.Config().MaxSteps)
		for seed := range uint64(10) {
			n, ret, last := play(t, e, seed)
			assert.Equal(t, 500, n, "seed %d", seed)
			assert.Equal(t, 500.0, ret, "seed %d", seed)
			assert.True(t, last.Truncated, "seed %d", seed)
			assert.False(t, last.Terminated, "seed %d", seed)
			_, err := e.Step(agent.Discrete(0))
			require.ErrorIs(t, err, cartpole.ErrEpisodeOver)
		}
	})
	t.Run("MaxSteps", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{MaxSteps: 7, Integrator: cartpole.SemiImplicitEuler})
		n, ret, last := play(t, e, 3)
		assert.Equal(t, 7, n)
		assert.Equal(t, 7.0, ret)
		assert.True(t, last.Truncated)
		assert.False(t, last.Terminated)
	})
	t.Run("terminating at the limit is terminated alone", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{MaxSteps: 1})
		_, err := e.ResetTo(cartpole.State{X: 2.39, XDot: 1})
		require.NoError(t, err)
		st, err := e.Step(agent.Discrete(cartpole.PushRight))
		require.NoError(t, err)
		assert.True(t, st.Terminated)
		assert.False(t, st.Truncated)
	})
}

func TestStepErrors(t *testing.T) {
	t.Run("before Reset", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		_, err := e.Step(agent.Discrete(0))
		require.ErrorIs(t, err, cartpole.ErrEpisodeOver)
		assert.Nil(t, e.Info())
	})
	for _, tc := range []struct {
		name string
		a    agent.RawAction
	}{
		{"2", agent.Discrete(2)},
		{"-1", agent.Discrete(-1)},
		{"huge", agent.Discrete(math.MaxInt64)},
		{"Floats", agent.Continuous([]float32{1})},
		{"Ints", agent.MultiInts([]int64{1})},
		{"Int and Floats", agent.RawAction{Int: 1, Floats: []float32{}}},
	} {
		t.Run("invalid action "+tc.name, func(t *testing.T) {
			e := newEnv(t, cartpole.Config{})
			_, err := e.Reset(5)
			require.NoError(t, err)
			st, err := e.Step(agent.Discrete(cartpole.PushRight))
			require.NoError(t, err)
			before, obs := e.State(), append([]float32(nil), st.Obs...)

			_, err = e.Step(tc.a)
			require.Error(t, err)
			assert.ErrorIs(t, err, spaces.ErrOutside)
			var ve *spaces.ValueError
			assert.ErrorAs(t, err, &ve)
			assert.NotErrorIs(t, err, cartpole.ErrEpisodeOver)
			assert.Equal(t, before, e.State(), "the state is unchanged")
			assert.Equal(t, 1, e.Steps(), "the step is not counted")

			st, err = e.Step(agent.Discrete(cartpole.PushLeft))
			require.NoError(t, err, "the episode goes on")
			assert.Equal(t, cartpole.Dynamics(before, cartpole.PushLeft, cartpole.Euler), e.State())
			assert.NotEqual(t, obs, st.Obs)
			assert.Equal(t, 2, e.Steps())
		})
	}
}

func TestReset(t *testing.T) {
	t.Run("deterministic by seed", func(t *testing.T) {
		a, b := newEnv(t, cartpole.Config{}), newEnv(t, cartpole.Config{})
		for seed := range uint64(20) {
			sa, err := a.Reset(seed)
			require.NoError(t, err)
			sb, err := b.Reset(seed)
			require.NoError(t, err)
			assert.Equal(t, sa.Obs, sb.Obs)
			assert.Equal(t, a.State(), b.State())
			_, err = b.Step(agent.Discrete(1))
			require.NoError(t, err)
			_, err = b.Reset(seed) // again, after a step
			require.NoError(t, err)
			assert.Equal(t, a.State(), b.State())
			assert.Zero(t, b.Steps())
		}
		_, _ = a.Reset(1)
		_, _ = b.Reset(2)
		assert.NotEqual(t, a.State(), b.State(), "different seeds give different states")
	})
	t.Run("within bounds", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		lo, hi := math.Inf(1), math.Inf(-1)
		for seed := range uint64(2000) {
			st, err := e.Reset(seed)
			require.NoError(t, err)
			assert.Equal(t, env.Step{Obs: st.Obs}, st, "a reset reports no reward and no end")
			for i, v := range vec(e.State()) {
				require.GreaterOrEqual(t, v, cartpole.ResetLow, "seed %d [%d]", seed, i)
				require.LessOrEqual(t, v, cartpole.ResetHigh, "seed %d [%d]", seed, i)
				require.Equal(t, float32(v), st.Obs[i])
				lo, hi = min(lo, v), max(hi, v)
			}
			require.NoError(t, e.Spec().ObservationSpace.(*spaces.Box).CheckFloats(st.Obs))
		}
		assert.Less(t, lo, -0.049, "the draws cover the range")
		assert.Greater(t, hi, 0.049, "the draws cover the range")
	})
	t.Run("Info", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		_, err := e.Reset(9)
		require.NoError(t, err)
		assert.Equal(t, e.State(), e.Info())
	})
	t.Run("ResetTo rejects non-finite states", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		_, err := e.Reset(9)
		require.NoError(t, err)
		before := e.State()
		for _, s := range []cartpole.State{{X: math.NaN()}, {XDot: math.Inf(1)}, {Theta: math.Inf(-1)}, {ThetaDot: math.NaN()}} {
			_, err := e.ResetTo(s)
			require.ErrorIs(t, err, cartpole.ErrState)
			assert.Equal(t, before, e.State())
		}
	})
	t.Run("after the end", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		_, err := e.ResetTo(cartpole.State{X: 3})
		require.NoError(t, err)
		_, err = e.Step(agent.Discrete(0))
		require.NoError(t, err)
		_, err = e.Reset(4)
		require.NoError(t, err)
		_, err = e.Step(agent.Discrete(0))
		require.NoError(t, err, "a reset starts a new episode")
	})
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  cartpole.Config
		want []string
	}{
		{"negative max steps", cartpole.Config{MaxSteps: -1}, []string{"max_steps is -1"}},
		{"unknown integrator", cartpole.Config{Integrator: 3}, []string{"unknown integrator 3"}},
		{"both", cartpole.Config{MaxSteps: -2, Integrator: -1}, []string{"max_steps is -2", "unknown integrator -1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cartpole.NewEnv(tc.cfg)
			require.ErrorIs(t, err, cartpole.ErrConfig)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		assert.Equal(t, cartpole.Config{MaxSteps: 500, Integrator: cartpole.Euler}, newEnv(t, cartpole.Config{}).Config())
	})
	t.Run("JSON", func(t *testing.T) {
		var cfg cartpole.Config
		require.NoError(t, json.Unmarshal([]byte(`{"max_steps":10,"kinematics_integrator":"semi-implicit euler"}`), &cfg))
		assert.Equal(t, cartpole.Config{MaxSteps: 10, Integrator: cartpole.SemiImplicitEuler}, cfg)
		out, err := json.Marshal(cfg)
		require.NoError(t, err)
		assert.JSONEq(t, `{"max_steps":10,"kinematics_integrator":"semi-implicit euler"}`, string(out))
		out, err = json.Marshal(cartpole.Config{})
		require.NoError(t, err)
		assert.JSONEq(t, `{}`, string(out))
		err = json.Unmarshal([]byte(`{"kinematics_integrator":"rk4"}`), &cfg)
		assert.ErrorIs(t, err, cartpole.ErrConfig)
	})
}

func TestIntegratorText(t *testing.T) {
	for _, tc := range []struct {
		in   cartpole.Integrator
		text string
	}{
		{cartpole.Euler, "euler"},
		{cartpole.SemiImplicitEuler, "semi-implicit euler"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.text, tc.in.String())
			out, err := tc.in.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tc.text, string(out))
			var back cartpole.Integrator
			require.NoError(t, back.UnmarshalText(out))
			assert.Equal(t, tc.in, back)
		})
	}
	out, err := cartpole.Integrator(0).MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "euler", string(out), "zero stands for Euler")
	_, err = cartpole.Integrator(9).MarshalText()
	assert.ErrorIs(t, err, cartpole.ErrConfig)
	assert.Equal(t, "Integrator(9)", cartpole.Integrator(9).String())
}

func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	e := newEnv(t, cartpole.Config{})
	st, err := e.Reset(1)
	require.NoError(t, err)
	seed := uint64(1)
	left, right := agent.Discrete(cartpole.PushLeft), agent.Discrete(cartpole.PushRight)
	steps := testing.AllocsPerRun(2000, func() {
		if st.Done() {
			seed++
			st, err = e.Reset(seed)
		}
		a := left
		if st.Obs[2]+0.5*st.Obs[3] > 0 {
			a = right
		}
		st, err = e.Step(a)
	})
	require.NoError(t, err)
	assert.Zero(t, steps, "allocations per Step")
	resets := testing.AllocsPerRun(200, func() {
		seed++
		st, err = e.Reset(seed)
	})
	require.NoError(t, err)
	assert.Zero(t, resets, "allocations per Reset")
	resetTo := testing.AllocsPerRun(200, func() {
		st, err = e.ResetTo(cartpole.State{X: 0.01})
	})
	require.NoError(t, err)
	assert.Zero(t, resetTo, "allocations per ResetTo")
}

func TestObsAliasesEnv(t *testing.T) {
	e := newEnv(t, cartpole.Config{})
	st, err := e.Reset(0)
	require.NoError(t, err)
	first := st.Obs
	kept := append([]float32(nil), first...)
	st, err = e.Step(agent.Discrete(1))
	require.NoError(t, err)
	assert.Same(t, &first[0], &st.Obs[0], "the observation buffer is reused")
	assert.NotEqual(t, kept, st.Obs)
}

// TestStepDiscrete checks that StepDiscrete gives Step's results, episode after
// episode, and Step's errors, writing nothing on an error.
func TestStepDiscrete(t *testing.T) {
	for _, in := range []cartpole.Integrator{cartpole.Euler, cartpole.SemiImplicitEuler} {
		t.Run(in.String(), func(t *testing.T) {
			cfg := cartpole.Config{MaxSteps: 60, Integrator: in}
			a, b := newEnv(t, cfg), newEnv(t, cfg)
			rng := rand.New(rand.NewPCG(3, 4))
			obs := make([]float32, 4)
			ends := 0
			for seed := range uint64(40) {
				_, err := a.Reset(seed)
				require.NoError(t, err)
				_, err = b.Reset(seed)
				require.NoError(t, err)
				for {
					act := rng.Int64N(2)
					want, err := a.Step(agent.Discrete(act))
					require.NoError(t, err)
					r, term, trunc, err := b.StepDiscrete(act, obs, nil)
					require.NoError(t, err)
					require.Equal(t, want.Obs, obs)
					require.Equal(t, want.Reward, r)
					require.Equal(t, want.Terminated, term)
					require.Equal(t, want.Truncated, trunc)
					require.Equal(t, a.State(), b.State())
					if term || trunc {
						ends++
						break
					}
				}
			}
			assert.Equal(t, 40, ends)
		})
	}
	t.Run("errors", func(t *testing.T) {
		e := newEnv(t, cartpole.Config{})
		obs := []float32{9, 9, 9, 9}
		_, _, _, err := e.StepDiscrete(0, obs, nil)
		require.ErrorIs(t, err, cartpole.ErrEpisodeOver)
		_, err = e.Reset(1)
		require.NoError(t, err)
		before := e.State()
		for _, tc := range []struct {
			name   string
			action int64
			obs    []float32
			want   error
		}{
			{"action 2", 2, obs, spaces.ErrOutside},
			{"action -1", -1, obs, spaces.ErrOutside},
			{"short buffer", 0, obs[:3], cartpole.ErrObsBuffer},
		} {
			_, _, _, err := e.StepDiscrete(tc.action, tc.obs, nil)
			require.ErrorIs(t, err, tc.want, tc.name)
			assert.Equal(t, []float32{9, 9, 9, 9}, obs, "%s: nothing written", tc.name)
			assert.Equal(t, before, e.State(), "%s: state unchanged", tc.name)
			assert.Equal(t, 0, e.Steps(), tc.name)
		}
	})
}
