"""Bad input to every public entry point of the fast lane (baton.make, baton.make_vec,
baton.vector.make and its vectors' methods, baton.pettingzoo, baton.rllib) raises a
clear TypeError or ValueError naming the argument, before anything is made or stepped;
the limits on workers and memory are Go's, refused before Python allocates."""

import resource
import subprocess
import sys

import numpy as np
import pytest

import baton
import baton.pettingzoo as bp
import baton.rllib as br
import baton.vector as bv

MAZE_SEED = 1


def _raises(call, exc, *words):
    with pytest.raises(exc) as e:
        call()
    for w in words:
        assert w in str(e.value), f"{w!r} not in {e.value}"
    return e.value


MAKE_CASES = {
    # entry point, bad call: the exception and words of its message
    "make env None": (lambda: baton.make(None), TypeError, ["env", "None"]),
    "make env int": (lambda: baton.make(3), TypeError, ["env", "str"]),
    "make config list": (lambda: baton.make("cartpole", config=[1, 2]), TypeError, ["config", "list"]),
    "make agent int": (lambda: baton.make("maze", agent=0), TypeError, ["agent"]),
    "make policies list": (lambda: baton.make("maze", policies=["forward"]), TypeError, ["policies", "list"]),
    "make_vec env None": (lambda: baton.make_vec(None, 4), TypeError, ["env", "None"]),
    "make_vec num_envs float": (lambda: baton.make_vec("cartpole", 2.5), TypeError, ["num_envs", "2.5"]),
    "make_vec num_envs str": (lambda: baton.make_vec("cartpole", "4"), TypeError, ["num_envs"]),
    "make_vec num_envs 0": (lambda: baton.make_vec("cartpole", 0), ValueError, ["num_envs is 0"]),
    "make_vec workers float": (lambda: baton.make_vec("cartpole", 4, workers=2.0), TypeError, ["workers"]),
    "make_vec workers 10**6": (lambda: baton.make_vec("cartpole", 4, workers=10**6), bv.LimitError,
                               ["1000000 workers", "the most a vector may have is"]),
    "make_vec config int": (lambda: baton.make_vec("cartpole", 4, config=3), TypeError, ["config", "int"]),
    "vector name None": (lambda: bv.make(None), TypeError, ["name", "None"]),
    "vector config list": (lambda: bv.make("cartpole", config=[1]), TypeError, ["config", "list"]),
    "vector num_envs bool": (lambda: bv.make("cartpole", True), TypeError, ["num_envs"]),
    "vector num_envs past int64": (lambda: bv.make("cartpole", 2**63), ValueError, ["num_envs"]),
    "vector workers -1": (lambda: bv.make("cartpole", 4, workers=-1), ValueError, ["workers is -1"]),
    "vector workers 10**6": (lambda: bv.make("cartpole", 4, workers=10**6), bv.LimitError,
                             ["1000000 workers", "the most a vector may have is"]),
    "async workers 10**6": (lambda: bv.make("cartpole", 8, batch_size=4, workers=10**6), bv.LimitError, ["1000000 workers"]),
    "vector seed -1": (lambda: bv.make("cartpole", 4, seed=-1), ValueError, ["seed is -1"]),
    "vector seed float": (lambda: bv.make("cartpole", 4, seed=1.5), TypeError, ["seed is 1.5"]),
    "vector max_bytes 0": (lambda: bv.make("cartpole", 4, max_bytes=0), ValueError, ["max_bytes is 0"]),
    "vector max_bytes float": (lambda: bv.make("cartpole", 4, max_bytes=1e9), TypeError, ["max_bytes"]),
    "vector max_bytes remote": (lambda: bv.make("cartpole", 4, address="grpc://127.0.0.1:1", max_bytes=1 << 30),
                                ValueError, ["max_bytes", "server"]),
    "pettingzoo name None": (lambda: bp.env(None), TypeError, ["name", "None"]),
    "pettingzoo config list": (lambda: bp.parallel_env("rps", config=[15]), TypeError, ["config", "list"]),
    "rllib config list": (lambda: br.BatonMultiAgentEnv(["maze"]), TypeError, ["config", "list"]),
    "rllib env None": (lambda: br.BatonMultiAgentEnv({"env": None}), TypeError, ['config["env"]']),
    "rllib env config list": (lambda: br.BatonMultiAgentEnv({"config": [1]}), TypeError, ['config["config"]']),
    "rllib seed -1": (lambda: br.BatonMultiAgentEnv({"seed": -1}), ValueError, ['config["seed"] is -1']),
}


