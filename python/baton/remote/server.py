"""Python policies served as baton's AgentService, so that Go trials can act with them.

    server = serve_policy(fn, spaces, "127.0.0.1:50051", name="strategy")
    ...  # baton run maze --policy strategy=grpc://127.0.0.1:50051
    server.stop()

The server follows the contract of baton.proto and behaves as the Go agent server does
(remote/agent_server.go): Spec, Agents, Act, ActStream (one response per request, in
order) and ActBatch; observations checked for dtype, shape, byte length, NaN and the
bounds of a Box observation space, masks for 0/1 bytes and for allowing some action,
each problem an INVALID_ARGUMENT naming the field with a google.rpc.BadRequest detail;
an unknown agent NOT_FOUND; API keys checked in constant time (UNAUTHENTICATED for a missing or unknown key,
PERMISSION_DENIED for an agent a known key does not grant); the
policy's failures UNKNOWN and its actions outside the action space INTERNAL, never a
crashed server. Every server also serves gRPC health checking (grpc.health.v1.Health:
SERVING for "" and baton.v1.AgentService until it stops, NOT_SERVING from then on) and
reflection (grpc.reflection.v1alpha.ServerReflection, so `grpcurl -plaintext ADDR list`
works), both open without an API key, as the Go servers' are.
"""

from __future__ import annotations

import logging
import threading
from concurrent import futures
from collections.abc import Callable, Iterable, Sequence

import grpc
import numpy as np
from grpc_health.v1 import health as _health
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from .. import spaces as S
from ..v1 import baton_pb2 as pb
from ..v1 import baton_pb2_grpc as pb_grpc
from . import actions as A
from . import tensors as T
from .errors import ConfigError, FieldError, abort, abort_field
from .keys import Grant, Keys, as_keys, presented_key
from .learner import EPISODE_END, RETRO, STEP, LearnerPolicy, Outcome
from .policy import ActContext, Policy

__all__ = ["DEFAULT_ADDR", "PolicyServer", "serve_learner", "serve_policies", "serve_policy"]

#: Where a server listens unless told otherwise: loopback, a port the OS picks.
DEFAULT_ADDR = "127.0.0.1:0"
_SERVICE = "baton.v1.AgentService"


