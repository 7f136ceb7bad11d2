"""Agents trained in Python playing in Go campaigns (`baton run maze --policy
strategy=grpc://...`): a tabular Q-learner served by baton.remote.serve_learner learns
online from the trials' feedback (examples/python/serve_learner.py), and a policy
cloned from a real log by examples/python/train_strategy.py plays back as well as the
oracle it was cloned from (examples/python/serve_policy.py --policy model)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

import serve_learner  # examples/python, on pytest's pythonpath (pyproject.toml)
import serve_policy
import train_strategy

from baton import remote as R
from conftest import REPO_ROOT

pytestmark = pytest.mark.go

RUN_TIMEOUT = 300
EXAMPLES = os.path.join(REPO_ROOT, "examples", "python")


@pytest.fixture(scope="module")
def baton_cmd(tmp_path_factory):
    """The baton command, built once for the module."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the baton command")
    out = str(tmp_path_factory.mktemp("bin") / "baton")
    r = subprocess.run(["go", "build", "-o", out, "./cmd/baton"], cwd=REPO_ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"go build ./cmd/baton failed:\n{r.stderr}")
    return out


@pytest.fixture(scope="module")
def strategy_spec(baton_cmd):
    """The maze strategy agent's spec, as `baton envs maze --json` gives it."""
    r = subprocess.run([baton_cmd, "envs", "maze", "--json"], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert r.returncode == 0, r.stderr
    env = next(e for e in json.loads(r.stdout) if e["name"] == "maze")
    return next(R.agent_spec(a) for a in env["agents"] if a["name"] == "strategy")


def run(baton_cmd, *args):
    """`baton run maze ARGS --json`: its summary."""
    cmd = [baton_cmd, "run", "maze", *args, "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}"
    return json.loads(r.stdout)


def test_a_served_q_learner_learns_from_go_campaigns(baton_cmd, strategy_spec):
    """Five campaigns of 20 maze trials, one after another, whose strategy is one
    Q-learner (fixed seeds, one trial at a time, the motion agent walking straight):
    the first campaign mostly fails while the learner explores, the last succeeds."""
    learner = serve_learner.QLearner(strategy_spec.action.n, seed=1)
    server = R.serve_learner(learner, strategy_spec)
    rates = []
    try:
        for block in range(5):
            s = run(baton_cmd, "--trials", "20", "--workers", "1", "--seed", str(block + 1),
                    "--policy", f"strategy=grpc://{server.addr}", "--policy", "motion=forward")
            assert s["ended"] == 20, s["failures"]
            rates.append(s["success_rate"])
            # Every episode's end reached the learner before `baton run` exited.
            assert learner.episodes == 20 * (block + 1)
    finally:
        server.stop()
    print(f"Q-learner success rate per campaign of 20 trials: {rates}")
    assert rates[0] <= 0.3, rates
    assert rates[-1] >= 0.9, rates
    assert rates[-1] - rates[0] >= 0.6, rates
    assert learner.updates > 0 and learner.decision == {} and learner.past == {}


def test_a_policy_cloned_from_a_log_plays_back_as_well_as_the_oracle(baton_cmd, strategy_spec, tmp_path):
    """A log of 60 trials of the oracle strategy (the motion agent random), the cloned
    policy trained on it, then 100 new trials (another seed) played by the oracle and
    by the cloned policy served to Go: the clone succeeds at least 95 % as often."""
    log = str(tmp_path / "log")
    oracle_log = run(baton_cmd, "--trials", "60", "--seed", "1", "--log", log)
    assert oracle_log["ended"] == 60 and oracle_log["log"]["rows"] > 0
    model = str(tmp_path / "strategy_bc.pt")
    train_strategy.main([log, "--epochs", "15", "--batch-size", "32", "--out", model])
    assert os.path.exists(model)

    oracle = run(baton_cmd, "--trials", "100", "--seed", "2", "--policy", "strategy=oracle")
    server = R.serve_policy(serve_policy.cloned(strategy_spec, model), strategy_spec)
    try:
        cloned = run(baton_cmd, "--trials", "100", "--seed", "2", "--policy", f"strategy=grpc://{server.addr}")
    finally:
        server.stop()
    assert cloned["ended"] == 100, cloned["failures"]
    print(f"success rate: oracle {oracle['success_rate']}, cloned {cloned['success_rate']}")
    assert oracle["success_rate"] > 0.5
    assert cloned["success_rate"] >= 0.95 * oracle["success_rate"]


def test_serve_learner_script_learns_and_stops_on_sigterm(baton_cmd, tmp_path):
    """examples/python/serve_learner.py as a user runs it: it says where it serves,
    learns from a campaign, and on SIGTERM stops and says what it learned."""
    spec_file = tmp_path / "maze.json"
    r = subprocess.run([baton_cmd, "envs", "maze", "--json"], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert r.returncode == 0, r.stderr
    spec_file.write_text(r.stdout)
    proc = subprocess.Popen(
        [sys.executable, os.path.join(EXAMPLES, "serve_learner.py"), "--spec", str(spec_file), "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # "" if it exits first
        m = re.match(r"^serving agent strategy of maze on grpc://(\S+:\d+)$", line.strip())
        assert m, f"first line {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        s = run(baton_cmd, "--trials", "10", "--workers", "1", "--policy", f"strategy=grpc://{m.group(1)}",
                "--policy", "motion=forward")
        assert s["ended"] == 10
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, err
    assert "learned from 10 episodes" in err, err
