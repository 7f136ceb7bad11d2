"""baton environments stepped over gRPC (EnvService), in two forms.

``RemoteMultiAgentEnv`` is the turn-taking multi-agent form of the wire (PettingZoo's
AEC API): ``reset`` and ``step`` return a Turn, every agent reported in the step keyed by
agent id ("motion_3") plus the id of the agent that acts next.

``RemoteEnv`` is the single-agent Gymnasium view of one agent: ``reset(seed=...)`` gives
``(obs, info)`` and ``step(action)`` the five-tuple ``(obs, reward, terminated,
truncated, info)``. It fits an environment of one agent (the cart-pole) as it is; in a
hierarchical environment it views one agent and plays the others with local policies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from collections.abc import Callable, Mapping

import numpy as np

from .. import spaces as S
from ..v1 import baton_pb2 as pb
from ..v1 import baton_pb2_grpc as pb_grpc
from . import actions as A
from . import tensors as T
from .channel import DEFAULT_TIMEOUT, Connection
from .errors import ConfigError, FieldError, Mismatch
from .policy import Policy
from .specs import AgentSpec

__all__ = ["Clock", "EnvInfo", "RemoteEnv", "RemoteMultiAgentEnv", "Report", "Turn", "env_spec", "list_envs"]

_MAX_SEED = (1 << 64) - 1


class Clock(NamedTuple):
    """Where an agent stands: its completed decisions in its current sub-episode,
    environment steps since the reset, and k in its agent id "<name>_<k>"."""

    steps: int
    tick: int
    sub_episode: int


@dataclass(frozen=True)
class Report:
    """What one agent sees in one step.

    ``observation`` is the agent's flat float32 observation and ``mask`` its action
    mask (bool, entry i allowing the action start+i; None without a mask). ``reward`` is
    the reward of the agent's last decision, which took ``span_ticks`` environment steps
    (discount by gamma**span_ticks); both are 0 when ``start`` is set: the first
    observation of a sub-episode, before the agent acted. ``terminated`` and
    ``truncated`` end the agent's sub-episode, naturally or by a limit."""

    agent_id: str
    agent: str
    parent_id: str
    observation: np.ndarray = field(repr=False)
    mask: np.ndarray | None = field(repr=False)
    reward: float
    terminated: bool
    truncated: bool
    start: bool
    span_ticks: int
    clock: Clock


@dataclass(frozen=True)
class Turn:
    """What reset and step return: ``reports`` by agent id, in the order reported (the
    acting agent, if any, last); ``next`` the id of the agent that acts next (None once
    the episode is over); ``over``; ``tick``, environment steps since the reset; and
    ``info``, the environment's info decoded from JSON when it was asked for (None
    otherwise)."""

    reports: dict[str, Report]
    next: str | None
    over: bool
    tick: int
    info: Any = None

    @property
    def observations(self) -> dict[str, np.ndarray]:
        """Each reported agent's flat observation, by agent id."""
        return {k: r.observation for k, r in self.reports.items()}

    @property
    def rewards(self) -> dict[str, float]:
        """Each reported agent's reward, by agent id."""
        return {k: r.reward for k, r in self.reports.items()}

    @property
    def terminated(self) -> dict[str, bool]:
        """Whether each reported agent's sub-episode terminated, by agent id."""
        return {k: r.terminated for k, r in self.reports.items()}

    @property
    def truncated(self) -> dict[str, bool]:
        """Whether each reported agent's sub-episode was truncated, by agent id."""
        return {k: r.truncated for k, r in self.reports.items()}

    @property
    def masks(self) -> dict[str, np.ndarray | None]:
        """Each reported agent's action mask (None without one), by agent id."""
        return {k: r.mask for k, r in self.reports.items()}


class EnvInfo(NamedTuple):
    """An environment a server can make: its name and one line for people."""

    name: str
    description: str


def _config_json(config) -> str:
    if config is None:
        return ""
    if isinstance(config, (bytes, bytearray)):
        config = config.decode("utf-8")
    if isinstance(config, str):
        return config
    try:
        return json.dumps(config, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"config: not JSON-encodable: {e}") from None


def list_envs(addr: str, *, key: str | None = None, timeout: float | None = DEFAULT_TIMEOUT, **options) -> list[EnvInfo]:
    """The environments the server at addr can make. ``options`` are RemoteEnv's
    connection options (tls, server_name, max_message_bytes)."""
    conn = Connection(addr, key=key, timeout=timeout, **options)
    try:
        stub = pb_grpc.EnvServiceStub(conn.channel)
        resp = conn.call(stub.Envs, pb.EnvsRequest(), "EnvService/Envs", opening=True)
        return [EnvInfo(e.name, e.description) for e in resp.envs]
    finally:
        conn.close()


