"""Campaigns on Ray: ``baton run`` shared out among the nodes of a Ray cluster.

    scripts/python -m baton.ray run maze --trials 20000 --shards 8 --log /shared/runs/maze --json
    scripts/python -m baton.ray run maze --trials 1000 --shards 4 --address auto --policy motion=forward

    import baton.ray
    summary = baton.ray.run_campaign("maze", trials=20000, shards=8, log="/shared/runs/maze")

The campaign's trial indices 0..N-1 are cut into ``shards`` contiguous ranges, and
each range is one Ray task that runs ``baton run ENV --first K --trials M`` with the
campaign's seed and flags. Trial i plays with the seed ``env.DeriveSeed(seed, i)``
whichever process runs it, so the shards play exactly the trials of the campaign run
at once. Each shard writes ``--results``, one JSON line per trial; the driver gathers
them and runs ``baton run ENV --trials N --from-results ...``, which sums them up with
the same code as a single ``baton run``: the summary equals that of ``baton run ENV
--trials N --json`` with the same seed and flags, apart from the timing
(``wall_seconds`` and ``steps_per_second``, the driver's wall clock here) and the
log's ``parts`` and ``bytes`` (one set of parts per shard).

Why the ``baton`` binary and not the fast lane's library: a campaign is Go code from
end to end (environments, policies, the Arrow writer), and ``baton run`` already runs
one on every CPU it is given, writes its log and sums it up; a task needs nothing of
Python but to start it. The driver builds the binary once (``go build ./cmd/baton``,
cached in the baton cache as ``baton-<key>``, the key hashing the Go sources as for the
fast lane) and ships its bytes through Ray's object store; each node keeps a copy in
its own temporary folder, written aside and renamed, so the nodes need no Go toolchain
and no shared folder for the binary. ``BATON_BINARY`` names a binary to ship instead.

The log. ``--log DIR`` must be a folder that every node sees at the same path (NFS,
a cluster file system, a shared volume). A shard runs ``baton run --log`` into a
folder of its own beside DIR (``.DIR.shards/shard-I-<attempt>``) with ``--log-shard
sI``, so its parts are named ``part-sI-NNNNN.arrow``, apart from every other shard's.
Only when the run has ended is the shard committed: first any part of this shard
already in DIR is deleted (left by an attempt that died while committing), then each
part is renamed into DIR (a rename is atomic on one file system). A task retried after
its node died thus never leaves a part twice, and an attempt killed before its commit
leaves nothing in DIR (its ``baton run`` dies with the task's worker, on Linux); the
driver deletes the folders aside at the end, and checks with
``baton inspect DIR --json`` that the log holds the N trials. The commit assumes that
an attempt Ray gave up on is dead: a node cut off by the network but still running
could commit its shard again beside the retry's. The merged log reads as one: ``baton
inspect DIR``, ``baton replay DIR``, ``baton.load(DIR)``, pyarrow.

Tasks are retried on node failure (``max_retries``, 3 by default); a shard whose
``baton run`` fails (an exit status other than 0, or 1 with failed trials summed up)
raises ``ShardError`` and fails the campaign.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ray

from baton._lane import native as _native

__all__ = ["ShardError", "binary", "run_campaign", "shard_ranges", "main"]

# The exit status of baton run when some trials failed: the summary is printed all the same.
_EXIT_FAILED_TRIALS = 1


class ShardError(RuntimeError):
    """A shard's ``baton run`` failed, or the merged log does not hold the campaign."""


def shard_ranges(trials: int, shards: int) -> list[tuple[int, int]]:
    """The (first, count) ranges of trial indices of each shard: contiguous, in order,
    their sizes differing by at most one.

    >>> shard_ranges(10, 3)
    [(0, 4), (4, 3), (7, 3)]
    """
    if trials < 1 or shards < 1:
        raise ValueError(f"baton.ray: trials {trials}, shards {shards}: want 1 or more of each")
    shards = min(shards, trials)
    base, extra = divmod(trials, shards)
    out, first = [], 0
    for i in range(shards):
        n = base + (1 if i < extra else 0)
        out.append((first, n))
        first += n
    return out


