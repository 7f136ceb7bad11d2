"""baton.load against a real log, written by `baton run maze --log DIR` (needs go),
checked against the Go reader (tools/arrowcheck/dump)."""

import os
import sys

import numpy as np
import pytest

import baton
from baton import loader


def test_parts_are_ordered_by_shard_then_number(tmp_path):
    for name in ["part-00010.arrow", "part-00002.arrow", "part-w1-00001.arrow", "part-w0-00007.arrow",
                 "notes.txt", "part-3.arrow.tmp"]:
        (tmp_path / name).write_bytes(b"")
    got = [os.path.basename(p) for p in loader._parts(str(tmp_path))]
    assert got == ["part-00002.arrow", "part-00010.arrow", "part-w0-00007.arrow", "part-w1-00001.arrow"]


@pytest.mark.parametrize("name, want", [
    ("part-00001.arrow", ("", 1)),
    ("part-w0-00007.arrow", ("w0", 7)),
    ("part-a-b-00003.arrow", ("a-b", 3)),  # the shard ends at the last '-', as in Go
    ("part--00004.arrow", ("", 4)),
    ("part-123456.arrow", ("", 123456)),  # more digits than the writer pads to
    ("part-1_0.arrow", None),  # Python's int() would read these; Go's ParseInt does not
    ("part- 1.arrow", None),
    ("part-١.arrow", None),  # an Arabic-Indic digit
    ("part-9223372036854775808.arrow", None),  # past int64
    ("part-00001.arrow.tmp", None),
    ("notes.txt", None),
])
def test_part_names_parse_as_the_go_reader_does(name, want):
    assert loader._part_name(name) == want


def test_load_without_pyarrow_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow fails
    monkeypatch.setitem(sys.modules, "pyarrow.ipc", None)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        baton.load(str(tmp_path))


def test_load_maze_log(maze_log):
    d, want = maze_log
    log = baton.load(d)
    assert sorted(log) == sorted(want["agents"])
    assert log.episodes.num_rows == len(want["episodes"])
    for name, a in log.items():
        w = want["agents"][name]
        assert len(a) == a.table.num_rows == w["rows"]
        c = a.columns
        assert c["observation"].shape == (w["rows"], w["observation_dim"])
        assert c["observation"].dtype == np.float32
        # The observation space's shape: a Box for the maze agents.
        obs = a.observations
        assert obs.shape == (w["rows"],) + a.observation_space.shape
        assert int(c["start"].sum()) == w["start"]
        assert int((~c["action_valid"]).sum()) == w["action_null"]
        assert int(c["terminated"].sum()) == w["terminated"]
        assert int(c["tick"].sum()) == w["tick_sum"]
        assert len(set(zip(c["trial_id"], c["agent_id"]))) == w["agent_ids"]
        checksum = float((c["observation"].astype(np.float64) * np.arange(1, w["observation_dim"] + 1)).sum())
        assert checksum == pytest.approx(w["obs_checksum"], rel=1e-9)
        assert float(c["reward"].astype(np.float64).sum()) == pytest.approx(w["reward_sum"] + w["retro_sum"], rel=1e-6, abs=1e-6)
        if "action_mask" in c:
            assert int(c["action_mask"].sum()) == w["mask_true"]
        # Per-episode returns, as the Go reader sums them.
        for (trial, ep), ret in _returns(c).items():
            assert ret == pytest.approx(w["returns"][f"{trial}/{ep}"], rel=1e-6, abs=1e-6)
        # A complete log pairs every non-start row.
        t = a.transitions()
        assert len(t) == w["rows"] - w["start"]
        assert (t.tick - t.span_ticks >= 0).all()
        # The spaces rebuild from the table's schema as well.
        sp = baton.spaces_from_schema(a.table.schema, gymnasium=False)
        assert sp.observation == a.observation_space and sp.action == a.action_space


