"""baton.make and baton.make_vec: Gymnasium's checker, seeds, masks, the maze's
reference walk, Python policies, the vector against SyncVectorEnv."""

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import baton
from baton.gym import BatonEnv, BatonVectorEnv, PolicyError

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3

CHECKED = [
    ("cartpole", {}),
    ("maze", {"agent": "strategy", "invalid_action": "terminate"}),
    ("maze", {"agent": "motion", "invalid_action": "terminate"}),
    ("webtest", {"agent": "strategy", "invalid_action": "terminate"}),
]


@pytest.mark.parametrize("name,kw", CHECKED, ids=[f"{n}-{kw.get('agent', '')}" for n, kw in CHECKED])
def test_check_env(name, kw):
    env = baton.make(name, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the checker fails the test
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", ["baton/CartPole-v1", "baton/Maze-strategy-v0", "baton/Maze-motion-v0", "baton/Webtest-strategy-v0"])
def test_registered_ids(env_id):
    env = gym.make(env_id)
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    assert isinstance(env.unwrapped, BatonEnv)
    env.close()


def test_import_loads_no_go():
    code = "import baton, gymnasium; import baton.vector._native as n; assert 'baton/Maze-motion-v0' in gymnasium.registry; assert not n.loaded()"
    subprocess.run([sys.executable, "-c", code], check=True)


def _walk(env, seed, steps):
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, False, info.get("action_mask"))]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        mask = info.get("action_mask")
        a = rng.choice(np.flatnonzero(mask)) if mask is not None else rng.integers(env.action_space.n)
        obs, r, t, u, info = env.step(a)
        out.append((obs, r, t, u, info.get("action_mask")))
        if t or u:
            obs, info = env.reset()
    return out


@pytest.mark.parametrize("name,kw", [("cartpole", {}), ("maze", {"agent": "motion", "policies": {"strategy": "random"}}),
                                     ("maze", {"agent": "strategy", "policies": {"motion": "random"}})])
def test_seeds_determine_episodes(name, kw):
    a, b, c = baton.make(name, **kw), baton.make(name, **kw), baton.make(name, **kw)
    wa, wb = _walk(a, 5, 60), _walk(b, 5, 60)
    for x, y in zip(wa, wb):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:4] == y[1:4]
    wc = _walk(c, 6, 60)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(wa, wc))


def test_masks_match_the_maze():
    # The strategy's mask is the walkable directions, the last 4 floats of its observation.
    env = baton.make("maze", agent="strategy", policies={"motion": "random"})
    obs, info = env.reset(seed=1)
    np.testing.assert_array_equal(info["action_mask"], [True, False, False, True])
    for _ in range(40):
        np.testing.assert_array_equal(info["action_mask"], obs[-4:] > 0)
        obs, r, t, u, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if t or u:
            assert not info["action_mask"].any()
            obs, info = env.reset()


def test_masked_action_raises_or_terminates():
    env = baton.make("maze", agent="strategy")
    obs, info = env.reset(seed=0)
    with pytest.raises(baton.vector.ActionError, match="masked"):
        env.step(RIGHT)
    obs2, r, t, u, info = env.step(LEFT)  # nothing changed: the valid action goes on
    assert obs2[-6:-4].tolist() == [4, 8]
    env = baton.make("maze", agent="strategy", invalid_action="terminate", invalid_reward=-1)
    env.reset(seed=0)
    obs, r, t, u, info = env.step(DOWN)
    assert (r, t, u, info["invalid_action"]) == (-1.0, True, False, True)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(LEFT)


def test_maze_strategy_reaches_the_goal():
    # reference/maze.md: with motion walking forward, LEFT, DOWN, LEFT, UP, UP, LEFT, UP
    # visit (4,8), (6,8), (6,5), (4,5), (1,5), (1,4), (0,4), the goal.
    env = gym.make("baton/Maze-strategy-v0", policies={"motion": "forward"})
    obs, info = env.reset(seed=0)
    assert obs[-6:-4].tolist() == [4, 9]
    want = [(4, 8), (6, 8), (6, 5), (4, 5), (1, 5), (1, 4), (0, 4)]
    total = 0.0
    for k, (a, pos) in enumerate(zip([LEFT, DOWN, LEFT, UP, UP, LEFT, UP], want)):
        obs, r, t, u, info = env.step(a)
        assert tuple(obs[-6:-4].astype(int)) == pos
        assert info["span_ticks"] >= 2  # the decision, then the motion agent's moves
        total += r
        assert t == (k == 6) and not u
    assert total == 1.0 and r == 1.0


