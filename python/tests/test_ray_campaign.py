"""baton.ray: a campaign as Ray tasks on a two-node cluster on this machine, one node
removed while a shard commits; the shard is retried on the other node, the log holds
every trial once and the summary is that of one baton run."""

import asyncio
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import threading

import pyarrow.dataset as pads
import psutil
import pytest
import ray
from ray.cluster_utils import Cluster

import baton
import baton.ray
import raylocal

TRIALS, SEED = 60, 7
LOOPBACK = "127.0.0.1"
# The fields of the summary that depend on the clock, or on how the log is cut into parts.
TIMING = {"wall_seconds", "steps_per_second"}
LAYOUT = {"dir", "parts", "bytes"}


@ray.remote(num_cpus=0)
class Gate:
    """Holds shard 0 at its first commit until the test has removed its node: the
    shard tells where it runs, and the test waits for that, not for a time."""

    def __init__(self):
        self.arrived = asyncio.Event()
        self.node = None
        self.held = False

    async def hold(self, stage, shard, node):
        if stage != "committing" or shard != 0 or self.held:
            return
        self.held, self.node = True, node
        self.arrived.set()
        await asyncio.Event().wait()  # until the node dies with the task

    async def wait(self):
        await self.arrived.wait()
        return self.node


def _hook(gate):
    def hook(stage, shard):
        ray.get(gate.hold.remote(stage, shard, ray.get_runtime_context().get_node_id()))

    return hook


def _start_head(monkeypatch):
    """A Cluster with its head node started, and its temp dir, through
    ``raylocal.retrying``: Ray gives a node a fixed 30 s to register with the GCS, and
    on a machine loaded past that a start is tried again on a new temp dir. Every
    node's files go under temp/ray, and so does the cluster's address file, which Ray
    writes under $RAY_TMPDIR/ray: nothing depends on a /tmp/ray left by an earlier run."""

    def begin(temp):
        monkeypatch.setenv("RAY_TMPDIR", temp)
        return Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "resources": {"head": 1}, "include_dashboard": False,
            "node_ip_address": LOOPBACK, "temp_dir": os.path.join(temp, "ray")})

    return raylocal.retrying(begin, prefix="bray")


@pytest.fixture
def cluster(monkeypatch):
    c, temp = _start_head(monkeypatch)
    try:
        nodes = [c.add_node(num_cpus=1, node_ip_address=LOOPBACK) for _ in range(2)]
        ray.init(address=c.address)
        c.wait_for_nodes()
        yield c, nodes
    finally:
        ray.shutdown()
        c.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _listening(pids):
    """The addresses the processes pids listen on over TCP."""
    return {(con.laddr.ip, con.pid) for con in psutil.net_connections("tcp")
            if con.status == psutil.CONN_LISTEN and con.pid in pids}


def _loopback(ip):
    a = ipaddress.ip_address(ip)
    return (getattr(a, "ipv4_mapped", None) or a).is_loopback


@pytest.mark.go
def test_cluster_on_loopback(cluster):
    """Every node of the test cluster announces 127.0.0.1, and every process Ray started
    listens on loopback only."""
    c, _ = cluster
    assert c.address.startswith(LOOPBACK + ":")
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {LOOPBACK}
    me = psutil.Process()
    pids = {p.pid for p in me.children(recursive=True)}
    seen = _listening(pids)
    assert seen, "Ray's processes listen nowhere"
    outside = {(ip, psutil.Process(pid).name()) for ip, pid in seen if not _loopback(ip)}
    assert not outside, f"Ray listens beyond loopback: {sorted(outside)}"