def env_spec(
    addr: str,
    env: str = "maze",
    config: Any = None,
    *,
    key: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    **options,
) -> tuple[AgentSpec, ...]:
    """The agents of an environment of a name and configuration, as the server at addr
    makes it, in the environment's order: what serve_policy needs to serve a policy
    for one of them. ``options`` are RemoteEnv's connection options."""
    conn = Connection(addr, key=key, timeout=timeout, **options)
    try:
        stub = pb_grpc.EnvServiceStub(conn.channel)
        req = pb.EnvSpecRequest(env=env, config=_config_json(config))
        resp = conn.call(stub.Spec, req, "EnvService/Spec", f"env {env}", opening=True)
        out = []
        for i, a in enumerate(resp.agents):
            try:
                out.append(AgentSpec.from_proto(a))
            except S.SpecError as e:
                raise Mismatch(f"env {env} at {conn.addr}: the spec of agent {i} ({a.name}): {e}") from None
        return tuple(out)
    finally:
        conn.close()


def _gymnasium(gymnasium: bool | None) -> bool:
    if gymnasium is None:
        return S._gymnasium_spaces() is not None
    if gymnasium and S._gymnasium_spaces() is None:
        raise ImportError("gymnasium=True needs gymnasium: pip install gymnasium")
    return gymnasium


