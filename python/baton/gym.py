"""Gymnasium adapters: a baton environment, or one agent of a hierarchical one, as a
``gymnasium.Env`` and as a ``gymnasium.vector.VectorEnv``, both on the fast lane
(``baton.vector``): Go steps the environment and writes into numpy arrays.

    import baton

    env = baton.make("cartpole")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

    # One agent of a hierarchy, the others driven by the registry's named policies
    # (run in Go) or Python callables (obs, mask) -> action.
    env = baton.make("maze", agent="strategy", policies={"motion": "forward"})
    envs = baton.make_vec("maze", 64, agent="motion", policies={"strategy": "random"})

Gymnasium ids, registered when ``baton`` is imported with gymnasium installed (no Go is
loaded until an environment is made): ``baton/CartPole-v1``, ``baton/Maze-strategy-v0``,
``baton/Maze-motion-v0``, ``baton/Webtest-strategy-v0``; ``gymnasium.make(id, **kw)``
passes ``kw`` (``policies``, ``config``, ...) to ``BatonEnv``, and
``gymnasium.make_vec(id, n, vectorization_mode="vector_entry_point")`` makes a
``BatonVectorEnv``.

Environments of one's own. ``library=`` (every function and class here takes it)
names the fast lane's library that registers ``env``, built from another Go module
(``baton.build(module_dir)``, see ``baton.vector``); ``register_gymnasium(library)``
registers ``baton/<env>-<agent>-v0`` for every agent of every environment it holds:

    lib = baton.build("~/keydoor")
    env = baton.make("keydoor", agent="explorer", library=lib)
    baton.register_gymnasium(lib)
    env = gymnasium.make("baton/keydoor-explorer-v0")

One agent of a hierarchy. A step lasts until the agent acts again or its
sub-episode ends (Go's env.View): the other agents act in between. The reward is what
the agent was reported in between: for a strategy agent that hands control to a
motion agent, the reward of its whole decision, and ``info["span_ticks"]`` says how
many environment ticks the decision took, so that an SMDP learner discounts by
``gamma ** span_ticks``. Each sub-episode of the agent is one episode
(``motion_0``, ``motion_1``, ... for the maze's motion agent): ``reset()`` after one
ended goes on with the underlying episode when it can, while ``reset(seed=s)`` always
starts a new underlying episode from ``s``, so that seeded episodes depend on the
seed alone.

Masks. ``info["action_mask"]`` (bool, one per action, for agents with a mask) says
which actions are valid; at the end of an episode it is all False. An action that the
mask forbids raises ``baton.vector.ActionError`` and changes nothing (``invalid_action=
"raise"``, the default), or, with ``invalid_action="terminate"``, ends the episode
with ``invalid_reward`` and ``info["invalid_action"]`` True (for learners and
checkers that sample actions without masks).

Vectors. ``make_vec`` gives Gymnasium's three auto-reset modes (``autoreset_mode``:
NEXT_STEP, the default as Gymnasium's, SAME_STEP, DISABLED), each stepping as
Gymnasium's own vector of the same mode does, and returns arrays the caller owns
(see ``BatonVectorEnv``); ``baton.vector`` keeps the fast lane's zero-copy arrays.

Rendering. ``render_mode="rgb_array"`` draws frames in Go from the environment's own
picture (``render()``: an [H, W, 3] uint8 array, which ``gymnasium.wrappers.RecordVideo``
records); ``"human"`` shows them in a pygame window, or raises ``RenderError`` saying
why not (see ``BatonEnv``).

Copies. Every adapter pickles and deep-copies as its arguments (name, agent,
configuration, policies, library, options): made again in the other process.

Seeds. ``reset(seed=s)`` seeds the Go environment (and the named policies of the
other agents) with ``s``; ``reset()`` draws the seed from ``self.np_random``. The same
seeds and actions give the same episodes.

Bad input. A seed is None or an int from 0 to 2**64 - 1 (TypeError, ValueError
otherwise, naming ``seed``); an action is an int, a numpy integer or a 0-d integer
array, and anything else (``0.7``, ``1.0``, ``"1"``) raises ``baton.vector.ActionError``
naming the action and the space; ``env``, ``agent``, ``config`` and ``policies`` of
the wrong type raise TypeError naming them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _render
from . import vector as _vector
from ._lane import core as _core
from ._lane import native as _native
from ._lane.adapters import _check_invalid, _obs_space, _rebuild
from ._render import RenderError
from ._view import PolicyError, ViewVector

__all__ = [
    "ENV_IDS",
    "BatonEnv",
    "BatonVectorEnv",
    "PolicyError",
    "RenderError",
    "make",
    "make_vec",
    "register_envs",
    "register_gymnasium",
    "to_gymnasium",
]

Policy = str | Callable[[np.ndarray, "np.ndarray | None"], Any]

# The Gymnasium ids that register_envs registers, with BatonEnv's arguments.
ENV_IDS: dict[str, dict[str, Any]] = {
    "baton/CartPole-v1": {"env": "cartpole"},
    "baton/Maze-strategy-v0": {"env": "maze", "agent": "strategy"},
    "baton/Maze-motion-v0": {"env": "maze", "agent": "motion"},
    "baton/Webtest-strategy-v0": {"env": "webtest", "agent": "strategy"},
}

# What a step does with a copy of the fast lane's vector (internal/fastlane's Hold):
# step it, leave it as it is, or end its episode where it is (and reset it).
_STEP, _STAY, _END = 0, 1, 2


def register_envs() -> None:
    """Registers ``ENV_IDS`` with Gymnasium (again harmlessly). ``import baton`` calls
    it when gymnasium is installed."""
    for env_id, kw in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="baton.gym:BatonEnv", vector_entry_point="baton.gym:BatonVectorEnv", kwargs=kw)


_NAMESPACE = re.compile(r"^[\w:-]+$")


def register_gymnasium(library: str | os.PathLike | None = None, *, namespace: str = "baton") -> list[str]:
    """Registers a Gymnasium id ``<namespace>/<env>-<agent>-v0`` for every agent of
    every environment that ``library`` registers (the path of a fast-lane library;
    None: ``BATON_LIBRARY``, else baton's own), and returns the ids, sorted. Each id
    makes a ``BatonEnv`` of that agent in that library (the other agents of a
    hierarchy play their default policies, or what ``policies=`` says), and
    ``gymnasium.make_vec(id, n, vectorization_mode="vector_entry_point")`` a
    ``BatonVectorEnv``. Environments the fast lane cannot step are left out. The
    library is asked in a short-lived child process unless this process has loaded
    it already, so that registering loads no Go runtime (the process stays free to
    fork).

    Registering the same library again is harmless; an id already registered for
    another library raises ValueError naming both: pass another ``namespace``. The
    ids ``import baton`` registers (``ENV_IDS``) stay as they are.

    >>> baton.register_gymnasium(baton.build("~/keydoor"))  # doctest: +SKIP
    ['baton/keydoor-explorer-v0', ...]
    >>> env = gymnasium.make("baton/keydoor-explorer-v0")  # doctest: +SKIP
    """
    _check_types("env", None, None, None, library)
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise ValueError(f"namespace is {namespace!r}; want letters, digits, '_', ':' or '-' (Gymnasium's namespaces)")
    path = None if library is None else _native.resolve(library)
    code, out, err = _native.envs(path)
    if code:
        _core._raise(code, err)
    ids = []
    for e in json.loads(out)["envs"]:
        if e.get("error"):
            continue
        for a in e["agents"]:
            env_id = f"{namespace}/{e['name']}-{a['name']}-v0"
            kw = {"env": e["name"], "agent": a["name"], "library": path}
            old = gym.registry.get(env_id)
            if old is not None:
                if old.kwargs != kw:
                    theirs = old.kwargs.get("library") or "the default library"
                    raise ValueError(f"{env_id} is registered already, for {theirs}, not {path or 'the default library'}: "
                                     "pass another namespace")
            else:
                gym.register(env_id, entry_point="baton.gym:BatonEnv", vector_entry_point="baton.gym:BatonVectorEnv",
                             kwargs=kw)
            ids.append(env_id)
    return sorted(ids)


def _agent(env: str, agent: str | None, policies: Mapping[str, Policy] | None,
           described: tuple[str, list[_vector.AgentLayout]]) -> _vector.AgentLayout:
    """The layout of the agent presented, checked against the environment's."""
    kind, agents = described
    names = [a.name for a in agents]
    if kind == "single":
        if agent is not None and agent != names[0]:
            raise _vector.ConfigError(1, f"{env} is a single-agent environment of agent {names[0]!r}, not {agent!r}", [])
        if policies:
            raise _vector.ConfigError(1, f"{env} is a single-agent environment: no other agent takes a policy", [])
        return agents[0]
    if agent is None:
        agent = names[0]
    if agent not in names:
        raise _vector.ConfigError(1, f"{env} has no agent {agent!r} (agents: {', '.join(names)})", [])
    return agents[names.index(agent)]


def _check_types(env: Any, agent: Any, config: Any, policies: Any, library: Any = None) -> None:
    """TypeError, naming the argument, for an argument of BatonEnv and
    BatonVectorEnv of the wrong type."""
    _core._name(env, "env")
    if library is not None and not isinstance(library, (str, os.PathLike)):
        raise TypeError(f"library is {library!r:.60} ({type(library).__name__}); want the path of a built library or None")
    _core._config(config)
    if agent is not None and not isinstance(agent, str):
        raise TypeError(f"agent is {agent!r:.60} ({type(agent).__name__}); want an agent's name (a str) or None")
    if policies is not None and not isinstance(policies, Mapping):
        raise TypeError(f"policies is a {type(policies).__name__}; want a dict of agent name to a policy name or callable")


def _open(env: str, agent: str | None, config, policies: Mapping[str, Policy] | None,
          num_envs: int, workers: int, described: tuple[str, list[_vector.AgentLayout]] | None = None,
          max_bytes: int | None = None, library: str | os.PathLike | None = None,
          hold: bool = False) -> _vector.SingleVector:
    """The fast-lane vector of the agent (a SingleVector or a ViewVector) in library,
    within max_bytes (None: BATON_MAX_BYTES, else Go's default), with a hold per copy
    (``vector.hold``) when ``hold``."""
    _check_types(env, agent, config, policies, library)
    cfg = _core._config(config)
    max_bytes = _core._max_bytes(max_bytes)
    if described is None:
        described = _vector.describe(env, config, library=library)
    layout = _agent(env, agent, policies, described)
    kind, agents = described
    if kind == "single":
        return _vector.SingleVector(env, num_envs, agents, seed=None, workers=workers, config=cfg, max_bytes=max_bytes,
                                    library=library, hold=hold)
    return ViewVector(env, num_envs, layout, agent=layout.name, policies=policies, seed=None, workers=workers, config=cfg,
                      max_bytes=max_bytes, library=library, hold=hold)


class BatonEnv(gym.Env):
    """A baton environment, or one agent of a hierarchical one, as a
    ``gymnasium.Env`` on the fast lane (see the module's documentation).

    ``env`` is a registered environment ("cartpole", "maze", "webtest"); ``agent`` the
    agent to present (None: the single agent, or the first agent of a hierarchy);
    ``config`` its JSON configuration (dict or text); ``policies`` maps each other
    agent to a registry policy name or a callable ``(obs, mask) -> action``
    (an agent left out plays its default); ``library`` the path of the fast lane's
    library that registers ``env`` (None: ``BATON_LIBRARY``, else baton's own; see
    ``baton.vector``); ``scramble=SEED`` the scrambled variant of ``env`` (see
    ``baton.vector.make``), as ``gymnasium.make("baton/maze-strategy-v0", scramble=7)``
    passes it.

    Rendering. ``render_mode="rgb_array"``: ``render()`` returns the environment's
    current state drawn as an [H, W, 3] uint8 array, rasterised in Go from the frame
    the environment draws of itself (its SVG picture: the cart-pole as Gymnasium draws
    it, 600 x 400; the maze's grid; else its text, as a terminal shows it), so that
    ``gymnasium.wrappers.RecordVideo`` records it. After the step that ends an
    episode it draws the episode's last state. ``render_mode="human"`` shows the
    frames in a pygame window at each ``reset`` and ``step`` (pygame is optional:
    ``pip install "baton[human]"``); where no display exists (neither ``DISPLAY`` nor
    ``WAYLAND_DISPLAY``) or pygame is missing, making the environment raises
    ``RenderError``, saying why and what to use instead.

    Copies. ``pickle`` and ``copy.deepcopy`` make the environment again from its
    arguments (name, agent, configuration, policies, library and options) in the
    other process or object: a new environment, to be reset, not a snapshot of this
    one's episode (callable policies must be picklable themselves).

    Processes. In a process that has not loaded the fast lane's Go library yet, the
    environment is described (and its named ``policies`` checked) by a short-lived
    child process, and its vector made at the first ``reset()``, so that making one
    leaves the process free to fork: Gymnasium's ``AsyncVectorEnv`` makes an
    environment in the parent, for its spaces, before it forks its workers (see
    ``baton.vector``, Processes).
    """

    metadata: dict[str, Any] = {"render_modes": _render.RENDER_MODES, "render_fps": 30}

    def __init__(self, env: str, agent: str | None = None, config=None, policies: Mapping[str, Policy] | None = None,
                 *, render_mode: str | None = None, invalid_action: str = "raise", invalid_reward: float = 0.0,
                 library: str | os.PathLike | None = None, scramble: int | None = None):
        env, config = _core._scrambled(env, config, scramble)
        _check_invalid(invalid_action)
        _check_types(env, agent, config, policies, library)
        _render.check_mode(render_mode)
        self._made = ((env, agent, config, policies), {"render_mode": render_mode, "invalid_action": invalid_action,
                                                       "invalid_reward": invalid_reward, "library": library})
        self.render_mode = render_mode
        self._window = _render.Window(f"baton {env}", self.metadata["render_fps"]) if render_mode == "human" else None
        self._final = False  # the state shown is the last of an episode, which the copy kept
        self.invalid_action, self.invalid_reward = invalid_action, float(invalid_reward)
        if _native.loaded():
            described = _vector.describe(env, config, library=library)
        else:
            # The named policies are checked by the child too; callables play the
            # agent's default there.
            names = {k: v for k, v in (policies or {}).items() if isinstance(v, str)}
            described = _core._describe_aside(env, config, (agent, json.dumps(names, sort_keys=True)), library)
        layout = _agent(env, agent, policies, described)
        self._args = (env, agent, config, policies, described, library)
        self._v: _vector.SingleVector | None = None
        if _native.loaded():
            self._open_vector()
        self.env_name, self.agent = env, layout.name
        self._mask_len = layout.mask_len
        self.observation_space = _obs_space(layout.observation_space, layout.obs_dim)
        self.action_space = layout.action_space
        self._shape = self.observation_space.shape
        self._view = described[0] != "single"
        self._start = int(getattr(self.action_space, "start", 0))
        self._next: tuple[np.ndarray, dict] | None = None  # the auto-reset copy's start
        self._active = False
        self._act = np.zeros(1, np.int64)

    def _obs(self, row: np.ndarray) -> np.ndarray:
        return row.reshape(self._shape).copy()

    def _info(self, span: int | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {}
        if self._v.masks is not None:
            info["action_mask"] = self._v.masks[0].copy()
        if span is not None:
            info["span_ticks"] = span
        return info

    def __reduce__(self):
        return _rebuild, (type(self), *self._made)

    def _open_vector(self) -> _vector.SingleVector:
        if self._v is None:
            env, agent, config, policies, described, library = self._args
            self._v = _open(env, agent, config, policies, 1, 1, described, library=library, hold=True)
            if self.render_mode is not None:
                self._v._final_frames(True)
        return self._v

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = _core._seed(seed)  # Gymnasium's rule, as TypeError and ValueError
        super().reset(seed=seed)
        self._open_vector()
        if seed is None and self._next is not None:
            obs, info = self._next
        else:
            s = int(seed) if seed is not None else int(self.np_random.integers(0, 2**63))
            if self._view:
                self._v.reset(s, fresh=seed is not None)
            else:
                self._v.reset(s)
            obs, info = self._obs(self._v.obs[0]), self._info(0 if self._view else None)
        self._next, self._active, self._final = None, True, False
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        if not self._active:
            raise gym.error.ResetNeeded("baton: the episode is over (or never started): call reset()")
        a = _core._action(action, self.action_space)
        m = self._v.masks
        if self.invalid_action == "terminate" and m is not None:
            k = a - self._start
            if not (0 <= k < m.shape[1]) or not m[0, k]:
                self._active = False
                info = self._info(0 if self._view else None)
                info["action_mask"] = np.zeros(m.shape[1], np.bool_)
                info["invalid_action"] = True
                # The copy ends its episode where it is, and is reset by the next step
                # or reset (which it awaits, _next).
                self._v.hold[0] = _END
                self._v.step(self._act)
                self._v.hold[0] = _STEP
                self._next = (self._obs(self._v.obs[0]), self._info(0 if self._view else None))
                self._final = True
                if self.render_mode == "human":
                    self.render()
                return self._obs(self._v.final_obs[0]), self.invalid_reward, True, False, info
        self._act[0] = a
        obs, rewards, term, trunc, _ = self._v.step(self._act)
        span = int(self._v.spans[0]) if self._view else None
        t, u = bool(term[0]), bool(trunc[0])
        if t or u:
            self._active = False
            self._next = (self._obs(obs[0]), self._info(0 if self._view else None))
            info = self._info(span)
            if m is not None:
                info["action_mask"] = np.zeros(m.shape[1], np.bool_)
            self._final = True
            if self.render_mode == "human":
                self.render()
            return self._obs(self._v.final_obs[0]), float(rewards[0]), t, u, info
        if self.render_mode == "human":
            self.render()
        return self._obs(obs[0]), float(rewards[0]), t, u, self._info(span)

    def render(self) -> np.ndarray | None:
        """The current state drawn (see Rendering): an [H, W, 3] uint8 array with
        ``render_mode="rgb_array"``; shown in the window, returning None, with
        "human"; None, with a warning as Gymnasium gives, without a render mode.
        Before the first ``reset`` raises ``gymnasium.error.ResetNeeded``.

        >>> env = baton.make("cartpole", render_mode="rgb_array")  # doctest: +SKIP
        >>> env.reset(seed=0); env.render().shape  # doctest: +SKIP
        (400, 600, 3)
        """
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render mode: make the environment with "
                            'render_mode="rgb_array" or "human"')
            return None
        if self._v is None or (not self._active and self._next is None):
            raise gym.error.ResetNeeded("baton: nothing to draw before the first reset(): call reset()")
        frame = self._v.render(0, final=self._final)
        if self._window is not None:
            self._window.show(frame)
            return None
        return frame

    def action_masks(self) -> np.ndarray | None:
        """The current action mask (sb3-contrib's MaskablePPO asks for it), or None."""
        if self._v is None:
            return np.zeros(self._mask_len, np.bool_) if self._mask_len else None
        return None if self._v.masks is None else self._v.masks[0].copy()

    def close(self) -> None:
        """Frees the Go environment and closes the window, if any. A later
        ``reset()`` makes the environment again (as checkers that close it between
        their checks expect)."""
        if self._v is not None:
            self._v.close()
            self._v = None
        self._active, self._next, self._final = False, None, False
        if self._window is not None:
            self._window.close()


class BatonVectorEnv(VectorEnv):
    """``num_envs`` copies of a baton environment, or of one agent of a hierarchical
    one, as a ``gymnasium.vector.VectorEnv`` stepped by Go in one call (the arguments
    are ``BatonEnv``'s, ``library``, ``invalid_action`` and ``invalid_reward``
    included, plus ``workers``, Go threads, and ``max_bytes``, the memory limit, both
    checked by Go as ``baton.vector.make`` says, and ``autoreset_mode``).

    Auto-reset. ``autoreset_mode`` (a ``gymnasium.vector.AutoresetMode``, its value
    or its name: "next_step") is Gymnasium's, and ``metadata["autoreset_mode"]`` says which:

    - ``NEXT_STEP`` (the default, as Gymnasium's): the step that ends a copy's episode
      returns its last observation; the next step resets it (its action is ignored,
      its reward is 0, it is neither terminated nor truncated) and returns the new
      episode's first observation. Gymnasium's ``NormalizeObservation``,
      ``TransformObservation`` and other vector wrappers want this mode.
    - ``SAME_STEP``: a copy whose episode ended is reset in the step that ended it:
      its row of the observations is the new episode's first, ``info["final_obs"]``
      (rows where ``info["_final_obs"]``) its last and ``info["final_info"]`` (where
      ``info["_final_info"]``) the info of its last step, as Gymnasium's same-step
      vectors give them. Every row of every step is a transition: what the fast lane
      does itself (``baton.vector``).
    - ``DISABLED``: nothing is reset by a step; reset the copies whose episodes ended
      with ``reset(options={"reset_mask": mask})`` before the next step (which raises
      ``gymnasium.error.ResetNeeded`` until then).

    In every mode a copy's episodes follow one another as in ``baton.vector``: copy i
    of a vector reset with seed s plays episodes ``EpisodeSeed(s, i, k)``, k = 0, 1,
    ...; a copy reset alone (``reset_mask``) starts its next episode. ``reset_mask``
    takes no ``seed`` (ValueError): seeds are the vector's. For one agent of a
    hierarchy, a copy's next episode is the agent's next sub-episode in the same
    underlying episode when there is one (``reset`` starts new underlying episodes).

    Results. ``step`` and ``reset`` return arrays that the caller owns, writable,
    as a Gymnasium vector does (the fast lane's own arrays, which ``baton.vector``
    returns without a copy, are read-only and overwritten by the next step):
    ``info["action_mask"]`` holds the masks and, for one agent of a hierarchy,
    ``info["span_ticks"]`` each copy's span, each with its ``_`` mask as Gymnasium's
    vectors give infos. At N=1024 cart-poles the adapter steps 0.55 to 0.8 as many
    copies a second as the fast lane's zero-copy arrays do (``python -m baton.bench``,
    on a loaded 2-core machine): the copies take about a microsecond each, the rest is
    the adapter's bookkeeping.

    Invalid actions. ``invalid_action="raise"`` (the default) raises
    ``baton.vector.ActionError`` for an action outside the space or masked, and
    nothing steps; ``"terminate"`` ends the episode of each copy given one, where it
    is, with reward ``invalid_reward``, terminated, and ``info["invalid_action"]``
    True for it, the other copies stepping as usual.

    Rendering. ``render_mode="rgb_array"``: ``render()`` returns a tuple of each
    copy's frame as ``BatonEnv.render`` draws it (the last state of an ended episode
    until the copy is reset). Pickling and copying make the vector again from its
    arguments, as ``BatonEnv``'s do.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"],
                                "render_fps": 30}

    def __init__(self, env: str, num_envs: int = 1, agent: str | None = None, config=None,
                 policies: Mapping[str, Policy] | None = None, *, workers: int = 1, render_mode: str | None = None,
                 max_bytes: int | None = None, library: str | os.PathLike | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, invalid_action: str = "raise",
                 invalid_reward: float = 0.0, scramble: int | None = None):
        env, config = _core._scrambled(env, config, scramble)
        _render.check_mode(render_mode, ["rgb_array"])
        _check_invalid(invalid_action)
        mode = _autoreset(autoreset_mode)
        n, w = _core._count(num_envs, "num_envs", 1), _core._count(workers, "workers", 0)
        self._made = ((env, num_envs, agent, config, policies), {
            "workers": workers, "render_mode": render_mode, "max_bytes": max_bytes, "library": library,
            "autoreset_mode": mode, "invalid_action": invalid_action, "invalid_reward": invalid_reward})
        self._adopt(_open(env, agent, config, policies, n, w, max_bytes=max_bytes, library=library, hold=True), mode,
                    render_mode, invalid_action, invalid_reward)

    @classmethod
    def from_vector(cls, vector: _vector.SingleVector, autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP
                    ) -> BatonVectorEnv:
        """The Gymnasium view of a fast-lane vector already made (``baton.vector.make``
        of a single-agent environment, or a view); closing either closes both. The
        vector's own auto-reset is SAME_STEP; the other modes need a vector made with
        holds (``BatonVectorEnv`` makes its own so).

        >>> env = BatonVectorEnv.from_vector(baton.vector.make("cartpole", num_envs=8))  # doctest: +SKIP
        """
        mode = _autoreset(autoreset_mode)
        if mode != AutoresetMode.SAME_STEP and getattr(vector, "hold", None) is None:
            raise ValueError(f"autoreset_mode {mode}: a vector of baton.vector.make resets in the same step; "
                             "make the environment with baton.make_vec for the other modes")
        self = cls.__new__(cls)
        self._made = None
        self._adopt(vector, mode, None, "raise", 0.0)
        return self

    def __reduce__(self):
        if self._made is None:
            raise TypeError("a BatonVectorEnv made from_vector cannot be pickled or copied: make it with "
                            "baton.make_vec, which pickles as its arguments")
        return _rebuild, (type(self), *self._made)

    def _adopt(self, vector: _vector.SingleVector, mode: AutoresetMode, render_mode: str | None, invalid_action: str,
               invalid_reward: float) -> None:
        self.render_mode = render_mode
        self.vector = vector
        self.num_envs = n = vector.num_envs
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.autoreset_mode = mode
        self.invalid_action, self.invalid_reward = invalid_action, float(invalid_reward)
        self.single_observation_space = _obs_space(self.vector.single_observation_space, self.vector.obs.shape[1])
        self.single_action_space = self.vector.single_action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._shape = (n, *self.single_observation_space.shape)
        self._view = isinstance(self.vector, ViewVector)
        self._start = int(getattr(self.single_action_space, "start", 0))
        # Copies whose episode ended in the last step and that Go has reset already:
        # NEXT_STEP shows their new episode at the next step, DISABLED at their reset.
        self._pending = np.zeros(n, np.bool_)
        self._waiting = False  # whether any copy is pending
        self._actions = np.zeros(n, np.int64)
        self._all = np.ones(n, np.bool_)
        # The copies' holds, None for a vector made without (from_vector).
        self._hold = getattr(vector, "hold", None)
        if render_mode is not None and self._hold is not None:
            vector._final_frames(True)

    def _infos(self, rows: np.ndarray, spans: np.ndarray | None, masks: np.ndarray | None) -> dict[str, Any]:
        """Gymnasium's vector infos of the rows: each key with its ``_`` mask."""
        info: dict[str, Any] = {}
        if masks is not None:
            info["action_mask"], info["_action_mask"] = masks, rows.copy()
        if spans is not None:
            info["span_ticks"], info["_span_ticks"] = spans, rows.copy()
        return info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        v = self.vector
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            return self._reset_some(seed, mask)
        seed = _core._seed(seed)
        if seed is not None:
            self._np_random, _ = gym.utils.seeding.np_random(seed)
        else:
            seed = int(self.np_random.integers(0, 2**63))
        if self._hold is not None:
            self._hold[:] = _STEP
        if self._view:
            v.reset(seed, fresh=True)
        else:
            v.reset(seed)
        self._pending, self._waiting = np.zeros(self.num_envs, np.bool_), False
        masks = None if v.masks is None else v.masks.copy()
        spans = np.zeros(self.num_envs, np.int64) if self._view else None
        return v.obs.reshape(self._shape).copy(), self._infos(self._all, spans, masks)

    def _reset_some(self, seed, mask) -> tuple[np.ndarray, dict]:
        """Resets the copies of ``mask`` alone: those whose episode ended show the
        next episode that Go started already; the others end theirs where they are
        and start their next one (a step in which every other copy stays)."""
        v = self.vector
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] is {mask!r:.60}; want a numpy bool array of shape ({self.num_envs},)")
        if seed is not None:
            raise ValueError("seed with options['reset_mask']: the copies reset alone start their next episodes, "
                             "seeded from the vector's seed; reset(seed=...) without a mask reseeds every copy")
        if self._hold is None:
            raise ValueError("options['reset_mask']: this vector (from_vector) cannot reset copies alone")
        cut = mask & ~self._pending
        if cut.any():
            self._hold[:] = np.where(cut, _END, _STAY)
            self._actions.fill(self._start)  # unread: every copy stays or ends
            try:
                v.step(self._actions)
            finally:
                self._hold[:] = _STEP
        self._pending = self._pending & ~mask
        self._waiting = bool(self._pending.any())
        # The copies still waiting for their reset show their episode's last
        # observation; the others their current one.
        obs = v.obs.reshape(self._shape).copy()
        obs[self._pending] = v.final_obs.reshape(self._shape)[self._pending]
        masks = None if v.masks is None else v.masks.copy()
        if masks is not None:
            masks[~mask] = False  # as Gymnasium's: the rows of the copies reset only
        spans = np.zeros(self.num_envs, np.int64) if self._view else None
        return obs, self._infos(mask.copy(), spans, masks)

    def step(self, actions):
        v, mode = self.vector, self.autoreset_mode
        pending, hold = self._pending, self._hold
        waiting = self._waiting  # whether any copy is pending
        if waiting and mode == AutoresetMode.DISABLED:
            raise gym.error.ResetNeeded(
                f"baton: the episodes of copies {np.flatnonzero(pending).tolist()[:16]} ended: reset them with "
                "reset(options={'reset_mask': mask}) before the next step (autoreset_mode DISABLED)")
        stay = waiting and mode == AutoresetMode.NEXT_STEP
        held = False
        if stay:
            np.copyto(hold, pending)  # _STAY (1) where pending, else _STEP (0)
            held = True
        bad = None
        if self.invalid_action == "terminate":
            bad = self._refused(actions, pending if stay else None)
            if np.count_nonzero(bad):
                hold[bad] = _END
                held = True
            else:
                bad = None
        try:
            obs, rewards, term, trunc, _ = v.step(actions)
        finally:
            if held:
                hold.fill(_STEP)
        rewards, term, trunc = rewards.copy(), term.copy(), trunc.copy()
        if bad is not None:
            rewards[bad], term[bad], trunc[bad] = self.invalid_reward, True, False
        done = term | trunc
        ended = np.count_nonzero(done) > 0
        shape = self._shape
        spans = v.spans.copy() if self._view else None
        masks = None if v.masks is None else v.masks.copy()
        info: dict[str, Any]
        if mode == AutoresetMode.SAME_STEP:
            # The ended rows show their new episode; their last step is in final_*.
            shown = obs.reshape(shape).copy()
            if ended and spans is not None:
                last, spans = spans, np.where(done, 0, spans)
            info = self._infos(self._all, spans, masks)
            if ended:
                fin = self._infos(done, None if spans is None else np.where(done, last, 0),
                                  None if masks is None else np.zeros_like(masks))
                if bad is not None:
                    fin["invalid_action"], fin["_invalid_action"] = bad, bad.copy()
                info["final_obs"], info["_final_obs"] = v.final_obs.reshape(shape).copy(), done
                info["final_info"], info["_final_info"] = fin, done.copy()
            self._waiting = False
        else:
            # The ended rows show their last observation; NEXT_STEP shows their new
            # episode at the next step (stay), DISABLED at their reset.
            shown = obs.reshape(shape).copy()
            if ended:
                col = done.reshape(-1, *([1] * (len(shape) - 1)))
                np.copyto(shown, v.final_obs.reshape(shape), where=col)
                if masks is not None:
                    np.copyto(masks, False, where=done[:, None])
            info = self._infos(self._all, spans, masks)
            if bad is not None:
                info["invalid_action"], info["_invalid_action"] = bad, bad.copy()
            self._pending, self._waiting = done, ended
        return shown, rewards, term, trunc, info

    def _refused(self, actions, stay: np.ndarray | None) -> np.ndarray:
        """Which copies (but those that stay) are given an action outside the space or
        masked."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            return np.zeros(self.num_envs, np.bool_)  # the vector's own checks say what is wrong
        k = a.astype(np.int64) - self._start
        m = self.vector.masks
        n = int(self.single_action_space.n)
        bad = (k < 0) | (k >= n)
        if m is not None:
            ok = ~bad
            bad[ok] = ~m[np.flatnonzero(ok), k[ok]]
        return bad if stay is None else bad & ~stay

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Each copy's frame (see Rendering), or None, with a warning, without a
        render mode."""
        if self.render_mode is None:
            gym.logger.warn('render() was called without a render mode: make the vector with render_mode="rgb_array"')
            return None
        final = self._pending if self.autoreset_mode != AutoresetMode.SAME_STEP else np.zeros(self.num_envs, np.bool_)
        return tuple(self.vector.render(i, final=bool(final[i])) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        v = getattr(self, "vector", None)  # None when __init__ raised
        if v is not None:
            v.close()


def _autoreset(mode: AutoresetMode | str) -> AutoresetMode:
    """The AutoresetMode of ``mode``: the enum, its value ("NextStep") or its name
    in any case ("next_step"); ValueError otherwise."""
    if isinstance(mode, str):
        for m in AutoresetMode:
            if mode == m.value or mode.upper() == m.name:
                return m
    elif isinstance(mode, AutoresetMode):
        return mode
    raise ValueError(f"autoreset_mode {mode!r}; want a gymnasium.vector.AutoresetMode, its value or its name "
                     f"({', '.join(m.name for m in AutoresetMode)})")


def to_gymnasium(vector: _vector.SingleVector) -> BatonVectorEnv:
    """A fast-lane vector of a single-agent environment (``baton.vector.make``, in
    process or remote) as a ``gymnasium.vector.VectorEnv`` (same-step auto-reset), for
    Gymnasium's vector wrappers; closing either closes both. ``vector.to_gymnasium()``
    calls it.

    >>> env = baton.gym.to_gymnasium(baton.vector.make("cartpole", num_envs=8))  # doctest: +SKIP
    >>> env = gymnasium.wrappers.vector.RecordEpisodeStatistics(env)  # doctest: +SKIP
    """
    return BatonVectorEnv.from_vector(vector)


def make(env: str, agent: str | None = None, config=None, policies: Mapping[str, Policy] | None = None, **kw) -> BatonEnv:
    """A ``gymnasium.Env`` of ``env``, or of its agent ``agent`` with the others driven
    by ``policies`` (see ``BatonEnv``; ``kw`` are its keyword options: ``library``,
    the path of the library that registers ``env``, ``invalid_action``,
    ``render_mode``, ``scramble``, ...).

    >>> env = baton.make("maze", agent="strategy", policies={"motion": "forward"})  # doctest: +SKIP
    >>> env = baton.make("keydoor", library=baton.build("~/keydoor"))  # doctest: +SKIP
    >>> env = baton.make("maze", agent="strategy", scramble=7)  # doctest: +SKIP
    """
    return BatonEnv(env, agent, config, policies, **kw)


def make_vec(env: str, num_envs: int, agent: str | None = None, config=None,
             policies: Mapping[str, Policy] | None = None, *, workers: int = 1, max_bytes: int | None = None,
             **kw) -> BatonVectorEnv:
    """A ``gymnasium.vector.VectorEnv`` of ``num_envs`` copies (see ``BatonVectorEnv``;
    ``library``, ``invalid_action``, ``render_mode`` and ``scramble`` as ``make``'s,
    ``autoreset_mode`` NEXT_STEP by default, as Gymnasium's), within the fast lane's
    limits (``workers`` and ``max_bytes``, as ``baton.vector.make`` checks them:
    ``baton.vector.LimitError``).

    >>> envs = baton.make_vec("cartpole", 64, workers=2)  # doctest: +SKIP
    >>> envs = baton.make_vec("cartpole", 64, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)  # doctest: +SKIP
    """
    return BatonVectorEnv(env, num_envs, agent, config, policies, workers=workers, max_bytes=max_bytes, **kw)
