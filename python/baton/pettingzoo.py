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

Invalid actions. An action outside the agent's space or forbidden by its mask raises
``baton.vector.ActionError`` and changes nothing (``invalid_action="raise"``, the
default), or, with ``invalid_action="terminate"``, ends the episode: the agent that
acted (each such agent, in a parallel step) is terminated with reward
``invalid_reward`` and ``infos[name]["invalid_action"]`` True, the others truncated,
for samplers and benchmarks that do not read masks (PettingZoo's
``performance_benchmark``, random ``action_space(agent).sample()``). The choices are
``baton.make``'s and ``baton.rllib``'s.

Rendering. ``render_mode="rgb_array"``: ``render()`` returns the environment's
current state drawn as an [H, W, 3] uint8 array, rasterised in Go from the frame the
environment draws of itself (its SVG picture, else its text; see ``baton.gym``);
``"human"`` shows it in a pygame window at each step (see ``baton.gym``:
``RenderError`` where no window can be opened).

Copies. ``pickle`` and ``copy.deepcopy`` make the environment again from its
arguments (name, configuration, library, options) in the other process or object:
a new environment, to be reset (SuperSuit's vector environments pickle theirs).

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

from . import _render
from . import vector as _vector
from ._lane import core as _core
from ._turns import Turns
from ._lane.adapters import _check_invalid, _obs_space, _rebuild

__all__ = ["AECEnv", "ParallelEnv", "env", "parallel_env"]


class _Common:
    """What the AEC and parallel adapters share: the Go turns, spaces, infos, ends."""

    def _setup(self, name: str, config, render_mode: str | None, library: str | os.PathLike | None,
               invalid_action: str, invalid_reward: float) -> None:
        _core._name(name, "name")
        _core._config(config)
        if library is not None and not isinstance(library, (str, os.PathLike)):
            raise TypeError(f"library is {library!r:.60} ({type(library).__name__}); want the path of a built library or None")
        _check_invalid(invalid_action)
        _render.check_mode(render_mode)
        self._made = ((name, config, render_mode), {"library": library, "invalid_action": invalid_action,
                                                    "invalid_reward": invalid_reward})
        self.render_mode = render_mode
        self.invalid_action, self.invalid_reward = invalid_action, float(invalid_reward)
        self._window = _render.Window(f"baton {name}") if render_mode == "human" else None
        self.env_name = name
        self._t = Turns(name, config, library=library)
        self.possible_agents = list(self._t.names)
        self._index = {a: j for j, a in enumerate(self.possible_agents)}
        self.observation_spaces = {a.name: _obs_space(a.observation_space, a.obs_dim) for a in self._t.agents}
        self.action_spaces = {a.name: a.action_space for a in self._t.agents}
        self._rng = np.random.default_rng()
        self._ended: dict[str, tuple[bool, bool]] = {}
        self.metadata = {"render_modes": _render.RENDER_MODES, "name": f"baton_{name}", "is_parallelizable": True,
                         "render_fps": 30}

    def __reduce__(self):
        return _rebuild, (type(self), *self._made)

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> np.ndarray:
        j = self._index[agent]
        return self._t.obs[j].reshape(self.observation_spaces[agent].shape).copy()

    def _go_reset(self, seed: int | None) -> None:
        seed = _core._seed(seed)  # Gymnasium's rule: None or an int >= 0
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

    def render(self) -> np.ndarray | None:
        """The current state drawn (see the module's documentation): an [H, W, 3]
        uint8 array with ``render_mode="rgb_array"``; shown in the window, returning
        None, with "human"; None, with a warning as PettingZoo gives, without a render
        mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render mode: make the environment with "
                                  'render_mode="rgb_array" or "human"')
            return None
        frame = self._t.render(0)
        if self._window is not None:
            self._window.show(frame)
            return None
        return frame

    def _invalid(self, action, agent: str) -> bool:
        """Whether agent's action is outside its space or masked (the action an int)."""
        j = self._index[agent]
        lay, m = self._t.agents[j], self._t.masks[j]
        return not lay.start <= action < lay.start + lay.actions or (m is not None and not m[action - lay.start])

    def _ends(self, refused: set[str]) -> dict[str, tuple[bool, bool]]:
        """The ends of an episode ended by the refused agents' invalid actions:
        they are terminated, the others truncated."""
        return {a: (a in refused, a not in refused) for a in self.possible_agents}

    def close(self) -> None:
        self._t.close()
        if self._window is not None:
            self._window.close()


class AECEnv(_Common, pettingzoo.AECEnv):
    """A baton environment as a PettingZoo AEC environment (see the module's
    documentation). ``env`` names a registered environment, ``config`` its JSON
    configuration (a dict or text), ``render_mode`` None, "rgb_array" or "human",
    ``library`` the path of the fast lane's library that registers it (None:
    ``BATON_LIBRARY``, else baton's own; see ``baton.vector``), ``invalid_action``
    ("raise" or "terminate") and ``invalid_reward`` what an invalid action does, and
    ``scramble=SEED`` the scrambled variant of ``env`` (see ``baton.vector.make``)."""

    def __init__(self, env: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None,
                 invalid_action: str = "raise", invalid_reward: float = 0.0, scramble: int | None = None):
        super().__init__()
        env, config = _core._scrambled(env, config, scramble)
        self._setup(env, config, render_mode, library, invalid_action, invalid_reward)

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
        if self._window is not None:
            self.render()

    def _end(self, ends: dict[str, tuple[bool, bool]] | None = None) -> None:
        for a in self.agents:
            self.terminations[a], self.truncations[a] = ends[a] if ends else self._final(a)
        self._deads_step_first()

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"agent {agent!r} is live: its action cannot be None")
        x = _core._action(action, self.action_spaces[agent], f"agent {agent}")
        self._cumulative_rewards[agent] = 0
        if self.invalid_action == "terminate" and self._invalid(x, agent):
            for a in self.agents:
                self.rewards[a] = self.invalid_reward if a == agent else 0.0
                self.infos[a] = self._info(a)
                if a in self._t.names and self._t.masks[self._index[a]] is not None:
                    self.infos[a]["action_mask"] = np.zeros_like(self.infos[a]["action_mask"])
            self.infos[agent]["invalid_action"] = True
            self._accumulate_rewards()
            self._end(self._ends({agent}))
            return
        self._t.step(x)
        t = self._t
        self._note_ends()
        for a in self.agents:
            self.rewards[a] = float(t.rewards[self._index[a]])
            self.infos[a] = self._info(a)
        if t.over:
            self._accumulate_rewards()
            self._end()
        else:
            self.agent_selection = self.possible_agents[t.next]
            self._accumulate_rewards()
        if self._window is not None:
            self.render()


