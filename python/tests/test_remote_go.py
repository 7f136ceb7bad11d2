"""baton.remote against the Go side: real `baton serve env` servers stepped from Python
(a full maze episode, the cart-pole through the Gymnasium view), and Go campaigns
(`baton run maze --policy strategy=grpc://...`) whose strategy agent is a Python policy
server. Every server is stopped with SIGTERM and must exit cleanly."""

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import grpc
import serve_policy as example  # examples/python, on pytest's pythonpath (pyproject.toml)

from baton import remote as R
from conftest import REPO_ROOT

EXAMPLES = os.path.join(REPO_ROOT, "examples", "python")

KEY = "maze-key-0123456789abcdefgh"
WRONG_KEY = "wrong-key-0123456789abcdefg"
# How long a server may take to start, a command to run: generous for a loaded machine.
START_TIMEOUT = 60
RUN_TIMEOUT = 120
# The first line on stdout of `baton serve` (and of serve_policy.py) once it serves:
# "serving environments maze, cartpole on grpc://127.0.0.1:43121".
SERVING = re.compile(r"^serving .* on (grpcs?)://(\S+:\d+)$")


@pytest.fixture(scope="session")
def baton_bin(tmp_path_factory):
    """The baton command, built once per session."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the baton command the remote tests run against")
    out = str(tmp_path_factory.mktemp("bin") / "baton")
    r = subprocess.run(["go", "build", "-o", out, "./cmd/baton"], cwd=REPO_ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"go build ./cmd/baton failed:\n{r.stderr}")
    return out


class Process:
    """A server process: started, its address read from the "serving ... on" line it
    prints first (no sleeping: a reader thread hands the lines over as they come),
    stopped with SIGTERM."""

    def __init__(self, args, cwd=REPO_ROOT, env=None):
        self.args = args
        self.proc = subprocess.Popen(
            args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
        self.stdout: "queue.Queue" = queue.Queue()
        self.output = []  # stdout and stderr, for failure messages
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, None), daemon=True),
        ]
        for t in self._readers:
            t.start()
        self.scheme, self.addr = self._wait_serving()
        self.target = f"{self.scheme}://{self.addr}"

    def _read(self, stream, lines):
        for line in stream:
            self.output.append(line)
            if lines is not None:
                lines.put(line)
        if lines is not None:
            lines.put(None)

    def _wait_serving(self):
        try:
            line = self.stdout.get(timeout=START_TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            pytest.fail(f"{self.args}: not serving within {START_TIMEOUT}s:\n{''.join(self.output)}")
        m = SERVING.match(line.rstrip("\n")) if line is not None else None
        if m is None:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"{self.args}: the first line is not 'serving ... on grpc://ADDR':\n{''.join(self.output)}")
        return m.group(1), m.group(2)

    def stop(self):
        """SIGTERM, then the exit status must be 0 (a graceful shutdown)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"{self.args} did not exit within {START_TIMEOUT}s of SIGTERM:\n{''.join(self.output)}")
        for t in self._readers:
            t.join()
        assert rc == 0, f"{self.args} exited {rc} on SIGTERM:\n{''.join(self.output)}"


@pytest.fixture
def serve(baton_bin):
    """serve(*args): a `baton serve ...` process, stopped and checked at teardown."""
    started = []

    def start(*args):
        p = Process([baton_bin, "serve", *args])
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture
def env_server(serve):
    return serve("env", "--addr", "127.0.0.1:0").addr


def masked_choice(rng, mask, n):
    """A uniformly random action among those the mask allows."""
    allowed = np.arange(n) if mask is None else np.flatnonzero(mask)
    return int(rng.choice(allowed))


def play_maze(env, seed, rng):
    """A full maze episode with masked random actions; returns the turns."""
    turns = [env.reset(seed=seed)]
    while not turns[-1].over:
        turn = turns[-1]
        acting = turn.reports[turn.next]
        turns.append(env.step(masked_choice(rng, acting.mask, env.agent_spec(acting.agent).action.n)))
        assert len(turns) < 10_000, "the episode does not end"
    return turns


# ---------------------------------------------------------------------------------
# Environments.


