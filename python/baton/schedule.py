"""Schedules of tasks (curricula), as ``baton run --schedule FILE`` reads them, driven
from a Python training loop.

A schedule lists tasks (an environment, its JSON configuration, the policies of its
agents, a name) and the order to take them in:

- ``in_order``: each task for its ``trials``, one after the other;
- ``random``: each trial's task drawn by the tasks' ``weight`` from the trial's seed
  alone, exactly as Go's ``runners.RandomTask`` draws it;
- ``success``: the first task, then the next one each time the success rate over a
  window of ``promotion.window`` trials reaches ``promotion.threshold`` (and back one
  when it falls below ``promotion.demote_below``), as Go's ``runners.Promote``.

The JSON is the same as Go's (see cli/doc.go), and so are the rules: the trials
are cut into windows of consecutive trials, all of one task, and each window's
success rate, counted in trial order, decides the next window's task. A training loop
records one result per trial, in trial order::

    from baton.schedule import Schedule

    sched = Schedule.load("envs/maze/curriculum.json").start(seed=1)
    while not sched.done:
        task = sched.task                      # name, env, config, policies
        success = run_trial(task)              # the loop's own code
        if sched.record(success):              # True when the next task differs
            print("now on", sched.task.name)

What a trial is, is the loop's choice (an episode, or a batch of them whose success
rate is recorded as one value: ``record`` compares it with the criterion's ``min``).

The rules are Go's alone: reading and checking a schedule, and the task of each
trial, are calls into the fast lane's library (Go's ``runners.ParseSchedule``,
``Schedule.Start`` and ``Schedule.Next``, ``RandomTask`` and ``Promote``), which
every library built over package capi has; this module keeps the loop's bookkeeping
(the trial index, the tasks taken). ``library=`` names the library to load, as on
every entry point of the fast lane (None: ``BATON_LIBRARY``, else baton's own). The
first call loads it into the process, as a vector does, so the process's fork rule
is the vectors' (see ``baton.vector``): a loop that forks workers with the "fork"
context reads its schedule after forking them, or uses "spawn".
"""

from __future__ import annotations

import ctypes
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

from ._lane import core as _core
from ._lane import native as _native

__all__ = [
    "Criterion",
    "Promotion",
    "Schedule",
    "ScheduleError",
    "Scheduler",
    "Task",
    "derive_seed",
    "promote",
    "random_task",
]

ORDERS = ("in_order", "random", "success")
DEFAULT_WINDOW = 10
DEFAULT_THRESHOLD = 0.8
_MASK = (1 << 64) - 1


class ScheduleError(ValueError):
    """A schedule's problems, every one at once, as Go's ``runners.ParseSchedule``
    reports them (``*runners.ScheduleError`` values): ``problems`` lists them as
    (task, name, field, reason) tuples, task -1 (and name "") for the schedule itself.
    The message names each as Go's ``runners.ScheduleError`` does:
    ``invalid schedule: task 1 (7x7): trials: 0: the in_order order wants 1 or more``."""

    def __init__(self, problems: list[tuple[int, str, str, str]]):
        self.problems = problems
        super().__init__("; ".join(_problem_text(*p) for p in problems))


def _problem_text(task: int, name: str, field: str, reason: str) -> str:
    s = "invalid schedule: "
    if task >= 0:
        s += f"task {task}" + (f" ({name})" if name else "") + ": "
    if field:
        s += field + ": "
    return s + reason


def _go(lib: ctypes.CDLL, fn: str, *args) -> None:
    """Calls a baton_schedule_ function; its error is a ScheduleError when Go names the
    schedule's problems, else the fast lane's typed error for its code."""
    buf = ctypes.create_string_buffer(_core._ERRLEN)
    code = getattr(lib, fn)(*args, buf, _core._ERRLEN)
    if not code:
        return
    raw = buf.value.decode("utf-8", "replace")
    try:
        problems = json.loads(raw).get("problems")
    except ValueError:
        problems = None
    if problems:
        raise ScheduleError([(p["task"], p["name"], p["field"], p["reason"]) for p in problems])
    _core._raise(code, raw)


@dataclass(frozen=True)
class Task:
    """A task: the environment, its configuration (the JSON value, None for its
    defaults) and the registered policy of each agent named (the others play their
    default), with its name and index in the schedule; ``trials`` counts its trials
    under ``in_order`` and ``weight`` its chance under ``random`` (0 means 1)."""

    name: str
    env: str
    config: Any = None
    policies: dict[str, str] = field(default_factory=dict)
    trials: int = 0
    weight: float = 0.0
    index: int = 0


