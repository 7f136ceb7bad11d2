"""The fast lane's asynchronous mode: baton.vector.make(..., batch_size=B), send/recv."""

import os
import shutil
import numpy as np
import pytest

import baton.vector as bv
from baton.vector import _native

pytestmark = pytest.mark.go

CONFIG = {"max_steps": 15}


@pytest.fixture(scope="module", autouse=True)
def library():
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    return _native.build()


def act(i: int, s: int) -> int:
    """The action of copy i at its step s, whoever steps it when."""
    return int(np.random.default_rng([i, s]).integers(2))


@pytest.mark.parametrize("n,batch,workers", [(8, 8, 1), (16, 4, 3), (12, 1, 4)])
def test_copies_follow_the_synchronous_trajectories(n, batch, workers):
    got: list[list[tuple]] = [[] for _ in range(n)]
    with bv.make("cartpole", num_envs=n, batch_size=batch, workers=workers, seed=5, config=CONFIG) as v:
        assert isinstance(v, bv.AsyncVector)
        assert (v.num_envs, v.batch_size) == (n, batch)
        obs, info = v.reset()
        rewards, term, trunc = np.zeros(batch), np.zeros(batch, bool), np.zeros(batch, bool)
        for _ in range(25 * n // batch):
            ids = info["env_id"]
            assert obs.shape == (batch, 4) and ids.shape == (batch,)
            for r, i in enumerate(ids):
                got[i].append((obs[r].copy(), rewards[r], term[r], trunc[r], info["final_obs"][r].copy()))
            actions = [act(int(i), len(got[i]) - 1) for i in ids]
            obs, rewards, term, trunc, info = v.step(np.array(actions), ids)
    ended = 0
    with bv.make("cartpole", num_envs=n, seed=5, config=CONFIG) as s:
        obs, _ = s.reset()
        rewards, term, trunc, final = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool), np.zeros((n, 4))
        for step in range(max(len(g) for g in got)):
            for i in range(n):
                if step < len(got[i]):
                    o, r, te, tr, f = got[i][step]
                    np.testing.assert_array_equal(o, obs[i], err_msg=f"copy {i} step {step}")
                    assert (r, te, tr) == (rewards[i], term[i], trunc[i]), f"copy {i} step {step}"
                    if te or tr:
                        ended += 1
                        np.testing.assert_array_equal(f, final[i])
            obs, rewards, term, trunc, info = s.step(np.array([act(i, step) for i in range(n)]))
            final = info["final_obs"].copy()
    assert ended > 0


def test_bad_sends_name_the_copy_and_change_nothing():
    with bv.make("cartpole", num_envs=4, batch_size=2, workers=2, seed=1) as v:
        with pytest.raises(bv.StateError, match="not reset"):
            v.send([0], [0])
        obs, info = v.reset()
        ids = info["env_id"].copy()
        busy = next(i for i in range(4) if i not in ids)
        with pytest.raises(bv.ActionError, match=f"copy {ids[1]}.*agent cartpole") as e:
            v.send([0, 7], ids)
        assert e.value.failures[0].copy == ids[1] and e.value.failures[0].agent == "cartpole"
        with pytest.raises(bv.StateError, match=f"copy {busy}.*still stepping"):
            v.send([0], [busy])
        with pytest.raises(bv.ConfigError, match="given twice"):
            v.send([0, 0], [ids[0], ids[0]])
        with pytest.raises(bv.ConfigError, match="copy 9 of 4"):
            v.send([0], [9])
        with pytest.raises(TypeError):
            v.send([0.5, 1.0], ids)
        v.send([1, 0])  # the last batch's copies, which nothing above queued
        v.recv()
        v.recv()
        with pytest.raises(bv.StateError, match="a batch of 2"):
            v.recv()  # nothing is stepping
    with pytest.raises(bv.ConfigError, match="batch_size"):
        bv.make("cartpole", num_envs=4, batch_size=5)


def test_recv_returns_in_the_order_copies_finish():
    with bv.make("cartpole", num_envs=4, batch_size=2, workers=1, seed=1) as v:
        _, info = v.reset()
        first = info["env_id"].copy()
        _, _, _, _, info = v.recv(timeout=5)  # the other two resets
        assert sorted([*first, *info["env_id"]]) == [0, 1, 2, 3]
        v.send([0, 0], first)
        _, _, _, _, info = v.recv(timeout=5)
        assert sorted(info["env_id"]) == sorted(first)


