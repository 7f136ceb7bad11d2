"""Logs of every example environment read by baton.load and by the readers the documentation
names (pyarrow.dataset, polars), value by value against the Go reader
(``tools/arrowcheck/dump -rows``): the maze (two agents, masks, parent ids), the cart-pole
(Box observations with infinite bounds, no mask) and the web tester (metrics), each
written with no compression, LZ4 and ZSTD bodies, in many small batches and parts,
and with a part whose writer was killed before its footer."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import warnings

import gymnasium
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import baton
from conftest import REPO_ROOT


@pytest.fixture(scope="session")
def tools(tmp_path_factory):
    """mklog, dump and mkrich (testdata/mkrich: a synthetic log of every action kind,
    with retroactive rewards and messages), built once."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build tools/arrowcheck/mklog and dump")
    out = tmp_path_factory.mktemp("tools")
    for name, pkg in (("mklog", "./tools/arrowcheck/mklog"), ("dump", "./tools/arrowcheck/dump"),
                      ("mkrich", "./python/tests/testdata/mkrich")):
        r = subprocess.run(["go", "build", "-o", str(out / name), pkg], cwd=REPO_ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"go build {pkg} failed:\n{r.stderr}")
    return out


def dump(tools, d: str) -> dict:
    """The Go reader's view of the log in d, every row's values included."""
    r = subprocess.run([str(tools / "dump"), "-rows", d], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


ENVS = {
    # env: trials (2 episodes each)
    "maze": 6,
    "cartpole": 6,
    "webtest": 2,
}
CODECS = {
    # compression: rows per batch, bytes per part
    "none": (32, 32 << 10),
    "lz4": (16, 8 << 10),
    "zstd": (24, 12 << 10),
}
LOGS = [(env, codec) for env in ENVS for codec in CODECS]


def mklog(tools, d: str, env: str, codec: str) -> None:
    rows, part = CODECS[codec]
    r = subprocess.run([str(tools / "mklog"), "-dir", d, "-env", env, "-trials", str(ENVS[env]), "-episodes", "2",
                        "-compression", codec, "-batch-rows", str(rows), "-part-bytes", str(part)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def cut_last_parts(d: str) -> list[str]:
    """Cuts the last part of every agent's folder to 60% of its size, as a writer killed
    mid-part leaves it (no footer, a batch cut short)."""
    cut = []
    for name in sorted(os.listdir(d)):
        if not name.startswith("agent="):
            continue
        folder = os.path.join(d, name)
        path = os.path.join(folder, sorted(os.listdir(folder))[-1])
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) * 6 // 10)
        cut.append(path)
    return cut


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: f"{p[0]}-{p[1]}")
def small_log(request, tools, tmp_path_factory):
    """A log in many batches and parts, and the Go reader's dump of it."""
    env, codec = request.param
    d = str(tmp_path_factory.mktemp("log") / env)
    mklog(tools, d, env, codec)
    return d, dump(tools, d)


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: f"{p[0]}-{p[1]}")
def cut_log(request, tools, tmp_path_factory):
    """A log whose agents' last parts lost their footers, and the Go reader's dump of
    it (the complete batches of the cut parts)."""
    env, codec = request.param
    d = str(tmp_path_factory.mktemp("cut") / env)
    mklog(tools, d, env, codec)
    cut = cut_last_parts(d)
    return d, dump(tools, d), cut


