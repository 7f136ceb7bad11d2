"""Plays one trained maze strategy three ways in one run, in alternating rounds, and
compares their success rates and throughput: the ONNX graph inside the Go trials
(``--policy strategy=model:NAME@V``, on the compiled runtime and on gonnx), and the
same policy served from Python (``serve_policy.py --policy ppo``: the torch network
rebuilt from the same ONNX bytes, reached by ``--policy strategy=grpc://...``).

    scripts/python examples/python/train_maze.py --seed 1 --env-steps 200000 \\
        --push cmp --models /tmp/models --quiet --curve-every 0
    scripts/python examples/python/compare_policy_runtimes.py --models /tmp/models \\
        --strategy cmp-strategy@1 --motion random --trials 300 --rounds 6 --json

The motion agent plays the same Go policy in every run (--motion: a baton policy,
``random`` by default, seeded per trial, or ``model:cmp-motion@1``), so only the
strategy's runtime differs. Each round runs ``baton run maze --trials N --seed SEED+ROUND`` once
per runtime, in an order that alternates between rounds; with the same seeds and a
greedy policy every runtime plays the same episodes, so the success rates should be
equal. The check is a two-sided two-proportion z-test of the pooled success rates
(Go compiled against Python, and gonnx against Python) at the 1 % level, and the rounds
whose successes are equal.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RUNTIMES = ("go-compiled", "go-gonnx", "python")


def build_baton(tmp: Path) -> str:
    out = str(tmp / "baton")
    subprocess.run(["go", "build", "-o", out, "./cmd/baton"], cwd=REPO, check=True)
    return out


class Server:
    """serve_policy.py serving the strategy: started, its address read from the
    "serving ... on" line it prints first, stopped with SIGTERM."""

    def __init__(self, args: list[str]):
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.proc.stdout], daemon=True).start()
        self.err: list[str] = []
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()
        try:
            first = lines.get(timeout=120)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"serve_policy.py did not start: {''.join(self.err)}") from None
        if " on " not in first:
            self.stop()
            raise RuntimeError(f"serve_policy.py: {first}{''.join(self.err)}")
        self.addr = first.rsplit(" on ", 1)[1].strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def z_test(k1: int, n1: int, k2: int, n2: int) -> float:
    """The two-sided p-value of a two-proportion z-test (pooled variance); 1 when the
    pooled rate is 0 or 1 (no variance: the rates are equal)."""
    p = (k1 + k2) / (n1 + n2)
    if p in (0.0, 1.0):
        return 1.0
    z = (k1 / n1 - k2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return math.erfc(abs(z) / math.sqrt(2))


def compare(baton: str, models: str, strategy: str, motion: str, trials: int, rounds: int, seed: int,
            workers: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "maze.json"
        spec.write_text(subprocess.run([baton, "envs", "maze", "--json"], check=True, capture_output=True,
                                       text=True).stdout)
        server = Server([sys.executable, str(HERE / "serve_policy.py"), "--spec", str(spec), "--agent", "strategy",
                         "--policy", "ppo", "--model", strategy, "--models", models,
                         "--max-workers", str(max(8, 2 * workers))])
        try:
            policies = {
                "go-compiled": ["--policy", f"strategy=model:{strategy}", "--model-runtime", "compiled"],
                "go-gonnx": ["--policy", f"strategy=model:{strategy}", "--model-runtime", "gonnx"],
                "python": ["--policy", f"strategy={server.addr}"],
            }
            runs: dict[str, list[dict]] = {r: [] for r in RUNTIMES}
            for r in range(rounds):
                order = RUNTIMES if r % 2 == 0 else RUNTIMES[::-1]
                for rt in order:
                    out = subprocess.run(
                        [baton, "run", "maze", "--trials", str(trials), "--seed", str(seed + r), "--workers",
                         str(workers), "--models", models, "--policy", f"motion={motion}", *policies[rt],
                         "--json"],
                        check=True, capture_output=True, text=True,
                    )
                    s = json.loads(out.stdout)
                    if s["failed"]:
                        raise RuntimeError(f"{rt}: {s['failed']} trials failed: {s['failures'][:3]}")
                    runs[rt].append({"round": r, "seed": seed + r, "episodes": s["episodes"],
                                     "successes": s["successes"], "env_steps": s["env_steps"],
                                     "steps_per_second": s["steps_per_second"]})
        finally:
            server.stop()
    res = {"strategy": strategy, "motion": motion, "trials": trials, "rounds": rounds, "seed": seed,
           "workers": workers, "runtimes": {}}
    for rt, rs in runs.items():
        sps = sorted(x["steps_per_second"] for x in rs)
        n, k = sum(x["episodes"] for x in rs), sum(x["successes"] for x in rs)
        res["runtimes"][rt] = {"episodes": n, "successes": k, "success_rate": k / n,
                               "steps_per_second": {"median": sps[len(sps) // 2] if len(sps) % 2 else
                                                    (sps[len(sps) // 2 - 1] + sps[len(sps) // 2]) / 2,
                                                    "min": sps[0], "max": sps[-1]},
                               "runs": rs}
    py = res["runtimes"]["python"]
    res["tests"] = {}
    for rt in ("go-compiled", "go-gonnx"):
        g = res["runtimes"][rt]
        p = z_test(g["successes"], g["episodes"], py["successes"], py["episodes"])
        same = sum(a["successes"] == b["successes"] for a, b in zip(g["runs"], py["runs"]))
        res["tests"][f"{rt} vs python"] = {
            "test": "two-sided two-proportion z-test of the pooled success rates", "p_value": p,
            "match": p >= 0.01, "rounds_with_equal_successes": same,
            "speedup": g["steps_per_second"]["median"] / py["steps_per_second"]["median"],
        }
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", required=True, help="the model registry's directory")
    p.add_argument("--strategy", default="cmp-strategy@latest", help="the strategy's model (NAME[@VERSION])")
    p.add_argument("--motion", default="random",
                   help="the motion agent's policy, played in Go: random (default), or model:NAME@VERSION")
    p.add_argument("--trials", type=int, default=300, help="trials per run (default 300)")
    p.add_argument("--rounds", type=int, default=6, help="rounds of one run per runtime (default 6)")
    p.add_argument("--seed", type=int, default=7, help="the first round's campaign seed (default 7)")
    p.add_argument("--workers", type=int, default=2, help="baton run --workers (default 2)")
    p.add_argument("--baton", help="the baton command (default: built from this checkout)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    # SIGTERM unwinds as an exit does, so that the policy server is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory() as d:
        baton = args.baton or build_baton(Path(d))
        res = compare(baton, os.path.abspath(args.models), args.strategy, args.motion, args.trials, args.rounds,
                      args.seed, args.workers)
    if args.json:
        print(json.dumps(res))
        return 0
    for rt, r in res["runtimes"].items():
        s = r["steps_per_second"]
        print(f"{rt:12s} success {r['success_rate']:.3f} ({r['successes']}/{r['episodes']})  steps/s median "
              f"{s['median']:,.0f} ({s['min']:,.0f} to {s['max']:,.0f})")
    for name, t in res["tests"].items():
        print(f"{name}: p = {t['p_value']:.3f} ({'match' if t['match'] else 'DIFFER'}), "
              f"{t['rounds_with_equal_successes']}/{res['rounds']} rounds equal, {t['speedup']:.1f}x the steps/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
