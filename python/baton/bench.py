"""baton's Python benchmark table: the fast lane, recording and memory, each row
against its yardstick measured in the same run.

    python -m baton.bench              # every row, 3 rounds of 1 s per contender
    python -m baton.bench --json       # the same table as one JSON object
    python -m baton.bench --long       # the memory row over 10 M steps (default 2 M)
    python -m baton.bench --quick      # tiny sizes: checks that the bench runs

The rows:

- CartPole, N=1024, one worker, random actions drawn ahead of time (64 batches used
  in turn, so that the figure is the step's and not the random generator's): the fast
  lane (``baton.vector``) against Go's own vector, ``go test ./internal/bench -bench
  'VectorCartPole/N=1024/sync'`` (env/vector's Env stepped from Go, coin flips drawn
  in Go: the ratio is what the crossing into Python costs); against Gymnasium's
  numpy-native ``CartPoleVectorEnv``; against EnvPool's ``CartPole-v1`` with as many
  envs and threads (``num_envs=batch_size=N, num_threads=1``); and with 2 workers
  against 1.
- CartPole, N=1024, through the Gymnasium adapter (``baton.make_vec``, a
  ``gymnasium.vector.VectorEnv`` whose results are arrays the caller owns, copied from
  the fast lane's each step), in its default next-step auto-reset and in same-step,
  against the fast lane's zero-copy arrays (``baton.vector``) in the same round: what
  the copies (and next-step's bookkeeping) cost.
- Maze, N=256, hierarchical: the fast lane's MultiVector with random valid actions
  chosen in Python per agent group (masks honoured, from uniform draws made ahead of
  time) against Go's ``VectorMaze/N=256/sync`` (per-copy random masked policies).
  Both play 3000 ticks before they are timed, as Go's benchmark does.
- Recording from the fast lane: the CartPole and maze rows above stepped again with
  ``log=DIR`` (every step of every copy written into an activity log, each episode a
  trial), against the same without a log, in the same round: what recording costs
  the training loop.
- Recording: K random CartPole episodes (100 by default), recorded. baton: the Go
  campaign ``baton run cartpole --trials K --workers 1 --log DIR`` (an Arrow activity
  log, LZ4, one row per step plus one start row per episode), timed from process
  start to exit. Minari: Gymnasium's ``CartPole-v1`` stepped K episodes from Python
  with random actions drawn ahead of time and written as a Minari dataset in Arrow
  format, in a temporary ``MINARI_DATASETS_PATH``, timed from making the environment
  to the dataset written: wrapped by ``minari.DataCollector`` then ``create_dataset``
  where jax is importable (DataCollector's episode buffers need it), else the
  episodes fed to ``minari.create_dataset_from_buffers``, the writer
  ``create_dataset`` ends in (``minari_path`` says which; the row names it). Steps/s
  and bytes on disk per env step.
- Memory: the process's resident set (/proc/self/statm) over S fast-lane steps (N=1024),
  sampled ten times; the ratio is the last sample over the first (taken after the first
  tenth, once the allocator has warmed up).
- Remote, N=256 over loopback gRPC: ``baton.vector.make(..., address=...)`` stepping
  copies that a ``baton serve env`` on 127.0.0.1 holds, one StepBatch call per tick,
  against one copy over the same server stepped one gRPC call per step
  (``baton.remote.RemoteEnv``), and against the target of 500k env steps/s.
- Remote maze, N=4096 over loopback gRPC: the hierarchical maze the same way (a
  ``RemoteMultiVector``, the copies batched per acting agent, actions chosen in Python
  per group as in the maze row; 200 ticks played before the timing), against one maze
  over the same server stepped one gRPC call per step (``baton.remote.
  RemoteMultiAgentEnv``, masked random actions), against the in-process MultiVector of
  as many copies (what the network costs), and against the target of 200k env steps/s.
  ``--remote-curve 256,1024,4096`` prints the batched figure over N instead of the
  table, with the per-step figure measured in the same run.

Each round measures every contender once, in an order rotated from round to round;
a row's figures are the medians over the rounds, and its ratio the median of the
rounds' ratios: figures on a loaded machine move, ratios taken in the same round
much less. One tick is one step of all N copies (same-step auto-resets included);
steps/s counts N env steps per tick.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import vector
from ._lane import native as _native

__all__ = ["Row", "Sizes", "main", "run"]

_POOL = 64
_MAZE_WARMUP = 3000  # ticks, as Go's BenchmarkVectorMaze


@dataclass(frozen=True)
class Sizes:
    """What a run measures: vector sizes, seconds per contender and round, rounds,
    recorded episodes, and the memory row's steps."""

    cartpole_envs: int = 1024
    maze_envs: int = 256
    remote_envs: int = 256
    remote_maze_envs: int = 4096
    remote_warmup: int = 200
    seconds: float = 1.0
    rounds: int = 3
    episodes: int = 100
    memory_steps: int = 2_000_000
    maze_warmup: int = _MAZE_WARMUP

    @classmethod
    def quick(cls) -> Sizes:
        """Tiny sizes, for a test that the bench runs end to end (Go's benchmarks have
        CartPole vectors of 1, 64 and 1024 copies, maze vectors of 1, 16 and 256)."""
        return cls(cartpole_envs=64, maze_envs=16, remote_envs=16, remote_maze_envs=16, remote_warmup=10, seconds=0.05,
                   rounds=1, episodes=5, memory_steps=64 * 40, maze_warmup=10)


