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

    sched = Schedule.load("examples/maze/curriculum.json").start(seed=1)
    while not sched.done:
        task = sched.task                      # name, env, config, policies
        success = run_trial(task)              # the loop's own code
        if sched.record(success):              # True when the next task differs
            print("now on", sched.task.name)

What a trial is, is the loop's choice (an episode, or a batch of them whose success
rate is recorded as one value: ``record`` compares it with the criterion's ``min``).
Only the standard library is needed.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

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
_SALT = 0x7363686564756C65  # "schedule", as runners' scheduleSalt


class ScheduleError(ValueError):
    """A schedule's problems, every one at once: ``problems`` lists them as
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


def promote(cur: int, n: int, rate: float, p: Promotion) -> int:
    """The task after task ``cur`` (of ``n``) following a window of success rate
    ``rate``: Go's ``runners.Promote``.

    >>> promote(0, 3, 0.9, Promotion(threshold=0.8))
    1
    """
    if rate >= p.threshold:
        return min(cur + 1, n - 1)
    if p.demote_below > 0 and rate < p.demote_below:
        return max(cur - 1, 0)
    return cur


def derive_seed(seed: int, k: int) -> int:
    """Go's ``env.DeriveSeed``: the k-th seed derived from ``seed`` (SplitMix64); trial
    i of a campaign of seed s has the seed ``derive_seed(s, i)``.

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


def random_task(weights: list[float], seed: int, i: int) -> int:
    """The task of trial ``i`` of a campaign of seed ``seed`` under the ``random``
    order, for these weights (0 means 1): Go's ``runners.RandomTask``, to the bit."""
    ws = [w if w != 0 else 1.0 for w in weights]
    total = 0.0
    for w in ws:
        total += w
    u = (derive_seed(derive_seed(seed, i) ^ _SALT, 1) >> 11) / float(1 << 53)
    x, acc = u * total, 0.0
    for k, w in enumerate(ws):
        acc += w
        if x < acc:
            return k
    return len(ws) - 1


