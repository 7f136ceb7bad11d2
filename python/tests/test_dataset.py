"""baton.TransitionDataset over hand-built transitions."""

import numpy as np
import pytest
import torch

import baton
from test_experience import EXPECTED_PAIRS, columns


def test_dataset_of_transitions():
    t = baton.build_transitions(columns())
    ds = baton.TransitionDataset(t, gamma=0.5)
    assert len(ds) == len(EXPECTED_PAIRS)
    item = ds[1]
    assert set(item) >= {"obs", "action", "reward", "next_obs", "terminated", "truncated", "done", "span_ticks", "discount", "mask", "next_mask"}
    assert item["obs"].dtype == torch.float32 and item["action"].dtype == torch.int64
    np.testing.assert_array_equal(item["obs"].numpy(), t.obs[1])
    np.testing.assert_array_equal(item["next_obs"].numpy(), t.next_obs[1])
    assert item["discount"].item() == pytest.approx(0.5 ** int(t.span_ticks[1]))
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False)))
    assert batch["obs"].shape == (4, t.obs.shape[1]) and batch["mask"].shape == (4, t.mask.shape[1])


def test_dataset_of_box_actions():
    c = columns(action_shape=(2,))
    del c["action_mask"]
    ds = baton.TransitionDataset(baton.build_transitions(c))
    assert ds[0]["action"].dtype == torch.float32 and ds[0]["action"].shape == (2,)
    assert "mask" not in ds[0] and "discount" not in ds[0]


def test_dataset_without_torch(monkeypatch):
    import baton.dataset as bd

    monkeypatch.setattr(bd, "torch", None)
    with pytest.raises(ImportError, match="torch"):
        baton.TransitionDataset(baton.build_transitions(columns()))


def test_dataset_refuses_what_has_no_transitions():
    with pytest.raises(TypeError, match="source is a dict; want baton.Transitions"):
        baton.TransitionDataset(columns())
