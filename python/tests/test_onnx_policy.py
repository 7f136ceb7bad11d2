"""A policy trained in torch, exported as ONNX (train_maze.py's PolicyGraph) and run
inside Go trials by `baton run --policy strategy=model:NAME@VERSION`, with no Python
process: the actions Go took, as its activity log records them, equal torch's on the
same observations."""

import subprocess

import numpy as np
import pytest
import torch
from torch import nn

import baton
import train_maze  # examples/python, on pytest's pythonpath (pyproject.toml)
from baton import models
from test_remote_go import baton_bin  # noqa: F401 - the fixture

pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def agents():
    return train_maze.untrained(seed=3)


def test_go_acts_as_torch_on_10000_logged_observations(baton_bin, agents, tmp_path):  # noqa: F811
    strategy = agents["strategy"]
    # Weights far from the untrained policy's near-uniform logits, so that the
    # greedy action changes with the position.
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in strategy.net.pi.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    [meta] = train_maze.push_models({"strategy": strategy}, "eq", env="maze", where=tmp_path / "models")
    assert meta.ref == "eq-strategy@1" and meta.format == "onnx"

    graph = train_maze.PolicyGraph(strategy.net, strategy.net._features)
    # Both of Go's runtimes (the graph compiled into plain Go, and gonnx) play the
    # same campaign and choose the same actions as torch.
    logged = {}
    for runtime in ("compiled", "gonnx"):
        log = tmp_path / f"log-{runtime}"
        subprocess.run(
            [baton_bin, "run", "maze", "--trials", "500", "--seed", "7", "--workers", "2", "--policy",
             "strategy=model:eq-strategy@1", "--models", str(tmp_path / "models"), "--log", str(log),
             "--model-runtime", runtime],
            check=True, capture_output=True, text=True,
        )
        # Each transition: the observation and mask the strategy acted on, and the
        # action Go's policy chose.
        t = baton.load(log)["strategy"].transitions()
        obs, go_actions = t.obs[:10_000], t.action[:10_000]
        assert len(obs) == 10_000, len(t.obs)
        with torch.no_grad():
            logits = graph(torch.from_numpy(obs))
        mask = torch.from_numpy(t.mask[:10_000])
        torch_actions = logits.masked_fill(~mask, -np.inf).argmax(1).numpy()
        np.testing.assert_array_equal(go_actions, torch_actions, err_msg=runtime)
        # The graph is the training network's greedy policy.
        np.testing.assert_array_equal(strategy.act(obs, mask.numpy(), greedy=True), torch_actions)
        assert len(np.unique(go_actions)) > 1
        logged[runtime] = obs, go_actions
    # The same campaign, the same decisions.
    np.testing.assert_array_equal(logged["compiled"][0], logged["gonnx"][0])
    np.testing.assert_array_equal(logged["compiled"][1], logged["gonnx"][1])


def test_a_model_of_other_spaces_is_refused_naming_both(baton_bin, agents, tmp_path):  # noqa: F811
    motion = agents["motion"]
    train_maze.push_models({"motion": motion}, "wrong", env="maze", where=tmp_path)
    r = subprocess.run(
        [baton_bin, "run", "maze", "--trials", "1", "--policy", "strategy=model:wrong-motion",
         "--models", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert r.returncode == 2
    assert "model wrong-motion@1 has observation space" in r.stderr and 'agent "strategy"' in r.stderr
    r = subprocess.run(
        [baton_bin, "run", "maze", "--policy", "strategy=model:wrong-motion@4", "--models", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert r.returncode == 2 and "has no version 4" in r.stderr
    (tmp_path / "wrong-motion" / "v000001" / "model").write_bytes(b"not onnx")
    with pytest.raises(models.Corrupt):
        models.pull("wrong-motion", where=tmp_path)
    r = subprocess.run(
        [baton_bin, "run", "maze", "--policy", "motion=model:wrong-motion", "--models", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert r.returncode == 1 and "is corrupt" in r.stderr
