"""A client of an AgentService: act with an agent served by Go (``baton serve agent``)
or by Python (serve_policy) from Python."""

from __future__ import annotations

import queue
from collections.abc import Iterable, Iterator

import grpc
import numpy as np

from .. import spaces as S
from ..v1 import baton_pb2 as pb
from ..v1 import baton_pb2_grpc as pb_grpc
from . import actions as A
from . import tensors as T
from .channel import DEFAULT_TIMEOUT, Connection
from .errors import ConfigError, FieldError, Mismatch, error_from_rpc
from .policy import ActContext
from .specs import AgentSpec

__all__ = ["RemoteAgent"]


class RemoteAgent:
    """An agent on an AgentService server.

    ``target`` is "HOST:PORT", or "grpc://HOST:PORT/AGENT" ("grpcs://" for TLS), the
    path naming the agent; ``agent`` names it too (None: the server's only agent). The
    agent's spec is fetched here (Spec), so a wrong address, agent or key fails now.
    ``key``, ``timeout``, ``tls``, ``server_name`` and ``wait_ready`` are
    RemoteMultiAgentEnv's.

    ``act`` sends one observation (Act), ``act_batch`` N of them (ActBatch), ``stream``
    many over one ActStream. Observations are flat float32 of the observation space's
    flat dimension; actions come back as ``actions.decode`` reads them (an int for
    Discrete, arrays otherwise) and are checked against the action space (Mismatch
    when they do not fit). Safe for concurrent use, except a stream's iterator.
    """

    def __init__(
        self,
        target: str,
        agent: str | None = None,
        *,
        key: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        tls: None | bool | str | bytes = None,
        server_name: str | None = None,
        max_message_bytes: int | None = None,
        wait_ready: bool = False,
    ):
        self._conn = Connection(
            target, key=key, timeout=timeout, tls=tls, server_name=server_name, max_message_bytes=max_message_bytes,
            wait_ready=wait_ready,
        )
        try:
            path = self._conn.path
            if path and agent is not None and path != agent:
                raise ConfigError(f"target {target!r} names agent {path}, agent= {agent}")
            name = agent if agent is not None else path
            self._stub = pb_grpc.AgentServiceStub(self._conn.channel)
            msg = self._conn.call(
                self._stub.Spec,
                pb.AgentSpecRequest(agent=name),
                "AgentService/Spec",
                f"agent {name}" if name else "agent server",
                opening=True,
            )
            try:
                self.spec = AgentSpec.from_proto(msg)
            except S.SpecError as e:
                raise Mismatch(f"agent server at {self._conn.addr}: its spec: {e}") from None
            if name and self.spec.name != name:
                raise Mismatch(f"agent server at {self._conn.addr}: asked for agent {name}, got {self.spec.name}")
        except BaseException:
            self._conn.close()
            raise
        self.name = self.spec.name
        self._target = f"agent {self.name}"
        self._obs_dim = self.spec.observation.flat_dim

    @property
    def addr(self) -> str:
        """The server's address."""
        return self._conn.addr

    def _obs(self, obs) -> np.ndarray:
        a = np.asarray(obs, dtype=np.float32)
        if a.shape != (self._obs_dim,):
            raise FieldError("observation", f"shape {a.shape}, want ({self._obs_dim},)")
        return a

    def _request(self, obs, mask, context: ActContext | None, seq: int = 0) -> pb.ActRequest:
        req = pb.ActRequest(agent=self.name, observation=T.encode(self._obs(obs), T.FLOAT32), seq=seq)
        if mask is not None and self.spec.mask_len:
            m = np.asarray(mask, dtype=bool)
            if m.shape != (self.spec.mask_len,):
                raise FieldError("mask", f"shape {m.shape}, want ({self.spec.mask_len},)")
            req.mask.CopyFrom(T.encode(m, T.BOOL))
        if context is not None:
            req.context.CopyFrom(pb.ActContext(**context._asdict()))
        return req

    def _action(self, method: str, t: pb.Tensor):
        try:
            return A.decode(self.spec.action, t)
        except FieldError as fe:
            raise Mismatch(f"{self._target} at {self.addr}: {method}: the response's {fe}") from None

    def act(self, obs, mask=None, context: ActContext | None = None):
        """The agent's action for one flat observation (and mask)."""
        resp = self._conn.call(self._stub.Act, self._request(obs, mask, context), "AgentService/Act", self._target)
        return self._action("AgentService/Act", resp.action)

    def act_batch(self, obs, masks=None):
        """The agent's actions for N observations (N, obs_dim) and masks (N, mask_len):
        an int64 array (N,) for Discrete, arrays with a leading N otherwise."""
        o = np.asarray(obs, dtype=np.float32)
        if o.ndim != 2 or o.shape[1] != self._obs_dim:
            raise FieldError("observations", f"shape {o.shape}, want (N, {self._obs_dim})")
        n = o.shape[0]
        req = pb.ActBatchRequest(agent=self.name, observations=T.encode(o, T.FLOAT32))
        if masks is not None and self.spec.mask_len:
            m = np.asarray(masks, dtype=bool)
            if m.shape != (n, self.spec.mask_len):
                raise FieldError("masks", f"shape {m.shape}, want ({n}, {self.spec.mask_len})")
            req.masks.CopyFrom(T.encode(m, T.BOOL))
        resp = self._conn.call(self._stub.ActBatch, req, "AgentService/ActBatch", self._target)
        try:
            return A.decode_batch(self.spec.action, resp.actions, n)
        except FieldError as fe:
            raise Mismatch(f"{self._target} at {self.addr}: AgentService/ActBatch: the response's {fe}") from None

    def stream(self, observations: Iterable, *, timeout: float | None = None) -> Iterator:
        """Acts on observations over one ActStream, one request at a time: each item is
        an observation or a pair (observation, mask); yields the actions in order.
        When the observations run out, the stream is closed and the server's status
        awaited; closing the generator early cancels it. ``timeout`` bounds the whole
        stream in seconds (None: no deadline). A failure raises the stream's
        RemoteError."""
        requests: queue.Queue = queue.Queue(maxsize=1)
        done = object()
        call = self._stub.ActStream(iter(requests.get, done), timeout=timeout, metadata=self._conn.metadata)
        method = "AgentService/ActStream"
        finished = False
        try:
            for seq, item in enumerate(observations, 1):
                obs, mask = item if isinstance(item, tuple) else (item, None)
                requests.put(self._request(obs, mask, None, seq))
                try:
                    resp = next(call)
                except grpc.RpcError as e:
                    raise error_from_rpc(e, addr=self.addr, method=method, target=self._target) from None
                except StopIteration:
                    raise Mismatch(f"{self._target} at {self.addr}: {method}: the stream ended early") from None
                if resp.seq != seq:
                    raise Mismatch(f"{self._target} at {self.addr}: {method}: answer {resp.seq} to request {seq}")
                yield self._action(method, resp.action)
            requests.put(done)
            try:
                extra = next(call, None)
            except grpc.RpcError as e:
                raise error_from_rpc(e, addr=self.addr, method=method, target=self._target) from None
            if extra is not None:
                raise Mismatch(f"{self._target} at {self.addr}: {method}: an answer to no request")
            finished = True
        finally:
            if not finished:
                requests.put(done)
                call.cancel()

    def close(self) -> None:
        """Closes the connection."""
        self._conn.close()

    def __enter__(self) -> RemoteAgent:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteAgent({self.addr!r}, {self.name!r})"

