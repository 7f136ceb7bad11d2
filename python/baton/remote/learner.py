"""Python learners served to Go trials: a model that acts and learns online.

A learner is an object with two methods:

- ``act(obs, mask, context)``: the action for the agent's flat float32 observation (a
  numpy array), its bool action mask (None when the agent has none) and an
  ActContext (trial, episode, tick, agent id): the same call as a served Policy's
  function (see Policy for the signatures accepted: ``act(obs)``, ``act(obs, mask)``,
  a ``context`` parameter);
- ``learn(outcome)``: an Outcome, what came of one of its decisions, as baton's Go
  trials tell a local policy that learns (runners.Learner): a step's reward (and its
  sources), flags, span and next observation; a retroactive reward for a past step;
  the end of an episode.

``serve_learner(learner, spaces, addr, name=...)`` serves it; Go trials that play the
agent through ``baton run ENV --policy AGENT=grpc://ADDR`` send it their feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import numpy as np

from .errors import ConfigError
from .policy import Policy

__all__ = ["EPISODE_END", "RETRO", "STEP", "LearnerPolicy", "Outcome"]

#: The kinds of Outcome.
STEP, RETRO, EPISODE_END = "step", "retro", "episode_end"


@dataclass(frozen=True)
class Outcome:
    """What a learner is told, as Go's runners.Outcome (fields a kind does not set are
    zero or None).

    ``kind`` is STEP (the environment reported the agent id: ``reward``, ``sources``,
    ``terminated``, ``truncated``, ``start``, ``last``, ``span_ticks``, ``obs``,
    ``mask``), RETRO (a reward arrived for a past step of the agent id: ``tick`` and
    ``rewarded_episode`` address that step, ``reward`` and ``sources`` give it,
    ``arrived_tick`` says when it came) or EPISODE_END (the episode ended; ``tick`` is
    its length, ``truncated`` says it was cut at the trial's tick limit; ``agent_id``
    is "").

    ``trial`` is the trial's id, ``episode`` the episode it arrives in (from 0),
    ``agent`` the served agent's name. A STEP with ``start`` opens the agent id's
    sub-episode (the agent has not acted in it yet); one with ``last`` is the id's
    last. ``obs`` and ``mask`` are the agent id's next observation (float32) and
    action mask (bool, None without one), arrays of the learner's own.
    """

    kind: str
    trial: str = ""
    episode: int = 0
    tick: int = 0
    agent: str = ""
    agent_id: str = ""
    reward: float = 0.0
    sources: tuple[tuple[str, float], ...] = ()
    terminated: bool = False
    truncated: bool = False
    start: bool = False
    last: bool = False
    span_ticks: int = 0
    obs: np.ndarray | None = field(default=None, compare=False)
    mask: np.ndarray | None = field(default=None, compare=False)
    rewarded_episode: int = 0
    arrived_tick: int = 0


class LearnerPolicy(Policy):
    """A Policy that also learns: ``learner.act`` acts (called as Policy calls its
    function) and ``learner.learn(outcome)`` takes each Outcome.

    Thread safety: trials and clients stream into one served learner at once, each
    call on a gRPC thread. Unless ``concurrent`` says the learner is safe for that,
    act and learn are serialised by one lock, so the learner never runs twice at once
    and needs no lock of its own. Order: the feedback of a trial's decision reaches
    ``learn`` before that trial's next ``act`` in the episode; an episode's end may
    come after the trial's next episode has begun, so keep per-decision state by
    (trial, episode, agent id).
    """

    def __init__(self, learner: Any, spaces, *, name: str | None = None, concurrent: bool = False):
        act = getattr(learner, "act", None)
        learn = getattr(learner, "learn", None)
        if not callable(act) or not callable(learn):
            raise ConfigError(
                f"learner: {type(learner).__name__} needs act(obs, mask, context) and learn(outcome) methods"
            )
        super().__init__(act, spaces, name=name, concurrent=concurrent)
        self.learner = learner
        self._learn: Callable[[Outcome], Any] = learn

    def learn(self, outcome: Outcome) -> None:
        """Passes outcome to the learner, serialised with act unless concurrent."""
        if self.concurrent:
            self._learn(outcome)
            return
        with self._lock:
            self._learn(outcome)

    def __repr__(self) -> str:
        return f"LearnerPolicy({self.spec.name!r}, {type(self.learner).__name__})"