@dataclass(frozen=True)
class Row:
    """One row of the table: ``figure`` (baton's) and ``yardstick_figure`` in ``unit``,
    the median over rounds; ``ratio`` baton's figure over the yardstick's, the median
    of the rounds' ratios; ``bar`` and ``aim`` the ratios wanted (None: none set), at
    least (``higher_is_better``) or at most; ``status`` "met aim", "met bar" ("met" for a
    row with no aim), "missed" or "no bar"; ``detail`` what else the row measured
    (``round_ratios``: each round's ratio)."""

    name: str
    unit: str
    figure: float
    yardstick: str
    yardstick_figure: float
    ratio: float
    bar: float | None
    aim: float | None
    higher_is_better: bool = True
    detail: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        def ok(x: float | None) -> bool:
            return x is not None and (self.ratio >= x if self.higher_is_better else self.ratio <= x)

        if ok(self.aim):
            return "met aim"
        if ok(self.bar):
            return "met bar" if self.aim is not None else "met"
        if self.bar is None and self.aim is None:
            return "no bar"
        return "missed"

    def to_json(self) -> dict:
        d = asdict(self)
        d["status"] = self.status
        return d


# --- contenders: each returns one figure (steps/s unless said) --------------------


def _actions(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, n, dtype=np.int64) for _ in range(_POOL)]


def _timed(step: Callable[[np.ndarray], object], pool: list[np.ndarray], seconds: float) -> float:
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


def _fresh(tmp: Path | None) -> str | None:
    """A new log directory under tmp, or None without tmp."""
    if tmp is None:
        return None
    return tempfile.mkdtemp(prefix="log-", dir=tmp)


def fast_lane(n: int, workers: int, seconds: float, log: Path | None = None) -> float:
    """baton.vector's CartPole steps/s; with log (a folder), recording an activity
    log into a new directory there (removed afterwards)."""
    d = _fresh(log)
    try:
        with vector.make("cartpole", num_envs=n, seed=0, workers=workers, log=d) as v:
            v.reset()
            return _timed(v.step, _actions(n), seconds) * n
    finally:
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)


def gymnasium_adapter(n: int, seconds: float, mode: str = "next_step") -> float:
    """baton.make_vec's CartPole steps/s (Gymnasium's vector API, results copied for
    the caller) in the auto-reset mode named."""
    from .gym import make_vec

    env = make_vec("cartpole", n, autoreset_mode=mode)
    env.reset(seed=0)
    try:
        return _timed(env.step, _actions(n), seconds) * n
    finally:
        env.close()