_TOP = {"order", "trials", "success", "promotion", "tasks"}
_TASK = {"name", "env", "config", "policies", "trials", "weight"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Schedule:
    """A schedule: its order, tasks, trials (for ``random`` and ``success``; 0: as many
    as the loop runs), success criterion and promotion. Build it with ``load`` or
    ``from_json``, which check it as Go does (every problem at once, a
    ScheduleError), and drive it with ``start``."""

    order: str
    tasks: tuple[Task, ...]
    trials: int = 0
    success: Criterion = Criterion()
    promotion: Promotion = Promotion()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Schedule:
        """Reads a schedule file (what ``baton run --schedule`` takes)."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return cls.from_json(text)

    @classmethod
    def from_json(cls, data: str | bytes | dict) -> Schedule:
        """Reads a schedule from its JSON text or the decoded object; unknown fields
        and bad values raise a ScheduleError naming the task and the field.

        >>> Schedule.from_json({"order": "random", "tasks": [{"env": "maze"}]}).tasks[0].name
        'task-0'
        """
        if isinstance(data, (str, bytes)):
            try:
                obj = json.loads(data)
            except json.JSONDecodeError as e:
                raise ScheduleError([(-1, "", "", str(e))]) from None
        else:
            obj = data
        if not isinstance(obj, dict):
            raise ScheduleError([(-1, "", "", "want a JSON object with order and tasks")])
        problems: list[tuple[int, str, str, str]] = []

        def bad(task: int, name: str, fld: str, reason: str) -> None:
            problems.append((task, name, fld, reason))

        for k in sorted(set(obj) - _TOP):
            bad(-1, "", "", f'unknown field "{k}"')
        order = obj.get("order")
        if order is None:
            bad(-1, "", "order", "missing: want in_order, random or success")
        elif order not in ORDERS:
            bad(-1, "", "order", f"{order!r}: want in_order, random or success")
        trials = obj.get("trials", 0)
        if not _is_int(trials) or trials < 0:
            bad(-1, "", "trials", f"{trials!r}: want 0 or more")
            trials = 0

        crit = Criterion()
        succ = obj.get("success")
        if succ is not None:
            if not isinstance(succ, dict) or set(succ) - {"metric", "min"}:
                bad(-1, "", "success", 'want {"metric", "min"}')
            else:
                metric = succ.get("metric") or "success"
                if not isinstance(metric, str):
                    bad(-1, "", "success.metric", f"{metric!r}: want a name")
                    metric = "success"
                mn = succ.get("min")
                if mn is None:
                    mn = 1.0 if metric == "success" else 0.0
                elif not _is_num(mn) or not math.isfinite(mn):
                    bad(-1, "", "success.min", f"{mn!r}: want a finite number")
                    mn = 1.0
                elif mn == 0 and metric == "success":
                    bad(-1, "", "success.min", "0 makes every trial a success; want more than 0")
                crit = Criterion(metric, float(mn))

        prom = Promotion()
        p = obj.get("promotion")
        if p is not None:
            if not isinstance(p, dict) or set(p) - {"window", "threshold", "demote_below"}:
                bad(-1, "", "promotion", 'want {"window", "threshold", "demote_below"}')
            else:
                if order is not None and order != "success":
                    bad(-1, "", "promotion", "only the success order promotes")
                w = p.get("window", 0)
                th = p.get("threshold", 0)
                de = p.get("demote_below", 0)
                if not _is_int(w) or w < 0:
                    bad(-1, "", "promotion.window", f"{w!r}: want 1 or more (0 for {DEFAULT_WINDOW})")
                    w = 0
                if not _is_num(th) or not (0 <= th <= 1):
                    bad(-1, "", "promotion.threshold", f"{th!r}: want more than 0 and at most 1")
                    th = 0
                th = th or DEFAULT_THRESHOLD
                if not _is_num(de) or not (0 <= de < th):
                    bad(-1, "", "promotion.demote_below", f"{de!r}: want 0 (never) or more, and less than the threshold {th}")
                    de = 0
                prom = Promotion(w or DEFAULT_WINDOW, float(th), float(de))

        tasks: list[Task] = []
        raw_tasks = obj.get("tasks")
        if not isinstance(raw_tasks, list) or not raw_tasks:
            bad(-1, "", "tasks", "none: want at least one")
            raw_tasks = []
        seen: dict[str, int] = {}
        total = 0
        for k, t in enumerate(raw_tasks):
            if not isinstance(t, dict):
                bad(k, "", "", "want a JSON object")
                continue
            name = t.get("name") or f"task-{k}"
            for f in sorted(set(t) - _TASK):
                bad(k, name, "", f'unknown field "{f}"')
            env = t.get("env")
            if not isinstance(env, str) or not env:
                bad(k, name, "env", "missing: want a registered environment's name")
            if name in seen:
                bad(k, name, "name", f"the same as task {seen[name]}'s")
            seen.setdefault(name, k)
            n = t.get("trials", 0)
            if not _is_int(n):
                bad(k, name, "trials", f"{n!r}: want a whole number")
                n = 0
            elif order == "in_order" and n < 1:
                bad(k, name, "trials", f"{n}: the in_order order wants 1 or more")
            elif order != "in_order" and n != 0:
                bad(k, name, "trials", f"{n}: only the in_order order counts a task's trials")
            total += max(n, 0)
            w = t.get("weight", 0)
            if not _is_num(w) or w < 0 or not math.isfinite(w):
                bad(k, name, "weight", f"{w!r}: want 0 (for 1) or more")
                w = 0
            elif w != 0 and order != "random":
                bad(k, name, "weight", f"{w}: only the random order weighs tasks")
            pol = t.get("policies") or {}
            if not isinstance(pol, dict) or not all(isinstance(v, str) and v for v in pol.values()):
                bad(k, name, "policies", 'want {"AGENT": "POLICY", ...}')
                pol = {}
            tasks.append(Task(name=name, env=env or "", config=t.get("config"), policies=dict(pol),
                              trials=n, weight=float(w), index=k))
        if order == "in_order" and trials != 0 and trials != total:
            bad(-1, "", "trials", f"{trials}, but the tasks' trials add up to {total}; leave it out")
        if problems:
            raise ScheduleError(problems)
        return cls(order=order, tasks=tuple(tasks), trials=trials, success=crit, promotion=prom)

    def start(self, seed: int = 1, trials: int | None = None) -> Scheduler:
        """A Scheduler at trial 0. ``seed`` is the campaign's (``baton run --seed``):
        the ``random`` order draws from it. ``trials`` bounds the ``random`` and
        ``success`` orders when the schedule gives no count (None: no bound)."""
        return Scheduler(self, seed, trials)


class Scheduler:
    """Drives a Schedule one trial at a time, in trial order: ``task`` is the task of
    trial ``index``; ``record`` tells whether it succeeded and moves to the next trial.
    Not thread-safe: one training loop records in order."""

    def __init__(self, schedule: Schedule, seed: int = 1, trials: int | None = None):
        self.schedule = schedule
        self.seed = seed
        if schedule.order == "in_order":
            self.trials: int | None = sum(t.trials for t in schedule.tasks)
        elif schedule.trials:
            self.trials = schedule.trials
        else:
            self.trials = trials
        self.index = 0
        self.history: list[int] = []  # the task of each trial recorded
        self.successes: list[bool] = []
        self._cur = self._task_of(0)
        self._window_wins = 0

    @property
    def done(self) -> bool:
        """Whether every trial has been recorded (never, without a bound)."""
        return self.trials is not None and self.index >= self.trials

    @property
    def task(self) -> Task:
        """The task of the current trial (the last one once done)."""
        return self.schedule.tasks[self._cur]

    def _task_of(self, i: int) -> int:
        s = self.schedule
        if s.order == "in_order":
            end = 0
            for k, t in enumerate(s.tasks):
                end += t.trials
                if i < end:
                    return k
            return len(s.tasks) - 1
        if s.order == "random":
            return random_task([t.weight for t in s.tasks], self.seed, i)
        return self._cur if i > 0 else 0

    def record(self, success: bool | float) -> bool:
        """Records the current trial's result, a bool or the mean of the criterion's
        metric (compared with its ``min``), and moves to the next trial; returns True
        when the next trial's task differs from this one's. Raises RuntimeError once
        done."""
        if self.done:
            raise RuntimeError(f"baton.schedule: all {self.trials} trials are recorded")
        s = self.schedule
        won = s.success.succeeded(success)
        self.history.append(self._cur)
        self.successes.append(won)
        before = self._cur
        self.index += 1
        if s.order == "success":
            w = s.promotion.window
            self._window_wins += won
            if self.index % w == 0:
                self._cur = promote(self._cur, len(s.tasks), self._window_wins / w, s.promotion)
                self._window_wins = 0
        elif not self.done:
            self._cur = self._task_of(self.index)
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
