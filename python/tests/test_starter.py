"""baton new, from a folder outside the repository: the starter module it writes (with
--replace to this checkout) passes its own tests, its command line runs a campaign
with a log, play, graph, inspect and replay over it and serves it to Python's
RemoteMultiAgentEnv and to a batched remote vector; baton.build makes its library, which Gymnasium's and
PettingZoo's checkers accept; an edit of a reward constant reaches Python at the next
baton.build; and its train.py trains it with baton.ppo well past random policies.

Go runs offline (GOPROXY=off) with GOFLAGS=-mod=mod: the module builds from the
module cache that baton's own build filled."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import baton
import baton.pettingzoo as bp
import baton.vector as bv
from baton import remote as R
from conftest import REPO_ROOT
from test_remote_go import Process, baton_bin  # noqa: F401  (a fixture)

pytestmark = pytest.mark.go

NAME = "keydoor"
MODULE = "example.com/keydoor"
# How long one go command may take: generous for a loaded machine.
GO_TIMEOUT = 600


def go_env() -> dict[str, str]:
    return dict(os.environ, GOPROXY="off", GOFLAGS="-mod=mod", GOWORK="off")


def run(args, cwd, timeout=GO_TIMEOUT) -> subprocess.CompletedProcess:
    """Runs a command, failing the test with its output when it fails."""
    r = subprocess.run(args, cwd=cwd, env=go_env(), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} (in {cwd}) exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture(scope="module")
def starter(baton_bin, tmp_path_factory):  # noqa: F811
    """The module baton new writes into a folder outside the repository, with its
    command built."""
    work = tmp_path_factory.mktemp("starter")
    assert not str(work).startswith(REPO_ROOT + os.sep)
    module = work / NAME
    r = run([baton_bin, "new", str(module), "--module", MODULE, "--replace", REPO_ROOT], cwd=work)
    assert f"environment \"{NAME}\"" in r.stdout and f"baton: replaced by {REPO_ROOT} (--replace)" in r.stdout
    cmd = work / "bin" / NAME
    run(["go", "build", "-o", str(cmd), f"./cmd/{NAME}"], cwd=module)
    return module, str(cmd)


@pytest.fixture(scope="module")
def library(starter):
    module, _ = starter
    return baton.build(module_dir=module)


def test_the_module_passes_its_own_tests(starter):
    module, _ = starter
    r = run(["go", "test", "-count=1", "./..."], cwd=module)
    assert re.search(rf"^ok\s+{re.escape(MODULE)}\s", r.stdout, re.M), r.stdout
    run(["go", "vet", "./..."], cwd=module)


def test_its_command_line_runs_logs_and_replays(starter, tmp_path):
    module, cmd = starter
    log = tmp_path / "log"
    r = run([cmd, "run", NAME, "--trials", "20", "--episodes", "2", "--policy", "walker=random", "--log", str(log),
             "--json"], cwd=module)
    summary = json.loads(r.stdout)
    assert summary["policies"] == {"planner": "random", "walker": "random"}
    assert summary["episodes"] == 40 and summary["failed"] == 0
    assert 0 < summary["success_rate"] < 1  # the random walker reaches the exit now and then
    assert summary["log"]["rows"] > 0

    inspected = json.loads(run([cmd, "inspect", str(log), "--json"], cwd=module).stdout)
    assert inspected["envs"] == [NAME]
    assert inspected["episodes"] == summary["episodes"]
    assert inspected["success_rate"] == summary["success_rate"]
    assert inspected["agents"]["planner"]["return"]["mean"] == pytest.approx(summary["agents"]["planner"]["mean"])

    r = run([cmd, "replay", str(log)], cwd=module)
    assert "replayed 20 trials" in r.stdout and "no mismatch" in r.stdout, r.stdout

    lines = [json.loads(line) for line in run([cmd, "play", NAME, "--seed", "3", "--json"], cwd=module).stdout.splitlines()]
    names = {line["action_name"] for line in lines if line["action_name"] is not None}
    assert {"KEY", "DOOR", "EXIT"} <= names and names <= {"KEY", "DOOR", "EXIT", "UP", "RIGHT", "DOWN", "LEFT"}
    last = lines[-1]
    assert last["agent"] == "planner" and last["terminated"] and last["info"]["door_open"]
    text = run([cmd, "play", NAME, "--seed", "3"], cwd=module).stdout
    assert "episode over after" in text and "planner_0 terminated" in text

    graph = run([cmd, "graph", NAME], cwd=module).stdout
    assert graph.startswith("stateDiagram") and "s_planner --> s_walker: subgoal" in graph


def test_serve_env_answers_a_remote_multi_agent_env(starter):
    module, cmd = starter
    server = Process([cmd, "serve", "env", "--addr", "127.0.0.1:0"], cwd=module)
    try:
        with R.RemoteMultiAgentEnv(server.addr, NAME) as env:
            assert env.agents == ("planner", "walker")
            assert env.agent_spec("planner").mask_len == 3 and env.agent_spec("walker").mask_len == 4
            rng = np.random.default_rng(0)
            turn = env.reset(seed=5)
            ticks = 0
            while not turn.over:
                acting = turn.reports[turn.next]
                assert acting.mask.any()
                turn = env.step(int(rng.choice(np.flatnonzero(acting.mask))))
                ticks += 1
                assert ticks < 1000, "the episode does not end"
            assert all(r.terminated or r.truncated for r in turn.reports.values())
    finally:
        server.stop()


@pytest.mark.parametrize("agent", ["planner", "walker"])
def test_check_env_on_each_agent(library, agent):
    env = baton.make(NAME, agent=agent, library=library, invalid_action="terminate")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the checker fails the test
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_pettingzoo_api_test(library):
    env = bp.env(NAME, library=library)
    api_test(env, num_cycles=300)
    env.close()


def test_a_batched_remote_vector_equals_the_local_one(starter, library):
    """The starter's hierarchy served by its own command line, as a batched remote
    vector: step by step the groups, rewards, spans and ends of the in-process vector
    of its library, for the same seed and actions."""
    module, cmd = starter
    n = 32
    rng = np.random.default_rng(2)
    server = Process([cmd, "serve", "env", "--addr", "127.0.0.1:0"], cwd=module)
    try:
        with bv.make(NAME, num_envs=n, address=server.addr, seed=4) as r, \
                bv.make(NAME, num_envs=n, seed=4, library=library) as v:
            assert isinstance(r, bv.RemoteMultiVector)
            assert r.agent_names == v.agent_names == ["planner", "walker"]
            rg, vg = r.reset(), v.reset()
            ended = 0
            for tick in range(200):
                for j, g in enumerate(vg.values()):
                    if len(g):
                        u = rng.random((len(g), v.agents[j].actions))
                        u[~g.masks] = -1.0
                        g.actions[:] = np.argmax(u, axis=1) + v.agents[j].start
                acts = {name: g.actions.copy() for name, g in vg.items()}
                rg, vg = r.step(acts)[0], v.step(acts)[0]
                assert list(rg) == list(vg)
                for name in vg:
                    np.testing.assert_array_equal(rg[name].copies, vg[name].copies, err_msg=f"tick {tick}: {name}")
                    np.testing.assert_array_equal(rg[name].obs, vg[name].obs, err_msg=f"tick {tick}: {name}")
                    np.testing.assert_array_equal(rg[name].masks, vg[name].masks, err_msg=f"tick {tick}: {name}")
                for attr in ("acting", "rewards", "spans", "terminated", "truncated", "ended"):
                    np.testing.assert_array_equal(getattr(r, attr), getattr(v, attr), err_msg=f"tick {tick}: {attr}")
                ended += int(v.ended.sum())
            assert ended > 0
    finally:
        server.stop()


def planner_return(library, seed: int = 7) -> float:
    """The planner's return in one episode, the walker playing its greedy policy in Go:
    the planner picks the one subgoal its mask allows."""
    env = baton.make(NAME, agent="planner", library=library)
    obs, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        total += reward
        done = terminated or truncated
    env.close()
    assert terminated, "the greedy walker reaches the exit"
    return total


def test_an_edit_of_a_reward_is_seen_at_the_next_build(starter, library, tmp_path):
    module, _ = starter
    copy = tmp_path / NAME
    shutil.copytree(module, copy)
    assert baton.build(module_dir=copy) == library, "the same sources: the library already built"
    before = planner_return(library)
    src = copy / "env.go"
    text = src.read_text()
    assert "\tExitReward  = 1.0\n" in text
    src.write_text(text.replace("\tExitReward  = 1.0\n", "\tExitReward  = 5.0\n"))
    edited = baton.build(module_dir=copy)
    assert edited != library
    assert planner_return(edited) == pytest.approx(before + 4)


def test_train_py_trains_past_random(starter, library):
    module, _ = starter
    # train.py builds the library itself (the one above, already built) and keeps
    # torch to one thread.
    r = subprocess.run([sys.executable, "train.py", "--steps", "20000", "--episodes", "300", "--json"], cwd=module,
                       capture_output=True, text=True, timeout=GO_TIMEOUT)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    rate = report["success_rate"]
    assert report["env"] == NAME and report["env_steps"] >= 20_000
    assert rate["random"] < 0.5, rate
    assert rate["trained"] > 0.9, rate