class RemoteMultiAgentEnv:
    """A baton environment on an EnvService server, stepped turn by turn.

    ``addr`` is "HOST:PORT", "grpc://HOST:PORT" or "grpcs://HOST:PORT" (TLS); ``env``
    the registered environment ("maze"); ``config`` its configuration (a JSON string or
    a JSON-encodable value; None for its defaults); ``max_ticks`` truncates each episode
    after that many environment steps (0: the environment's own limits). ``key`` is the
    API key, sent as "authorization: Bearer KEY"; ``timeout`` the deadline of each call
    in seconds (None: no deadline); ``tls`` True for the system's CA certificates or a
    CA bundle (PEM bytes or a file path), ``server_name`` the name to check the
    server's certificate against; ``wait_ready`` makes the first call (Make) wait,
    within its deadline, for a server that is still starting rather than fail at once
    (Unavailable); ``info`` asks every step for the environment's info (Turn.info),
    which costs time.

    ``spec`` holds each agent's AgentSpec (plain spaces), in the environment's order;
    ``observation_spaces`` and ``action_spaces`` the spaces by agent name, Gymnasium's
    when gymnasium is importable (or ``gymnasium=True``), plain descriptions otherwise.

    Not safe for concurrent use: one session serves one call at a time. ``close`` ends
    the session and the connection; the environment is also a context manager.
    """

    def __init__(
        self,
        addr: str,
        env: str = "maze",
        config: Any = None,
        *,
        key: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_ticks: int = 0,
        info: bool = False,
        tls: None | bool | str | bytes = None,
        server_name: str | None = None,
        max_message_bytes: int | None = None,
        wait_ready: bool = False,
        gymnasium: bool | None = None,
    ):
        if not isinstance(env, str) or not env:
            raise ConfigError(f"env {env!r}: want the name of a registered environment")
        if isinstance(max_ticks, bool) or not isinstance(max_ticks, int) or max_ticks < 0:
            raise ConfigError(f"max_ticks {max_ticks!r}: want an integer >= 0")
        config_json = _config_json(config)
        use_gym = _gymnasium(gymnasium)
        self._conn = Connection(
            addr, key=key, timeout=timeout, tls=tls, server_name=server_name, max_message_bytes=max_message_bytes,
            wait_ready=wait_ready,
        )
        self._stub = pb_grpc.EnvServiceStub(self._conn.channel)
        self._target = f"env {env}"
        self._info = bool(info)
        self._session: str | None = None
        self._next: str | None = None
        self._rng = np.random.default_rng()
        try:
            resp = self._conn.call(
                self._stub.Make,
                pb.MakeRequest(env=env, config=config_json, max_ticks=max_ticks),
                "EnvService/Make",
                self._target,
                opening=True,
            )
            self._session = resp.session
            agents = []
            for i, a in enumerate(resp.spec.agents):
                try:
                    agents.append(AgentSpec.from_proto(a))
                except S.SpecError as e:
                    raise Mismatch(f"{self._target} at {self._conn.addr}: the spec of agent {i} ({a.name}): {e}") from None
            if not agents:
                raise Mismatch(f"{self._target} at {self._conn.addr}: the environment has no agent")
        except BaseException:
            self.close()
            raise
        self.env = resp.spec.env or env
        self.spec: tuple[AgentSpec, ...] = tuple(agents)
        self._by_name: dict[str, AgentSpec] = {a.name: a for a in agents}
        self.agents: tuple[str, ...] = tuple(a.name for a in agents)
        spaces = {a.name: a.spaces(use_gym) for a in agents}
        self.observation_spaces = {n: s.observation for n, s in spaces.items()}
        self.action_spaces = {n: s.action for n, s in spaces.items()}

    # -- properties ---------------------------------------------------------------

    @property
    def addr(self) -> str:
        """The server's address."""
        return self._conn.addr

    @property
    def session(self) -> str | None:
        """The session's id; None once closed."""
        return self._session

    @property
    def next_agent(self) -> str | None:
        """The id of the agent that acts next; None before a reset and once the
        episode is over."""
        return self._next

    def agent_spec(self, agent: str) -> AgentSpec:
        """The spec of an agent, by name ("motion") or agent id ("motion_3")."""
        name = self._name_of(agent)
        return self._by_name[name]

    def _name_of(self, agent: str) -> str:
        if agent in self._by_name:
            return agent
        base, _, k = agent.rpartition("_")
        if base in self._by_name and k.isdigit():
            return base
        raise KeyError(f"{self._target} has no agent {agent!r} (agents: {', '.join(self.agents)})")

    # -- episodes -----------------------------------------------------------------

    def _seed(self, seed: int | None) -> int:
        if seed is None:
            return int(self._rng.integers(0, _MAX_SEED, dtype=np.uint64, endpoint=True))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= _MAX_SEED:
            raise ValueError(f"seed {seed!r}: want an integer from 0 to {_MAX_SEED}")
        # As Gymnasium: a seeded reset also seeds the seeds of later unseeded resets.
        self._rng = np.random.default_rng(int(seed))
        return int(seed)

    def _live(self) -> str:
        if self._session is None:
            raise RuntimeError(f"{self._target}: the environment is closed")
        return self._session

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> Turn:
        """Starts an episode: the same seed gives the same episode; with None, the seed
        is drawn from a generator that the last seeded reset seeded (from the OS before
        any). ``options`` may hold "info": True to ask for the environment's info of
        this reset.

        A reset the environment refuses raises Rejected (FAILED_PRECONDITION) with the
        server's message; ``step`` then raises RuntimeError until a reset succeeds."""
        info = self._info
        if options:
            unknown = sorted(set(options) - {"info"})
            if unknown:
                raise ValueError(f"reset: unknown options {unknown}; the only option is 'info'")
            info = bool(options.get("info", info))
        req = pb.ResetRequest(session=self._live(), seed=self._seed(seed), info=info)
        self._next = None
        return self._turn(self._conn.call(self._stub.Reset, req, "EnvService/Reset", self._target))

    def step(self, action, agent_id: str | None = None) -> Turn:
        """Applies the raw action of the acting agent (``agent_id``, by default the
        previous Turn's ``next``) and returns the Turn. A Discrete action is an int, a
        MultiDiscrete or MultiBinary one a sequence of ints, a Box one floats of its
        shape. An action the environment refuses (outside the action space, or invalid
        in the state, as a direction into a wall) raises InvalidArgument and leaves the
        episode as it was."""
        session = self._live()
        if agent_id is None:
            if self._next is None:
                raise RuntimeError(f"{self._target}: no agent acts: call reset first (the episode is over or not started)")
            agent_id = self._next
        space = self.agent_spec(agent_id).action
        tensor = A.encode(space, action, check=False)
        req = pb.StepRequest(session=session, agent_id=agent_id, action=tensor, info=self._info)
        return self._turn(self._conn.call(self._stub.Step, req, "EnvService/Step", f"{self._target} agent {agent_id}"))

    def _turn(self, msg: pb.Turn) -> Turn:
        reports: dict[str, Report] = {}
        for i, r in enumerate(msg.reports):
            where = f"reports[{i}]"
            try:
                spec = self._by_name.get(r.agent)
                if spec is None:
                    raise FieldError(f"{where}.agent", f"{r.agent!r} is not an agent of {self.env}")
                obs = T.decode(
                    f"{where}.observation",
                    r.observation if r.HasField("observation") else None,
                    T.FLOAT32,
                    [(spec.observation.flat_dim,)],
                )
                mask = None
                if r.HasField("mask"):
                    mask = T.decode(f"{where}.mask", r.mask, T.BOOL, [(spec.mask_len,)])
            except FieldError as fe:
                raise Mismatch(f"{self._target} at {self._conn.addr}: the server's Turn: {fe}") from None
            c = r.clock
            reports[r.agent_id] = Report(
                agent_id=r.agent_id,
                agent=r.agent,
                parent_id=r.parent_id,
                observation=obs,
                mask=mask,
                reward=float(r.reward),
                terminated=bool(r.terminated),
                truncated=bool(r.truncated),
                start=bool(r.start),
                span_ticks=int(r.span_ticks),
                clock=Clock(int(c.steps), int(c.tick), int(c.sub_episode)),
            )
        info = None
        if msg.info_json:
            try:
                info = json.loads(msg.info_json)
            except ValueError:
                raise Mismatch(f"{self._target} at {self._conn.addr}: the server's Turn: info_json is not JSON") from None
        nxt = msg.next or None
        if nxt is not None and nxt not in reports:
            raise Mismatch(f"{self._target} at {self._conn.addr}: the server's Turn: next {nxt!r} is not reported")
        self._next = None if msg.over else nxt
        return Turn(reports=reports, next=self._next, over=bool(msg.over), tick=int(msg.tick), info=info)

    def close(self) -> None:
        """Ends the session (CloseSession) and closes the connection. Calling it again does
        nothing. A server that cannot be reached any more closes the session itself
        when it has been idle for its idle timeout."""
        session, self._session = self._session, None
        self._next = None
        if getattr(self, "_conn", None) is None:
            return
        try:
            if session:
                try:
                    self._conn.call(self._stub.CloseSession, pb.CloseRequest(session=session), "EnvService/CloseSession", self._target)
                except Exception:
                    pass  # the session ends with the server's idle timeout
        finally:
            self._conn.close()

    def __enter__(self) -> RemoteMultiAgentEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteMultiAgentEnv({self.addr!r}, {self.env!r}, agents={list(self.agents)!r})"


