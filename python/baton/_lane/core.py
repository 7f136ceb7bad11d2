"""The fast lane's shared core: the errors Go's codes map to, the checks of the
arguments every adapter takes, the buffers Go writes and their addresses, the
environments' layouts, and ``_Vector``, the handle, seeds and close that every kind
of in-process vector shares.

Private to baton: ``baton.vector`` re-exports the public names (the errors,
``AgentLayout``, ``Failure``, ``Group``, ``describe``), and its vectors, ``baton.gym``,
``baton.pettingzoo`` and ``baton.rllib`` import what they share from here, so that
imports run one way: this package imports nothing of theirs.
"""

from __future__ import annotations

import ctypes
import json
import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import spaces as _spaces
from . import native as _native

_ERRLEN = 64 * 1024
_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Failure:
    """One copy's part of an error: ``copy`` (-1 when the error is of no copy), the
    ``agent`` acting in it, the operation ``op`` ("action", "step" or "reset"), the
    ``reason`` and, for a panic, its Go stack ``panic``."""

    copy: int
    agent: str
    op: str
    reason: str
    panic: str = ""


class VectorError(Exception):
    """An error of the fast lane, with the Go error's ``code``, ``message`` and
    ``failures``."""

    def __init__(self, code: int, message: str, failures: list[Failure]):
        self.code, self.message, self.failures = code, message, failures
        super().__init__(self._text())

    def _text(self) -> str:
        named = [f for f in self.failures if f.copy >= 0]
        if not named:
            return self.message
        parts = [f"copy {f.copy} (agent {f.agent or '?'}, {f.op}): {f.reason}" for f in named[:8]]
        more = f"; and {len(named) - 8} more" if len(named) > 8 else ""
        return "; ".join(parts) + more


class ConfigError(VectorError, ValueError):
    """An unknown environment, a bad configuration, or one the fast lane cannot step
    (an agent whose actions are not Discrete); also bad arguments."""


class ActionError(VectorError, ValueError):
    """An action outside its agent's space, or masked; nothing stepped."""


class CopyError(VectorError, RuntimeError):
    """A copy failed or panicked in a step or reset; the vector needs ``reset()``."""


class StateError(VectorError, RuntimeError):
    """The vector is closed, or needs ``reset()``."""


class LogError(VectorError, RuntimeError):
    """The vector's activity log (``log=``) could not be opened or written; the
    vector itself stepped."""


class LimitError(ConfigError):
    """A vector over a limit, refused before anything was allocated: its estimated
    memory over ``max_bytes`` (the message names the copies, the estimate and the
    limit), or more ``workers`` than the most allowed (4 per CPU, and at least 256)."""

    def _text(self) -> str:
        text = super()._text()
        if "(max_bytes)" in text:
            text += f" with max_bytes= or the environment variable {MAX_BYTES_ENV}"
        return text


_CLASSES = {1: ConfigError, 2: ConfigError, 3: ActionError, 4: CopyError, 5: StateError, 7: LogError, 8: LimitError}

# The memory a vector may take when make names no max_bytes and the environment
# variable MAX_BYTES_ENV is unset: Go's default (internal/fastlane's DefaultMaxBytes).
DEFAULT_MAX_BYTES = 4 << 30
MAX_BYTES_ENV = "BATON_MAX_BYTES"


def _raise(code: int, buf: ctypes.Array | str) -> None:
    raw = buf if isinstance(buf, str) else buf.value.decode("utf-8", "replace")
    try:
        report = json.loads(raw)
    except ValueError:
        report = {"message": raw}
    failures = [
        Failure(f.get("copy", -1), f.get("agent", ""), f.get("op", ""), f.get("reason", ""), f.get("panic", ""))
        for f in report.get("failures") or []
    ]
    raise _CLASSES.get(code, VectorError)(code, report.get("message", raw), failures)


def _call(fn, *args) -> None:
    buf = ctypes.create_string_buffer(_ERRLEN)
    code = fn(*args, buf, _ERRLEN)
    if code:
        _raise(code, buf)


def _config(config: Mapping[str, Any] | str | bytes | None, what: str = "config") -> bytes | None:
    """The JSON of an environment's configuration: a mapping, JSON text, or None for
    its defaults; anything else raises TypeError naming ``what``."""
    if config is None:
        return None
    if isinstance(config, (str, bytes)):
        return config.encode() if isinstance(config, str) else config
    if not isinstance(config, Mapping):
        raise TypeError(f"{what} is {config!r:.60} ({type(config).__name__}); want a dict, JSON text, or None")
    try:
        return json.dumps(dict(config)).encode()
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: {e} (want a dict of JSON values)") from None


