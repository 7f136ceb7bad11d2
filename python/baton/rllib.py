"""RLlib adapter: a baton environment as an RLlib ``MultiAgentEnv`` for RLlib's new API
stack (RLModules, env runners, ``MultiAgentEpisode``).

    import baton.rllib
    from ray.rllib.algorithms.ppo import PPOConfig

    baton.rllib.register()                       # ray.tune.register_env("baton", ...)
    config = (
        PPOConfig()
        .environment("baton", env_config={"env": "maze", "seed": 1, "action_masking": True})
        .multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=baton.rllib.policy_mapping_fn)
    )

    env = baton.rllib.BatonMultiAgentEnv({"env": "maze"})
    obs, infos = env.reset(seed=0)               # {"strategy_0": array([...])}
    obs, rewards, terminateds, truncateds, infos = env.step({"strategy_0": 1})

    env = baton.rllib.BatonMultiAgentEnv({"env": "maze", "agent_ids": "name"})
    obs, infos = env.reset(seed=0)               # {"strategy": array([...])}
    infos["strategy"]["agent_id"]                # 'strategy_0', the invocation

Agents per invocation (the default, ``"agent_ids": "invocation"``). A hierarchy invokes its agents many times an episode, each sub-episode under
an id of its own: ``strategy_0``, ``motion_0``, ``motion_1``, ... These ids are RLlib's
agent ids, as in RLlib's hierarchical examples: each sub-episode is an agent of its
own that terminates when the sub-episode ends (an RLlib agent id cannot come back after
it is done), and ``policy_mapping_fn`` maps every id to the module of its agent name
(``agent_name("motion_3") == "motion"``). ``possible_agents`` lists ``<name>_<k>`` for
k below ``ids_per_agent`` (config key, default 64) per agent name, since RLlib
builds its spaces from that list; an episode that would invoke an agent more often
raises ``IdError``. ``agents`` are the ids of the episode that were observed and had
not ended before the last step (those that ended in it included, as RLlib's checks
want every id of a returned dict among them).

Agents by name (``"agent_ids": "name"``). One RLlib agent id per agent name
(``possible_agents == ["strategy", "motion"]``) for the whole episode, as RLlib's
turn-based examples have it: an agent observes when it acts next (and, once, at the
end of the episode), and nothing marks its invocations' ends to RLlib, whose
``MultiAgentEpisode`` keeps an agent's reward that arrives without an observation
(the last reward of an invocation) for its next observation. The boundaries travel
in ``infos[name]``: ``agent_id`` (the invocation's id, ``motion_3``),
``sub_episode_start`` (True on an invocation's first observation: the transition
into it crosses a boundary), and on that observation ``previous_terminated`` and
``previous_truncated`` (how the invocation before it ended), for a connector or
learner that cuts its returns there. At the end of the episode every agent observed
gets its last observation, terminated or truncated as its last invocation ended
(truncated if it was cut). RLlib's episodes, connectors and metrics then hold two
agent ids an episode instead of one per invocation, which RLlib's multi-agent env
runner samples several times faster (docs/rllib.md); learning is the same when the
value of a boundary's next observation is cut (or counts little). ``policy_mapping_fn``
maps the names to themselves (a name that itself ends in ``_<digits>`` wants
``lambda aid, *a, **k: aid``). The default, ``"invocation"``, is the form above.

Steps. ``reset`` and ``step`` return an observation for the agent that acts next,
and the final observation of every agent whose sub-episode ended in the step
(``terminateds``/``truncateds`` True for it); ``rewards`` hold what the step reported
to each agent already observed (a parent's reward arrives when control returns to
it, for its whole decision). ``step`` takes exactly one action, for the acting agent.
At the end of the episode ``terminateds["__all__"]`` (the top agent, the first of the
environment, terminated) or ``truncateds["__all__"]`` (otherwise) is True, and every
agent still live ends with it. ``infos[id]`` for each observed id holds ``agent``
(the name), ``span_ticks`` (the environment ticks of the decision rewarded: discount
by ``gamma ** span_ticks``), ``action_mask`` (bool; without ``action_masking``),
and at the end of the episode ``success`` (the top agent terminated).

Masks. With ``"action_masking": True`` an agent with a mask observes a Dict
``{"observations": Box, "action_mask": Box(0, 1, (n,), float32)}``, as RLlib's
action-masking example (``ActionMaskingTorchRLModule``) takes it; agents without one
observe their Box alone. An action outside the agent's space or forbidden by its mask
raises ``baton.vector.ActionError`` naming the agent id, before anything steps
(``"invalid_action": "raise"``, the default), or, with ``"invalid_action":
"terminate"``, ends the episode with ``invalid_reward`` (default 0) for that agent and
``infos[id]["invalid_action"]`` True, for samplers that do not read masks (RLlib's
``check_multiagent_environments`` samples actions from the spaces).

Config keys (a dict, or RLlib's ``EnvContext``): ``env`` (registered environment,
default "maze"), ``config`` (its JSON configuration: dict or text), ``seed`` (the
seed of the first unseeded reset's draw; each env runner and vector index draws
from its own stream), ``address`` ("HOST:PORT" or "grpc://HOST:PORT": step the
environment on a ``baton serve env`` server through ``baton.remote`` instead of the
fast lane; ``key`` its API key), ``library`` (the path of the fast lane's library
that registers ``env``, one of the user's own built by ``baton.build``; default
``BATON_LIBRARY``, else baton's own), ``action_masking``, ``invalid_action``,
``invalid_reward``, ``ids_per_agent``, ``agent_ids`` (``"invocation"``, the default, or
``"name"``).

Processes. On the fast lane each copy is one environment stepped turn by turn by Go in
the process that makes it (as ``baton.pettingzoo``): RLlib makes env copies in its
env runners, Ray worker processes of their own that load their own Go library, so the
driver may make one too (see ``baton.vector``, Processes). Not safe for concurrent use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from . import vector as _vector
from ._lane import core as _core
from ._lane.adapters import _obs_space

__all__ = [
    "ENV_NAME",
    "BatonMultiAgentEnv",
    "IdError",
    "MultiAgentEnvRunner",
    "agent_name",
    "make",
    "policy_mapping_fn",
    "register",
]

ENV_NAME = "baton"
_ID = re.compile(r"^(.+)_(\d+)$")
_KEYS = {"env", "config", "seed", "address", "key", "action_masking", "invalid_action", "invalid_reward", "ids_per_agent",
         "library", "agent_ids"}
_INVALID = ("raise", "terminate")
_ID_FORMS = ("invocation", "name")


class IdError(_vector.VectorError, RuntimeError):
    """An agent id outside ``possible_agents``: the episode invoked an agent more than
    ``ids_per_agent`` times."""


def agent_name(agent_id: str) -> str:
    """The agent name of a per-invocation agent id ("motion_3" -> "motion"); an id
    without a numeric suffix is its own name.

    >>> agent_name("motion_3")
    'motion'
    """
    m = _ID.match(agent_id)
    return m.group(1) if m else agent_id


def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn``: every invocation of an agent to the module named
    for the agent ("motion_0", "motion_1", ... -> "motion"); with ``"agent_ids":
    "name"``, a name to itself ("motion" -> "motion"), for names that do not end in
    ``_<digits>``."""
    return agent_name(agent_id)


