"""baton.export_minari: one agent's steps of an activity log (written by a fast-lane
vector with log=DIR) as a Minari dataset, read back with minari.load_dataset.

The log is written by the fast lane's Go library, built from the checkout: the
tests carry the go marker."""

import shutil
import warnings

import numpy as np
import pytest

import baton
import baton.vector as bv
from baton.vector import _native

pytestmark = [pytest.mark.go, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def maze_dir(tmp_path_factory):
    """A log of 4 maze copies stepped 400 ticks with random valid actions."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    _native.build()
    d = str(tmp_path_factory.mktemp("fastlog") / "log")
    rng = np.random.default_rng(8)
    with bv.make("maze", num_envs=4, seed=3, log=d, policy={"strategy": "ppo", "motion": "oracle"}) as v:
        groups = v.reset()
        for _ in range(400):
            for g in groups.values():
                if len(g):
                    g.actions[:] = (rng.random(g.masks.shape) * g.masks).argmax(axis=1)
            groups, *_ = v.step()
    return d


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))


def sub_episodes(data: baton.AgentData, complete: bool = True) -> list[np.ndarray]:
    """The row indices of each sub-episode (trial, episode, agent id) of data, in the
    order their first rows come, the complete ones only when asked."""
    c = data.columns
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(c["trial_id"], c["episode"].tolist(), c["agent_id"])):
        groups.setdefault(key, []).append(i)
    out = []
    for rows in groups.values():
        rows = np.array(rows)
        ended = c["terminated"][rows[-1]] or c["truncated"][rows[-1]]
        if len(rows) >= 2 and (ended or not complete):
            out.append(rows)
    return out


@pytest.mark.parametrize("agent", ["strategy", "motion"])
def test_export_reads_back(maze_dir, datasets, agent):
    import minari

    log = baton.load(maze_dir)
    data = log[agent]
    dataset_id = f"baton/maze/{agent}-v0"
    ds = baton.export_minari(log, agent, dataset_id)
    assert ds.total_episodes > 0

    got = minari.load_dataset(dataset_id)
    want = sub_episodes(data)
    assert got.total_episodes == len(want)
    assert got.total_steps == sum(len(rows) - 1 for rows in want)
    assert got.observation_space == data.spaces.observation
    assert got.action_space == data.spaces.action
    assert got.storage.metadata["algorithm_name"] == {"strategy": "ppo", "motion": "oracle"}[agent]
    c = data.columns
    for ep, rows in zip(got.iterate_episodes(), want):
        steps = rows[1:]
        np.testing.assert_array_equal(ep.observations, c["observation"][rows])
        np.testing.assert_array_equal(ep.actions, c["action"][steps])
        np.testing.assert_allclose(ep.rewards, c["reward"][steps])
        np.testing.assert_array_equal(ep.terminations, c["terminated"][steps])
        np.testing.assert_array_equal(ep.truncations, c["truncated"][steps])
        np.testing.assert_array_equal(ep.infos["span_ticks"], c["span_ticks"][rows])
        np.testing.assert_array_equal(ep.infos["action_mask"], c["action_mask"][rows])


def test_export_unfinished(maze_dir, datasets):
    """complete=False adds the sub-episodes that the vector's close cut, their last
    step truncated."""
    import minari

    data = baton.load(maze_dir)["strategy"]
    all_ = sub_episodes(data, complete=False)
    done = sub_episodes(data)
    assert len(all_) > len(done)
    baton.export_minari(maze_dir, "strategy", "baton/maze/all-v0", complete=False, algorithm_name="mine")
    got = minari.load_dataset("baton/maze/all-v0")
    assert got.total_episodes == len(all_)
    assert got.storage.metadata["algorithm_name"] == "mine"
    for ep in got.iterate_episodes():
        assert ep.terminations[-1] or ep.truncations[-1]


def test_export_errors(maze_dir, datasets):
    with pytest.raises(KeyError, match="nobody"):
        baton.export_minari(maze_dir, "nobody", "baton/maze/nobody-v0")
    baton.export_minari(maze_dir, "motion", "baton/maze/twice-v0")
    with warnings.catch_warnings(), pytest.raises(ValueError):
        warnings.simplefilter("ignore")
        baton.export_minari(maze_dir, "motion", "baton/maze/twice-v0")