def test_episode_metrics(webtest_log):
    d, want = webtest_log
    log = baton.load(d)
    eps = log.episodes
    assert eps.num_rows == len(want["episodes"]) == 8
    assert "metrics" in eps.column_names
    m = log.episode_metrics()
    assert list(m) == ["coverage", "defects_found"]
    for name, values in m.items():
        assert values.dtype == np.float64 and values.shape == (eps.num_rows,)
        for i, ep in enumerate(want["episodes"]):
            assert ep["trial"] == eps.column("trial_id")[i].as_py()
            assert ep["episode"] == eps.column("episode")[i].as_py()
            assert values[i] == ep["metrics"][name], (name, i)
    assert ((m["coverage"] > 0) & (m["coverage"] <= 1)).all()
    assert (m["defects_found"] >= 0).all()


def test_episode_metrics_of_an_env_without_metrics(maze_log):
    d, want = maze_log
    log = baton.load(d)
    assert "metrics" in log.episodes.column_names
    assert log.episode_metrics() == {}
    assert all(ep["metrics"] == {} for ep in want["episodes"])


def test_load_one_agent(maze_log):
    d, want = maze_log
    log = baton.load(d, agents=["strategy"])
    assert list(log) == ["strategy"]
    with pytest.raises(KeyError):
        baton.load(d, agents=["nobody"])


def _returns(c):
    out = {}
    for trial, ep, r in zip(c["trial_id"], c["episode"].tolist(), c["reward"].astype(np.float64).tolist()):
        out[(trial, ep)] = out.get((trial, ep), 0.0) + r
    return out


def _copy_log(maze_log, tmp_path):
    import shutil

    d = str(tmp_path / "log")
    shutil.copytree(maze_log[0], d)
    return d


def test_load_refuses_an_unknown_format_version(maze_log, tmp_path):
    """A part of a later format version than the loader knows is refused, naming it,
    as the Go reader refuses it."""
    import pyarrow as pa

    d = _copy_log(maze_log, tmp_path)
    folder = os.path.join(d, "agent=motion")
    path = os.path.join(folder, sorted(os.listdir(folder))[0])
    table = pa.ipc.open_file(path).read_all()
    md = dict(table.schema.metadata)
    md[b"baton.format_version"] = b"99"
    table = table.replace_schema_metadata(md)
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    with pytest.raises(ValueError, match=r"part-\d+\.arrow: format version 99; this reader knows up to 2"):
        baton.load(d)


def test_load_refuses_a_flipped_bit(maze_log, tmp_path):
    """A bit flipped in the body of a batch fails its checksum: baton.load raises
    ValueError naming the part, where pyarrow alone would return other numbers."""
    import pyarrow as pa

    d = _copy_log(maze_log, tmp_path)
    folder = os.path.join(d, "agent=motion")
    path = os.path.join(folder, sorted(os.listdir(folder))[0])
    data = bytearray(open(path, "rb").read())
    reader = pa.ipc.MessageReader.open_stream(pa.py_buffer(bytes(data[8:])))
    at, target = 8, None
    while target is None:
        msg = reader.read_next_message()
        size = len(msg.serialize())
        if msg.type == "record batch":
            target = at + size - msg.body.size + msg.body.size // 2
        at += size
    data[target] ^= 0x10
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match=r"part-\d+\.arrow: message \d+ \(record batch\) has CRC-32 [0-9a-f]{8}, its metadata says"):
        baton.load(d)


def test_load_refuses_a_damaged_footer_schema(maze_log, tmp_path):
    """A bit flipped in the footer's copy of the schema (a field's name here), which
    pyarrow's file reader takes as the schema, is refused: the footer's schema must be
    the stream's."""
    import struct

    d = _copy_log(maze_log, tmp_path)
    folder = os.path.join(d, "agent=motion")
    path = os.path.join(folder, sorted(os.listdir(folder))[0])
    data = bytearray(open(path, "rb").read())
    (n,) = struct.unpack("<I", data[-10:-6])
    start = len(data) - 10 - n
    at = data.index(b"trial_id", start)
    data[at + 7] ^= 0x01  # trial_id -> trial_ie, in the footer only
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match=r"part-\d+\.arrow: the schema in its footer differs from its stream's"):
        baton.load(d)