class _Report(NamedTuple):
    """One agent id's part of a step (a tuple: made for every report of every step)."""

    id: str
    name: str
    obs: np.ndarray
    mask: np.ndarray | None
    reward: float
    span: int
    terminated: bool
    truncated: bool


@dataclass(frozen=True)
class _Agent:
    name: str
    obs_dim: int
    mask_len: int
    actions: int
    start: int
    observation_space: gym.spaces.Box
    action_space: gym.Space


class _Local:
    """One copy on the fast lane, stepped turn by turn (baton._turns)."""

    def __init__(self, name: str, config, library):
        from ._turns import Turns

        self._t = Turns(name, config, library=library)
        self.agents = [
            _Agent(a.name, a.obs_dim, a.mask_len, a.actions, a.start, _obs_space(a.observation_space, a.obs_dim), a.action_space)
            for a in self._t.agents
        ]

    def _turn(self) -> tuple[list[_Report], str | None, bool]:
        t = self._t
        out = []
        for j, a in enumerate(self.agents):
            if t.reported[j]:
                m = t.masks[j]
                out.append(_Report(f"{a.name}_{int(t.ids[j])}", a.name, t.obs[j].copy(), None if m is None else m.copy(),
                                   float(t.rewards[j]), int(t.spans[j]), bool(t.terminated[j]), bool(t.truncated[j])))
        nxt = None
        if not t.over and t.next >= 0:
            j = t.next
            nxt = f"{self.agents[j].name}_{int(t.ids[j])}"
            if not any(r.id == nxt for r in out):  # acting on its latest report
                m = t.masks[j]
                out.append(_Report(nxt, self.agents[j].name, t.obs[j].copy(), None if m is None else m.copy(), 0.0, 0, False, False))
        return out, nxt, t.over

    def reset(self, seed: int):
        self._t.reset(seed)
        return self._turn()

    def step(self, action: int):
        self._t.step(action)
        return self._turn()

    def close(self) -> None:
        self._t.close()