class _Served:
    """A policy checked and ready to serve, with what its requests are checked against."""

    def __init__(self, policy: Policy, logger: logging.Logger):
        self.policy = policy
        self.spec = policy.spec
        self.proto = policy.spec.to_proto()
        self.learns = isinstance(policy, LearnerPolicy)
        self.proto.learns = self.learns
        self.obs_dim = policy.spec.observation.flat_dim
        self.mask_len = policy.spec.mask_len
        self.logger = logger
        obs = policy.spec.observation
        self.obs_box = None
        if isinstance(obs, S.Box):
            self.obs_box = (np.asarray(obs.low, np.float32).ravel(), np.asarray(obs.high, np.float32).ravel())

    def check_obs(self, field: str, obs: np.ndarray) -> None:
        """Checks observation rows against a Box observation space's bounds."""
        if self.obs_box is None:
            return
        low, high = self.obs_box
        rows = obs.reshape(-1, self.obs_dim)
        bad = np.argwhere((rows < low) | (rows > high))
        if bad.size:
            r, i = (int(x) for x in bad[0])
            where = f"{field}[row {r}]" if obs.ndim == 2 else field
            raise FieldError(
                where, f"element {i} is {float(rows[r, i])}, outside the bounds [{float(low[i])}, {float(high[i])}]"
            )

    def failed(self, context: grpc.ServicerContext, e: BaseException) -> None:
        self.logger.error("baton.remote: agent %s: the policy failed", self.spec.name, exc_info=e)
        abort(context, grpc.StatusCode.UNKNOWN, f"agent {self.spec.name}: the policy failed: {type(e).__name__}: {e}")

    def outcome(self, where: str, fb: pb.Feedback) -> Outcome:
        """The Outcome of a Feedback message (``where`` names it); raises FieldError."""
        if fb.episode < 0 or fb.tick < 0:
            raise FieldError(where, f"episode {fb.episode}, tick {fb.tick}: want >= 0")
        common = dict(
            trial=fb.trial, episode=int(fb.episode), tick=int(fb.tick), agent=self.spec.name, agent_id=fb.agent_id
        )
        kind = fb.WhichOneof("kind")
        if kind == "step":
            st = fb.step
            if not fb.agent_id:
                raise FieldError(f"{where}.agent_id", "empty: a step is about an agent id")
            if st.span_ticks < 0:
                raise FieldError(f"{where}.step.span_ticks", f"{st.span_ticks}: want >= 0")
            f = f"{where}.step.observation"
            obs = T.decode(f, st.observation if st.HasField("observation") else None, T.FLOAT32, [(self.obs_dim,)])
            self.check_obs(f + ".data", obs)
            mask = None
            if st.HasField("mask"):
                if self.mask_len == 0:
                    raise FieldError(
                        f"{where}.step.mask", f"agent {self.spec.name} has no action mask; leave the field out"
                    )
                mask = T.decode(f"{where}.step.mask", st.mask, T.BOOL, [(self.mask_len,)])
            return Outcome(
                STEP, **common, reward=st.reward, sources=tuple((s.source, s.value) for s in st.sources),
                terminated=st.terminated, truncated=st.truncated, start=st.start, last=st.last,
                span_ticks=int(st.span_ticks), obs=obs, mask=mask,
            )
        if kind == "retro":
            r = fb.retro
            if not fb.agent_id:
                raise FieldError(f"{where}.agent_id", "empty: a retro reward is about an agent id")
            if r.rewarded_episode < 0 or r.arrived_tick < 0:
                raise FieldError(
                    f"{where}.retro",
                    f"rewarded episode {r.rewarded_episode}, arrived tick {r.arrived_tick}: want >= 0",
                )
            return Outcome(
                RETRO, **common, reward=r.reward, sources=((r.source, r.reward),),
                rewarded_episode=int(r.rewarded_episode), arrived_tick=int(r.arrived_tick),
            )
        if kind == "episode_end":
            return Outcome(EPISODE_END, **common, truncated=fb.episode_end.truncated)
        raise FieldError(where, "no kind: set one of step, retro and episode_end")

    def feed(self, req: pb.ActRequest, context: grpc.ServicerContext) -> None:
        """Passes the request's feedback to the learner, in order."""
        if not req.feedback:
            return
        if not self.learns:
            reason = f"agent {self.spec.name} does not learn (its spec says so): send none"
            abort_field(context, FieldError("feedback", reason))
        for i, fb in enumerate(req.feedback):
            try:
                o = self.outcome(f"feedback[{i}]", fb)
            except FieldError as fe:
                abort_field(context, fe)
            try:
                self.policy.learn(o)
            except Exception as e:  # the user's code
                self.logger.error("baton.remote: agent %s: learning failed", self.spec.name, exc_info=e)
                abort(
                    context,
                    grpc.StatusCode.UNKNOWN,
                    f"agent {self.spec.name}: learning failed: {type(e).__name__}: {e}",
                )

    def act(self, req: pb.ActRequest, context: grpc.ServicerContext) -> pb.ActResponse | None:
        """Takes the request's feedback, then answers its observation; None for a
        request with only feedback."""
        self.feed(req, context)
        if req.feedback and not req.HasField("observation"):
            return None
        try:
            obs = T.decode(
                "observation", req.observation if req.HasField("observation") else None, T.FLOAT32, [(self.obs_dim,)]
            )
            self.check_obs("observation.data", obs)
            mask = None
            if req.HasField("mask"):
                if self.mask_len == 0:
                    raise FieldError("mask", f"agent {self.spec.name} has no action mask; leave the field out")
                mask = T.decode("mask", req.mask, T.BOOL, [(self.mask_len,)])
                if not mask.any():
                    raise FieldError("mask.data", "allows no action")
        except FieldError as fe:
            abort_field(context, fe)
        ctx = None
        if req.HasField("context"):
            c = req.context
            ctx = ActContext(c.trial, int(c.episode), int(c.tick), c.agent_id)
        try:
            value = self.policy.act(obs, mask, ctx)
        except Exception as e:  # the user's code: its failure is the call's, not the server's
            self.failed(context, e)
        try:
            action = A.encode(self.spec.action, value, mask=mask)
        except FieldError as fe:
            abort(
                context,
                grpc.StatusCode.INTERNAL,
                f"agent {self.spec.name}: the policy chose an action outside its space: {fe}",
            )
        return pb.ActResponse(action=action, seq=req.seq)

    def act_batch(self, req: pb.ActBatchRequest, context: grpc.ServicerContext) -> pb.ActBatchResponse:
        try:
            t = req.observations if req.HasField("observations") else None
            if t is None:
                raise FieldError("observations", "missing")
            if len(t.shape) != 2:
                raise FieldError("observations.shape", f"{T.shape_string(t.shape)}, want [N {self.obs_dim}]")
            T.elements("observations", t.shape)
            n = int(t.shape[0])
            obs = T.decode("observations", t, T.FLOAT32, [(n, self.obs_dim)])
            self.check_obs("observations.data", obs)
            masks = None
            if req.HasField("masks"):
                if self.mask_len == 0:
                    raise FieldError("masks", f"agent {self.spec.name} has no action mask; leave the field out")
                masks = T.decode("masks", req.masks, T.BOOL, [(n, self.mask_len)])
                empty = np.flatnonzero(~masks.any(axis=1))
                if empty.size:
                    raise FieldError("masks.data", f"row {int(empty[0])} allows no action")
        except FieldError as fe:
            abort_field(context, fe)
        if n == 0:
            return pb.ActBatchResponse(actions=A.encode_batch(self.spec.action, np.zeros((0,)), 0))
        try:
            values = self.policy.act_batch(obs, masks)
        except Exception as e:
            self.failed(context, e)
        try:
            actions = A.encode_batch(self.spec.action, values, n, masks=masks)
        except FieldError as fe:
            abort(
                context,
                grpc.StatusCode.INTERNAL,
                f"agent {self.spec.name}: the policy chose an action outside its space: {fe}",
            )
        return pb.ActBatchResponse(actions=actions)


