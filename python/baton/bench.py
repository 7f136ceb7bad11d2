"""The fast lane's benchmark: steps/s of a CartPole vector stepped from Python through
``baton.vector``, against its yardsticks measured in the same run, in turns:

- Go's own vector, ``go test ./bench -bench 'VectorCartPole/N=1024/sync'``
  (``BenchmarkVectorCartPole``: env/vector's Env stepped from Go, coin-flip actions
  drawn in Go): the ratio says what the crossing into Python costs;
- Gymnasium's numpy-native ``CartPoleVectorEnv`` (when gymnasium is importable), the
  vector environment a Python trainer would otherwise use.

    python -m baton.bench                   # N=1024, one worker, 3 rounds of 2 s each
    python -m baton.bench --num-envs 4096 --workers 2 --rounds 5

One tick is one ``step`` of all N copies (same-step auto-resets included); steps/s
counts N env steps per tick. The Python sides step with random actions (0 or 1)
drawn ahead of time, 64 batches used in turn, so that the figure is the step's and
not the random generator's, as Go's benchmark draws its coin flips in a few
nanoseconds. Each round measures every contender once, one after the other, and the
table gives the median of the rounds' figures and of their ratios: figures on a
loaded machine move, ratios taken in the same round much less.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

import numpy as np

from . import vector
from .vector import _native

_POOL = 64


def _actions(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, n, dtype=np.int64) for _ in range(_POOL)]


def _timed(step, pool: list[np.ndarray], seconds: float) -> float:
    """Steps with the pool's batches in turn for about seconds; returns ticks/s."""
    for a in pool[:8]:  # warm up
        step(a)
    ticks, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for a in pool:
            step(a)
        ticks += len(pool)
        now = time.perf_counter()
        if now >= deadline:
            return ticks / (now - start)


def fast_lane(n: int, workers: int, seconds: float) -> float:
    """baton.vector's steps/s."""
    with vector.make("cartpole", num_envs=n, seed=0, workers=workers) as v:
        v.reset()
        return _timed(v.step, _actions(n), seconds) * n


def gymnasium_vector(n: int, seconds: float) -> float | None:
    """Gymnasium's CartPoleVectorEnv's steps/s, or None without gymnasium."""
    try:
        from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv
    except ImportError:
        return None
    env = CartPoleVectorEnv(num_envs=n)
    env.reset(seed=0)
    try:
        return _timed(env.step, _actions(n), seconds) * n
    finally:
        env.close()


_GO_LINE = re.compile(r"^BenchmarkVectorCartPole/N=(\d+)/(\S+?)(?:-\d+)?\s.*?\s([\d.]+) steps/s")


def go_vector(n: int, workers: int, seconds: float) -> float:
    """Go's BenchmarkVectorCartPole/N=n/(sync|workers=w) steps/s, run with go test."""
    variant = "sync" if workers <= 1 else f"workers={workers}"
    root = _native.go_root()
    cmd = [_native._go(), "test", "./bench", "-run", "^$", "-bench", f"^BenchmarkVectorCartPole$/^N={n}$/^{variant}$",
           "-benchtime", f"{seconds}s", "-count", "1"]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        m = _GO_LINE.match(line)
        if m:
            return float(m.group(3))
    raise RuntimeError(f"no result from {' '.join(cmd)} (Go's benchmark has sizes 1, 64, 1024 and workers sync, 2):\n{r.stdout}\n{r.stderr}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baton.bench", description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seconds", type=float, default=2.0, help="per contender and round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-go", action="store_true", help="skip Go's benchmark")
    args = p.parse_args(argv)
    n, w = args.num_envs, args.workers
    _native.load()  # build before timing
    results: dict[str, list[float]] = {"baton.vector": [], "Go vector.Env": [], "gymnasium CartPoleVectorEnv": []}
    for r in range(args.rounds):
        results["baton.vector"].append(fast_lane(n, w, args.seconds))
        if not args.no_go:
            results["Go vector.Env"].append(go_vector(n, w, args.seconds))
        g = gymnasium_vector(n, args.seconds)
        if g is not None:
            results["gymnasium CartPoleVectorEnv"].append(g)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1] / 1e6:.2f}M" for k, v in results.items() if v), file=sys.stderr)
    mine = results["baton.vector"]
    print(f"CartPole, N={n}, workers={w}, {args.rounds} rounds of {args.seconds:g} s (medians)")
    print(f"{'contender':<30} {'steps/s':>14} {'us/tick':>9} {'baton.vector / it':>18}")
    for k, v in results.items():
        if not v:
            continue
        med = statistics.median(v)
        # The ratio of each round, whose contenders ran one after the other, then
        # their median: steadier than the ratio of the medians on a loaded machine.
        ratio = "" if k == "baton.vector" else f"{statistics.median(a / b for a, b in zip(mine, v)):.2f}"
        print(f"{k:<30} {med:>14,.0f} {n / med * 1e6:>9.1f} {ratio:>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
