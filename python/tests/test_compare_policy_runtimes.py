"""examples/python/compare_policy_runtimes.py, small: one maze strategy played in Go
(compiled and gonnx) and served from Python, the same seeds, the same successes."""

import pytest
import torch

import compare_policy_runtimes  # examples/python, on pytest's pythonpath (pyproject.toml)
import train_maze
from test_remote_go import baton_bin  # noqa: F401 - the fixture

pytest.importorskip("onnx")
pytest.importorskip("grpc")


def test_go_and_python_play_the_same_policy_alike(baton_bin, tmp_path):  # noqa: F811
    agents = train_maze.untrained(seed=3)
    # Weights far from the untrained policy's near-uniform logits, so that the greedy
    # action changes with the position.
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for a in agents.values():
            for p in a.net.pi.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    train_maze.push_models(agents, "t", env="maze", where=tmp_path)
    res = compare_policy_runtimes.compare(baton_bin, str(tmp_path), "t-strategy@1", "random", trials=20,
                                          rounds=2, seed=5, workers=1)
    rts = res["runtimes"]
    assert set(rts) == {"go-compiled", "go-gonnx", "python"}
    for r in rts.values():
        assert r["episodes"] == 40 and len(r["runs"]) == 2 and r["steps_per_second"]["median"] > 0
    # A greedy strategy, the same seeded motion policy: the same episodes.
    assert rts["go-compiled"]["successes"] == rts["python"]["successes"] == rts["go-gonnx"]["successes"]
    for t in res["tests"].values():
        assert t["match"] and t["p_value"] == 1.0 and t["rounds_with_equal_successes"] == 2


def test_z_test():
    assert compare_policy_runtimes.z_test(50, 100, 50, 100) == 1.0
    assert compare_policy_runtimes.z_test(0, 10, 0, 10) == 1.0
    assert compare_policy_runtimes.z_test(90, 100, 50, 100) < 1e-6