class _AgentService(pb_grpc.AgentServiceServicer):
    def __init__(self, served: dict[str, _Served], keys: Keys):
        self._served = served
        self._order = list(served)
        self._keys = keys

    # -- keys ---------------------------------------------------------------------

    def _authenticate(self, context: grpc.ServicerContext) -> Grant | None:
        """The grant of the call's key; None when the server has no keys."""
        if self._keys.empty():
            return None
        presented = presented_key(context.invocation_metadata() or ())
        if presented is None:
            abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                'missing API key: send the metadata "authorization: Bearer KEY"',
            )
        grant = self._keys.grant(presented)
        if not grant.any():
            abort(context, grpc.StatusCode.UNAUTHENTICATED, "invalid API key")
        return grant

    def _agent(self, context: grpc.ServicerContext, grant: Grant | None, name: str) -> _Served:
        """The agent a request names ("" for the only one), checked against the key
        first: a key the server knows gets PERMISSION_DENIED for an agent it does not
        grant, served or not, and every message names only the agents it grants."""
        if name == "" and len(self._order) == 1:
            name = self._order[0]
        usable = [n for n in self._order if grant is None or grant.allows(n)]
        if name != "" and grant is not None and not grant.allows(name):
            grants = f"it grants: {', '.join(usable)}" if usable else "it grants no agent this server serves"
            abort(context, grpc.StatusCode.PERMISSION_DENIED, f'the API key does not grant agent "{name}" ({grants})')
        agents = f"agents: {', '.join(usable)}" if usable else "the API key grants no agent this server serves"
        if name == "":
            abort_field(context, FieldError("agent", f"empty, but the server serves several agents: name one ({agents})"))
        served = self._served.get(name)
        if served is None:
            abort(context, grpc.StatusCode.NOT_FOUND, f'no agent "{name}" ({agents})')
        return served

    # -- methods ------------------------------------------------------------------

    def Spec(self, request, context):
        grant = self._authenticate(context)
        return self._agent(context, grant, request.agent).proto

    def Agents(self, request, context):
        grant = self._authenticate(context)
        return pb.AgentsResponse(
            agents=[self._served[n].proto for n in self._order if grant is None or grant.allows(n)]
        )

    def Act(self, request, context):
        grant = self._authenticate(context)
        resp = self._agent(context, grant, request.agent).act(request, context)
        return pb.ActResponse() if resp is None else resp  # empty for feedback alone

    def ActStream(self, request_iterator, context):
        grant = self._authenticate(context)
        for request in request_iterator:
            resp = self._agent(context, grant, request.agent).act(request, context)
            if resp is not None:  # feedback alone gets no answer
                yield resp

    def ActBatch(self, request, context):
        grant = self._authenticate(context)
        return self._agent(context, grant, request.agent).act_batch(request, context)


