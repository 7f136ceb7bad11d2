"""Raw actions on the wire, per action space (see AgentService in baton.proto):

    discrete         DTYPE_INT64, shape [] (or [1] from other senders)
    multi_discrete   DTYPE_INT64, shape [len(nvec)]
    multi_binary     DTYPE_INT64, shape [prod(shape)], each 0 or 1
    box              DTYPE_FLOAT32, shape [prod(shape)] (or the box's shape)

In a batch every tensor gains a leading dimension N. ``encode`` turns what a policy or a
caller returns (a Python number, a numpy array or scalar, anything numpy converts) into
the tensor, ``decode`` reads one back; both raise FieldError naming what is wrong.
"""

from __future__ import annotations


import numpy as np

from .. import spaces as S
from ..v1 import baton_pb2 as pb
from . import tensors as T
from .errors import FieldError

__all__ = ["decode", "decode_batch", "describe", "encode", "encode_batch", "row_dim"]


def describe(sp) -> str:
    """A space in a few words, for messages: Discrete(4), Box[2 3]."""
    if isinstance(sp, S.Discrete):
        return f"Discrete({sp.n})" if sp.start == 0 else f"Discrete({sp.n}, start={sp.start})"
    if isinstance(sp, S.MultiDiscrete):
        return f"MultiDiscrete{T.shape_string(sp.nvec)}"
    if isinstance(sp, S.MultiBinary):
        return f"MultiBinary{T.shape_string(sp.shape)}"
    if isinstance(sp, S.Box):
        return f"Box{T.shape_string(sp.shape)}"
    return sp.kind


def row_dim(sp) -> int:
    """The elements of one action: 1 for Discrete, len(nvec) for MultiDiscrete, the
    flat dimension otherwise."""
    if isinstance(sp, S.Discrete):
        return 1
    if isinstance(sp, S.MultiDiscrete):
        return len(sp.nvec)
    return sp.flat_dim


def _integers(field: str, a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.round(a)))
        if bad.size:
            raise FieldError(field, f"element {int(bad[0])} is {a.ravel()[bad[0]]}, want an integer")
        return a.astype(np.int64)
    raise FieldError(field, f"a {a.dtype} value, want integers")


def _check_rows(field: str, sp, rows: np.ndarray, masks: np.ndarray | None, batch: bool) -> None:
    """Checks rows (N, row_dim) of raw actions against the space and the masks (N, n);
    a problem of a batch names its row."""
    n = rows.shape[0]

    def where(r: int) -> str:
        return f"{field}[row {r}]" if batch else field

    if isinstance(sp, S.Discrete):
        v = rows[:, 0]
        bad = np.flatnonzero((v < sp.start) | (v >= sp.start + sp.n))
        if bad.size:
            r = int(bad[0])
            raise FieldError(where(r), f"{int(v[r])} is outside {describe(sp)}: want {sp.start} to {sp.start + sp.n - 1}")
        if masks is not None:
            allowed = masks[np.arange(n), v - sp.start]
            bad = np.flatnonzero(~allowed)
            if bad.size:
                r = int(bad[0])
                raise FieldError(where(r), f"{int(v[r])} is masked out (allowed: {np.flatnonzero(masks[r]) + sp.start})")
    elif isinstance(sp, S.MultiDiscrete):
        nvec = np.asarray(sp.nvec, np.int64)
        bad = np.argwhere((rows < 0) | (rows >= nvec))
        if bad.size:
            r, i = (int(x) for x in bad[0])
            raise FieldError(where(r), f"entry {i} is {int(rows[r, i])}, want 0 to {int(nvec[i]) - 1}")
    elif isinstance(sp, S.MultiBinary):
        bad = np.argwhere((rows != 0) & (rows != 1))
        if bad.size:
            r, i = (int(x) for x in bad[0])
            raise FieldError(where(r), f"entry {i} is {int(rows[r, i])}, want 0 or 1")
    elif isinstance(sp, S.Box):
        low = np.asarray(sp.low, np.float32).ravel()
        high = np.asarray(sp.high, np.float32).ravel()
        nan = np.argwhere(np.isnan(rows))
        if nan.size:
            r, i = (int(x) for x in nan[0])
            raise FieldError(where(r), f"entry {i} is NaN")
        bad = np.argwhere((rows < low) | (rows > high))
        if bad.size:
            r, i = (int(x) for x in bad[0])
            raise FieldError(
                where(r), f"entry {i} is {float(rows[r, i])}, outside [{float(low[i])}, {float(high[i])}]"
            )