def allowed(i: int, s: int, mask) -> int:
    """An action of copy i at its step s among those its mask allows."""
    ok = np.flatnonzero(mask)
    return int(ok[np.random.default_rng([i, s]).integers(len(ok))])


@pytest.mark.parametrize("n,batch,workers", [(6, 6, 1), (10, 3, 3)])
def test_hierarchical_copies_follow_the_synchronous_trajectories(n, batch, workers):
    got: list[list[tuple]] = [[] for _ in range(n)]
    with bv.make("maze", num_envs=n, batch_size=batch, workers=workers, seed=3) as v:
        assert isinstance(v, bv.AsyncMultiVector)
        groups = v.reset()
        for _ in range(60 * n // batch):
            for r, i in enumerate(v.env_id):
                j = int(v.acting[r])
                g = groups[v.agent_names[j]]
                k = int(np.flatnonzero(g.copies == i)[0])
                got[i].append((j, g.obs[k].copy(), g.masks[k].copy(), v.rewards[r].copy(), v.spans[r].copy(), v.ended[r]))
            for g in groups.values():
                for k, i in enumerate(g.copies):
                    g.actions[k] = allowed(int(i), len(got[i]) - 1, g.masks[k])
            groups, *_ = v.step()
    ended = 0
    with bv.make("maze", num_envs=n, seed=3) as m:
        groups = m.reset()
        rewards, spans, done = np.zeros((n, 2)), np.zeros((n, 2), np.int64), np.zeros(n, bool)
        for step in range(max(len(g) for g in got)):
            for g in groups.values():
                for k, i in enumerate(g.copies):
                    if step < len(got[i]):
                        j, obs, mask, r, sp, e = got[i][step]
                        assert j == g.index, f"copy {i} step {step}"
                        np.testing.assert_array_equal(obs, g.obs[k])
                        np.testing.assert_array_equal(mask, g.masks[k])
                        np.testing.assert_array_equal(r, rewards[i])
                        np.testing.assert_array_equal(sp, spans[i])
                        assert e == done[i]
                        ended += e
                    g.actions[k] = allowed(int(i), step, g.masks[k])
            groups, rewards, _, _, done = m.step()
            rewards, spans, done = rewards.copy(), m.spans.copy(), done.copy()
    assert ended > 0


def test_hierarchical_sends_by_name_and_check_masks():
    with bv.make("maze", num_envs=4, batch_size=4, seed=1) as v:
        groups = v.reset()
        name, g = next((n, g) for n, g in groups.items() if len(g))
        masked = int(np.flatnonzero(~g.masks[0])[0])
        acts = {n: np.array([allowed(int(i), 0, x.masks[k]) for k, i in enumerate(x.copies)], np.int64) for n, x in groups.items()}
        acts[name][0] = masked
        with pytest.raises(bv.ActionError, match=f"copy {g.copies[0]}.*agent {name}.*masked"):
            v.send(acts)
        with pytest.raises(bv.ConfigError, match="no agent 'ghost'"):
            v.send({"ghost": []})
        acts[name][0] = allowed(int(g.copies[0]), 0, g.masks[0])
        v.send(acts)
        groups, rewards, terminated, truncated, ended = v.recv(timeout=10)
        assert sum(len(x) for x in groups.values()) == 4
        assert rewards.shape == (4, 2) and not rewards.flags.writeable


def _counts():
    return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))


def test_close_stops_the_workers():
    lib = _native.load()
    warm = bv.make("cartpole", num_envs=64, batch_size=16, workers=4)
    warm.reset()
    warm.close()
    live, goroutines = lib.baton_live(), lib.baton_goroutines()
    threads, fds = _counts()
    for k in range(10):
        v = bv.make("cartpole", num_envs=64, batch_size=16, seed=k, workers=4)
        v.reset()
        for _ in range(5):
            v.step(np.ones(16, np.int64))
        v.send(np.ones(16, np.int64))  # left stepping
        v.close()
        v.close()
        with pytest.raises(bv.StateError, match="closed"):
            v.recv()
    m = bv.make("maze", num_envs=8, batch_size=2, workers=3)
    for g in m.reset().values():
        g.actions[:] = [allowed(0, 0, mask) for mask in g.masks]
    m.step()  # the others still step
    m.close()
    assert lib.baton_live() == live
    assert lib.baton_goroutines() == goroutines, "the workers stopped"
    after_threads, after_fds = _counts()
    assert after_fds == fds
    assert after_threads <= threads + 2