def _server_credentials(tls) -> grpc.ServerCredentials | None:
    if tls is None:
        return None
    if isinstance(tls, grpc.ServerCredentials):
        return tls
    if not (isinstance(tls, (tuple, list)) and len(tls) == 2):
        raise ConfigError("tls: want (certificate chain, private key) as PEM bytes or file paths, or grpc.ServerCredentials")

    def pem(v, what):
        if isinstance(v, bytes):
            return v
        try:
            with open(v, "rb") as f:
                return f.read()
        except (OSError, TypeError) as e:
            raise ConfigError(f"tls: {what}: {e}") from None

    cert, key = pem(tls[0], "certificate chain"), pem(tls[1], "private key")
    return grpc.ssl_server_credentials([(key, cert)])


class PolicyServer:
    """A running agent server. ``addr`` is where it listens ("127.0.0.1:43121", the
    port the OS picked for port 0), ``agents`` the names it serves. ``stop`` shuts it
    down gracefully; it is a context manager that stops on exit. Safe for concurrent
    use."""

    def __init__(self, server: grpc.Server, addr: str, agents: Sequence[str], health: _health.HealthServicer):
        self._server = server
        self.addr = addr
        self.port = int(addr.rpartition(":")[2])
        self.agents = tuple(agents)
        self._health = health
        self._stopped = threading.Event()

    def stop(self, grace: float | None = 5.0) -> None:
        """Stops taking calls, gives those in flight ``grace`` seconds to finish (None:
        as long as they take), then cancels the rest; returns when the server is down.
        Calling it again does nothing."""
        if self._stopped.is_set():
            return
        self._health.enter_graceful_shutdown()
        self._server.stop(grace).wait()
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Blocks until the server stops (by ``stop``, from another thread or a signal
        handler) or timeout seconds pass; returns whether it stopped."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> PolicyServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"PolicyServer({self.addr!r}, agents={list(self.agents)!r})"


def _add_health_and_reflection(server: grpc.Server, names: Sequence[str]) -> _health.HealthServicer:
    """Adds health checking (SERVING for "" and every name in ``names``) and reflection
    (of ``names``, the health service and reflection itself) to ``server``; returns the
    health servicer."""
    health = _health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    for name in ("", *names):
        health.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection((*names, _health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    return health


def serve_policies(
    policies: Iterable[Policy],
    addr: str = DEFAULT_ADDR,
    *,
    key: None | str | dict[str, str] | Keys = None,
    tls=None,
    max_workers: int = 64,
    max_message_bytes: int | None = None,
    logger: logging.Logger | None = None,
) -> PolicyServer:
    """Serves policies as AgentService on addr ("HOST:PORT"; port 0 lets the OS pick)
    and returns the running server. Names must be distinct.

    ``key``: None (no key: every call is accepted), a str (the default key, granting
    every agent), a mapping of agent names to keys ("" for the default key), or Keys
    (Keys.read(path) reads a key file). With keys, every agent needs its own key or the
    default key.

    ``tls``: None (plaintext), (certificate chain, private key) as PEM bytes or file
    paths, or grpc.ServerCredentials.

    ``max_workers`` bounds the calls served at once, each on a thread of its own; an
    open ActStream holds one for as long as it lasts (a trial's actor keeps one), so
    keep it at or above the number of trials that act at once (baton run's --workers).
    A call beyond it fails at once with RESOURCE_EXHAUSTED rather than wait for a
    stream to end. ``max_message_bytes`` bounds messages both ways (gRPC's 4 MiB
    when None). ``logger`` gets the policy's failures (logging.getLogger("baton.remote")
    when None).
    """
    logger = logger or logging.getLogger("baton.remote")
    policies = list(policies)
    if not policies:
        raise ConfigError("serve_policies: no policy")
    served: dict[str, _Served] = {}
    problems = []
    keys = as_keys(key)
    for p in policies:
        if not isinstance(p, Policy):
            raise ConfigError(f"serve_policies: {p!r} is not a Policy")
        if p.name in served:
            problems.append(f"agent {p.name} is served twice")
            continue
        if not keys.empty() and keys.key_for(p.name) is None:
            problems.append(f"agent {p.name} has no API key (keys: {', '.join(keys.names)})")
        served[p.name] = _Served(p, logger)
    if problems:
        raise ConfigError("; ".join(problems))
    if not isinstance(max_workers, int) or max_workers < 1:
        raise ConfigError(f"max_workers {max_workers!r}: want an integer >= 1")
    creds = _server_credentials(tls)
    # gRPC sets SO_REUSEPORT by default: a second server on a port in use would share
    # its calls instead of failing to listen.
    options = [("grpc.so_reuseport", 0)]
    if max_message_bytes is not None:
        options += [
            ("grpc.max_receive_message_length", int(max_message_bytes)),
            ("grpc.max_send_message_length", int(max_message_bytes)),
        ]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="baton-agent"),
        options=options,
        maximum_concurrent_rpcs=max_workers,
    )
    pb_grpc.add_AgentServiceServicer_to_server(_AgentService(served, keys), server)
    health = _add_health_and_reflection(server, (_SERVICE,))
    host = addr.rpartition(":")[0]
    try:
        port = server.add_secure_port(addr, creds) if creds is not None else server.add_insecure_port(addr)
    except RuntimeError as e:
        raise OSError(f"serve_policies: cannot listen on {addr}: {e}") from None
    if not port:
        raise OSError(f"serve_policies: cannot listen on {addr}")
    server.start()
    return PolicyServer(server, f"{host}:{port}", list(served), health)


