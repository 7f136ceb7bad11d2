"""The training loop of baton.ppo: environments seen per agent name (``AgentVector``),
the loop one rollout at a time (``Trainer``), ``train`` and ``evaluate``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from .. import vector as _vector
from ..spaces import Discrete as _Discrete
from ._core import ActorCritic, AgentBuffer, Network, PPOConfig, ppo_update

# A network factory: an agent's layout and the configuration in, its network out.
NetworkFactory = Callable[[_vector.AgentLayout, PPOConfig], Network]


class UnsupportedError(ValueError):
    """An environment, agent or option that baton.ppo cannot train: an agent whose
    actions are not Discrete, an asynchronous vector (``batch_size``)."""


@dataclass
class Rows:
    """The copies one agent acts in now (``copies``, ascending), their observations
    [k, obs_dim] and masks [k, mask_len] (None without a mask), read-only arrays the
    next step overwrites, and ``actions`` [k] int64, the raw actions to fill before
    the step (the agent's Discrete values, ``start`` included)."""

    agent: str
    copies: np.ndarray
    obs: np.ndarray
    masks: np.ndarray | None
    actions: np.ndarray


@dataclass
class Outcome:
    """What a step reported, per copy and agent (columns in the order of
    ``AgentVector.agents``): the rewards, the span ticks of the decisions they reward,
    ``done`` (the agent's sub-episode or the episode ended); and per copy whether its
    episode ended (``ended``, and the copy was reset), whether it ended in a terminal
    state of the top agent rather than by truncation (``terminated``), and the ticks
    the step took (``ticks``: 1 in a hierarchy, where a step is a tick of every copy;
    the decision's span for one agent of a hierarchy with the others driven in Go).
    For a single agent, ``final_obs`` [n, obs_dim] holds the last observation of each
    copy whose episode ended (rows where ``ended``), which a metric may read; None for
    a hierarchy. All are arrays the next step overwrites."""

    rewards: np.ndarray
    spans: np.ndarray
    done: np.ndarray
    ended: np.ndarray
    terminated: np.ndarray
    ticks: np.ndarray
    final_obs: np.ndarray | None = None


def _is_discrete(space: Any) -> bool:
    if isinstance(space, _Discrete):
        return True
    try:
        import gymnasium
    except ImportError:
        return False
    return isinstance(space, gymnasium.spaces.Discrete)


class AgentVector:
    """A vector of a registered environment seen per agent name, whatever its kind: a
    hierarchical or multi-agent environment (``baton.vector.MultiVector``, one group
    of rows per agent name), a single-agent one (``SingleVector``, one group of every
    copy), or, with ``agent`` or ``policies``, one agent of a hierarchy with the others
    driven by ``policies`` in Go (``baton.make_vec``'s view, whose steps last a
    decision of the agent: ``Outcome.ticks`` are their spans). ``vector_kwargs`` go to
    ``baton.vector.make`` (or ``baton.make_vec`` for a view): ``workers``, ``log``,
    ``policy``, ``library``. ``reset`` and ``step`` return each agent's ``Rows``; the
    top agent (``top``, its index in ``agents``) is the one acting in copy 0 after the
    first reset, the root of a hierarchy. Not safe for concurrent use.

    >>> v = AgentVector("maze", num_envs=8, seed=1)  # doctest: +SKIP
    >>> rows = v.reset()  # doctest: +SKIP
    >>> for r in rows.values():  # doctest: +SKIP
    ...     r.actions[:] = r.masks.argmax(1)  # the first allowed action
    >>> rows, out = v.step()  # doctest: +SKIP
    """

    def __init__(self, env: str, num_envs: int, *, seed: int = 0, config=None, agent: str | None = None,
                 policies: Mapping[str, Any] | None = None, **vector_kwargs: Any):
        if vector_kwargs.get("batch_size") is not None:
            raise UnsupportedError("baton.ppo: batch_size: asynchronous vectors are not supported; "
                                   "baton.ppo steps every copy each tick (leave batch_size out)")
        vector_kwargs.pop("batch_size", None)
        self.env, self.num_envs, self.seed = env, int(num_envs), int(seed)
        self.view = agent is not None or policies is not None
        if self.view:
            import gymnasium

            import baton

            # The trainer reads each ended episode's last observation from the step that
            # ended it (final_obs) and the next episode's first from obs: Gymnasium's
            # same-step auto-reset, not make_vec's default (the next step).
            vector_kwargs.setdefault("autoreset_mode", gymnasium.vector.AutoresetMode.SAME_STEP)
            self.vector = baton.make_vec(env, self.num_envs, agent=agent, config=config, policies=policies, **vector_kwargs)
            layouts = list(self.vector.vector.agents)
            self.multi = False
        else:
            self.vector = _vector.make(env, num_envs=self.num_envs, seed=self.seed, config=config, **vector_kwargs)
            layouts = list(self.vector.agents)
            self.multi = isinstance(self.vector, _vector.MultiVector)
        self.agents: list[_vector.AgentLayout] = layouts
        self.names = [a.name for a in layouts]
        try:
            for a in layouts:
                if not _is_discrete(a.action_space):
                    raise UnsupportedError(
                        f"baton.ppo: agent {a.name!r} of {env!r} acts in {a.action_space}: baton.ppo trains Discrete "
                        "actions only (a masked categorical policy); Box, MultiDiscrete and other action spaces "
                        "are not supported")
        except BaseException:
            self.close()
            raise
        self.top = 0
        n, na = self.num_envs, len(layouts)
        self._done = np.zeros((n, na), np.bool_)
        self._ones = np.ones(n, np.int64)
        self._copies = np.arange(n)
        self._actions = np.zeros(n, np.int64)
        self._no_final: np.ndarray | None = None

    def _rows_multi(self, groups) -> dict[str, Rows]:
        return {name: Rows(name, g.copies, g.obs, g.masks, g.actions) for name, g in groups.items()}

    def _rows_single(self, obs, info) -> dict[str, Rows]:
        return {self.names[0]: Rows(self.names[0], self._copies, obs, info.get("action_mask"), self._actions)}

    def reset(self, seed: int | None = None) -> dict[str, Rows]:
        """Resets every copy, copy i with the episode seed of (``seed``, i) (None: the
        vector's seed), and returns each agent's rows."""
        seed = self.seed if seed is None else int(seed)
        if self.multi:
            rows = self._rows_multi(self.vector.reset(seed))
            self.top = int(self.vector.acting[0])
            return rows
        return self._rows_single(*self.vector.reset(seed=seed))

    def step(self) -> tuple[dict[str, Rows], Outcome]:
        """Steps every copy with the actions written into the rows' ``actions``."""
        if self.multi:
            groups, rewards, term, trunc, ended = self.vector.step()
            np.logical_or(term, trunc, out=self._done)
            self._done |= ended[:, None]
            out = Outcome(rewards, self.vector.spans, self._done, ended, ended & term[:, self.top], self._ones)
            return self._rows_multi(groups), out
        obs, rewards, term, trunc, info = self.vector.step(self._actions)
        ended = term | trunc
        ticks = np.asarray(info["span_ticks"]) if "span_ticks" in info else self._ones
        final = info.get("final_obs")
        if final is None:  # no episode ended: Gymnasium's info leaves final_obs out
            if self._no_final is None or self._no_final.shape != obs.shape:
                self._no_final = np.zeros_like(obs)
            final = self._no_final
        out = Outcome(rewards[:, None], ticks[:, None], ended[:, None], ended, term.copy(), ticks, final)
        return self._rows_single(obs, info), out

    def close(self) -> None:
        self.vector.close()

    def __enter__(self) -> AgentVector:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class Agent:
    """One agent name's policy: its ``layout`` (``baton.vector.AgentLayout``) and its
    ``net`` (a ``Network``). ``act`` gives raw actions (the agent's Discrete values)
    for its observations.

    >>> res = baton.ppo.train("cartpole", steps=20_000)  # doctest: +SKIP
    >>> res.agents["cartpole"].act(obs, greedy=True)  # doctest: +SKIP
    """

    name: str
    layout: _vector.AgentLayout
    net: Network
    generator: torch.Generator = field(default_factory=lambda: torch.Generator().manual_seed(0), repr=False)

    def act(self, obs: np.ndarray, mask: np.ndarray | None = None, *, greedy: bool = False,
            generator: torch.Generator | None = None) -> np.ndarray:
        """Raw actions [k] int64 for observations [k, obs_dim] (one observation [obs_dim]
        gives one action [1]) and their masks, sampled from ``generator`` (default the
        agent's own, seeded 0) or, ``greedy``, the most likely."""
        obs = np.atleast_2d(np.asarray(obs, np.float32))
        if mask is not None:
            mask = np.array(np.atleast_2d(mask), np.bool_)
        a, _, _ = self.net.act(self.net.features(obs), mask, generator or self.generator, greedy)
        return a + self.layout.start


@dataclass
class Episodes:
    """Episodes that ended, in the order they ended (within a step, in copy order):
    the ``copies`` they were in, each agent's ``returns`` [k, A] (columns in the
    vector's agent order), their ``ticks`` and whether they ended in a terminal state
    of the top agent (``terminated``) rather than by truncation."""

    copies: np.ndarray
    returns: np.ndarray
    ticks: np.ndarray
    terminated: np.ndarray

    def __len__(self) -> int:
        return len(self.copies)


@dataclass
class Rollout:
    """What ``Trainer.rollout`` did: the training ``episodes`` that ended in it, its
    env steps (ticks of every copy) and each agent's losses in its update (the last
    epoch's means of ``policy``, ``value``, ``entropy`` and ``clipfrac``; empty for an
    agent that had no complete transition)."""

    episodes: Episodes
    env_steps: int
    losses: dict[str, dict[str, float]]


class Trainer:
    """PPO on a registered environment, one rollout at a time: the loop ``train``
    runs, for loops of one's own (a curriculum that remakes the vector, evaluations
    between rollouts). One network per agent name (``networks``: a factory
    ``(layout, ppo) -> Network`` for every agent, or a mapping of agent names to
    factories, the names left out getting ``ActorCritic.default``), each agent's
    rollout kept apart (``AgentBuffer``), one policy call per agent name per tick.
    ``config`` is the environment's JSON configuration; ``agent`` and ``policies``
    train one agent of a hierarchy with the others driven in Go (see
    ``AgentVector``); ``vector_kwargs`` go to ``baton.vector.make``.

    Seeds: ``torch.manual_seed(seed)`` before the networks are made (in the vector's
    agent order), a ``torch.Generator`` seeded ``seed`` for every sample and
    minibatch, the vector reset with ``seed``: with single-threaded torch the same
    seed gives the same rollouts, losses and weights.

    ``on_step(rows, outcome)`` is called after the reset (``outcome`` None) and after
    every step; it does nothing here, and a subclass may watch the episodes with it.
    Not safe for concurrent use; ``close`` (or ``with``) frees the vector.

    >>> with Trainer("maze", PPOConfig(num_envs=32), seed=1) as t:  # doctest: +SKIP
    ...     while t.env_steps < 20_000:
    ...         r = t.rollout()
    ...         print(t.env_steps, r.episodes.terminated.mean())
    """

    def __init__(self, env: str, ppo: PPOConfig | None = None, *, seed: int = 1, config=None, agent: str | None = None,
                 policies: Mapping[str, Any] | None = None,
                 networks: NetworkFactory | Mapping[str, NetworkFactory] | None = None, **vector_kwargs: Any):
        self.ppo = ppo or PPOConfig()
        self.env, self.seed, self.config = env, int(seed), config
        self._view = (agent, policies)
        torch.manual_seed(self.seed)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.vector = AgentVector(env, self.ppo.num_envs, seed=self.seed, config=config, agent=agent, policies=policies,
                                  **vector_kwargs)
        try:
            self.agents: dict[str, Agent] = {}
            for layout in self.vector.agents:
                net = _factory(networks, layout.name)(layout, self.ppo)
                if not isinstance(net, Network):
                    raise TypeError(f"baton.ppo: the network of agent {layout.name!r} is a {type(net).__name__}; "
                                    "want a baton.ppo.Network")
                self.agents[layout.name] = Agent(layout.name, layout, net)
            self.optimizers = {n: torch.optim.Adam(a.net.parameters(), lr=self.ppo.lr, eps=1e-5)
                               for n, a in self.agents.items()}
            self.env_steps = 0
            self.rollouts = 0
            self._start(self.seed)
        except BaseException:
            self.vector.close()
            raise

    def _start(self, seed: int) -> None:
        v, cfg = self.vector, self.ppo
        self.buffers = {a.name: AgentBuffer(cfg.rollout, v.num_envs, self.agents[a.name].net.in_features, a.mask_len)
                        for a in v.agents}
        self._ret = np.zeros((v.num_envs, len(v.agents)))
        self._ticks = np.zeros(v.num_envs, np.int64)
        self.rows = v.reset(seed)
        self.on_step(self.rows, None)

    def on_step(self, rows: dict[str, Rows], outcome: Outcome | None) -> None:
        """Called after the reset (``outcome`` None) and after every step, with each
        agent's rows (the observations the agents act on next); a subclass's hook."""

    def act(self, rows: dict[str, Rows], t: int | None = None, greedy: bool = False) -> None:
        """Fills every group's actions from the agents' networks; with ``t``, records
        them at tick ``t`` of the agents' rollouts."""
        act(self.agents, rows, self.generator, greedy=greedy, buffers=self.buffers if t is not None else None, t=t)

    def rollout(self) -> Rollout:
        """Steps ``ppo.rollout`` ticks, then updates every agent's network on its
        complete transitions (a decision still open is carried into the next
        rollout)."""
        cfg, v = self.ppo, self.vector
        names = v.names
        copies, rets, ticks, term = [], [], [], []
        steps = 0
        for t in range(cfg.rollout):
            self.act(self.rows, t)
            self.rows, out = v.step()
            for j, name in enumerate(names):
                self.buffers[name].record_outcomes(out.rewards[:, j], out.spans[:, j], out.done[:, j])
            self._ret += out.rewards
            self._ticks += out.ticks
            steps += int(out.ticks.sum())
            if out.ended.any():
                e = np.flatnonzero(out.ended)
                copies.append(e)
                rets.append(self._ret[e])
                ticks.append(self._ticks[e])
                term.append(out.terminated[e])
                self._ret[e] = 0
                self._ticks[e] = 0
            self.on_step(self.rows, out)
        self.env_steps += steps
        losses = {}
        for name in names:
            ag, buf, r = self.agents[name], self.buffers[name], self.rows[name]
            nv = np.zeros(0, np.float32)
            if len(r.copies):
                with torch.no_grad():
                    nv = ag.net.value(torch.from_numpy(ag.net.features(r.obs))).numpy()
            adv, ret = buf.advantages(cfg, r.copies, nv)
            losses[name] = ppo_update(ag.net, self.optimizers[name], buf.batch(adv, ret), cfg, self.generator)
            buf.carry(r.copies)
        self.rollouts += 1
        na = len(names)
        eps = Episodes(
            np.concatenate(copies) if copies else np.zeros(0, np.int64),
            np.concatenate(rets) if rets else np.zeros((0, na)),
            np.concatenate(ticks) if ticks else np.zeros(0, np.int64),
            np.concatenate(term) if term else np.zeros(0, np.bool_),
        )
        return Rollout(eps, steps, losses)

    def remake(self, *, seed: int, config=None, **vector_kwargs: Any) -> None:
        """Closes the vector and makes a new one of the same environment with
        ``config`` and ``vector_kwargs``, reset with ``seed``: the networks and
        optimizers go on, the rollouts start afresh (decisions still open are
        dropped), as a curriculum's next task wants."""
        agent, policies = self._view
        self.vector.close()
        self.config = config
        self.vector = AgentVector(self.env, self.ppo.num_envs, seed=seed, config=config, agent=agent, policies=policies,
                                  **vector_kwargs)
        self._start(seed)

    def close(self) -> None:
        self.vector.close()

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _factory(networks, name: str) -> NetworkFactory:
    if networks is None:
        return ActorCritic.default
    if isinstance(networks, Mapping):
        return networks.get(name, ActorCritic.default)
    return networks


def act(agents: Mapping[str, Agent], rows: Mapping[str, Rows], generator: torch.Generator, *, greedy: bool = False,
        buffers: Mapping[str, AgentBuffer] | None = None, t: int | None = None) -> None:
    """Fills every group's actions from the agents' networks, sampled from
    ``generator`` (``greedy``: the most likely); with ``buffers`` and ``t``, records
    them at tick ``t`` of those rollouts. A group of no rows takes nothing from the
    generator."""
    for name, r in rows.items():
        if len(r.copies) == 0:
            continue
        ag = agents[name]
        x = ag.net.features(r.obs)
        masks = None if r.masks is None else np.array(r.masks)  # torch wants writable arrays
        a, logp, v = ag.net.act(x, masks, generator, greedy)
        r.actions[:] = a + ag.layout.start if ag.layout.start else a
        if buffers is not None:
            buffers[name].record_acts(t, r.copies, x, masks, a, logp, v)


def summary(eps: Episodes, names: list[str], top: int) -> dict[str, Any]:
    """The means of some episodes: ``episodes``, ``return`` (the top agent's),
    ``returns`` (each agent's), ``terminated`` (the fraction that ended in a terminal
    state of the top agent) and ``episode_ticks``; None where there are none."""
    k = len(eps)
    if k == 0:
        return {"episodes": 0, "return": None, "returns": {n: None for n in names}, "terminated": None,
                "episode_ticks": None}
    return {
        "episodes": k,
        "return": float(eps.returns[:, top].mean()),
        "returns": {n: float(eps.returns[:, j].mean()) for j, n in enumerate(names)},
        "terminated": float(eps.terminated.mean()),
        "episode_ticks": float(eps.ticks.mean()),
    }


def _concat(eps: list[Episodes], na: int) -> Episodes:
    if not eps:
        return Episodes(np.zeros(0, np.int64), np.zeros((0, na)), np.zeros(0, np.int64), np.zeros(0, np.bool_))
    return Episodes(*(np.concatenate([getattr(e, f) for e in eps]) for f in ("copies", "returns", "ticks", "terminated")))


@dataclass
class Result:
    """What ``train`` returns: each agent name's policy (``agents``), the learning
    curve (a point every ``curve_every`` rollouts: ``env_steps`` so far and the
    training episodes that ended since the last point, as ``summary`` gives them,
    with each agent's policy ``entropy`` in the last update), the env steps (ticks of
    every copy), wall and CPU seconds, and what was trained (``env``, ``config``,
    ``agent``, ``policies``, ``ppo``, ``seed``) for ``evaluate``."""

    agents: dict[str, Agent]
    curve: list[dict[str, Any]]
    env_steps: int
    wall_seconds: float
    cpu_seconds: float
    env: str
    ppo: PPOConfig
    seed: int
    config: Any = None
    agent: str | None = None
    policies: Mapping[str, Any] | None = None

    def evaluate(self, episodes: int = 100, *, seed: int = 12345, greedy: bool = False, **vector_kwargs: Any) -> dict:
        """``evaluate`` of these agents on the environment they trained on.

        Examples:
            >>> baton.ppo.train("cartpole", steps=50_000).evaluate()["return"]  # doctest: +SKIP
        """
        return evaluate(self.agents, self.env, episodes=episodes, seed=seed, greedy=greedy, config=self.config,
                        agent=self.agent, policies=self.policies, **vector_kwargs)


def train(env: str, ppo: PPOConfig | None = None, *, steps: int = 100_000, seed: int = 1, config=None,
          agent: str | None = None, policies: Mapping[str, Any] | None = None,
          networks: NetworkFactory | Mapping[str, NetworkFactory] | None = None, curve_every: int = 1,
          progress: Callable[[str], None] | None = None, **vector_kwargs: Any) -> Result:
    """Trains every agent of the registered environment ``env`` with PPO for ``steps``
    env steps (whole rollouts: ticks of every copy) and returns their policies and
    learning curve. ``ppo`` holds the hyperparameters (``PPOConfig``), ``config`` the
    environment's JSON configuration; ``agent``, ``policies`` and ``networks`` are
    ``Trainer``'s; ``vector_kwargs`` go to ``baton.vector.make`` (``workers``,
    ``log`` with ``policy``, and ``library`` where it takes one). ``progress`` is told
    a line per curve point.

    Examples:
        >>> res = baton.ppo.train("cartpole", steps=50_000, seed=1)  # doctest: +SKIP
        >>> res.curve[-1]["return"], res.evaluate()["return"]  # doctest: +SKIP
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"baton.ppo: steps is {steps!r}; want an int >= 0")
    if isinstance(curve_every, bool) or not isinstance(curve_every, (int, np.integer)) or curve_every < 0:
        raise ValueError(f"baton.ppo: curve_every is {curve_every!r}; want an int >= 0 (0: no curve)")
    ppo = ppo or PPOConfig()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    curve: list[dict[str, Any]] = []
    with Trainer(env, ppo, seed=seed, config=config, agent=agent, policies=policies, networks=networks,
                 **vector_kwargs) as t:
        names, top = t.vector.names, t.vector.top
        window: list[Episodes] = []
        while t.env_steps < steps:
            r = t.rollout()
            window.append(r.episodes)
            if not curve_every or t.rollouts % curve_every:
                continue
            point = {"env_steps": t.env_steps, **summary(_concat(window, len(names)), names, top)}
            point["entropy"] = {n: r.losses[n].get("entropy") for n in names}
            curve.append(point)
            window = []
            if progress:
                ret = "-" if point["return"] is None else f"{point['return']:.3f}"
                term = "-" if point["terminated"] is None else f"{point['terminated']:.3f}"
                progress(f"env steps {t.env_steps:>10,}  episodes {point['episodes']:>5}  return {ret}  terminated {term}")
        res = Result(t.agents, curve, t.env_steps, 0.0, 0.0, env, ppo, int(seed), config, agent, policies)
    res.wall_seconds = time.perf_counter() - wall0
    res.cpu_seconds = time.process_time() - cpu0
    return res


def evaluate(agents: Mapping[str, Agent], env: str, *, episodes: int = 100, seed: int = 12345, greedy: bool = False,
             config=None, agent: str | None = None, policies: Mapping[str, Any] | None = None,
             keep: Callable[[dict[str, Rows]], np.ndarray] | None = None, **vector_kwargs: Any) -> dict[str, Any]:
    """Plays the first episode of each of ``episodes`` copies of ``env`` (the vector
    reset with ``seed``) with the agents' policies, sampled (``greedy``: their most
    likely actions), and returns their ``summary`` with ``policy`` ("sampled" or
    "greedy"). With ``keep``, a function of the rows after the reset giving a bool
    per copy, only the episodes it keeps count (``episodes`` is their number), and
    ``excluded`` is the number of the others: e.g. leaving out episodes that begin
    where training episodes began. The other arguments are ``Trainer``'s.

    >>> evaluate(res.agents, "maze", episodes=300)["terminated"]  # doctest: +SKIP
    1.0
    """
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"baton.ppo: episodes is {episodes!r}; want an int >= 1")
    gen = torch.Generator().manual_seed(seed)
    with AgentVector(env, episodes, seed=seed, config=config, agent=agent, policies=policies, **vector_kwargs) as v:
        missing = [n for n in v.names if n not in agents]
        if missing:
            raise ValueError(f"baton.ppo: no policy for agent {missing[0]!r} of {env!r} (policies: {', '.join(agents)})")
        first = np.zeros(episodes, np.bool_)
        ret = np.zeros((episodes, len(v.names)))
        ticks = np.zeros(episodes, np.int64)
        term = np.zeros(episodes, np.bool_)
        rows = v.reset()
        kept = np.ones(episodes, np.bool_) if keep is None else np.asarray(keep(rows), np.bool_)
        while not first.all():
            act(agents, rows, gen, greedy=greedy)
            rows, out = v.step()
            live = ~first
            ret[live] += out.rewards[live]
            ticks[live] += out.ticks[live]
            e = out.ended & live
            term[e] = out.terminated[e]
            first |= out.ended
        out = summary(Episodes(np.flatnonzero(kept), ret[kept], ticks[kept], term[kept]), v.names, v.top)
    if keep is not None:
        out["excluded"] = int((~kept).sum())
    return {"policy": "greedy" if greedy else "sampled", **out}


def untrained(env: str, ppo: PPOConfig | None = None, *, seed: int = 1, config=None, agent: str | None = None,
              policies: Mapping[str, Any] | None = None,
              networks: NetworkFactory | Mapping[str, NetworkFactory] | None = None,
              **vector_kwargs: Any) -> dict[str, Agent]:
    """The agents ``train`` starts from with these arguments: with ``ActorCritic``,
    policies close to uniform over the allowed actions.

    >>> evaluate(untrained("maze"), "maze")["terminated"]  # doctest: +SKIP
    0.0
    """
    ppo = replace(ppo or PPOConfig(), num_envs=1)
    with Trainer(env, ppo, seed=seed, config=config, agent=agent, policies=policies, networks=networks,
                 **vector_kwargs) as t:
        return t.agents


def plot(curves: Mapping[str, list[dict[str, Any]]], path: str, title: str = "PPO") -> None:
    """Draws the mean return of the top agent and the fraction of episodes that ended
    in a terminal state against env steps, one line per curve (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, curve in curves.items():
        pts = [p for p in curve if p["episodes"]]
        x = [p["env_steps"] for p in pts]
        ax1.plot(x, [p["return"] for p in pts], label=label)
        ax2.plot(x, [p["terminated"] for p in pts], label=label)
    ax1.set(xlabel="env steps", ylabel="mean return (training episodes)", title=title)
    ax2.set(xlabel="env steps", ylabel="terminated (not truncated)", ylim=(0, 1.02),
            title="episodes ending in a terminal state")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x else "0"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
