"""scramble=SEED on the Python entry points: the scrambled variant Go's package
scramble registers (NAME-scrambled, {"scramble": SEED}), each agent's observation
features and discrete actions permuted as Go's env.Scramble draws them, recorded in
the log."""

import json
from pathlib import Path

import gymnasium
import numpy as np
import pyarrow as pa
import pytest

import baton
import baton.pettingzoo
import baton.vector
from baton.vector import ConfigError

# env.Scramble's permutations for seed 7, as Go draws them (from the seed and the
# agent's name; scramble's TestPermutationsOfSeven pins the same values): the
# scrambled feature j is the plain feature OBS[j], the scrambled action i the plain
# action ACTIONS[i].
STRATEGY_ACTIONS = [0, 2, 3, 1]
STRATEGY_OBS = [42, 96, 23, 87, 28, 77, 19, 88, 58, 90, 71, 48, 21, 31, 6, 50, 2, 80, 89, 30, 44, 8, 18, 54, 68, 91, 57,
                22, 36, 93, 70, 62, 0, 97, 25, 94, 75, 7, 29, 37, 26, 86, 79, 3, 40, 74, 56, 34, 78, 27, 72, 103, 73, 61,
                46, 69, 100, 76, 13, 15, 39, 98, 63, 65, 33, 64, 9, 52, 92, 85, 84, 102, 49, 51, 11, 66, 4, 17, 47, 55,
                32, 12, 81, 67, 60, 99, 10, 14, 104, 83, 16, 5, 35, 82, 41, 105, 53, 43, 95, 24, 20, 38, 59, 1, 101, 45]
MOTION_ACTIONS = [0, 1]
MOTION_OBS = [102, 88, 101, 4, 22, 97, 0, 65, 68, 73, 103, 52, 75, 38, 96, 23, 36, 69, 35, 43, 18, 30, 100, 24, 11, 15,
              20, 7, 13, 82, 90, 34, 28, 92, 80, 56, 63, 59, 9, 25, 51, 89, 93, 27, 1, 40, 70, 57, 50, 74, 31, 16, 42,
              60, 87, 58, 84, 29, 26, 41, 91, 79, 47, 78, 37, 19, 49, 46, 39, 77, 94, 8, 83, 64, 3, 76, 67, 85, 2, 44,
              5, 14, 10, 17, 99, 54, 62, 86, 66, 21, 32, 98, 95, 55, 53, 33, 48, 71, 12, 45, 81, 72, 61, 6]
PERMS = {"strategy": (STRATEGY_OBS, STRATEGY_ACTIONS), "motion": (MOTION_OBS, MOTION_ACTIONS)}
STRATEGY_OBS_HEAD = STRATEGY_OBS[:8]


def test_a_vector_steps_as_the_plain_one_permuted():
    plain = baton.vector.make("maze", num_envs=8, seed=3)
    scr = baton.vector.make("maze", num_envs=8, seed=3, scramble=7)
    try:
        assert scr.name == "maze-scrambled"
        for name, (obs, _) in PERMS.items():
            lo, hi = plain.observation_spaces[name].low.ravel(), plain.observation_spaces[name].high.ravel()
            np.testing.assert_array_equal(scr.observation_spaces[name].low.ravel(), lo[obs])
            np.testing.assert_array_equal(scr.observation_spaces[name].high.ravel(), hi[obs])
        gp, gs = plain.reset(), scr.reset()
        rng = np.random.default_rng(5)
        ended = 0
        for _ in range(300):
            acts_p, acts_s = {}, {}
            for name, (obs, actions) in PERMS.items():
                p, s = gp[name], gs[name]
                np.testing.assert_array_equal(s.copies, p.copies)
                np.testing.assert_array_equal(s.obs, p.obs[:, obs], err_msg=name)
                np.testing.assert_array_equal(s.masks, p.masks[:, actions], err_msg=name)
                a = np.array([rng.choice(np.flatnonzero(m)) for m in p.masks], np.int64)
                acts_p[name], acts_s[name] = a, np.argsort(actions)[a]
            gp, r, term, trunc, _ = plain.step(acts_p)
            gs, rs, terms, truncs, _ = scr.step(acts_s)
            np.testing.assert_array_equal(rs, r)
            np.testing.assert_array_equal(terms, term)
            np.testing.assert_array_equal(truncs, trunc)
            ended += int(term.sum() + trunc.sum())
        assert ended > 0
    finally:
        plain.close()
        scr.close()


