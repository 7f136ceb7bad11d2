"""The spaces JSON spec (spaces/doc.go) read by baton.spaces, without pyarrow: specs and
flat encodings written by Go's spaces package (testdata/spaces_golden.json, from
testdata/gen) rebuilt as real gymnasium.spaces and compared with spaces built by hand,
and unflattened back to the values Go flattened."""

from __future__ import annotations

import doctest
import json
import math
import os
import shutil
import subprocess
import sys
import types

import gymnasium.spaces as gs
import gymnasium.spaces.utils as gsu
import numpy as np
import pytest

import baton
from baton import spaces as S
from conftest import REPO_ROOT

HERE = os.path.dirname(os.path.abspath(__file__))


def golden():
    with open(os.path.join(HERE, "testdata", "spaces_golden.json")) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------
# Every kind, from the examples of spaces/doc.go.


def test_discrete():
    sp = baton.parse_space('{"type":"discrete","n":4,"start":0}')
    assert sp == S.Discrete(4, 0)
    assert sp.flat_dim == 4
    assert baton.parse_space({"type": "discrete", "n": 3}) == S.Discrete(3, 0)
    assert baton.parse_space({"type": "discrete", "n": 3, "start": -2}).start == -2


def test_box_with_infinite_bounds():
    sp = baton.parse_space('{"type":"box","shape":[2],"dtype":"float32","low":[-1,"-inf"],"high":[1,"inf"]}')
    assert isinstance(sp, S.Box)
    assert sp.shape == (2,)
    assert sp.low.dtype == np.float32 and sp.high.dtype == np.float32
    assert sp.low[0] == -1 and sp.low[1] == -np.inf
    assert sp.high[0] == 1 and sp.high[1] == np.inf
    assert sp.flat_dim == 2


def test_box_scalar_bounds_fill_the_shape():
    sp = baton.parse_space('{"type":"box","shape":[2,3],"low":0,"high":1}')
    assert sp.shape == (2, 3)
    assert sp.low.shape == (2, 3) and (sp.low == 0).all() and (sp.high == 1).all()
    sp = baton.parse_space({"type": "box", "shape": [4], "low": "-inf", "high": "inf"})
    assert np.isneginf(sp.low).all() and np.isposinf(sp.high).all()


def test_box_bounds_are_float32():
    sp = baton.parse_space({"type": "box", "shape": [1], "low": [0.1], "high": [1e30]})
    assert sp.low[0] == np.float32(0.1)


def test_box_rank_zero_and_empty():
    assert baton.parse_space({"type": "box", "shape": [], "low": [-1], "high": [1]}).flat_dim == 1
    sp = baton.parse_space({"type": "box", "shape": [0, 3], "low": [], "high": []})
    assert sp.flat_dim == 0 and sp.low.shape == (0, 3)


def test_multi_discrete_and_multi_binary():
    sp = baton.parse_space('{"type":"multi_discrete","nvec":[3,4]}')
    assert sp == S.MultiDiscrete((3, 4)) and sp.flat_dim == 7
    sp = baton.parse_space('{"type":"multi_binary","shape":[5]}')
    assert sp == S.MultiBinary((5,)) and sp.flat_dim == 5
    assert baton.parse_space({"type": "multi_binary", "shape": [2, 3]}).flat_dim == 6


def test_dict_keeps_key_order():
    sp = baton.parse_space(
        '{"type":"dict","spaces":[{"key":"pos","space":{"type":"box","shape":[2],"dtype":"float32",'
        '"low":[0,0],"high":[1,1]}},{"key":"door","space":{"type":"discrete","n":3,"start":0}}]}'
    )
    assert isinstance(sp, S.Dict)
    assert sp.keys() == ["pos", "door"]  # not sorted
    assert sp["door"] == S.Discrete(3)
    assert sp.flat_dim == 5