@dataclass(frozen=True)
class Criterion:
    """When a trial succeeded: the mean of ``metric`` over its episodes is at least
    ``min``. ``metric`` is "success" (the environment's, 1 or 0 per episode),
    one of the environment's metrics, or "return:AGENT"."""

    metric: str = "success"
    min: float = 1.0

    def succeeded(self, value: bool | float) -> bool:
        """Whether a trial whose mean metric is ``value`` (True and False count as 1
        and 0) succeeded; NaN never does."""
        v = float(value)
        return not math.isnan(v) and v >= self.min


@dataclass(frozen=True)
class Promotion:
    """When the ``success`` order changes task: after each window of ``window`` trials,
    to the next task when the window's success rate is at least ``threshold``, to the
    previous one when it is below ``demote_below`` (0: never)."""

    window: int = DEFAULT_WINDOW
    threshold: float = DEFAULT_THRESHOLD
    demote_below: float = 0.0


def promote(cur: int, n: int, rate: float, p: Promotion, *, library: str | os.PathLike | None = None) -> int:
    """The task after task ``cur`` (of ``n``) following a window of success rate
    ``rate``: Go's ``runners.Promote``.

    >>> promote(0, 3, 0.9, Promotion(threshold=0.8))  # doctest: +SKIP
    1
    """
    out = ctypes.c_int64()
    _go(_native.load(library), "baton_schedule_promote", cur, n, rate, p.window, p.threshold, p.demote_below,
        ctypes.byref(out))
    return out.value


def derive_seed(seed: int, k: int) -> int:
    """Go's ``env.DeriveSeed``: the k-th seed derived from ``seed`` (SplitMix64); trial
    i of a campaign of seed s has the seed ``derive_seed(s, i)``. Go fixes its values
    for good (logs are replayed from them), so it is written here too, where it loads
    no library: trainers derive their vectors' seeds with it before making any.

    >>> derive_seed(5, 0)
    5
    """
    seed &= _MASK
    if k == 0:
        return seed
    z = (seed + k * 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def random_task(weights: list[float], seed: int, i: int, *, library: str | os.PathLike | None = None) -> int:
    """The task of trial ``i`` of a campaign of seed ``seed`` under the ``random``
    order, for these weights (0 means 1): Go's ``runners.RandomTask``."""
    ws = (ctypes.c_double * len(weights))(*weights)
    out = ctypes.c_int64()
    _go(_native.load(library), "baton_schedule_random_task", ws, len(weights), seed & _MASK, i, ctypes.byref(out))
    return out.value


def _omit_zero(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (0, None, {}, "")}


@dataclass(frozen=True)
class Schedule:
    """A schedule: its order, tasks, trials (for ``random`` and ``success``; 0: as many
    as the loop runs), success criterion and promotion. Build it with ``load`` or
    ``from_json``, which Go checks (every problem at once, a ScheduleError), and
    drive it with ``start``."""

    order: str
    tasks: tuple[Task, ...]
    trials: int = 0
    success: Criterion = Criterion()
    promotion: Promotion = Promotion()

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, library: str | os.PathLike | None = None) -> Schedule:
        """Reads a schedule file (what ``baton run --schedule`` takes)."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return cls.from_json(text, library=library)

    @classmethod
    def from_json(cls, data: str | bytes | dict, *, library: str | os.PathLike | None = None) -> Schedule:
        """Reads a schedule from its JSON text or the decoded object, checked by Go's
        ``runners.ParseSchedule``: unknown fields and bad values raise a ScheduleError
        naming the task and the field.

        >>> Schedule.from_json({"order": "random", "tasks": [{"env": "maze"}]}).tasks[0].name  # doctest: +SKIP
        'task-0'
        """
        if isinstance(data, str):
            data = data.encode()
        elif not isinstance(data, bytes):
            try:
                data = json.dumps(data).encode()
            except (TypeError, ValueError) as e:
                raise ScheduleError([(-1, "", "", f"not JSON: {e}")]) from None
        lib = _native.load(library)
        needed = ctypes.c_int64()
        n = 1 << 16
        while True:
            out = ctypes.create_string_buffer(n)
            try:
                _go(lib, "baton_schedule_parse", data, out, n, ctypes.byref(needed))
                break
            except _core.ConfigError:
                if needed.value < n:
                    raise
                n = needed.value + 1
        return cls._from_go(json.loads(out.value))

    @classmethod
    def _from_go(cls, obj: dict) -> Schedule:
        """The Schedule of Go's JSON with its defaults written out (runners.Schedule.JSON)."""
        succ = obj["success"]
        p = obj.get("promotion")
        prom = Promotion(p["window"], float(p["threshold"]), float(p.get("demote_below", 0))) if p else Promotion()
        tasks = tuple(
            Task(name=t["name"], env=t["env"], config=t.get("config"), policies=dict(t.get("policies") or {}),
                 trials=t.get("trials", 0), weight=float(t.get("weight", 0)), index=k)
            for k, t in enumerate(obj["tasks"])
        )
        return cls(order=obj["order"], tasks=tasks, trials=obj.get("trials", 0),
                   success=Criterion(succ["metric"], float(succ["min"])), promotion=prom)

    def _json(self) -> bytes:
        """The schedule's JSON, as Go reads it, its zero values left out."""
        obj: dict[str, Any] = {
            "order": self.order,
            "trials": self.trials,
            "success": {"metric": self.success.metric, "min": self.success.min},
            "tasks": [
                _omit_zero({"name": t.name, "env": t.env, "config": t.config, "policies": t.policies,
                            "trials": t.trials, "weight": t.weight})
                for t in self.tasks
            ],
        }
        if self.promotion != Promotion():
            obj["promotion"] = {"window": self.promotion.window, "threshold": self.promotion.threshold,
                                "demote_below": self.promotion.demote_below}
        return json.dumps(_omit_zero(obj)).encode()

    def start(self, seed: int = 1, trials: int | None = None, *,
              library: str | os.PathLike | None = None) -> Scheduler:
        """A Scheduler at trial 0. ``seed`` is the campaign's (``baton run --seed``):
        the ``random`` order draws from it. ``trials`` bounds the ``random`` and
        ``success`` orders when the schedule gives no count (None: no bound)."""
        return Scheduler(self, seed, trials, library=library)


