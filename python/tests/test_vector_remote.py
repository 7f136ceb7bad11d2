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


def test_errors_name_what_was_wrong(address):
    with pytest.raises(bv.ConfigError, match="single-agent"):
        bv.make("maze", num_envs=2, address=address)
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