def test_envs_and_specs_agree_with_baton_envs_json(baton_bin, env_server):
    names = [e.name for e in R.list_envs(env_server)]
    assert {"maze", "cartpole"} <= set(names)
    r = subprocess.run([baton_bin, "envs", "--json"], capture_output=True, text=True, check=True)
    for env in json.loads(r.stdout):
        want = tuple(R.agent_spec(a) for a in env["agents"])
        assert R.env_spec(env_server, env["name"]) == want, env["name"]


def test_a_full_maze_episode_in_the_multi_agent_form(env_server):
    with R.RemoteMultiAgentEnv(env_server, "maze") as env:
        assert env.agents == ("strategy", "motion")
        assert env.agent_spec("strategy").mask_len == 4
        turns = play_maze(env, seed=7, rng=np.random.default_rng(0))
        first, last = turns[0], turns[-1]
        assert first.tick == 0 and not first.over
        assert first.reports[first.next].start
        for prev, turn in zip(turns, turns[1:]):
            assert turn.tick >= prev.tick
            for report in turn.reports.values():
                spec = env.agent_spec(report.agent)
                assert report.observation.shape == (spec.observation.flat_dim,)
                assert report.observation.dtype == np.float32
                assert report.mask is None or report.mask.shape == (spec.mask_len,)
            if not turn.over:
                assert list(turn.reports)[-1] == turn.next  # the acting agent reported last
                assert turn.reports[turn.next].mask.any()
        assert last.over and last.next is None and env.next_agent is None
        assert all(r.terminated or r.truncated for r in last.reports.values())
        assert sum(1 for t in turns[1:] if any(r.agent == "motion" for r in t.reports.values())) > 0
        # The same seed and the same actions give the same episode.
        again = play_maze(env, seed=7, rng=np.random.default_rng(0))
        assert [t.tick for t in again] == [t.tick for t in turns]
        for a, b in zip(again, turns):
            assert list(a.reports) == list(b.reports)
            for k in a.reports:
                np.testing.assert_array_equal(a.reports[k].observation, b.reports[k].observation)
                assert a.reports[k].reward == b.reports[k].reward
        with pytest.raises(RuntimeError, match="call reset"):
            env.step(0)


def test_the_cartpole_through_the_gymnasium_view(env_server):
    with R.RemoteEnv(env_server, "cartpole") as env:
        assert env.agent == "cartpole"
        obs, info = env.reset(seed=3)
        assert obs.shape == (4,) and obs.dtype == np.float32
        assert info["agent_id"] == "cartpole_0" and "action_mask" not in info
        again, _ = env.reset(seed=3)
        np.testing.assert_array_equal(obs, again)
        total, steps = 0.0, 0
        while True:
            obs, reward, terminated, truncated, info = env.step(1 if obs[2] + 0.5 * obs[3] > 0 else 0)
            total += reward
            steps += 1
            if terminated or truncated:
                break
        assert total == steps > 100  # +1 per step; the balancing heuristic lasts
        assert terminated != truncated
        with pytest.raises(RuntimeError, match="call reset"):
            env.step(0)
        # A seeded reset seeds the unseeded ones after it, as in Gymnasium.
        env.reset(seed=11)
        a, _ = env.reset()
        env.reset(seed=11)
        b, _ = env.reset()
        np.testing.assert_array_equal(a, b)
        # A random policy falls over soon: terminated, not truncated.
        rng = np.random.default_rng(2)
        env.reset(seed=5)
        while True:
            _, _, terminated, truncated, _ = env.step(int(rng.integers(2)))
            if terminated or truncated:
                break
        assert terminated and not truncated


