"""baton.schedule: the JSON of baton run --schedule, its checks, and Go's rules,
which baton.schedule calls through the fast lane: the errors are Go's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import baton
import baton.vector as bv
from baton.schedule import Criterion, Promotion, Schedule, ScheduleError, Task, derive_seed, promote, random_task

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CURRICULUM = os.path.join(REPO_ROOT, "envs", "maze", "curriculum.json")

# The rules are Go's, in the fast lane's library: these tests build it.
pytestmark = pytest.mark.go


@pytest.fixture(scope="module", autouse=True)
def library():
    if shutil.which("go") is None and not os.environ.get("BATON_LIBRARY"):
        pytest.skip("go is not on PATH: cannot build the fast lane's library")


def tasks(*names, **extra):
    return [{"name": n, "env": "maze", **extra} for n in names]


def test_load_curriculum():
    s = Schedule.load(CURRICULUM)
    assert s.order == "success"
    assert s.trials == 60
    assert [t.name for t in s.tasks] == ["5x5", "7x7", "9x9"]
    assert s.tasks[1].config["generate"] == {"rows": 7, "cols": 7, "per_episode": True}
    assert s.tasks[2].policies == {"strategy": "oracle", "motion": "forward"}
    assert s.promotion == Promotion(window=10, threshold=0.9, demote_below=0.0)
    assert (s.success.metric, s.success.min) == ("success", 1.0)


@pytest.mark.parametrize(
    "successes, window, threshold, demote, want",
    [
        # every trial succeeds: promoted after each window, the last task stays
        ([True] * 7, 2, 1.0, 0.0, ["a", "a", "b", "b", "c", "c", "c"]),
        # a task that always fails keeps the learner there
        ([True] * 3 + [False] * 9, 3, 1.0, 0.0, ["a"] * 3 + ["b"] * 9),
        # promoted, then demoted, and again
        ([True, True, False, False, True, True, False, False, True], 2, 0.5, 0.4,
         ["a", "a", "b", "b", "a", "a", "b", "b", "a"]),
    ],
)
def test_success_order(successes, window, threshold, demote, want):
    s = Schedule.from_json({
        "order": "success",
        "promotion": {"window": window, "threshold": threshold, "demote_below": demote},
        "tasks": tasks("a", "b", "c"),
    })
    sched = s.start(trials=len(successes))
    taken = []
    for ok in successes:
        taken.append(sched.task.name)
        changed = sched.record(ok)
        assert changed == (not sched.done and sched.task.name != taken[-1])
    assert sched.done
    assert taken == want
    with pytest.raises(RuntimeError):
        sched.record(True)


def test_in_order():
    s = Schedule.from_json({"order": "in_order", "tasks": [
        {"name": "a", "env": "maze", "trials": 2}, {"name": "b", "env": "maze", "trials": 1}]})
    sched = s.start()
    assert sched.trials == 3
    taken = []
    while not sched.done:
        taken.append(sched.task.name)
        sched.record(False)
    assert taken == ["a", "a", "b"]
    assert sched.runs() == [("a", 0, 2), ("b", 2, 1)]


def test_random_order_matches_go():
    # The same values as runners' TestRandomTaskGolden.
    assert [random_task([1, 2, 0.5, 0], 7, i) for i in range(24)] == [
        2, 1, 1, 1, 3, 1, 1, 1, 1, 0, 3, 3, 1, 3, 0, 1, 3, 1, 1, 3, 0, 1, 1, 3]
    assert [random_task([3, 1], 2**64 - 1, i) for i in range(12)] == [0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0]
    s = Schedule.from_json({"order": "random", "tasks": [
        {"name": "a", "env": "maze", "weight": 1}, {"name": "b", "env": "maze", "weight": 2},
        {"name": "c", "env": "maze", "weight": 0.5}, {"name": "d", "env": "maze"}]})
    sched = s.start(seed=7)
    assert sched.trials is None and not sched.done, "no bound: as many trials as the loop runs"
    taken = []
    for _ in range(24):
        taken.append(sched.task.index)
        sched.record(True)
    assert taken[:5] == [2, 1, 1, 1, 3]


def test_derive_seed():
    assert derive_seed(9, 0) == 9
    assert derive_seed(1, 1) == 0x910A2DEC89025CC1  # env.DeriveSeed(1, 1), SplitMix64


def test_promote():
    p = Promotion(threshold=0.8, demote_below=0.3)
    assert [promote(c, 3, r, p) for c, r in [(0, 0.8), (1, 1), (2, 1), (1, 0.5), (1, 0.2), (0, 0)]] == [1, 2, 2, 1, 0, 0]


def test_record_metric_value():
    s = Schedule.from_json({"order": "success", "success": {"metric": "return:strategy", "min": 0.5},
                            "promotion": {"window": 1}, "tasks": tasks("a", "b")})
    sched = s.start(trials=3)
    assert not sched.record(0.2)
    assert sched.record(0.75)
    assert sched.task.name == "b"


@pytest.mark.parametrize(
    "obj, want",
    [
        ({"tasks": []}, ["invalid schedule: order: missing: want in_order, random or success",
                         "invalid schedule: tasks: none: want at least one"]),
        ({"order": "sideways", "tasks": tasks("a")}, ['invalid schedule: order "sideways": want in_order, random or success']),
        ({"order": "in_order", "tasks": [{"name": "a", "env": "maze", "trials": 0, "weight": 2}, {"name": "a", "trials": 1}]},
         ["invalid schedule: task 0 (a): trials: 0: the in_order order wants 1 or more",
          "invalid schedule: task 0 (a): weight: 2: only the random order weighs tasks",
          "invalid schedule: task 1 (a): env: missing: want a registered environment's name",
          "invalid schedule: task 1 (a): name: the same as task 0's"]),
        ({"order": "success", "tasks": [{"env": "maze", "trials": 3}]},
         ["invalid schedule: task 0 (task-0): trials: 3: only the in_order order counts a task's trials"]),
        ({"order": "random", "promotion": {"window": 3}, "tasks": tasks("a")},
         ["invalid schedule: promotion: only the success order promotes"]),
        ({"order": "success", "promotion": {"window": -1, "threshold": 1.5}, "tasks": tasks("a")},
         ["invalid schedule: promotion.window: -1: want 1 or more (0 for 10)",
          "invalid schedule: promotion.threshold: 1.5: want more than 0 and at most 1"]),
        ({"order": "random", "success": {"min": 0}, "tasks": tasks("a")},
         ["invalid schedule: success.min: 0 makes every trial a success; want more than 0"]),
        ({"order": "in_order", "trials": 5, "tasks": [{"env": "maze", "trials": 2}]},
         ["invalid schedule: trials: 5, but the tasks' trials add up to 2; leave it out"]),
        # JSON that does not decode stops at its first problem, as Go's decoder does
        ({"order": "random", "colour": 1, "tasks": [{"env": "maze", "size": 3}]},
         ['invalid schedule: json: unknown field "colour"']),
        ({"order": "random", "tasks": [{"env": "maze", "size": 3}]},
         ['invalid schedule: task 0: json: unknown field "size"']),
    ],
)
def test_errors(obj, want):
    with pytest.raises(ScheduleError) as e:
        Schedule.from_json(obj)
    assert str(e.value) == "; ".join(want)
    assert len(e.value.problems) == len(want)
    assert isinstance(e.value, ValueError)


def test_schedule_built_in_python_is_checked_by_go():
    s = Schedule(order="success", tasks=(Task("a", "maze"), Task("b", "maze", index=1)),
                 promotion=Promotion(window=1), success=Criterion("return:strategy", 0.5))
    sched = s.start(trials=2)
    assert sched.trials == 2
    assert sched.record(0.6) and sched.task.name == "b"
    bad = Schedule(order="sideways", tasks=(Task("a", "maze", trials=0),))
    with pytest.raises(ScheduleError) as e:
        bad.start()
    assert e.value.problems[0][:3] == (-1, "", "")
    assert "sideways" in e.value.problems[0][3]


def test_go_argument_errors_are_typed():
    with pytest.raises(bv.ConfigError, match="task 3 of 2"):
        promote(3, 2, 1.0, Promotion())
    with pytest.raises(bv.ConfigError, match="0 weights"):
        random_task([], 1, 0)


def test_not_json():
    with pytest.raises(ScheduleError, match="invalid schedule: invalid character 'i'"):
        Schedule.from_json('{"order": in_order}')


@pytest.fixture(scope="module")
def curriculum_log(tmp_path_factory):
    """baton run --schedule with the example curriculum, logged, and its JSON summary."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot run baton run --schedule")
    d = str(tmp_path_factory.mktemp("curriculum") / "log")
    cmd = ["go", "run", "./cmd/baton", "run", "--schedule", CURRICULUM, "--log", d, "--json", "--workers", "3"]
    r = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d, json.loads(r.stdout)


