"""Tensors on the wire: dtype, shape and packed little-endian bytes (see baton.proto).

``encode`` turns a numpy array into a Tensor message; ``decode`` checks a Tensor against
the dtype and shapes wanted, field by field, and returns a numpy array of its own
(writable, native byte order), or raises FieldError naming the first problem, with the
messages of the Go side (remote/tensor.go):

    observation.data: 420 bytes, want 424 (106 float32 of 4 bytes, shape [106])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..v1 import baton_pb2 as pb
from .errors import FieldError

__all__ = ["FLOAT32", "INT64", "BOOL", "MAX_ELEMENTS", "MAX_RANK", "decode", "encode", "shape_string"]

FLOAT32 = pb.DTYPE_FLOAT32
INT64 = pb.DTYPE_INT64
BOOL = pb.DTYPE_BOOL

#: The most dimensions of a tensor (spaces.MaxRank + 1, for a batch's leading N).
MAX_RANK = 33
#: The most elements of a tensor (spaces.MaxFlatDim).
MAX_ELEMENTS = 1 << 26

# The wire form of each dtype, and the numpy dtype a decoded array has.
_WIRE = {FLOAT32: np.dtype("<f4"), INT64: np.dtype("<i8"), BOOL: np.dtype("u1")}
_NATIVE = {FLOAT32: np.dtype(np.float32), INT64: np.dtype(np.int64), BOOL: np.dtype(np.bool_)}
_NAMES = {FLOAT32: "float32", INT64: "int64", BOOL: "bool"}


def dtype_name(d: int) -> str:
    """The enum name of a dtype ("DTYPE_FLOAT32"), or its number when unknown."""
    try:
        return pb.DType.Name(d)
    except ValueError:
        return f"DType({d})"


def shape_string(shape: Sequence[int]) -> str:
    """A shape as the Go side writes it: [2 3]."""
    return "[" + " ".join(str(int(d)) for d in shape) + "]"


def encode(a, dtype: int, shape: Sequence[int] | None = None) -> pb.Tensor:
    """A Tensor of ``a`` converted to dtype (FLOAT32, INT64 or BOOL), with a's shape or
    the given one (of the same number of elements)."""
    arr = np.asarray(a)
    if dtype == BOOL:
        arr = arr.astype(np.bool_, copy=False).astype(np.uint8)
    else:
        arr = arr.astype(_WIRE[dtype], copy=False)
    if shape is None:
        shape = arr.shape
    return pb.Tensor(dtype=dtype, shape=[int(d) for d in shape], data=np.ascontiguousarray(arr).tobytes())


def elements(field: str, shape: Sequence[int]) -> int:
    """The number of elements of a shape, or FieldError for a negative dimension, too
    many dimensions or too many elements."""
    if len(shape) > MAX_RANK:
        raise FieldError(f"{field}.shape", f"{len(shape)} dimensions, want at most {MAX_RANK}")
    n = 1
    for i, d in enumerate(shape):
        if d < 0:
            raise FieldError(f"{field}.shape", f"dimension {i} is {d}, want >= 0")
        if d > 0 and n > MAX_ELEMENTS // d:
            raise FieldError(f"{field}.shape", f"{shape_string(shape)} holds more than {MAX_ELEMENTS} elements")
        n *= d
    return n


def decode(
    field: str,
    t: pb.Tensor | None,
    dtype: int,
    accept: Sequence[Sequence[int]] | None = None,
) -> np.ndarray:
    """Checks t (the message's field named ``field``; None when it is not set) and
    returns its elements as a new array of its shape.

    Checked in order: presence, dtype, shape (rank, dimensions, element count, one of
    ``accept`` when given), byte length, then the values: no NaN in a float32 tensor,
    only 0 and 1 in a bool tensor.
    """
    if t is None:
        raise FieldError(field, "missing")
    if t.dtype != dtype:
        raise FieldError(f"{field}.dtype", f"{dtype_name(t.dtype)}, want {dtype_name(dtype)}")
    shape = tuple(int(d) for d in t.shape)
    n = elements(field, shape)
    if accept is not None and not any(tuple(a) == shape for a in accept):
        want = " or ".join(shape_string(a) for a in accept)
        raise FieldError(f"{field}.shape", f"{shape_string(shape)}, want {want}")
    size = _WIRE[dtype].itemsize
    if len(t.data) != n * size:
        raise FieldError(
            f"{field}.data",
            f"{len(t.data)} bytes, want {n * size} ({n} {_NAMES[dtype]} of {size} bytes, shape {shape_string(shape)})",
        )
    raw = np.frombuffer(t.data, dtype=_WIRE[dtype])
    if dtype == FLOAT32:
        nan = np.isnan(raw)
        if nan.any():
            raise FieldError(f"{field}.data", f"element {int(np.argmax(nan))} is NaN")
    elif dtype == BOOL:
        bad = raw > 1
        if bad.any():
            i = int(np.argmax(bad))
            raise FieldError(f"{field}.data", f"element {i} is {int(raw[i])}, want 0 or 1")
    return raw.astype(_NATIVE[dtype]).reshape(shape)