@pytest.mark.go
def test_node_removed_mid_commit(cluster, tmp_path):
    c, nodes = cluster
    exe = baton.ray.binary()
    gate = Gate.options(resources={"head": 0.01}).remote()
    log = tmp_path / "log"
    out = {}

    def drive():
        try:
            out["summary"] = baton.ray.run_campaign("maze", TRIALS, 2, log, seed=SEED, episodes=2, hook=_hook(gate))
        except BaseException as e:  # reported by the test's thread
            out["error"] = e

    t = threading.Thread(target=drive)
    t.start()
    node_id = ray.get(gate.wait.remote(), timeout=120)
    victim = next(n for n in nodes if n.node_id == node_id)
    # Shard 0 has moved its first part into the log and waits: a half-committed shard.
    assert list(log.glob("*/part-s00000-*.arrow"))
    c.remove_node(victim)
    t.join(timeout=120)
    assert not t.is_alive()
    assert "error" not in out, out.get("error")
    got = out["summary"]

    one = subprocess.run([str(exe), "run", "maze", "--trials", str(TRIALS), "--seed", str(SEED), "--episodes", "2",
                          "--json", "--log", str(tmp_path / "one")], capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    want = json.loads(one.stdout)
    assert set(got) == set(want)
    for key in want:
        if key in TIMING:
            continue
        if key == "log":
            for k in want["log"]:
                if k not in LAYOUT:
                    assert got["log"][k] == want["log"][k], f"log.{k}"
            continue
        assert got[key] == want[key], key

    # Every trial once in the merged log: its trials table and baton's readers.
    trials = pads.dataset(str(log / "_trials"), format="arrow").to_table().to_pydict()
    ended = [tid for tid, st in zip(trials["trial_id"], trials["state"]) if st == "ended"]
    assert sorted(ended) == sorted(f"maze-{i}" for i in range(TRIALS))
    ins = json.loads(subprocess.run([str(exe), "inspect", str(log), "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    assert ins["trials"] == TRIALS and ins["rows"] == want["log"]["rows"]
    rep = subprocess.run([str(exe), "replay", str(log)], capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    loaded = baton.load(str(log))
    assert sum(loaded[name].table.num_rows for name in loaded) == want["log"]["rows"]
    assert loaded.trials.num_rows == 2 * TRIALS  # a row when each trial starts, one when it ends
    assert not (tmp_path / ".log.shards").exists()


@pytest.mark.parametrize(
    "trials, shards, want",
    [(10, 3, [(0, 4), (4, 3), (7, 3)]), (4, 4, [(0, 1), (1, 1), (2, 1), (3, 1)]), (3, 5, [(0, 1), (1, 1), (2, 1)]),
     (7, 1, [(0, 7)])],
)
def test_shard_ranges(trials, shards, want):
    assert baton.ray.shard_ranges(trials, shards) == want


@pytest.mark.parametrize("trials, shards", [(0, 2), (5, 0), (-1, -1)])
def test_shard_ranges_bad(trials, shards):
    with pytest.raises(ValueError, match=f"trials {trials}, shards {shards}: want 1 or more of each"):
        baton.ray.shard_ranges(trials, shards)


def test_log_not_empty(tmp_path):
    (tmp_path / "x").write_text("")
    with pytest.raises(baton.ray.ShardError, match="not an empty folder"):
        baton.ray.run_campaign("maze", 10, 2, tmp_path)
    assert not ray.is_initialized()


@pytest.mark.go
def test_command_line(tmp_path):
    """python -m baton.ray run on a local Ray instance of its own: the JSON summary is
    baton run's, apart from the timing and how the log is cut into parts."""
    exe = baton.ray.binary()
    flags = ["--seed", "3", "--policy", "motion=forward", "--env-config", '{"generate": {"rows": 15, "cols": 21, "seed": 4}}']
    r = subprocess.run([sys.executable, "-m", "baton.ray", "run", "maze", "--trials", "25", "--shards", "3",
                        "--log", str(tmp_path / "log"), "--json", *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    one = subprocess.run([str(exe), "run", "maze", "--trials", "25", "--json", "--log", str(tmp_path / "one"), *flags],
                         capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    want = json.loads(one.stdout)
    assert set(got) == set(want)
    for key in set(want) - TIMING - {"log"}:
        assert got[key] == want[key], key
    assert {k: v for k, v in got["log"].items() if k not in LAYOUT} == {k: v for k, v in want["log"].items() if k not in LAYOUT}
    assert got["log"]["parts"] == len(list((tmp_path / "log").rglob("part-s0000[0-2]-*.arrow")))
    bad = subprocess.run([sys.executable, "-m", "baton.ray", "run", "maze", "--shards", "0"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "trials 1000, shards 0: want 1 or more of each" in bad.stderr
