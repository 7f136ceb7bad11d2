"""Reading a baton log (datalog/doc.go) with pyarrow.

    import baton
    log = baton.load("/tmp/mazelog")
    strategy = log["strategy"]
    strategy.table            # pyarrow Table of the agent's steps, in the log's order
    strategy.observations     # numpy, in the observation space's shape: (N, 106) for the maze
    strategy.columns          # every column as numpy arrays (observation flat)
    t = strategy.transitions()  # baton.Transitions: obs, action, reward, next_obs, ...
    log.episodes              # pyarrow Table: one row per episode that ended
    log.episode_metrics()     # the environment's metrics per episode: {"coverage": array, ...}

pyarrow is imported when a log is loaded, not when baton is imported: the spaces and
the transitions work without it.
"""

from __future__ import annotations

import os
import re
import warnings
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from . import spaces as _spaces
from .experience import Transitions, build_transitions

__all__ = ["FORMAT_VERSION", "AgentData", "Log", "load", "read_table"]

#: The newest format version of a log that this loader reads (Go's datalog.FormatVersion):
#: a part of a later version is refused, as the Go reader refuses it. Version 2 added a
#: checksum to every record batch and dictionary batch.
FORMAT_VERSION = 2
_CHECKSUM_VERSION = 2
#: The key of a batch message's custom metadata whose value is the CRC-32 (zlib's) of the
#: message's body as it is in the file, in 8 lower-case hex digits.
_CHECKSUM_KEY = b"baton.crc32"

_NUMBER = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.ParseInt(s, 10, 64) reads
#: The 8 bytes that start an Arrow IPC file (the magic and its padding), and the magic
#: that ends one after its footer.
_MAGIC = b"ARROW1\x00\x00"
_FILE_MAGIC = b"ARROW1"

PYARROW_MISSING = (
    "baton.load needs pyarrow to read the Arrow files of a log: pip install pyarrow "
    "(conda install pyarrow; Debian and Ubuntu have no python3-pyarrow package). "
    "baton.spaces_from_schema and baton.build_transitions work without it."
)


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.ipc  # noqa: F401
    except ImportError as e:
        raise ImportError(PYARROW_MISSING) from e
    return pa


def _part_name(name: str) -> tuple[str, int] | None:
    """The shard and number of a part's file name, part-[SHARD-]NUMBER.arrow, as the
    Go side parses it (the shard ends at the last '-'); None for another file."""
    if not (name.startswith("part-") and name.endswith(".arrow")):
        return None
    rest = name[len("part-") : -len(".arrow")]
    shard, _, number = rest.rpartition("-")
    if not _NUMBER.fullmatch(number):
        return None
    n = int(number)
    return (shard, n) if 0 <= n < 1 << 63 else None


def _parts(folder: str) -> list[str]:
    """The parts of a table's folder in the order they were written: by shard, then
    number (part-[SHARD-]NNNNN.arrow)."""
    found = []
    for name in os.listdir(folder):
        parsed = _part_name(name)
        path = os.path.join(folder, name)
        if parsed is not None and os.path.isfile(path):
            found.append((parsed[0], parsed[1], path))
    found.sort()
    return [p for _, _, p in found]