def test_the_maze_strategy_view_with_motion_played_locally(env_server):
    forward = lambda obs, mask: 1 if mask[1] else int(np.flatnonzero(mask)[0])  # noqa: E731
    with R.RemoteEnv(env_server, "maze", agent="strategy", others={"motion": forward}, info=True) as env:
        oracle = example.oracle(env.spec)
        obs, info = env.reset(seed=1)
        assert obs.shape == (106,) and info["action_mask"].dtype == bool
        assert info["env_info"]["position"] == [int(obs[100]), int(obs[101])]
        total, decisions = 0.0, 0
        while True:
            obs, reward, terminated, truncated, info = env.step(oracle(obs, info["action_mask"]))
            total += reward
            decisions += 1
            assert info["span_ticks"] >= 1
            if terminated or truncated:
                break
        assert terminated and not truncated and total > 0  # the oracle reaches the goal
    # A tick limit truncates the episode: truncated, not terminated.
    with R.RemoteEnv(env_server, "maze", agent="strategy", others={"motion": forward}, max_ticks=3) as env:
        obs, info = env.reset(seed=1)
        while True:
            obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            if terminated or truncated:
                break
        assert truncated and not terminated and info["tick"] == 3
    with pytest.raises(R.ConfigError, match="pass agent=NAME"):
        R.RemoteEnv(env_server, "maze")
    with pytest.raises(R.ConfigError, match=r"others=\{'motion': fn\}"):
        R.RemoteEnv(env_server, "maze", agent="strategy")


def test_refused_steps_name_the_field_and_leave_the_episode_as_it_was(env_server):
    with R.RemoteMultiAgentEnv(env_server, "maze") as env:
        turn = env.reset(seed=1)
        acting = turn.reports[turn.next]
        wall = int(np.flatnonzero(~acting.mask)[0])
        with pytest.raises(R.InvalidArgument) as e:
            env.step(wall)
        assert e.value.field == "action"
        with pytest.raises(R.InvalidArgument) as e:
            env.step(7)
        assert e.value.field == "action"
        with pytest.raises(R.FieldError):
            env.step([0, 1])  # two values for a Discrete action: refused before sending
        with pytest.raises(R.Rejected) as e:
            env.step(0, agent_id="motion_0")  # not acting
        assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
        # Nothing changed: the valid action still works from the same state.
        after = env.step(int(np.flatnonzero(acting.mask)[0]))
        assert after.tick >= turn.tick
    with pytest.raises(R.NotFound):
        R.RemoteMultiAgentEnv(env_server, "no-such-env")
    with pytest.raises(R.InvalidArgument) as e:
        R.RemoteMultiAgentEnv(env_server, "maze", {"no_such_field": 1})
    assert e.value.field == "config"


