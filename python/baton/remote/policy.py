"""A Python function as an agent's policy: numpy observation in, raw action out."""

from __future__ import annotations

import inspect
import threading
from typing import Any, NamedTuple
from collections.abc import Callable

import numpy as np

from .errors import ConfigError
from .specs import AgentSpec, agent_spec

__all__ = ["ActContext", "Policy"]


class ActContext(NamedTuple):
    """Where an observation comes from, as a trial tells a served agent (every field
    may be empty): the trial's id, the episode (from 0), the environment tick and the
    acting agent's id ("motion_3")."""

    trial: str = ""
    episode: int = 0
    tick: int = 0
    agent_id: str = ""


def _convention(fn: Callable) -> tuple:
    """How fn takes the mask and the context: ("positional" | "keyword" | "none",
    pass_context). Read once from its signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins and C callables
        return "positional", False
    P = inspect.Parameter
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind is P.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind is P.VAR_KEYWORD for p in params)
    context = var_kw or any(p.name == "context" and p.kind is not P.POSITIONAL_ONLY for p in params)
    if (len(positional) >= 2 and positional[1].name != "context") or var_pos:
        mask = "positional"
    elif ("mask" in sig.parameters and sig.parameters["mask"].kind is P.KEYWORD_ONLY) or var_kw:
        mask = "keyword"
    else:
        mask = "none"
    return mask, context


class Policy:
    """An agent's policy: a function with the agent's spec (name, spaces, mask length).

    ``fn`` is called with the agent's flat observation, a float32 numpy array of the
    observation space's flat dimension, and returns the raw action: an int (or numpy
    integer) for a Discrete action space, a sequence or array of len(nvec) ints for
    MultiDiscrete, of 0s and 1s for MultiBinary, of floats for Box. The signature
    decides what else it gets, read once here:

    - ``fn(obs)``: the observation only;
    - ``fn(obs, mask)``: also the action mask, a bool array with one entry per action
      (entry i allows the action start+i), or None when the caller sent none;
    - a parameter named ``context`` (or ``**kwargs``): also an ActContext.

    ``batch_fn``, optional, acts for N observations at once (a vector environment's
    copies, ActBatch): ``batch_fn(obs, masks)`` with obs (N, obs_dim) float32 and masks
    (N, mask_len) bool or None, returning N actions (shape (N,) for Discrete, (N, k)
    otherwise). Without it, a batch calls ``fn`` once per row.

    Calls are serialised (one at a time, from any thread) unless ``concurrent`` says fn
    and batch_fn are safe to call from several threads at once.
    """

    def __init__(
        self,
        fn: Callable,
        spaces,
        *,
        name: str | None = None,
        batch_fn: Callable | None = None,
        concurrent: bool = False,
    ):
        if not callable(fn):
            raise ConfigError(f"policy: fn is a {type(fn).__name__}, not callable")
        if batch_fn is not None and not callable(batch_fn):
            raise ConfigError(f"policy: batch_fn is a {type(batch_fn).__name__}, not callable")
        self.spec: AgentSpec = agent_spec(spaces, name)
        self.fn = fn
        self.batch_fn = batch_fn
        self.concurrent = bool(concurrent)
        self._mask, self._context = _convention(fn)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The agent's name."""
        return self.spec.name

    def _call(self, obs: np.ndarray, mask: np.ndarray | None, context: ActContext | None) -> Any:
        kw = {"context": context if context is not None else ActContext()} if self._context else {}
        if self._mask == "positional":
            return self.fn(obs, mask, **kw)
        if self._mask == "keyword":
            return self.fn(obs, mask=mask, **kw)
        return self.fn(obs, **kw)

    def act(self, obs: np.ndarray, mask: np.ndarray | None = None, context: ActContext | None = None) -> Any:
        """Calls fn as its signature asks, serialised unless concurrent; returns what fn
        returns, unchecked."""
        if self.concurrent:
            return self._call(obs, mask, context)
        with self._lock:
            return self._call(obs, mask, context)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray | None) -> Any:
        """Acts for the rows of obs (N, obs_dim): one batch_fn call, or fn per row.
        Returns N actions, unchecked."""
        if self.batch_fn is not None:
            if self.concurrent:
                return self.batch_fn(obs, masks)
            with self._lock:
                return self.batch_fn(obs, masks)
        return [self.act(obs[r], None if masks is None else masks[r]) for r in range(obs.shape[0])]

    def __repr__(self) -> str:
        return f"Policy({self.spec.name!r}, {getattr(self.fn, '__name__', self.fn)!r})"
