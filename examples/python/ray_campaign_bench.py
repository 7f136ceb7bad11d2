"""Trials per second of a maze campaign run by baton.ray as 2 shards on a Ray cluster of
two 1-CPU nodes on this machine, against the same campaign in one ``baton run`` process
with 2 workers, both writing their log; the one-process run goes before and after the
sharded one, and the ratio is taken against their mean.

    scripts/python examples/python/ray_campaign_bench.py --trials 20000
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

# The cluster lives on this machine: its nodes on 127.0.0.1 (Ray's single-machine switch,
# read when ray is imported), not on the machine's network address.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import baton.ray  # noqa: E402


def one_process(exe: Path, trials: int, log: Path) -> float:
    start = time.perf_counter()
    r = subprocess.run([str(exe), "run", "maze", "--trials", str(trials), "--workers", "2", "--json", "--log", str(log)],
                       capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    assert json.loads(r.stdout)["trials"] == trials
    shutil.rmtree(log)
    return wall


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=20000)
    a = p.parse_args()
    exe = baton.ray.binary()
    # Ray's files (its sockets want a short path) and the cluster's address file, which
    # Ray writes under $RAY_TMPDIR/ray, all in a fresh folder.
    temp = Path(tempfile.mkdtemp(prefix="bray", dir="/tmp"))
    os.environ["RAY_TMPDIR"] = str(temp)
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                       "include_dashboard": False, "temp_dir": str(temp / "ray")})
    try:
        for _ in range(2):
            c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        ray.init(address=c.address)
        c.wait_for_nodes()
        before = one_process(exe, a.trials, temp / "one")
        start = time.perf_counter()
        s = baton.ray.run_campaign("maze", a.trials, 2, temp / "log")
        end_to_end = time.perf_counter() - start
        after = one_process(exe, a.trials, temp / "one")
    finally:
        ray.shutdown()
        c.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    one = (before + after) / 2
    print(json.dumps({
        "trials": a.trials,
        "one_process_s": [round(before, 3), round(after, 3)],
        "ray_tasks_s": round(s["wall_seconds"], 3),
        "ray_end_to_end_s": round(end_to_end, 3),
        "one_process_trials_per_s": round(a.trials / one),
        "ray_trials_per_s": round(a.trials / s["wall_seconds"]),
        "ray_end_to_end_trials_per_s": round(a.trials / end_to_end),
        "ratio_ray_tasks_to_one": round(one / s["wall_seconds"], 3),
        "ratio_ray_end_to_end_to_one": round(one / end_to_end, 3),
    }))


if __name__ == "__main__":
    main()