class _Remote:
    """One copy on an EnvService server (baton.remote.RemoteMultiAgentEnv)."""

    def __init__(self, address: str, name: str, config, key: str | None):
        from .remote import RemoteMultiAgentEnv

        self._e = RemoteMultiAgentEnv(address, env=name, config=config, key=key, gymnasium=True)
        self.agents = []
        for s in self._e.spec:
            act = self._e.action_spaces[s.name]
            if not isinstance(act, gym.spaces.Discrete):
                self._e.close()
                raise _vector.ConfigError(1, f"agent {s.name}: action space {act}; baton.rllib takes Discrete actions", [])
            obs = _obs_space(self._e.observation_spaces[s.name], s.observation.flat_dim)
            self.agents.append(_Agent(s.name, s.observation.flat_dim, s.mask_len, int(act.n), int(act.start), obs, act))

    def _turn(self, turn) -> tuple[list[_Report], str | None, bool]:
        out = [
            _Report(r.agent_id, r.agent, r.observation, r.mask, r.reward, r.span_ticks, r.terminated, r.truncated)
            for r in turn.reports.values()
        ]
        return out, turn.next, turn.over

    def reset(self, seed: int):
        return self._turn(self._e.reset(seed=seed))

    def step(self, action: int):
        return self._turn(self._e.step(action))

    def close(self) -> None:
        self._e.close()


