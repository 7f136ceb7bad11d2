"""python -m baton.bench end to end at tiny sizes (--quick): the table's rows, their
yardsticks and positive ratios; not speed, which a shared machine cannot promise."""

import json
import subprocess
import sys

import pytest

from baton import bench

pytestmark = pytest.mark.go

STATUSES = {"met aim", "met bar", "met", "missed", "no bar"}


@pytest.fixture(scope="module")
def table():
    r = subprocess.run([sys.executable, "-m", "baton.bench", "--quick", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_rows_and_yardsticks(table):
    names = [(row["name"], row["yardstick"]) for row in table["rows"]]
    want = [
        ("CartPole N=64, fast lane", "Go VectorCartPole/N=64/sync"),
        ("CartPole N=64, fast lane", "Gymnasium CartPoleVectorEnv"),
        ("CartPole N=64, fast lane", "EnvPool CartPole-v1, 1 thread"),
        ("CartPole N=64, fast lane, workers=2", "fast lane, workers=1"),
        ("CartPole N=64, baton.make_vec (NEXT_STEP, copies)", "fast lane, zero copy"),
        ("CartPole N=64, baton.make_vec (SAME_STEP, copies)", "fast lane, zero copy"),
        ("Maze N=16 hierarchical, fast lane", "Go VectorMaze/N=16/sync"),
        ("CartPole N=64, fast lane recording (log=)", "fast lane, no log"),
        ("Maze N=16 hierarchical, fast lane recording (log=)", "fast lane, no log"),
    ]
    assert names[: len(want)] == want
    assert names[9][0].startswith("Recording 5 CartPole episodes")
    assert names[10][0] == "Recording, bytes on disk per env step"
    assert names[11][0].startswith("Memory, RSS over")
    assert names[12:] == [
        ("Remote CartPole N=16, loopback gRPC, batched", "one gRPC call per step (RemoteEnv)"),
        ("Remote CartPole N=16, loopback gRPC, batched", "the target, 500k steps/s"),
        ("Remote Maze N=16 hierarchical, loopback gRPC, batched", "one gRPC call per step (RemoteMultiAgentEnv)"),
        ("Remote Maze N=16 hierarchical, loopback gRPC, batched", "fast lane in process, N=16"),
        ("Remote Maze N=16 hierarchical, loopback gRPC, batched", "the target, 200k steps/s"),
    ]
    assert table["sizes"]["rounds"] == 1


def test_figures_ratios_and_status(table):
    for row in table["rows"]:
        assert row["figure"] > 0, row
        assert row["yardstick_figure"] > 0, row
        assert row["ratio"] > 0, row
        assert row["status"] in STATUSES, row
        for key in ("bar", "aim"):
            assert row[key] is None or row[key] > 0, row
    bars = {(r["name"], r["yardstick"]): (r["bar"], r["aim"]) for r in table["rows"]}
    assert bars[("CartPole N=64, fast lane", "Go VectorCartPole/N=64/sync")] == (0.7, 0.9)
    assert bars[("CartPole N=64, fast lane, workers=2", "fast lane, workers=1")] == (None, 1.6)


def test_memory_and_recording_details(table):
    mem = next(r for r in table["rows"] if r["unit"] == "MiB")
    d = mem["detail"]
    assert len(d["samples"]) == 10
    assert d["peak_mib"] >= max(d["first_mib"], d["last_mib"])
    assert mem["higher_is_better"] is False
    rec = next(r for r in table["rows"] if r["unit"] == "B/step")["detail"]
    assert rec["episodes"] == 5
    assert rec["baton_env_steps"] >= 5 and rec["minari_env_steps"] >= 5
    assert rec["baton_bytes"] > 0 and rec["minari_bytes"] > 0


def test_status():
    row = bench.Row("r", "steps/s", 2, "y", 1, 0.8, 0.7, 0.9)
    assert row.status == "met bar"
    assert bench.Row("r", "steps/s", 2, "y", 1, 0.95, 0.7, 0.9).status == "met aim"
    assert bench.Row("r", "steps/s", 2, "y", 1, 0.5, 0.7, 0.9).status == "missed"
    assert bench.Row("r", "MiB", 2, "y", 1, 1.03, 1.05, 1.01, higher_is_better=False).status == "met bar"
    assert bench.Row("r", "B/step", 2, "y", 1, 1.2, 1.0, None, higher_is_better=False).status == "missed"
    assert bench.Row("r", "steps/s", 2, "y", 1, 0.5, None, None).status == "no bar"


def test_text_table(table):
    rows = [bench.Row(**{k: v for k, v in r.items() if k != "status"}) for r in table["rows"]]
    lines = bench.format_table(rows, bench.Sizes(**table["sizes"])).splitlines()
    assert lines[1].split()[:3] == ["row", "baton", "yardstick"]
    assert any(line.startswith("memory: first") for line in lines)


@pytest.mark.parametrize("args", [["--rounds", "0"], ["--seconds", "-1"], ["--episodes", "0"]])
def test_bad_flags(args):
    with pytest.raises(SystemExit) as e:
        bench.main(args)
    assert e.value.code == 2


def test_remote_curve():
    """--remote-curve: the batched remote maze over N, with the per-step figure."""
    r = subprocess.run([sys.executable, "-m", "baton.bench", "--quick", "--json", "--remote-curve", "4,8"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["per_step"] > 0
    assert set(out["batched"]) == {"4", "8"} and all(x > 0 for x in out["batched"].values())
