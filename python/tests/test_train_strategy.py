"""examples/python/train_strategy.py: its training on hand-built transitions, and on a
real log."""

import importlib.util
import os
import sys

import numpy as np
import pytest

import baton
from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "examples", "python", "train_strategy.py")


def script():
    spec = importlib.util.spec_from_file_location("train_strategy", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def synthetic_transitions(n_trials=10, steps=12, dim=8, seed=0):
    """An 'oracle' whose action is the argmax of the first 4 observation values among
    the allowed ones: learnable by a small MLP."""
    rng = np.random.default_rng(seed)
    rows = {k: [] for k in ("trial_id", "episode", "agent_id", "tick", "start", "acting", "observation",
                            "action", "action_mask", "reward", "terminated", "truncated", "span_ticks")}
    for trial in range(n_trials):
        prev_choice = 0
        for k in range(steps):
            obs = rng.normal(size=dim).astype(np.float32)
            mask = rng.random(4) < 0.8
            mask[rng.integers(4)] = True
            choice = int(np.argmax(np.where(mask, obs[:4], -np.inf)))
            rows["trial_id"].append(f"t{trial}")
            rows["episode"].append(0)
            rows["agent_id"].append("strategy_0")
            rows["tick"].append(k)
            rows["start"].append(k == 0)
            rows["acting"].append(k < steps - 1)
            rows["observation"].append(obs)
            rows["action"].append(0 if k == 0 else prev_choice)  # the action taken on the previous row
            rows["action_mask"].append(mask)
            rows["reward"].append(0.0)
            rows["terminated"].append(k == steps - 1)
            rows["truncated"].append(False)
            rows["span_ticks"].append(0 if k == 0 else 1)
            prev_choice = choice
    cols = {k: np.array(v, dtype=object if k in ("trial_id", "agent_id") else None) for k, v in rows.items()}
    return baton.build_transitions(cols)


def test_behaviour_cloning_learns_and_prints_its_curve():
    ts = script()
    lines = []
    policy, curve = ts.train(synthetic_transitions(), n_actions=4, epochs=40, hidden=32, lr=1e-2, log=lines.append)
    assert len(curve) == 40
    assert curve[-1]["loss"] < curve[0]["loss"]
    assert curve[-1]["acc"] > 0.9
    assert any("val acc" in line for line in lines) and len(lines) == 2 + 40


def test_train_strategy_on_a_real_log(maze_log, tmp_path, capsys):
    d, _ = maze_log
    out = tmp_path / "model.pt"
    script().main([d, "--epochs", "3", "--out", str(out)])
    assert out.exists()
    printed = capsys.readouterr().out
    assert "val acc" in printed and "saved the model" in printed


def test_exits_with_a_clear_message_without_pyarrow(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(SystemExit) as e:
        script().main([str(tmp_path)])
    assert "pip install pyarrow" in str(e.value.code)