class BatonMultiAgentEnv(MultiAgentEnv):
    """A registered baton environment as an RLlib ``MultiAgentEnv`` (see the module's
    documentation for the config keys, agent ids, steps and masks).

    >>> env = BatonMultiAgentEnv({"env": "maze", "action_masking": True})  # doctest: +SKIP
    """

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        # Each env runner (worker_index) and sub-env (vector_index) draws its own seeds.
        # An env runner made outside an algorithm has them None.
        self._where = (int(getattr(config, "worker_index", 0) or 0), int(getattr(config, "vector_index", 0) or 0))
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"config is a {type(config).__name__}; want a dict of the config keys (or RLlib's EnvContext)")
        config = dict(config or {})
        unknown = sorted(set(config) - _KEYS)
        if unknown:
            raise _vector.ConfigError(1, f"unknown config keys {unknown} (want some of {sorted(_KEYS)})", [])
        self.env_name = config.get("env", "maze")
        _core._name(self.env_name, 'config["env"]')
        _core._config(config.get("config"), 'config["config"]')
        self.masking = bool(config.get("action_masking", False))
        self.invalid_action = config.get("invalid_action", "raise")
        if self.invalid_action not in _INVALID:
            raise _vector.ConfigError(1, f"invalid_action {self.invalid_action!r}; want one of {_INVALID}", [])
        self.invalid_reward = float(config.get("invalid_reward", 0.0))
        self.ids_per_agent = config.get("ids_per_agent", 64)
        if isinstance(self.ids_per_agent, bool) or not isinstance(self.ids_per_agent, int) or self.ids_per_agent < 1:
            raise _vector.ConfigError(1, f"ids_per_agent {self.ids_per_agent!r}; want an integer >= 1", [])
        self.agent_ids = config.get("agent_ids", "invocation")
        if self.agent_ids not in _ID_FORMS:
            raise _vector.ConfigError(1, f"agent_ids {self.agent_ids!r}; want one of {_ID_FORMS}", [])
        self._named = self.agent_ids == "name"
        seed = _core._seed(config.get("seed"), 'config["seed"]')
        self._rng = np.random.default_rng(None if seed is None else [int(seed), *self._where])
        address, library = config.get("address"), config.get("library")
        if library is not None and not isinstance(library, (str, os.PathLike)):
            raise TypeError(f'config["library"] is {library!r:.60} ({type(library).__name__}); want the path of a built library')
        if address:
            if library is not None:
                raise _vector.ConfigError(1, 'config["library"]: a remote environment is its server\'s (config["address"])', [])
            self._e = _Remote(str(address), self.env_name, config.get("config"), config.get("key"))
        else:
            self._e = _Local(self.env_name, config.get("config"), library)
        self._by_name = {a.name: a for a in self._e.agents}
        self._top = self._e.agents[0].name
        if self._named:
            self._name_of = {a.name: a.name for a in self._e.agents}
        else:
            self._name_of = {f"{a.name}_{k}": a.name for a in self._e.agents for k in range(self.ids_per_agent)}
        self.possible_agents = list(self._name_of)
        spaces = {a.name: self._space(a) for a in self._e.agents}
        self.observation_spaces = {i: spaces[n] for i, n in self._name_of.items()}
        self.action_spaces = {i: self._by_name[n].action_space for i, n in self._name_of.items()}
        self.agents = []
        # RLlib's agent id of the agent acting next; its latest report, by RLlib's agent id;
        # the ids observed in this episode; those observed and not ended (invocation form).
        self._next: str | None = None
        self._last: dict[str, _Report] = {}
        self._observed: set[str] = set()
        self._live: list[str] = []
        # Name form: the invocation id last observed by each name, and how each name's
        # invocation ended (terminated, truncated) since its last observation.
        self._shown: dict[str, str] = {}
        self._ended: dict[str, tuple[bool, bool]] = {}

    def _space(self, a: _Agent) -> gym.Space:
        if self.masking and a.mask_len:
            return gym.spaces.Dict({
                "observations": a.observation_space,
                "action_mask": gym.spaces.Box(0.0, 1.0, (a.mask_len,), np.float32),
            })
        return a.observation_space

    def _obs(self, r: _Report, final: bool = False):
        a = self._by_name[r.name]
        x = r.obs.reshape(a.observation_space.shape).astype(np.float32, copy=True)
        if self.masking and a.mask_len:
            m = np.zeros(a.mask_len, np.float32) if final or r.mask is None else r.mask.astype(np.float32)
            return {"observations": x, "action_mask": m}
        return x

    def _info(self, r: _Report, final: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"agent": r.name, "span_ticks": r.span}
        a = self._by_name[r.name]
        if a.mask_len and not self.masking:
            info["action_mask"] = np.zeros(a.mask_len, np.bool_) if final or r.mask is None else r.mask.astype(np.bool_)
        return info

    def _check_id(self, agent_id: str) -> None:
        if agent_id not in self.observation_spaces:
            raise IdError(1, f"agent id {agent_id} is outside possible_agents: raise ids_per_agent "
                             f"(now {self.ids_per_agent})", [])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = _core._seed(seed)  # Gymnasium's rule: None or an int >= 0
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), *self._where])
            s = int(seed)
        else:
            s = int(self._rng.integers(0, 2**63))
        reports, nxt, over = self._e.reset(s)
        self._last, self._observed, self._live = {}, set(), []
        self._shown, self._ended = {}, {}
        for r in reports:
            self._last[r.name if self._named else r.id] = r
        if over or nxt is None:
            raise _vector.StateError(5, f"{self.env_name}: the episode ended at its reset: no agent acts", [])
        if self._named:
            r = self._last[agent_name(nxt)]
            self._next = r.name
            self._observed.add(r.name)
            self._live = [r.name]
            self.agents = [r.name]
            return {r.name: self._obs(r)}, {r.name: self._shown_info(r)}
        self._check_id(nxt)
        self._next = nxt
        self._observed.add(nxt)
        self._live = [nxt]
        self.agents = [nxt]
        r = self._last[nxt]
        return {nxt: self._obs(r)}, {nxt: self._info(r)}

    def _action(self, action_dict: Mapping[str, Any]) -> int:
        """The acting agent's raw action, checked against its space and mask."""
        aid = self._next
        if aid is None:
            raise _vector.StateError(5, f"{self.env_name}: the episode is over: call reset()", [])
        if not isinstance(action_dict, Mapping):
            raise TypeError(f"action_dict is a {type(action_dict).__name__}; want a dict of agent id to action")
        extra = sorted(set(action_dict) - {aid})
        if aid not in action_dict or extra:
            raise _vector.ActionError(3, f"agent {aid} acts now: want one action, for it alone (got actions for "
                                         f"{sorted(action_dict)})", [])
        return _core._action(action_dict[aid], self.action_spaces[aid], f"agent {aid}")

    def _bad(self, aid: str, v: int) -> str | None:
        a = self._by_name[self._name_of[aid]]
        if not a.start <= v < a.start + a.actions:
            return f"agent {aid}: action {v} outside Discrete({a.actions}, start={a.start})"
        m = self._last[aid].mask
        if m is not None and not m[v - a.start]:
            return f"agent {aid}: action {v} masked (the action mask forbids it)"
        return None

    def step(self, action_dict: Mapping[str, Any]):
        aid = self._next
        v = self._action(action_dict)
        why = self._bad(aid, v)
        if why is not None:
            if self.invalid_action == "raise":
                raise _vector.ActionError(3, why, [])
            return self._invalid(aid)
        reports, nxt, over = self._e.step(v)
        if self._named:
            return self._step_names(reports, nxt, over)
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        ended = []
        for r in reports:
            self._last[r.id] = r
            if r.id not in self._observed:
                continue  # started in this step: observed when it acts
            rewards[r.id] = rewards.get(r.id, 0.0) + r.reward
            if r.terminated or r.truncated:
                obs[r.id], infos[r.id] = self._obs(r, final=True), self._info(r, final=True)
                terms[r.id], truncs[r.id] = r.terminated, r.truncated and not r.terminated
                ended.append(r.id)
        before = list(self._live)
        self._live = [i for i in self._live if i not in ended]
        if over:
            top = next((r for r in reports if r.name == self._top), None)
            success = top is not None and top.terminated
            for i in self._live:  # cut by the episode's end
                r = self._last[i]
                obs[i], infos[i] = self._obs(r, final=True), self._info(r, final=True)
                rewards.setdefault(i, 0.0)
                terms[i], truncs[i] = False, True
            self._live, self._next = [], None
            terms["__all__"], truncs["__all__"] = success, not success
            for i in infos:
                infos[i]["success"] = success
            self.agents = before
            return obs, rewards, terms, truncs, infos
        self._check_id(nxt)
        r = self._last[nxt]
        obs[nxt], infos[nxt] = self._obs(r), self._info(r)
        if nxt not in self._observed:
            self._observed.add(nxt)
            self._live.append(nxt)
        terms[nxt], truncs[nxt] = False, False
        self._next = nxt
        terms["__all__"], truncs["__all__"] = False, False
        self.agents = before + [nxt] if nxt not in before else before
        return obs, rewards, terms, truncs, infos

    def _shown_info(self, r: _Report) -> dict[str, Any]:
        """Name form: the info of an observation of the agent about to act, with its
        invocation's id and the sub-episode boundary it follows, if any."""
        info = self._info(r)
        info["agent_id"] = r.id
        start = self._shown.get(r.name) != r.id
        info["sub_episode_start"] = start
        if start and r.name in self._ended:
            info["previous_terminated"], info["previous_truncated"] = self._ended.pop(r.name)
        self._shown[r.name] = r.id
        return info

    def _step_names(self, reports: list[_Report], nxt: str | None, over: bool):
        """``step`` in the name form: an agent name observes only when it acts next or
        at the end of the episode; what it earns in between (the last reward of an
        invocation) waits in RLlib's episode for its next observation."""
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for r in reports:
            self._last[r.name] = r
            if r.name not in self._observed:
                continue  # first invoked in this step: observed when it acts
            rewards[r.name] = rewards.get(r.name, 0.0) + r.reward
            if r.terminated or r.truncated:
                self._ended[r.name] = (r.terminated, r.truncated and not r.terminated)
        if over:
            top = next((r for r in reports if r.name == self._top), None)
            success = top is not None and top.terminated
            for n in self._live:
                r = self._last[n]
                obs[n], infos[n] = self._obs(r, final=True), self._info(r, final=True)
                infos[n]["agent_id"] = r.id
                rewards.setdefault(n, 0.0)
                # Its last invocation's end, if it ended; else cut by the episode's end.
                terms[n], truncs[n] = self._ended.get(n, (False, True))
                infos[n]["success"] = success
            self.agents = list(self._live)
            self._live, self._next = [], None
            terms["__all__"], truncs["__all__"] = success, not success
            return obs, rewards, terms, truncs, infos
        r = self._last[agent_name(nxt)]
        n = r.name
        obs[n], infos[n] = self._obs(r), self._shown_info(r)
        if n not in self._observed:
            self._observed.add(n)
            self._live.append(n)
        else:
            rewards.setdefault(n, 0.0)
        terms[n], truncs[n] = False, False
        terms["__all__"], truncs["__all__"] = False, False
        self._next = n
        self.agents = list(self._live)
        return obs, rewards, terms, truncs, infos

    def _invalid(self, aid: str):
        """Ends the episode for an invalid action (``invalid_action="terminate"``)."""
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for i in self._live:
            r = self._last[i]
            obs[i], infos[i] = self._obs(r, final=True), self._info(r, final=True)
            rewards[i] = self.invalid_reward if i == aid else 0.0
            terms[i], truncs[i] = i == aid, i != aid
            infos[i]["success"] = False
        infos[aid]["invalid_action"] = True
        self.agents = list(self._live)
        self._live, self._next = [], None
        terms["__all__"], truncs["__all__"] = True, False
        return obs, rewards, terms, truncs, infos

    def get_observation_space(self, agent_id: str) -> gym.Space:
        return self.observation_spaces[agent_id]

    def get_action_space(self, agent_id: str) -> gym.Space:
        return self.action_spaces[agent_id]

    def close(self) -> None:
        self._e.close()


