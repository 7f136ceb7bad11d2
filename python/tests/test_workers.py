"""The fast lane and its adapters in the process layouts trainers use: Gymnasium's
AsyncVectorEnv (default, fork, spawn and forkserver contexts), multiprocessing pools,
and Ray tasks and actors. Each layout gives the same arrays as the same work done in
one process.

A Go runtime does not survive fork, and this pytest process loads the Go library (the
reference results are computed here). So the layouts that fork run in a fresh
interpreter, this file run as a script (``python test_workers.py MODE OUT``), which
loads no Go before it forks and writes its results to OUT; the spawn and forkserver
layouts run from this process after it has loaded the library, which they do not
inherit. Every child interpreter runs under a timeout, so a hang fails the test.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

import baton
import baton.vector as bv
from baton.vector import _native
import raylocal

pytestmark = pytest.mark.go

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 200  # steps of each rollout
SEEDS = [11, 12, 13, 14]  # one rollout per seed
CHILD_TIMEOUT = 180.0  # seconds a child interpreter may take (a hang fails the test)


# --- the work, done the same way in every layout --------------------------------


def cartpole_rollout(seed: int, num_envs: int = 64, steps: int = STEPS) -> dict[str, np.ndarray]:
    """``steps`` steps of ``num_envs`` cart-poles with random actions drawn from
    ``seed``: the observations, rewards and ends of every step, and the pid that ran
    them."""
    rng = np.random.default_rng(seed)
    with bv.make("cartpole", num_envs=num_envs, seed=seed) as v:
        obs, _ = v.reset()
        out: dict[str, list] = {"obs": [obs.copy()], "rewards": [], "terminated": [], "truncated": []}
        for _ in range(steps):
            obs, rewards, term, trunc, _ = v.step(rng.integers(0, 2, num_envs))
            for k, a in zip(("obs", "rewards", "terminated", "truncated"), (obs, rewards, term, trunc)):
                out[k].append(a.copy())
    res = {k: np.stack(a) for k, a in out.items()}
    res["pid"] = np.array(os.getpid())
    return res


class Roller:
    """A vector kept across calls (as a Ray actor holds one): ``run(steps)`` goes on
    from where the last call stopped. Two calls of k steps equal one rollout of 2k."""

    def __init__(self, seed: int, num_envs: int = 64):
        self.rng = np.random.default_rng(seed)
        self.v = bv.make("cartpole", num_envs=num_envs, seed=seed)
        self.first = self.v.reset()[0].copy()

    def run(self, steps: int) -> dict[str, np.ndarray]:
        out: dict[str, list] = {"obs": [], "rewards": [], "terminated": [], "truncated": []}
        for _ in range(steps):
            obs, rewards, term, trunc, _ = self.v.step(self.rng.integers(0, 2, self.v.num_envs))
            for k, a in zip(("obs", "rewards", "terminated", "truncated"), (obs, rewards, term, trunc)):
                out[k].append(a.copy())
        res = {k: np.stack(a) for k, a in out.items()}
        res["pid"] = np.array(os.getpid())
        return res

    def close(self) -> None:
        self.v.close()


ENV_FNS = {
    # Lambdas, as trainers write them: Gymnasium pickles them for spawned workers.
    "cartpole": lambda: baton.make("cartpole"),
    "maze-strategy": lambda: baton.make("maze", agent="strategy", policies={"motion": "forward"}),
}


def vector_rollout(envs, seed: int, steps: int = STEPS) -> dict[str, np.ndarray]:
    """``steps`` steps of a Gymnasium vector env, reset with ``seed``, with random
    actions (allowed by the masks, where there are masks) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed)
    n = envs.num_envs
    start = int(getattr(envs.single_action_space, "start", 0))
    out: dict[str, list] = {"obs": [obs.copy()], "rewards": [], "terminated": [], "truncated": []}
    for _ in range(steps):
        if "action_mask" in info:
            # An episode's last mask is all False: the next step resets that copy and
            # ignores its action.
            actions = (rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1) + start
        else:
            actions = rng.integers(0, int(envs.single_action_space.n), n) + start
        obs, rewards, term, trunc, info = envs.step(actions)
        for k, a in zip(("obs", "rewards", "terminated", "truncated"), (obs, rewards, term, trunc)):
            out[k].append(np.array(a, copy=True))
    return {k: np.stack(a) for k, a in out.items()}


