"""A PyTorch Dataset of transitions (needs torch; import it as baton.TransitionDataset)."""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
    from torch.utils.data import Dataset as _Dataset
except ImportError:  # baton.TransitionDataset raises a clear error instead
    torch = None
    _Dataset = object

from .experience import Transitions

__all__ = ["TransitionDataset"]

TORCH_MISSING = (
    "baton.TransitionDataset needs PyTorch: pip install torch "
    "(on Debian and Ubuntu: apt-get install python3-torch)"
)


class TransitionDataset(_Dataset):
    """The transitions of an agent as a map-style torch Dataset.

    ``source`` is a baton.Transitions, or what has a ``transitions()`` method (an
    AgentData from baton.load). Item i is a dict of tensors: obs and next_obs
    (float32, flat), action (int64 for a Discrete or MultiDiscrete/MultiBinary action
    space, float32 for a Box), reward (float32, the whole reward), terminated,
    truncated and done (bool), span_ticks (int64), discount (float32, gamma **
    span_ticks, when ``gamma`` is given), and mask and next_mask (bool) for an agent
    with an action mask. The whole set is in ``tensors``, for full-batch training
    without a DataLoader.

        ds = baton.TransitionDataset(baton.load("runs/maze")["motion"], gamma=0.99)
        loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True)
    """

    def __init__(self, source: Transitions | Any, gamma: float | None = None, device: Any = None):
        if torch is None:
            raise ImportError(TORCH_MISSING)
        if not isinstance(source, Transitions) and not callable(getattr(source, "transitions", None)):
            raise TypeError(f"TransitionDataset: source is a {type(source).__name__}; want baton.Transitions "
                            "or what has a transitions() method (an AgentData of baton.load)")
        t = source if isinstance(source, Transitions) else source.transitions()
        self.transitions = t
        action = t.action
        action_t = torch.as_tensor(np.ascontiguousarray(action), dtype=torch.float32 if action.dtype.kind == "f" else torch.int64)
        self.tensors = {
            "obs": torch.as_tensor(np.ascontiguousarray(t.obs), dtype=torch.float32),
            "action": action_t,
            "reward": torch.as_tensor(np.ascontiguousarray(t.reward), dtype=torch.float32),
            "next_obs": torch.as_tensor(np.ascontiguousarray(t.next_obs), dtype=torch.float32),
            "terminated": torch.as_tensor(np.ascontiguousarray(t.terminated), dtype=torch.bool),
            "truncated": torch.as_tensor(np.ascontiguousarray(t.truncated), dtype=torch.bool),
            "done": torch.as_tensor(np.ascontiguousarray(t.done), dtype=torch.bool),
            "span_ticks": torch.as_tensor(np.ascontiguousarray(t.span_ticks), dtype=torch.int64),
        }
        if gamma is not None:
            self.tensors["discount"] = torch.as_tensor(t.discount(gamma), dtype=torch.float32)
        if t.mask is not None:
            self.tensors["mask"] = torch.as_tensor(np.ascontiguousarray(t.mask), dtype=torch.bool)
            self.tensors["next_mask"] = torch.as_tensor(np.ascontiguousarray(t.next_mask), dtype=torch.bool)
        if device is not None:
            self.tensors = {k: v.to(device) for k, v in self.tensors.items()}

    def __len__(self) -> int:
        return len(self.transitions)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {k: v[i] for k, v in self.tensors.items()}