def gymnasium_vector(n: int, seconds: float) -> float:
    """Gymnasium's numpy-native CartPoleVectorEnv's steps/s."""
    from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

    env = CartPoleVectorEnv(num_envs=n)
    env.reset(seed=0)
    try:
        return _timed(env.step, _actions(n), seconds) * n
    finally:
        env.close()


def envpool_vector(n: int, seconds: float) -> float:
    """EnvPool's CartPole-v1 steps/s, n envs stepped together on one thread."""
    import envpool

    env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=n, batch_size=n, num_threads=1, seed=0)
    env.reset()
    try:
        return _timed(env.step, [a.astype(np.int32) for a in _actions(n)], seconds) * n
    finally:
        env.close()


class _MazePolicy:
    """Random valid actions per agent group, from uniform draws made ahead of time:
    the argmax of the draws over the allowed actions of each row."""

    def __init__(self, v: vector.MultiVector, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.agents = v.agents
        self.draws = [rng.random((_POOL, v.num_envs, max(a.actions, 1))) for a in v.agents]
        self.scratch = [np.empty((v.num_envs, max(a.actions, 1))) for a in v.agents]
        self.t = 0

    def fill(self, groups: dict[str, vector.Group]) -> None:
        t = self.t % _POOL
        self.t += 1
        for g in groups.values():
            k = len(g)
            if not k:
                continue
            a = self.agents[g.index]
            u = self.draws[g.index][t, :k]
            if g.masks is None:
                np.multiply(u[:, 0], a.actions, out=self.scratch[g.index][:k, 0])
                g.actions[:] = self.scratch[g.index][:k, 0]
            else:
                s = self.scratch[g.index][:k, : g.masks.shape[1]]
                np.copyto(s, -1.0)
                np.copyto(s, u[:, : g.masks.shape[1]], where=g.masks)
                np.argmax(s, axis=1, out=g.actions)
            if a.start:
                g.actions += a.start


def fast_lane_maze(n: int, seconds: float, warmup: int, log: Path | None = None) -> float:
    """baton.vector's hierarchical maze steps/s, actions chosen in Python per group;
    with log, recording as fast_lane does."""
    d = _fresh(log)
    try:
        return _fast_lane_maze(n, seconds, warmup, d)
    finally:
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)


def _fast_lane_maze(n: int, seconds: float, warmup: int, log: str | None) -> float:
    with vector.make("maze", num_envs=n, seed=0, log=log) as v:
        return _maze_steps(v, seconds, warmup)


def _maze_steps(v: vector.MultiVector | vector.RemoteMultiVector, seconds: float, warmup: int) -> float:
    """The env steps/s of a maze vector, actions chosen by _MazePolicy, after warmup
    ticks."""
    n = v.num_envs
    groups = v.reset()
    policy = _MazePolicy(v)
    for _ in range(warmup):
        policy.fill(groups)
        groups = v.step()[0]
    ticks, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(_POOL):
            policy.fill(groups)
            groups = v.step()[0]
        ticks += _POOL
        now = time.perf_counter()
        if now >= deadline:
            return ticks * n / (now - start)


_GO_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s.*?\s([\d.e+]+) steps/s")


