"""PettingZoo adapters: a baton environment as a ``pettingzoo.AECEnv`` (turn-taking
and hierarchical environments) or a ``pettingzoo.ParallelEnv`` (simultaneous-move
ones), on the fast lane: Go steps the environment and writes each turn into numpy
arrays (one C call a step).

    import baton.pettingzoo

    env = baton.pettingzoo.env("maze")
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else env.action_space(agent).sample(info["action_mask"])
        env.step(action)

    par = baton.pettingzoo.parallel_env("rps", config={"max_cycles": 15})
    observations, infos = par.reset(seed=0)
    observations, rewards, terminations, truncations, infos = par.step({a: 0 for a in par.agents})

Agents. PettingZoo's agents are fixed names; a hierarchy's agents are invoked many
times an episode, each sub-episode with an id of its own (``motion_0``, ``motion_1``,
...). The PettingZoo agents are the agent NAMES (``possible_agents`` is the
environment's agents, in its order: ``["strategy", "motion"]`` for the maze), all of
them live from ``reset`` to the end of the episode. ``infos[name]`` says which
invocation the name stands for and what happened to it:

    agent_id          the id of the agent's latest sub-episode ("motion_3"; "" before
                      its first)
    sub_episode_start whether its sub-episode started in the last step
    sub_episode_end   whether its sub-episode ended in the last step (the end a
                      learner of that agent must not bootstrap across)
    span_ticks        the environment ticks the reward of the last step took (a
                      parent's decision lasts its child's sub-episode)
    action_mask       for an agent with a mask: int8, 1 for a valid action, as
                      PettingZoo's samplers take it (all 0 while the agent does not act)

``terminations`` and ``truncations`` are set at the end of the episode only: each
agent the last step reports as its own report says (truncated if it says neither),
any other as its latest sub-episode ended (truncated if it never started).
``rewards[name]`` is what the step reported to that name; ``last()`` gives the sum
since the agent last acted, as PettingZoo does. ``observe(name)`` is the name's
latest observation (zeros before its first), a copy.

Parallel steps. ``ParallelEnv.step(actions)`` checks that every live agent has an
action, in its space and allowed by its mask (``KeyError`` or
``baton.vector.ActionError`` otherwise, before anything steps), then applies the
actions of the agents that Go asks for, in turn, until the environment's tick
advances: one round of a simultaneous-move environment (Go's env.Parallel through
env.Sequential, such as "rps").

Seeds. ``reset(seed=s)`` starts the Go episode from ``s``; ``reset()`` draws the
seed from a generator seeded by the last seeded reset. A seed is None or an int from
0 to 2**64 - 1 (TypeError, ValueError otherwise); an action is an int, a numpy integer
or a 0-d integer array (``baton.vector.ActionError`` for ``0.7``, naming the agent and
its space).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import pettingzoo

from . import vector as _vector
from ._turns import Turns
from .gym import _obs_space

__all__ = ["AECEnv", "ParallelEnv", "env", "parallel_env"]


class _Common:
    """What the AEC and parallel adapters share: the Go turns, spaces, infos, ends."""

    def _setup(self, name: str, config, render_mode: str | None, library: str | os.PathLike | None) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: baton environments render nothing (want None)")
        _vector._name(name, "name")
        _vector._config(config)
        if library is not None and not isinstance(library, (str, os.PathLike)):
            raise TypeError(f"library is {library!r:.60} ({type(library).__name__}); want the path of a built library or None")
        self.render_mode = None
        self.env_name = name
        self._t = Turns(name, config, library=library)
        self.possible_agents = list(self._t.names)
        self._index = {a: j for j, a in enumerate(self.possible_agents)}
        self.observation_spaces = {a.name: _obs_space(a.observation_space, a.obs_dim) for a in self._t.agents}
        self.action_spaces = {a.name: a.action_space for a in self._t.agents}
        self._rng = np.random.default_rng()
        self._ended: dict[str, tuple[bool, bool]] = {}
        self.metadata = {"render_modes": [], "name": f"baton_{name}", "is_parallelizable": True}

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> np.ndarray:
        j = self._index[agent]
        return self._t.obs[j].reshape(self.observation_spaces[agent].shape).copy()

    def _go_reset(self, seed: int | None) -> None:
        seed = _vector._seed(seed)  # Gymnasium's rule: None or an int >= 0
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            s = int(seed)
        else:
            s = int(self._rng.integers(0, 2**63))
        self._t.reset(s)
        self._ended = {}

    def _info(self, agent: str) -> dict[str, Any]:
        t, j = self._t, self._index[agent]
        k = int(t.ids[j])
        info: dict[str, Any] = {
            "agent_id": f"{agent}_{k}" if k >= 0 else "",
            "sub_episode_start": bool(t.started[j]),
            "sub_episode_end": bool(t.terminated[j] or t.truncated[j]),
            "span_ticks": int(t.spans[j]),
        }
        m = t.masks[j]
        if m is not None:
            info["action_mask"] = m.astype(np.int8) if t.next == j else np.zeros(m.shape, np.int8)
        return info

    def _note_ends(self) -> None:
        t = self._t
        for j, a in enumerate(self.possible_agents):
            if t.reported[j] and (t.terminated[j] or t.truncated[j]):
                self._ended[a] = (bool(t.terminated[j]), bool(t.truncated[j]))

    def _final(self, agent: str) -> tuple[bool, bool]:
        """The agent's termination and truncation at the end of the episode."""
        t, j = self._t, self._index[agent]
        if t.reported[j]:
            term, trunc = bool(t.terminated[j]), bool(t.truncated[j])
            return (term, trunc) if term or trunc else (False, True)
        return self._ended.get(agent, (False, True))

    def render(self) -> None:
        """Renders nothing: baton environments take render_mode None."""
        return None

    def close(self) -> None:
        self._t.close()


