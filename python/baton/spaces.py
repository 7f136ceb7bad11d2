"""The spaces JSON spec of baton's spaces package, read in Python.

Every agent's part of a log carries its observation and action spaces in the schema
metadata (``baton.observation_space``, ``baton.action_space``) as the spaces JSON spec
that spaces/doc.go defines. This module parses the spec into plain descriptions (small
frozen dataclasses, no dependency beyond numpy), rebuilds Gymnasium spaces from them when
gymnasium is importable, and undoes the flat float32 encoding of observations in batches
(``unflatten``), so that a Box observation comes back in its shape and a Dict one as a
dict of arrays.

>>> sp = parse_space('{"type":"box","shape":[2],"low":[-1,"-inf"],"high":[1,"inf"]}')
>>> sp.shape, sp.flat_dim
((2,), 2)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeAlias

import numpy as np

__all__ = [
    "DEFAULT_CHARSET",
    "MAX_DEPTH",
    "MAX_FLAT_DIM",
    "MAX_RANK",
    "AgentSpaces",
    "Box",
    "Dict",
    "Discrete",
    "MultiBinary",
    "MultiDiscrete",
    "Space",
    "SpecError",
    "Text",
    "Tuple",
    "flat_dim",
    "parse_space",
    "spaces_from_schema",
    "to_gymnasium",
    "unflatten",
]

#: The charset of a Text spec whose "charset" is "" or left out (spaces.DefaultCharset).
DEFAULT_CHARSET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: The limits of spaces/doc.go: flat dimension, nesting depth and rank.
MAX_FLAT_DIM = 1 << 26
MAX_DEPTH = 32
MAX_RANK = 32
#: The range of a Discrete start (a Go int64).
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

#: Schema metadata keys (datalog/schema.go).
META_OBSERVATION_SPACE = "baton.observation_space"
META_ACTION_SPACE = "baton.action_space"
META_MASK_LEN = "baton.mask_len"


class SpecError(ValueError):
    """A spec that does not follow the spaces JSON spec; ``path`` locates the problem
    as the Go side does (".spaces[1].space.n"), "" for the whole spec."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"spaces spec{' at ' + path if path else ''}: {message}")


@dataclass(frozen=True)
class Discrete:
    """{start, ..., start+n-1}; flattens to a one-hot of length n.

    >>> Discrete(4, start=1).flat_dim
    4
    """

    n: int
    start: int = 0
    kind = "discrete"

    @property
    def flat_dim(self) -> int:
        return self.n