def test_an_env_server_with_keys(serve, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text(f"maze={KEY}\n")
    addr = serve("env", "--addr", "127.0.0.1:0", "--key-file", str(keys)).addr
    with R.RemoteMultiAgentEnv(addr, "maze", key=KEY) as env:
        assert not env.reset(seed=1).over
    for key in (None, WRONG_KEY):
        with pytest.raises(R.Unauthenticated):
            R.RemoteMultiAgentEnv(addr, "maze", key=key)


def test_the_remote_env_example(env_server):
    for env, want in (("maze", "reached the goal"), ("cartpole", "cartpole episode 1")):
        r = subprocess.run(
            [sys.executable, os.path.join(EXAMPLES, "remote_env.py"), env_server, "--env", env, "--episodes", "2"],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
        assert r.returncode == 0, r.stderr
        assert want in r.stdout, r.stdout


# ---------------------------------------------------------------------------------
# Go campaigns acting with a Python policy.


@pytest.fixture(scope="session")
def maze_envs(baton_bin, tmp_path_factory):
    """`baton envs maze --json`, in a file, and the strategy's spec."""
    r = subprocess.run([baton_bin, "envs", "maze", "--json"], capture_output=True, text=True, check=True)
    path = tmp_path_factory.mktemp("spec") / "maze.json"
    path.write_text(r.stdout)
    strategy = next(a for a in json.loads(r.stdout)[0]["agents"] if a["name"] == "strategy")
    return str(path), R.agent_spec(strategy)


def run_campaign(baton_bin, addr, key_file, *extra):
    cmd = [baton_bin, "run", "maze", "--trials", "5", "--policy", f"strategy=grpc://{addr}", "--json", *extra]
    if key_file:
        cmd += ["--key-file", str(key_file)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)


def test_a_go_campaign_acts_with_a_python_policy(baton_bin, maze_envs, tmp_path):
    _, spec = maze_envs
    keys = tmp_path / "keys"
    keys.write_text(f"strategy={KEY}\n")
    oracle = example.oracle(spec)
    calls = []

    def policy(obs, mask, context):
        calls.append(context)
        return oracle(obs, mask)

    with R.serve_policy(policy, spec, key=R.Keys.read(keys)) as srv:
        r = run_campaign(baton_bin, srv.addr, keys, "--policy", "motion=forward")
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)
        assert (summary["trials"], summary["ended"], summary["failed"]) == (5, 5, 0), summary
        assert summary["failures"] == []
        assert summary["successes"] == 5  # the Python oracle reaches every goal
        assert len(calls) >= 5
        # The trials tell the policy where each observation comes from.
        assert all(c.agent_id.startswith("strategy_") for c in calls)
        assert len({c.trial for c in calls}) == 5

        # A wrong key: the campaign fails to reach the agent, and says so.
        wrong = tmp_path / "wrong"
        wrong.write_text(f"strategy={WRONG_KEY}\n")
        r = run_campaign(baton_bin, srv.addr, wrong)
        assert r.returncode != 0
        assert "unauthenticated" in r.stderr.lower() or "API key" in r.stderr, r.stderr


def test_the_serve_policy_example_serves_a_go_campaign(baton_bin, maze_envs, tmp_path):
    spec_file, _ = maze_envs
    keys = tmp_path / "keys"
    keys.write_text(f"{KEY}\n")
    server = Process(
        [sys.executable, os.path.join(EXAMPLES, "serve_policy.py"), "--spec", spec_file, "--key-file", str(keys),
         "--policy", "random", "--seed", "3"],
    )
    try:
        r = run_campaign(baton_bin, server.addr, keys)
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)
        assert (summary["trials"], summary["ended"], summary["failed"]) == (5, 5, 0), summary
    finally:
        server.stop()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and localhost."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (apt-get install openssl): no certificate for the TLS tests")
    d = tmp_path_factory.mktemp("tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def test_a_go_campaign_reaches_a_python_policy_over_tls(baton_bin, maze_envs, certificate, tmp_path):
    _, spec = maze_envs
    cert, key = certificate
    keys = tmp_path / "keys"
    keys.write_text(f"{KEY}\n")
    with R.serve_policy(example.oracle(spec), spec, key=KEY, tls=(cert, key)) as srv:
        cmd = [baton_bin, "run", "maze", "--trials", "5", "--policy", f"strategy=grpcs://{srv.addr}",
               "--policy", "motion=forward", "--key-file", str(keys), "--tls-ca", cert, "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)
        assert (summary["ended"], summary["failed"], summary["successes"]) == (5, 0, 5), summary


# ---------------------------------------------------------------------------------
# Python acting with a Go agent server.


def test_python_plays_the_maze_with_a_go_agent_server(serve, env_server, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text(f"strategy={KEY}\n")
    agent = serve("agent", "--env", "maze", "--agent", "strategy", "--policy", "oracle", "--addr", "127.0.0.1:0",
                  "--key-file", str(keys))
    with pytest.raises(R.Unauthenticated):
        R.RemoteAgent(agent.target)
    with R.RemoteAgent(agent.target, key=KEY) as strategy, R.RemoteMultiAgentEnv(env_server, "maze") as env:
        assert strategy.spec == env.agent_spec("strategy")
        turn = env.reset(seed=3)
        reached = False
        while not turn.over:
            acting = turn.reports[turn.next]
            if acting.agent == "strategy":
                seen = acting
                ctx = R.ActContext("python-trial", 0, turn.tick, acting.agent_id)
                action = strategy.act(acting.observation, acting.mask, ctx)
                # The Go oracle and the Python one agree on where to go.
                assert action == example.oracle(strategy.spec)(acting.observation, acting.mask)
            else:
                action = 1 if acting.mask[1] else int(np.flatnonzero(acting.mask)[0])
            turn = env.step(action)
            reached |= any(r.agent == "strategy" and r.terminated for r in turn.reports.values())
        assert reached
        # A batch and a stream give the same actions as single calls.
        obs = np.stack([seen.observation] * 3)
        masks = np.stack([seen.mask, np.ones(4, bool), seen.mask])
        batch = strategy.act_batch(obs, masks)
        assert list(batch) == list(strategy.stream(zip(obs, masks))) == [strategy.act(o, m) for o, m in zip(obs, masks)]
