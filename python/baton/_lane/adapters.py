"""What the Gymnasium, PettingZoo and RLlib adapters share: the check of
``invalid_action``, how adapters are pickled, and the Box of an agent's observations.
Needs gymnasium (each of those adapters does).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from .core import ConfigError

_INVALID = ("raise", "terminate")


def _check_invalid(invalid_action: str) -> None:
    if invalid_action not in _INVALID:
        raise ValueError(f"invalid_action {invalid_action!r}; want one of {_INVALID}")


def _rebuild(cls, args: tuple, kw: dict):
    """An adapter made again from its arguments: how adapters are pickled and copied."""
    return cls(*args, **kw)


def _obs_space(space, dim: int):
    """The Box of the observations, its infinite bounds made float32's largest values
    (as Gymnasium's own CartPole has them, and its checker wants)."""
    if not isinstance(space, gym.spaces.Box):
        raise ConfigError(1, f"observation space {space}: the Gymnasium adapter takes Box observations", [])
    if int(np.prod(space.shape)) != dim:
        raise ConfigError(1, f"observation space {space} does not hold {dim} floats", [])
    if np.isinf(space.low).any() or np.isinf(space.high).any():
        big = np.finfo(np.float32).max
        low, high = np.nan_to_num(space.low, neginf=-big), np.nan_to_num(space.high, posinf=big)
        space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
    return space
