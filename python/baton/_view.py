"""ViewVector: N copies of one agent of a hierarchical environment on the fast lane,
the other agents driven in Go (capi's baton_view_new, internal/fastlane's
View). The base of baton.make and baton.make_vec for an agent of a hierarchy."""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from . import vector as _vector
from ._lane.core import _ERRLEN, AgentLayout, ConfigError, _admit, _call, _copy_actions, _ptr, _raise, _readonly, _Vector
from .vector import SingleVector

# A policy of Python's: (obs [obs_dim] float32, mask [mask_len] bool or None) -> action.
PolicyFn = Callable[[np.ndarray, "np.ndarray | None"], Any]

_POLICY_FN = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(ctypes.c_float), ctypes.c_int64,
    ctypes.POINTER(ctypes.c_bool), ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
)


class PolicyError(RuntimeError):
    """A Python policy driving another agent raised; the exception is its cause."""


class ViewVector(SingleVector):
    """N copies of the agent ``agent`` of a hierarchical environment, each copy an
    env.View in Go: a ``SingleVector`` (same buffers, same-step auto-reset) whose step
    lasts until the agent acts again or its sub-episode ends, with ``spans`` [N] int64,
    each copy's span ticks after a step (0 after a reset). ``policies`` maps other
    agents to a registry policy name (run in Go) or a Python callable ``(obs, mask) ->
    action``; an agent left out plays its default."""

    def __init__(self, name: str, num_envs: int, layout: AgentLayout, *, agent: str,
                 policies: Mapping[str, str | PolicyFn] | None, seed: int | None, workers: int,
                 config: bytes | None, max_bytes: int = 0, library: str | os.PathLike | None = None,
                 hold: bool = False):
        _Vector.__init__(self, name, num_envs, [layout], seed, library)
        _admit(self._lib, name, config, num_envs, workers, max_bytes)
        a = layout
        self.agent = a.name
        self.single_observation_space, self.single_action_space = a.observation_space, a.action_space
        n = num_envs
        self.obs = np.zeros((n, a.obs_dim), np.float32)
        self.final_obs = np.zeros((n, a.obs_dim), np.float32)
        self.masks = np.zeros((n, a.mask_len), np.bool_) if a.mask_len else None
        self.rewards = np.zeros(n, np.float64)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self.spans = np.zeros(n, np.int64)
        spec: dict[str, str | int] = {}
        self._fns: list[PolicyFn] = []
        self._fns_names: list[str] = []
        self._exc: BaseException | None = None
        for other, p in (policies or {}).items():
            if isinstance(p, str):
                spec[other] = p
            elif callable(p):
                spec[other] = len(self._fns)
                self._fns.append(p)
                self._fns_names.append(other)
            else:
                raise ConfigError(1, f"policy of agent {other!r} is {p!r}; want a policy name or a callable", [])
        self._callback = _POLICY_FN(self._trampoline) if self._fns else None
        bufs = (self.obs, self.final_obs, self.masks, self.rewards, self.terminated, self.truncated, self.spans)
        self.hold = np.zeros(n, np.int32) if hold else None
        handle = ctypes.c_int64()
        cb = ctypes.cast(self._callback, ctypes.c_void_p) if self._callback is not None else None
        _call(
            self._lib.baton_view_new, name.encode(), config, agent.encode(), json.dumps(spec).encode(), cb,
            n, workers, max_bytes, *(_ptr(b) for b in bufs[:6]), _ptr(self.hold), _ptr(self.spans), ctypes.byref(handle),
        )
        self._actions = np.zeros(n, np.int64)
        self._done_w = np.zeros(n, np.bool_)
        self._done = self._done_w.view()
        self._open(handle.value, (*bufs, self.hold, self._actions, self._callback))
        self._actions_ptr = self._actions.ctypes.data
        self._step_native = self._lib.baton_view_step
        _readonly(*bufs, self._done)

    def _trampoline(self, k, obs, n, mask, m, out) -> int:
        try:
            o = np.ctypeslib.as_array(obs, (n,)).copy() if n else np.zeros(0, np.float32)
            msk = np.ctypeslib.as_array(mask, (m,)).astype(np.bool_) if m else None
            out[0] = int(self._fns[k](o, msk))
            return 0
        except BaseException as e:  # raised again by the step that called it
            if self._exc is None:
                self._exc = e
            return 1

    def _check(self, code: int) -> None:
        exc, self._exc = self._exc, None
        if code:
            try:
                _raise(code, self._err)
            except _vector.VectorError as e:
                if exc is not None:
                    raise PolicyError(f"a Python policy raised: {exc!r} ({e})") from exc
                raise

    def reset(self, seed: int | None = None, *, fresh: bool = False) -> tuple[np.ndarray, dict]:
        """Resets every copy (seeds as ``SingleVector.reset``). With ``fresh``, every copy
        starts a new underlying episode; without, a copy whose underlying episode can
        go on (the agent's sub-episode ended, the episode did not) goes on with it."""
        code = self._lib.baton_view_reset(self._live(), self._next_seed(seed), bool(fresh), self._err, _ERRLEN)
        self._check(code)
        info = self._info(False)
        info["span_ticks"] = self.spans
        return self.obs, info

    def step(self, actions):
        """As ``SingleVector.step``; ``info["span_ticks"]`` is ``spans``."""
        h = self._handle
        if not h:
            self._live()
        _copy_actions(self._actions, actions, self.single_action_space)
        code = self._step_native(h, self._actions_ptr, self._err, _ERRLEN)
        self._check(code)
        info = self._info(True)
        info["span_ticks"] = self.spans
        return self.obs, self.rewards, self.terminated, self.truncated, info