def async_rollout(env: str, context: str | None, seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """The rollout of 4 copies of ``env`` in a Gymnasium AsyncVectorEnv with
    ``context``, and what its closing left: its workers' exit codes and this process's
    live children."""
    import gymnasium as gym

    envs = gym.vector.AsyncVectorEnv([ENV_FNS[env] for _ in range(4)], context=context)
    try:
        res = vector_rollout(envs, seed)
        pids = [p.pid for p in envs.processes]
    finally:
        envs.close()
    left = {
        "exitcodes": [p.exitcode for p in envs.processes],
        "children": [p.pid for p in mp.active_children()],
        "worker_pids": pids,
    }
    return res, left


def sync_rollout(env: str, seed: int) -> dict[str, np.ndarray]:
    import gymnasium as gym

    envs = gym.vector.SyncVectorEnv([ENV_FNS[env] for _ in range(4)])
    try:
        return vector_rollout(envs, seed)
    finally:
        envs.close()


def pool_rollouts(context: str | None) -> list[dict[str, np.ndarray]]:
    """cartpole_rollout of each of SEEDS in a pool of 2 workers of ``context``."""
    ctx = mp.get_context(context)
    with ctx.Pool(2) as pool:
        res = pool.map(cartpole_rollout, SEEDS)
        pool.close()
        pool.join()
    return res


# --- the fresh interpreter's side -----------------------------------------------


_inherited: list[bv.SingleVector] = []  # the vector a forked child inherits


def _child_after_load() -> str:
    """In a child forked after its parent made a vector: what using baton gives."""
    (v,) = _inherited
    got = []
    for what, use in (
        ("make", lambda: bv.make("cartpole", num_envs=2)),
        ("gym", lambda: baton.make("cartpole")),
        ("step", lambda: v.step(np.zeros(v.num_envs, np.int64))),
        ("reset", lambda: v.reset()),
    ):
        try:
            use()
            got.append(f"{what}: no error")
        except bv.ForkError as e:
            got.append(f"{what}: ForkError: {e}")
    return "\n".join(got)


def _child_main(mode: str, out: str) -> None:
    report: dict = {"parent": os.getpid()}
    arrays: dict[str, np.ndarray] = {}
    if mode.startswith("async-"):  # async-<context>: both environments
        context = mode.removeprefix("async-")
        context = None if context == "default" else context
        for env in ENV_FNS:
            res, left = async_rollout(env, context, seed=5)
            arrays.update({f"{env}/{k}": a for k, a in res.items()})
            report[env] = left
    elif mode.startswith("pool-"):
        context = mode.removeprefix("pool-")
        for i, res in enumerate(pool_rollouts(None if context == "default" else context)):
            arrays.update({f"{i}/{k}": a for k, a in res.items()})
    elif mode == "make-loads-no-go":
        made = [baton.make("cartpole"), baton.make("maze", agent="strategy", policies={"motion": "forward"})]
        errors = []
        for env, kw in (
            ("maze", {"agent": "pilot"}),
            ("maze", {"agent": "strategy", "policies": {"motion": "oracle"}}),
            ("maze", {"agent": "strategy", "policies": {"strategy": "random"}}),
            ("cartpole", {"policies": {"x": "random"}}),
        ):
            try:
                baton.make(env, **kw)
                errors.append("no error")
            except bv.ConfigError as e:
                errors.append(str(e))
        report["errors"] = errors
        report["loaded_after_make"] = _native.loaded()
        report["spaces"] = [repr((e.observation_space, e.action_space, e.action_masks())) for e in made]
        for i, e in enumerate(made):
            obs, _ = e.reset(seed=3)
            arrays[f"{i}/obs"] = obs
            e.close()
    elif mode == "fork-during-load":
        # Another thread of the parent holds the loader's lock (as one does while it
        # builds the library) when a worker forks: the worker's lock is its own.
        ctx = mp.get_context("fork")
        with _native._lock, ctx.Pool(1) as pool:
            res = pool.apply_async(cartpole_rollout, (SEEDS[0],)).get(timeout=60)
        arrays.update({f"0/{k}": a for k, a in res.items()})
    elif mode == "fork-after-load":
        v = bv.make("cartpole", num_envs=8, seed=1, workers=2)  # loads Go here
        v.reset()
        _inherited.append(v)
        ctx = mp.get_context("fork")
        with ctx.Pool(1) as pool:
            report["pool"] = pool.apply_async(_child_after_load).get(timeout=60)
        # A plain fork whose child exits as Python does, running its exit handlers:
        # the vector's finalizer must not call into the parent's Go runtime.
        pid = os.fork()
        if pid == 0:
            try:
                v.step(np.zeros(8, np.int64))
            except bv.ForkError:
                sys.exit(7)
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        report["fork_exit"] = os.waitstatus_to_exitcode(status)
        v.step(np.zeros(8, np.int64))  # the parent's vector is still its own
        v.close()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    report["parent_loaded_go"] = _native.loaded()
    report["children"] = [p.pid for p in mp.active_children()]
    np.savez(out + ".npz", **arrays)
    with open(out + ".json", "w") as f:
        json.dump(report, f)


def run_child(mode: str, tmp_path) -> tuple[dict, dict[str, np.ndarray]]:
    """Runs ``mode`` in a fresh interpreter (in a session of its own, killed whole if it
    takes longer than CHILD_TIMEOUT) and returns its report and arrays."""
    out = str(tmp_path / mode)
    p = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), mode, out],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        stdout, stderr = p.communicate(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        stdout, stderr = p.communicate()
        pytest.fail(f"{mode}: no result in {CHILD_TIMEOUT} s (a hang)\nstdout:\n{stdout}\nstderr:\n{stderr}")
    assert p.returncode == 0, f"{mode}: exit {p.returncode}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    with open(out + ".json") as f:
        report = json.load(f)
    with np.load(out + ".npz") as z:
        arrays = {k: z[k] for k in z.files}
    return report, arrays


# --- the tests ------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def library():
    """The library, built, and loaded by this process: the reference results are
    computed here, and the spawn and forkserver layouts must not care."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    _native.build()
    bv.make("cartpole", num_envs=1).close()
    assert _native.loaded()


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    for k in ("obs", "rewards", "terminated", "truncated"):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{what}: {k}")
    assert got["terminated"].any() or got["truncated"].any(), f"{what}: no episode ended"


def assert_closed(left: dict, what: str) -> None:
    assert left["exitcodes"] == [0] * len(left["worker_pids"]), f"{what}: workers' exit codes {left['exitcodes']}"
    assert not set(left["children"]) & set(left["worker_pids"]), f"{what}: workers left running"


@pytest.fixture(scope="module")
def sync_results():
    return {env: sync_rollout(env, seed=5) for env in ENV_FNS}


@pytest.mark.parametrize("context", ["default", "fork"])
def test_async_vector_env_forked(context, tmp_path, sync_results):
    """AsyncVectorEnv with the default context (fork on Linux before Python 3.14) and
    with fork, from a parent that has loaded no Go: the same arrays as SyncVectorEnv,
    and no worker left after close."""
    report, arrays = run_child(f"async-{context}", tmp_path)
    assert report["parent_loaded_go"] is False
    for env, want in sync_results.items():
        got = {k.split("/", 1)[1]: a for k, a in arrays.items() if k.startswith(env + "/")}
        assert_same(got, want, f"{env} ({context})")
        assert_closed(report[env], f"{env} ({context})")
    assert report["children"] == []


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
@pytest.mark.parametrize("env", list(ENV_FNS))
def test_async_vector_env_spawned(env, context, sync_results):
    """AsyncVectorEnv with spawn and forkserver, from this process, which has loaded
    the Go library: the same arrays as SyncVectorEnv, and no worker left after close."""
    assert _native.loaded()
    got, left = async_rollout(env, context, seed=5)
    assert_same(got, sync_results[env], f"{env} ({context})")
    assert_closed(left, f"{env} ({context})")
    assert os.getpid() not in left["worker_pids"]


@pytest.fixture(scope="module")
def parent_results():
    return [cartpole_rollout(s) for s in SEEDS]


def test_pool_forked(tmp_path, parent_results):
    """Pool workers forked from a parent that has loaded no Go each make and step a
    vector: the same arrays as this process computes."""
    report, arrays = run_child("pool-fork", tmp_path)
    assert report["parent_loaded_go"] is False
    assert report["children"] == []
    pids = set()
    for i, want in enumerate(parent_results):
        got = {k.split("/", 1)[1]: a for k, a in arrays.items() if k.startswith(f"{i}/")}
        assert_same(got, want, f"seed {SEEDS[i]}")
        pids.add(int(got["pid"]))
    assert report["parent"] not in pids


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_pool_spawned(context, parent_results):
    """Pool workers spawned (or forked by a fork server) from this process, which has
    loaded the Go library: the same arrays as this process computes."""
    res = pool_rollouts(context)
    for seed, got, want in zip(SEEDS, res, parent_results):
        assert_same(got, want, f"seed {seed}")
        assert int(got["pid"]) != os.getpid()
    assert mp.active_children() == []


def test_fork_during_load(tmp_path, parent_results):
    """A worker forked while another thread of its parent loads the library (holding
    the loader's lock) loads its own, rather than waiting forever on that lock."""
    report, arrays = run_child("fork-during-load", tmp_path)
    got = {k.split("/", 1)[1]: a for k, a in arrays.items()}
    assert_same(got, parent_results[0], "forked during load")
    assert report["parent_loaded_go"] is False


def test_fork_after_loading_raises(tmp_path):
    """A child forked after its parent made a vector gets ForkError, naming fork, from
    making a vector (directly or through baton.make) and from the vector it inherited,
    rather than hanging; a forked child exits cleanly, its inherited vector's
    finalizer not run; the parent's vector goes on."""
    report, _ = run_child("fork-after-load", tmp_path)
    lines = report["pool"].splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["make", "gym", "step", "reset"]
    for ln in lines:
        assert ": ForkError: " in ln and "does not survive fork" in ln, ln
        assert f"loaded in process {report['parent']}" in ln, ln
    assert report["fork_exit"] == 7
    assert report["children"] == []


def test_make_loads_no_go(tmp_path):
    """baton.make in a process that has loaded no Go (as Gymnasium's AsyncVectorEnv
    makes one in the parent before forking) leaves it unloaded, with the same spaces
    and the same errors of bad arguments as when it is loaded; reset() loads it."""
    report, arrays = run_child("make-loads-no-go", tmp_path)
    assert report["loaded_after_make"] is False
    assert report["parent_loaded_go"] is True  # by reset()
    made = [baton.make("cartpole"), baton.make("maze", agent="strategy", policies={"motion": "forward"})]
    assert report["spaces"] == [repr((e.observation_space, e.action_space, e.action_masks())) for e in made]
    for i, e in enumerate(made):
        np.testing.assert_array_equal(arrays[f"{i}/obs"], e.reset(seed=3)[0])
        e.close()
    want = ["no agent 'pilot'", 'unknown policy "oracle"', "viewed agent", "single-agent environment"]
    assert len(report["errors"]) == len(want)
    for got, w in zip(report["errors"], want):
        assert w in got, (got, w)


# --- Ray ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    """A local Ray instance of 2 CPUs. Its workers run this interpreter (the
    project's environment, where baton is installed from the checkout); this module's
    functions travel by value, since the workers cannot import a test file."""
    import ray
    import ray.cloudpickle

    module = sys.modules[__name__]
    ray.cloudpickle.register_pickle_by_value(module)
    try:
        temp = raylocal.start(num_cpus=2, log_to_driver=False)
    except BaseException:
        ray.cloudpickle.unregister_pickle_by_value(module)
        raise
    try:
        yield ray
    finally:
        raylocal.stop(temp)
        ray.cloudpickle.unregister_pickle_by_value(module)


def where_baton() -> tuple[str, str, bool]:
    import baton as b

    return sys.executable, os.path.realpath(b.__file__), _native.loaded()


def test_ray_task(ray_session, parent_results):
    """A Ray task makes and steps a vector in a Ray worker, which imports baton from
    the checkout: the same arrays as this process computes."""
    ray = ray_session
    exe, path, _ = ray.get(ray.remote(where_baton).remote(), timeout=120)
    assert exe == sys.executable
    assert path == os.path.realpath(baton.__file__)
    assert path.startswith(os.path.realpath(PYTHON_DIR) + os.sep)
    task = ray.remote(cartpole_rollout)
    res = ray.get([task.remote(s) for s in SEEDS[:2]], timeout=120)
    for seed, got, want in zip(SEEDS, res, parent_results):
        assert_same(got, want, f"seed {seed}")
        assert int(got["pid"]) != os.getpid()


def test_ray_actor(ray_session, parent_results):
    """A Ray actor holds a vector across calls: two calls of half the steps give the
    same arrays as this process's rollout."""
    ray = ray_session
    actor = ray.remote(Roller).remote(SEEDS[0])
    try:
        half = STEPS // 2
        first = ray.get(actor.run.remote(half), timeout=120)
        second = ray.get(actor.run.remote(STEPS - half), timeout=120)
        ray.get(actor.close.remote(), timeout=60)
    finally:
        ray.kill(actor)
    want = parent_results[0]
    got = {k: np.concatenate([first[k], second[k]]) for k in ("obs", "rewards", "terminated", "truncated")}
    want = {k: (want[k][1:] if k == "obs" else want[k]) for k in got}
    assert_same(got, want, "actor")
    assert int(first["pid"]) == int(second["pid"]) != os.getpid()


if __name__ == "__main__":
    _child_main(sys.argv[1], sys.argv[2])