def _read_part(pa: Any, path: str) -> Any | None:
    """One part as a Table, or None for a part that holds no schema yet.

    A part whose writer was killed has no footer: its complete batches are read as
    the IPC stream that follows the leading magic, with a warning (``baton log
    recover DIR`` rewrites such parts as proper files). As the Go reader does, a part
    cut before its magic, its schema or its first batch reads as empty; a file that
    does not start with the Arrow magic, a part of a format version later than
    FORMAT_VERSION and a damaged part (a batch whose checksum differs, a footer whose
    copy of the schema is not the stream's) are errors (ValueError naming it)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(len(_MAGIC))
    if head != _MAGIC:
        if size < len(_MAGIC) and _MAGIC.startswith(head):
            _warn_cut(path, 0)
            return None  # killed before its magic was written
        raise ValueError(f"{path}: does not start with the Arrow magic: not a part of a baton log")
    data = pa.memory_map(path, "r").read_buffer()
    if size >= len(_MAGIC) + 4 + len(_FILE_MAGIC) and data[size - len(_FILE_MAGIC):].to_pybytes() == _FILE_MAGIC:
        try:
            table = pa.ipc.open_file(data).read_all()
        except pa.ArrowInvalid:
            pass  # bytes of a batch that happen to end with the magic: read the stream
        else:
            _check_part(pa, path, data, table.schema, complete=True)
            # The footer's copy of the schema, which open_file read, is the stream's.
            stream = pa.ipc.open_stream(data[len(_MAGIC):]).schema
            if not stream.equals(table.schema, check_metadata=True):
                raise ValueError(f"{path}: the schema in its footer differs from its stream's: the part is damaged "
                                 "(`baton log recover` rewrites it)")
            return table
    try:
        reader = pa.ipc.open_stream(data[len(_MAGIC):])
    except (pa.ArrowInvalid, OSError, EOFError):
        _warn_cut(path, 0)
        return None  # no complete schema: no batches
    schema = reader.schema
    batches = []
    while True:
        try:
            batches.append(reader.read_next_batch())
        except StopIteration:
            break
        except (pa.ArrowInvalid, OSError, EOFError):
            break  # the incomplete batch the writer was killed in
    _check_part(pa, path, data, schema, complete=False)
    _warn_cut(path, len(batches))
    return pa.Table.from_batches(batches, schema=schema)


def _check_part(pa: Any, path: str, data: Any, schema: Any, complete: bool) -> None:
    """Refuses a part of a format version this loader does not know, as the Go reader
    does, and checks the checksum of every record batch and dictionary batch of a part
    of version 2 or later (ValueError naming the part): a bit flipped on disk is an
    error, not other numbers. A part cut by a killed writer is checked up to its cut."""
    md = schema.metadata or {}
    raw = md.get(b"baton.format_version")
    if raw is None:
        raise ValueError(f"{path}: no baton.format_version in its schema metadata: not a part of a baton log")
    try:
        version = int(raw)
    except ValueError:
        raise ValueError(f"{path}: baton.format_version {raw!r} is not a number: not a part of a baton log") from None
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{path}: format version {version}; this reader knows up to {FORMAT_VERSION} (a newer baton wrote it: upgrade baton)"
        )
    reader = pa.ipc.MessageReader.open_stream(data[len(_MAGIC):])
    n = 0
    while True:
        try:
            msg = reader.read_next_message()
        except StopIteration:
            return
        except (pa.ArrowInvalid, OSError, EOFError):
            if complete:
                raise ValueError(f"{path}: message {n} cannot be read: the part is damaged") from None
            return  # the message the writer was killed in
        n += 1
        if msg.type not in ("record batch", "dictionary batch"):
            continue
        try:
            want = _custom_value(msg.metadata.to_pybytes(), _CHECKSUM_KEY)
        except (IndexError, ValueError):
            raise ValueError(f"{path}: message {n - 1}: its metadata is damaged") from None
        if want is None:
            if version >= _CHECKSUM_VERSION:
                raise ValueError(f"{path}: message {n - 1} ({msg.type}) has no checksum: the part is damaged")
            continue
        got = b"%08x" % zlib.crc32(msg.body)
        if got != want:
            raise ValueError(
                f"{path}: message {n - 1} ({msg.type}) has CRC-32 {got.decode()}, its metadata says "
                f"{want.decode(errors='replace')}: the part is damaged (`baton log recover` keeps its intact batches)"
            )


def _custom_value(meta: bytes, key: bytes) -> bytes | None:
    """The value of key in the custom_metadata of the Message flatbuffer meta, None if
    it has none; IndexError for offsets outside meta."""

    def u32(o: int) -> int:
        if o < 0 or o + 4 > len(meta):
            raise IndexError(o)
        return int.from_bytes(meta[o : o + 4], "little")

    def u16(o: int) -> int:
        if o < 0 or o + 2 > len(meta):
            raise IndexError(o)
        return int.from_bytes(meta[o : o + 2], "little")

    def field(table: int, i: int) -> int:
        """The offset of field i of the table at table, 0 when absent."""
        vt = table - int.from_bytes(meta[table : table + 4], "little", signed=True)
        if 4 + 2 * i + 2 > u16(vt):
            return 0
        o = u16(vt + 4 + 2 * i)
        return table + o if o else 0

    def string(at: int) -> bytes:
        s = at + u32(at)
        n = u32(s)
        if s + 4 + n > len(meta):
            raise IndexError(s)
        return meta[s + 4 : s + 4 + n]

    root = u32(0)
    u32(root)
    at = field(root, 4)  # Message.custom_metadata
    if not at:
        return None
    vec = at + u32(at)
    for i in range(u32(vec)):
        e = vec + 4 + 4 * i
        kv = e + u32(e)
        u32(kv)
        k, v = field(kv, 0), field(kv, 1)
        if k and v and string(k) == key:
            return string(v)
    return None


def _warn_cut(path: str, batches: int) -> None:
    warnings.warn(
        f"{path} has no footer (its writer was killed?): read its {batches} complete "
        f"batches as a stream; run `baton log recover` on the log to fix it for other readers",
        stacklevel=4,
    )


def read_table(folder: str | os.PathLike[str]) -> Any | None:
    """Every part of one table's folder (an agent=NAME folder, _trials, _episodes or
    _rewards) as one pyarrow Table, in the order they were written; None if the folder
    has no part with a schema. The schema metadata is the first such part's. Parts cut
    by a killed writer give their complete batches, with a warning.

        episodes = baton.read_table("runs/maze/_episodes")
        episodes.column("ticks").to_numpy().mean()
    """
    folder = os.fspath(folder)
    pa = _pyarrow()
    tables = [t for t in (_read_part(pa, p) for p in _parts(folder)) if t is not None]
    if not tables:
        return None
    if len(tables) == 1:
        return tables[0]
    # The parts' schemas differ only in their metadata (the trial that opened each).
    first = tables[0].schema
    return pa.concat_tables([t.replace_schema_metadata(first.metadata) for t in tables])


# ---------------------------------------------------------------------------------
# Columns to numpy.


def _decode(chunk):
    import pyarrow as pa

    if pa.types.is_dictionary(chunk.type):
        return chunk.dictionary_decode()
    return chunk


def _numpy(col, dtype=None) -> np.ndarray:
    """A column of scalars as one numpy array (strings as an object array, None for
    nulls)."""
    parts = [_decode(c).to_numpy(zero_copy_only=False) for c in col.chunks]
    if not parts:
        return np.array([], dtype=dtype or object)
    out = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return out.astype(dtype, copy=False) if dtype is not None else out


def _fixed_lists(col, dim: int, fill, dtype) -> np.ndarray:
    """A fixed_size_list column as an (N, dim) array; null lists are filled."""
    out = []
    for c in col.chunks:
        vals = c.values.slice(c.offset * dim, len(c) * dim)
        if vals.null_count:
            vals = vals.fill_null(fill)
        out.append(np.asarray(vals.to_numpy(zero_copy_only=False), dtype=dtype).reshape(len(c), dim))
    if not out:
        return np.zeros((0, dim), dtype=dtype)
    return np.concatenate(out) if len(out) > 1 else out[0]


def _valid(col) -> np.ndarray:
    parts = [c.is_valid().to_numpy(zero_copy_only=False) for c in col.chunks]
    return np.concatenate(parts).astype(bool) if parts else np.zeros(0, dtype=bool)


def _meta(schema) -> dict[str, str]:
    return {k.decode("utf-8"): v.decode("utf-8") for k, v in (schema.metadata or {}).items()}


class AgentData:
    """One agent's steps in a log.

    Attributes: ``name``; ``table``, the pyarrow Table of its rows in the log's order
    (retroactive rewards added to reward and reward_sources); ``metadata``, the first
    part's schema metadata as str; ``spaces``, AgentSpaces(observation, action,
    mask_len) rebuilt from it (Gymnasium spaces when gymnasium is importable, plain
    descriptions otherwise); ``observation_space`` and ``action_space``, the plain
    descriptions; ``columns``, a dict of numpy arrays: trial_id, agent_id and
    parent_agent_id (object arrays of str, None for no parent), episode, tick, index,
    start, acting, observation (N, observation_dim) float32 flat, action (int64 (N,)
    for Discrete, (N, n) otherwise; 0 on start rows), action_valid (False on start
    rows), action_mask (N, mask_len) bool if the agent has one, reward (float32, the
    whole reward with the retroactive ones), retro_reward, terminated, truncated,
    span_ticks.
    """

    def __init__(self, name: str, table: Any, retro: dict[tuple, list[tuple[str, float]]] | None = None):
        self.name = name
        self.metadata = _meta(table.schema)
        for key in (_spaces.META_OBSERVATION_SPACE, _spaces.META_ACTION_SPACE):
            if key not in self.metadata:
                raise ValueError(f"agent {name}: the schema metadata has no {key}: not the table of a baton log's agent")
        self.observation_space = _spaces.parse_space(self.metadata[_spaces.META_OBSERVATION_SPACE])
        self.action_space = _spaces.parse_space(self.metadata[_spaces.META_ACTION_SPACE])
        self.spaces = _spaces.spaces_from_schema(self.metadata)
        self.mask_len = int(self.metadata.get(_spaces.META_MASK_LEN, "0") or 0)
        self.table = table
        self.columns = self._columns(table)
        self._add_retro(retro)

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return f"<baton.AgentData {self.name}: {len(self)} rows, observations {self.observation_space}, actions {self.action_space}>"

    def _columns(self, t) -> dict[str, np.ndarray]:
        obs_dim = self.observation_space.flat_dim
        c = {
            "trial_id": _numpy(t.column("trial_id")),
            "episode": _numpy(t.column("episode"), np.int32),
            "tick": _numpy(t.column("tick"), np.int64),
            "index": _numpy(t.column("index"), np.int32),
            "agent_id": _numpy(t.column("agent_id")),
            "parent_agent_id": _numpy(t.column("parent_agent_id")),
            "start": _numpy(t.column("start"), bool),
            "acting": _numpy(t.column("acting"), bool),
            "observation": _fixed_lists(t.column("observation"), obs_dim, 0.0, np.float32),
            "reward": _numpy(t.column("reward"), np.float32),
            "terminated": _numpy(t.column("terminated"), bool),
            "truncated": _numpy(t.column("truncated"), bool),
            "span_ticks": _numpy(t.column("span_ticks"), np.int32),
        }
        act = t.column("action")
        c["action_valid"] = _valid(act)
        if isinstance(self.action_space, _spaces.Discrete):
            parts = [ch.fill_null(0).to_numpy(zero_copy_only=False) for ch in act.chunks]
            c["action"] = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
        else:
            dim = int(act.type.list_size)
            dtype = np.float32 if isinstance(self.action_space, _spaces.Box) else np.int64
            c["action"] = _fixed_lists(act, dim, 0, dtype)
        if self.mask_len > 0 and "action_mask" in t.column_names:
            c["action_mask"] = _fixed_lists(t.column("action_mask"), self.mask_len, False, bool)
        c["retro_reward"] = np.zeros(len(c["tick"]), dtype=np.float32)
        return c

    def _add_retro(self, retro) -> None:
        """Adds the retroactive rewards of the rewards table to the steps they are
        for: to columns["reward"] (and retro_reward) and to the table's reward and
        reward_sources."""
        if not retro:
            return
        c = self.columns
        at = {}
        for i, key in enumerate(zip(c["trial_id"], c["episode"].tolist(), c["tick"].tolist(), c["agent_id"])):
            at[key] = i
        extra: dict[int, list] = {}
        for key, sources in retro.items():
            i = at.get(key)
            if i is not None:
                extra[i] = sources
        if not extra:
            return
        import pyarrow as pa

        for i, sources in extra.items():
            c["retro_reward"][i] = np.float32(sum(v for _, v in sources))
        c["reward"] = (c["reward"] + c["retro_reward"]).astype(np.float32)
        lists = self.table.column("reward_sources").to_pylist()
        for i, sources in extra.items():
            lists[i] = list(lists[i]) + [{"source": s, "value": v} for s, v in sources]
        # The columns keep their fields (types, dictionaries, nullability), so that the
        # table's schema is the log's whether or not it has retroactive rewards.
        t = self.table
        for name, values in (("reward", c["reward"]), ("reward_sources", lists)):
            i = t.schema.get_field_index(name)
            field = t.schema.field(i)
            t = t.set_column(i, field, pa.array(values, type=field.type))
        self.table = t

    @property
    def observations(self) -> Any:
        """The observations in their space's shape (see baton.unflatten): for a Box,
        float32 (N, *shape); a Dict gives a dict of arrays, a Tuple a tuple.

            log["strategy"].observations.shape   # (N, 106) for the maze
        """
        return _spaces.unflatten(self.observation_space, self.columns["observation"])

    @property
    def actions(self) -> np.ndarray:
        """The actions in their space's shape: int64 (N,) for a Discrete, float32
        (N, *shape) for a Box, (N, *shape) int64 for a MultiBinary; 0 where
        action_valid is False (start rows).

            acts = log["motion"].actions[log["motion"].columns["action_valid"]]
        """
        a = self.columns["action"]
        sp = self.action_space
        if isinstance(sp, (_spaces.Box, _spaces.MultiBinary)):
            return a.reshape((a.shape[0],) + tuple(sp.shape))
        return a

    def transitions(self, check: bool = True) -> Transitions:
        """The agent's transitions (datalog/doc.go, "Transitions"); see
        baton.build_transitions.

            t = baton.load("runs/maze")["motion"].transitions()
            t.obs.shape, t.action.shape, t.discount(0.99)
        """
        return build_transitions(self.columns, check=check)


class Log(Mapping):
    """A log: a read-only mapping from agent name to AgentData, plus the side tables
    (pyarrow Tables, or None where the log has none): ``trials``, ``episodes``,
    ``rewards``. The episodes table's ``metrics`` column holds each episode's
    environment metrics as (name, value) pairs; ``episode_metrics`` spreads them into
    one array per metric. The trials table's ``task`` column names the schedule's task
    each trial played (``baton run --schedule``); ``trial_tasks`` and
    ``episode_tasks`` read it."""

    def __init__(self, dir: str, agents: dict[str, AgentData], trials: Any, episodes: Any, rewards: Any):
        self.dir = dir
        self.agents = agents
        self.trials = trials
        self.episodes = episodes
        self.rewards = rewards

    def __getitem__(self, name: str) -> AgentData:
        try:
            return self.agents[name]
        except KeyError:
            raise KeyError(f"{name!r}: the log has {', '.join(self.agents) or 'no agent'}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.agents)

    def __len__(self) -> int:
        return len(self.agents)

    def __repr__(self) -> str:
        return f"<baton.Log {self.dir}: " + ", ".join(f"{n} ({len(a)} rows)" for n, a in self.agents.items()) + ">"

    def trial_tasks(self) -> dict[str, str | None]:
        """The task of each trial (the trials table's ``task`` column, written by
        ``baton run --schedule``): trial id to task name, None for a trial that ran
        outside a schedule. Empty for a log written before the column.

            log = baton.load("runs/curriculum")
            log.trial_tasks()["maze-12"]          # '7x7'
        """
        t = self.trials
        if t is None or "task" not in t.column_names:
            return {}
        ids = t.column("trial_id").to_pylist()
        tasks = t.column("task").to_pylist()
        out: dict[str, str | None] = {}
        for trial, task in zip(ids, tasks):
            if task is not None or trial not in out:  # a rejected trial's row has none
                out[trial] = task
        return out

    def episode_tasks(self) -> np.ndarray:
        """The task of each episode's trial, an object array aligned with the rows of
        ``episodes`` (None outside a schedule, or for a log written before the
        column): group the episodes by task to follow a curriculum.

            log = baton.load("runs/curriculum")
            tasks = log.episode_tasks()
            success = log.episodes.column("success").to_numpy(zero_copy_only=False)
            success[tasks == "9x9"].mean()
        """
        eps = self.episodes
        if eps is None:
            return np.empty(0, dtype=object)
        by_trial = self.trial_tasks()
        return np.array([by_trial.get(t) for t in eps.column("trial_id").to_pylist()], dtype=object)

    def episode_metrics(self) -> dict[str, np.ndarray]:
        """The environment's metrics of each episode (the episodes table's ``metrics``
        column; webtest's coverage and defects_found), one float64 array per metric
        in the order the environment names them, aligned with the rows of
        ``episodes``: NaN where an episode did not tell. Empty for a log whose
        environment defines no metric, or written before the column.

            log = baton.load("runs/webtest")
            log.episode_metrics()["coverage"].mean()
        """
        eps = self.episodes
        if eps is None or "metrics" not in eps.column_names:
            return {}
        import pyarrow.compute as pc

        col = eps.column("metrics").combine_chunks()
        parents = np.asarray(pc.list_parent_indices(col), dtype=np.int64)
        flat = col.flatten()
        names = np.asarray(flat.field("name").to_numpy(zero_copy_only=False), dtype=object)
        values = flat.field("value").to_numpy(zero_copy_only=False).astype(np.float64)
        out: dict[str, np.ndarray] = {}
        for name in dict.fromkeys(names.tolist()):
            a = np.full(eps.num_rows, np.nan)
            at = names == name
            a[parents[at]] = values[at]
            out[name] = a
        return out


def _retro_index(rewards: Any) -> dict[str, dict[tuple, list[tuple[str, float]]]]:
    """The rewards table by agent, then by step (trial_id, episode, tick, agent_id):
    [(source, value), ...] in the order they arrived."""
    out: dict[str, dict] = {}
    if rewards is None or rewards.num_rows == 0:
        return out
    cols = {n: _numpy(rewards.column(n)) for n in ("trial_id", "episode", "tick", "agent", "agent_id", "source", "value")}
    for trial, ep, tick, agent, aid, src, val in zip(
        cols["trial_id"], cols["episode"].tolist(), cols["tick"].tolist(), cols["agent"], cols["agent_id"],
        cols["source"], cols["value"].tolist(),
    ):
        out.setdefault(agent, {}).setdefault((trial, int(ep), int(tick), aid), []).append((src, float(val)))
    return out


def load(dir: str | os.PathLike[str], agents: Iterable[str] | None = None, retro: bool = True) -> Log:
    """Loads the log in ``dir`` (what ``baton run ENV --log DIR`` writes): every
    agent's steps, or those of ``agents``, as AgentData (a pyarrow Table and numpy
    arrays; ``agents`` may be one name), and the trials, episodes and retroactive
    rewards tables. With ``retro``
    (the default) the retroactive rewards are added to the steps they are for.

    Needs pyarrow; raises ImportError saying so without it, FileNotFoundError for a
    folder that holds no log, KeyError naming an agent of ``agents`` the log lacks.

        log = baton.load("runs/maze", agents=["motion"])
        log["motion"].columns["reward"].sum()
    """
    _pyarrow()
    dir = os.fspath(dir)
    if not os.path.isdir(dir):
        raise FileNotFoundError(f"{dir}: no such directory")
    from urllib.parse import unquote

    folders = {}
    for name in sorted(os.listdir(dir)):
        if name.startswith("agent=") and os.path.isdir(os.path.join(dir, name)):
            folders[unquote(name[len("agent="):])] = os.path.join(dir, name)
    if agents is not None:
        wanted = [agents] if isinstance(agents, str) else list(agents)
        unknown = [a for a in wanted if a not in folders]
        if unknown:
            raise KeyError(f"{', '.join(unknown)}: the log in {dir} has {', '.join(folders) or 'no agent'}")
        folders = {a: folders[a] for a in wanted}

    def side(table):
        folder = os.path.join(dir, "_" + table)
        return read_table(folder) if os.path.isdir(folder) else None

    trials, episodes, rewards = side("trials"), side("episodes"), side("rewards")
    if not folders and trials is None:
        raise FileNotFoundError(f"{dir} holds no baton log (no agent=NAME folder, no _trials)")
    index = _retro_index(rewards) if retro else {}
    data = {}
    for name, folder in folders.items():
        table = read_table(folder)
        if table is None:
            continue
        data[name] = AgentData(name, table, index.get(name))
    return Log(dir, data, trials, episodes, rewards)