def test_tuple():
    sp = baton.parse_space(
        '{"type":"tuple","spaces":[{"type":"discrete","n":2,"start":0},{"type":"multi_binary","shape":[3]}]}'
    )
    assert sp == S.Tuple((S.Discrete(2), S.MultiBinary((3,))))
    assert len(sp) == 2 and sp.flat_dim == 5


def test_nested_dict_and_tuple():
    spec = {
        "type": "dict",
        "spaces": [
            {"key": "a", "space": {"type": "tuple", "spaces": [
                {"type": "dict", "spaces": [{"key": "x", "space": {"type": "box", "shape": [1], "low": "-inf", "high": 0}}]},
                {"type": "multi_discrete", "nvec": [2, 2]},
            ]}},
            {"key": "b", "space": {"type": "text", "min_length": 0, "max_length": 2, "charset": "xy"}},
        ],
    }
    sp = baton.parse_space(spec)
    inner = sp["a"][0]["x"]
    assert isinstance(inner, S.Box) and inner.low[0] == -np.inf and inner.high[0] == 0
    assert sp.flat_dim == 1 + 4 + 2


def test_text():
    sp = baton.parse_space('{"type":"text","min_length":0,"max_length":8,"charset":"abc"}')
    assert sp == S.Text(0, 8, "abc") and sp.flat_dim == 8
    assert baton.parse_space({"type": "text", "min_length": 1, "max_length": 2}).charset == baton.DEFAULT_CHARSET
    assert baton.parse_space({"type": "text", "min_length": 1, "max_length": 2, "charset": ""}).charset == baton.DEFAULT_CHARSET


def test_bytes_and_str_inputs():
    assert baton.parse_space(b'{"type":"discrete","n":2}') == S.Discrete(2)


# ---------------------------------------------------------------------------------
# Rejections: what spaces.Unmarshal rejects, with the path of the problem.


