"""Vectors of copies served by an environment server: ``baton.vector.make(name,
num_envs, address="grpc://HOST:PORT")``, the API of the in-process vectors over the
EnvService's batch session (MakeBatch, ResetBatch, StepBatch). A single-agent
environment gives a ``RemoteVector`` (``SingleVector``'s API), a hierarchical or
multi-agent one a ``RemoteMultiVector`` (``MultiVector``'s API: the copies batched per
acting agent), so that a loop written for ``baton.vector.make(name, n)`` runs unchanged
with ``address=``:

    v = baton.vector.make("cartpole", num_envs=256, address="grpc://127.0.0.1:50051", key=KEY)
    obs, info = v.reset(seed=1)
    obs, rewards, terminated, truncated, info = v.step(actions)

    m = baton.vector.make("maze", num_envs=4096, address="grpc://127.0.0.1:50051")
    groups = m.reset(seed=1)
    for name, g in groups.items():
        g.actions[:] = policies[name](g.obs, g.masks)
    groups, rewards, terminated, truncated, ended = m.step()

Every ``reset`` and ``step`` is one gRPC call that moves every copy's results as
tensors of ``num_envs`` rows (a multi-agent vector's: each agent's group of copies, with
their observations and masks, and the columns of rewards, spans and ends per agent);
the server (``baton serve env``, or a ``cli.Main`` of your own registry) steps the copies
with Go's vectors, the same code as the in-process fast lane, so the arrays are those of
the in-process vector for the same seed and actions, same-step auto-reset included
(``info["final_obs"]``, ``info["_final_obs"]`` of a single-agent vector; ``ended`` of a
multi-agent one). The arrays are the vector's own, overwritten in place by each call
and read-only to Python, as the in-process vectors'; only the groups' ``actions`` are
Python's to write.

Errors are the fast lane's: ``ActionError`` naming the copy and agent for an action
outside the space or masked (nothing stepped), ``CopyError`` for a copy that failed on
the server (the vector needs ``reset()``), ``StateError`` for a vector closed or not
reset, ``ConfigError`` for a name or configuration the server refuses, ``LimitError``
(a ``ConfigError``) for a vector over the server's budgets (``--max-session-bytes``,
``--max-key-bytes``, ``--max-sessions``, ``--max-message-bytes``); a server that
cannot be reached, or refuses the key, raises ``baton.remote``'s errors. Answers may be
up to 64 MiB unless ``max_message_bytes`` says otherwise (the server bounds its own).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._lane.core import (
    ActionError,
    AgentLayout,
    ConfigError,
    CopyError,
    Failure,
    Group,
    LimitError,
    StateError,
    _copy_actions,
    _readonly,
    _seed,
)

_MASK64 = (1 << 64) - 1
_COPY = re.compile(r"copy (\d+) \(agent ([^,]*), (\w+)\)")
_COPY_AGENT = re.compile(r"copy (\d+): agent (\S+):")
# What a remote vector accepts in one answer when max_message_bytes is not given: a
# server's answers are bounded by its own --max-message-bytes (16 MiB by default), and
# gRPC's default of 4 MiB would refuse a batch of 8192 mazes.
DEFAULT_MAX_MESSAGE_BYTES = 64 << 20


class _Session:
    """A batch session on a server: the connection, the session's id and what
    MakeBatch answered."""

    def __init__(
        self,
        name: str,
        num_envs: int,
        *,
        address: str,
        multi_agent: bool,
        workers: int = 1,
        config: Any = None,
        key: str | None = None,
        tls: bool | str | bytes | None = None,
        timeout: float | None = 30.0,
        server_name: str | None = None,
        max_message_bytes: int | None = None,
    ):
        from .. import remote as R
        from ..remote.channel import Connection
        from ..v1 import baton_pb2 as pb
        from ..v1 import baton_pb2_grpc as pb_grpc

        self.R, self.pb = R, pb
        self.name, self.num_envs = name, int(num_envs)
        self.id: str | None = None
        self.agent = ""  # the agent of a single-agent session, for failures
        if config is None or isinstance(config, str):
            config_json = config or ""
        elif isinstance(config, bytes):
            config_json = config.decode()
        else:
            config_json = json.dumps(config)
        self.conn = Connection(
            address, key=key, timeout=timeout, tls=tls, server_name=server_name,
            max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES if max_message_bytes is None else max_message_bytes,
        )
        self.stub = pb_grpc.EnvServiceStub(self.conn.channel)
        self.target = f"batch of {name}"
        try:
            req = pb.MakeBatchRequest(env=name, config=config_json, num_envs=self.num_envs, workers=int(workers),
                                      multi_agent=multi_agent)
            self.made = self.call(self.stub.MakeBatch, req, "MakeBatch")
            self.id = self.made.session
        except BaseException:
            self.close()
            raise
        if self.made.num_envs != self.num_envs or not self.made.spec.agents:
            self.close()
            raise R.Mismatch(f"{self.target} at {self.conn.addr}: {len(self.made.spec.agents)} agents and "
                             f"{self.made.num_envs} copies; want 1 or more and {self.num_envs}")

    @property
    def multi_agent(self) -> bool:
        return bool(self.made.multi_agent)

    def call(self, rpc, request, method: str):
        R = self.R
        try:
            return self.conn.call(rpc, request, f"EnvService/{method}", self.target)
        except R.InvalidArgument as e:
            field = e.field or ""
            if field.startswith("actions["):
                m = _COPY_AGENT.search(str(e))
                if m:
                    copy, agent = int(m.group(1)), m.group(2)
                else:
                    copy, agent = int(field[len("actions[") : -1]), self.agent
                raise ActionError(3, str(e), [Failure(copy, agent, "action", e.reason or str(e))]) from None
            if field in ("env", "config", "num_envs", "workers"):
                raise ConfigError(1, str(e), []) from None
            raise
        except R.NotFound as e:
            if method == "MakeBatch":
                raise ConfigError(1, str(e), []) from None
            raise StateError(5, f"{self.target}: the session is gone (closed or expired): {e}", []) from None
        except R.RemoteError as e:
            code = getattr(e.code, "name", str(e.code))
            if code == "RESOURCE_EXHAUSTED" and method == "MakeBatch":
                raise LimitError(8, str(e), []) from None
            if code == "FAILED_PRECONDITION":
                raise StateError(5, str(e), []) from None
            if code == "INTERNAL" and method in ("StepBatch", "ResetBatch"):
                msg = str(e)
                failures = [Failure(int(c), agent, op, msg) for c, agent, op in _COPY.findall(msg)]
                raise CopyError(4, msg, failures) from None
            raise

    def live(self) -> str:
        if self.id is None:
            raise StateError(5, f"baton.vector: the remote {self.name} vector is closed", [])
        return self.id

    def mismatch(self, e: Exception):
        return self.R.Mismatch(f"{self.target} at {self.conn.addr}: a BatchTurn of the wrong shape: {e}")

    def close(self) -> None:
        session, self.id = self.id, None
        conn = getattr(self, "conn", None)
        if conn is None:
            return
        try:
            if session is not None:
                try:
                    conn.call(self.stub.CloseSession, self.pb.CloseRequest(session=session), "EnvService/CloseSession", self.target)
                except self.R.RemoteError:
                    pass  # the server is gone or the session expired: nothing to end
        finally:
            conn.close()
            self.conn = None


class _Remote:
    """What both kinds share: the session, the seeds, close."""

    _s: _Session

    def _adopt(self, s: _Session, seed: int | None) -> None:
        self._s = s
        self._pb = s.pb
        self.name = s.name
        self.num_envs = s.num_envs
        self._seed = _seed(seed) or 0
        self._resets = 0
        self.log_dir: str | None = None

    def _next_seed(self, seed: int | None) -> int:
        seed = _seed(seed)
        if seed is None:
            seed = self._seed + self._resets
        self._resets += 1
        return int(seed) & _MASK64

    @property
    def closed(self) -> bool:
        return self._s.id is None

    def close(self) -> None:
        """Ends the session on the server and closes the connection. Calling it again
        does nothing."""
        s = getattr(self, "_s", None)
        if s is not None:
            s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_envs


class RemoteVector(_Remote):
    """``num_envs`` copies of a single-agent environment stepped by an environment
    server, with ``SingleVector``'s API (see the module ``baton.vector._remote``).
    ``address`` is "HOST:PORT", "grpc://HOST:PORT" or "grpcs://HOST:PORT"; ``key``,
    ``tls``, ``timeout``, ``server_name`` and ``max_message_bytes`` are
    ``baton.remote``'s; ``workers`` the goroutines that step the copies on the server.

    >>> v = RemoteVector("cartpole", 256, address="grpc://127.0.0.1:50051")  # doctest: +SKIP
    """

    def __init__(self, name: str, num_envs: int, *, address: str, seed: int | None = None, **options: Any):
        self._setup(_Session(name, num_envs, address=address, multi_agent=False, **options), seed)

    @classmethod
    def _of(cls, s: _Session, seed: int | None) -> RemoteVector:
        v = cls.__new__(cls)
        v._setup(s, seed)
        return v

    def _setup(self, s: _Session, seed: int | None) -> None:
        from ..remote import specs as S

        self._adopt(s, seed)
        try:
            (spec,) = s.made.spec.agents
            agent = S.AgentSpec.from_proto(spec)
        except BaseException:
            s.close()
            raise
        spaces = agent.spaces(None)
        self.agent = s.agent = agent.name
        self.single_observation_space, self.single_action_space = spaces.observation, spaces.action
        n, d, m = self.num_envs, int(agent.observation.flat_dim), int(agent.mask_len)
        self._dim, self._mlen = d, m
        self.obs = np.zeros((n, d), np.float32)
        self.final_obs = np.zeros((n, d), np.float32)
        self.masks = np.zeros((n, m), np.bool_) if m else None
        self.rewards = np.zeros(n, np.float64)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self._done = np.zeros(n, np.bool_)
        self._bufs = (self.obs, self.final_obs, self.masks, self.rewards, self.terminated, self.truncated, self._done)
        _readonly(*self._bufs)
        self._actions = np.zeros(n, "<i8")
        self._request = s.pb.StepBatchRequest(session=s.id)
        self._request.actions.dtype = s.pb.DTYPE_INT64
        self._request.actions.shape.append(n)

    def _read(self, t, stepped: bool) -> None:
        n, d = self.num_envs, self._dim
        for a in self._bufs:
            if a is not None:
                a.flags.writeable = True
        try:
            self.obs[...] = np.frombuffer(t.observations.data, "<f4").reshape(n, d)
            if self.masks is not None:
                self.masks[...] = np.frombuffer(t.masks.data, np.bool_).reshape(n, self._mlen)
            self.rewards[...] = np.frombuffer(t.rewards.data, "<f8")
            self.terminated[...] = np.frombuffer(t.terminated.data, np.bool_)
            self.truncated[...] = np.frombuffer(t.truncated.data, np.bool_)
            np.logical_or(self.terminated, self.truncated, out=self._done)
            if stepped and t.final_observations.data:
                self.final_obs[self._done] = np.frombuffer(t.final_observations.data, "<f4").reshape(-1, d)
        except ValueError as e:
            raise self._s.mismatch(e) from None
        finally:
            _readonly(*self._bufs)

    def _info(self, stepped: bool) -> dict:
        info: dict[str, Any] = {}
        if self.masks is not None:
            info["action_mask"] = self.masks
        if stepped:
            info["final_obs"] = self.final_obs
            info["_final_obs"] = self._done
        return info

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """Resets every copy, copy i with EpisodeSeed(seed, i, 0) (seeds as
        ``SingleVector.reset``), and returns ``(obs, info)``."""
        req = self._pb.ResetBatchRequest(session=self._s.live(), seed=self._next_seed(seed))
        self._read(self._s.call(self._s.stub.ResetBatch, req, "ResetBatch"), False)
        return self.obs, self._info(False)

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Steps copy i with ``actions[i]`` and returns ``(obs, rewards, terminated,
        truncated, info)``, as ``SingleVector.step``."""
        self._s.live()
        _copy_actions(self._actions, actions, self.single_action_space)
        self._request.actions.data = self._actions.tobytes()
        self._read(self._s.call(self._s.stub.StepBatch, self._request, "StepBatch"), True)
        return self.obs, self.rewards, self.terminated, self.truncated, self._info(True)

    def to_gymnasium(self):
        """This vector as a ``gymnasium.vector.VectorEnv``, as ``SingleVector.to_gymnasium``."""
        from .. import gym  # imported when called: baton.gym builds on this package

        return gym.to_gymnasium(self)


