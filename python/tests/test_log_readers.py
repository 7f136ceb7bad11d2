"""Logs of several shapes read by baton.load and by the readers the README names
(pyarrow.dataset, polars), against the Go reader's figures (tools/arrowcheck/dump): many
small batches and parts per agent, LZ4 and ZSTD bodies, the cart-pole's Box
observations, and a part whose writer was killed before its footer."""

import json
import os
import shutil
import subprocess
import warnings

import numpy as np
import polars as pl
import pyarrow.dataset as pads
import pytest

import baton
from conftest import REPO_ROOT


@pytest.fixture(scope="session")
def tools(tmp_path_factory):
    """mklog and dump, built once."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build tools/arrowcheck/mklog and dump")
    out = tmp_path_factory.mktemp("tools")
    for name in ("mklog", "dump"):
        r = subprocess.run(["go", "build", "-o", str(out / name), f"./tools/arrowcheck/{name}"],
                           cwd=REPO_ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"go build ./tools/arrowcheck/{name} failed:\n{r.stderr}")
    return out


def dump(tools, d):
    r = subprocess.run([str(tools / "dump"), d], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


LOGS = [
    # env, compression, rows per batch, bytes per part
    ("maze", "zstd", 64, 65536),
    ("maze", "lz4", 16, 8192),
    ("cartpole", "lz4", 32, 16384),
    ("cartpole", "none", 1000, 1 << 20),
]


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: f"{p[0]}-{p[1]}-{p[2]}rows")
def small_log(request, tools, tmp_path_factory):
    env, compression, rows, part = request.param
    d = str(tmp_path_factory.mktemp("log") / env)
    r = subprocess.run([str(tools / "mklog"), "-dir", d, "-env", env, "-trials", "10", "-episodes", "2",
                        "-compression", compression, "-batch-rows", str(rows), "-part-bytes", str(part)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d, dump(tools, d)


def check_agent(a, w):
    c = a.columns
    assert len(a) == w["rows"]
    assert c["observation"].shape == (w["rows"], w["observation_dim"])
    assert int(c["start"].sum()) == w["start"]
    assert int((~c["action_valid"]).sum()) == w["action_null"]
    assert int(c["terminated"].sum()) == w["terminated"]
    assert int(c["tick"].sum()) == w["tick_sum"]
    checksum = float((c["observation"].astype(np.float64) * np.arange(1, w["observation_dim"] + 1)).sum())
    assert checksum == pytest.approx(w["obs_checksum"], rel=1e-9)
    assert float(c["reward"].astype(np.float64).sum()) == pytest.approx(w["reward_sum"] + w["retro_sum"], rel=1e-6, abs=1e-6)
    if "action_mask" in c:
        assert int(c["action_mask"].sum()) == w["mask_true"]


def test_load_matches_the_go_reader(small_log):
    d, want = small_log
    log = baton.load(d)
    assert sorted(log) == sorted(want["agents"])
    assert log.episodes.num_rows == len(want["episodes"])
    for name, a in log.items():
        w = want["agents"][name]
        # Several parts per agent where the parts are small: their order is the log's.
        check_agent(a, w)
        assert a.observations.shape == (w["rows"],) + a.observation_space.shape
        assert len(a.transitions()) == w["rows"] - w["start"]


def test_pyarrow_dataset_and_polars_read_the_log(small_log):
    d, want = small_log
    for name, w in want["agents"].items():
        # One agent's folder at a time: the agents' observations differ in size.
        t = pads.dataset(os.path.join(d, f"agent={name}"), format="arrow").to_table()
        assert (t.num_rows, t.column("observation").type.list_size) == (w["rows"], w["observation_dim"])
        assert t.column("tick").to_numpy().sum() == w["tick_sum"]
        df = pl.scan_ipc(os.path.join(d, f"agent={name}", "*.arrow")).select(
            pl.len().alias("rows"), pl.col("start").sum().alias("start"), pl.col("tick").sum().alias("ticks")
        ).collect()
        assert df.row(0, named=True) == {"rows": w["rows"], "start": w["start"], "ticks": w["tick_sum"]}


def test_a_part_cut_before_its_footer_reads_its_complete_batches(tools, tmp_path):
    d = str(tmp_path / "log")
    r = subprocess.run([str(tools / "mklog"), "-dir", d, "-env", "maze", "-trials", "10", "-episodes", "2",
                        "-compression", "lz4", "-batch-rows", "64", "-part-bytes", "65536"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    folder = os.path.join(d, "agent=motion")
    last = sorted(os.listdir(folder))[-1]
    path = os.path.join(folder, last)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) * 6 // 10)  # a writer killed mid-part
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = baton.load(d)
    assert any("has no footer" in str(w.message) for w in caught)
    # The Go reader reads the same complete batches of the cut part.
    check_agent(log["motion"], dump(tools, d)["agents"]["motion"])
