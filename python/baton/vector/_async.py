"""The fast lane's asynchronous mode: copies stepped by Go workers in the background,
received in batches of the first ones ready, as EnvPool's and PufferLib's async APIs.

    v = baton.vector.make("cartpole", num_envs=64, batch_size=16, workers=4, seed=1)
    v.async_reset()
    obs, rewards, terminated, truncated, info = v.recv()
    for _ in range(1000):
        v.send(policy(obs), info["env_id"])   # these copies step in the background
        obs, rewards, terminated, truncated, info = v.recv()  # the first 16 done
    v.close()

``send(actions, env_ids)`` queues an action for each copy named (copies that the last
``recv`` returned, and that were sent nothing since) and returns at once; Go workers
step them. ``recv()`` waits for the first ``batch_size`` copies whose step (or reset)
is done, in the order they finished, and returns their rows: ``(obs [B, obs_dim],
rewards [B], terminated [B], truncated [B], info)`` with ``info["env_id"]`` the copies'
ids and, as for ``SingleVector``, ``final_obs``/``_final_obs`` (same-step auto-reset)
and ``action_mask``. ``step(actions, env_ids)`` is send then recv, and ``reset()`` is
``async_reset()`` then recv, as in EnvPool; with ``batch_size == num_envs`` the vector
behaves as a synchronous one whose rows come in the order the copies finished.

Copy i's k-th episode has the seed ``EpisodeSeed(seed, i, k)``, as in the synchronous
vector: a copy's trajectory depends on the seed and its actions only, not on timing.

A blocking ``recv`` waits in slices of 50 ms in Go, returning to Python between them,
so Ctrl-C interrupts it (KeyboardInterrupt); ``timeout`` (seconds) bounds the wait
(TimeoutError; what was received so far is kept for the next call). A copy that fails
or panics raises ``CopyError`` from ``recv`` naming the copy, its agent and the reason
(``failures``); the other copies go on, and the failed one needs ``reset_copies``.
Sending to a copy that is stepping, or failed, raises ``StateError``.

Hierarchical environments (``AsyncMultiVector``, e.g. "maze"): each copy has one
acting agent at a time, so ``recv`` returns the batch grouped per acting agent, as
``MultiVector`` does, ``(groups, rewards, terminated, truncated, ended)`` with
``groups[name]`` the batch's copies that agent acts in (``copies``, ``obs``, ``masks``,
``actions``), ``rewards``/``spans``/``terminated``/``truncated`` [B, A] what each agent
was reported in each copy's last step and ``env_id``/``acting`` [B] the batch's copies
and their acting agents; ``send()`` sends the groups' ``actions`` (or a dict by name).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._lane.core import _ERRLEN, ConfigError, Group, _admit, _call, _groups, _ptr, _raise, _readonly, _Vector

# How long one call of recv waits in Go before returning to Python.
_SLICE_US = 50_000


class _Async(_Vector):
    """What both kinds share: the ids and actions sent, resets, the wait."""

    def _setup(self, num_envs: int, batch_size: int) -> None:
        self.batch_size = batch_size
        self._actions = np.zeros(num_envs, np.int64)
        self._ids = np.zeros(num_envs, np.int64)
        self._ready = ctypes.c_bool()

    def async_reset(self, seed: int | None = None) -> None:
        """Queues a reset of every copy (after waiting for the copies still stepping,
        whose results are dropped), copy i with EpisodeSeed(seed, i, 0); ``recv``
        returns them. ``seed=None`` as ``SingleVector.reset``."""
        self._call(self._lib.baton_reset, self._live(), self._next_seed(seed))

    def reset_copies(self, env_ids) -> None:
        """Queues a reset of the given copies (received or failed, not stepping) into
        their next episodes; ``recv`` returns them."""
        k = self._load(self._ids, env_ids, "env_ids")
        self._call(self._lib.baton_async_reset_copies, self._live(), self._ids.ctypes.data, k)

    def _load(self, dst: np.ndarray, values, what: str, at: int = 0) -> int:
        a = np.asarray(values)
        if a.ndim != 1 or at + len(a) > self.num_envs:
            raise ConfigError(2, f"{what} have shape {a.shape}; want (k,) with k <= {self.num_envs}", [])
        if a.dtype.kind not in "iub":
            raise TypeError(f"{what} are {a.dtype} values; want integers (any integer dtype)")
        np.copyto(dst[at : at + len(a)], a, casting="same_kind")
        return len(a)

    def _send(self, h: int, k: int) -> None:
        self._call(self._lib.baton_async_send, h, self._actions.ctypes.data, self._ids.ctypes.data, k)

    def _send_flat(self, actions, env_ids) -> None:
        h = self._live()
        k = self._load(self._ids, env_ids, "env_ids")
        if self._load(self._actions, actions, "actions") != k:
            raise ConfigError(2, f"{np.shape(actions)[0]} actions for {k} copies", [])
        self._send(h, k)

    def _wait(self, timeout: float | None) -> None:
        """Waits, in slices of Go's, for the next batch."""
        h = self._live()
        deadline = None if timeout is None else time.monotonic() + timeout
        fn, ready, err = self._lib.baton_async_recv, self._ready, self._err
        wait = _SLICE_US
        while True:
            if deadline is not None:
                wait = max(0, min(_SLICE_US, int((deadline - time.monotonic()) * 1e6)))
            code = fn(h, wait, ctypes.byref(ready), err, _ERRLEN)
            if code:
                _raise(code, err)
            if ready.value:
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"baton.vector: no batch of {self.batch_size} copies within {timeout} s")