def _rows(field: str, sp, value, n: int | None) -> np.ndarray:
    """value as (N, row_dim) raw actions, N = 1 for a single action."""
    a = np.asarray(value)
    d = row_dim(sp)
    count = 1 if n is None else n
    if a.size != count * d:
        want = f"{d} value{'s' if d != 1 else ''}" if n is None else f"{n} x {d} values"
        raise FieldError(field, f"{a.size} values of shape {T.shape_string(a.shape)}, want {want} for {describe(sp)}")
    if isinstance(sp, S.Box):
        if a.dtype.kind not in "iuf" and a.dtype.kind != "b":
            raise FieldError(field, f"a {a.dtype} value, want numbers")
        rows = a.astype(np.float32).reshape(count, d)
    else:
        if a.dtype.kind == "b":
            a = a.astype(np.int64)
        rows = _integers(field, a).reshape(count, d)
    return rows


def encode(sp, value, *, mask=None, check: bool = True, field: str = "action") -> pb.Tensor:
    """The tensor of one raw action of the action space sp. With ``check``, the action
    must lie in the space and be allowed by ``mask`` (a bool array, for Discrete);
    without, only its form is checked (size, integers), as a client leaves the rest to
    the server."""
    rows = _rows(field, sp, value, None)
    if check:
        _check_rows(field, sp, rows, None if mask is None else np.asarray(mask, bool).reshape(1, -1), False)
    if isinstance(sp, S.Discrete):
        return T.encode(rows.reshape(()), T.INT64)
    dtype = T.FLOAT32 if isinstance(sp, S.Box) else T.INT64
    return T.encode(rows.reshape(-1), dtype)


def encode_batch(sp, values, n: int, *, masks=None, field: str = "actions") -> pb.Tensor:
    """The tensor of n raw actions, checked against the space and the masks (N, n)."""
    rows = _rows(field, sp, values, n)
    _check_rows(field, sp, rows, None if masks is None else np.asarray(masks, bool).reshape(n, -1), True)
    if isinstance(sp, S.Discrete):
        return T.encode(rows.reshape(n), T.INT64)
    dtype = T.FLOAT32 if isinstance(sp, S.Box) else T.INT64
    return T.encode(rows, dtype)


def _accept(sp, n: int | None):
    lead = () if n is None else (n,)
    if isinstance(sp, S.Discrete):
        return [lead, lead + (1,)]
    shapes = [lead + (row_dim(sp),)]
    if isinstance(sp, S.Box) and len(sp.shape) != 1:
        shapes.append(lead + tuple(sp.shape))
    return shapes


def _value(sp, rows: np.ndarray):
    if isinstance(sp, S.Discrete):
        return rows[:, 0]
    if isinstance(sp, (S.Box, S.MultiBinary)):
        return rows.reshape((rows.shape[0],) + tuple(sp.shape))
    return rows


def decode(sp, t: pb.Tensor | None, *, field: str = "action", check: bool = True):
    """Reads one raw action: an int for Discrete, an int64 array for MultiDiscrete, an
    int64 array of the space's shape for MultiBinary, a float32 array of the box's shape
    for Box. Raises FieldError."""
    dtype = T.FLOAT32 if isinstance(sp, S.Box) else T.INT64
    a = T.decode(field, t, dtype, _accept(sp, None))
    rows = a.reshape(1, row_dim(sp))
    if check:
        _check_rows(field, sp, rows, None, False)
    v = _value(sp, rows)[0]
    return int(v) if isinstance(sp, S.Discrete) else v


def decode_batch(sp, t: pb.Tensor | None, n: int, *, field: str = "actions", check: bool = True):
    """Reads n raw actions: the forms of decode, with a leading N."""
    dtype = T.FLOAT32 if isinstance(sp, S.Box) else T.INT64
    a = T.decode(field, t, dtype, _accept(sp, n))
    rows = a.reshape(n, row_dim(sp))
    if check:
        _check_rows(field, sp, rows, None, True)
    return _value(sp, rows)