def _runner_class():
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner as Base
    from ray.rllib.utils.metrics import (
        NUM_AGENT_STEPS_SAMPLED,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_EPISODES,
        NUM_EPISODES_LIFETIME,
        NUM_MODULE_STEPS_SAMPLED,
        NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    )

    class MultiAgentEnvRunner(Base):
        """RLlib's ``MultiAgentEnvRunner`` that numpy-izes each episode it returns once,
        at the end of ``sample``, instead of every finished episode of the call again at
        every env step (RLlib's runner, with ``episodes_to_numpy`` True, its default):
        the episodes it returns are the same, and a ``sample`` call of many short
        episodes costs steps, not steps times episodes. Its torch RLModules stay in
        eval mode, where RLlib's forward passes switch each module to eval mode and
        back to training mode at every call (a walk over every submodule, twice,
        as long as a small MLP's forward pass; paid once per module per env step, so
        twice where two agents act): the actions are the same. Where its connector
        pipelines are RLlib's default ones and nothing else, its modules stateless
        torch RLModules and its actions Discrete, it replaces the pipelines by a direct
        pass (the env-to-module batch built in one loop over the step's observations,
        actions sampled from each module's distribution and handed to the agents in
        one loop; ``direct_connectors = False`` on a subclass keeps RLlib's): the
        episodes are the same, the connectors' timers are not logged. For
        ``config.env_runners(env_runner_cls=baton.rllib.MultiAgentEnvRunner)``; any
        multi-agent environment may use it.
        """

        # Whether RLlib's default connector pipelines are replaced by their direct
        # equivalent where that is safe (see _direct).
        direct_connectors = True

        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self._to_numpy_once = self.episodes_to_numpy
            self.episodes_to_numpy = False
            # Agent and module steps sampled in this sample call, logged at its end.
            self._agent_steps: dict[Any, int] | None = None
            self._module_steps: dict[Any, int] = {}

        def sample(self, *args: Any, **kwargs: Any):
            _eval_once(self.module)
            if self.direct_connectors:
                _direct(self)
            self._agent_steps, self._module_steps = {}, {}
            try:
                episodes = super().sample(*args, **kwargs)
            finally:
                self._log_steps()
            if self._to_numpy_once:
                for e in episodes:
                    e.to_numpy()  # as RLlib's runner does (is_numpy fails on an episode of no agent)
            return episodes

        def _increase_sampled_metrics(self, num_steps, next_obs, episode):
            """RLlib's, with each agent's and module's step counts summed over the
            sample call and logged once at its end (the same sums) rather than four
            metrics calls per agent and env step."""
            agents = self._agent_steps
            if agents is None:
                return super()._increase_sampled_metrics(num_steps, next_obs, episode)
            m = self.metrics
            m.log_value(NUM_ENV_STEPS_SAMPLED, num_steps, reduce="sum")
            m.log_value(NUM_ENV_STEPS_SAMPLED_LIFETIME, num_steps, reduce="lifetime_sum", with_throughput=True)
            if episode.is_done:
                m.log_value(NUM_EPISODES, 1, reduce="sum")
                m.log_value(NUM_EPISODES_LIFETIME, 1, reduce="lifetime_sum")
            modules = self._module_steps
            for aid in next_obs:
                agents[aid] = agents.get(aid, 0) + 1
                mid = episode.module_for(aid)
                modules[mid] = modules.get(mid, 0) + 1
            return num_steps

        def _log_steps(self) -> None:
            m = self.metrics
            for aid, n in (self._agent_steps or {}).items():
                m.log_value((NUM_AGENT_STEPS_SAMPLED, str(aid)), n, reduce="sum")
                m.log_value((NUM_AGENT_STEPS_SAMPLED_LIFETIME, str(aid)), n, reduce="lifetime_sum")
            for mid, n in self._module_steps.items():
                m.log_value((NUM_MODULE_STEPS_SAMPLED, mid), n, reduce="sum")
                m.log_value((NUM_MODULE_STEPS_SAMPLED_LIFETIME, mid), n, reduce="lifetime_sum")
            self._agent_steps, self._module_steps = None, {}

    MultiAgentEnvRunner.__module__ = __name__
    MultiAgentEnvRunner.__qualname__ = "MultiAgentEnvRunner"
    return MultiAgentEnvRunner


