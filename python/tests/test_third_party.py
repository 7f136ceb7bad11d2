"""baton's adapters under third-party tools nobody here wrote, as users run them:
Stable-Baselines3 (make_vec_env on a baton id, check_env, a short PPO), Gymnasium's
RecordVideo and checkers, PettingZoo's performance_benchmark, SuperSuit's vector
environments, pickle and copy. Their versions are pinned in python/uv.lock."""

import copy
import json
import os
import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest

import baton
import baton.pettingzoo
import baton.vector
from baton.gym import BatonEnv, BatonVectorEnv, RenderError

MAZE_STRATEGY = {"agent": "strategy", "policies": {"motion": "forward"}}


def _shipped() -> list[str]:
    """The environments of baton's own library, as it lists them."""
    code, out, err = baton.vector._native.envs()
    assert code == 0, err
    return [e["name"] for e in json.loads(out)["envs"] if not e.get("error")]


# --- Stable-Baselines3 -------------------------------------------------------------


def test_sb3_make_vec_env_and_ppo():
    """SB3's make_vec_env asks for render_mode="rgb_array" with a string id; PPO
    trains on it, and the vector draws its copies."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    envs = make_vec_env("baton/CartPole-v1", n_envs=2, seed=0)
    assert envs.get_attr("render_mode") == ["rgb_array", "rgb_array"]
    model = PPO("MlpPolicy", envs, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    frames = envs.get_images()
    assert [f.shape for f in frames] == [(400, 600, 3), (400, 600, 3)]
    envs.close()


def test_sb3_check_env_on_the_maze():
    """SB3's and Gymnasium's checkers sample actions without masks: the maze's
    strategy agent ends its episode on a masked action with invalid_action="terminate"."""
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = baton.make("maze", **MAZE_STRATEGY)
    env.reset(seed=0)
    with pytest.raises(baton.vector.ActionError):
        env.step(int(np.flatnonzero(~env.action_masks())[0]))
    for agent, policies in [("strategy", {"motion": "forward"}), ("motion", {"strategy": "random"})]:
        sb3_check_env(baton.make("maze", agent=agent, policies=policies, invalid_action="terminate",
                                 render_mode="rgb_array"), skip_render_check=False)
        gym_check_env(baton.make("maze", agent=agent, policies=policies, invalid_action="terminate",
                                                   render_mode="rgb_array").unwrapped)


# --- Rendering ------------------------------------------------------------------------


def test_render_rgb_array():
    env = baton.make("cartpole", render_mode="rgb_array")
    with pytest.raises(gym.error.ResetNeeded):
        env.render()
    env.reset(seed=0)
    first = env.render()
    assert first.shape == (400, 600, 3) and first.dtype == np.uint8
    assert (first[285, 285] == 0).all(), "the black cart on its track, as Gymnasium draws it"
    assert (first[50, 50] == 255).all()
    done, steps = False, 0
    while not done:
        _, _, t, u, _ = env.step(1)
        done, steps = t or u, steps + 1
    last = env.render()
    # The episode's last state, not the next episode's first (the copy was reset):
    # the pole has fallen to the right, far from upright.
    assert not np.array_equal(last, first)
    env.reset()
    assert not np.array_equal(env.render(), last)

    maze = baton.make("maze", render_mode="rgb_array", **MAZE_STRATEGY)
    maze.reset(seed=0)
    frame = maze.render()
    assert frame.shape == (240, 240, 3)
    colours = {tuple(c) for c in frame.reshape(-1, 3)[::7]}
    assert {(0x33, 0x33, 0x33), (255, 255, 255), (0x74, 0xC4, 0x76), (0xDE, 0x2D, 0x26)} <= colours

    quiet = baton.make("cartpole")
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render mode"):
        assert quiet.render() is None


def test_render_vectors_and_pettingzoo():
    envs = baton.make_vec("cartpole", 3, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 3 and all(f.shape == (400, 600, 3) for f in frames)
    assert not np.array_equal(frames[0], frames[1]), "each copy its own state"
    envs.close()
    # The scrambled variants draw no pictures (package scramble): their slots have no
    # meaning to show.
    for name in [n for n in _shipped() if not n.endswith("-scrambled")]:
        e = baton.pettingzoo.env(name, render_mode="rgb_array")
        e.reset(seed=1)
        f = e.render()
        assert f.ndim == 3 and f.shape[2] == 3 and f.dtype == np.uint8, name
        assert (f < 200).any(), f"{name} draws something"
        e.close()


def test_record_video(tmp_path):
    """Gymnasium's RecordVideo records baton's frames (with moviepy)."""
    env = gym.wrappers.RecordVideo(baton.make("cartpole", render_mode="rgb_array"), str(tmp_path),
                                   episode_trigger=lambda k: True, disable_logger=True)
    for seed in (0, 1):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, t, u, _ = env.step(env.action_space.sample())
            done = t or u
    env.close()
    videos = sorted(p for p in os.listdir(tmp_path) if p.endswith(".mp4"))
    assert len(videos) == 2
    assert all(os.path.getsize(tmp_path / v) > 1000 for v in videos)


def test_render_human(monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(RenderError, match="no display.*rgb_array"):
        baton.make("cartpole", render_mode="human")
    with pytest.raises(RenderError, match="no display"):
        baton.pettingzoo.env("rps", render_mode="human")
    # SDL's dummy video driver stands for a display: the window opens and shows.
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = baton.make("cartpole", render_mode="human")
    env.metadata = dict(env.metadata, render_fps=1000)
    env._window.fps = 1000
    assert env.reset(seed=0)[0].shape == (4,)
    assert env.step(0)[0].shape == (4,)
    assert env.render() is None
    import pygame

    assert pygame.display.get_surface().get_size() == (600, 400)
    env.close()


# --- Pickling -------------------------------------------------------------------------


def test_pickle_and_copy(tmp_path):
    lib = str(baton.build())
    env = baton.make("maze", library=lib, render_mode="rgb_array", invalid_action="terminate", **MAZE_STRATEGY)
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    for other in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env), cloudpickle.loads(cloudpickle.dumps(env))):
        assert isinstance(other, BatonEnv) and other is not env
        assert (other.env_name, other.agent, other.invalid_action, other.render_mode) == ("maze", "strategy", "terminate",
                                                                                          "rgb_array")
        assert other.observation_space == env.observation_space
        a, _ = other.reset(seed=3)
        b, _ = baton.make("maze", **MAZE_STRATEGY).reset(seed=3)
        np.testing.assert_array_equal(a, b)
        assert other._v.library == lib
        other.close()
    envs = baton.make_vec("cartpole", 3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, library=lib)
    envs.reset(seed=0)
    again = pickle.loads(pickle.dumps(envs))
    assert isinstance(again, BatonVectorEnv) and again.num_envs == 3
    assert again.autoreset_mode == gym.vector.AutoresetMode.SAME_STEP and again.vector.library == lib
    np.testing.assert_array_equal(again.reset(seed=0)[0], envs.reset(seed=0)[0])
    for make in (baton.pettingzoo.env, baton.pettingzoo.parallel_env):
        e = make("rps", config={"max_cycles": 4}, library=lib, invalid_action="terminate")
        e.reset(seed=0)
        for f in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
            assert type(f) is type(e) and f.invalid_action == "terminate" and f._t.library == lib
            f.reset(seed=0)
    maze = baton.pettingzoo.env("maze")
    maze.reset(seed=0)
    assert copy.deepcopy(maze).possible_agents == ["strategy", "motion"]


@pytest.mark.parametrize("name", ["rps", "maze"])
def test_supersuit_vector_envs(name):
    """SuperSuit's pettingzoo_env_to_vec_env_v1 and concat_vec_envs_v1 (which pickles
    the environment for each copy) over baton's parallel environments; the maze's
    agents see and act in spaces of different sizes, which SuperSuit pads."""
    import supersuit as ss

    par = baton.pettingzoo.parallel_env(name, invalid_action="terminate")
    if name == "maze":
        par = ss.pad_action_space_v0(ss.pad_observations_v0(par))
    envs = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(par), 3, num_cpus=0, base_class="gymnasium")
    n = envs.num_envs
    assert n == 3 * len(par.possible_agents)
    obs, _ = envs.reset(seed=0)
    ends = 0
    for _ in range(40):
        obs, rewards, term, trunc, _ = envs.step(np.array([envs.action_space.sample() for _ in range(n)]))
        ends += int((term | trunc).sum())
    assert obs.shape == (n, *par.observation_space(par.possible_agents[0]).shape)
    assert ends > 0
    envs.close()


# --- PettingZoo's benchmark -------------------------------------------------------------


class _Clock:
    """A clock for performance_benchmark that runs out after ``ticks`` readings, so
    that the benchmark's loop (5 s of wall time) runs a bounded number of cycles."""

    def __init__(self, ticks: int):
        self.t, self.step = 0.0, 5.0 / ticks

    def time(self) -> float:
        self.t += self.step
        return self.t