def serve_policy(
    fn: Callable,
    spaces,
    addr: str = DEFAULT_ADDR,
    *,
    name: str | None = None,
    batch_fn: Callable | None = None,
    concurrent: bool = False,
    **options,
) -> PolicyServer:
    """Serves one Python function as an agent (see Policy for how fn is called and
    baton.remote.agent_spec for the forms ``spaces`` takes: AgentSpaces, a tuple, an
    agent of ``baton envs ENV --json``) and returns the running server. ``name`` is the
    agent's name, which a trial's agent must have ("strategy"); it may come with
    ``spaces`` instead. ``options`` are serve_policies': key, tls, max_workers,
    max_message_bytes, logger.

        server = serve_policy(lambda obs, mask: int(np.flatnonzero(mask)[0]),
                              spaces, "127.0.0.1:50051", name="strategy")
    """
    return serve_policies([Policy(fn, spaces, name=name, batch_fn=batch_fn, concurrent=concurrent)], addr, **options)


def serve_learner(
    learner,
    spaces,
    addr: str = DEFAULT_ADDR,
    *,
    name: str | None = None,
    concurrent: bool = False,
    **options,
) -> PolicyServer:
    """Serves a learner as an agent that learns online, and returns the running
    server: serve_policy's form for a model trained while it plays in Go trials.

    ``learner`` has ``act(obs, mask, context)`` (called as serve_policy calls its
    function; see Policy for the signatures accepted) and ``learn(outcome)``, which
    takes each baton.remote.Outcome of the trials it plays in: step outcomes with the
    reward and next observation, retroactive rewards, episode ends. The agent's spec
    says it learns, so Go trials (``baton run ENV --policy AGENT=grpc://ADDR``) send
    it their feedback; other agents get none.

    Several trials and clients stream into one learner at once. Unless ``concurrent``
    says ``learner`` is safe for concurrent use, act and learn are serialised by one
    lock. Within an episode a trial's feedback reaches learn before that trial's next
    act; keep what a decision needs remembered per (trial, episode, agent id). See
    serve_policy for ``spaces`` and ``name``, serve_policies for ``options`` (key,
    tls, max_workers, max_message_bytes, logger).

        class Counter:
            def __init__(self): self.rewards = 0.0
            def act(self, obs, mask, context): return int(np.flatnonzero(mask)[0])
            def learn(self, outcome):
                if outcome.kind == "step": self.rewards += outcome.reward

        server = serve_learner(Counter(), spaces, "127.0.0.1:50051", name="strategy")
    """
    return serve_policies([LearnerPolicy(learner, spaces, name=name, concurrent=concurrent)], addr, **options)
