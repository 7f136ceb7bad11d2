"""The fast lane, baton.vector: Go vectors stepped in this process into numpy arrays.

The library is built from the checkout's Go sources on first use (cached outside the
clone), so these tests need the Go toolchain: they carry the go marker.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import baton.vector as bv
from baton.vector import _native

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)
GOLDEN = os.path.join(REPO_ROOT, "internal", "fastlane", "testdata", "cartpole_trajectory.json")
CHILD_ENV = dict(os.environ)

pytestmark = pytest.mark.go


@pytest.fixture(scope="module", autouse=True)
def library():
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    return _native.build()


def run_child(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=CHILD_ENV, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


def random_valid(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One allowed action per row of masks, at random."""
    scores = rng.random(masks.shape) * masks
    return scores.argmax(axis=1).astype(np.int64)


# --- single-agent -------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 3])
def test_cartpole_matches_go_vector(workers):
    """The golden trajectory of env/vector's Env (internal/fastlane's Go test keeps it
    current): same seed and actions, bit for bit, with any number of workers."""
    with open(GOLDEN) as f:
        g = json.load(f)
    n = g["n"]
    with bv.make("cartpole", num_envs=n, seed=g["seed"], workers=workers, config=g["config"]) as v:
        obs, info = v.reset()
        assert info == {}
        np.testing.assert_array_equal(obs, np.array(g["reset"], np.float32).reshape(n, 4))
        ends = 0
        for k, actions in enumerate(g["actions"]):
            obs, rewards, term, trunc, info = v.step(np.array(actions, np.int64))
            np.testing.assert_array_equal(obs, np.array(g["obs"][k], np.float32).reshape(n, 4), err_msg=f"tick {k}")
            np.testing.assert_array_equal(rewards, np.array(g["rewards"][k]), err_msg=f"tick {k}")
            np.testing.assert_array_equal(term, np.array(g["terminated"][k]), err_msg=f"tick {k}")
            np.testing.assert_array_equal(trunc, np.array(g["truncated"][k]), err_msg=f"tick {k}")
            done = term | trunc
            np.testing.assert_array_equal(info["_final_obs"], done)
            final = np.array(g["final_obs"][k], np.float32).reshape(n, 4)
            np.testing.assert_array_equal(info["final_obs"][done], final[done], err_msg=f"tick {k}")
            ends += done.sum()
        assert ends > 0
        assert rewards.dtype == np.float64 and obs.dtype == np.float32 and term.dtype == np.bool_


def test_cartpole_matches_gymnasium_physics():
    """Started from the same state, the cart-pole moves as Gymnasium's CartPole-v1 does."""
    import gymnasium as gym
    n = 16
    rng = np.random.default_rng(0)
    with bv.make("cartpole", num_envs=n, seed=5) as v:
        obs, _ = v.reset()
        envs = []
        for i in range(n):
            e = gym.make("CartPole-v1").unwrapped
            e.reset(seed=0)
            e.state = obs[i].astype(np.float64)
            envs.append(e)
        live = np.ones(n, bool)
        steps = 0
        while live.any() and steps < 200:
            actions = rng.integers(0, 2, n)
            obs, rewards, term, trunc, info = v.step(actions)
            for i in np.flatnonzero(live):
                o, r, t, _, _ = envs[i].step(int(actions[i]))
                mine = info["final_obs"][i] if term[i] or trunc[i] else obs[i]
                np.testing.assert_allclose(mine, o, rtol=1e-4, atol=1e-5, err_msg=f"copy {i} step {steps}")
                assert rewards[i] == r
                assert term[i] == t, f"copy {i} step {steps}"
                if term[i] or trunc[i]:
                    live[i] = False
            steps += 1
        assert not live.all(), "some poles fell"


def test_buffers_are_the_vectors_and_read_only():
    with bv.make("cartpole", num_envs=8, seed=1) as v:
        obs, _ = v.reset()
        out = v.step(np.zeros(8, np.int64))
        assert out[0] is v.obs and out[1] is v.rewards and out[2] is v.terminated and out[3] is v.truncated
        assert out[4]["final_obs"] is v.final_obs
        for a in (v.obs, v.final_obs, v.rewards, v.terminated, v.truncated):
            assert not a.flags.writeable
        with pytest.raises(ValueError):
            v.obs[0, 0] = 1
        assert v.single_action_space == bv.describe("cartpole")[1][0].action_space
        assert v.single_action_space.n == 2 and v.single_observation_space.shape == (4,)


def test_reset_seeds():
    with bv.make("cartpole", num_envs=4, seed=11) as a, bv.make("cartpole", num_envs=4) as b:
        first = a.reset()[0].copy()
        np.testing.assert_array_equal(b.reset(seed=11)[0], first)
        second = a.reset()[0].copy()  # seed 12: make's seed plus one
        assert not np.array_equal(first, second)
        np.testing.assert_array_equal(b.reset(seed=12)[0], second)


