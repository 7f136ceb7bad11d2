"""baton.vector's activity logs (make(..., log=DIR)): what a vector steps, baton.load
and `baton inspect --json` read back.

The fast lane's library and the baton command are built from the checkout's Go
sources, so these tests carry the go marker."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import baton
import baton.vector as bv
from baton.vector import _native

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)

pytestmark = pytest.mark.go


@pytest.fixture(scope="module", autouse=True)
def library():
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's library")
    return _native.build()


def inspect_json(d: str) -> dict:
    r = subprocess.run(["go", "run", "./cmd/baton", "inspect", d, "--json"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_cartpole_log_reads_back(tmp_path):
    """Every step of every copy is a row of its episode's trial: observations (the
    final one where an episode ended), actions, rewards and ends as the vector gave
    them; each ended episode's return; the trials' policy."""
    d = str(tmp_path / "log")
    n, ticks = 4, 60
    rng = np.random.default_rng(3)
    want: dict[str, list[tuple]] = {}
    cur, nxt = [f"pole-{i}" for i in range(n)], n
    with bv.make("cartpole", num_envs=n, seed=5, log=d, policy="coin", run="pole") as v:
        assert v.log_dir == d
        obs, _ = v.reset()
        for i in range(n):
            want[cur[i]] = [(obs[i].copy(), None, 0.0, False, False)]
        ended = 0
        for _ in range(ticks):
            acts = rng.integers(0, 2, n)
            obs, rew, term, trunc, info = v.step(acts)
            for i in range(n):
                done = term[i] or trunc[i]
                o = info["final_obs"][i] if done else obs[i]
                want[cur[i]].append((o.copy(), int(acts[i]), float(rew[i]), bool(term[i]), bool(trunc[i])))
                if done:
                    ended += 1
                    cur[i], nxt = f"pole-{nxt}", nxt + 1
                    want[cur[i]] = [(obs[i].copy(), None, 0.0, False, False)]
    assert v.log_dir is None and ended > 0

    log = baton.load(d)
    c = log["cartpole"].columns
    assert len(c["tick"]) == sum(len(rows) for rows in want.values())
    for trial, rows in want.items():
        at = np.flatnonzero(c["trial_id"] == trial)
        assert c["tick"][at].tolist() == list(range(len(rows)))
        np.testing.assert_array_equal(c["observation"][at], np.stack([r[0] for r in rows]))
        assert c["action_valid"][at].tolist() == [r[1] is not None for r in rows]
        assert c["action"][at][1:].tolist() == [r[1] for r in rows[1:]]
        np.testing.assert_array_equal(c["reward"][at], np.array([r[2] for r in rows], np.float32))
        assert c["terminated"][at].tolist() == [r[3] for r in rows]
        assert c["truncated"][at].tolist() == [r[4] for r in rows]
    eps = log.episodes.to_pylist()
    assert len(eps) == ended
    for e in eps:
        assert e["returns"] == [{"agent": "cartpole", "value": float(sum(r[2] for r in want[e["trial_id"]]))}]
    trials = log.trials.to_pylist()
    assert {json.loads(t["policies"])["cartpole"] for t in trials if t["policies"]} == {"coin"}

    s = inspect_json(d)
    assert s["envs"] == ["cartpole"]
    assert s["episodes"] == ended
    assert s["trials"] == nxt
    assert s["ended"] == ended and s["stopped"] == n
    assert s["agents"]["cartpole"]["rows"] == len(c["tick"])


def test_maze_log_reads_back(tmp_path):
    """A hierarchical vector's log: each agent's rows, the episodes that ended with
    the returns the vector reported, and baton inspect's summary of them."""
    d = str(tmp_path / "log")
    n, ticks = 5, 300
    rng = np.random.default_rng(4)
    with bv.make("maze", num_envs=n, seed=2, log=d, policy={"strategy": "ppo"}) as v:
        groups = v.reset()
        names = v.agent_names
        returns = np.zeros((n, len(names)))
        ended, done_returns = 0, []
        for _ in range(ticks):
            for g in groups.values():
                if len(g):
                    g.actions[:] = (rng.random(g.masks.shape) * g.masks).argmax(axis=1)
            groups, rewards, _, _, end = v.step()
            returns += rewards
            for i in np.flatnonzero(end):
                done_returns.append(returns[i].copy())
                returns[i] = 0
                ended += 1
    assert ended > 0

    log = baton.load(d)
    assert set(log) == set(names)
    eps = log.episodes.to_pylist()
    assert len(eps) == ended
    got = sorted(tuple(r["value"] for r in e["returns"]) for e in eps)
    np.testing.assert_allclose(np.array(got), np.array(sorted(tuple(r) for r in done_returns)))
    strategy = log["strategy"].transitions()
    assert len(strategy.action) > 0
    policies = {json.loads(t["policies"])["strategy"] for t in log.trials.to_pylist() if t["policies"]}
    assert policies == {"ppo"}

    s = inspect_json(d)
    assert s["envs"] == ["maze"]
    assert s["episodes"] == ended
    assert s["successes"] == sum(e["success"] for e in eps)
    for name in names:
        assert s["agents"][name]["rows"] == len(log[name])
        assert s["agents"][name]["episodes"] == ended


def test_killed_process_leaves_a_recoverable_log(tmp_path):
    """A process that dies without closing its vector leaves the batches written so
    far: baton log recover gives their parts footers, and baton.load reads them. The
    child steps enough rows that the recording's writer has handed several batches
    to the disk before it dies (each hand-over waits for the batch before the last)."""
    d = str(tmp_path / "log")
    code = textwrap.dedent(f"""
        import os
        import numpy as np
        import baton.vector as bv
        v = bv.make("cartpole", num_envs=64, seed=1, log={d!r})
        v.reset()
        rng = np.random.default_rng(0)
        for _ in range(600):
            v.step(rng.integers(0, 2, 64))
        os._exit(0)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["go", "run", "./cmd/baton", "log", "recover", d, "--json"], cwd=REPO_ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["parts"], "parts without footers"
    log = baton.load(d)
    assert len(log["cartpole"]) >= 4096
    assert "running" in log.trials.column("state").to_pylist()
    s = inspect_json(d)
    assert s["agents"]["cartpole"]["rows"] == len(log["cartpole"])


def test_log_options_refused(tmp_path):
    d = str(tmp_path / "log")
    with pytest.raises(bv.ConfigError, match="asynchronous"):
        bv.make("cartpole", num_envs=4, batch_size=2, log=d)
    with pytest.raises(bv.ConfigError, match="remote"):
        bv.make("cartpole", num_envs=4, address="grpc://127.0.0.1:1", log=d)
    with pytest.raises(bv.ConfigError, match="log=DIR"):
        bv.make("cartpole", num_envs=4, policy="ppo")
    with pytest.raises(bv.ConfigError, match="motion"):
        bv.make("cartpole", num_envs=4, log=d, policy={"motion": "ppo"})
    assert not os.path.exists(os.path.join(d, "_trials"))
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(bv.LogError):
        bv.make("cartpole", num_envs=4, log=file)