@pytest.mark.parametrize("name", _shipped())
def test_performance_benchmark(name, monkeypatch):
    """PettingZoo's performance_benchmark samples actions without masks: with
    invalid_action="terminate" every shipped environment runs it; with "raise" the
    masked ones refuse."""
    import importlib

    # The module (pettingzoo.test exports its function under the module's name).
    pb = importlib.import_module("pettingzoo.test.performance_benchmark")
    monkeypatch.setattr(pb, "time", _Clock(300))
    env = baton.pettingzoo.env(name, invalid_action="terminate", invalid_reward=-1.0)
    pb.performance_benchmark(env)
    env.close()


def test_aec_invalid_action():
    env = baton.pettingzoo.env("maze", invalid_action="terminate", invalid_reward=-2.0)
    env.reset(seed=0)
    agent = env.agent_selection
    masked = int(np.flatnonzero(env.infos[agent]["action_mask"] == 0)[0])
    env.step(masked)
    assert env.terminations[agent] and env._cumulative_rewards[agent] == -2.0
    assert env.infos[agent]["invalid_action"]
    assert all(env.truncations[a] for a in env.agents if a != agent)
    for a in env.agent_iter():
        env.step(None)
    assert env.agents == []
    env.reset(seed=0)
    with pytest.raises(baton.vector.ActionError):
        strict = baton.pettingzoo.env("maze")
        strict.reset(seed=0)
        strict.step(masked)
