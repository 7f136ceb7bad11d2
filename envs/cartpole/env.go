package cartpole

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
)

// Name is the name of the environment's single agent.
const Name = "cartpole"

// DefaultMaxSteps is CartPole-v1's max_episode_steps.
const DefaultMaxSteps = 500

// Errors of the package.
var (
	// ErrConfig is wrapped by every configuration error.
	ErrConfig = errors.New("cartpole: invalid configuration")
	// ErrEpisodeOver is returned by Step before the first Reset and after an episode
	// ended, until the next Reset or ResetTo (where Gymnasium only warns).
	ErrEpisodeOver = errors.New("cartpole: no episode running; call Reset")
	// ErrState is wrapped by the error of ResetTo for a state with a NaN or infinite
	// component.
	ErrState = errors.New("cartpole: invalid state")
	// ErrObsBuffer is wrapped by the error of StepDiscrete for an observation buffer
	// too short to hold an observation.
	ErrObsBuffer = errors.New("cartpole: observation buffer too short")
)

// Config configures an Env. The zero value is CartPole-v1.
type Config struct {
	// MaxSteps truncates an episode after this many steps; 0 means DefaultMaxSteps
	// (500, CartPole-v1's time limit). Negative values are invalid.
	MaxSteps int `json:"max_steps,omitempty"`
	// Integrator is the kinematics integrator; 0 means Euler, Gymnasium's default.
	Integrator Integrator `json:"kinematics_integrator,omitzero"`
}

func (c Config) withDefaults() Config {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.Integrator == 0 {
		c.Integrator = Euler
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("%w: max_steps is %d; want 0 (for %d) or more", ErrConfig, c.MaxSteps, DefaultMaxSteps))
	}
	if c.Integrator != Euler && c.Integrator != SemiImplicitEuler {
		errs = append(errs, fmt.Errorf("%w: unknown integrator %d; want Euler or SemiImplicitEuler", ErrConfig, int(c.Integrator)))
	}
	return errors.Join(errs...)
}

// Env is the cart-pole as an env.Env: Gymnasium's CartPole-v1, time limit included.
// See the package documentation for what matches Gymnasium and what does not.
//
// Reset and Step allocate nothing. The observation they return is a slice of an array
// the Env owns, valid until its next Reset, ResetTo or Step; copy it to keep it. An
// Env is not safe for concurrent use; run one per goroutine.
type Env struct {
	// sl is what Step reads and writes: &own, or the copy's slot in a Kernel's array
	// once the Env is in one (NewKernel).
	sl      *slot
	cfg     Config
	started bool
	obs     [4]float32
	own     slot
	inBatch bool

	spec env.Spec
}

// slot is the state Step reads and writes.
type slot struct {
	state State
	steps int
	// live is true from a reset until the episode ends.
	live bool
}

var (
	_ env.Env             = (*Env)(nil)
	_ env.DiscreteStepper = (*Env)(nil)
)

// NewEnv returns an environment with the configuration cfg; it needs a Reset before
// its first Step.
func NewEnv(cfg Config) (*Env, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Env{
		cfg: cfg,
		spec: env.Spec{
			Name:             Name,
			ObservationSpace: ObservationSpace(),
			ActionSpace:      ActionSpace(),
		},
	}
	e.sl = &e.own
	return e, nil
}

// ObservationSpace returns CartPole-v1's observation space: a float32 Box of shape (4,)
// with high = [2*XThreshold, +Inf, 2*ThetaThreshold, +Inf] and low = -high, so that
// the observation of a terminating state is still inside it.
func ObservationSpace() *spaces.Box {
	high := []float32{float32(XThreshold * 2), float32(math.Inf(1)), float32(ThetaThreshold * 2), float32(math.Inf(1))}
	low := make([]float32, len(high))
	for i, h := range high {
		low[i] = -h
	}
	return spaces.Must(spaces.NewBoxBounds([]int{4}, low, high))
}

// ActionSpace returns CartPole-v1's action space, Discrete(2): PushLeft (0) and
// PushRight (1).
func ActionSpace() spaces.Discrete { return spaces.Discrete{N: 2} }

// Config returns the configuration with its defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// Spec describes the single agent: Name, ObservationSpace, ActionSpace and no mask.
func (e *Env) Spec() env.Spec { return e.spec }

// Reset starts an episode from a state whose four components are drawn uniformly from
// [ResetLow, ResetHigh] (x, x_dot, theta, theta_dot in that order, each
// ResetLow + (ResetHigh-ResetLow)*u with u from a PCG generator seeded by seed), as
// Gymnasium's np_random.uniform(-0.05, 0.05, size=(4,)) draws them. The same seed
// gives the same state; the values differ from Gymnasium's for the same seed, whose
// generator is NumPy's. It never fails.
func (e *Env) Reset(seed uint64) (env.Step, error) {
	return e.begin(firstState(seed)), nil
}