@pytest.mark.go
def test_log_tasks_and_python_rules_agree(curriculum_log):
    d, summary = curriculum_log
    log = baton.load(d)
    assert "task" in log.trials.column_names
    by_trial = log.trial_tasks()
    assert len(by_trial) == 60
    index = dict(zip(log.trials.column("trial_id").to_pylist(), log.trials.column("index").to_pylist()))
    go_tasks = [None] * 60
    for trial, task in by_trial.items():
        go_tasks[index[trial]] = task
    runs = [(r["task"], r["first"], r["trials"]) for r in summary["schedule"]["runs"]]
    assert runs == [("5x5", 0, 10), ("7x7", 10, 10), ("9x9", 20, 40)]

    # The Python scheduler, told each trial's success in trial order, takes the same tasks.
    eps = log.episodes
    success = dict(zip(eps.column("trial_id").to_pylist(), eps.column("success").to_pylist()))
    order = sorted(by_trial, key=index.get)
    sched = Schedule.load(CURRICULUM).start(seed=summary["seed"])
    for trial in order:
        assert sched.task.name == by_trial[trial], trial
        sched.record(success[trial])
    assert sched.done
    assert sched.runs() == runs

    tasks = log.episode_tasks()
    assert len(tasks) == eps.num_rows
    assert sorted(set(tasks.tolist())) == ["5x5", "7x7", "9x9"]
    assert (tasks == "9x9").sum() == 40