class Scheduler:
    """Drives a Schedule one trial at a time, in trial order: ``task`` is the task of
    trial ``index``; ``record`` tells whether it succeeded and moves to the next trial.
    Go decides each trial's task (``runners.Schedule.Next``). Not thread-safe: one
    training loop records in order."""

    def __init__(self, schedule: Schedule, seed: int = 1, trials: int | None = None, *,
                 library: str | os.PathLike | None = None):
        self.schedule = schedule
        self.seed = seed
        self._lib = _native.load(library)
        self._json = schedule._json()
        self._pos = (ctypes.c_int64 * 3)()
        bound = ctypes.c_int64()
        _go(self._lib, "baton_schedule_start", self._json, seed & _MASK, trials or 0, self._pos, ctypes.byref(bound))
        self.trials: int | None = bound.value or None
        self.index = 0
        self.history: list[int] = []  # the task of each trial recorded
        self.successes: list[bool] = []
        self._cur = self._pos[1]

    @property
    def done(self) -> bool:
        """Whether every trial has been recorded (never, without a bound)."""
        return self.trials is not None and self.index >= self.trials

    @property
    def task(self) -> Task:
        """The task of the current trial (the last one once done)."""
        return self.schedule.tasks[self._cur]

    def record(self, success: bool | float) -> bool:
        """Records the current trial's result, a bool or the mean of the criterion's
        metric (compared with its ``min``), and moves to the next trial; returns True
        when the next trial's task differs from this one's. Raises RuntimeError once
        done."""
        if self.done:
            raise RuntimeError(f"baton.schedule: all {self.trials} trials are recorded")
        won = self.schedule.success.succeeded(success)
        self.history.append(self._cur)
        self.successes.append(won)
        before = self._cur
        _go(self._lib, "baton_schedule_next", self._json, self.seed & _MASK, won, self._pos)
        self.index = self._pos[0]
        if not self.done:
            self._cur = self._pos[1]
        return not self.done and self._cur != before

    def runs(self) -> list[tuple[str, int, int]]:
        """The tasks taken so far as (task name, first trial, trials) runs, as the
        ``runs`` of ``baton run --schedule --json``."""
        out: list[tuple[str, int, int]] = []
        for i, k in enumerate(self.history):
            name = self.schedule.tasks[k].name
            if out and out[-1][0] == name:
                out[-1] = (name, out[-1][1], out[-1][2] + 1)
            else:
                out.append((name, i, 1))
        return out