_ENV_TO_MODULE = ("AddObservationsFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad", "AddStatesFromEpisodesToBatch",
                  "AgentToModuleMapping", "BatchIndividualItems", "NumpyToTensor")
_MODULE_TO_ENV = ("GetActions", "TensorToNumpy", "UnBatchToIndividualItems", "ModuleToAgentUnmapping",
                  "RemoveSingleTsTimeRankFromBatch", "NormalizeAndClipActions", "ListifyDataForVectorEnv")


def _direct(runner: Any) -> None:
    """Replaces an env runner's connector pipelines by ``_DirectEnvToModule`` and
    ``_DirectModuleToEnv`` when they are RLlib's default ones and nothing else
    (no connector of the user's), every module is a stateless torch RLModule and
    every action space is Discrete: they compute the same batches and actions with
    one pass over the episodes a step instead of a pass per connector piece. Else
    it leaves the runner as it is."""
    if getattr(runner, "_baton_direct", None) is not None:
        return
    runner._baton_direct = False
    e2m, m2e, module = runner._env_to_module, runner._module_to_env, runner.module
    if module is None or not hasattr(e2m, "connectors") or not hasattr(m2e, "connectors"):
        return
    if (tuple(type(c).__name__ for c in e2m.connectors) != _ENV_TO_MODULE
            or tuple(type(c).__name__ for c in m2e.connectors) != _MODULE_TO_ENV):
        return
    try:
        import torch
        from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    except ImportError:
        return
    for m in module.values():
        if not isinstance(m, TorchRLModule) or m.is_stateful() or not isinstance(m.action_space, gym.spaces.Discrete):
            return
    spaces = getattr(m2e, "action_space", None)
    spaces = spaces.values() if isinstance(spaces, gym.spaces.Dict) else [spaces]
    if any(not isinstance(s, gym.spaces.Discrete) for s in spaces):
        return
    runner._env_to_module = _DirectEnvToModule(e2m, torch)
    runner._module_to_env = _DirectModuleToEnv(m2e)
    runner._baton_direct = True


