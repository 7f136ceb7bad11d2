"""A vector of copies served by an environment server: ``baton.vector.make(name,
num_envs, address="grpc://HOST:PORT")``, the API of ``SingleVector`` over the
EnvService's batch session (MakeBatch, ResetBatch, StepBatch).

    v = baton.vector.make("cartpole", num_envs=256, address="grpc://127.0.0.1:50051", key=KEY)
    obs, info = v.reset(seed=1)
    obs, rewards, terminated, truncated, info = v.step(actions)

Every ``reset`` and ``step`` is one gRPC call that moves every copy's results as
tensors of ``num_envs`` rows; the server (``baton serve env``) steps the copies with Go's
vector, so the arrays are those of the in-process vector for the same seed and actions,
same-step auto-reset included (``info["final_obs"]``, ``info["_final_obs"]``). The arrays
are the vector's own, overwritten in place by each call and read-only to Python, as
``SingleVector``'s. Errors are the fast lane's: ``ActionError`` naming the copy for an
action outside the space or masked (nothing stepped), ``CopyError`` for a copy that failed
on the server (the vector needs ``reset()``), ``StateError`` for a vector closed or not
reset, ``ConfigError`` for a name or configuration the server refuses; a server that
cannot be reached, or refuses the key, raises ``baton.remote``'s errors.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from . import ActionError, ConfigError, CopyError, Failure, StateError, _copy_actions, _readonly, _seed

_MASK64 = (1 << 64) - 1
_COPY = re.compile(r"copy (\d+)")


class RemoteVector:
    """``num_envs`` copies of a single-agent environment stepped by an environment
    server, with ``SingleVector``'s API (see the module ``baton.vector._remote``).
    ``address`` is "HOST:PORT", "grpc://HOST:PORT" or "grpcs://HOST:PORT"; ``key``,
    ``tls``, ``timeout``, ``server_name`` and ``max_message_bytes`` (for large batches) are
    ``baton.remote``'s; ``workers`` the
    goroutines that step the copies on the server."""

    def __init__(
        self,
        name: str,
        num_envs: int,
        *,
        address: str,
        seed: int | None = None,
        workers: int = 1,
        config: Any = None,
        key: str | None = None,
        tls: bool | str | bytes | None = None,
        timeout: float | None = 30.0,
        server_name: str | None = None,
        max_message_bytes: int | None = None,
    ):
        from .. import remote as R
        from ..remote import specs as S
        from ..remote.channel import Connection
        from ..v1 import baton_pb2 as pb
        from ..v1 import baton_pb2_grpc as pb_grpc

        self._R, self._pb = R, pb
        self.name = name
        self.num_envs = int(num_envs)
        self._seed = _seed(seed) or 0
        self._resets = 0
        self._session: str | None = None
        if config is None or isinstance(config, str):
            config_json = config or ""
        elif isinstance(config, bytes):
            config_json = config.decode()
        else:
            config_json = json.dumps(config)
        self._conn = Connection(
            address, key=key, timeout=timeout, tls=tls, server_name=server_name, max_message_bytes=max_message_bytes
        )
        self._stub = pb_grpc.EnvServiceStub(self._conn.channel)
        self._target = f"batch of {name}"
        try:
            resp = self._call(
                self._stub.MakeBatch,
                pb.MakeBatchRequest(env=name, config=config_json, num_envs=self.num_envs, workers=int(workers)),
                "MakeBatch",
            )
            self._session = resp.session
            (spec,) = resp.spec.agents
            agent = S.AgentSpec.from_proto(spec)
        except BaseException:
            self.close()
            raise
        spaces = agent.spaces(None)
        self.agent = agent.name
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
        self._request = pb.StepBatchRequest(session=self._session)
        self._request.actions.dtype = pb.DTYPE_INT64
        self._request.actions.shape.append(n)

    # -- calls --------------------------------------------------------------------

    def _call(self, rpc, request, method: str):
        R = self._R
        try:
            return self._conn.call(rpc, request, f"EnvService/{method}", self._target)
        except R.InvalidArgument as e:
            field = e.field or ""
            if field.startswith("actions["):
                i = int(field[len("actions[") : -1])
                raise ActionError(3, str(e), [Failure(i, self.agent, "action", e.reason or str(e))]) from None
            if field in ("env", "config", "num_envs", "workers"):
                raise ConfigError(1, str(e), []) from None
            raise
        except R.NotFound as e:
            if method == "MakeBatch":
                raise ConfigError(1, str(e), []) from None
            raise StateError(5, f"{self._target}: the session is gone (closed or expired): {e}", []) from None
        except R.RemoteError as e:
            code = getattr(e.code, "name", str(e.code))
            if code == "FAILED_PRECONDITION":
                raise StateError(5, str(e), []) from None
            if code == "INTERNAL" and method in ("StepBatch", "ResetBatch"):
                msg = str(e)
                failures = [Failure(int(c), getattr(self, "agent", ""), "step", msg) for c in _COPY.findall(msg)]
                raise CopyError(4, msg, failures) from None
            raise

    def _live(self) -> str:
        if self._session is None:
            raise StateError(5, f"baton.vector: the remote {self.name} vector is closed", [])
        return self._session

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
            raise self._R.Mismatch(f"{self._target} at {self._conn.addr}: a BatchTurn of the wrong shape: {e}") from None
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

    # -- SingleVector's API -------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """Resets every copy, copy i with EpisodeSeed(seed, i, 0) (seeds as
        ``SingleVector.reset``), and returns ``(obs, info)``."""
        session = self._live()
        seed = _seed(seed)
        if seed is None:
            seed = self._seed + self._resets
        self._resets += 1
        t = self._call(self._stub.ResetBatch, self._pb.ResetBatchRequest(session=session, seed=int(seed) & _MASK64), "ResetBatch")
        self._read(t, False)
        return self.obs, self._info(False)

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Steps copy i with ``actions[i]`` and returns ``(obs, rewards, terminated,
        truncated, info)``, as ``SingleVector.step``."""
        self._live()
        _copy_actions(self._actions, actions, self.single_action_space)
        self._request.actions.data = self._actions.tobytes()
        t = self._call(self._stub.StepBatch, self._request, "StepBatch")
        self._read(t, True)
        return self.obs, self.rewards, self.terminated, self.truncated, self._info(True)

    def to_gymnasium(self):
        """This vector as a ``gymnasium.vector.VectorEnv``, as ``SingleVector.to_gymnasium``."""
        from ._gym import GymVector

        return GymVector(self)

    @property
    def closed(self) -> bool:
        return self._session is None

    def close(self) -> None:
        """Ends the session on the server and closes the connection. Calling it again
        does nothing."""
        session, self._session = self._session, None
        conn = getattr(self, "_conn", None)
        if conn is None:
            return
        try:
            if session is not None:
                try:
                    self._conn.call(self._stub.CloseSession, self._pb.CloseRequest(session=session), "EnvService/CloseSession", self._target)
                except self._R.RemoteError:
                    pass  # the server is gone or the session expired: nothing to end
        finally:
            conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_envs