@pytest.mark.parametrize("case", MAKE_CASES)
def test_making_with_bad_arguments(case):
    call, exc, words = MAKE_CASES[case]
    _raises(call, exc, *words)


def test_too_many_maze_copies_are_refused_before_allocating():
    # Ten million mazes took some 40 GB, Go and numpy allocating while the process
    # grew. Now Go refuses them before Python allocates a buffer: the child runs in
    # an address space of 3 GiB, too small for the first of the buffers (3.9 GiB).
    code = (
        "import baton.vector as bv\n"
        "try:\n"
        "    bv.make('maze', num_envs=10**7)\n"
        "except bv.LimitError as e:\n"
        "    assert isinstance(e, ValueError)\n"
        "    print(e)\n"
    )
    limit = 3 << 30
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert r.returncode == 0, r.stderr
    for w in ["10000000 copies (num_envs) of maze", "GiB (", "a copy), over the limit of 4 GiB",
              "max_bytes=", "BATON_MAX_BYTES"]:
        assert w in r.stdout, r.stdout


def test_the_memory_limit_comes_from_max_bytes_then_the_environment(monkeypatch):
    monkeypatch.setenv("BATON_MAX_BYTES", "65536")
    e = _raises(lambda: bv.make("cartpole", 1000), bv.LimitError, "1000 copies (num_envs) of cartpole",
                "over the limit of 64 KiB")
    assert isinstance(e, ValueError)
    _raises(lambda: baton.make_vec("cartpole", 1000), bv.LimitError, "over the limit of 64 KiB")
    _raises(lambda: baton.make_vec("maze", 100, agent="strategy"), bv.LimitError, "100 copies (num_envs) of maze")
    _raises(lambda: bv.make("maze", 100, batch_size=10), bv.LimitError, "100 copies (num_envs) of maze")
    with bv.make("cartpole", 1000, max_bytes=1 << 30) as v:  # the argument wins
        assert v.num_envs == 1000
    with bv.make("cartpole", 4) as v:  # within the variable's limit
        assert v.num_envs == 4
    monkeypatch.setenv("BATON_MAX_BYTES", "100")
    _raises(lambda: baton.make("cartpole").reset(seed=0), bv.LimitError, "1 copy (num_envs) of cartpole takes")
    monkeypatch.setenv("BATON_MAX_BYTES", "lots")
    _raises(lambda: bv.make("cartpole", 4), ValueError, "BATON_MAX_BYTES='lots'")
    monkeypatch.delenv("BATON_MAX_BYTES")
    with bv.make("cartpole", 1000) as v:  # the default, 4 GiB
        assert v.num_envs == 1000


SINGLE = "cartpole"


def _cartpole():
    env = baton.make(SINGLE)
    env.reset(seed=0)
    return env


ACTIONS = {
    # action: accepted?
    "0.7": (0.7, False),
    "1.0": (1.0, False),
    "'1'": ("1", False),
    "None": (None, False),
    "[1]": ([1], False),
    "array([1])": (np.array([1]), False),
    "array(0.5)": (np.array(0.5), False),
    "np.bool_": (np.bool_(True), False),
    "1": (1, True),
    "np.int32(1)": (np.int32(1), True),
    "np.uint8(0)": (np.uint8(0), True),
    "array(1)": (np.array(1), True),
}


@pytest.mark.parametrize("case", ACTIONS)
def test_gymnasium_env_takes_integer_actions_only(case):
    action, ok = ACTIONS[case]
    env = _cartpole()
    try:
        if ok:
            env.step(action)
        else:
            e = _raises(lambda: env.step(action), bv.ActionError, "not an integer", "Discrete(2)")
            assert isinstance(e, ValueError)
    finally:
        env.close()


SEEDS = {
    "1.5": (1.5, TypeError),
    "-1": (-1, ValueError),
    "2**64": (2**64, ValueError),
    "'3'": ("3", TypeError),
    "True": (True, TypeError),
    "np.float64(2)": (np.float64(2), TypeError),
    "np.int64(3)": (np.int64(3), None),
    "2**64 - 1": (2**64 - 1, None),
    "0": (0, None),
}