@dataclass(frozen=True)
class Box:
    """float32 arrays of ``shape`` in [low, high]; low and high are float32 arrays of
    the shape, with -inf and inf for unbounded elements.

    >>> b = parse_space({"type": "box", "shape": [2, 3], "low": 0, "high": "inf"})
    >>> b.shape, b.flat_dim, b.high.dtype
    ((2, 3), 6, dtype('float32'))
    """

    shape: tuple[int, ...]
    low: np.ndarray = field(compare=False, repr=False)
    high: np.ndarray = field(compare=False, repr=False)
    dtype: str = "float32"
    kind = "box"

    @property
    def flat_dim(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and self.shape == other.shape
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    def __hash__(self) -> int:
        return hash(("box", self.shape, self.low.tobytes(), self.high.tobytes()))


@dataclass(frozen=True)
class MultiDiscrete:
    """int vectors with v[i] in [0, nvec[i]); flattens to concatenated one-hots.

    >>> MultiDiscrete((3, 4)).flat_dim
    7
    """

    nvec: tuple[int, ...]
    kind = "multi_discrete"

    @property
    def flat_dim(self) -> int:
        return int(sum(self.nvec))


@dataclass(frozen=True)
class MultiBinary:
    """arrays of 0 and 1 of ``shape``.

    >>> MultiBinary((2, 3)).flat_dim
    6
    """

    shape: tuple[int, ...]
    kind = "multi_binary"

    @property
    def flat_dim(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class Dict:
    """Maps with fixed keys, in order: ``spaces`` is a tuple of (key, space) pairs.

    >>> d = Dict((("pos", MultiBinary((2,))), ("door", Discrete(3))))
    >>> d.keys(), d["door"], d.flat_dim
    (['pos', 'door'], Discrete(n=3, start=0), 5)
    """

    spaces: tuple[tuple[str, Space], ...]
    kind = "dict"

    @property
    def flat_dim(self) -> int:
        return sum(s.flat_dim for _, s in self.spaces)

    def keys(self) -> list[str]:
        return [k for k, _ in self.spaces]

    def __getitem__(self, key: str) -> Space:
        for k, s in self.spaces:
            if k == key:
                return s
        raise KeyError(key)


@dataclass(frozen=True)
class Tuple:
    """Fixed-length sequences, one space per element.

    >>> t = Tuple((Discrete(2), MultiBinary((3,))))
    >>> len(t), t[1], t.flat_dim
    (2, MultiBinary(shape=(3,)), 5)
    """

    spaces: tuple[Space, ...]
    kind = "tuple"

    @property
    def flat_dim(self) -> int:
        return sum(s.flat_dim for s in self.spaces)

    def __getitem__(self, i: int) -> Space:
        return self.spaces[i]

    def __len__(self) -> int:
        return len(self.spaces)


@dataclass(frozen=True)
class Text:
    """Strings of min_length to max_length characters of charset; flattens to
    max_length charset indices, padded with len(charset).

    >>> Text(0, 8, "abc").flat_dim
    8
    """

    min_length: int
    max_length: int
    charset: str = DEFAULT_CHARSET
    kind = "text"

    @property
    def flat_dim(self) -> int:
        return self.max_length


#: A plain description of a space: one of the seven kinds.
Space: TypeAlias = Discrete | Box | MultiDiscrete | MultiBinary | Dict | Tuple | Text

# Per type: the required fields (in the order spaces/doc.go lists them), the optional.
_FIELDS = {
    "discrete": (("n",), ("start",)),
    "box": (("shape", "low", "high"), ("dtype",)),
    "multi_discrete": (("nvec",), ()),
    "multi_binary": (("shape",), ()),
    "dict": (("spaces",), ()),
    "tuple": (("spaces",), ()),
    "text": (("min_length", "max_length"), ("charset",)),
}


def _is_int(v: Any) -> bool:
    # JSON integers: no bool, no fraction. json.loads gives int for "4" and float for
    # "4.0"; the Go side writes integers without a fraction.
    return isinstance(v, int) and not isinstance(v, bool)


def _dims(v: Any, path: str, name: str, minimum: int) -> tuple[int, ...]:
    if not isinstance(v, list):
        raise SpecError(f"{path}.{name}", f"want an array of integers, got {v!r}")
    if len(v) > MAX_RANK and name == "shape":
        raise SpecError(f"{path}.{name}", f"{len(v)} dimensions; at most {MAX_RANK}")
    for i, d in enumerate(v):
        if not _is_int(d) or not minimum <= d <= MAX_FLAT_DIM:
            raise SpecError(f"{path}.{name}[{i}]", f"want an integer >= {minimum} and <= {MAX_FLAT_DIM}, got {d!r}")
    return tuple(v)


def _bound(v: Any, path: str) -> float:
    if v == "inf":
        return math.inf
    if v == "-inf":
        return -math.inf
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and math.isnan(v)):
        raise SpecError(path, f'want a number, "inf" or "-inf", got {v!r}')
    if isinstance(v, float) and math.isinf(v):
        return v  # a decoded spec (a protobuf Space's bounds); JSON text cannot hold one
    try:
        with np.errstate(over="ignore"):
            f = float(np.float32(float(v)))
    except OverflowError:  # an integer past the float64 range
        f = math.inf
    if math.isinf(f):  # as strconv.ParseFloat(s, 32) says: out of range
        raise SpecError(path, f"{v!r} is out of the float32 range")
    return f


def _bounds(v: Any, n: int, shape: tuple[int, ...], path: str) -> np.ndarray:
    if isinstance(v, list):
        if len(v) != n:
            raise SpecError(path, f"{len(v)} bounds; want {n} (prod(shape))")
        out = np.array([_bound(x, f"{path}[{i}]") for i, x in enumerate(v)], dtype=np.float32)
    else:
        out = np.full(n, _bound(v, path), dtype=np.float32)
    return out.reshape(shape)


def _check_flat(sp: Space, path: str) -> Space:
    if sp.flat_dim > MAX_FLAT_DIM:
        raise SpecError(path, f"flat dimension {sp.flat_dim} is above {MAX_FLAT_DIM}")
    return sp


def _parse(spec: Any, path: str, depth: int) -> Space:
    if depth > MAX_DEPTH:
        raise SpecError(path, f"nested deeper than {MAX_DEPTH}")
    if not isinstance(spec, dict):
        raise SpecError(path, f"want an object, got {type(spec).__name__}")
    # Paths as spaces.Unmarshal gives them: a missing or unknown field is the
    # object's problem, a bad value the field's.
    if "type" not in spec:
        raise SpecError(path, 'missing required field "type"')
    kind = spec["type"]
    if kind not in _FIELDS:
        raise SpecError(f"{path}.type", f"unknown type {kind!r}")
    required, optional = _FIELDS[kind]
    for k in spec:
        if k != "type" and k not in required and k not in optional:
            raise SpecError(path, f"unknown field {k!r} of a {kind} spec")
    for k in required:
        if k not in spec:
            raise SpecError(path, f"missing required field {k!r} of a {kind} spec")

    if kind == "discrete":
        n, start = spec["n"], spec.get("start", 0)
        if not _is_int(n) or not 1 <= n <= MAX_FLAT_DIM:
            raise SpecError(f"{path}.n", f"want an integer >= 1 and <= {MAX_FLAT_DIM}, got {n!r}")
        if not _is_int(start) or not _INT64_MIN <= start <= _INT64_MAX:
            raise SpecError(f"{path}.start", f"want a 64-bit integer, got {start!r}")
        return _check_flat(Discrete(n, start), path)
    if kind == "box":
        if "dtype" in spec and spec["dtype"] != "float32":
            raise SpecError(f"{path}.dtype", f'want "float32", got {spec["dtype"]!r}')
        shape = _dims(spec["shape"], path, "shape", 0)
        n = int(np.prod(shape, dtype=np.int64))
        if n > MAX_FLAT_DIM:
            raise SpecError(path, f"flat dimension {n} is above {MAX_FLAT_DIM}")
        low = _bounds(spec["low"], n, shape, f"{path}.low")
        high = _bounds(spec["high"], n, shape, f"{path}.high")
        bad = np.flatnonzero(~(low <= high))  # NaN compares false too
        if bad.size:
            i = int(bad[0])
            raise SpecError(path, f"low[{i}] = {low.flat[i]} is above high[{i}] = {high.flat[i]}")
        return Box(shape, low, high)
    if kind == "multi_discrete":
        return _check_flat(MultiDiscrete(_dims(spec["nvec"], path, "nvec", 1)), path)
    if kind == "multi_binary":
        shape = _dims(spec["shape"], path, "shape", 0)
        if 0 in shape:
            raise SpecError(f"{path}.shape", f"MultiBinary shape[{shape.index(0)}] is 0, want >= 1")
        return _check_flat(MultiBinary(shape), path)
    if kind == "dict":
        entries = spec["spaces"]
        if not isinstance(entries, list):
            raise SpecError(f"{path}.spaces", "want an array of {key, space} objects")
        seen = set()
        out = []
        for i, e in enumerate(entries):
            ep = f"{path}.spaces[{i}]"
            if not isinstance(e, dict):
                raise SpecError(ep, "want a {key, space} object")
            for k in e:
                if k not in ("key", "space"):
                    raise SpecError(ep, f"unknown field {k!r} of a dict entry")
            for k in ("key", "space"):
                if k not in e:
                    raise SpecError(ep, f"missing required field {k!r} of a dict entry")
            key = e["key"]
            if not isinstance(key, str) or key == "":
                raise SpecError(f"{ep}.key", f"want a non-empty string, got {key!r}")
            if key in seen:
                raise SpecError(f"{ep}.key", f"repeated key {key!r}")
            seen.add(key)
            out.append((key, _parse(e["space"], f"{ep}.space", depth + 1)))
        return _check_flat(Dict(tuple(out)), path)
    if kind == "tuple":
        elems = spec["spaces"]
        if not isinstance(elems, list):
            raise SpecError(f"{path}.spaces", "want an array of specs")
        return _check_flat(
            Tuple(tuple(_parse(s, f"{path}.spaces[{i}]", depth + 1) for i, s in enumerate(elems))), path
        )
    # text
    lo, hi = spec["min_length"], spec["max_length"]
    if not _is_int(lo) or not 0 <= lo <= MAX_FLAT_DIM:
        raise SpecError(f"{path}.min_length", f"want an integer >= 0 and <= {MAX_FLAT_DIM}, got {lo!r}")
    if not _is_int(hi) or not 0 <= hi <= MAX_FLAT_DIM:
        raise SpecError(f"{path}.max_length", f"want an integer >= 0 and <= {MAX_FLAT_DIM}, got {hi!r}")
    if hi < lo:
        raise SpecError(path, f"Text max length {hi} is below min length {lo}")
    charset = spec.get("charset", "") or DEFAULT_CHARSET
    if not isinstance(charset, str):
        raise SpecError(f"{path}.charset", f"want a string, got {charset!r}")
    if len(set(charset)) != len(charset):
        repeated = next(c for i, c in enumerate(charset) if c in charset[:i])
        raise SpecError(path, f"Text charset has {repeated!r} more than once")
    return _check_flat(Text(lo, hi, charset), path)


def _reject_constant(name: str) -> Any:
    # json.loads reads NaN, Infinity and -Infinity, which are not JSON (Go refuses them).
    raise SpecError("", f'malformed JSON: {name} is not a JSON value (write "inf" or "-inf" for a bound)')


def _reject_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise SpecError("", f"repeated field {k!r}")
        out[k] = v
    return out


def parse_space(spec: str | bytes | Mapping[str, Any]) -> Space:
    """Parses a spaces JSON spec (a str, bytes or an already decoded dict) into a plain
    description. Raises SpecError (a ValueError) where the Go side's spaces.Unmarshal
    would reject it: unknown types or fields, missing fields, invalid parameters,
    limits; its ``path`` names the field.

    >>> parse_space('{"type":"discrete","n":4,"start":1}')
    Discrete(n=4, start=1)
    >>> parse_space({"type": "discrete", "n": 0})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    baton.spaces.SpecError: spaces spec at .n: want an integer >= 1 and <= 67108864, got 0
    """
    if isinstance(spec, (bytes, bytearray)):
        spec = spec.decode("utf-8")
    if isinstance(spec, str):
        try:
            spec = json.loads(spec, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            raise SpecError("", f"malformed JSON: {e}") from None
    return _parse(spec, "", 1)


def flat_dim(space: Space) -> int:
    """The length of the flat float32 encoding of a value of space.

    >>> flat_dim(parse_space({"type": "multi_discrete", "nvec": [3, 4]}))
    7
    """
    return space.flat_dim


# ---------------------------------------------------------------------------------
# Gymnasium.


def _gymnasium_spaces():
    try:
        import gymnasium.spaces as gs  # noqa: WPS433 (optional dependency)
    except ImportError:
        return None
    return gs


def to_gymnasium(space: Space) -> Any:
    """Builds the gymnasium.spaces space of a plain description, as spaces/doc.go says
    (Dict from a list of pairs, to keep the key order; Box with float32 bounds and
    dtype). Raises ImportError naming what to install when gymnasium is missing.

    >>> to_gymnasium(parse_space({"type": "box", "shape": [2], "low": 0, "high": "inf"}))
    Box(0.0, inf, (2,), float32)
    """
    gs = _gymnasium_spaces()
    if gs is None:
        raise ImportError(
            "baton.to_gymnasium needs gymnasium: pip install gymnasium "
            "(or call spaces_from_schema(..., gymnasium=False) for plain descriptions)"
        )
    return _to_gym(gs, space)


def _to_gym(gs, sp: Space):
    if isinstance(sp, Discrete):
        return gs.Discrete(sp.n, start=sp.start)
    if isinstance(sp, Box):
        return gs.Box(low=sp.low.copy(), high=sp.high.copy(), shape=sp.shape, dtype=np.float32)
    if isinstance(sp, MultiDiscrete):
        return gs.MultiDiscrete(np.array(sp.nvec, dtype=np.int64))
    if isinstance(sp, MultiBinary):
        return gs.MultiBinary(list(sp.shape) if len(sp.shape) != 1 else sp.shape[0])
    if isinstance(sp, Dict):
        return gs.Dict([(k, _to_gym(gs, s)) for k, s in sp.spaces])
    if isinstance(sp, Tuple):
        return gs.Tuple([_to_gym(gs, s) for s in sp.spaces])
    if isinstance(sp, Text):
        return gs.Text(sp.max_length, min_length=sp.min_length, charset=sp.charset)
    raise TypeError(f"not a space description: {sp!r}")


class AgentSpaces(NamedTuple):
    """An agent's spaces, from the schema metadata of one of its parts."""

    observation: Any
    action: Any
    mask_len: int


def _metadata_get(md: Mapping, key: str) -> str | None:
    for k in (key, key.encode()):
        if k in md:
            v = md[k]
            return v.decode("utf-8") if isinstance(v, (bytes, bytearray)) else v
    return None


def spaces_from_schema(metadata_or_spec: Any, gymnasium: bool | None = None) -> Any:
    """Rebuilds spaces from what a log carries.

    ``metadata_or_spec`` is one of: a pyarrow Schema or Table of an agent's part (its
    metadata is read), that metadata as a dict (bytes or str keys and values, as
    pyarrow gives them), or one spaces JSON spec (str, bytes or decoded dict with a
    "type"). For metadata it returns AgentSpaces(observation, action, mask_len); for a
    spec, the space.

    The spaces are gymnasium.spaces spaces when gymnasium is importable (or when
    ``gymnasium=True``, which raises ImportError without it), plain descriptions (this
    module's dataclasses) otherwise or when ``gymnasium=False``.

    >>> spaces_from_schema({"baton.observation_space": '{"type":"multi_binary","shape":[3]}',
    ...                     "baton.action_space": '{"type":"discrete","n":2}'})
    AgentSpaces(observation=MultiBinary(3), action=Discrete(2), mask_len=0)
    """
    if gymnasium is None:
        gymnasium = _gymnasium_spaces() is not None

    def build(spec):
        sp = parse_space(spec)
        return to_gymnasium(sp) if gymnasium else sp

    md = metadata_or_spec
    if hasattr(md, "schema") and not isinstance(md, Mapping):  # a pyarrow Table
        md = md.schema
    if hasattr(md, "metadata") and not isinstance(md, Mapping):  # a pyarrow Schema
        md = md.metadata or {}
    if isinstance(md, Mapping) and "type" not in md:
        obs = _metadata_get(md, META_OBSERVATION_SPACE)
        act = _metadata_get(md, META_ACTION_SPACE)
        if obs is None or act is None:
            raise KeyError(
                f"the metadata has no {META_OBSERVATION_SPACE} or {META_ACTION_SPACE}: "
                "is it the schema of an agent's part (DIR/agent=NAME/part-*.arrow)?"
            )
        mask_len = _metadata_get(md, META_MASK_LEN)
        return AgentSpaces(build(obs), build(act), int(mask_len) if mask_len else 0)
    return build(md)


# ---------------------------------------------------------------------------------
# Unflattening batches of flat encodings.


def _as_plain(space) -> Space:
    """Accepts a plain description or a gymnasium space (converted by its class)."""
    if isinstance(space, (Discrete, Box, MultiDiscrete, MultiBinary, Dict, Tuple, Text)):
        return space
    name = type(space).__name__
    if name == "Discrete":
        return Discrete(int(space.n), int(space.start))
    if name == "Box":
        return Box(tuple(space.shape), np.asarray(space.low, np.float32), np.asarray(space.high, np.float32))
    if name == "MultiDiscrete":
        return MultiDiscrete(tuple(int(v) for v in np.asarray(space.nvec).ravel()))
    if name == "MultiBinary":
        return MultiBinary(tuple(int(d) for d in np.atleast_1d(space.n)))
    if name == "Dict":
        return Dict(tuple((k, _as_plain(s)) for k, s in space.spaces.items()))
    if name == "Tuple":
        return Tuple(tuple(_as_plain(s) for s in space.spaces))
    if name == "Text":
        # character_list keeps the charset's order, which fixes the flat encoding
        # (characters is sorted).
        return Text(int(space.min_length), int(space.max_length), "".join(space.character_list))
    raise TypeError(f"not a space: {space!r}")


def _one_hot_index(block: np.ndarray) -> np.ndarray:
    return np.argmax(block, axis=-1).astype(np.int64)


def unflatten(space: Any, flat: np.ndarray) -> Any:
    """Undoes the flat encoding of a batch: ``flat`` has shape (N, flat_dim) (or
    (flat_dim,) for one value, which gives the value without the leading axis).
    Returns, per kind, with a leading N axis:

    - Box: float32 array (N, *shape)
    - Discrete: int64 array (N,) of values (start + index of the one)
    - MultiDiscrete: int64 array (N, len(nvec))
    - MultiBinary: int8 array (N, *shape)
    - Text: object array (N,) of str (one value: a str)
    - Dict: dict of these, in key order; Tuple: tuple of these

    ``space`` is a plain description or a gymnasium space. A Text block must hold
    charset indices with the padding (len(charset)) only at the end and at least
    min_length characters, as spaces.Unflatten requires; ValueError otherwise, naming
    where. The other kinds are decoded without such checks (a Discrete block gives the
    index of its largest entry).

    >>> sp = parse_space('{"type":"dict","spaces":[{"key":"door","space":{"type":"discrete","n":3,"start":1}},'
    ...                  '{"key":"name","space":{"type":"text","min_length":0,"max_length":3,"charset":"ab"}}]}')
    >>> v = unflatten(sp, np.array([0, 0, 1, 1, 0, 2], np.float32))
    >>> int(v["door"]), v["name"]
    (3, 'ba')
    """
    sp = _as_plain(space)
    flat = np.asarray(flat)
    single = flat.ndim == 1
    if single:
        flat = flat[None, :]
    if flat.ndim != 2 or flat.shape[1] != sp.flat_dim:
        raise ValueError(f"unflatten: flat has shape {flat.shape}; want (N, {sp.flat_dim}) or ({sp.flat_dim},)")
    out = _unflatten(sp, flat, "")
    return _first(out) if single else out


def _first(v):
    if isinstance(v, dict):
        return {k: _first(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(_first(x) for x in v)
    return v[0]


def _unflatten_text(sp: Text, flat: np.ndarray, path: str) -> np.ndarray:
    """The strings of a batch of Text encodings (charset indices, padded with
    len(charset))."""
    pad = len(sp.charset)
    idx = np.rint(flat).astype(np.int64) if flat.size else np.zeros(flat.shape, np.int64)
    where = path or "the value"
    bad = np.argwhere((idx != flat) | (idx < 0) | (idx > pad))
    if bad.size:
        r, j = (int(x) for x in bad[0])
        raise ValueError(f"unflatten: {where} (row {r}): entry {j} is {flat[r, j]!r}, not a charset index from 0 to {pad}")
    is_pad = idx == pad
    bad = np.argwhere(np.maximum.accumulate(is_pad, axis=1) & ~is_pad)
    if bad.size:
        r, j = (int(x) for x in bad[0])
        raise ValueError(f"unflatten: {where} (row {r}): entry {j} is a character after the padding")
    lengths = (~is_pad).sum(axis=1)
    short = np.flatnonzero(lengths < sp.min_length)
    if short.size:
        r = int(short[0])
        raise ValueError(f"unflatten: {where} (row {r}): {lengths[r]} characters; min_length is {sp.min_length}")
    chars = sp.charset
    out = np.empty(flat.shape[0], dtype=object)
    for r in range(flat.shape[0]):
        out[r] = "".join(chars[i] for i in idx[r, : lengths[r]])
    return out


def _unflatten(sp: Space, flat: np.ndarray, path: str) -> Any:
    n = flat.shape[0]
    if isinstance(sp, Box):
        return flat.astype(np.float32, copy=False).reshape((n,) + sp.shape)
    if isinstance(sp, Discrete):
        return _one_hot_index(flat) + sp.start
    if isinstance(sp, MultiDiscrete):
        out = np.empty((n, len(sp.nvec)), dtype=np.int64)
        at = 0
        for i, k in enumerate(sp.nvec):
            out[:, i] = _one_hot_index(flat[:, at : at + k])
            at += k
        return out
    if isinstance(sp, MultiBinary):
        return flat.astype(np.int8).reshape((n,) + sp.shape)
    if isinstance(sp, Text):
        return _unflatten_text(sp, flat, path)
    if isinstance(sp, Dict):
        out, at = {}, 0
        for k, s in sp.spaces:
            out[k] = _unflatten(s, flat[:, at : at + s.flat_dim], f"{path}.{k}")
            at += s.flat_dim
        return out
    if isinstance(sp, Tuple):
        out, at = [], 0
        for i, s in enumerate(sp.spaces):
            out.append(_unflatten(s, flat[:, at : at + s.flat_dim], f"{path}[{i}]"))
            at += s.flat_dim
        return tuple(out)
    raise TypeError(f"not a space description: {sp!r}")
