"""SingleVector as a gymnasium.vector.VectorEnv (imported only when asked for)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space


class GymVector(VectorEnv):
    """A ``SingleVector`` as a Gymnasium vector environment, with same-step
    auto-reset (``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``, whose
    ``final_obs`` and ``_final_obs`` infos the fast lane gives), so that Gymnasium's
    vector wrappers take it. Its arrays are the fast lane's: read-only, overwritten by
    the next step. ``close`` closes the fast-lane vector."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, v):
        self.vector = v
        self.num_envs = v.num_envs
        self.single_observation_space = _gym_space(v.single_observation_space)
        self.single_action_space = _gym_space(v.single_action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self.vector.reset(seed)

    def step(self, actions):
        return self.vector.step(np.asarray(actions))

    def close_extras(self, **kwargs: Any) -> None:
        self.vector.close()


def _gym_space(space):
    if isinstance(space, gym.Space):
        return space
    from ..spaces import to_gymnasium

    return to_gymnasium(space)