def test_python_policies_drive_the_others():
    calls = []

    def forward(obs, mask):
        calls.append(mask.copy())
        return 1

    env = baton.make("maze", agent="strategy", policies={"motion": forward})
    env.reset(seed=0)
    obs, r, t, u, info = env.step(LEFT)
    assert obs[-6:-4].tolist() == [4, 8] and len(calls) == 1 and calls[0].dtype == np.bool_

    def boom(obs, mask):
        raise KeyError("no move")

    env = baton.make("maze", agent="strategy", policies={"motion": boom})
    env.reset(seed=0)
    with pytest.raises(PolicyError) as e:
        env.step(LEFT)
    assert isinstance(e.value.__cause__, KeyError)


def test_bad_arguments():
    with pytest.raises(baton.vector.ConfigError, match="no agent"):
        baton.make("maze", agent="pilot")
    with pytest.raises(baton.vector.ConfigError, match="oracle"):
        baton.make("maze", agent="strategy", policies={"motion": "oracle"})
    with pytest.raises(baton.vector.ConfigError, match="single-agent"):
        baton.make("cartpole", policies={"x": "random"})
    with pytest.raises(ValueError, match="render_mode"):
        baton.make("cartpole", render_mode="human")


@pytest.mark.parametrize("name,kw", [("cartpole", {}), ("maze", {"agent": "motion", "policies": {"strategy": "random"}})])
def test_vector_matches_sync_vector(name, kw):
    n, seed = 4, 11
    ours = BatonVectorEnv(name, n, **kw)
    assert ours.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    ref = gym.vector.SyncVectorEnv([lambda: BatonEnv(name, **kw) for _ in range(n)],
                                   autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    o1, i1 = ours.reset(seed=seed)
    o2, i2 = ref.reset(seed=seed)
    np.testing.assert_array_equal(o1[0], o2[0])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        mask = i1.get("action_mask")
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask]) if mask is not None else rng.integers(0, 2, n)
        o1, r1, t1, u1, i1 = ours.step(acts)
        acts2 = acts.copy()  # the others' copies differ: valid actions of their own
        if mask is not None:
            acts2[1:] = [np.flatnonzero(m)[0] for m in i2["action_mask"][1:]]
        o2, r2, t2, u2, i2 = ref.step(acts2)
        # Copy 0 has the same seeds in both (copy i of ours EpisodeSeed(seed, i, k)):
        # the same episodes, auto-resets included.
        np.testing.assert_array_equal(o1[0], o2[0])
        assert (r1[0], t1[0], u1[0]) == (r2[0], t2[0], u2[0])
        if t1[0] or u1[0]:
            assert i1["_final_obs"][0] and i2["_final_obs"][0]
            np.testing.assert_array_equal(i1["final_obs"][0], i2["final_obs"][0])
            ended += 1
        assert o1.shape == o2.shape and o1.dtype == o2.dtype and r1.dtype == r2.dtype
        assert set(i1) >= {"final_obs", "_final_obs"}
    assert ended > 0
    ours.close()
    ref.close()


def test_vector_wrappers():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(baton.make_vec("cartpole", 8, workers=2))
    envs.reset(seed=0)
    episodes = 0
    for _ in range(300):
        obs, r, t, u, info = envs.step(envs.action_space.sample())
        if "episode" in info:
            episodes += int(info["_episode"].sum())
            assert (info["episode"]["r"][info["_episode"]] > 0).all()
    assert episodes > 0
    envs.close()


def test_make_vec_through_gymnasium():
    envs = gym.make_vec("baton/Maze-motion-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(envs, BatonVectorEnv) and envs.num_envs == 3
    obs, info = envs.reset(seed=1)
    assert obs.shape == (3, 104) and info["action_mask"].shape == (3, 2)
    envs.close()


def test_vector_python_policy_on_workers():
    # A Python callable drives the motion agent from Go's worker threads; the results
    # do not depend on the number of workers.
    def forward(obs, mask):
        return 1 if mask[1] else 0

    runs = []
    for workers in (1, 4):
        envs = baton.make_vec("maze", 16, agent="strategy", policies={"motion": forward}, workers=workers)
        obs, info = envs.reset(seed=1)
        rewards, spans = [], []
        for _ in range(100):
            acts = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
            obs, r, t, u, info = envs.step(acts)
            rewards.append(r.copy())
            spans.append(info["span_ticks"].copy())
        envs.close()
        assert all((s >= 1).all() for s in spans)
        runs.append((np.array(rewards), np.array(spans), obs.copy()))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
