"""Turns: one environment stepped turn by turn on the fast lane (capi's
baton_turns_new, internal/fastlane's Turns), each Turn written into numpy arrays per
agent name. The base of baton.pettingzoo."""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import vector as _vector
from ._lane.core import _call, _config, _ptr, _readonly, _Vector


class Turns(_Vector):
    """One copy of a registered environment, stepped one acting agent at a time.

    After each ``reset`` and ``step``, per agent index j (``agents``' order):
    ``obs[j]`` and ``masks[j]`` (None without a mask) its latest observation and mask
    (kept while it is not reported), ``reported``, ``started``, ``rewards``, ``spans``,
    ``terminated``, ``truncated`` [A] what the Turn reported of it, ``ids`` [A] the k of
    its latest id ``<name>_<k>`` (-1 before any); ``next`` the index of the agent acting
    next (-1 when none), ``over`` whether the episode is over, ``tick`` the Turn's tick.
    The arrays are Go's to write, read-only to Python."""

    def __init__(self, name: str, config=None, seed: int | None = None, library: str | os.PathLike | None = None):
        kind, agents = _vector.describe(name, config, library=library)
        super().__init__(name, 1, agents, seed, library)
        na = len(agents)
        self.names = [a.name for a in agents]
        self.obs = [np.zeros(a.obs_dim, np.float32) for a in agents]
        self.masks = [np.zeros(a.mask_len, np.bool_) if a.mask_len else None for a in agents]
        self.reported = np.zeros(na, np.bool_)
        self.started = np.zeros(na, np.bool_)
        self.rewards = np.zeros(na, np.float64)
        self.spans = np.zeros(na, np.int64)
        self.terminated = np.zeros(na, np.bool_)
        self.truncated = np.zeros(na, np.bool_)
        self.ids = np.full(na, -1, np.int64)
        self.state = np.zeros(3, np.int64)
        tables = [(ctypes.c_void_p * na)(*(_ptr(a) for a in arrays)) for arrays in (self.obs, self.masks)]
        flat = (self.reported, self.started, self.rewards, self.spans, self.terminated, self.truncated, self.ids, self.state)
        handle = ctypes.c_int64()
        _call(
            self._lib.baton_turns_new, name.encode(), _config(config), na,
            *(ctypes.cast(t, ctypes.c_void_p) for t in tables), *(_ptr(b) for b in flat), ctypes.byref(handle),
        )
        bufs = (*self.obs, *(m for m in self.masks if m is not None), *flat, *tables)
        self._open(handle.value, bufs)
        _readonly(*self.obs, *self.masks, *flat)

    @property
    def next(self) -> int:
        return int(self.state[0])

    @property
    def over(self) -> bool:
        return bool(self.state[1])

    @property
    def tick(self) -> int:
        return int(self.state[2])

    def reset(self, seed: int | None = None) -> None:
        """Starts an episode from ``seed`` (as ``SingleVector.reset`` seeds copy 0)."""
        self._call(self._lib.baton_reset, self._live(), self._next_seed(seed))

    def step(self, action: int) -> None:
        """Applies the acting agent's action; a bad one raises ``ActionError`` and changes
        nothing."""
        self._call(self._lib.baton_turns_step, self._live(), int(action))