@pytest.fixture(scope="module")
def resets():
    """Each entry point's reset, by name: a function of the seed."""
    env = baton.make(SINGLE)
    venv = baton.make_vec(SINGLE, 2)
    single = bv.make(SINGLE, 2)
    multi = bv.make("maze", 2)
    asyn = bv.make(SINGLE, 4, batch_size=2)
    aec = bp.env("maze")
    par = bp.parallel_env("rps")
    rl = br.BatonMultiAgentEnv({"env": "maze"})
    yield {
        "baton.make": lambda s: env.reset(seed=s),
        "baton.make_vec": lambda s: venv.reset(seed=s),
        "SingleVector": lambda s: single.reset(s),
        "MultiVector": lambda s: multi.reset(s),
        "AsyncVector": lambda s: asyn.async_reset(s),
        "pettingzoo.env": lambda s: aec.reset(seed=s),
        "pettingzoo.parallel_env": lambda s: par.reset(seed=s),
        "rllib": lambda s: rl.reset(seed=s),
    }
    for c in [env, venv, single, multi, asyn, aec, par, rl]:
        c.close()


@pytest.mark.parametrize("case", SEEDS)
def test_seeds_are_none_or_non_negative_ints(case, resets):
    seed, exc = SEEDS[case]
    for name, reset in resets.items():
        if exc is None:
            reset(seed)
            continue
        with pytest.raises(exc) as e:
            reset(seed)
        assert str(e.value).startswith("seed is "), f"{name}: {e.value}"


def test_vector_actions_are_integer_arrays_or_a_dict_by_agent():
    with bv.make(SINGLE, 4, seed=1) as v:
        v.reset()
        _raises(lambda: v.step(np.full(4, 0.5)), TypeError, "actions are float64 values", "Discrete(2)")
        _raises(lambda: v.step(["a", "b", "c", "d"]), TypeError, "actions are <U1 values")
        v.step(np.zeros(4, np.int32))
    with bv.make("maze", 4, seed=MAZE_SEED) as m:
        groups = m.reset()
        _raises(lambda: m.step([0, 1, 2, 3]), TypeError, "actions is a list", "dict of agent name")
        k = len(groups["strategy"])
        _raises(lambda: m.step({"strategy": [0.5] * k}), TypeError, "actions of 'strategy' are float64", "Discrete(4)")
    with bv.make("maze", 4, batch_size=2, seed=MAZE_SEED) as a:
        a.reset()
        _raises(lambda: a.send([0, 1]), TypeError, "actions is a list")
    with bv.make(SINGLE, 4, batch_size=2, seed=1) as a:
        a.reset()
        _raises(lambda: a.send([0.5, 0.5]), TypeError, "actions are float64 values")


def test_pettingzoo_actions():
    aec = bp.env("maze")
    aec.reset(seed=MAZE_SEED)
    _raises(lambda: aec.step(0.7), bv.ActionError, "agent strategy", "action 0.7", "Discrete(4)")
    aec.close()
    par = bp.parallel_env("rps", config={"max_cycles": 3})
    par.reset(seed=0)
    _raises(lambda: par.step([0, 0]), TypeError, "actions is a list")
    _raises(lambda: par.step({"player_0": 0.7, "player_1": 0}), bv.ActionError, "agent player_0", "action 0.7")
    par.step({"player_0": np.int64(0), "player_1": np.array(1)})
    par.close()


def test_rllib_actions():
    env = br.BatonMultiAgentEnv({"env": "maze"})
    obs, infos = env.reset(seed=MAZE_SEED)
    (aid,) = obs
    _raises(lambda: env.step([1]), TypeError, "action_dict is a list")
    _raises(lambda: env.step({aid: 0.7}), bv.ActionError, f"agent {aid}", "action 0.7", "Discrete(4)")
    good = int(np.flatnonzero(infos[aid]["action_mask"])[0])
    env.step({aid: np.int64(good)})
    env.close()


def test_a_failed_make_vec_closes_quietly(monkeypatch):
    # Gymnasium's VectorEnv.__del__ closes what a failed __init__ left: nothing here.
    import gc

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    _raises(lambda: baton.make_vec("cartpole", 0), ValueError, "num_envs")
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
