#!/usr/bin/python3
"""Writes trajectory.json, the golden trajectories the Go tests check cartpole.Env against.

The dynamics are a transcription of Gymnasium's CartPoleEnv.step
(gymnasium/envs/classic_control/cartpole.py, version 1.x) in float64 numpy, with the
same constants and the same order of operations; gymnasium itself is not needed.
Regenerate from the package directory with:

    /usr/bin/python3 testdata/trajectory.py > testdata/trajectory.json

The cosine and sine: some Gymnasium releases call math.cos and math.sin (the C
library's, correctly rounded in practice), later ones np.cos and np.sin, which on CPUs
with AVX-512 use NumPy's own vectorised routines and can differ from math.cos in the
last bits. The golden file uses math (the default); `--trig numpy` writes the other.
"""

import argparse
import json
import math
import sys

import numpy as np

# CartPoleEnv.__init__
gravity = 9.8
masscart = 1.0
masspole = 0.1
total_mass = masspole + masscart
length = 0.5  # actually half the pole's length
polemass_length = masspole * length
force_mag = 10.0
tau = 0.02
theta_threshold_radians = 12 * 2 * math.pi / 360
x_threshold = 2.4
high = np.array(
    [x_threshold * 2, np.inf, theta_threshold_radians * 2, np.inf], dtype=np.float32
)


def step(state, action, kinematics_integrator, cos=math.cos, sin=math.sin):
    """CartPoleEnv.step without the checks, the reward bookkeeping and rendering."""
    x, x_dot, theta, theta_dot = state
    force = force_mag if action == 1 else -force_mag
    costheta = cos(theta)
    sintheta = sin(theta)
    temp = (force + polemass_length * np.square(theta_dot) * sintheta) / total_mass
    thetaacc = (gravity * sintheta - costheta * temp) / (
        length * (4.0 / 3.0 - masspole * np.square(costheta) / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    if kinematics_integrator == "euler":
        x = x + tau * x_dot
        x_dot = x_dot + tau * xacc
        theta = theta + tau * theta_dot
        theta_dot = theta_dot + tau * thetaacc
    else:  # semi-implicit euler
        x_dot = x_dot + tau * xacc
        x = x + tau * x_dot
        theta_dot = theta_dot + tau * thetaacc
        theta = theta + tau * theta_dot
    state = np.array((x, x_dot, theta, theta_dot), dtype=np.float64)
    terminated = bool(
        x < -x_threshold
        or x > x_threshold
        or theta < -theta_threshold_radians
        or theta > theta_threshold_radians
    )
    return state, terminated


def floats(a):
    return [float(v) for v in a]


TRIG = {"math": (math.cos, math.sin), "numpy": (np.cos, np.sin)}
trig = "math"


def run(name, integrator, initial, policy, max_steps=500):
    """Plays one episode from initial; policy(t, state) gives the action of step t."""
    cos, sin = TRIG[trig]
    state = np.array(initial, dtype=np.float64)
    steps = []
    for t in range(max_steps):
        action = policy(t, state)
        state, terminated = step(state, action, integrator, cos, sin)
        steps.append(
            {
                "action": action,
                "state": floats(state),
                "obs": floats(np.array(state, dtype=np.float32)),
                "reward": 1.0,  # 1 on every step, the terminating one included
                "terminated": terminated,
            }
        )
        if terminated:
            break
    return {
        "name": name,
        "integrator": integrator,
        "initial": floats(initial),
        "initial_obs": floats(np.array(initial, dtype=np.float32)),
        "steps": steps,
    }


PATTERN = [1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0]


def pattern(t, state):
    return PATTERN[t % len(PATTERN)]


def pd(t, state):
    """The balancing controller of the tests: push toward where the pole is falling."""
    return 1 if state[2] + 0.5 * state[3] > 0 else 0


def always(a):
    return lambda t, state: a


def main():
    global trig
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trig", choices=sorted(TRIG), default="math", help="cosine and sine to use")
    trig = parser.parse_args().trig
    cases = [
        run("pattern/euler", "euler", [0.01, -0.02, 0.03, -0.04], pattern),
        run("pattern/semi-implicit", "semi-implicit euler", [0.01, -0.02, 0.03, -0.04], pattern),
        run("right/euler", "euler", [0.0, 0.0, 0.0, 0.0], always(1)),
        run("left/semi-implicit", "semi-implicit euler", [-0.03, 0.02, 0.01, 0.04], always(0)),
        run("pd/euler", "euler", [0.04, -0.03, -0.045, 0.02], pd, max_steps=200),
        run("x-bound/euler", "euler", [2.39, 1.0, 0.0, 0.0], always(1)),
        run("x-bound-low/semi-implicit", "semi-implicit euler", [-2.39, -1.0, 0.0, 0.0], always(0)),
    ]
    out = {
        "generator": "testdata/trajectory.py",
        "numpy": np.__version__,
        "trig": trig,
        "constants": {
            "gravity": gravity,
            "masscart": masscart,
            "masspole": masspole,
            "total_mass": total_mass,
            "length": length,
            "polemass_length": polemass_length,
            "force_mag": force_mag,
            "tau": tau,
            "theta_threshold_radians": theta_threshold_radians,
            "x_threshold": x_threshold,
            # JSON has no infinity: the infinite bounds are written as strings.
            "observation_high": [float(v) if np.isfinite(v) else str(v) for v in high],
        },
        "cases": cases,
    }
    write(out, sys.stdout)


def write(out, w):
    """Writes out as JSON with one step per line, so that diffs stay readable."""
    cases = out.pop("cases")
    head = json.dumps(out, indent=1)
    w.write(head[:-2] + ',\n "cases": [\n')
    for i, case in enumerate(cases):
        steps = case.pop("steps")
        w.write("  " + json.dumps(case)[:-1] + ', "steps": [\n')
        w.write(",\n".join("   " + json.dumps(s) for s in steps))
        w.write("\n  ]}" + (",\n" if i < len(cases) - 1 else "\n"))
    w.write(" ]\n}\n")


if __name__ == "__main__":
    main()
