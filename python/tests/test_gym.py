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
        baton.make("cartpole", render_mode="video")
    with pytest.raises(ValueError, match="autoreset_mode"):
        baton.make_vec("cartpole", 2, autoreset_mode="later")
    with pytest.raises(ValueError, match="invalid_action"):
        baton.make_vec("cartpole", 2, invalid_action="ignore")


# Copy i of a vector reset with seed s plays the episodes of a one-copy vector reset
# with s + i·γ (env/vector's EpisodeSeed: DeriveSeed(s, i+1) = mix(s + (i+1)·γ)), so
# Gymnasium's own vector of BatonEnvs seeded so replays ours copy for copy.
_GAMMA = 0x9E3779B97F4A7C15
_VIEWS = [
    ("cartpole", {}),
    ("maze", {"agent": "strategy", "policies": {"motion": "forward"}}),
    ("maze", {"agent": "motion", "policies": {"strategy": "random"}}),
]


def _same_infos(i1: dict, i2: dict, where: str) -> None:
    assert set(i1) == set(i2), where
    for k, want in i2.items():
        if k == "final_obs":
            d = i2["_final_obs"]
            np.testing.assert_array_equal(i1[k][d], np.stack(want[d]), err_msg=where)
        elif k == "final_info":
            _same_infos(i1[k], want, where + " final_info")
        else:
            np.testing.assert_array_equal(i1[k], want, err_msg=f"{where}: {k}")


@pytest.mark.parametrize("mode", list(gym.vector.AutoresetMode))
@pytest.mark.parametrize("name,kw", _VIEWS)
@pytest.mark.parametrize("invalid", [False, True])
def test_vector_matches_gymnasium_step_by_step(name, kw, mode, invalid):
    """Each auto-reset mode gives what Gymnasium's SyncVectorEnv of the same mode gives
    over BatonEnvs, step by step: observations, rewards, ends and infos (final_obs and
    final_info in SAME_STEP), DISABLED's reset_mask, and invalid_action="terminate"."""
    if invalid and name == "cartpole":
        pytest.skip("every cart-pole action is valid")
    n, seed = 4, 11
    opts = {"invalid_action": "terminate", "invalid_reward": -1.0} if invalid else {}
    ours = baton.make_vec(name, n, autoreset_mode=mode, **kw, **opts)
    assert ours.metadata["autoreset_mode"] == mode
    ref = gym.vector.SyncVectorEnv([lambda: BatonEnv(name, **kw, **opts) for _ in range(n)], autoreset_mode=mode)
    o1, i1 = ours.reset(seed=seed)
    o2, i2 = ref.reset(seed=[(seed + i * _GAMMA) % 2**64 for i in range(n)])
    np.testing.assert_array_equal(o1, o2)
    _same_infos(i1, i2, "reset")
    rng = np.random.default_rng(0)
    ended = refused = 0
    for t in range(150):
        mask = i2.get("action_mask")
        if mask is None or invalid:
            acts = rng.integers(0, ours.single_action_space.n, n)
        else:
            acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        r1, r2 = ours.step(acts), ref.step(acts)
        for k, (x, y) in enumerate(zip(r1[:4], r2[:4])):
            np.testing.assert_array_equal(x, y, err_msg=f"step {t}, result {k}")
            assert x.dtype == y.dtype
        i1, i2 = r1[4], r2[4]
        _same_infos(i1, i2, f"step {t}")
        done = r1[2] | r1[3]
        ended += int(done.sum())
        refused += int((r1[1] == -1).sum())
        if mode == gym.vector.AutoresetMode.DISABLED and done.any():
            o1, i1 = ours.reset(options={"reset_mask": done})
            o2, i2 = ref.reset(options={"reset_mask": done})
            np.testing.assert_array_equal(o1, o2)
            _same_infos(i1, i2, f"reset_mask at {t}")
    assert ended > 0
    assert refused > 0 or not invalid
    ours.close()
    ref.close()


def test_disabled_asks_for_resets():
    envs = baton.make_vec("cartpole", 2, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    envs.reset(seed=0)
    for _ in range(500):
        _, _, t, u, _ = envs.step(np.ones(2, np.int64))
        if (t | u).any():
            break
    with pytest.raises(gym.error.ResetNeeded, match="reset_mask"):
        envs.step(np.ones(2, np.int64))
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=3, options={"reset_mask": t | u})
    # A copy still in its episode can be reset alone too: it starts its next one.
    obs, _ = envs.reset(options={"reset_mask": np.ones(2, np.bool_)})
    assert (np.abs(obs) < 0.05).all()
    envs.step(np.ones(2, np.int64))


def test_results_are_the_callers():
    """Gymnasium's vector wrappers write into what a step returns (ClipReward's
    np.clip(..., out=)); the fast lane's own vector keeps its read-only views."""
    envs = gym.wrappers.vector.ClipReward(baton.make_vec("cartpole", 2), -0.5, 0.5)
    obs, info = envs.reset(seed=0)
    assert obs.flags.writeable
    obs2, r, t, u, info = envs.step(np.zeros(2, np.int64))
    assert (r == 0.5).all() and obs2.flags.writeable and t.flags.writeable
    obs2[:] = 7  # the caller's: the next step does not see it, nor overwrite it
    obs3, *_ = envs.step(np.zeros(2, np.int64))
    assert (obs2 == 7).all() and not (obs3 == 7).any()
    envs.close()
    v = baton.vector.make("cartpole", num_envs=2)
    o, _ = v.reset(0)
    assert not o.flags.writeable
    o2, r, *_ = v.step(np.zeros(2, np.int64))
    assert o2 is o and not r.flags.writeable
    # Its Gymnasium view resets in the same step, as the vector does; the other modes
    # need holds, which baton.make_vec's vectors have.
    with pytest.raises(ValueError, match="make_vec"):
        BatonVectorEnv.from_vector(v, gym.vector.AutoresetMode.NEXT_STEP)
    view = v.to_gymnasium()
    assert view.autoreset_mode == gym.vector.AutoresetMode.SAME_STEP
    obs, *_ = view.step(np.zeros(2, np.int64))
    assert obs.flags.writeable
    view.close()


@pytest.mark.parametrize("wrapper", ["NormalizeObservation", "TransformObservation", "NormalizeReward",
                                     "RecordEpisodeStatistics", "ClipReward"])
def test_gymnasium_vector_wrappers_take_the_default_mode(wrapper):
    w = getattr(gym.wrappers.vector, wrapper)
    args = {"TransformObservation": (lambda o: 2 * o,), "ClipReward": (-1, 1)}.get(wrapper, ())
    envs = w(baton.make_vec("cartpole", 4), *args)
    envs.reset(seed=0)
    for _ in range(60):
        obs, r, t, u, info = envs.step(envs.action_space.sample())
    assert obs.shape == (4, 4)
    envs.close()


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
        envs = baton.make_vec("maze", 16, agent="strategy", policies={"motion": forward}, workers=workers,
                              autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
        obs, info = envs.reset(seed=1)
        rewards, spans = [], []
        for _ in range(100):
            acts = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
            obs, r, t, u, info = envs.step(acts)
            rewards.append(r.copy())
            # An ended copy's span is its last step's, in final_info (its info is its
            # next episode's first).
            span = info["span_ticks"].copy()
            if "final_info" in info:
                span[info["_final_info"]] = info["final_info"]["span_ticks"][info["_final_info"]]
            spans.append(span)
        envs.close()
        assert all((s >= 1).all() for s in spans)
        runs.append((np.array(rewards), np.array(spans), obs.copy()))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