#: The suffix of a scrambled variant's name and the field of its configuration that
#: holds the permutations' seed, as Go's package scramble names them.
SCRAMBLED_SUFFIX, SCRAMBLE_KEY = "-scrambled", "scramble"


def _scrambled(name: Any, config: Any, scramble: Any) -> tuple[Any, Any]:
    """The environment and configuration that ``scramble=SEED`` names: the scrambled
    variant of ``name`` (``NAME-scrambled``, Go's ``scramble.Entry``: each agent's
    discrete actions and observation features permuted by the seed) with the seed
    under ``"scramble"`` in its configuration. ``scramble=None`` leaves both as they
    are. TypeError for a seed that is not an int, ValueError (ConfigError) for one out
    of range or a seed given twice (in ``config`` too, or a name already scrambled)."""
    if scramble is None:
        return name, config
    if isinstance(scramble, (bool, np.bool_)) or not isinstance(scramble, (int, np.integer)):
        raise TypeError(f"scramble is {scramble!r:.60} ({type(scramble).__name__}); want None or a seed, an int >= 0")
    if not 0 <= scramble <= _MASK64:
        raise ConfigError(2, f"scramble is {scramble}; want a seed from 0 to 2**64 - 1", [])
    _name(name, "env")
    if name.endswith(SCRAMBLED_SUFFIX):
        raise ConfigError(2, f"scramble={scramble}: {name} is scrambled already; give its seed in config[{SCRAMBLE_KEY!r}] "
                             "or name the plain environment", [])
    raw = _config(config)
    try:
        cfg = {} if raw is None or not raw.strip() or raw.strip() == b"null" else json.loads(raw)
    except ValueError as e:
        raise ConfigError(2, f"config is not JSON: {e}", []) from None
    if not isinstance(cfg, dict):
        raise ConfigError(2, f"scramble={scramble}: the configuration is {raw!r:.60}; want a JSON object to add the seed to", [])
    if SCRAMBLE_KEY in cfg:
        raise ConfigError(2, f"scramble={scramble} and config[{SCRAMBLE_KEY!r}]={cfg[SCRAMBLE_KEY]!r}: give the seed once", [])
    return name + SCRAMBLED_SUFFIX, {**cfg, SCRAMBLE_KEY: int(scramble)}


def _name(name: Any, what: str = "name") -> bytes:
    """A registered environment's name, encoded; anything but a str raises TypeError
    naming ``what``."""
    if not isinstance(name, str):
        raise TypeError(f"{what} is {name!r:.60} ({type(name).__name__}); want the name of a registered environment (a str)")
    return name.encode()


def _count(value: Any, what: str, least: int) -> int:
    """An integer argument >= least: TypeError (naming ``what``) for a non-integer
    (bools included), ConfigError (a ValueError) below least or past int64."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} is {value!r:.60} ({type(value).__name__}); want an int >= {least}")
    if not least <= value < 1 << 63:
        raise ConfigError(2, f"{what} is {value}; want an int from {least} to 2**63 - 1", [])
    return int(value)


def _seed(seed: Any, what: str = "seed") -> int | None:
    """A seed as Gymnasium takes it: None, or an int >= 0 (numpy integers too; not a
    bool); the fast lane's seeds are uint64, so it must be below 2**64. TypeError or
    ValueError naming ``what`` otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{what} is {seed!r:.60} ({type(seed).__name__}); want None or an int >= 0")
    if not 0 <= seed <= _MASK64:
        raise ValueError(f"{what} is {seed}; want None or an int from 0 to 2**64 - 1")
    return int(seed)