class _DirectEnvToModule:
    """RLlib's default env-to-module pipeline for stateless torch modules in one pass:
    the last observation of each agent about to act, episode by episode, batched by
    module (modules in the order they first appear, rows in the order of the
    episodes), as torch tensors; the rows' (episode index, agent id) for
    ``_DirectModuleToEnv``. Like the default pieces, it writes nothing into the
    episodes."""

    def __init__(self, pipeline: Any, torch: Any):
        self._p = pipeline
        self._torch = torch

    def __getattr__(self, name: str):
        return getattr(self._p, name)

    def __call__(self, *, episodes: list, shared_data: dict, batch: dict | None = None, metrics: Any = None,
                 **kwargs: Any):
        batch = {} if batch is None else batch
        if metrics is None:  # RLlib's pass over finished episodes: its batch is dropped
            return batch
        rows: dict[Any, list] = {}
        obs: dict[Any, list] = {}
        last = kwargs.get("obs")
        if last is None or len(last) != len(episodes):
            last = [e.get_observations(-1) if e.agent_episodes else {} for e in episodes]
        for k, e in enumerate(episodes):
            # The agents that observed in the env step just taken, as RLlib's
            # get_agents_that_stepped (the same set, iterated in the same order), less
            # those done (get_agents_to_act); an episode made after one that ended
            # holds no agent yet.
            for aid in set(last[k].keys()):
                sa = e.agent_episodes.get(aid)
                if sa is None or sa.is_done or not len(sa.observations):
                    continue
                mid = sa.module_id
                if mid not in rows:
                    rows[mid], obs[mid] = [], []
                rows[mid].append((k, aid))
                obs[mid].append(sa.get_observations(-1))
        t = self._torch
        for mid, xs in obs.items():
            x0 = xs[0]
            if isinstance(x0, dict):
                batch[mid] = {"obs": {c: t.from_numpy(np.stack([x[c] for x in xs])) for c in x0}}
            else:
                batch[mid] = {"obs": t.from_numpy(np.stack(xs))}
        shared_data["baton_rows"] = rows
        return batch