def _structured(space, flat: np.ndarray):
    """A flat observation in its space's form: reshaped for a Box, unflattened else."""
    if isinstance(space, S.Box):
        return flat.reshape(space.shape)
    return S.unflatten(space, flat)


class RemoteEnv:
    """The Gymnasium view of one agent of a baton environment on an EnvService server.

    ``agent`` names the viewed agent; None picks the environment's only agent. In an
    environment of several agents, ``others`` gives every other agent's policy, a
    function of its flat observation (and mask) as serve_policy takes (or a
    baton.remote.Policy): between two actions of the viewed agent, ``step`` plays them
    until the viewed agent acts again or the episode ends, so that a strategy agent can
    be trained through Gymnasium with its motion agent played by a fixed policy.

    ``reset(seed=None, options=None)`` returns ``(obs, info)`` and ``step(action)``
    ``(obs, reward, terminated, truncated, info)``:

    - ``obs`` is in ``observation_space``'s form (a Box observation in its shape; other
      spaces unflattened, as baton.unflatten does), or flat with ``flatten=True``;
    - ``reward`` sums the viewed agent's rewards reported during the step (normally the
      one of its decision, whose span is in info["span_ticks"]);
    - ``terminated``/``truncated`` say how the episode ended for the viewed agent, apart,
      as Gymnasium does; a sub-episode of the viewed agent that ends while the episode
      goes on (a child agent handing control back) is reported in
      info["sub_episode_ended"], and the next observation starts its next sub-episode;
    - ``info`` holds "agent_id", "tick", "span_ticks", "action_mask" (a bool array, when
      the agent has a mask; Gymnasium's convention for masked actions) and "env_info"
      (the environment's info, with ``info=True``).

    The other arguments are RemoteMultiAgentEnv's; ``multi`` is that environment.
    ``observation_space`` and ``action_space`` are Gymnasium spaces when gymnasium is
    importable, baton's plain descriptions otherwise. Not safe for concurrent use.
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(
        self,
        addr: str,
        env: str = "maze",
        config: Any = None,
        agent: str | None = None,
        key: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        *,
        others: Mapping[str, Callable | Policy] | None = None,
        flatten: bool = False,
        **options,
    ):
        self.multi = RemoteMultiAgentEnv(addr, env, config, key=key, timeout=timeout, **options)
        try:
            names = self.multi.agents
            if agent is None:
                if len(names) != 1:
                    raise ConfigError(f"{env} has agents {', '.join(names)}: pass agent=NAME to view one")
                agent = names[0]
            if agent not in names:
                raise ConfigError(f"{env} has no agent {agent!r} (agents: {', '.join(names)})")
            others = dict(others or {})
            unknown = sorted(set(others) - set(names))
            if unknown:
                raise ConfigError(f"others: {env} has no agents {unknown} (agents: {', '.join(names)})")
            if agent in others:
                raise ConfigError(f"others: {agent} is the viewed agent")
            missing = [n for n in names if n != agent and n not in others]
            if missing:
                raise ConfigError(
                    f"{env}: the view of {agent} needs a policy for every other agent: pass others={{"
                    + ", ".join(f"{n!r}: fn" for n in missing)
                    + "}"
                )
            self._others: dict[str, Policy] = {
                n: p if isinstance(p, Policy) else Policy(p, self.multi.agent_spec(n), name=n) for n, p in others.items()
            }
        except BaseException:
            self.multi.close()
            raise
        self.agent = agent
        self._spec = self.multi.agent_spec(agent)
        self._flatten = bool(flatten)
        self.observation_space = self.multi.observation_spaces[agent]
        self.action_space = self.multi.action_spaces[agent]
        self._obs: np.ndarray | None = None
        self._over = True
        self._broken = False

    @property
    def unwrapped(self) -> RemoteEnv:
        return self

    @property
    def spec(self) -> AgentSpec:
        """The viewed agent's AgentSpec (plain spaces and mask length)."""
        return self._spec

    def _observe(self, flat: np.ndarray):
        return flat if self._flatten else _structured(self._spec.observation, flat)

    def _play(self, turn: Turn) -> tuple[Turn, list[Report]]:
        """Plays the other agents until the viewed one acts or the episode ends; returns
        the last turn and the viewed agent's reports on the way."""
        mine = [r for r in turn.reports.values() if r.agent == self.agent]
        try:
            while not turn.over and turn.next is not None:
                nxt = turn.reports[turn.next]
                if nxt.agent == self.agent:
                    break
                action = self._others[nxt.agent].act(nxt.observation, nxt.mask)
                turn = self.multi.step(action, agent_id=turn.next)
                mine += [r for r in turn.reports.values() if r.agent == self.agent]
        except BaseException:
            # Another agent's policy failed or its action was refused: the viewed agent
            # has no observation to act on.
            self._broken = True
            raise
        return turn, mine

    def _result(self, turn: Turn, mine: list[Report]):
        last = mine[-1] if mine else None
        if last is not None:
            self._obs = last.observation
        elif self._obs is None:  # the episode ended before the viewed agent was reported
            self._obs = np.zeros(self._spec.observation.flat_dim, np.float32)
        info: dict[str, Any] = {
            "agent_id": last.agent_id if last is not None else "",
            "tick": turn.tick,
            "span_ticks": int(sum(r.span_ticks for r in mine)),
        }
        if last is not None and last.mask is not None:
            info["action_mask"] = last.mask
        if not turn.over and any(r.terminated or r.truncated for r in mine):
            info["sub_episode_ended"] = True
        if turn.info is not None:
            info["env_info"] = turn.info
        terminated = bool(turn.over and last is not None and last.terminated)
        truncated = bool(turn.over and not terminated)
        self._over = turn.over
        return self._observe(self._obs), float(sum(r.reward for r in mine)), terminated, truncated, info

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        """Starts an episode (see RemoteMultiAgentEnv.reset for seeds, options and a
        refused reset) and returns (obs, info)."""
        self._obs = None
        self._broken = False
        self._over = True  # until the reset succeeds
        turn, mine = self._play(self.multi.reset(seed=seed, options=options))
        obs, _, _, _, info = self._result(turn, mine)
        return obs, info

    def step(self, action):
        """Applies the viewed agent's action, plays the others until it acts again,
        and returns (obs, reward, terminated, truncated, info). An action the
        environment refuses raises InvalidArgument and leaves the episode as it was."""
        if self._broken:
            raise RuntimeError(f"{self.multi.env}: another agent's step failed during the last call: call reset")
        if self._over:
            raise RuntimeError(f"{self.multi.env}: the episode is over (or not started): call reset")
        turn, mine = self._play(self.multi.step(action))
        return self._result(turn, mine)

    def close(self) -> None:
        """Ends the session and closes the connection."""
        self.multi.close()

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteEnv({self.multi.addr!r}, {self.multi.env!r}, agent={self.agent!r})"
