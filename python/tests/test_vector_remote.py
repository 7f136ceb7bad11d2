"""baton.vector.make(..., address=...): copies served by a real `baton serve env` on
127.0.0.1, with the in-process vector's API and arrays."""

import numpy as np
import pytest

import baton.vector as bv
from baton import remote as R
from baton.vector import _native
from test_remote_go import baton_bin, serve  # noqa: F401  (fixtures)

pytestmark = pytest.mark.go

KEY = "cartpole-key-0123456789abc"
CONFIG = {"max_steps": 20}


@pytest.fixture
def address(serve):  # noqa: F811
    return "grpc://" + serve("env", "--addr", "127.0.0.1:0").addr


def test_trajectories_equal_the_in_process_vector(address):
    _native.build()
    n = 64
    rng = np.random.default_rng(3)
    with bv.make("cartpole", num_envs=n, address=address, seed=7, workers=2, config=CONFIG) as r, bv.make(
        "cartpole", num_envs=n, seed=7, config=CONFIG
    ) as v:
        assert isinstance(r, bv.RemoteVector)
        assert r.single_observation_space == v.single_observation_space
        assert r.single_action_space == v.single_action_space
        ro, _ = r.reset()
        vo, _ = v.reset()
        np.testing.assert_array_equal(ro, vo)
        ended = 0
        for tick in range(80):
            a = rng.integers(0, 2, n)
            got, want = r.step(a), v.step(a)
            for g, w in zip(got[:4], want[:4]):
                np.testing.assert_array_equal(g, w, err_msg=f"tick {tick}")
            done = want[4]["_final_obs"]
            np.testing.assert_array_equal(got[4]["_final_obs"], done)
            np.testing.assert_array_equal(got[4]["final_obs"][done], want[4]["final_obs"][done])
            ended += int(done.sum())
        assert ended > 0
        assert not r.obs.flags.writeable
        g = r.to_gymnasium()  # Gymnasium's view, as of the in-process vector
        np.testing.assert_array_equal(g.reset(seed=7)[0], v.reset(seed=7)[0])
        g.close()
        assert r.closed


def _fill(groups, agents, rng):
    """Random valid actions into each group's actions: among those its masks allow."""
    for j, g in enumerate(groups.values()):
        if not len(g):
            continue
        u = rng.random((len(g), agents[j].actions))
        if g.masks is not None:
            u[~g.masks] = -1.0
        g.actions[:] = np.argmax(u, axis=1) + agents[j].start


def test_multi_agent_steps_equal_the_in_process_vector(address):
    """A hierarchy served remotely gives, step by step, the in-process MultiVector's
    groups (copies, observations, masks), rewards, spans and ends for the same seed
    and actions, auto-resets included."""
    _native.build()
    n = 48
    rng = np.random.default_rng(5)
    with bv.make("maze", num_envs=n, address=address, seed=3, workers=2) as r, bv.make("maze", num_envs=n, seed=3) as v:
        assert isinstance(r, bv.RemoteMultiVector)
        assert r.agent_names == v.agent_names == ["strategy", "motion"]
        assert r.agents == v.agents
        assert r.observation_spaces == v.observation_spaces and r.action_spaces == v.action_spaces
        rg, vg = r.reset(), v.reset()

        def same(rg, vg, where):
            assert list(rg) == list(vg)
            for name in vg:
                a, b = rg[name], vg[name]
                assert (a.agent, a.index) == (b.agent, b.index)
                np.testing.assert_array_equal(a.copies, b.copies, err_msg=f"{where}: {name} copies")
                np.testing.assert_array_equal(a.obs, b.obs, err_msg=f"{where}: {name} obs")
                if b.masks is None:
                    assert a.masks is None
                else:
                    np.testing.assert_array_equal(a.masks, b.masks, err_msg=f"{where}: {name} masks")
                assert a.actions.shape == b.actions.shape
            for attr in ("counts", "acting", "rewards", "spans", "terminated", "truncated", "ended"):
                np.testing.assert_array_equal(getattr(r, attr), getattr(v, attr), err_msg=f"{where}: {attr}")

        same(rg, vg, "reset")
        ended = rewarded = 0
        for tick in range(400):
            if tick % 2:
                _fill(rg, r.agents, rng)
                for name, g in vg.items():
                    g.actions[:] = rg[name].actions
                got, want = r.step(), v.step()
            else:  # the actions as a dict by agent name, on both
                _fill(vg, v.agents, rng)
                acts = {name: g.actions.copy() for name, g in vg.items()}
                got, want = r.step(acts), v.step(acts)
            rg, vg = got[0], want[0]
            same(rg, vg, f"tick {tick}")
            for g, w in zip(got[1:], want[1:]):
                assert g.shape == w.shape and g.dtype == w.dtype
            ended += int(r.ended.sum())
            rewarded += int((r.rewards != 0).sum())
        assert ended > 0 and rewarded > 0
        assert not r.rewards.flags.writeable and not rg["motion"].obs.flags.writeable
        assert rg["motion"].actions.flags.writeable


