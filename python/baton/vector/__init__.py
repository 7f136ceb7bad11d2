"""The fast lane: N copies of a registered baton environment stepped per call by Go
code in this process, written straight into numpy arrays that Python owns.

    import numpy as np
    import baton.vector

    v = baton.vector.make("cartpole", num_envs=1024, seed=7)
    obs, info = v.reset()
    for _ in range(1000):
        obs, rewards, terminated, truncated, info = v.step(np.random.randint(0, 2, 1024))
    v.close()

How it works. ``make`` loads a Go library with ctypes (baton's own, cmd/libbaton:
built from the checkout if need be, see ``baton.build``, or the one a wheel carries;
or, with ``library=``, a library of one's own environments), asks it the
environment's layout, allocates the buffers as numpy arrays and hands their addresses
to Go once. Every ``reset`` and
``step`` is one C call in which Go steps every copy (env/vector's Env, or Multi for a
hierarchy) and writes the results into those arrays: nothing is copied or converted
on the Python side, and a step costs Python one ctypes call. ctypes releases the GIL
during the call, so other Python threads run while Go steps.

Why in-process. The alternative, a Go worker process stepping the copies in shared
memory, was weighed by measurement on the 2-core development machine. In process, a
step costs Python 2 to 3 us over Go's own step (one ctypes call; ``python -m
baton.bench``: 0.92 of Go's ``VectorCartPole/N=1024/sync``). A worker process needs a
wake-up and a reply per step: a round trip between two processes over a pipe measured
6.5 to 13.6 us there, four times the in-process cost, before any data moves, and it
keeps a second core busy. At N=1024 cart-poles (about 75 us a tick in Go) that would
cost a tenth of the throughput; at N=64 (about 5 us a tick) it would cost more than
half. What a process would buy, surviving ``fork`` and isolating a crash, is had more
cheaply: baton loads Go lazily (see Processes), and a panic in a copy is recovered
into an error.

Buffers and ownership. The arrays are the vector's, allocated by ``make`` and valid
(kept alive by the vector) until ``close`` and beyond: after ``close`` Go holds no
pointer to them and they keep their last values. ``reset`` and ``step`` return the same
arrays every time, overwritten in place by the next call, and marked read-only
(``arr.flags.writeable`` is False) because Go writes them: copy what you keep past the
next step (``obs.copy()``). Only the actions are Python's to write: ``step`` reads its
argument during the call only (a C-contiguous int64 array is passed without a copy),
and a multi-agent vector's ``Group.actions`` are arrays that Go reads at the next step.

Single-agent vectors (``SingleVector``, e.g. "cartpole") follow Gymnasium's vector
API with same-step auto-reset, as env/vector's Env does: ``step`` returns
``(obs [N, obs_dim] float32, rewards [N] float64, terminated [N] bool, truncated [N]
bool, info)``, where a copy whose episode ended is already reset: its row of ``obs``
is the new episode's first observation, and ``info["final_obs"]`` (row i, valid where
``info["_final_obs"][i]``) the episode's last one, the observation to bootstrap from
after a truncation. Rewards are float64, the exact values Go's environments return
(and the activity logs keep); convert once per batch for a float32 learner. Masks,
for agents with an action mask, are ``info["action_mask"]`` [N, mask_len] bool.

``SingleVector.to_gymnasium()`` presents the vector as a ``gymnasium.vector.VectorEnv``
(``autoreset_mode`` SAME_STEP), which Gymnasium's vector wrappers take.

Hierarchical vectors (``MultiVector``, e.g. "maze"): in each copy one agent acts at a
time, not the same one in every copy, so the copies are batched per agent name, as
env/vector's Multi does: ``v.groups[name]`` holds the copies that agent acts in now
(``copies``, ascending), their observations and masks in contiguous rows, and the
``actions`` array to fill, so that a trainer makes one policy call per agent name per
tick. ``step`` (with the actions written into the groups, or given as a dict by name)
steps every copy, resets the copies whose episode ended in the same step and
regroups.

Seeds. ``reset(seed)`` resets copy i with env/vector's ``EpisodeSeed(seed, i, 0)`` and
its k-th auto-reset with ``EpisodeSeed(seed, i, k)``: the same seed and actions give the
same arrays, tick by tick, whatever ``workers``, and the same results as Go's vector.

Errors. Actions are checked before any copy steps: an action outside the agent's
Discrete space, or masked, raises ``ActionError`` naming the copy, the agent and the
reason, and changes nothing, so the loop can correct it and step again. A copy whose
environment fails or panics (recovered in Go) raises ``CopyError`` listing each failed
copy (``failures``: copy, agent, operation, reason, the Go stack of a panic); the
other copies were stepped, and the vector needs ``reset()`` before the next step
(``StateError`` until then). Bad names and configurations raise ``ConfigError``.
Arguments of the wrong type raise TypeError naming the argument (a name that is not
a str, a ``config`` that is neither a dict nor JSON text, float actions, a
``MultiVector.step`` given a list rather than a dict by agent name), and bad values
ValueError (``ConfigError``): seeds are None or ints from 0 to 2**64 - 1, as
Gymnasium's.

Limits. ``make`` asks Go (``baton_admit``, then again in the call that makes the
vector) whether the vector stays within its limits before it allocates a buffer, and
raises ``LimitError`` (a ``ConfigError``, so a ValueError) if not: ``workers`` at most
4 per CPU (256 are always allowed), and the copies' estimated memory at most
``max_bytes`` bytes (default: the environment variable ``BATON_MAX_BYTES``, else
``DEFAULT_MAX_BYTES``, 4 GiB). A copy is estimated at what its environment allocates
when made and reset, measured on probe environments, plus its rows of the buffers on
both sides of the boundary: about 5.7 KiB for a maze (a million took 4.3 GB), 800
bytes for a cart-pole.

Interrupts. A step is short (tens of microseconds for a thousand cart-poles) and is
not interrupted: a Ctrl-C during a loop of steps is raised as KeyboardInterrupt by
Python when the call in progress returns, that is at once for a person.

Processes. ``import baton`` (and ``import baton.vector``) loads no Go code; the first
vector a process makes loads the library and starts a Go runtime in the process. A Go
runtime does not survive fork (the child has the forking thread alone, none of Go's),
hence the fork rule: a process may fork after importing baton and make vectors in the
child, but a child forked after its parent made a vector cannot use the library: making
a vector there raises ``ForkError`` (a RuntimeError naming both processes), and so do the
vectors it inherited, whose finalizers are dropped so that the child exits cleanly. What
that means for the layouts trainers use (python/tests/test_workers.py runs each, and
checks its results against the same work done in one process):

- Gymnasium's ``AsyncVectorEnv([lambda: baton.make(...)] * n)`` works with every
  context: the default ("fork" on Linux before Python 3.14), "fork", "spawn" and
  "forkserver". Its parent makes one environment, for the spaces, before it forks its
  workers; ``baton.make`` in a process that has loaded no Go describes the environment
  in a short-lived child process and makes its vector at the first ``reset()``, so the
  parent stays free to fork. With "fork", the parent must not have made a vector (nor
  reset a ``baton.make`` environment) first; "spawn" and "forkserver" do not care.
- ``multiprocessing`` processes and pools: "spawn" and "forkserver" always (the child
  is a fresh interpreter, or forked by a server that loaded no Go); "fork" while the
  parent has made no vector.
- Ray tasks and actors: Ray starts its workers as processes of their own (not forks of
  the driver), running the driver's interpreter, so they import baton from the same
  installation and each loads its own library.
- ``baton.pettingzoo`` and ``baton.make_vec`` load the library when made: make them in
  the worker, not in a parent that forks.

Each process finds the library at its first vector (``BATON_LIBRARY``,
``BATON_CACHE_DIR`` and ``BATON_GO_ROOT`` are read then, not at import, so a child
sees what its parent set before starting it); a library already built is reused,
and processes that build at once each rename a whole library into place.

Libraries of one's own. An environment written in another Go module gets the fast
lane through a library of its own, a main package of that module over Go's package
capi (``func init() { capi.Use(keydoor.Register) }``), built and cached by
``baton.build(module_dir)`` (an edit anywhere in the packages it is built from
builds it again) and named by ``library=`` on every entry point (``make``,
``describe``, ``baton.make``, ``baton.make_vec``, ``baton.pettingzoo``,
``baton.rllib``'s ``"library"`` key) or by ``BATON_LIBRARY``;
``baton.register_gymnasium(library=...)`` registers Gymnasium ids for its
environments. Each library is a Go runtime of its own: a process may load baton's and
a user's, and the fork rule holds for all of them together.

Activity logs. ``make(..., log="runs/ppo", policy="ppo")`` records every step of
every copy into an activity log in that directory, the same Arrow log that ``baton
run ENV --log DIR`` writes (datalog/doc.go), so that training shows in ``baton inspect
DIR --plot`` (each episode's return per agent, in the order the episodes began) and
``baton.load(DIR)`` reads it, for ``baton.export_minari`` or behaviour cloning:

    v = baton.vector.make("maze", num_envs=64, seed=1, log="runs/ppo", policy="ppo")
    groups = v.reset()
    ...                     # step as usual
    v.close()               # ends the log: flushed, footers written, readable
    log = baton.load("runs/ppo")

Each episode of each copy is a trial of one episode, ``RUN-K`` for the K-th episode
begun (``run=``, default the environment's name; a second run into the same directory
goes on numbering after the first), seeded with its reset seed, so ``baton replay
DIR`` replays it; its rows are each agent's reports, reward source "env", with the
episode's returns, success and metrics in the episodes table when it ends. An episode
still running at ``close()`` or cut by ``reset()`` is a stopped trial. ``v.log_dir``
is the directory while the vector records, None otherwise. ``policy``
names what chose the actions (one name for every agent, or a dict by agent name), in
the trials table. The log is closed by ``close()`` (which raises ``LogError`` if it
could not be written; so does a step once writing failed); a process that dies
leaves every batch written so far readable to ``baton.load`` and ``baton log
recover``, which repairs the parts for other readers (the last few thousand rows,
staged but not yet handed to the writer, are lost). Cost: a step copies what it
reported into a staging buffer; Go goroutines of the log's own turn it into rows,
compress and write them while Python computes the next actions, given a core to run
on. In CPU a logged row costs up to about twice what a row of a campaign's log does
(under a microsecond: several times a cart-pole's step, about a maze's); on a
machine without a spare core that is the throughput it takes (``python -m
baton.bench`` has the rows "fast lane recording (log=)" against the same without a
log; internal/fastlane's BenchmarkRecord in Go). Synchronous vectors only: the
asynchronous and remote ones raise ``ConfigError`` for ``log=``.

Asynchronous and remote vectors. ``make(..., batch_size=B)`` gives EnvPool's
asynchronous mode (``AsyncVector``, ``AsyncMultiVector``: ``send``/``recv`` of the first
B copies ready, stepped by Go workers in the background; see ``baton.vector._async``).
``make(..., address="grpc://HOST:PORT")`` gives a ``RemoteVector`` (or, for a hierarchy, a
``RemoteMultiVector``), the copies served by ``baton serve env`` as one batch session with
``SingleVector``'s (``MultiVector``'s) API and arrays (see ``baton.vector._remote``).

Threads. A vector is not safe for concurrent use: one thread calls its methods.
``workers=w`` steps the copies on w Go threads (env/vector's WithWorkers), which
spin between steps for a quarter of a millisecond and then sleep; ``close`` stops
them. More workers than cores buy nothing; more than 4 per CPU (and 256) are refused. ``close`` is idempotent, and a vector left unclosed is closed when collected.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._lane import abi as _abi
from .._lane import native as _native
from .._lane.core import (
    DEFAULT_MAX_BYTES,
    MAX_BYTES_ENV,
    ActionError,
    AgentLayout,
    ConfigError,
    CopyError,
    Failure,
    Group,
    LimitError,
    LogError,
    StateError,
    VectorError,
    _ERRLEN,
    _admit,
    _call,
    _config,
    _copy_actions,
    _count,
    _groups,
    _max_bytes,
    _name,
    _ptr,
    _raise,
    _readonly,
    _scrambled,
    _seed,
    _Vector,
    describe,
)
from .._lane.native import ForkError
from ._async import AsyncMultiVector, AsyncVector
from ._remote import RemoteMultiVector, RemoteVector
from ._remote import make as _remote_make

# The fast lane's loader and ABI live in baton._lane; baton.vector._native and
# baton.vector._abi stay importable by those names, as the same modules.
sys.modules.setdefault(f"{__name__}._native", _native)
sys.modules.setdefault(f"{__name__}._abi", _abi)

# The shared classes are baton.vector's to its users: named so in tracebacks and pickles.
for _cls in (ActionError, AgentLayout, ConfigError, CopyError, Failure, Group, LimitError, LogError, StateError,
             VectorError):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "ActionError",
    "AgentLayout",
    "AsyncMultiVector",
    "AsyncVector",
    "ConfigError",
    "CopyError",
    "Failure",
    "ForkError",
    "Group",
    "LimitError",
    "LogError",
    "MultiVector",
    "RemoteMultiVector",
    "RemoteVector",
    "SingleVector",
    "StateError",
    "VectorError",
    "describe",
    "make",
]

def make(
    name: str,
    num_envs: int = 1,
    *,
    seed: int | None = None,
    workers: int = 1,
    config: Mapping[str, Any] | str | bytes | None = None,
    batch_size: int | None = None,
    address: str | None = None,
    log: str | os.PathLike | None = None,
    policy: str | Mapping[str, str] | None = None,
    run: str | None = None,
    max_bytes: int | None = None,
    library: str | os.PathLike | None = None,
    scramble: int | None = None,
    **remote: Any,
) -> SingleVector | MultiVector | AsyncVector | AsyncMultiVector | RemoteVector | RemoteMultiVector:
    """``num_envs`` copies of the registered environment ``name`` ("cartpole", "maze",
    ...) with its JSON ``config`` (a dict, or JSON text; None for its defaults),
    stepped on ``workers`` Go threads. A single-agent environment gives a
    ``SingleVector``, a hierarchical or multi-agent one a ``MultiVector``. ``seed`` is
    the seed of the first ``reset()`` that names none (0 if None).

    With ``batch_size`` (1 to ``num_envs``), the vector runs in EnvPool's asynchronous
    mode, ``send``/``recv`` of batches of the first ``batch_size`` copies ready (see
    ``baton.vector._async``): an ``AsyncVector`` for a single-agent environment, an
    ``AsyncMultiVector`` (batches grouped per acting agent) for the others.

    With ``address`` ("grpc://HOST:PORT", "grpcs://HOST:PORT"), the copies are served
    by an environment server (``baton serve env``) as one batch session: a
    ``RemoteVector``, with ``SingleVector``'s API and arrays, for a single-agent
    environment, a ``RemoteMultiVector``, with ``MultiVector``'s, for a hierarchical or
    multi-agent one; ``remote`` takes ``baton.remote``'s ``key``, ``tls``, ``timeout``,
    ``server_name`` and ``max_message_bytes`` (see ``baton.vector._remote``).

    With ``log`` (a directory), the vector records every step of every copy into an
    activity log there, from its first ``reset()`` to ``close()`` (see "Activity
    logs" in the module's documentation): ``policy`` names what chose the actions
    ("ppo"; or a dict by agent name) and ``run`` the log's trials ("RUN-K", default
    the environment's name). Synchronous vectors only: with ``batch_size`` or
    ``address`` it raises ConfigError.

    Limits, checked in Go before anything is allocated (``LimitError``, a ValueError,
    names what is over): ``workers`` at most 4 per CPU (and 256 are always allowed),
    and the copies' estimated memory at most ``max_bytes`` (an int of bytes; None:
    the environment variable ``BATON_MAX_BYTES``, else 4 GiB). The estimate of a copy
    is what its environment allocates when made and reset (measured on probe
    environments) plus its rows of the buffers, on both sides: about 6 KiB for a maze,
    so 4 GiB holds some 700,000 mazes.

    ``library`` is the path of the fast lane's library that registers ``name``: a
    library of one's own environments (``baton.build(module_dir=...)``); None means
    the environment variable ``BATON_LIBRARY``, else baton's own library. A process
    may load several (see ``baton.vector._native``).

    ``scramble=SEED`` makes the environment's scrambled variant (CommAI's scrambled
    mode, Go's package scramble): ``NAME-scrambled`` with ``{"scramble": SEED}`` added
    to ``config``, each agent's discrete actions and observation features permuted by
    the seed; the library must register it (baton's own does for maze, maze-flat and
    cartpole), and a log records the name and the configuration, the seed with it.

    Bad arguments raise before anything is made: TypeError for the wrong type (a
    ``name`` that is not a str, a ``config`` that is not a dict or JSON text, a float
    ``num_envs``), ValueError (ConfigError) for a bad value, such as a negative
    ``seed``.

    >>> v = baton.vector.make("cartpole", num_envs=8, seed=1)  # doctest: +SKIP
    >>> v = baton.vector.make("maze", num_envs=64, log="runs/ppo", policy="ppo")  # doctest: +SKIP
    >>> r = baton.vector.make("cartpole", num_envs=256, address="grpc://127.0.0.1:50051")  # doctest: +SKIP
    >>> m = baton.vector.make("maze", num_envs=4096, address="grpc://127.0.0.1:50051")  # doctest: +SKIP
    >>> a = baton.vector.make("cartpole", num_envs=64, batch_size=16, workers=4)  # doctest: +SKIP
    >>> k = baton.vector.make("keydoor", num_envs=8, library=baton.build("~/keydoor"))  # doctest: +SKIP
    >>> s = baton.vector.make("maze", num_envs=64, scramble=7)  # doctest: +SKIP
    """
    _name(name)
    name, config = _scrambled(name, config, scramble)
    cfg = _config(config)
    seed = _seed(seed)
    num_envs = _count(num_envs, "num_envs", 1)
    workers = _count(workers, "workers", 0)
    if log is None and (policy is not None or run is not None):
        raise ConfigError(2, "policy and run name what a log records; give log=DIR too", [])
    if log is not None and (batch_size is not None or address is not None):
        which = "asynchronous (batch_size)" if batch_size is not None else "remote (address)"
        raise ConfigError(2, f"log: {which} vectors do not record activity logs; only synchronous in-process ones do", [])
    if address is not None:
        if batch_size is not None:
            raise ConfigError(2, "batch_size: the asynchronous mode is in-process only (no address)", [])
        if max_bytes is not None:
            raise ConfigError(2, "max_bytes: a remote vector's memory is its server's to bound (baton serve env)", [])
        if library is not None:
            raise ConfigError(2, "library: a remote vector's environments are its server's (baton serve env)", [])
        return _remote_make(name, num_envs, address=address, seed=seed, workers=workers, config=config, **remote)
    limit = _max_bytes(max_bytes)
    if remote:
        raise ConfigError(2, f"{', '.join(sorted(remote))}: options of a remote vector, which needs an address", [])
    kind, agents = describe(name, config, library=library)
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= num_envs:
            raise ConfigError(2, f"batch_size is {batch_size!r}; want an int from 1 to num_envs ({num_envs})", [])
        acls = AsyncVector if kind == "single" else AsyncMultiVector
        return acls(name, num_envs, agents, seed=seed, workers=workers, batch_size=int(batch_size), config=cfg, max_bytes=limit,
                    library=library)
    cls = SingleVector if kind == "single" else MultiVector
    v = cls(name, num_envs, agents, seed=seed, workers=workers, config=cfg, max_bytes=limit, library=library)
    if log is not None:
        try:
            v._record(log, policy, run)
        except BaseException:
            v.close()
            raise
    return v


class SingleVector(_Vector):
    """N copies of a single-agent environment (see the module's documentation).

    Attributes: ``obs`` [N, obs_dim] float32, ``final_obs`` [N, obs_dim] float32,
    ``masks`` [N, mask_len] bool or None, ``rewards`` [N] float64, ``terminated`` and
    ``truncated`` [N] bool: the buffers Go writes, read-only to Python;
    ``single_observation_space`` and ``single_action_space`` (gymnasium spaces when
    gymnasium is importable, as ``AgentLayout`` says); ``library``, the path of the
    library whose Go code steps it (every kind of vector has it).
    """

    def __init__(self, name, num_envs, agents, *, seed, workers, config, max_bytes=0, library=None, hold=False):
        super().__init__(name, num_envs, agents, seed, library)
        _admit(self._lib, name, config, num_envs, workers, max_bytes)
        (a,) = agents
        self.agent = a.name
        self.single_observation_space, self.single_action_space = a.observation_space, a.action_space
        self.obs = np.zeros((num_envs, a.obs_dim), np.float32)
        self.final_obs = np.zeros((num_envs, a.obs_dim), np.float32)
        self.masks = np.zeros((num_envs, a.mask_len), np.bool_) if a.mask_len else None
        self.rewards = np.zeros(num_envs, np.float64)
        self.terminated = np.zeros(num_envs, np.bool_)
        self.truncated = np.zeros(num_envs, np.bool_)
        bufs = (self.obs, self.final_obs, self.masks, self.rewards, self.terminated, self.truncated)
        # hold: one int32 per copy, written between steps: what the next step does with it
        # (0 step, 1 stay, 2 end its episode; capi's baton_single_new, baton.gym); None without.
        self.hold = np.zeros(num_envs, np.int32) if hold else None
        handle = ctypes.c_int64()
        _call(
            self._lib.baton_single_new, name.encode(), config, num_envs, workers, max_bytes,
            *(_ptr(b) for b in bufs), _ptr(self.hold), ctypes.byref(handle),
        )
        # The actions are copied into _actions, whose address is known, rather than
        # passed by their own: asking a numpy array for its address costs more than
        # copying a thousand integers. _done is info["_final_obs"].
        self._actions = np.zeros(num_envs, np.int64)
        self._done_w = np.zeros(num_envs, np.bool_)
        self._done = self._done_w.view()
        self._open(handle.value, (*bufs, self.hold, self._actions))
        self._actions_ptr = self._actions.ctypes.data
        self._step_c = self._lib.baton_step_single
        _readonly(*bufs, self._done)

    def _info(self, stepped: bool) -> dict:
        info: dict[str, Any] = {}
        if self.masks is not None:
            info["action_mask"] = self.masks
        if stepped:
            np.logical_or(self.terminated, self.truncated, out=self._done_w)
            info["final_obs"] = self.final_obs
            info["_final_obs"] = self._done
        return info

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """Resets every copy, copy i with EpisodeSeed(seed, i, 0), and returns ``(obs,
        info)``. ``seed=None`` means ``make``'s seed at the first reset, plus one for
        each reset since."""
        self._call(self._lib.baton_reset, self._live(), self._next_seed(seed))
        return self.obs, self._info(False)

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Steps copy i with ``actions[i]`` (N integers) and returns ``(obs, rewards,
        terminated, truncated, info)``, the vector's own arrays; ``info`` has
        ``final_obs`` and ``_final_obs`` (and ``action_mask`` with masks), arrays that
        the next step overwrites too. The actions may be any integer array or
        sequence of shape (N,); floats raise TypeError."""
        h = self._handle
        if not h:
            self._live()
        _copy_actions(self._actions, actions, self.single_action_space)
        code = self._step_c(h, self._actions_ptr, self._err, _ERRLEN)
        if code:
            _raise(code, self._err)
        return self.obs, self.rewards, self.terminated, self.truncated, self._info(True)

    def to_gymnasium(self):
        """This vector as a ``gymnasium.vector.VectorEnv`` (same-step auto-reset), for
        Gymnasium's vector wrappers; closing either closes both: ``baton.gym.to_gymnasium(self)``.
        Needs gymnasium.

        >>> env = baton.vector.make("cartpole", num_envs=8).to_gymnasium()  # doctest: +SKIP
        >>> env = gymnasium.wrappers.vector.RecordEpisodeStatistics(env)  # doctest: +SKIP
        """
        from .. import gym  # imported when called: baton.gym builds on this package

        return gym.to_gymnasium(self)


class MultiVector(_Vector):
    """N copies of a hierarchical or multi-agent environment, batched per acting
    agent name (see the module's documentation).

    After each ``reset`` and ``step``: ``groups`` maps each agent name to its
    ``Group``; ``acting`` [N] int64 is the index (in ``agent_names``) of the agent
    acting in each copy. After a ``step``: ``rewards`` [N, A] float64 is the sum of the
    rewards each agent was reported in each copy (a parent agent is rewarded when
    control returns to it), ``spans`` [N, A] int64 the ticks those rewards' decisions
    took (discount by gamma ** span), ``terminated`` and ``truncated`` [N, A] bool whether that
    agent's sub-episode ended, ``ended`` [N] bool which copies' episodes ended (and
    were reset in the same step). All are buffers Go writes, read-only to Python.
    """

    def __init__(self, name, num_envs, agents, *, seed, workers, config, max_bytes=0, library=None):
        super().__init__(name, num_envs, agents, seed, library)
        _admit(self._lib, name, config, num_envs, workers, max_bytes)
        n, na = num_envs, len(agents)
        self.agent_names = [a.name for a in agents]
        self.observation_spaces = {a.name: a.observation_space for a in agents}
        self.action_spaces = {a.name: a.action_space for a in agents}
        self._copies = [np.zeros(n, np.int64) for _ in agents]
        self._obs = [np.zeros((n, a.obs_dim), np.float32) for a in agents]
        self._masks = [np.zeros((n, a.mask_len), np.bool_) if a.mask_len else None for a in agents]
        self._actions = [np.zeros(n, np.int64) for _ in agents]
        self.counts = np.zeros(na, np.int64)
        self.acting = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, na), np.float64)
        self.spans = np.zeros((n, na), np.int64)
        self.terminated = np.zeros((n, na), np.bool_)
        self.truncated = np.zeros((n, na), np.bool_)
        self.ended = np.zeros(n, np.bool_)
        table = lambda arrays: (ctypes.c_void_p * na)(*(_ptr(a) for a in arrays))  # noqa: E731
        tables = (table(self._copies), table(self._obs), table(self._masks), table(self._actions))
        flat = (self.counts, self.acting, self.rewards, self.spans, self.terminated, self.truncated, self.ended)
        handle = ctypes.c_int64()
        _call(
            self._lib.baton_multi_new, name.encode(), config, n, workers, max_bytes, na,
            *(ctypes.cast(t, ctypes.c_void_p) for t in tables), *(_ptr(b) for b in flat), ctypes.byref(handle),
        )
        bufs = (*self._copies, *self._obs, *(m for m in self._masks if m is not None), *self._actions, *flat, *tables)
        self._open(handle.value, bufs)
        _readonly(*self._copies, *self._obs, *self._masks, *flat)
        self.groups: dict[str, Group] = {}

    def _regroup(self) -> dict[str, Group]:
        self.groups = _groups(self.agents, self.counts, self._copies, self._obs, self._masks, self._actions)
        return self.groups

    def reset(self, seed: int | None = None) -> dict[str, Group]:
        """Resets every copy (seeds as ``SingleVector.reset``) and returns ``groups``."""
        self._call(self._lib.baton_reset, self._live(), self._next_seed(seed))
        return self._regroup()

    def step(self, actions: Mapping[str, Any] | None = None):
        """Steps every copy with the action of its row in its agent's group and returns
        ``(groups, rewards, terminated, truncated, ended)``. ``actions`` maps agent names
        to the actions of their groups' rows; without it (or for a name it leaves out),
        the groups' ``actions`` arrays, filled by the caller, are used."""
        h = self._live()
        if actions is not None and not isinstance(actions, Mapping):
            raise TypeError(f"actions is a {type(actions).__name__}; want a dict of agent name to the actions of its "
                            "group's rows, or None for the groups' own actions arrays")
        if actions and self.groups:  # before the first reset, Go says so
            for name, acts in actions.items():
                g = self.groups.get(name)
                if g is None:
                    raise ConfigError(2, f"no agent {name!r} (agents: {', '.join(self.agent_names)})", [])
                _copy_actions(g.actions, acts, self.action_spaces[name], f"actions of {name!r}", f"its group has {len(g)} rows")
        self._call(self._lib.baton_step_multi, h)
        return self._regroup(), self.rewards, self.terminated, self.truncated, self.ended