class _Go:
    """Go's benchmarks (internal/bench, built once as a test binary) and the baton
    command, built into a temporary folder."""

    def __init__(self, tmp: Path):
        self.root = _native.go_root()
        go = _native._go()
        self.test_bin = tmp / "bench.test"
        self.baton_bin = tmp / "baton"
        for cmd in (
            [go, "test", "-c", "-o", str(self.test_bin), "./internal/bench"],
            [go, "build", "-o", str(self.baton_bin), "./cmd/baton"],
        ):
            r = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")

    def bench(self, name: str, seconds: float) -> float:
        """The steps/s of Go's benchmark name ("VectorCartPole/N=1024/sync")."""
        top, *subs = name.split("/")
        pattern = "/".join([f"^Benchmark{top}$", *(f"^{re.escape(s)}$" for s in subs)])
        cmd = [str(self.test_bin), "-test.run", "^$", "-test.bench", pattern,
               "-test.benchtime", f"{seconds}s", "-test.count", "1"]
        r = subprocess.run(cmd, cwd=self.root / "internal" / "bench", capture_output=True, text=True)
        for line in r.stdout.splitlines():
            m = _GO_LINE.match(line)
            if m and m.group(1) == name:
                return float(m.group(2))
        raise RuntimeError(f"no result for {name} from {' '.join(cmd)}:\n{r.stdout}\n{r.stderr}")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def baton_record(go: _Go, episodes: int, tmp: Path) -> tuple[float, int, int]:
    """(steps/s, bytes, env steps) of the Go campaign writing its Arrow log."""
    d = Path(tempfile.mkdtemp(dir=tmp)) / "log"
    cmd = [str(go.baton_bin), "run", "cartpole", "--trials", str(episodes), "--workers", "1", "--seed", "1",
           "--log", str(d), "--json"]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    steps = json.loads(r.stdout)["env_steps"]
    size = _du(d)
    shutil.rmtree(d.parent)
    return steps / wall, size, steps


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def minari_path() -> str:
    """How Minari records here: "DataCollector" where jax is importable (its episode
    buffers need jax.tree_util: ``pip install "minari[create]"``), else
    "create_dataset_from_buffers", Minari's own writer fed episode buffers filled by
    the same stepping loop."""
    try:
        import jax.tree_util  # noqa: F401
    except ImportError:
        return "create_dataset_from_buffers"
    return "DataCollector"