def test_gymnasium_and_pettingzoo_take_scramble():
    env = gymnasium.make("baton/Maze-strategy-v0", scramble=7)
    plain = baton.make("maze", agent="strategy", policies={"motion": "random"})
    try:
        assert env.unwrapped.env_name == "maze-scrambled"
        s, info = env.reset(seed=4)
        o, pinfo = plain.reset(seed=4)
        np.testing.assert_array_equal(s[:8], o[STRATEGY_OBS_HEAD])
        np.testing.assert_array_equal(np.sort(s), np.sort(o))
        np.testing.assert_array_equal(info["action_mask"], pinfo["action_mask"][STRATEGY_ACTIONS])
    finally:
        env.close()
        plain.close()
    aec = baton.pettingzoo.env("maze", scramble=7)
    paec = baton.pettingzoo.env("maze")
    try:
        aec.reset(seed=4)
        paec.reset(seed=4)
        assert aec.agent_selection.startswith("strategy")
        np.testing.assert_array_equal(aec.observe(aec.agent_selection)[:8],
                                      paec.observe(paec.agent_selection)[STRATEGY_OBS_HEAD])
    finally:
        aec.close()
        paec.close()


def test_the_log_records_the_scrambled_environment_and_its_seed(tmp_path):
    v = baton.vector.make("cartpole", num_envs=2, seed=1, scramble=7, log=tmp_path / "log", policy="random")
    g = v.reset()
    for _ in range(5):
        g = v.step({"cartpole": np.zeros(len(g["cartpole"]), np.int64)})[0]
    v.close()
    part = next(Path(tmp_path / "log" / "agent=cartpole").glob("*.arrow"))
    with pa.memory_map(str(part)) as f:
        meta = pa.ipc.open_file(f).schema.metadata
    assert meta[b"baton.env"] == b"cartpole-scrambled"
    assert json.loads(meta[b"baton.env_config"]) == {"scramble": 7}
    with pa.memory_map(str(next(Path(tmp_path / "log" / "_trials").glob("*.arrow")))) as f:
        trial = pa.ipc.open_file(f).read_all().to_pylist()[0]
    assert trial["env"] == "cartpole-scrambled" and json.loads(trial["config"]) == {"scramble": 7}
    # The spaces it records are the scrambled ones: the cart-pole's bounds permuted
    # ([2, 1, 0, 3]: the pole's angle first).
    [spec] = json.loads(trial["agents"])
    assert spec["observation_space"]["high"][0] == pytest.approx(0.41887903)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"scramble": "7"}, TypeError, "scramble is '7'"),
    ({"scramble": True}, TypeError, "scramble is True"),
    ({"scramble": -1}, ConfigError, "scramble is -1"),
    ({"scramble": 7, "config": {"scramble": 1}}, ConfigError, "give the seed once"),
    ({"scramble": 7, "config": "[1]"}, ConfigError, "want a JSON object"),
])
def test_bad_scramble_arguments_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        baton.vector.make("cartpole", num_envs=1, **kwargs)


def test_a_scrambled_name_takes_no_second_seed():
    with pytest.raises(ConfigError, match="scrambled already"):
        baton.vector.make("cartpole-scrambled", num_envs=1, scramble=7)
    v = baton.vector.make("cartpole-scrambled", num_envs=1, config={"scramble": 7})
    v.close()