class AECEnv(_Common, pettingzoo.AECEnv):
    """A baton environment as a PettingZoo AEC environment (see the module's
    documentation). ``env`` names a registered environment, ``config`` its JSON
    configuration (a dict or text), ``library`` the path of the fast lane's library
    that registers it (None: ``BATON_LIBRARY``, else baton's own; see
    ``baton.vector``)."""

    def __init__(self, env: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None):
        super().__init__()
        self._setup(env, config, render_mode, library)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._go_reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: self._info(a) for a in self.agents}
        self._skip_agent_selection = None
        if self._t.next >= 0:
            self.agent_selection = self.possible_agents[self._t.next]
        else:  # over at once
            self.agent_selection = self.agents[0]
            self._end()

    def _end(self) -> None:
        for a in self.agents:
            self.terminations[a], self.truncations[a] = self._final(a)
        self._deads_step_first()

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"agent {agent!r} is live: its action cannot be None")
        x = _vector._action(action, self.action_spaces[agent], f"agent {agent}")
        self._cumulative_rewards[agent] = 0
        self._t.step(x)
        t = self._t
        self._note_ends()
        for a in self.agents:
            self.rewards[a] = float(t.rewards[self._index[a]])
            self.infos[a] = self._info(a)
        if t.over:
            self._accumulate_rewards()
            self._end()
            return
        self.agent_selection = self.possible_agents[t.next]
        self._accumulate_rewards()


class ParallelEnv(_Common, pettingzoo.ParallelEnv):
    """A simultaneous-move baton environment as a PettingZoo parallel environment (see
    the module's documentation; the arguments are ``AECEnv``'s)."""

    def __init__(self, env: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None):
        self._setup(env, config, render_mode, library)
        self.agents: list[str] = []

    def reset(self, seed: int | None = None, options: dict | None = None):
        self._go_reset(seed)
        self.agents = self.possible_agents[:]
        return {a: self.observe(a) for a in self.agents}, {a: self._info(a) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        t = self._t
        if not self.agents:
            raise RuntimeError("baton: the episode is over: call reset()")
        live = self.agents
        checked = self._check(actions)
        rewards = dict.fromkeys(live, 0.0)
        tick = t.tick
        while not t.over and t.tick == tick:
            a = self.possible_agents[t.next]
            t.step(checked[a])
            self._note_ends()
            for b in live:
                rewards[b] += float(t.rewards[self._index[b]])
        obs = {a: self.observe(a) for a in live}
        infos = {a: self._info(a) for a in live}
        if t.over:
            ends = {a: self._final(a) for a in live}
        else:
            ends = {a: (bool(t.terminated[self._index[a]]), bool(t.truncated[self._index[a]])) for a in live}
        terms = {a: e[0] for a, e in ends.items()}
        truncs = {a: e[1] for a, e in ends.items()}
        self.agents = [a for a in live if not (terms[a] or truncs[a])]
        return obs, rewards, terms, truncs, infos


    def _check(self, actions: dict[str, Any]) -> dict[str, int]:
        """The live agents' actions as ints; raises, before anything steps, for a live
        agent without an action or with one that is not an integer, outside its
        Discrete space or masked: a round is applied whole or not at all."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions is a {type(actions).__name__}; want a dict of agent name to action")
        checked = {}
        for a in self.agents:
            if actions.get(a) is None:
                raise KeyError(f"no action for the live agent {a!r}")
            j = self._index[a]
            x = checked[a] = _vector._action(actions[a], self.action_spaces[a], f"agent {a}")
            lay, m = self._t.agents[j], self._t.masks[j]
            if not lay.start <= x < lay.start + lay.actions:
                raise _vector.ActionError(3, f"agent {a}: action {x} outside Discrete({lay.actions}, start={lay.start})", [])
            if m is not None and not m[x - lay.start]:
                raise _vector.ActionError(3, f"agent {a}: action {x} masked (the action mask forbids it)", [])
        return checked


def env(name: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None) -> AECEnv:
    """The environment ``name``, registered in ``library`` (see ``AECEnv``), as a
    PettingZoo AEC environment.

    >>> e = baton.pettingzoo.env("maze")  # doctest: +SKIP
    >>> k = baton.pettingzoo.env("keydoor", library=baton.build("~/keydoor"))  # doctest: +SKIP
    """
    return AECEnv(name, config, render_mode, library=library)


def parallel_env(name: str, config=None, render_mode: str | None = None, *,
                 library: str | os.PathLike | None = None) -> ParallelEnv:
    """The simultaneous-move environment ``name``, registered in ``library``, as a
    PettingZoo parallel environment.

    >>> e = baton.pettingzoo.parallel_env("rps", config={"max_cycles": 15})  # doctest: +SKIP
    """
    return ParallelEnv(name, config, render_mode, library=library)