class AsyncVector(_Async):
    """N copies of a single-agent environment stepped in the background by Go workers
    and received in batches (see the module ``baton.vector._async``).

    Attributes: ``num_envs``, ``batch_size``; ``obs`` [B, obs_dim] float32,
    ``final_obs``, ``masks`` [B, mask_len] bool or None, ``rewards`` [B] float64,
    ``terminated``, ``truncated`` [B] bool and ``env_id`` [B] int64: the last batch, in
    arrays that every ``recv`` overwrites, read-only to Python;
    ``single_observation_space`` and ``single_action_space``.
    """

    def __init__(self, name, num_envs, agents, *, seed, workers, batch_size, config, max_bytes=0, library=None):
        super().__init__(name, num_envs, agents, seed, library)
        _admit(self._lib, name, config, num_envs, max(workers, 1), max_bytes)
        (a,) = agents
        b = int(batch_size)
        self.agent = a.name
        self.single_observation_space, self.single_action_space = a.observation_space, a.action_space
        self.env_id = np.zeros(b, np.int64)
        self.obs = np.zeros((b, a.obs_dim), np.float32)
        self.final_obs = np.zeros((b, a.obs_dim), np.float32)
        self.masks = np.zeros((b, a.mask_len), np.bool_) if a.mask_len else None
        self.rewards = np.zeros(b, np.float64)
        self.terminated = np.zeros(b, np.bool_)
        self.truncated = np.zeros(b, np.bool_)
        bufs = (self.env_id, self.obs, self.final_obs, self.masks, self.rewards, self.terminated, self.truncated)
        self._setup(num_envs, b)
        handle = ctypes.c_int64()
        _call(
            self._lib.baton_async_new, name.encode(), config, num_envs, max(workers, 1), max_bytes, b,
            *(_ptr(x) for x in bufs), ctypes.byref(handle),
        )
        self._done = np.zeros(b, np.bool_)
        self._open(handle.value, (*bufs, self._actions, self._ids))
        _readonly(*bufs)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """``async_reset(seed)``, then ``recv()``: the first batch of reset copies,
        ``(obs, info)``."""
        self.async_reset(seed)
        obs, _, _, _, info = self.recv()
        return obs, info

    def send(self, actions, env_ids=None) -> None:
        """Queues ``actions[j]`` for copy ``env_ids[j]`` (default: the copies of the
        last ``recv``, ``info["env_id"]``) and returns at once. Nothing is queued when
        an id or an action is bad: ``ActionError`` (naming the copy) for an action
        outside the space or masked, ``StateError`` for a copy that is stepping or
        failed, ``ConfigError`` for ids out of range or repeated."""
        self._send_flat(actions, self.env_id if env_ids is None else env_ids)

    def recv(self, timeout: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Waits for the first ``batch_size`` copies done and returns ``(obs, rewards,
        terminated, truncated, info)`` (see the module's documentation). Raises
        TimeoutError after ``timeout`` seconds (None: no limit), CopyError when a copy
        failed, StateError when fewer copies are stepping than a batch needs."""
        self._wait(timeout)
        np.logical_or(self.terminated, self.truncated, out=self._done)
        info: dict[str, Any] = {"env_id": self.env_id, "final_obs": self.final_obs, "_final_obs": self._done}
        if self.masks is not None:
            info["action_mask"] = self.masks
        return self.obs, self.rewards, self.terminated, self.truncated, info

    def step(self, actions, env_ids=None):
        """``send(actions, env_ids)``, then ``recv()``."""
        self.send(actions, env_ids)
        return self.recv()


class AsyncMultiVector(_Async):
    """N copies of a hierarchical or multi-agent environment stepped in the background
    by Go workers and received in batches grouped per acting agent, as
    ``MultiVector`` groups its copies.

    After each ``recv``: ``env_id`` [B] int64, the copies of the batch in the order
    they finished; ``acting`` [B] the index (in ``agent_names``) of the agent acting
    in each; ``groups`` maps each agent name to its ``Group`` of the batch's copies it
    acts in (``copies``, ``obs``, ``masks``, and ``actions`` for the caller to fill);
    ``rewards``, ``spans``, ``terminated`` and ``truncated`` [B, A] what each agent was
    reported in each copy's last step (zeros after a reset), ``ended`` [B] whether its
    episode ended then (and the copy was reset). All are read-only to Python.
    """

    def __init__(self, name, num_envs, agents, *, seed, workers, batch_size, config, max_bytes=0, library=None):
        super().__init__(name, num_envs, agents, seed, library)
        _admit(self._lib, name, config, num_envs, max(workers, 1), max_bytes)
        b, na = int(batch_size), len(agents)
        self.agent_names = [a.name for a in agents]
        self.observation_spaces = {a.name: a.observation_space for a in agents}
        self.action_spaces = {a.name: a.action_space for a in agents}
        self.env_id = np.zeros(b, np.int64)
        self.acting = np.zeros(b, np.int64)
        self.counts = np.zeros(na, np.int64)
        self._copies = [np.zeros(b, np.int64) for _ in agents]
        self._obs = [np.zeros((b, a.obs_dim), np.float32) for a in agents]
        self._masks = [np.zeros((b, a.mask_len), np.bool_) if a.mask_len else None for a in agents]
        self._group_actions = [np.zeros(b, np.int64) for _ in agents]
        self.rewards = np.zeros((b, na), np.float64)
        self.spans = np.zeros((b, na), np.int64)
        self.terminated = np.zeros((b, na), np.bool_)
        self.truncated = np.zeros((b, na), np.bool_)
        self.ended = np.zeros(b, np.bool_)
        self._setup(num_envs, b)
        table = lambda arrays: (ctypes.c_void_p * na)(*(_ptr(a) for a in arrays))  # noqa: E731
        tables = (table(self._copies), table(self._obs), table(self._masks))
        flat = (self.rewards, self.spans, self.terminated, self.truncated, self.ended)
        handle = ctypes.c_int64()
        _call(
            self._lib.baton_async_multi_new, name.encode(), config, num_envs, max(workers, 1), max_bytes, b, na,
            _ptr(self.env_id), _ptr(self.acting), _ptr(self.counts),
            *(ctypes.cast(t, ctypes.c_void_p) for t in tables), *(_ptr(x) for x in flat), ctypes.byref(handle),
        )
        bufs = (self.env_id, self.acting, self.counts, *self._copies, *self._obs, *(m for m in self._masks if m is not None), *flat, *tables)
        self._open(handle.value, (*bufs, self._actions, self._ids))
        _readonly(self.env_id, self.acting, self.counts, *self._copies, *self._obs, *self._masks, *flat)
        self.groups: dict[str, Group] = {}

    def _regroup(self) -> dict[str, Group]:
        self.groups = _groups(self.agents, self.counts, self._copies, self._obs, self._masks, self._group_actions)
        return self.groups

    def reset(self, seed: int | None = None) -> dict[str, Group]:
        """``async_reset(seed)``, then ``recv()``'s groups."""
        self.async_reset(seed)
        return self.recv()[0]

    def send(self, actions: Mapping[str, Any] | None = None, env_ids=None) -> None:
        """Queues the actions of the last batch's copies and returns at once: by agent
        name (``actions[name]`` for the rows of ``groups[name]``; the groups' own
        ``actions`` arrays, filled by the caller, for the names it leaves out, or all
        of them without ``actions``), or, with ``env_ids``, ``actions[j]`` for the agent
        acting in copy ``env_ids[j]``. Errors as ``AsyncVector.send``."""
        if env_ids is not None:
            self._send_flat(actions, env_ids)
            return
        if actions is not None and not isinstance(actions, Mapping):
            raise TypeError(f"actions is a {type(actions).__name__}; want a dict of agent name to the actions of its "
                            "group's rows (or env_ids too, for actions by copy)")
        h = self._live()
        actions = dict(actions or {})
        k = 0
        for name, g in self.groups.items():
            acts = actions.pop(name, g.actions)
            if np.shape(acts) != (len(g),):
                raise ConfigError(2, f"actions of {name!r} have shape {np.shape(acts)}; its group has {len(g)} rows", [])
            self._load(self._ids, g.copies, "env_ids", k)
            k += self._load(self._actions, acts, "actions", k)
        if actions:
            raise ConfigError(2, f"no agent {', '.join(map(repr, actions))} (agents: {', '.join(self.agent_names)})", [])
        self._send(h, k)

    def recv(self, timeout: float | None = None):
        """Waits for the first ``batch_size`` copies done and returns ``(groups,
        rewards, terminated, truncated, ended)``; errors as ``AsyncVector.recv``."""
        self._wait(timeout)
        return self._regroup(), self.rewards, self.terminated, self.truncated, self.ended

    def step(self, actions: Mapping[str, Any] | None = None):
        """``send(actions)``, then ``recv()``."""
        self.send(actions)
        return self.recv()