def minari_record(episodes: int, tmp: Path) -> tuple[float, int, int]:
    """(steps/s, bytes, env steps) of Minari recording random episodes of Gymnasium's
    CartPole-v1 into an Arrow dataset in a temporary MINARI_DATASETS_PATH, by
    minari_path()'s way, timed from making the environment to the dataset written."""
    import warnings

    import gymnasium
    import minari

    warnings.filterwarnings("ignore", message=r"`(author|author_email|description|eval_env|code_permalink)`", category=UserWarning)
    from minari.data_collector import EpisodeBuffer

    d = Path(tempfile.mkdtemp(dir=tmp))
    pool = [int(a) for a in _actions(4096, seed=1)[0]]
    collector = minari_path() == "DataCollector"
    with _environ(MINARI_DATASETS_PATH=str(d / "datasets"), TMPDIR=str(d)):
        tempfile.tempdir = None  # DataCollector's cache goes under d too
        try:
            start = time.perf_counter()
            env = gymnasium.make("CartPole-v1")
            if collector:
                env = minari.DataCollector(env, data_format="arrow")
            steps, buffers = 0, []
            for ep in range(episodes):
                obs, _ = env.reset(seed=ep)
                o, a, rw, te, tr = [obs], [], [], [], []
                while True:
                    act = pool[steps % len(pool)]
                    obs, reward, term, trunc, _ = env.step(act)
                    steps += 1
                    if not collector:
                        o.append(obs), a.append(act), rw.append(reward), te.append(term), tr.append(trunc)
                    if term or trunc:
                        break
                if not collector:
                    buffers.append(EpisodeBuffer(id=ep, seed=ep, observations=o, actions=a, rewards=rw,
                                                 terminations=te, truncations=tr))
            if collector:
                env.create_dataset("cartpole/random-v0", algorithm_name="random")
            else:
                minari.create_dataset_from_buffers("cartpole/random-v0", buffers, env=env,
                                                   algorithm_name="random", data_format="arrow")
            env.close()
            wall = time.perf_counter() - start
        finally:
            tempfile.tempdir = None
    size = _du(d / "datasets")
    shutil.rmtree(d)
    return steps / wall, size, steps


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(n: int, steps: int, samples: int = 10) -> list[tuple[int, int]]:
    """(steps so far, RSS bytes) after each tenth of steps fast-lane steps."""
    pool = _actions(n)
    ticks = max(1, steps // n)
    every = max(1, ticks // samples)
    out = []
    with vector.make("cartpole", num_envs=n, seed=0) as v:
        v.reset()
        for t in range(1, ticks + 1):
            v.step(pool[t % _POOL])
            if t % every == 0:
                out.append((t * n, _rss()))
    return out


@contextlib.contextmanager
def _env_server(go: _Go) -> Iterator[str]:
    """A `baton serve env` on 127.0.0.1 for the run; yields its address."""
    p = subprocess.Popen([str(go.baton_bin), "serve", "env", "--addr", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = p.stdout.readline() if p.stdout else ""
        m = re.search(r"://(\S+)", line)
        if not m:
            raise RuntimeError(f"baton serve env printed {line!r}, no address")
        yield m.group(1)
    finally:
        p.terminate()
        p.wait()


def remote_vector(addr: str, n: int, seconds: float) -> float:
    """CartPole env steps/s of n copies served at addr, one StepBatch call per tick."""
    with vector.make("cartpole", num_envs=n, seed=0, address=addr) as v:
        v.reset()
        return _timed(v.step, _actions(n), seconds) * n


def remote_per_step(addr: str, seconds: float) -> float:
    """CartPole env steps/s of one copy served at addr, one gRPC call per step
    (baton.remote.RemoteEnv, the Gymnasium view)."""
    from .remote import RemoteEnv

    actions = [int(a) for a in _actions(1)[0]] * 64
    env = RemoteEnv(addr, "cartpole")
    try:
        env.reset(seed=0)
        steps, start = 0, time.perf_counter()
        deadline = start + seconds
        while True:
            for a in actions:
                _, _, term, trunc, _ = env.step(a)
                if term or trunc:
                    env.reset()
            steps += len(actions)
            now = time.perf_counter()
            if now >= deadline:
                return steps / (now - start)
    finally:
        env.close()


def remote_maze_vector(addr: str, n: int, seconds: float, warmup: int) -> float:
    """Maze env steps/s of n copies served at addr (a RemoteMultiVector), one
    StepBatch call per tick, actions chosen in Python per group."""
    with vector.make("maze", num_envs=n, seed=0, address=addr) as v:
        return _maze_steps(v, seconds, warmup)


def remote_maze_per_step(addr: str, seconds: float) -> float:
    """Maze env steps/s of one copy served at addr, one gRPC call per step
    (baton.remote.RemoteMultiAgentEnv), masked random actions from draws made ahead of
    time; the resets between episodes are not counted as steps."""
    from .remote import RemoteMultiAgentEnv

    draws = np.random.default_rng(0).random((4096, 8))
    env = RemoteMultiAgentEnv(addr, "maze")
    try:
        turn = env.reset(seed=0)
        steps, t, start = 0, 0, time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(64):
                if turn.over:
                    turn = env.reset()
                r = turn.reports[turn.next]
                u = draws[t % len(draws), : len(r.mask)] if r.mask is not None else draws[t % len(draws)]
                t += 1
                a = int(np.argmax(np.where(r.mask, u, -1.0))) if r.mask is not None else 0
                turn = env.step(a)
            steps += 64
            now = time.perf_counter()
            if now >= deadline:
                return steps / (now - start)
    finally:
        env.close()


def remote_curve(sizes: list[int], seconds: float, rounds: int, warmup: int, log: Callable[[str], None] | None = None) -> dict:
    """The batched remote maze's steps/s for each N of sizes, and the per-step
    RemoteMultiAgentEnv's, medians over rounds measured in turn against one `baton
    serve env` on 127.0.0.1: {"per_step": x, "batched": {N: x}}."""
    say = log or (lambda s: None)
    _native.load()
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as t, _env_server(_Go(Path(t))) as addr:
        per: list[float] = []
        got: dict[int, list[float]] = {n: [] for n in sizes}
        for r in range(rounds):
            per.append(remote_maze_per_step(addr, seconds))
            for n in sizes:
                got[n].append(remote_maze_vector(addr, n, seconds, warmup))
            say(f"round {r + 1}/{rounds}: per step {per[-1]:.4g}, " + ", ".join(f"N={n} {v[-1]:.4g}" for n, v in got.items()))
    return {"per_step": statistics.median(per), "batched": {n: statistics.median(v) for n, v in got.items()}}


# --- the table ----------------------------------------------------------------------


def run(sizes: Sizes, long_memory: bool = False, log: Callable[[str], None] | None = None) -> list[Row]:
    """Measures every row; log (if given) is told each round's figures."""
    say = log or (lambda s: None)
    n, nm, nr, sec = sizes.cartpole_envs, sizes.maze_envs, sizes.remote_envs, sizes.seconds
    nrm, rw = sizes.remote_maze_envs, sizes.remote_warmup
    mem_steps = 10_000_000 if long_memory else sizes.memory_steps
    _native.load()  # built before anything is timed
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as t, contextlib.ExitStack() as stack:
        tmp = Path(t)
        go = _Go(tmp)
        addr = stack.enter_context(_env_server(go))
        contenders: dict[str, Callable[[], float | tuple[float, int, int]]] = {
            "fast": lambda: fast_lane(n, 1, sec),
            "fast2": lambda: fast_lane(n, 2, sec),
            "go": lambda: go.bench(f"VectorCartPole/N={n}/sync", sec),
            "gym": lambda: gymnasium_vector(n, sec),
            "adapter": lambda: gymnasium_adapter(n, sec),
            "adapter_same": lambda: gymnasium_adapter(n, sec, "same_step"),
            "envpool": lambda: envpool_vector(n, sec),
            "fastlog": lambda: fast_lane(n, 1, sec, log=tmp),
            "maze": lambda: fast_lane_maze(nm, sec, sizes.maze_warmup),
            "mazelog": lambda: fast_lane_maze(nm, sec, sizes.maze_warmup, log=tmp),
            "gomaze": lambda: go.bench(f"VectorMaze/N={nm}/sync", sec),
            "rec": lambda: baton_record(go, sizes.episodes, tmp),
            "minari": lambda: minari_record(sizes.episodes, tmp),
            "remote": lambda: remote_vector(addr, nr, sec),
            "remote1": lambda: remote_per_step(addr, sec),
            "rmaze": lambda: remote_maze_vector(addr, nrm, sec, rw),
            "rmaze1": lambda: remote_maze_per_step(addr, sec),
            "lmaze": lambda: fast_lane_maze(nrm, sec, rw),
        }
        # Imports and first calls (Minari's, a Go process's) outside the timing.
        baton_record(go, 2, tmp)
        minari_record(2, tmp)
        res: dict[str, list] = {k: [] for k in contenders}
        order = list(contenders)
        for r in range(sizes.rounds):
            k = r % len(order)
            for name in order[k:] + order[:k]:
                res[name].append(contenders[name]())
            say(f"round {r + 1}/{sizes.rounds}: " + ", ".join(
                f"{k} {v[-1] if not isinstance(v[-1], tuple) else v[-1][0]:.4g}" for k, v in res.items()))
        samples = memory(n, mem_steps)
    return _rows(sizes, res, samples, mem_steps)


def _row(name, mine, yard, yard_name, bar, aim, unit="steps/s", higher=True, detail=None) -> Row:
    ratios = [a / b for a, b in zip(mine, yard)]
    return Row(
        name, unit, statistics.median(mine), yard_name, statistics.median(yard),
        statistics.median(ratios), bar, aim, higher, {**(detail or {}), "round_ratios": ratios},
    )


def _rows(sizes: Sizes, res: dict[str, list], samples: list[tuple[int, int]], mem_steps: int) -> list[Row]:
    n, nm, nr = sizes.cartpole_envs, sizes.maze_envs, sizes.remote_envs
    cp = f"CartPole N={n}"
    rows = [
        _row(f"{cp}, fast lane", res["fast"], res["go"], f"Go VectorCartPole/N={n}/sync", 0.70, 0.90),
        _row(f"{cp}, fast lane", res["fast"], res["gym"], "Gymnasium CartPoleVectorEnv", 1.0, 2.0),
        _row(f"{cp}, fast lane", res["fast"], res["envpool"], "EnvPool CartPole-v1, 1 thread", None, 1.0),
        _row(f"{cp}, fast lane, workers=2", res["fast2"], res["fast"], "fast lane, workers=1", None, 1.6),
        _row(f"{cp}, baton.make_vec (NEXT_STEP, copies)", res["adapter"], res["fast"], "fast lane, zero copy", 0.7, 0.9),
        _row(f"{cp}, baton.make_vec (SAME_STEP, copies)", res["adapter_same"], res["fast"], "fast lane, zero copy", 0.7,
             0.9),
        _row(f"Maze N={nm} hierarchical, fast lane", res["maze"], res["gomaze"], f"Go VectorMaze/N={nm}/sync", 0.6, None),
        _row(f"{cp}, fast lane recording (log=)", res["fastlog"], res["fast"], "fast lane, no log", None, None),
        _row(f"Maze N={nm} hierarchical, fast lane recording (log=)", res["mazelog"], res["maze"], "fast lane, no log",
             None, None),
    ]
    rec, mi = res["rec"], res["minari"]
    detail = {"episodes": sizes.episodes, "baton_env_steps": rec[0][2], "minari_env_steps": mi[0][2],
              "baton_bytes": rec[0][1], "minari_bytes": mi[0][1]}
    rows.append(_row(f"Recording {sizes.episodes} CartPole episodes, baton Arrow log",
                     [x[0] for x in rec], [x[0] for x in mi], f"Minari {minari_path()} (arrow)", 1.0, None, detail=detail))
    rows.append(_row("Recording, bytes on disk per env step", [x[1] / x[2] for x in rec], [x[1] / x[2] for x in mi],
                     f"Minari {minari_path()} (arrow)", 1.0, None, unit="B/step", higher=False, detail=detail))
    rss = [b for _, b in samples]
    mib = 1 << 20
    rows.append(Row(
        f"Memory, RSS over {_fmt(mem_steps)} fast-lane steps, N={n}", "MiB", rss[-1] / mib,
        f"RSS after {_fmt(samples[0][0])} steps", rss[0] / mib, rss[-1] / rss[0], 1.05, 1.01, False,
        {"first_mib": rss[0] / mib, "last_mib": rss[-1] / mib, "peak_mib": max(rss) / mib,
         "samples": [[s, b / mib] for s, b in samples]},
    ))
    rows.append(_row(f"Remote CartPole N={nr}, loopback gRPC, batched", res["remote"], res["remote1"],
                     "one gRPC call per step (RemoteEnv)", None, None))
    rows.append(_row(f"Remote CartPole N={nr}, loopback gRPC, batched", res["remote"], [500_000.0] * len(res["remote"]),
                     "the target, 500k steps/s", 1.0, None))
    nrm = sizes.remote_maze_envs
    rm = f"Remote Maze N={nrm} hierarchical, loopback gRPC, batched"
    rows.append(_row(rm, res["rmaze"], res["rmaze1"], "one gRPC call per step (RemoteMultiAgentEnv)", None, None))
    rows.append(_row(rm, res["rmaze"], res["lmaze"], f"fast lane in process, N={nrm}", None, None))
    rows.append(_row(rm, res["rmaze"], [200_000.0] * len(res["rmaze"]), "the target, 200k steps/s", 1.0, None))
    return rows


def _fmt(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e4:
        return f"{x / 1e3:.1f}k"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}"


def format_table(rows: list[Row], sizes: Sizes) -> str:
    """The rows as a text table."""
    head = ("row", "baton", "yardstick", "theirs", "ratio", "bar/aim", "")
    lines = []
    for r in rows:
        cmp = ">=" if r.higher_is_better else "<="
        want = ", ".join(f"{w} {cmp} {x:g}" for w, x in (("bar", r.bar), ("aim", r.aim)) if x is not None) or "-"
        fmt = (lambda x: f"{x:.1f}") if r.unit == "MiB" else _fmt
        lines.append((r.name, f"{fmt(r.figure)} {r.unit}", r.yardstick, fmt(r.yardstick_figure),
                      f"{r.ratio:.2f}x", want, r.status))
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    out = [f"{sizes.rounds} rounds of {sizes.seconds:g} s per contender; medians; ratio = baton / yardstick"]
    for x in [head, *lines]:
        out.append("  ".join(c.ljust(w) if i in (0, 2) else c.rjust(w) for i, (c, w) in enumerate(zip(x, widths))).rstrip())
    mem = next(r for r in rows if r.unit == "MiB").detail
    rec = next(r for r in rows if r.unit == "B/step").detail
    out.append(f"memory: first {mem['first_mib']:.1f} MiB, last {mem['last_mib']:.1f} MiB, peak {mem['peak_mib']:.1f} MiB")
    out.append(f"recording: baton {rec['baton_bytes']:,} B for {rec['baton_env_steps']:,} steps, "
               f"Minari {rec['minari_bytes']:,} B for {rec['minari_env_steps']:,} steps")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baton.bench", description=__doc__.splitlines()[0])
    d = Sizes()
    p.add_argument("--seconds", type=float, default=d.seconds, help="per contender and round")
    p.add_argument("--rounds", type=int, default=d.rounds)
    p.add_argument("--episodes", type=int, default=d.episodes, help="recorded CartPole episodes")
    p.add_argument("--memory-steps", type=int, default=d.memory_steps, help="fast-lane steps of the memory row")
    p.add_argument("--long", action="store_true", help="the memory row over 10 M steps")
    p.add_argument("--quick", action="store_true", help="tiny sizes: checks that the bench runs, measures nothing")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--remote-curve", metavar="N,N,...",
                   help="print the remote maze's batched steps/s over these N (and the per-step figure) instead of the table")
    args = p.parse_args(argv)
    if args.remote_curve:
        try:
            ns = [int(x) for x in args.remote_curve.split(",")]
        except ValueError:
            p.error(f"--remote-curve {args.remote_curve!r}: want numbers of copies, such as 256,1024,4096")
        quick = Sizes.quick() if args.quick else Sizes()
        out = remote_curve(ns, quick.seconds if args.quick else args.seconds, 1 if args.quick else args.rounds,
                           quick.remote_warmup, log=lambda s: print(s, file=sys.stderr, flush=True))
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            per = out["per_step"]
            print(f"remote maze over loopback gRPC; per-step RemoteMultiAgentEnv: {_fmt(per)} steps/s")
            for n, x in out["batched"].items():
                print(f"N={n:<6} batched {_fmt(x):>8} steps/s  {x / per:7.1f}x per step")
        return 0
    if args.quick:
        sizes = Sizes.quick()
    else:
        sizes = Sizes(seconds=args.seconds, rounds=args.rounds, episodes=args.episodes, memory_steps=args.memory_steps)
    if sizes.rounds < 1 or sizes.seconds <= 0 or sizes.episodes < 1 or sizes.memory_steps < 1:
        p.error("--rounds, --seconds, --episodes and --memory-steps must be positive")
    rows = run(sizes, long_memory=args.long, log=lambda s: print(s, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps({"sizes": asdict(sizes), "rows": [r.to_json() for r in rows]}, indent=2))
    else:
        print(format_table(rows, sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
