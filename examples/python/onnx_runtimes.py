"""Times one greedy decision of an ONNX policy graph (batch 1) on three runtimes, over
the same observations, in alternating rounds of one run: the graph compiled into
plain Go (baton's default for MLP graphs), gonnx (pure-Go ONNX, baton's fallback), and
ONNX Runtime through its Python wheel.

    scripts/python examples/python/onnx_runtimes.py --ort-python /tmp/ort/bin/python --json

The observations are the maze strategy's, logged by ``baton run maze --policy
strategy=model:GRAPH`` (--trials 500 --seed 7: the first --decisions of them). Go's
figures come from ``BenchmarkActObs`` (models/onnx), which runs ``onnx.Policy.Act``
on each observation in turn; ONNX Runtime's from ``InferenceSession.run`` on each
observation as a [1, obs_dim] array plus numpy's argmax, one intra-op thread (as Go's
policy uses one core), in a process of the interpreter --ort-python names, which
needs only onnxruntime and numpy: ONNX Runtime is not one of baton's dependencies
(make one with ``uv venv /tmp/ort && uv pip install --python /tmp/ort onnxruntime
numpy``). The same interpreter times an Identity graph of the observation's shape, the
floor of a call from Python into ONNX Runtime.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GRAPH = REPO / "models" / "onnx" / "testdata" / "maze-strategy.onnx"

ORT_WORKER = r"""
import sys, time
import numpy as np
import onnxruntime as ort
graph, obs_path, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
obs = np.fromfile(obs_path, dtype=np.float32).reshape(-1, dim)
so = ort.SessionOptions()
so.intra_op_num_threads = 1
so.inter_op_num_threads = 1
s = ort.InferenceSession(graph, so, providers=["CPUExecutionProvider"])
name = s.get_inputs()[0].name
rows = [obs[i:i + 1] for i in range(len(obs))]
for x in rows[:200]:
    s.run(None, {name: x})
t = time.perf_counter_ns()
for x in rows:
    int(np.argmax(s.run(None, {name: x})[0]))
print((time.perf_counter_ns() - t) / len(rows), ort.__version__)
"""


def build(tmp: Path) -> tuple[str, str]:
    baton, test = str(tmp / "baton"), str(tmp / "onnx.test")
    subprocess.run(["go", "build", "-o", baton, "./cmd/baton"], cwd=REPO, check=True)
    subprocess.run(["go", "test", "-c", "-o", test, "./models/onnx"], cwd=REPO, check=True)
    return baton, test


def observations(baton: str, graph: Path, tmp: Path, decisions: int) -> tuple[Path, int]:
    """The strategy's first `decisions` logged observations, as raw float32 rows."""
    import baton as bt

    log = tmp / "log"
    subprocess.run([baton, "run", "maze", "--trials", "500", "--seed", "7", "--workers", "1", "--policy",
                    f"strategy=model:{graph}", "--log", str(log)], check=True, capture_output=True)
    obs = bt.load(log)["strategy"].transitions().obs[:decisions]
    path = tmp / "obs.f32"
    obs.astype("float32").tofile(path)
    return path, obs.shape[1]


def identity_graph(dim: int, path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Identity", ["obs"], ["logits"])], "identity",
                          [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", dim])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", dim])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def go_round(test: str, obs: Path, graph: Path, decisions: int) -> dict[str, float]:
    r = subprocess.run([test, "-test.run", "^$", "-test.bench", "ActObs", "-test.benchtime", f"{decisions}x"],
                       cwd=REPO / "models" / "onnx", capture_output=True, text=True, check=True,
                       env={**os.environ, "BATON_ONNX_OBS": str(obs), "BATON_ONNX_GRAPH": str(graph)})
    out = {}
    for m in re.finditer(r"runtime=(\w+)\S*\s+\d+\s+([\d.]+) ns/op", r.stdout):
        out[m.group(1)] = float(m.group(2))
    if set(out) != {"compiled", "gonnx"}:
        raise RuntimeError(f"onnx_runtimes: no figures in the benchmark's output:\n{r.stdout}\n{r.stderr}")
    return out


def ort_round(python: str, graph: Path, obs: Path, dim: int) -> tuple[float, str]:
    r = subprocess.run([python, "-c", ORT_WORKER, str(graph), str(obs), str(dim)], capture_output=True, text=True,
                       check=True)
    ns, version = r.stdout.split()
    return float(ns), version


def measure(ort_python: str, graph: Path = GRAPH, rounds: int = 6, decisions: int = 10_000) -> dict:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        baton, test = build(tmp)
        obs, dim = observations(baton, graph, tmp, decisions)
        ident = tmp / "identity.onnx"
        identity_graph(dim, ident)
        times: dict[str, list[float]] = {"compiled": [], "gonnx": [], "onnxruntime": [], "onnxruntime-identity": []}
        version = ""
        for _ in range(rounds):
            for k, v in go_round(test, obs, graph, decisions).items():
                times[k].append(v)
            ns, version = ort_round(ort_python, graph, obs, dim)
            times["onnxruntime"].append(ns)
            times["onnxruntime-identity"].append(ort_round(ort_python, ident, obs, dim)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "graph": str(graph),
        "decisions": decisions,
        "obs_dim": dim,
        "rounds": rounds,
        "onnxruntime_version": version,
        "ns_per_decision": {k: {"median": round(med[k]), "min": round(min(v)), "max": round(max(v))}
                            for k, v in times.items()},
        "vs_compiled": {k: round(med[k] / med["compiled"], 2) for k in med},
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ort-python", required=True, help="an interpreter with onnxruntime and numpy")
    p.add_argument("--graph", type=Path, default=GRAPH, help="the ONNX policy graph (default: the maze strategy's)")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--decisions", type=int, default=10_000)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    res = measure(args.ort_python, args.graph, args.rounds, args.decisions)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{res['decisions']} decisions, {res['rounds']} rounds, ONNX Runtime {res['onnxruntime_version']}")
    for k, v in res["ns_per_decision"].items():
        print(f"{k:22s} {v['median'] / 1000:9.1f} µs  ({v['min'] / 1000:.1f} to {v['max'] / 1000:.1f})"
              f"  x{res['vs_compiled'][k]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