def test_log_without_tasks(maze_log):
    d, _ = maze_log
    log = baton.load(d)
    assert set(log.trial_tasks().values()) == {None}
    assert set(log.episode_tasks().tolist()) == {None}


@pytest.mark.go
def test_curriculum_on_the_fast_lane():
    """Each task of the example curriculum on the fast lane: the observations keep one
    size across maze sizes (obs_side), each copy draws its own map per episode, and the
    same seed draws the same maps."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    import numpy as np

    import baton.vector as bv

    sched = Schedule.load(CURRICULUM)
    dims = set()
    for task in sched.tasks:
        maps = []
        for _ in range(2):
            with bv.make(task.env, num_envs=8, seed=3, config=task.config) as v:
                groups = v.reset()
                g = groups["strategy"]
                dims.add(g.obs.shape[1])
                maps.append(g.obs[:, :81].copy())
        np.testing.assert_array_equal(maps[0], maps[1], err_msg=f"{task.name}: the same seed, the same maps")
        assert len({m.tobytes() for m in maps[0]}) > 4, f"{task.name}: the copies draw different maps"
        side = task.config["generate"]["rows"]
        grid = maps[0].reshape(8, 9, 9)
        assert (grid[:, side:, :] == 0).all() and (grid[:, :, side:] == 0).all(), "walls pad the map"
    assert dims == {81 + 2 + 4}