@pytest.mark.parametrize("bad", [2, -1])
def test_bad_action_names_copy_and_changes_nothing(bad):
    with bv.make("cartpole", num_envs=5, seed=2) as v:
        v.reset()
        before = v.obs.copy()
        actions = np.array([0, 1, 0, bad, 1])
        with pytest.raises(bv.ActionError) as e:
            v.step(actions)
        assert isinstance(e.value, ValueError)
        assert e.value.failures == [bv.Failure(3, "cartpole", "action", "outside Discrete(2, start=0)")]
        assert "copy 3" in str(e.value) and "cartpole" in str(e.value)
        np.testing.assert_array_equal(v.obs, before)
        actions[3] = 1
        v.step(actions)  # the retry works
        assert not np.array_equal(v.obs, before)


def test_argument_errors():
    with pytest.raises(bv.ConfigError, match="nowhere"):
        bv.make("nowhere", num_envs=2)
    with pytest.raises(bv.ConfigError, match="max_steps"):
        bv.make("cartpole", num_envs=2, config={"max_steps": -1})
    with pytest.raises(bv.ConfigError, match="num_envs"):
        bv.make("cartpole", num_envs=0)
    with bv.make("cartpole", num_envs=3) as v:
        with pytest.raises(bv.StateError, match="not reset"):
            v.step(np.zeros(3, np.int64))
        v.reset()
        with pytest.raises(bv.ConfigError, match="shape"):
            v.step(np.zeros(4, np.int64))


def _counts():
    return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))


def test_close_releases_everything():
    lib = _native.load()
    warm = bv.make("cartpole", num_envs=64, workers=4)  # the Go runtime's threads start
    warm.reset()
    warm.step(np.zeros(64, np.int64))
    warm.close()
    live, goroutines = lib.baton_live(), lib.baton_goroutines()
    threads, fds = _counts()
    for k in range(20):
        v = bv.make("cartpole", num_envs=64, seed=k, workers=4)
        v.reset()
        for _ in range(5):
            v.step(np.ones(64, np.int64))
        v.close()
        v.close()  # twice is fine
        assert v.closed
        with pytest.raises(bv.StateError, match="closed"):
            v.step(np.ones(64, np.int64))
    m = bv.make("maze", num_envs=4, workers=2)
    m.reset()
    m.close()
    assert lib.baton_live() == live
    assert lib.baton_goroutines() == goroutines, "the workers stopped"
    after_threads, after_fds = _counts()
    assert after_fds == fds
    assert after_threads <= threads + 2, "the Go runtime keeps its threads; vectors add none"


def test_unclosed_vector_is_closed_when_collected():
    import gc

    lib = _native.load()
    live = lib.baton_live()
    v = bv.make("cartpole", num_envs=4, workers=2)
    assert lib.baton_live() == live + 1
    del v
    gc.collect()
    assert lib.baton_live() == live


# --- processes and signals ----------------------------------------------------


def test_import_loads_no_go():
    run_child(
        """
        import sys
        import baton, baton.vector
        assert not baton.vector._native.loaded()
        maps = open("/proc/self/maps").read()
        assert "libbaton" not in maps, "the Go library is loaded at import"
        """
    )


def test_fork_after_import():
    """A process forked after import baton makes and steps vectors; one forked after
    making a vector gets an error, not a hang."""
    r = run_child(
        """
        import multiprocessing as mp
        import numpy as np
        import baton
        import baton.vector as bv

        def child(q):
            with bv.make("cartpole", num_envs=16, seed=3, workers=2) as v:
                v.reset()
                total = 0.0
                for _ in range(50):
                    total += v.step(np.ones(16, np.int64))[1].sum()
            q.put(total)

        def child_after_load(q):
            try:
                bv.make("cartpole", num_envs=2)
                q.put("made")
            except RuntimeError as e:
                q.put("refused: " + str(e))

        if __name__ == "__main__":
            ctx = mp.get_context("fork")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            total = q.get(timeout=120)
            p.join(30)
            assert p.exitcode == 0 and total == 800.0, (p.exitcode, total)
            bv.make("cartpole", num_envs=2).close()  # the parent loads the library now
            p = ctx.Process(target=child_after_load, args=(q,))
            p.start()
            got = q.get(timeout=60)
            p.join(30)
            print(got)
            assert got.startswith("refused") and "fork" in got, got
        """
    )
    assert "refused" in r.stdout