def binary() -> Path:
    """The ``baton`` binary of this checkout's Go sources, built if its cache entry is
    missing (``$BATON_CACHE_DIR/baton-<key>``); ``BATON_BINARY`` names one instead.

    >>> exe = binary()  # doctest: +SKIP
    >>> subprocess.run([exe, "run", "maze", "--trials", "10", "--json"])  # doctest: +SKIP
    """
    env = os.environ.get("BATON_BINARY")
    if env:
        return Path(env)
    root, go = _native.go_root(), _native._go()
    version = subprocess.run([go, "env", "GOVERSION"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    out = _native.cache_dir() / f"baton-{_native.source_key(root, version)}"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".baton-", dir=out.parent)
    os.close(fd)
    try:
        res = subprocess.run([go, "build", "-trimpath", "-o", tmp, "./cmd/baton"], cwd=root, capture_output=True, text=True)
        if res.returncode != 0:
            raise _native.BuildError(f"go build ./cmd/baton failed:\n{res.stderr}")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return out


def _local_binary(name: str, data: bytes) -> str:
    """The shipped binary on this node: written once into the node's temporary folder."""
    path = Path(tempfile.gettempdir()) / "baton-ray" / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".baton-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    return str(path)


def _die_with_parent() -> None:
    """Run in the child before exec: on Linux, the shard's baton run is killed when the
    Ray worker that started it dies (its node removed), instead of running on alone."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _aside(log: Path) -> Path:
    """The folder beside the log that holds the shards being written."""
    return log.parent / f".{log.name}.shards"


def _commit(tmp_log: Path, log: Path, shard: str, hook: Callable[[str, int], None] | None, index: int) -> int:
    """Moves the parts of a finished shard into the log, after deleting any part of the
    same shard already there; returns how many parts moved."""
    for stale in log.glob(f"*/part-{shard}-*.arrow"):
        stale.unlink()
    parts = sorted(tmp_log.rglob("*.arrow"))
    for k, part in enumerate(parts):
        dest = log / part.relative_to(tmp_log)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, dest)
        if k == 0 and hook is not None:
            hook("committing", index)
    return len(parts)


def _run_shard(
    bin_name: str,
    bin_ref: list,
    index: int,
    first: int,
    count: int,
    args: list[str],
    log: str | None,
    hook: Callable[[str, int], None] | None,
) -> dict[str, Any]:
    """One shard: baton run of trials first..first+count-1, committed into the log."""
    if hook is not None:
        hook("start", index)
    exe = _local_binary(bin_name, ray.get(bin_ref[0]))
    work = Path(tempfile.mkdtemp(prefix=f"baton-shard{index}-"))
    tmp_log = None
    try:
        cmd = [exe, "run", *args, "--first", str(first), "--trials", str(count), "--json",
               "--results", str(work / "results.jsonl")]
        shard = f"s{index:05d}"
        if log is not None:
            aside = _aside(Path(log))
            aside.mkdir(parents=True, exist_ok=True)
            tmp_log = aside / f"shard-{index}-{uuid.uuid4().hex}"
            cmd += ["--log", str(tmp_log), "--log-shard", shard]
        res = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_die_with_parent)
        if res.returncode not in (0, _EXIT_FAILED_TRIALS) or not res.stdout.strip():
            raise ShardError(f"shard {index} ({' '.join(cmd[1:])}) exited with {res.returncode}:\n{res.stderr}")
        summary = json.loads(res.stdout)
        results = (work / "results.jsonl").read_text()
        rows = 0
        if tmp_log is not None:
            rows = summary["log"]["rows"]
            _commit(tmp_log, Path(log), shard, hook, index)
        return {"index": index, "results": results, "rows": rows, "node": ray.get_runtime_context().get_node_id()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if tmp_log is not None:
            shutil.rmtree(tmp_log, ignore_errors=True)


def _campaign_args(
    env: str,
    seed: int,
    policies: Sequence[str],
    env_config: str | None,
    episodes: int,
    max_ticks: int,
) -> list[str]:
    args = [env, "--seed", str(seed), "--episodes", str(episodes), "--max-ticks", str(max_ticks)]
    for p in policies:
        args += ["--policy", p]
    if env_config:
        if env_config.startswith("@"):  # read here: the nodes may not see the file
            env_config = Path(env_config[1:]).read_text()
        args += ["--env-config", env_config]
    return args


def run_campaign(
    env: str,
    trials: int,
    shards: int,
    log: str | os.PathLike | None = None,
    *,
    seed: int = 1,
    policies: Sequence[str] = (),
    env_config: str | None = None,
    episodes: int = 1,
    max_ticks: int = 0,
    log_compression: str = "lz4",
    cpus_per_shard: int = 1,
    max_retries: int = 3,
    hook: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Runs the campaign ``baton run ENV --trials N`` as ``shards`` Ray tasks on the
    cluster ``ray.init`` joined (the caller's), and returns its summary: the JSON
    object of ``baton run --json``. Each task asks for ``cpus_per_shard`` CPUs and runs
    as many baton workers. ``hook(stage, shard)``, for tests, runs in the task at
    ``"start"`` and once the first part of the shard has moved into the log
    (``"committing"``). See the module's documentation.

    >>> ray.init(address="auto")  # doctest: +SKIP
    >>> s = run_campaign("maze", 20000, 8, "/shared/runs/maze", seed=3)  # doctest: +SKIP
    >>> s["trials"], s["success_rate"]  # doctest: +SKIP
    """
    ranges = shard_ranges(trials, shards)
    args = _campaign_args(env, seed, policies, env_config, episodes, max_ticks)
    shard_args = [*args, "--workers", str(cpus_per_shard)]
    logdir = None
    if log is not None:
        logdir = Path(log).resolve()
        if logdir.exists() and (not logdir.is_dir() or any(logdir.iterdir())):
            raise ShardError(f"baton.ray: --log {log}: not an empty folder (give a new one)")
        shard_args += ["--log-compression", log_compression]
    if not ray.is_initialized():
        raise RuntimeError("baton.ray.run_campaign: call ray.init first (main() does)")
    if logdir is not None:
        logdir.mkdir(parents=True, exist_ok=True)
    exe = binary()
    ref = ray.put(exe.read_bytes())
    start = time.perf_counter()
    task = ray.remote(num_cpus=cpus_per_shard, max_retries=max_retries)(_run_shard)
    refs = [task.remote(exe.name, [ref], i, first, n, shard_args, None if logdir is None else str(logdir), hook)
            for i, (first, n) in enumerate(ranges)]
    done = ray.get(refs)
    wall = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="baton-ray-") as d:
        files = []
        for out in done:
            path = Path(d) / f"shard-{out['index']}.jsonl"
            path.write_text(out["results"])
            files += ["--from-results", str(path)]
        res = subprocess.run([str(exe), "run", *args, "--trials", str(trials), "--json", *files], capture_output=True, text=True)
    if res.returncode not in (0, _EXIT_FAILED_TRIALS) or not res.stdout.strip():
        raise ShardError(f"baton.ray: summing the shards up failed ({res.returncode}):\n{res.stderr}")
    summary = json.loads(res.stdout)
    summary["wall_seconds"] = wall
    summary["steps_per_second"] = summary["env_steps"] / wall if wall > 0 else 0.0
    if logdir is not None:
        shutil.rmtree(_aside(logdir), ignore_errors=True)
        parts = sorted(logdir.rglob("*.arrow"))
        summary["log"] = {
            "dir": str(log),
            "compression": log_compression,
            "rows": sum(out["rows"] for out in done),
            "parts": len(parts),
            "bytes": sum(p.stat().st_size for p in parts),
        }
        r = subprocess.run([str(exe), "inspect", str(logdir), "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            raise ShardError(f"baton.ray: baton inspect {logdir} failed:\n{r.stderr}")
        seen = json.loads(r.stdout)
        if seen["trials"] != trials or seen["rows"] != summary["log"]["rows"]:
            raise ShardError(f"baton.ray: the log {logdir} holds {seen['trials']} trials and {seen['rows']} rows; "
                             f"the shards ran {trials} and wrote {summary['log']['rows']}")
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baton.ray", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a campaign as Ray tasks, one per shard of its trials")
    r.add_argument("env")
    r.add_argument("--trials", type=int, default=1000)
    r.add_argument("--shards", type=int, required=True, help="Ray tasks, each a contiguous range of trial indices")
    r.add_argument("--log", help="the activity log's folder, seen by every node at this path")
    r.add_argument("--address", help="the Ray cluster to join (ray.init(address)); none: a local one")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--policy", action="append", default=[], metavar="AGENT=POLICY")
    r.add_argument("--env-config", metavar="JSON|@FILE")
    r.add_argument("--episodes", type=int, default=1)
    r.add_argument("--max-ticks", type=int, default=0)
    r.add_argument("--log-compression", default="lz4")
    r.add_argument("--cpus-per-shard", type=int, default=1)
    r.add_argument("--max-retries", type=int, default=3)
    r.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    a = p.parse_args(argv)
    try:
        shard_ranges(a.trials, a.shards)
    except ValueError as e:
        p.error(str(e))
    if a.address:
        ray.init(address=a.address)
    else:
        ray.init(num_cpus=min(a.shards * a.cpus_per_shard, os.cpu_count() or 1))
    try:
        s = run_campaign(a.env, a.trials, a.shards, a.log, seed=a.seed, policies=a.policy, env_config=a.env_config,
                         episodes=a.episodes, max_ticks=a.max_ticks, log_compression=a.log_compression,
                         cpus_per_shard=a.cpus_per_shard, max_retries=a.max_retries)
    except ShardError as e:
        print(e, file=sys.stderr)
        return 1
    finally:
        ray.shutdown()
    if a.json:
        print(json.dumps(s))
    else:
        print(f"{s['env']}: {s['trials']} trials on {a.shards} shards, {s['episodes']} episodes, {s['env_steps']} steps "
              f"in {s['wall_seconds']:.2f} s ({s['steps_per_second']:.0f} steps/s)")
        if s.get("success_rate") is not None:
            print(f"success rate {s['success_rate']:.3f}")
        for name, ag in s["agents"].items():
            print(f"{name}: return {ag['mean']:.3f} ± {ag['std']:.3f} [{ag['min']:.3f}, {ag['max']:.3f}]")
        if "log" in s:
            print(f"log {s['log']['dir']}: {s['log']['rows']} rows in {s['log']['parts']} parts")
    return 0 if not s["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