class ParallelEnv(_Common, pettingzoo.ParallelEnv):
    """A simultaneous-move baton environment as a PettingZoo parallel environment (see
    the module's documentation; the arguments are ``AECEnv``'s)."""

    def __init__(self, env: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None,
                 invalid_action: str = "raise", invalid_reward: float = 0.0, scramble: int | None = None):
        env, config = _core._scrambled(env, config, scramble)
        self._setup(env, config, render_mode, library, invalid_action, invalid_reward)
        self.agents: list[str] = []

    def reset(self, seed: int | None = None, options: dict | None = None):
        self._go_reset(seed)
        self.agents = self.possible_agents[:]
        if self._window is not None:
            self.render()
        return {a: self.observe(a) for a in self.agents}, {a: self._info(a) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        t = self._t
        if not self.agents:
            raise RuntimeError("baton: the episode is over: call reset()")
        live = self.agents
        checked, refused = self._check(actions)
        if refused:
            obs = {a: self.observe(a) for a in live}
            infos = {a: self._info(a) for a in live}
            for a in refused:
                infos[a]["invalid_action"] = True
            rewards = {a: self.invalid_reward if a in refused else 0.0 for a in live}
            ends = self._ends(refused)
            self.agents = []
            return obs, rewards, {a: ends[a][0] for a in live}, {a: ends[a][1] for a in live}, infos
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
        if self._window is not None:
            self.render()
        return obs, rewards, terms, truncs, infos

    def _check(self, actions: dict[str, Any]) -> tuple[dict[str, int], set[str]]:
        """The live agents' actions as ints, and the agents whose actions are invalid
        with ``invalid_action="terminate"``; raises, before anything steps, for a live
        agent without an action or with one that is not an integer, and, with
        "raise", outside its Discrete space or masked: a round is applied whole or not
        at all."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions is a {type(actions).__name__}; want a dict of agent name to action")
        checked, refused = {}, set()
        for a in self.agents:
            if actions.get(a) is None:
                raise KeyError(f"no action for the live agent {a!r}")
            j = self._index[a]
            x = checked[a] = _core._action(actions[a], self.action_spaces[a], f"agent {a}")
            lay, m = self._t.agents[j], self._t.masks[j]
            if self.invalid_action == "terminate":
                if self._invalid(x, a):
                    refused.add(a)
                continue
            if not lay.start <= x < lay.start + lay.actions:
                raise _vector.ActionError(3, f"agent {a}: action {x} outside Discrete({lay.actions}, start={lay.start})", [])
            if m is not None and not m[x - lay.start]:
                raise _vector.ActionError(3, f"agent {a}: action {x} masked (the action mask forbids it)", [])
        return checked, refused


def env(name: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None,
        invalid_action: str = "raise", invalid_reward: float = 0.0, scramble: int | None = None) -> AECEnv:
    """The environment ``name``, registered in ``library`` (see ``AECEnv``), as a
    PettingZoo AEC environment.

    >>> e = baton.pettingzoo.env("maze")  # doctest: +SKIP
    >>> e = baton.pettingzoo.env("maze", invalid_action="terminate", render_mode="rgb_array")  # doctest: +SKIP
    >>> k = baton.pettingzoo.env("keydoor", library=baton.build("~/keydoor"))  # doctest: +SKIP
    """
    return AECEnv(name, config, render_mode, library=library, invalid_action=invalid_action, invalid_reward=invalid_reward,
                  scramble=scramble)


def parallel_env(name: str, config=None, render_mode: str | None = None, *, library: str | os.PathLike | None = None,
                 invalid_action: str = "raise", invalid_reward: float = 0.0, scramble: int | None = None) -> ParallelEnv:
    """The simultaneous-move environment ``name``, registered in ``library``, as a
    PettingZoo parallel environment (see ``AECEnv`` for the options).

    >>> e = baton.pettingzoo.parallel_env("rps", config={"max_cycles": 15})  # doctest: +SKIP
    """
    return ParallelEnv(name, config, render_mode, library=library, invalid_action=invalid_action,
                       invalid_reward=invalid_reward, scramble=scramble)
