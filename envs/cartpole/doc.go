// Package cartpole is the classic cart-pole balancing task as a single-agent baton
// environment (env.Env): Gymnasium's CartPole-v1 (gymnasium/envs/classic_control/
// cartpole.py, version 1.x, with its 500-step TimeLimit), written in Go.
//
// What you touch here: call Register (or NewEnv) to use it; read it as the smallest
// example of an env.Env with a registry entry. It is an example, not API to build on.
//
// A pole stands on a cart that moves along a frictionless track. Each step pushes the
// cart left or right with a fixed force; the pole must be kept upright and the cart on
// the track for as long as possible.
//
// # Spaces
//
//	observation  Box(-high, high, (4,), float32), high = [4.8, inf, 0.41887903, inf]:
//	             cart position, cart velocity, pole angle, pole angular velocity
//	action       Discrete(2): 0 (PushLeft) pushes the cart left, 1 (PushRight) right
//
// # Constants
//
// The constants are Gymnasium's, as the float64 values Python computes:
//
//	Gravity         9.8                  m/s²
//	MassCart        1.0                  kg
//	MassPole        0.1                  kg
//	TotalMass       1.1                  MassPole + MassCart
//	Length          0.5                  m, half the pole's length
//	PoleMassLength  0.05                 MassPole * Length
//	ForceMag        10.0                 N per push
//	Tau             0.02                 s per step
//	ThetaThreshold  0.20943951023931953  rad (12°), 12 * 2 * pi / 360
//	XThreshold      2.4                  m
//	ResetLow/High   -0.05, 0.05          bounds of each initial state component
//	DefaultMaxSteps 500                  CartPole-v1's max_episode_steps
//
// # Episodes
//
// Reset draws each of the four state components uniformly from [-0.05, 0.05]. Every
// Step is rewarded 1, the terminating one included. An episode terminates when the
// cart leaves [-2.4, 2.4] or the pole leaves [-ThetaThreshold, ThetaThreshold] (strict
// comparisons: a state exactly on a threshold goes on), and is truncated after
// Config.MaxSteps steps (0 means 500) when it has not terminated.
//
// # What matches Gymnasium
//
// The dynamics match: Dynamics computes Gymnasium's CartPoleEnv.step in float64 with
// the same operations in the same order, for both of its kinematics integrators (Euler,
// the default, and SemiImplicitEuler, set by Config.Integrator), and the observation is
// the state rounded to float32 as NumPy rounds it. The tests replay trajectories that
// testdata/trajectory.py computes with NumPy and find the same states to within float64
// rounding: one step from a golden state lands within 2.3e-16 of the next golden state.
// The only difference is in the cosine, where Go's math.Cos and the C library's cos
// that Python's math.cos calls (or NumPy's np.cos, which recent Gymnasium releases
// call) disagree in the last bit for some angles; replaying a whole action sequence
// open loop, those differences grow with the pole's instability, to about 1e-10 after
// 200 steps. The spaces, rewards, thresholds and the initial-state distribution match.
//
// What does not match:
//
//   - The random stream. Reset seeds a math/rand/v2 PCG generator, Gymnasium seeds
//     NumPy's PCG64, so the same seed gives a different initial state. The same seed
//     always gives the same state here.
//   - Step after the end of an episode returns ErrEpisodeOver, where Gymnasium warns
//     and goes on with reward 0. Step before the first Reset returns it too.
//   - An action outside Discrete(2) is an error that leaves the state as it was, where
//     Gymnasium fails an assertion.
//   - At the time limit, a step that also terminates reports Terminated alone, as
//     the hrl runtime does; Gymnasium's TimeLimit wrapper reports both.
//   - ResetTo starts an episode from a given State, which Gymnasium's reset cannot.
//
// # The hot path and the baseline
//
// Reset and Step allocate nothing: the observation lives in an array the Env owns and
// stays valid until the next Reset, ResetTo or Step. Step checks the action with three
// comparisons (Int is 0 or 1, Ints and Floats are nil), calls Dynamics and
// State.Terminated, counts the step and writes the observation: no interface, no
// boxing; only a rejected action builds an error, through agent.RawAction.Check. Dynamics, State.Terminated and State.Obs are
// exported so that a hand-written loop (the benchmark's baseline) runs the very same
// physics without Env, and the difference between the two is the env's own cost.
//
// # Many cart-poles at once
//
// Env is a vector.Batcher: a vector (env/vector) of cart-poles asks copy 0 for a
// Kernel (NewKernel) and steps them through it, one call per run of copies, with no
// interface call per copy. The Kernel keeps the copies' states in one contiguous
// array, which each Env reads and writes from then on, takes the sines and cosines of
// a block of copies in one loop and the rest of their physics in another, and resets
// an ended copy from its episode seed alone. Its results are StepDiscrete's and
// Reset's, to the bit; docs/performance-vectors.md has the measurements.
package cartpole