def make_rich(tools, tmp_path_factory, codec: str, cut: bool):
    """The synthetic log of testdata/mkrich (every action kind, Dict, Tuple and Text
    observations, infinities, masks left out, retroactive rewards, messages, metrics
    left untold, a failed trial), whole or with its agents' last parts cut; the Go
    reader's dump of it; the parts cut."""
    d = str(tmp_path_factory.mktemp("rich") / "log")
    rows, part = CODECS[codec]
    r = subprocess.run([str(tools / "mkrich"), "-dir", d, "-compression", codec, "-batch-rows", str(rows // 4),
                        "-part-bytes", str(part // 4)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cuts = cut_last_parts(d) if cut else []
    return d, dump(tools, d), cuts


@pytest.fixture(scope="module", params=[(c, cut) for c in CODECS for cut in (False, True)],
                ids=lambda p: f"{p[0]}{'-cut' if p[1] else ''}")
def rich_log(request, tools, tmp_path_factory):
    return make_rich(tools, tmp_path_factory, *request.param)


@pytest.fixture(scope="module", params=list(CODECS))
def whole_rich_log(request, tools, tmp_path_factory):
    return make_rich(tools, tmp_path_factory, request.param, False)


# ---------------------------------------------------------------------------------
# The Go reader's rows as the columns of baton.load.


def f32(values) -> np.ndarray:
    """Floats of the dump ("inf", "-inf" and "nan" as strings) as float32."""
    return np.array(values, dtype=np.float32)


def sources(entries) -> list[tuple[str, np.float32]]:
    return [(e["source"], np.float32(e["value"])) for e in entries]


def messages(entries) -> list[tuple[str, str, bytes, int]]:
    return [(m["from"], m["to"], base64.b64decode(m["payload"]), m["sent"]) for m in entries]


def table_sources(lists) -> list[list[tuple[str, np.float32]]]:
    return [[(e["source"], np.float32(e["value"])) for e in (row or [])] for row in lists]


def table_messages(lists) -> list[list[tuple[str, str, bytes, int]]]:
    return [[(m["from"], m["to"], bytes(m["payload"]), m["sent"]) for m in (row or [])] for row in lists]


class GoRows:
    """Every column of an agent's rows as the Go reader read them."""

    def __init__(self, w: dict):
        rows = w["row_values"]
        self.n = len(rows)
        self.trial_id = [r["trial_id"] for r in rows]
        self.agent_id = [r["agent_id"] for r in rows]
        self.parent_agent_id = [r["parent_agent_id"] for r in rows]
        for c in ("episode", "tick", "index", "span_ticks"):
            setattr(self, c, np.array([r[c] for r in rows], dtype=np.int64))
        for c in ("start", "acting", "terminated", "truncated"):
            setattr(self, c, np.array([r[c] for r in rows], dtype=bool))
        self.observation = f32([r["observation"] for r in rows]).reshape(self.n, w["observation_dim"])
        self.action = [r["action"] for r in rows]
        self.mask = [r["action_mask"] for r in rows]
        self.reward = f32([r["reward"] for r in rows])
        self.sources = [sources(r["reward_sources"]) for r in rows]
        self.retro = [sources(r["retro"]) for r in rows]
        self.messages = [messages(r["messages"]) for r in rows]


def check_scalars(got: dict, want: GoRows) -> None:
    """The scalar columns of a reader (lists or numpy arrays) against the Go rows."""
    assert list(got["trial_id"]) == want.trial_id
    assert list(got["agent_id"]) == want.agent_id
    assert [None if p is None else p for p in got["parent_agent_id"]] == want.parent_agent_id
    for c in ("episode", "tick", "index", "span_ticks", "start", "acting", "terminated", "truncated"):
        np.testing.assert_array_equal(np.asarray(got[c]), getattr(want, c), err_msg=c)
    np.testing.assert_array_equal(np.asarray(got["observation"], dtype=np.float32), want.observation)


def check_agent(a: baton.AgentData, w: dict) -> None:
    """Every column of baton.load's AgentData, and its table, against the Go reader."""
    want = GoRows(w)
    c = a.columns
    assert len(a) == w["rows"] == want.n
    assert (a.observation_space.flat_dim, a.mask_len) == (w["observation_dim"], w["mask_len"])
    check_scalars(c, want)
    assert c["observation"].dtype == np.float32 and c["observation"].shape == (want.n, w["observation_dim"])

    # Actions: null (action_valid False, 0 in the array) exactly on start rows.
    valid = np.array([x is not None for x in want.action])
    np.testing.assert_array_equal(c["action_valid"], valid)
    np.testing.assert_array_equal(valid, ~want.start)
    if isinstance(a.action_space, baton.spaces.Discrete):
        assert c["action"].dtype == np.int64 and c["action"].shape == (want.n,)
        np.testing.assert_array_equal(c["action"], [0 if x is None else x for x in want.action])
    else:
        dim = w["action_dim"]
        dtype = np.float32 if isinstance(a.action_space, baton.spaces.Box) else np.int64
        expect = np.array([[0] * dim if x is None else x for x in want.action], dtype=dtype)
        assert c["action"].dtype == dtype
        np.testing.assert_array_equal(c["action"], expect)

    # Masks: (N, mask_len) bool, False where a row has none.
    if w["mask_len"]:
        expect = np.array([[False] * w["mask_len"] if m is None else m for m in want.mask], dtype=bool)
        np.testing.assert_array_equal(c["action_mask"], expect)
    else:
        assert "action_mask" not in c
        assert all(m is None for m in want.mask)

    # Rewards: the step's reward, plus its retroactive rewards in reward and retro_reward.
    retro = f32([sum((v for _, v in r), np.float32(0)) for r in want.retro])
    np.testing.assert_array_equal(c["retro_reward"], retro)
    np.testing.assert_array_equal(c["reward"], (want.reward + retro).astype(np.float32))
    assert table_sources(a.table.column("reward_sources").to_pylist()) == [
        s + r for s, r in zip(want.sources, want.retro)]
    assert table_messages(a.table.column("messages").to_pylist()) == want.messages

    # The reshaped views and the spaces, as real Gymnasium spaces that hold the rows;
    # the same from the table's pyarrow schema.
    assert baton.spaces_from_schema(a.table) == a.spaces
    assert baton.spaces_from_schema(a.table.schema, gymnasium=False) == (a.observation_space, a.action_space, a.mask_len)
    obs_space = a.spaces.observation
    assert isinstance(obs_space, gymnasium.spaces.Space)
    assert gymnasium.spaces.flatdim(obs_space) == w["observation_dim"]
    # A raw action: one int for a Discrete, else one entry per element of the shape.
    assert w["action_dim"] == (1 if isinstance(a.spaces.action, gymnasium.spaces.Discrete)
                                else int(np.prod(a.spaces.action.shape)))
    if isinstance(obs_space, gymnasium.spaces.Box):
        np.testing.assert_array_equal(a.observations, want.observation.reshape((want.n,) + obs_space.shape))
        flat_low, flat_high = obs_space.low.ravel(), obs_space.high.ravel()
        assert ((want.observation >= flat_low) & (want.observation <= flat_high)).all()
    else:
        # Dict, Tuple, Text: baton's unflatten of the whole column is gymnasium's of each row.
        batch = a.observations
        for i in range(0, want.n, 7):
            same_value(row_of(batch, i), gym_unflatten(obs_space, want.observation[i]))
    if isinstance(a.spaces.action, gymnasium.spaces.Discrete):
        acts = c["action"][valid]
        assert ((acts >= a.spaces.action.start) & (acts < a.spaces.action.start + a.spaces.action.n)).all()

    # Every row that is not a start row ends a transition begun on the previous row of
    # its agent id (datalog/doc.go, "Transitions").
    t = a.transitions()
    np.testing.assert_array_equal(np.sort(t.row), np.flatnonzero(~want.start))
    np.testing.assert_array_equal(t.next_obs, want.observation[t.row])
    np.testing.assert_array_equal(t.obs, want.observation[t.prev_row])
    np.testing.assert_array_equal(t.reward, want.reward[t.row] + retro[t.row])
    np.testing.assert_array_equal(t.tick - t.span_ticks, want.tick[t.prev_row])
    assert [want.agent_id[i] for i in t.prev_row] == [want.agent_id[i] for i in t.row]
    assert want.acting[t.prev_row].all()


def gym_unflatten(space, flat: np.ndarray):
    """gymnasium.spaces.utils.unflatten, each leaf given the dtype gymnasium's flatten
    gives it (a Text's charset indices as int32, which it needs)."""
    gsu = gymnasium.spaces.utils
    if isinstance(space, (gymnasium.spaces.Dict, gymnasium.spaces.Tuple)):
        items = list(space.spaces.items()) if isinstance(space, gymnasium.spaces.Dict) else list(enumerate(space))
        out, at = {}, 0
        for k, s in items:
            n = gsu.flatdim(s)
            out[k] = gym_unflatten(s, flat[at : at + n])
            at += n
        return out if isinstance(space, gymnasium.spaces.Dict) else tuple(out.values())
    if isinstance(space, gymnasium.spaces.Text):
        return gsu.unflatten(space, flat.astype(np.int32))
    return gsu.unflatten(space, flat.astype(space.dtype))


def row_of(batch, i: int):
    if isinstance(batch, dict):
        return {k: row_of(v, i) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(row_of(v, i) for v in batch)
    return batch[i]


def same_value(got, want) -> None:
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            same_value(got[k], want[k])
    elif isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_value(g, w)
    elif isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def check_side_tables(log: baton.Log, want: dict) -> None:
    """The episodes, trials and rewards tables against the Go reader."""
    eps = log.episodes.to_pylist()
    assert len(eps) == len(want["episodes"])
    for got, w in zip(eps, want["episodes"]):
        assert (got["trial_id"], got["episode"], str(got["seed"]), got["ticks"], got["truncated"]) == (
            w["trial"], w["episode"], w["seed"], w["ticks"], w["truncated"])
        assert got["success"] == w["success"]
        assert {r["agent"]: r["value"] for r in got["returns"]} == w["returns"]
        assert {m["name"]: m["value"] for m in got["metrics"]} == w["metrics"]
    metrics = log.episode_metrics()
    assert sorted(metrics) == sorted({k for w in want["episodes"] for k in w["metrics"]})
    for name, values in metrics.items():
        expect = [w["metrics"].get(name, np.nan) for w in want["episodes"]]
        np.testing.assert_array_equal(values, expect)

    latest = {}
    for row in log.trials.to_pylist():  # in the order the states were logged
        latest[row["trial_id"]] = row
    assert sorted(latest) == [t["id"] for t in want["trials"]]
    for t in want["trials"]:
        row = latest[t["id"]]
        assert (row["state"], row["env"], str(row["seed"]), row["episodes"]) == (
            t["state"].lower(), t["env"], t["seed"], t["episodes"])

    if log.rewards is None:
        assert want["rewards"] == 0
    else:
        got = log.rewards.to_pylist()
        assert [(r["trial_id"], r["episode"], r["tick"], r["agent"], r["agent_id"], r["source"],
                 np.float32(r["value"]), r["arrived_episode"], r["arrived_tick"]) for r in got] == [
            (r["trial_id"], r["episode"], r["tick"], r["agent"], r["agent_id"], r["source"],
             np.float32(r["value"]), r["arrived_episode"], r["arrived_tick"]) for r in want.get("retro", [])]


def count_batches(folder: str) -> tuple[int, int]:
    """(parts, record batches) of an agent's folder."""
    parts = sorted(os.listdir(folder))
    batches = sum(pa.ipc.open_file(os.path.join(folder, p)).num_record_batches for p in parts)
    return len(parts), batches


# ---------------------------------------------------------------------------------
# baton.load.


def test_load_matches_the_go_reader(small_log):
    d, want = small_log
    log = baton.load(d)
    assert sorted(log) == sorted(want["agents"])
    for name, a in log.items():
        parts, batches = count_batches(os.path.join(d, f"agent={name}"))
        assert parts >= 2 and batches > parts, "the log must span several parts of several batches"
        check_agent(a, want["agents"][name])
    check_side_tables(log, want)


def test_a_part_cut_before_its_footer_reads_its_complete_batches(cut_log):
    d, want, cut = cut_log
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = baton.load(d)
    warned = {str(w.message).split(" has no footer")[0] for w in caught if "has no footer" in str(w.message)}
    assert warned == set(cut)
    for name, a in log.items():
        # The Go reader reads the same complete batches of the cut part: no fewer rows.
        assert want["agents"][name]["rows"] > 0
        check_agent(a, want["agents"][name])
    check_side_tables(log, want)


@pytest.mark.parametrize("size", [0, 5, 8, 60, 300])
def test_a_part_cut_before_its_first_batch_reads_as_empty(tools, tmp_path, size):
    """A writer killed before its magic (0 or 5 bytes), its schema (8, 60) or its first
    batch (300): the Go reader reads such a part as empty, and so does baton.load."""
    d = str(tmp_path / "log")
    mklog(tools, d, "cartpole", "lz4")
    folder = os.path.join(d, "agent=cartpole")
    path = os.path.join(folder, sorted(os.listdir(folder))[-1])
    with open(path, "r+b") as f:
        f.truncate(size)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = baton.load(d)
    assert any(str(w.message).startswith(f"{path} has no footer") for w in caught)
    want = dump(tools, d)
    check_agent(log["cartpole"], want["agents"]["cartpole"])
    check_side_tables(log, want)


def test_a_file_that_is_no_part_is_an_error(tools, tmp_path):
    d = str(tmp_path / "log")
    mklog(tools, d, "cartpole", "none")
    folder = os.path.join(d, "agent=cartpole")
    path = os.path.join(folder, sorted(os.listdir(folder))[0])
    with open(path, "r+b") as f:
        f.write(b"PARQUET")
    with pytest.raises(ValueError, match="does not start with the Arrow magic") as e:
        baton.load(d)
    assert path in str(e.value)
    r = subprocess.run([str(tools / "dump"), d], capture_output=True, text=True)
    assert r.returncode != 0 and "Arrow magic" in r.stderr  # the Go reader refuses it too


def test_load_selected_agents(small_log):
    d, want = small_log
    name = sorted(want["agents"])[-1]
    log = baton.load(d, agents=[name])
    assert list(log) == [name]
    check_agent(log[name], want["agents"][name])
    with pytest.raises(KeyError, match="nobody"):
        baton.load(d, agents=["nobody"])
    assert list(baton.load(d, agents=name)) == [name]  # one name, not its letters


# ---------------------------------------------------------------------------------
# pyarrow.dataset and polars open the log unchanged.


def arrow_columns(t: pa.Table) -> dict:
    """An agent's table, read by a reader other than baton.load, as plain columns."""
    obs = t.column("observation").combine_chunks()
    dim = obs.type.list_size
    return {
        "trial_id": t.column("trial_id").to_pylist(),
        "agent_id": t.column("agent_id").to_pylist(),
        "parent_agent_id": t.column("parent_agent_id").to_pylist(),
        **{c: t.column(c).to_numpy() for c in ("episode", "tick", "index", "span_ticks", "start", "acting",
                                                "terminated", "truncated")},
        "observation": obs.flatten().to_numpy().reshape(len(obs), dim),
        "action": t.column("action").to_pylist(),
        "action_mask": t.column("action_mask").to_pylist() if "action_mask" in t.column_names else None,
        "reward": t.column("reward").to_numpy(),
        "reward_sources": t.column("reward_sources").to_pylist(),
        "messages": t.column("messages").to_pylist(),
    }


def check_plain(got: dict, w: dict) -> None:
    want = GoRows(w)
    check_scalars(got, want)
    box = w["action_space"]["type"] == "box"

    def norm(a):
        if a is None or isinstance(a, int):
            return a
        return f32(list(a)).tolist() if box else [int(x) for x in a]

    assert [norm(a) for a in got["action"]] == [norm(a) for a in want.action]
    if w["mask_len"]:
        assert [None if m is None else list(m) for m in got["action_mask"]] == want.mask
    np.testing.assert_array_equal(got["reward"], want.reward)
    assert table_sources(got["reward_sources"]) == want.sources
    assert table_messages(got["messages"]) == want.messages


def test_pyarrow_dataset_reads_the_log(small_log):
    d, want = small_log
    for name, w in want["agents"].items():
        # One agent's folder at a time: the agents' observations differ in size.
        t = pads.dataset(os.path.join(d, f"agent={name}"), format="arrow").to_table()
        check_plain(arrow_columns(t), w)


def polars_columns(df: pl.DataFrame) -> dict:
    got = {c: df[c].to_list() for c in ("trial_id", "agent_id", "parent_agent_id", "action",
                                         "reward_sources", "messages")}
    for c in ("episode", "tick", "index", "span_ticks", "start", "acting", "terminated", "truncated", "reward"):
        got[c] = df[c].to_numpy()
    got["observation"] = df["observation"].to_numpy()
    got["action_mask"] = df["action_mask"].to_list() if "action_mask" in df.columns else None
    return got


def test_polars_reads_the_log(small_log):
    d, want = small_log
    for name, w in want["agents"].items():
        df = pl.scan_ipc(os.path.join(d, f"agent={name}", "*.arrow")).collect()
        assert df.height == w["rows"]
        check_plain(polars_columns(df), w)
        summary = pl.scan_ipc(os.path.join(d, f"agent={name}", "*.arrow")).select(
            pl.len().alias("rows"), pl.col("start").sum().alias("start"), pl.col("tick").sum().alias("ticks")
        ).collect()
        assert summary.row(0, named=True) == {"rows": w["rows"], "start": w["start"], "ticks": w["tick_sum"]}


# ---------------------------------------------------------------------------------
# The synthetic log: what the example environments leave out.


def test_load_reads_every_kind_of_column(rich_log):
    d, want, cut = rich_log
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = baton.load(d)
    assert {str(w.message).split(" has no footer")[0] for w in caught if "has no footer" in str(w.message)} == set(cut)
    assert sorted(log) == ["chooser", "mover", "picker", "switcher"]
    for name, a in log.items():
        check_agent(a, want["agents"][name])
        # Retroactive rewards added, the table keeps the log's schema (dictionaries,
        # nullability), as pyarrow.dataset reads it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = baton.read_table(os.path.join(d, f"agent={name}"))
        assert a.table.schema.equals(raw.schema, check_metadata=True)
    check_side_tables(log, want)
    assert want["rewards"] > 0 and any(w["retro_sum"] for w in want["agents"].values())
    assert any(w["messages"] for w in want["agents"].values())
    # The spaces as gymnasium built them by hand.
    gs = gymnasium.spaces
    chooser, mover = log["chooser"].spaces, log["mover"].spaces
    assert chooser.action == gs.Discrete(4, start=2) and chooser.mask_len == 4
    assert list(chooser.observation.keys()) == ["pos", "name", "door"]
    assert chooser.observation["name"] == gs.Text(4, min_length=0, charset="xyz")
    assert mover.action == gs.Box(-1, 1, shape=(3,), dtype=np.float32)
    assert mover.observation == gs.Box(-np.inf, np.inf, shape=(2, 2), dtype=np.float32)
    assert log["picker"].spaces.action == gs.MultiDiscrete([3, 5])
    assert log["switcher"].spaces.action == gs.MultiBinary(3)
    assert log["switcher"].actions.shape == (len(log["switcher"]), 3)
    assert log["mover"].actions.dtype == np.float32


def test_load_without_retroactive_rewards(rich_log):
    d, want, _ = rich_log
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = baton.load(d, retro=False)
    for name, a in log.items():
        w = GoRows(want["agents"][name])
        np.testing.assert_array_equal(a.columns["reward"], w.reward)
        assert not a.columns["retro_reward"].any()
        assert table_sources(a.table.column("reward_sources").to_pylist()) == w.sources


def test_other_readers_read_every_kind_of_column(whole_rich_log):
    # pyarrow.dataset and polars need the footers (`baton log recover` writes them).
    d, want, _ = whole_rich_log
    for name, w in want["agents"].items():
        t = pads.dataset(os.path.join(d, f"agent={name}"), format="arrow").to_table()
        check_plain(arrow_columns(t), w)
        check_plain(polars_columns(pl.scan_ipc(os.path.join(d, f"agent={name}", "*.arrow")).collect()), w)