class _DirectModuleToEnv:
    """RLlib's default module-to-env pipeline for stateless torch modules with
    Discrete actions in one pass: each module's actions sampled from its action
    distribution (as ``GetActions``), its outputs as numpy, and each row's items
    handed to its episode's agent (``{column: [{agent id: item}] per episode}``)."""

    def __init__(self, pipeline: Any):
        self._p = pipeline

    def __getattr__(self, name: str):
        return getattr(self._p, name)

    def __call__(self, *, rl_module: Any, batch: dict, episodes: list, explore: bool, shared_data: dict,
                 **kwargs: Any):
        rows = shared_data["baton_rows"]
        out: dict[str, list] = {}
        for mid, data in batch.copy().items():
            if "actions" not in data and "action_dist_inputs" in data:
                m = rl_module[mid]
                cls = m.get_exploration_action_dist_cls() if explore else m.get_inference_action_dist_cls()
                dist = cls.from_logits(data["action_dist_inputs"])
                if not explore:
                    dist = dist.to_deterministic()
                actions = dist.sample()
                data["actions"] = actions
                if "action_logp" not in data:
                    data["action_logp"] = dist.logp(actions)
            keys = rows[mid]
            for col, v in data.items():
                a = v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)
                per = out.get(col)
                if per is None:
                    per = out[col] = [{} for _ in episodes]
                for i, (k, aid) in enumerate(keys):
                    per[k][aid] = a[i]
        if "actions" in out:
            out["actions_for_env"] = [dict(d) for d in out["actions"]]
        return out


def _eval_once(module: Any) -> None:
    """Puts each torch RLModule of ``module`` (a MultiRLModule, or None) in eval mode
    and has its ``forward_exploration`` and ``forward_inference`` keep it there,
    rather than switch it to eval mode and back at every call (``TorchRLModule``'s
    own): what an env runner's forward passes compute is the same. Modules that
    override those methods are left as they are."""
    if module is None:
        return
    try:
        from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    except ImportError:  # torch not installed: no torch modules
        return
    subs = module.values() if hasattr(module, "values") else [module]
    for m in subs:
        if not isinstance(m, TorchRLModule) or getattr(m, "_baton_eval", False):
            continue
        cls = type(m)
        if (cls.forward_exploration is not TorchRLModule.forward_exploration
                or cls.forward_inference is not TorchRLModule.forward_inference):
            continue
        m.eval()
        m.forward_exploration = _in_eval(m, m._forward_exploration)
        m.forward_inference = _in_eval(m, m._forward_inference)
        m._baton_eval = True


def _in_eval(m: Any, forward: Any):
    def call(batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if m.training:  # someone switched it back (a learner sharing the module)
            m.eval()
        return forward(batch, **kwargs)

    return call


def __getattr__(name: str):
    # RLlib's env runner module imports much of RLlib: made at its first use.
    if name == "MultiAgentEnvRunner":
        cls = _runner_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make(config: Mapping[str, Any] | None = None) -> BatonMultiAgentEnv:
    """The env creator that ``register`` registers: ``BatonMultiAgentEnv(config)``."""
    return BatonMultiAgentEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Registers ``BatonMultiAgentEnv`` with ``ray.tune.register_env`` as ``name``
    (default "baton") and returns the name, for ``config.environment(name,
    env_config={...})``. Env runners are Ray workers: the driver's registration
    reaches them through Ray's function registry.

    >>> baton.rllib.register()  # doctest: +SKIP
    'baton'
    """
    from ray.tune.registry import register_env

    register_env(name, make)
    return name
