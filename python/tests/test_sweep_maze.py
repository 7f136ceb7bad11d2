"""examples/python/sweep_maze.py: the grid's configurations, the budgets, resuming,
the table, and a short seeded hierarchy-against-flat comparison on a generated 7x7
map with the shaped reward: both variants, from an untrained policy that rarely
reaches the goal, learn to reach it on most episodes, and the run's record is the
same for the same seed."""

import json

import pytest
import torch

import sweep_maze
import train_maze


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_configurations():
    h = sweep_maze.config_of("hierarchy", 11, "per-episode", "shaped")
    assert h == {"generate": {"rows": 11, "cols": 11, "per_episode": True}, "strategy": {"max_steps": 60},
                 "motion": {"max_steps": 11, "reward_for_progress": 0.1}}
    s = sweep_maze.config_of("hierarchy", 7, "fixed", "sparse")
    assert s["motion"]["reward_for_right_direction"] == 0 and s["motion"]["reward_for_wrong_direction"] == 0
    assert s["generate"] == {"rows": 7, "cols": 7, "seed": 1}
    f = sweep_maze.config_of("flat", 7, "fixed", "sparse")
    assert f == {"generate": {"rows": 7, "cols": 7, "seed": 1}, "max_steps": 98}
    assert sweep_maze.budget(7, 65_536, 64, 32) == 65_536
    assert sweep_maze.budget(21, 65_536, 64, 32) == 9 * 65_536
    assert sweep_maze.budget(11, 10_000, 64, 32) % 2048 == 0
    assert sweep_maze.budget(21, 65_536, 64, 32, cap=5_000) == 6_144  # capped, whole rollouts


def test_resumes_and_reports(tmp_path):
    out = tmp_path / "sweep.jsonl"
    args = sweep_maze.parse_args(["--out", str(out), "--sizes", "7", "--maps", "fixed", "--seeds", "1", "2"])
    assert len(sweep_maze.grid(args)) == 2 * 2 * 2  # rewards x variants x seeds
    done = {"side": 7, "maps": "fixed", "reward": "sparse", "variant": "flat", "seed": 1, "budget": 2048,
            "env_steps_to_target": 1024, "final_success": 0.95, "curve": [{"env_steps": 1024, "success": 0.95, "return": 1}]}
    out.write_text(json.dumps(done) + "\n" + json.dumps({**done, "final_success": 0.5}) + "\n")  # the first of a key counts
    assert len(sweep_maze.load(str(out), str(tmp_path / "none.jsonl"))) == 1
    todo = [s for s in sweep_maze.grid(args) if sweep_maze.key(s) not in {sweep_maze.key(r) for r in sweep_maze.load(str(out))}]
    assert len(todo) == 7
    t = sweep_maze.table(sweep_maze.load(str(out)))
    assert "| 7x7 | fixed | sparse | 2,048 | not run | not run | 1,024 (1/1) | 0.950 |" in t


@pytest.mark.parametrize("flags, per_episode, name", [
    ([], {"transition": "moves"}, "per-episode, moves"),
    (["--transition", "learned"], {}, "per-episode"),
    (["--no-planner"], {"planner": False}, "per-episode, MLP"),
])
def test_runs_record_their_planner(flags, per_episode, name):
    """A per-episode run records which planner it had; a run recorded before the choice
    existed (no "transition") had PlanNet's learned transition, and is done for
    --transition learned but not for the default."""
    args = sweep_maze.parse_args(["--sizes", "7", "--seeds", "1", *flags])
    runs = sweep_maze.grid(args)
    per = [r for r in runs if r["maps"] == "per-episode"]
    fixed = [r for r in runs if r["maps"] == "fixed"]
    assert per and fixed
    assert all({k: r[k] for k in r if k in ("transition", "planner")} == per_episode for r in per)
    assert all(sweep_maze.setting(r) == name for r in per)
    assert all(sweep_maze.setting(r) == "fixed" for r in fixed)
    old = {"side": 7, "maps": "per-episode", "reward": "shaped", "variant": "flat", "seed": 1}
    assert (sweep_maze.key(old) in {sweep_maze.key(r) for r in per}) == (flags == ["--transition", "learned"])


@pytest.mark.go
def test_hierarchy_and_flat_learn_a_small_maze(one_thread):
    """7x7, one generated map, the shaped reward, seed 3: each variant from under 0.5
    success (untrained) to at least 0.8 on 300 fresh episodes within 16,384 env steps,
    and the flat run's record (its curve, the final evaluation) is the same when run
    again with the same seed."""
    args = sweep_maze.parse_args(["--base-steps", "16384", "--curve-every", "4", "--curve-episodes", "50",
                                  "--eval-episodes", "300", "--target", "1.01"])
    got = {}
    for variant in ("hierarchy", "flat"):
        spec = {"side": 7, "maps": "fixed", "reward": "shaped", "variant": variant, "seed": 3}
        flat = variant == "flat"
        config = sweep_maze.config_of(variant, 7, "fixed", "shaped")
        before = train_maze.evaluate(train_maze.untrained(flat, seed=3, config=config), flat=flat, episodes=300,
                                     config=config)["success"]
        run = sweep_maze.run_one(spec, args)
        got[variant] = (before, run["final_success"])
        assert run["env_steps"] == 16_384
        assert before < 0.5 and run["final_success"] >= 0.8, got
        if flat:
            again = sweep_maze.run_one(spec, args)
            assert (again["curve"], again["final_success"]) == (run["curve"], run["final_success"])