class RemoteMultiVector(_Remote):
    """``num_envs`` copies of a hierarchical or multi-agent environment stepped by an
    environment server, batched per acting agent name, with ``MultiVector``'s API and
    arrays (see the module ``baton.vector._remote``): ``agents``, ``agent_names``,
    ``observation_spaces``, ``action_spaces``; after each ``reset`` and ``step``,
    ``groups`` (each agent's ``Group``: its copies, their observations and masks, and
    the ``actions`` to fill), ``counts`` and ``acting``; after a ``step``, ``rewards``,
    ``spans``, ``terminated`` and ``truncated`` [N, A] and ``ended`` [N]. Options as
    ``RemoteVector``'s.

    >>> m = RemoteMultiVector("maze", 4096, address="grpc://127.0.0.1:50051")  # doctest: +SKIP
    >>> groups = m.reset(seed=1)  # doctest: +SKIP
    >>> groups["strategy"].obs.shape  # doctest: +SKIP
    (4096, 106)
    """

    def __init__(self, name: str, num_envs: int, *, address: str, seed: int | None = None, **options: Any):
        s = _Session(name, num_envs, address=address, multi_agent=True, **options)
        if not s.multi_agent:
            s.close()
            raise ConfigError(1, f"{name} is a single-agent environment: baton.vector.make (or RemoteVector) steps it", [])
        self._setup(s, seed)

    @classmethod
    def _of(cls, s: _Session, seed: int | None) -> RemoteMultiVector:
        v = cls.__new__(cls)
        v._setup(s, seed)
        return v

    def _setup(self, s: _Session, seed: int | None) -> None:
        from ..remote import specs as S

        self._adopt(s, seed)
        try:
            agents = []
            for p in s.made.spec.agents:
                a = S.AgentSpec.from_proto(p)
                act = a.action
                if getattr(act, "kind", "") != "discrete":
                    raise s.R.Mismatch(f"{s.target} at {s.conn.addr}: agent {a.name} acts in {act}, not Discrete")
                spaces = a.spaces(None)
                agents.append(AgentLayout(a.name, int(a.observation.flat_dim), int(a.mask_len), int(act.n), int(act.start),
                                          spaces.observation, spaces.action))
        except BaseException:
            s.close()
            raise
        n, na = self.num_envs, len(agents)
        self.agents = agents
        self.agent_names = [a.name for a in agents]
        self.observation_spaces = {a.name: a.observation_space for a in agents}
        self.action_spaces = {a.name: a.action_space for a in agents}
        self._copies = [np.zeros(n, np.int64) for _ in agents]
        self._obs = [np.zeros((n, a.obs_dim), np.float32) for a in agents]
        self._masks = [np.zeros((n, a.mask_len), np.bool_) if a.mask_len else None for a in agents]
        # The groups' actions are consecutive slices of one array, in the groups'
        # order, which is what StepBatch takes: a step sends it as it is.
        self._flat = np.zeros(n, "<i8")
        self._actions = [self._flat] * na  # the groups' views, set by _regroup
        self.counts = np.zeros(na, np.int64)
        self.acting = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, na), np.float64)
        self.spans = np.zeros((n, na), np.int64)
        self.terminated = np.zeros((n, na), np.bool_)
        self.truncated = np.zeros((n, na), np.bool_)
        self.ended = np.zeros(n, np.bool_)
        self._bufs = (*self._copies, *self._obs, *(m for m in self._masks if m is not None), self.counts, self.acting,
                      self.rewards, self.spans, self.terminated, self.truncated, self.ended)
        _readonly(*self._bufs)
        self._request = s.pb.StepBatchRequest(session=s.id)
        self._request.actions.dtype = s.pb.DTYPE_INT64
        self._request.actions.shape.append(n)
        self.groups: dict[str, Group] = {}

    def _read(self, t) -> dict[str, Group]:
        n, na = self.num_envs, len(self.agents)
        if len(t.groups) != na:
            raise self._s.mismatch(f"{len(t.groups)} groups, want {na}")
        for a in self._bufs:
            a.flags.writeable = True
        try:
            off = 0
            for j, (a, g) in enumerate(zip(self.agents, t.groups)):
                copies = np.frombuffer(g.copies.data, "<i8")
                k = len(copies)
                if off + k > n or (k and (copies[0] < 0 or copies[-1] >= n)):
                    raise ValueError(f"group {a.name}: copies outside 0 to {n - 1}, or more than {n} in the groups")
                self._copies[j][:k] = copies
                self._obs[j][:k] = np.frombuffer(g.observations.data, "<f4").reshape(k, a.obs_dim)
                if a.mask_len:
                    self._masks[j][:k] = np.frombuffer(g.masks.data, np.bool_).reshape(k, a.mask_len)
                self.counts[j] = k
                self.acting[copies] = j
                off += k
            if off != n:
                raise ValueError(f"{off} copies in the groups, want {n}")
            self.rewards[...] = np.frombuffer(t.rewards.data, "<f8").reshape(n, na)
            self.spans[...] = np.frombuffer(t.spans.data, "<i8").reshape(n, na)
            self.terminated[...] = np.frombuffer(t.terminated.data, np.bool_).reshape(n, na)
            self.truncated[...] = np.frombuffer(t.truncated.data, np.bool_).reshape(n, na)
            self.ended[...] = np.frombuffer(t.ended.data, np.bool_)
        except (ValueError, IndexError) as e:
            raise self._s.mismatch(e) from None
        finally:
            _readonly(*self._bufs)
        groups, off = {}, 0
        for j, a in enumerate(self.agents):
            k = int(self.counts[j])
            acts = self._flat[off : off + k]
            m = self._masks[j]
            groups[a.name] = Group(a.name, j, self._copies[j][:k], self._obs[j][:k], None if m is None else m[:k], acts)
            self._actions[j] = acts
            off += k
        self.groups = groups
        return groups

    def reset(self, seed: int | None = None) -> dict[str, Group]:
        """Resets every copy (seeds as ``SingleVector.reset``) and returns ``groups``."""
        req = self._pb.ResetBatchRequest(session=self._s.live(), seed=self._next_seed(seed))
        return self._read(self._s.call(self._s.stub.ResetBatch, req, "ResetBatch"))

    def step(self, actions: Mapping[str, Any] | None = None):
        """Steps every copy with the action of its row in its agent's group and returns
        ``(groups, rewards, terminated, truncated, ended)``, as ``MultiVector.step``:
        ``actions`` maps agent names to the actions of their groups' rows; without it
        (or for a name it leaves out), the groups' ``actions`` arrays are used."""
        self._s.live()
        if actions is not None and not isinstance(actions, Mapping):
            raise TypeError(f"actions is a {type(actions).__name__}; want a dict of agent name to the actions of its "
                            "group's rows, or None for the groups' own actions arrays")
        if actions and self.groups:  # before the first reset, the server says so
            for name, acts in actions.items():
                g = self.groups.get(name)
                if g is None:
                    raise ConfigError(2, f"no agent {name!r} (agents: {', '.join(self.agent_names)})", [])
                _copy_actions(g.actions, acts, self.action_spaces[name], f"actions of {name!r}", f"its group has {len(g)} rows")
        self._request.actions.data = self._flat.tobytes()
        self._read(self._s.call(self._s.stub.StepBatch, self._request, "StepBatch"))
        return self.groups, self.rewards, self.terminated, self.truncated, self.ended


def make(name: str, num_envs: int, *, address: str, seed: int | None = None, **options: Any) -> RemoteVector | RemoteMultiVector:
    """The remote vector of ``num_envs`` copies of ``name`` served at ``address``, of
    the environment's kind: a ``RemoteVector`` for a single-agent environment, a
    ``RemoteMultiVector`` for a hierarchical or multi-agent one (``baton.vector.make``
    with ``address=`` calls it). ``options`` are ``RemoteVector``'s.

    >>> m = make("maze", 1024, address="grpc://127.0.0.1:50051", seed=1)  # doctest: +SKIP
    """
    s = _Session(name, num_envs, address=address, multi_agent=True, **options)
    cls = RemoteMultiVector if s.multi_agent else RemoteVector
    return cls._of(s, seed)
