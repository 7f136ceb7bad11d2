"""Agents' spaces on the wire: the protobuf Space and AgentSpec, and the spaces JSON spec.

The protobuf Space mirrors the spaces JSON spec field for field (spaces/doc.go), so, as
on the Go side, conversions go through that spec: a message is written as the JSON spec
and read by baton.parse_space, which validates it completely and names the path of a
problem; a space is written as the JSON spec and read into the message.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple
from collections.abc import Mapping

import numpy as np

from .. import spaces as S
from ..v1 import baton_pb2 as pb
from .errors import ConfigError

__all__ = ["AgentSpec", "agent_spec", "space_from_proto", "space_proto", "space_spec"]


class AgentSpec(NamedTuple):
    """An agent as the wire describes it: its name, its observation and action spaces
    (baton.spaces plain descriptions) and the length of its action mask (0 for none)."""

    name: str
    observation: Any
    action: Any
    mask_len: int = 0

    def spaces(self, gymnasium: bool | None = None) -> S.AgentSpaces:
        """The spaces as baton.AgentSpaces: Gymnasium spaces when gymnasium is
        importable (or when ``gymnasium=True``), the plain descriptions otherwise."""
        if gymnasium is None:
            gymnasium = S._gymnasium_spaces() is not None
        if gymnasium:
            return S.AgentSpaces(S.to_gymnasium(self.observation), S.to_gymnasium(self.action), self.mask_len)
        return S.AgentSpaces(self.observation, self.action, self.mask_len)

    def to_proto(self) -> pb.AgentSpec:
        """The AgentSpec message, with both the structured and the JSON forms."""
        obs, act = space_spec(self.observation), space_spec(self.action)
        return pb.AgentSpec(
            name=self.name,
            observation_space=space_proto(obs),
            action_space=space_proto(act),
            mask_len=self.mask_len,
            observation_space_json=json.dumps(obs, separators=(",", ":")),
            action_space_json=json.dumps(act, separators=(",", ":")),
        )

    @classmethod
    def from_proto(cls, msg: pb.AgentSpec) -> AgentSpec:
        """Reads an AgentSpec message: the structured form of each space when set, its
        JSON form otherwise. Raises baton.SpecError (a ValueError) naming the problem."""

        def read(field: str):
            if msg.HasField(field):
                return space_from_proto(getattr(msg, field), f".{field}")
            text = getattr(msg, field + "_json")
            if not text:
                raise S.SpecError(f".{field}", "neither the structured nor the JSON form is set")
            return S.parse_space(text)

        if msg.mask_len < 0:
            raise S.SpecError(".mask_len", f"{msg.mask_len}, want >= 0")
        return cls(msg.name, read("observation_space"), read("action_space"), int(msg.mask_len))


_ACTION_KINDS = (S.Discrete, S.MultiDiscrete, S.MultiBinary, S.Box)


def _as_space(v, what: str):
    """A plain description of a plain description, a gymnasium space or a JSON spec."""
    if isinstance(v, (str, bytes, bytearray, Mapping)):
        return S.parse_space(v)
    try:
        return S._as_plain(v)
    except TypeError:
        raise ConfigError(f"{what}: not a space: {v!r}") from None


def agent_spec(spaces, name: str | None = None) -> AgentSpec:
    """An AgentSpec from what a caller has at hand, checked as a server checks it:

    - an AgentSpec (its name unless ``name`` is given) or an AgentSpec message;
    - baton.AgentSpaces (observation, action, mask_len), or a tuple (observation,
      action) or (observation, action, mask_len);
    - a mapping with "observation_space", "action_space" and optionally "mask_len" and
      "name": an agent of ``baton envs ENV --json``.

    Spaces may be plain descriptions, gymnasium spaces or spaces JSON specs. The action
    space must be discrete, multi_discrete, multi_binary or box; a mask (mask_len > 0)
    is for a discrete action space only, one entry per action. Raises ConfigError.
    """
    if isinstance(spaces, pb.AgentSpec):
        spaces = AgentSpec.from_proto(spaces)
    if isinstance(spaces, AgentSpec):
        got_name, obs, act, mask_len = spaces
    elif isinstance(spaces, Mapping):
        missing = [k for k in ("observation_space", "action_space") if k not in spaces]
        if missing:
            raise ConfigError(f"agent spaces: the mapping lacks {', '.join(missing)}")
        got_name = spaces.get("name", "")
        obs, act, mask_len = spaces["observation_space"], spaces["action_space"], spaces.get("mask_len", 0)
    elif isinstance(spaces, tuple) and len(spaces) in (2, 3):
        got_name = ""
        obs, act = spaces[0], spaces[1]
        mask_len = spaces[2] if len(spaces) == 3 else 0
    else:
        raise ConfigError(
            f"agent spaces: want AgentSpaces, (observation, action[, mask_len]) or a mapping with "
            f"observation_space and action_space, got {type(spaces).__name__}"
        )
    name = name if name is not None else got_name
    if not isinstance(name, str) or not name:
        raise ConfigError("agent spaces: the agent has no name: pass name=")
    if any(c.isspace() for c in name):
        raise ConfigError(f"agent name {name!r} has white space")
    try:
        obs = _as_space(obs, f"agent {name}: observation space")
        act = _as_space(act, f"agent {name}: action space")
    except S.SpecError as e:
        raise ConfigError(f"agent {name}: {e}") from None
    if not isinstance(act, _ACTION_KINDS):
        raise ConfigError(f"agent {name}: action space {act.kind}: want discrete, multi_discrete, multi_binary or box")
    if isinstance(mask_len, bool) or not isinstance(mask_len, (int, np.integer)) or mask_len < 0:
        raise ConfigError(f"agent {name}: mask_len {mask_len!r}: want an integer >= 0")
    mask_len = int(mask_len)
    if mask_len and not (isinstance(act, S.Discrete) and mask_len == act.n):
        raise ConfigError(f"agent {name}: mask length {mask_len} does not fit the action space {act}")
    return AgentSpec(name, obs, act, mask_len)


def _number(x: float):
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    f = float(x)
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def space_spec(sp) -> dict:
    """The spaces JSON spec (decoded) of a plain description or a gymnasium space."""
    sp = S._as_plain(sp)
    if isinstance(sp, S.Discrete):
        return {"type": "discrete", "n": sp.n, "start": sp.start}
    if isinstance(sp, S.Box):
        return {
            "type": "box",
            "shape": list(sp.shape),
            "dtype": "float32",
            "low": [_number(x) for x in np.asarray(sp.low, np.float32).ravel()],
            "high": [_number(x) for x in np.asarray(sp.high, np.float32).ravel()],
        }
    if isinstance(sp, S.MultiDiscrete):
        return {"type": "multi_discrete", "nvec": list(sp.nvec)}
    if isinstance(sp, S.MultiBinary):
        return {"type": "multi_binary", "shape": list(sp.shape)}
    if isinstance(sp, S.Dict):
        return {"type": "dict", "spaces": [{"key": k, "space": space_spec(s)} for k, s in sp.spaces]}
    if isinstance(sp, S.Tuple):
        return {"type": "tuple", "spaces": [space_spec(s) for s in sp.spaces]}
    if isinstance(sp, S.Text):
        charset = "" if sp.charset == S.DEFAULT_CHARSET else sp.charset
        return {"type": "text", "min_length": sp.min_length, "max_length": sp.max_length, "charset": charset}
    raise TypeError(f"not a space description: {sp!r}")


def _bound(v) -> float:
    return math.inf if v == "inf" else -math.inf if v == "-inf" else float(v)


def space_proto(spec) -> pb.Space:
    """The Space message of a spaces JSON spec (decoded), a plain description or a
    gymnasium space."""
    if not isinstance(spec, Mapping):
        spec = space_spec(spec)
    kind = spec["type"]
    if kind == "discrete":
        return pb.Space(discrete=pb.DiscreteSpace(n=spec["n"], start=spec.get("start", 0)))
    if kind == "box":
        n = int(np.prod(spec["shape"], dtype=np.int64))
        low, high = spec["low"], spec["high"]
        low = [_bound(x) for x in low] if isinstance(low, list) else [_bound(low)] * n
        high = [_bound(x) for x in high] if isinstance(high, list) else [_bound(high)] * n
        return pb.Space(box=pb.BoxSpace(shape=spec["shape"], dtype="float32", low=low, high=high))
    if kind == "multi_discrete":
        return pb.Space(multi_discrete=pb.MultiDiscreteSpace(nvec=spec["nvec"]))
    if kind == "multi_binary":
        return pb.Space(multi_binary=pb.MultiBinarySpace(shape=spec["shape"]))
    if kind == "dict":
        return pb.Space(
            dict=pb.DictSpace(spaces=[pb.DictEntry(key=e["key"], space=space_proto(e["space"])) for e in spec["spaces"]])
        )
    if kind == "tuple":
        return pb.Space(tuple=pb.TupleSpace(spaces=[space_proto(s) for s in spec["spaces"]]))
    if kind == "text":
        return pb.Space(
            text=pb.TextSpace(
                min_length=spec["min_length"], max_length=spec["max_length"], charset=spec.get("charset", "")
            )
        )
    raise S.SpecError(".type", f"unknown type {kind!r}")


def _proto_spec(msg: pb.Space, path: str, depth: int) -> dict:
    if depth > S.MAX_DEPTH:
        raise S.SpecError(path, f"nested deeper than {S.MAX_DEPTH}")
    kind = msg.WhichOneof("kind")
    if kind is None:
        raise S.SpecError(path, "no kind of space is set")
    m = getattr(msg, kind)
    if kind == "discrete":
        return {"type": "discrete", "n": m.n, "start": m.start}
    if kind == "box":
        out = {"type": "box", "shape": list(m.shape), "low": list(m.low), "high": list(m.high)}
        if m.dtype:
            out["dtype"] = m.dtype
        return out
    if kind == "multi_discrete":
        return {"type": "multi_discrete", "nvec": list(m.nvec)}
    if kind == "multi_binary":
        return {"type": "multi_binary", "shape": list(m.shape)}
    if kind == "dict":
        return {
            "type": "dict",
            "spaces": [
                {"key": e.key, "space": _proto_spec(e.space, f"{path}.spaces[{i}].space", depth + 1)}
                for i, e in enumerate(m.spaces)
            ],
        }
    if kind == "tuple":
        return {"type": "tuple", "spaces": [_proto_spec(s, f"{path}.spaces[{i}]", depth + 1) for i, s in enumerate(m.spaces)]}
    return {"type": "text", "min_length": m.min_length, "max_length": m.max_length, "charset": m.charset}


def space_from_proto(msg: pb.Space, path: str = ""):
    """The plain description of a Space message, validated as baton.parse_space
    validates a JSON spec; a SpecError's path starts with ``path``."""
    spec = _proto_spec(msg, path, 1)
    try:
        return S.parse_space(spec)
    except S.SpecError as e:
        raise S.SpecError(path + e.path, e.message) from None