def test_ctrl_c_interrupts_a_step_loop():
    """SIGINT during a long loop of steps raises KeyboardInterrupt promptly (between two
    steps: each step is one short C call)."""
    code = textwrap.dedent(
        """
        import sys, time
        import numpy as np
        import baton.vector as bv
        v = bv.make("cartpole", num_envs=1024, seed=1, workers=2)
        v.reset()
        a = np.zeros(1024, np.int64)
        try:
            v.step(a)
            print("ready", flush=True)
            while True:
                v.step(a)
        except KeyboardInterrupt:
            print("interrupted", time.monotonic(), flush=True)
            v.close()
            sys.exit(0)
        """
    )
    import time

    p = subprocess.Popen([sys.executable, "-c", code], env=CHILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
    finally:
        p.kill()
    assert p.returncode == 0, err
    words = out.split()
    assert words[0] == "interrupted", out
    assert float(words[1]) - sent < 1.0, "delivered within a second"


# --- hierarchical ---------------------------------------------------------------


def maze_run(workers: int, ticks: int, seed: int = 4, n: int = 16):
    """Steps a maze vector with seeded random allowed actions; returns what it saw."""
    rng = np.random.default_rng(seed)
    trace = []
    with bv.make("maze", num_envs=n, seed=seed, workers=workers) as v:
        assert isinstance(v, bv.MultiVector)
        assert v.agent_names == ["strategy", "motion"]
        groups = v.reset()
        for _ in range(ticks):
            seen = np.zeros(n, int)
            for j, name in enumerate(v.agent_names):
                g = groups[name]
                assert g.agent == name and g.index == j
                assert np.all(np.diff(g.copies) > 0), "copies ascend"
                assert np.all(v.acting[g.copies] == j)
                seen[g.copies] += 1
                assert g.obs.shape == (len(g), v.agents[j].obs_dim)
                assert g.masks.shape == (len(g), v.agents[j].mask_len)
                assert not g.obs.flags.writeable
            assert np.all(seen == 1), "every copy acts in one group"
            actions = {name: random_valid(rng, g.masks) for name, g in groups.items() if len(g)}
            groups, rewards, term, trunc, ended = v.step(actions)
            assert np.all(v.spans[rewards != 0] >= 1), "a reward comes with its span"
            trace.append((v.acting.copy(), rewards.copy(), term.copy(), trunc.copy(), ended.copy(), v.spans.copy(),
                          {k: (g.copies.copy(), g.obs.copy()) for k, g in groups.items()}))
    return trace


def test_maze_groups_and_determinism():
    one = maze_run(workers=1, ticks=150)
    two = maze_run(workers=2, ticks=150)
    ended = sum(t[4].sum() for t in one)
    rewarded = sum((t[1] != 0).sum() for t in one)
    assert ended > 0 and rewarded > 0
    assert any((t[5] > 1).any() for t in one), "a strategy decision spans its motion sub-episode"
    for k, (a, b) in enumerate(zip(one, two)):
        for x, y in zip(a[:6], b[:6]):
            np.testing.assert_array_equal(x, y, err_msg=f"tick {k}")
        for name in a[6]:
            np.testing.assert_array_equal(a[6][name][0], b[6][name][0])
            np.testing.assert_array_equal(a[6][name][1], b[6][name][1])


def test_maze_actions_in_groups_and_errors():
    with bv.make("maze", num_envs=4, seed=2) as v:
        groups = v.reset()
        name, g = next((k, g) for k, g in groups.items() if len(g))
        masked = int(np.flatnonzero(~g.masks[0])[0])
        before = g.obs.copy()
        g.actions[:] = random_valid(np.random.default_rng(0), g.masks)
        g.actions[0] = masked
        with pytest.raises(bv.ActionError, match="masked") as e:
            v.step()
        assert e.value.failures[0].copy == int(g.copies[0]) and e.value.failures[0].agent == name
        np.testing.assert_array_equal(g.obs, before)
        g.actions[0] = int(np.flatnonzero(g.masks[0])[0])
        v.step()  # the corrected actions step
        with pytest.raises(bv.ConfigError, match="no agent"):
            v.step({"nobody": np.zeros(1, np.int64)})
        name, g = next((k, g) for k, g in v.groups.items() if len(g))
        with pytest.raises(TypeError):
            v.step({name: np.full(len(g), 0.5)})
    with bv.make("maze", num_envs=2) as v:
        with pytest.raises(bv.StateError, match="not reset"):
            v.step({"strategy": np.zeros(2, np.int64)})


def test_to_gymnasium_vector_env():
    import gymnasium as gym
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    v = bv.make("cartpole", num_envs=8, seed=3, config={"max_steps": 20})
    env = RecordEpisodeStatistics(v.to_gymnasium())
    assert isinstance(env.unwrapped, gym.vector.VectorEnv)
    assert env.unwrapped.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    assert env.observation_space.shape == (8, 4) and env.single_action_space.n == 2
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    episodes = 0
    for _ in range(40):
        obs, rewards, term, trunc, info = env.step(env.action_space.sample())
        if "episode" in info:
            episodes += int(info["_episode"].sum())
            assert np.all(info["episode"]["r"][info["_episode"]] == info["episode"]["l"][info["_episode"]])
    assert episodes >= 8, "every copy ended an episode within 40 steps of a 20-step limit"
    env.close()
    assert v.closed


def test_to_gymnasium_is_baton_gyms():
    import baton.gym

    with bv.make("cartpole", num_envs=2, seed=1) as v:
        env = baton.gym.to_gymnasium(v)
        assert isinstance(env, baton.gym.BatonVectorEnv) and env.vector is v
        assert type(v.to_gymnasium()) is type(env)
