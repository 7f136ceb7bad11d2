package cartpole

//go:generate go tool stringer -type=Integrator -linecomment

import (
	"fmt"
	"math"
)

// The physical constants of Gymnasium's CartPoleEnv, as the float64 values Python
// computes for them.
const (
	// Gravity is the gravitational acceleration, m/s².
	Gravity float64 = 9.8
	// MassCart is the mass of the cart, kg.
	MassCart float64 = 1.0
	// MassPole is the mass of the pole, kg.
	MassPole float64 = 0.1
	// TotalMass is MassPole + MassCart.
	TotalMass float64 = MassPole + MassCart
	// Length is half the pole's length, m (Gymnasium's length).
	Length float64 = 0.5
	// PoleMassLength is MassPole * Length.
	PoleMassLength float64 = MassPole * Length
	// ForceMag is the magnitude of the force a push applies to the cart, N.
	ForceMag float64 = 10.0
	// Tau is the time step, s.
	Tau float64 = 0.02
	// ThetaThreshold is the pole angle, in radians, beyond which the episode
	// terminates: 12 degrees, Python's float64 result of 12 * 2 * math.pi / 360
	// (0x1.acee9f37bebd5p-3). Go's exact constant arithmetic would round the same
	// expression one unit in the last place higher, hence the literal.
	ThetaThreshold float64 = 0x1.acee9f37bebd5p-3
	// XThreshold is the cart position beyond which the episode terminates, m.
	XThreshold float64 = 2.4
	// ResetLow and ResetHigh bound the uniform draw of each component of the
	// initial state.
	ResetLow, ResetHigh float64 = -0.05, 0.05
)

// The actions of the Discrete(2) action space.
const (
	// PushLeft applies -ForceMag to the cart.
	PushLeft int64 = 0
	// PushRight applies +ForceMag to the cart.
	PushRight int64 = 1
)

// State is the cart-pole's physical state, in Gymnasium's order: cart position (m),
// cart velocity (m/s), pole angle (rad, 0 upright, positive clockwise) and pole
// angular velocity (rad/s). It is a plain value, safe to copy and share.
type State struct {
	X        float64 `json:"x"`
	XDot     float64 `json:"x_dot"`
	Theta    float64 `json:"theta"`
	ThetaDot float64 `json:"theta_dot"`
}

// Terminated reports whether s ends an episode: the cart beyond ±XThreshold or the
// pole beyond ±ThetaThreshold, with Gymnasium's strict comparisons (a state exactly on
// a threshold goes on; NaN never terminates).
func (s State) Terminated() bool {
	return s.X < -XThreshold || s.X > XThreshold || s.Theta < -ThetaThreshold || s.Theta > ThetaThreshold
}

// Obs writes s as the float32 observation [x, x_dot, theta, theta_dot] into dst,
// which must hold at least 4 values.
func (s State) Obs(dst []float32) {
	_ = dst[3]
	dst[0], dst[1], dst[2], dst[3] = float32(s.X), float32(s.XDot), float32(s.Theta), float32(s.ThetaDot)
}

// Integrator is the numerical scheme of Dynamics, Gymnasium's kinematics_integrator.
// Its String is Gymnasium's name of the scheme.
type Integrator int

// The integrators. The zero Integrator is not one of them; where a Config or Dynamics
// takes one, zero means Euler.
const (
	// Euler is the explicit Euler scheme, Gymnasium's default "euler": positions
	// advance with the old velocities.
	Euler Integrator = 1 + iota // euler
	// SemiImplicitEuler is Gymnasium's "semi-implicit euler": velocities advance
	// first and positions advance with the new velocities.
	SemiImplicitEuler // semi-implicit euler
)

// MarshalText writes Gymnasium's name of the integrator; the zero Integrator writes
// "euler", the integrator it stands for.
func (i Integrator) MarshalText() ([]byte, error) {
	switch i {
	case 0:
		return []byte(Euler.String()), nil
	case Euler, SemiImplicitEuler:
		return []byte(i.String()), nil
	}
	return nil, fmt.Errorf("%w: unknown integrator %d", ErrConfig, int(i))
}