def _action(action: Any, space: Any, who: str = "") -> int:
    """One action of a Discrete space as an int: an int or numpy integer, or a 0-d
    integer array, as Gymnasium's Discrete.contains takes them. Anything else (0.7,
    1.0, "1", None, a list) raises ActionError naming the action and the space (the
    action is checked against the space's range by the caller)."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, np.bool_):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    prefix = f"{who}: " if who else ""
    raise ActionError(3, f"{prefix}action {action!r:.60} ({type(action).__name__}) is not an integer: {space} takes ints", [])


def _max_bytes(max_bytes: Any) -> int:
    """The memory limit to pass to Go: ``max_bytes``, else the environment variable
    BATON_MAX_BYTES, else 0 (Go's default, DEFAULT_MAX_BYTES)."""
    if max_bytes is None:
        raw = os.environ.get(MAX_BYTES_ENV, "").strip()
        if not raw:
            return 0
        try:
            max_bytes = int(raw.replace("_", ""))
        except ValueError:
            raise ValueError(f"{MAX_BYTES_ENV}={raw!r}; want a number of bytes, such as 8589934592 for 8 GiB") from None
        what = MAX_BYTES_ENV
    else:
        what = "max_bytes"
    return _count(max_bytes, what, 1)


def _admit(lib: ctypes.CDLL, name: str, config: bytes | None, num_envs: int, workers: int, max_bytes: int) -> None:
    """Asks Go whether num_envs copies on workers workers stay within the limits,
    before their buffers are allocated: LimitError if not."""
    buf = ctypes.create_string_buffer(_ERRLEN)
    code = lib.baton_admit(name.encode(), config, num_envs, workers, max_bytes, buf, _ERRLEN)
    if code:
        _raise(code, buf)


@dataclass(frozen=True)
class AgentLayout:
    """One agent of an environment as the fast lane steps it: ``name``, ``obs_dim``,
    ``mask_len`` (0 without a mask), its Discrete actions ``start`` .. ``start +
    actions - 1``, and its spaces: gymnasium.spaces when gymnasium is importable, else
    ``baton.spaces`` descriptions, as ``baton.spaces_from_schema`` gives them."""

    name: str
    obs_dim: int
    mask_len: int
    actions: int
    start: int
    observation_space: Any
    action_space: Any


def describe(name: str, config: Mapping[str, Any] | str | bytes | None = None, *,
             library: str | os.PathLike | None = None) -> tuple[str, list[AgentLayout]]:
    """The kind ("single" or "multi") and agents of an environment registered in
    ``library`` (a path; None: ``BATON_LIBRARY``, else baton's own library).

    >>> baton.vector.describe("cartpole")[0]  # doctest: +SKIP
    'single'
    """
    nm, cfg = _name(name), _config(config)
    lib = _native.load(library)
    out = ctypes.create_string_buffer(_ERRLEN)
    _call(lib.baton_describe, nm, cfg, out, _ERRLEN)
    return _layout(out.value)


def _describe_aside(
    name: str, config: Mapping[str, Any] | str | bytes | None = None, view: tuple[str | None, str] | None = None,
    library: str | os.PathLike | None = None,
) -> tuple[str, list[AgentLayout]]:
    """``describe`` without loading the Go library into this process (see
    ``_native.describe_aside``, and ``view`` there), so that the process may still
    fork and make vectors in its children."""
    code, out, err = _native.describe_aside(_name(name), _config(config), view, library)
    if code:
        _raise(code, err)
    return _layout(out)


def _layout(raw: str | bytes) -> tuple[str, list[AgentLayout]]:
    layout = json.loads(raw)
    agents = [
        AgentLayout(
            a["name"], a["obs_dim"], a["mask_len"], a["actions"], a["start"],
            _spaces.spaces_from_schema(a["observation_space"]), _spaces.spaces_from_schema(a["action_space"]),
        )
        for a in layout["agents"]
    ]
    return layout["kind"], agents


def _copy_actions(dst: np.ndarray, actions: Any, space: Any, what: str = "actions", want: str = "") -> None:
    """Copies integer actions into dst, of the same shape: ConfigError for another
    shape, TypeError (naming the space) for actions that are not integers."""
    shape = np.shape(actions)
    if shape != dst.shape:
        raise ConfigError(2, f"{what} have shape {shape}; {want or f'want {dst.shape}'}", [])
    try:
        np.copyto(dst, actions, casting="same_kind")
    except (TypeError, ValueError):
        raise TypeError(f"{what} are {np.asarray(actions).dtype} values; {space} takes integers (any integer dtype)") from None


def _ptr(a: np.ndarray | None) -> int | None:
    return None if a is None or a.size == 0 else a.ctypes.data


def _readonly(*arrays: np.ndarray | None) -> None:
    for a in arrays:
        if a is not None:
            a.flags.writeable = False


def _close(lib: ctypes.CDLL, handle: int, _buffers: tuple) -> None:
    # _buffers keeps the arrays alive for as long as Go may hold their addresses.
    lib.baton_close(handle)


class _Vector:
    """What both kinds share: the handle, the seeds, close."""

    def __init__(self, name: str, num_envs: int, agents: list[AgentLayout], seed: int | None,
                 library: str | os.PathLike | None = None):
        self.name = name
        self.num_envs = num_envs
        self.agents = agents
        self._seed = _seed(seed) or 0
        self._resets = 0
        self._handle = 0
        self._lib = _native.load(library)
        self.library: str = self._lib._name
        self._finalizer: weakref.finalize | None = None
        self._forked = False
        self.log_dir: str | None = None

    def _open(self, handle: int, buffers: tuple) -> None:
        self._handle = handle
        self._finalizer = weakref.finalize(self, _close, self._lib, handle, buffers)
        _native.track(self)
        # The error buffer of every call, allocated once: a step allocates nothing
        # on the way in.
        self._err = ctypes.create_string_buffer(_ERRLEN)

    @property
    def closed(self) -> bool:
        return self._handle == 0

    def _after_fork(self) -> None:
        # In a child forked after this vector was made: the Go runtime that holds it
        # is the parent's, so the child neither steps nor frees it.
        if self._finalizer is not None:
            self._finalizer.detach()
        self._handle, self._forked = 0, True

    def _live(self) -> int:
        if self._handle == 0:
            if self._forked:
                raise _native._fork_error()
            raise StateError(5, f"baton.vector: the {self.name} vector is closed", [])
        return self._handle

    def _call(self, fn, *args) -> None:
        code = fn(*args, self._err, _ERRLEN)
        if code:
            _raise(code, self._err)

    def _next_seed(self, seed: int | None) -> int:
        seed = _seed(seed)
        if seed is None:
            seed = self._seed + self._resets
        self._resets += 1
        return seed & _MASK64

    def _record(self, log: str | os.PathLike, policy: str | Mapping[str, str] | None, run: str | None) -> None:
        if isinstance(policy, str):
            policies = {a.name: policy for a in self.agents}
        elif policy is None:
            policies = {}
        else:
            policies = {str(k): str(v) for k, v in dict(policy).items()}
        spec = {"dir": os.fspath(log), "run": run or "", "policies": policies}
        self._call(self._lib.baton_record, self._live(), json.dumps(spec).encode())
        self.log_dir = os.fspath(log)

    def render(self, i: int = 0, *, final: bool = False) -> np.ndarray:
        """Copy ``i``'s current state drawn as pixels: an [H, W, 3] uint8 array of its
        own (Go rasterises the environment's frame: its SVG picture, else its text; see
        capi's baton_render). With ``final``, the state that ended the copy's last
        episode, before its auto-reset, which a vector made with ``hold`` keeps while
        ``_final_frames(True)``. ConfigError for a picture Go cannot draw.

        >>> v.render(0).shape  # doctest: +SKIP
        (400, 600, 3)
        """
        shape = np.zeros(2, np.int64)
        buf = getattr(self, "_frame", None)
        for _ in range(2):
            n = 0 if buf is None else buf.size
            code = self._lib.baton_render(self._live(), int(i), bool(final), _ptr(buf), n, shape.ctypes.data, self._err,
                                          _ERRLEN)
            if code == 0:
                return buf[: 3 * int(shape[0]) * int(shape[1])].reshape(int(shape[0]), int(shape[1]), 3).copy()
            if code != 2 or shape[0] * shape[1] == 0 or (buf is not None and buf.size >= 3 * shape[0] * shape[1]):
                _raise(code, self._err)
            buf = self._frame = np.zeros(3 * int(shape[0]) * int(shape[1]), np.uint8)
        _raise(code, self._err)

    def _final_frames(self, on: bool) -> None:
        # Whether the copies keep their frames at their episodes' ends (render's final),
        # for a vector made with hold.
        self._call(self._lib.baton_final_frames, self._live(), bool(on))

    def close(self) -> None:
        """Closes the activity log, if recording (the episodes in progress end as
        stopped trials; raises ``LogError`` if the log could not be written), frees
        the Go vector and stops its workers. Calling it again does nothing."""
        h, logging = self._handle, self.log_dir is not None
        self._handle, self.log_dir = 0, None
        try:
            if h and logging:
                self._call(self._lib.baton_record_close, h)
        finally:
            if self._finalizer is not None:
                self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_envs


@dataclass
class Group:
    """The copies one agent acts in now, in a ``MultiVector``: ``copies`` (ascending
    copy indices), their ``obs`` [k, obs_dim] float32 and ``masks`` [k, mask_len] bool
    (None without a mask), read-only views of the vector's buffers, and ``actions``
    [k] int64, which the caller fills before ``step()``. Valid until the next reset or
    step."""

    agent: str
    index: int
    copies: np.ndarray
    obs: np.ndarray
    masks: np.ndarray | None
    actions: np.ndarray

    def __len__(self) -> int:
        return len(self.copies)


def _groups(agents, counts: np.ndarray, copies, obs, masks, actions) -> dict[str, Group]:
    """Each agent's Group: the first counts[j] rows of agent j's buffers."""
    groups = {}
    for j, a in enumerate(agents):
        k = int(counts[j])
        m = masks[j]
        groups[a.name] = Group(a.name, j, copies[j][:k], obs[j][:k], None if m is None else m[:k], actions[j][:k])
    return groups