def test_multi_agent_errors(address):
    with pytest.raises(bv.ConfigError, match="single-agent environment"):
        bv.RemoteMultiVector("cartpole", 2, address=address)
    with pytest.raises(bv.ConfigError, match="single-agent"):
        bv.RemoteVector("maze", 2, address=address)
    with pytest.raises(bv.LimitError, match="--max-session-bytes"):
        bv.make("maze", num_envs=1 << 16, address=address)
    with bv.make("maze", num_envs=4, address=address) as r:
        with pytest.raises(bv.StateError, match="ResetBatch first"):
            r.step()
        groups = r.reset(seed=1)
        g = groups["strategy"]
        assert len(g) == 4 and len(groups["motion"]) == 0
        with pytest.raises(bv.ActionError, match="copy 2: agent strategy: action 9") as e:
            r.step({"strategy": [0, 0, 9, 0]})
        assert e.value.failures[0].copy == 2 and e.value.failures[0].agent == "strategy"
        blocked = int(np.flatnonzero(~g.masks[1])[0])
        allowed = [int(np.flatnonzero(m)[0]) for m in g.masks]
        with pytest.raises(bv.ActionError, match=f"copy 1: agent strategy: action {blocked}: masked"):
            r.step({"strategy": [allowed[0], blocked, allowed[2], allowed[3]]})
        with pytest.raises(bv.ConfigError, match="4 rows"):
            r.step({"strategy": [0, 0]})
        with pytest.raises(bv.ConfigError, match="no agent 'pilot'"):
            r.step({"pilot": [0]})
        with pytest.raises(TypeError, match="dict of agent name"):
            r.step([0, 0, 0, 0])
        groups, *_ = r.step({"strategy": allowed})  # the bad actions changed nothing
        assert sum(len(g) for g in groups.values()) == 4
    with pytest.raises(bv.StateError, match="closed"):
        r.step()
    r.close()  # twice is fine


def test_errors_name_what_was_wrong(address):
    with pytest.raises(bv.ConfigError, match="nowhere"):
        bv.make("nowhere", num_envs=2, address=address)
    with pytest.raises(bv.ConfigError, match="need an address|needs an address"):
        bv.make("cartpole", num_envs=2, key=KEY)
    with bv.make("cartpole", num_envs=4, address=address) as r:
        with pytest.raises(bv.StateError, match="ResetBatch first"):
            r.step(np.zeros(4, np.int64))
        r.reset(seed=1)
        with pytest.raises(bv.ActionError, match="copy 2: agent cartpole: action 9") as e:
            r.step(np.array([0, 1, 9, 0]))
        assert e.value.failures[0].copy == 2 and e.value.failures[0].agent == "cartpole"
        with pytest.raises(bv.ConfigError, match="shape"):
            r.step(np.zeros(5, np.int64))
        r.step(np.zeros(4, np.int64))  # the bad action changed nothing
    with pytest.raises(bv.StateError, match="closed"):
        r.step(np.zeros(4, np.int64))
    r.close()  # twice is fine


def test_keys(serve, tmp_path):  # noqa: F811
    keys = tmp_path / "keys"
    keys.write_text(f"cartpole={KEY}\n")
    address = "grpc://" + serve("env", "--addr", "127.0.0.1:0", "--key-file", str(keys)).addr
    with bv.make("cartpole", num_envs=8, address=address, key=KEY) as r:
        obs, _ = r.reset(seed=2)
        assert obs.shape == (8, 4)
    for key in (None, "wrong-key-0123456789abcdefg"):
        with pytest.raises(R.Unauthenticated):
            bv.make("cartpole", num_envs=8, address=address, key=key)
    with pytest.raises(R.PermissionDenied, match="maze"):
        bv.make("maze", num_envs=8, address=address, key=KEY)