// UnmarshalText reads Gymnasium's name of an integrator: "euler" or
// "semi-implicit euler"; "" is the zero Integrator.
func (i *Integrator) UnmarshalText(text []byte) error {
	switch string(text) {
	case "":
		*i = 0
	case "euler":
		*i = Euler
	case "semi-implicit euler":
		*i = SemiImplicitEuler
	default:
		return fmt.Errorf("%w: unknown integrator %q; want \"euler\" or \"semi-implicit euler\"", ErrConfig, text)
	}
	return nil
}

// Dynamics advances s by one time step of Tau seconds with the action applied: 1
// (PushRight) pushes right and any other value pushes left, as Gymnasium's
// `force_mag if action == 1 else -force_mag`. in is SemiImplicitEuler or anything else
// for Euler. It checks nothing and reads no state but its arguments.
//
// It is the one implementation of the physics: Env.Step calls it, and a hand-written
// loop (the benchmark baseline) can call it to do the same work without Env. It
// computes in float64 with Gymnasium's operations in Gymnasium's order, so that it
// reproduces CartPoleEnv.step to float64 rounding; the conversions to float64 around
// products that are added keep the compiler from fusing them into FMA instructions
// (allowed by the Go specification, done on arm64 and others), which would round
// differently from NumPy.
func Dynamics(s State, action int64, in Integrator) State {
	sintheta, costheta := sincos(s.Theta)
	return dynamics(s, sintheta, costheta, action, in)
}

// dynamics is Dynamics with the sine and cosine of s.Theta given, so that a loop over
// many states can take them all first (Kernel).
func dynamics(s State, sintheta, costheta float64, action int64, in Integrator) State {
	force := -ForceMag
	if action == PushRight {
		force = ForceMag
	}
	temp := (force + float64(PoleMassLength*(s.ThetaDot*s.ThetaDot)*sintheta)) / TotalMass
	thetaacc := (float64(Gravity*sintheta) - float64(costheta*temp)) /
		(Length * (4.0/3.0 - MassPole*(costheta*costheta)/TotalMass))
	xacc := temp - PoleMassLength*thetaacc*costheta/TotalMass
	if in == SemiImplicitEuler {
		s.XDot += float64(Tau * xacc)
		s.X += float64(Tau * s.XDot)
		s.ThetaDot += float64(Tau * thetaacc)
		s.Theta += float64(Tau * s.ThetaDot)
		return s
	}
	s.X += float64(Tau * s.XDot)
	s.XDot += float64(Tau * xacc)
	s.Theta += float64(Tau * s.ThetaDot)
	s.ThetaDot += float64(Tau * thetaacc)
	return s
}

// sincos returns math.Sin(x) and math.Cos(x), to the bit. For 0 < |x| < Pi/4 (a
// pole that has not fallen) it evaluates the polynomials math.Sin and math.Cos
// evaluate there, with the same operations in the same order, once for both and
// without the range reduction; elsewhere it calls them.
func sincos(x float64) (sin, cos float64) {
	ax := math.Abs(x)
	if !(ax > 0 && ax*(4/math.Pi) < 1) {
		return math.Sin(x), math.Cos(x)
	}
	zz := ax * ax
	sin = ax + ax*zz*((((((sinC[0]*zz)+sinC[1])*zz+sinC[2])*zz+sinC[3])*zz+sinC[4])*zz+sinC[5])
	cos = 1.0 - 0.5*zz + zz*zz*((((((cosC[0]*zz)+cosC[1])*zz+cosC[2])*zz+cosC[3])*zz+cosC[4])*zz+cosC[5])
	if x < 0 {
		sin = -sin
	}
	return sin, cos
}

// The coefficients of the polynomials of the Go standard library's math.Sin and
// math.Cos (from Cephes).
var (
	sinC = [...]float64{
		1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
		-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
		2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
		-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
		8.33333333332211858878e-3,  // 0x3f8111111110f7d0
		-1.66666666666666307295e-1, // 0xbfc5555555555548
	}
	cosC = [...]float64{
		-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
		2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
		-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
		2.48015872888517045348e-5,   // 0x3efa01a019c844f5
		-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
		4.16666666666665929218e-2,   // 0x3fa555555555554b
	}
)