def rejects():
    with open(os.path.join(HERE, "testdata", "spaces_rejects.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("case", rejects(), ids=lambda c: c["spec"][:60])
def test_rejects(case):
    with pytest.raises(baton.SpecError) as e:
        baton.parse_space(case["spec"])
    assert e.value.path == case["path"], str(e.value)


@pytest.mark.go
def test_go_rejects_the_same_specs_at_the_same_paths():
    """spaces.Unmarshal rejects every spec of spaces_rejects.json where baton.parse_space
    does (gen -rejects prints the path of each SpecError)."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH")
    path = os.path.join(HERE, "testdata", "spaces_rejects.json")
    r = subprocess.run(["go", "run", "./python/tests/testdata/gen", "-rejects", path], cwd=REPO_ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(g["spec"], g["path"]) for g in got] == [(c["spec"], c["path"]) for c in rejects()], [
        g for g, c in zip(got, rejects()) if g["path"] != c["path"]]


def test_rejects_deep_nesting_and_huge_spaces():
    spec = {"type": "discrete", "n": 2}  # depth 1, as in Go
    for _ in range(S.MAX_DEPTH - 1):
        spec = {"type": "tuple", "spaces": [spec]}
    assert baton.parse_space(spec).flat_dim == 2  # depth MAX_DEPTH: allowed
    spec = {"type": "tuple", "spaces": [spec]}
    with pytest.raises(baton.SpecError, match="deeper"):
        baton.parse_space(spec)
    with pytest.raises(baton.SpecError, match="flat dimension"):
        baton.parse_space({"type": "multi_binary", "shape": [1 << 14, 1 << 13]})
    with pytest.raises(baton.SpecError, match="dimensions"):
        baton.parse_space({"type": "multi_binary", "shape": [1] * (S.MAX_RANK + 1)})


# ---------------------------------------------------------------------------------
# Against the Go side: specs written by spaces.Marshal, and values flattened by
# spaces.Flatten (testdata/spaces_golden.json, from testdata/gen).


def _compare(sp, got, want):
    if isinstance(sp, S.Dict):
        assert set(got) == set(want)
        for k, s in sp.spaces:
            _compare(s, got[k], want[k])
    elif isinstance(sp, S.Tuple):
        assert len(got) == len(want)
        for s, g, w in zip(sp.spaces, got, want):
            _compare(s, g, w)
    elif isinstance(sp, S.Text):
        assert isinstance(got, str) and got == want
    elif isinstance(sp, S.Box):
        w = np.array([{"inf": np.inf, "-inf": -np.inf}.get(x, x) for x in want], dtype=np.float32).reshape(sp.shape)
        assert got.shape == sp.shape and got.dtype == np.float32
        np.testing.assert_array_equal(got, w)
    elif isinstance(sp, S.MultiBinary):
        assert got.shape == sp.shape
        np.testing.assert_array_equal(got.ravel(), want)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", golden(), ids=lambda g: g["name"])
def test_golden_specs_and_flat_encodings(case):
    sp = baton.parse_space(json.dumps(case["spec"]))
    assert sp.flat_dim == case["flat_dim"]
    flats = np.array([s["flat"] for s in case["samples"]], dtype=np.float32)
    batch = baton.unflatten(sp, flats)  # (N, ...) for the whole batch
    for i, s in enumerate(case["samples"]):
        _compare(sp, baton.unflatten(sp, flats[i]), s["value"])
        _compare(sp, S._first(_row(batch, i)), s["value"])
    if isinstance(sp, S.Box):
        assert batch.shape == (len(flats),) + sp.shape


def _row(batch, i):
    """Row i of an unflattened batch, keeping a leading axis of 1."""
    if isinstance(batch, dict):
        return {k: _row(v, i) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_row(v, i) for v in batch)
    return batch[i : i + 1]


# ---------------------------------------------------------------------------------
# Real gymnasium.spaces: each golden spec against the space built by hand, and each
# value Go flattened against gymnasium's own flatten and unflatten.

INF = np.float32(np.inf)
_BOX = gs.Box(low=np.array([[-1, 0, -np.inf], [-2.5, 0, 0]], np.float32),
              high=np.array([[1, 1, 0], [np.inf, 0.5, 1e-3]], np.float32), shape=(2, 3), dtype=np.float32)
_MD = gs.MultiDiscrete(np.array([3, 2, 4]))
_MB = gs.MultiBinary([2, 2])
_TUPLE = gs.Tuple([gs.Discrete(2), _MB])
BY_HAND = {
    "discrete": gs.Discrete(4, start=1),
    "discrete_negative_start": gs.Discrete(3, start=-2),
    "discrete_zero_start": gs.Discrete(5),
    "box": _BOX,
    "box_unbounded": gs.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32),
    "box_scalar": gs.Box(-1, 1, shape=(), dtype=np.float32),
    "multi_discrete": _MD,
    "multi_binary": _MB,
    "multi_binary_1d": gs.MultiBinary(5),
    "text": gs.Text(5, min_length=1, charset="abc"),
    "text_default_charset": gs.Text(3, min_length=0, charset=baton.DEFAULT_CHARSET),
    "text_unsorted_charset": gs.Text(6, min_length=2, charset="zy.x?"),
    "tuple": _TUPLE,
    "dict": gs.Dict([
        ("pos", gs.Box(0, 1, shape=(2,), dtype=np.float32)),
        ("door", gs.Discrete(3)),
        ("inner", gs.Dict([("z", _TUPLE), ("a", _MD)])),
    ]),
}


def test_every_golden_case_has_a_space_built_by_hand():
    assert sorted(BY_HAND) == sorted(c["name"] for c in golden())
    kinds = {c["spec"]["type"] for c in golden()}
    assert kinds == {"discrete", "box", "multi_discrete", "multi_binary", "dict", "tuple", "text"}


def _same_space(got, want):
    """Gymnasium's equality, plus what it leaves out: exact bounds, dtypes, the order
    of Dict keys and of a Text charset."""
    assert type(got) is type(want)
    assert got == want
    if isinstance(want, gs.Box):
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got.low, want.low)
        np.testing.assert_array_equal(got.high, want.high)
    elif isinstance(want, gs.Discrete):
        assert (int(got.n), int(got.start)) == (int(want.n), int(want.start))
    elif isinstance(want, gs.MultiDiscrete):
        np.testing.assert_array_equal(got.nvec, want.nvec)
        assert got.dtype == want.dtype
    elif isinstance(want, gs.MultiBinary):
        assert got.shape == want.shape and got.dtype == want.dtype
    elif isinstance(want, gs.Text):
        assert got.character_list == want.character_list
        assert (got.min_length, got.max_length) == (want.min_length, want.max_length)
    elif isinstance(want, gs.Dict):
        assert list(got.keys()) == list(want.keys())
        for k in want.keys():
            _same_space(got[k], want[k])
    elif isinstance(want, gs.Tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_space(g, w)


def _gym_value(space, v):
    """A value of the golden file in the form gymnasium's spaces hold it."""
    if isinstance(space, gs.Dict):
        return {k: _gym_value(space[k], v[k]) for k in space.keys()}
    if isinstance(space, gs.Tuple):
        return tuple(_gym_value(s, x) for s, x in zip(space, v))
    if isinstance(space, gs.Box):
        return np.array(v, dtype=np.float32).reshape(space.shape)
    if isinstance(space, gs.Discrete):
        return np.int64(v)
    if isinstance(space, gs.MultiDiscrete):
        return np.array(v, dtype=np.int64)
    if isinstance(space, gs.MultiBinary):
        return np.array(v, dtype=np.int8).reshape(space.shape)
    return v  # Text: str


def _same_value(got, want):
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same_value(got[k], want[k])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same_value(g, w)
    elif isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize("case", golden(), ids=lambda g: g["name"])
def test_golden_specs_rebuild_the_gymnasium_space(case):
    want = BY_HAND[case["name"]]
    _same_space(baton.spaces_from_schema(case["spec"]), want)
    _same_space(baton.spaces_from_schema(json.dumps(case["spec"]), gymnasium=True), want)
    _same_space(baton.to_gymnasium(baton.parse_space(case["spec"])), want)
    assert gsu.flatdim(want) == case["flat_dim"]


@pytest.mark.parametrize("case", golden(), ids=lambda g: g["name"])
def test_go_flat_encodings_round_trip_through_python(case):
    space = BY_HAND[case["name"]]
    plain = baton.parse_space(case["spec"])
    for s in case["samples"]:
        value = _gym_value(space, s["value"])
        assert space.contains(value), value
        flat = np.array(s["flat"], dtype=np.float32)
        # Go's encoding is gymnasium's.
        gym_flat = gsu.flatten(space, value)  # in gymnasium's dtype (int32 for a Text)
        np.testing.assert_array_equal(gym_flat.astype(np.float32), flat)
        _same_value(gsu.unflatten(space, gym_flat), value)
        # baton.unflatten from the plain description and from the gymnasium space.
        _same_value(_as_gym_form(space, baton.unflatten(plain, flat)), value)
        _same_value(_as_gym_form(space, baton.unflatten(space, flat)), value)
    # A batch of them, each row the value.
    flats = np.array([s["flat"] for s in case["samples"]], dtype=np.float32)
    batch = baton.unflatten(space, flats)
    for i, s in enumerate(case["samples"]):
        _same_value(_as_gym_form(space, S._first(_row(batch, i))), _gym_value(space, s["value"]))


def _as_gym_form(space, v):
    """baton.unflatten's value in gymnasium's types (the same values)."""
    if isinstance(space, gs.Dict):
        return {k: _as_gym_form(space[k], v[k]) for k in space.keys()}
    if isinstance(space, gs.Tuple):
        return tuple(_as_gym_form(s, x) for s, x in zip(space, v))
    return v


@pytest.mark.go
def test_the_golden_file_is_what_go_writes():
    """The golden file is what testdata/gen writes with Go's spaces package today:
    regenerate it when the Go side changes (see testdata/gen/main.go)."""
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH")
    r = subprocess.run(["go", "run", "./python/tests/testdata/gen"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == golden(), "spaces_golden.json is stale: go run ./python/tests/testdata/gen"


def test_unflatten_text_checks_the_encoding():
    sp = baton.parse_space({"type": "text", "min_length": 1, "max_length": 3, "charset": "ab"})
    np.testing.assert_array_equal(baton.unflatten(sp, np.array([[1, 0, 2], [0, 2, 2]], np.float32)),
                                  np.array(["ba", "a"], dtype=object))
    for flat, reason in [([0, 2, 1], "after the padding"), ([0, 3, 2], "not a charset index"),
                         ([0.5, 2, 2], "not a charset index"), ([2, 2, 2], "min_length")]:
        with pytest.raises(ValueError, match=reason):
            baton.unflatten(sp, np.array(flat, np.float32))
    d = baton.parse_space({"type": "dict", "spaces": [{"key": "t", "space": {
        "type": "text", "min_length": 0, "max_length": 2, "charset": "ab"}}]})
    with pytest.raises(ValueError, match=r"\.t \(row 1\): entry 0"):
        baton.unflatten(d, np.array([[0, 1], [5, 2]], np.float32))


def test_unflatten_with_a_gymnasium_text_keeps_the_charset_order():
    # gymnasium's Text.characters is sorted; the encoding follows the charset's order.
    space = gs.Text(4, min_length=0, charset="cba")
    assert baton.unflatten(space, np.array([0, 2, 3, 3], np.float32)) == "ca"
    np.testing.assert_array_equal(gsu.flatten(space, "ca"), [0, 2, 3, 3])


def test_doctests():
    for module in (S, baton.experience, baton.loader):
        failed, _ = doctest.testmod(module, raise_on_error=False, report=True)
        assert failed == 0, module.__name__


def test_unflatten_shapes():
    sp = baton.parse_space({"type": "box", "shape": [2, 3], "low": 0, "high": 1})
    flat = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = baton.unflatten(sp, flat)
    assert out.shape == (4, 2, 3) and out[1, 1, 0] == 9
    with pytest.raises(ValueError):
        baton.unflatten(sp, np.zeros((4, 5), np.float32))
    d = baton.parse_space({"type": "discrete", "n": 3, "start": 5})
    np.testing.assert_array_equal(baton.unflatten(d, np.eye(3, dtype=np.float32)[[2, 0]]), [7, 5])


# ---------------------------------------------------------------------------------
# spaces_from_schema: metadata or spec, plain or Gymnasium.

MAZE_LIKE_METADATA = {
    b"baton.format_version": b"1",
    b"baton.agent": b"strategy",
    b"baton.observation_space": b'{"type":"box","shape":[3],"dtype":"float32","low":[0,0,0],"high":[1,1,"inf"]}',
    b"baton.action_space": b'{"type":"discrete","n":4,"start":0}',
    b"baton.mask_len": b"4",
}


def test_spaces_from_schema_plain():
    got = baton.spaces_from_schema(MAZE_LIKE_METADATA, gymnasium=False)
    assert isinstance(got, baton.AgentSpaces)
    obs, act, mask_len = got
    assert obs.shape == (3,) and obs.high[2] == np.inf
    assert act == S.Discrete(4) and mask_len == 4
    str_md = {k.decode(): v.decode() for k, v in MAZE_LIKE_METADATA.items()}
    assert baton.spaces_from_schema(str_md, gymnasium=False) == got
    # A spec gives one space.
    assert baton.spaces_from_schema('{"type":"discrete","n":2}', gymnasium=False) == S.Discrete(2)
    assert baton.spaces_from_schema({"type": "discrete", "n": 2}, gymnasium=False) == S.Discrete(2)


def test_spaces_from_schema_reads_a_schema_object():
    class FakeSchema:  # what pyarrow.Schema offers: .metadata with bytes
        metadata = MAZE_LIKE_METADATA

    assert baton.spaces_from_schema(FakeSchema(), gymnasium=False).action == S.Discrete(4)


def test_spaces_from_schema_without_spaces():
    with pytest.raises(KeyError, match="baton.observation_space"):
        baton.spaces_from_schema({b"baton.table": b"trials"}, gymnasium=False)


def test_plain_descriptions_without_gymnasium(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # import gymnasium fails
    monkeypatch.setitem(sys.modules, "gymnasium.spaces", None)
    got = baton.spaces_from_schema(MAZE_LIKE_METADATA)
    assert isinstance(got.observation, S.Box)
    with pytest.raises(ImportError, match="gymnasium"):
        baton.spaces_from_schema(MAZE_LIKE_METADATA, gymnasium=True)


class _Recorder:
    """A stand-in for gymnasium.spaces that records how each space is built."""

    def __init__(self):
        mod = types.ModuleType("gymnasium.spaces")
        for name in ("Discrete", "Box", "MultiDiscrete", "MultiBinary", "Dict", "Tuple", "Text"):
            setattr(mod, name, self._make(name))
        self.module = mod

    @staticmethod
    def _make(name):
        def build(*args, **kwargs):
            return (name, args, kwargs)

        return build


def test_gymnasium_spaces_are_built_as_the_spec_says(monkeypatch):
    rec = _Recorder()
    gym = types.ModuleType("gymnasium")
    gym.spaces = rec.module
    monkeypatch.setitem(sys.modules, "gymnasium", gym)
    monkeypatch.setitem(sys.modules, "gymnasium.spaces", rec.module)

    assert baton.spaces_from_schema({"type": "discrete", "n": 4, "start": 1}) == ("Discrete", (4,), {"start": 1})
    name, args, kw = baton.spaces_from_schema({"type": "box", "shape": [2], "low": [-1, "-inf"], "high": [1, "inf"]})
    assert name == "Box" and kw["dtype"] == np.float32 and kw["shape"] == (2,)
    np.testing.assert_array_equal(kw["low"], np.array([-1, -np.inf], np.float32))
    np.testing.assert_array_equal(kw["high"], np.array([1, np.inf], np.float32))
    name, args, _ = baton.spaces_from_schema({"type": "multi_discrete", "nvec": [3, 4]})
    assert name == "MultiDiscrete" and list(args[0]) == [3, 4]
    assert baton.spaces_from_schema({"type": "multi_binary", "shape": [5]}) == ("MultiBinary", (5,), {})
    assert baton.spaces_from_schema({"type": "multi_binary", "shape": [2, 3]}) == ("MultiBinary", ([2, 3],), {})
    d = baton.spaces_from_schema(
        {"type": "dict", "spaces": [{"key": "z", "space": {"type": "discrete", "n": 2}},
                                    {"key": "a", "space": {"type": "tuple", "spaces": [{"type": "discrete", "n": 3}]}}]}
    )
    # Dict from a list of pairs, so that the key order (z before a) is kept.
    assert d == ("Dict", ([("z", ("Discrete", (2,), {"start": 0})), ("a", ("Tuple", ([("Discrete", (3,), {"start": 0})],), {}))],), {})
    assert baton.spaces_from_schema({"type": "text", "min_length": 1, "max_length": 4, "charset": "ab"}) == (
        "Text", (4,), {"min_length": 1, "charset": "ab"})
    got = baton.spaces_from_schema(MAZE_LIKE_METADATA)
    assert got.action == ("Discrete", (4,), {"start": 0}) and got.mask_len == 4


def test_box_equality_and_hash():
    a = baton.parse_space({"type": "box", "shape": [2], "low": 0, "high": 1})
    b = baton.parse_space({"type": "box", "shape": [2], "low": [0, 0], "high": [1, 1]})
    c = baton.parse_space({"type": "box", "shape": [2], "low": 0, "high": 2})
    assert a == b and hash(a) == hash(b) and a != c
    assert math.isinf(baton.parse_space({"type": "box", "shape": [1], "low": "-inf", "high": 0}).low[0])