// firstState returns the first state of the episode of seed. It draws from a PCG
// generator of its own, seeded afresh, so that it is a function of seed alone: the
// Kernel calls it for its auto-resets without reaching the copy's Env.
func firstState(seed uint64) State {
	var g rand.PCG
	g.Seed(seed, seed^0x9e3779b97f4a7c15)
	var s State
	s.X = uniform(&g)
	s.XDot = uniform(&g)
	s.Theta = uniform(&g)
	s.ThetaDot = uniform(&g)
	return s
}

// uniform draws from [ResetLow, ResetHigh) as rand.Rand.Float64 over g would.
func uniform(g *rand.PCG) float64 {
	u := float64(g.Uint64()<<11>>11) / (1 << 53)
	return ResetLow + float64((ResetHigh-ResetLow)*u)
}

// ResetTo starts an episode from the state s, for tests and for replaying a
// trajectory from a known state (Gymnasium's reset cannot do this). s may lie beyond
// the thresholds; the first Step then terminates. It returns an error wrapping
// ErrState, and changes nothing, if a component of s is NaN or infinite.
func (e *Env) ResetTo(s State) (env.Step, error) {
	for _, v := range [...]float64{s.X, s.XDot, s.Theta, s.ThetaDot} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return env.Step{}, fmt.Errorf("%w: %+v has a NaN or infinite component", ErrState, s)
		}
	}
	return e.begin(s), nil
}

func (e *Env) begin(s State) env.Step {
	*e.sl = slot{state: s, live: true}
	e.started = true
	s.Obs(e.obs[:])
	return env.Step{Obs: e.obs[:]}
}

// Step pushes the cart left (action 0) or right (action 1), advances the physics by
// Tau seconds with Dynamics and returns the observation with reward 1. Terminated
// reports the cart or the pole beyond its threshold (State.Terminated); the step that
// terminates is rewarded 1 too, as in Gymnasium. Truncated reports reaching MaxSteps
// steps without terminating.
//
// Step returns an error and changes nothing for an action outside Discrete(2) (the
// error wraps the *spaces.ValueError of agent.RawAction.Check, so errors.Is(err,
// spaces.ErrOutside) holds), and ErrEpisodeOver before the first Reset or after the
// episode ended.
func (e *Env) Step(a agent.RawAction) (env.Step, error) {
	sl := e.sl
	if !sl.live {
		return env.Step{}, ErrEpisodeOver
	}
	if uint64(a.Int) > 1 || a.Ints != nil || a.Floats != nil {
		return env.Step{}, e.invalid(a)
	}
	sl.state = Dynamics(sl.state, a.Int, e.cfg.Integrator)
	sl.steps++
	st := env.Step{Obs: e.obs[:], Reward: 1, Terminated: sl.state.Terminated()}
	st.Truncated = !st.Terminated && sl.steps >= e.cfg.MaxSteps
	sl.live = !st.Terminated && !st.Truncated
	sl.state.Obs(e.obs[:])
	return st, nil
}

// StepDiscrete is Step(agent.Discrete(action)) with the observation written into obs,
// which must hold 4 values (env.DiscreteStepper: vectors step cart-poles with it). It
// returns Step's errors, and an error wrapping ErrObsBuffer for a shorter obs, and then
// writes nothing and changes nothing.
func (e *Env) StepDiscrete(action int64, obs []float32, _ []bool) (reward float64, terminated, truncated bool, err error) {
	sl := e.sl
	switch {
	case !sl.live:
		return 0, false, false, ErrEpisodeOver
	case uint64(action) > 1:
		return 0, false, false, e.invalid(agent.Discrete(action))
	case len(obs) < len(e.obs):
		return 0, false, false, fmt.Errorf("%w: %d values; want %d", ErrObsBuffer, len(obs), len(e.obs))
	}
	sl.state = Dynamics(sl.state, action, e.cfg.Integrator)
	sl.steps++
	terminated = sl.state.Terminated()
	truncated = !terminated && sl.steps >= e.cfg.MaxSteps
	sl.live = !terminated && !truncated
	sl.state.Obs(obs)
	return 1, terminated, truncated, nil
}

// invalid returns the error for an action that is not 0 or 1 in its Int field alone.
func (e *Env) invalid(a agent.RawAction) error {
	err := a.Check(e.spec.ActionSpace)
	if err == nil {
		panic(fmt.Sprintf("cartpole: action %v rejected by Step but inside %v", a, e.spec.ActionSpace))
	}
	return fmt.Errorf("cartpole: action %v: %w", a, err)
}

// State returns the current physical state: the one the last observation was made
// from, full float64 precision.
func (e *Env) State() State { return e.sl.state }

// Steps returns how many steps the current (or last) episode has taken.
func (e *Env) Steps() int { return e.sl.steps }

// Info returns the current State, or nil before the first reset. It allocates.
func (e *Env) Info() any {
	if !e.started {
		return nil
	}
	return e.sl.state
}
