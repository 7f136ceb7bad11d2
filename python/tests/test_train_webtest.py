"""examples/python/train_webtest.py: a short, seeded PPO training of the web tester's
strategy agent (the motion agent scripted, in Go) covers more of the shop than the
untrained policy, which mostly finishes at once."""

import pytest
import torch

import train_webtest

pytestmark = pytest.mark.go


def test_training_covers_more_than_the_untrained_policy():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        config = train_webtest.DEFAULT_CONFIG
        untrained = train_webtest.evaluate(train_webtest.untrained_net(2, config=config), episodes=50, config=config)
        net, curve, ticks, _, _ = train_webtest.train(seed=2, env_steps=40_000, num_envs=16, rollout=16, config=config)
        trained = train_webtest.evaluate(net, episodes=50, config=config)
    finally:
        torch.set_num_threads(before)
    assert ticks >= 40_000 and curve
    assert untrained["coverage"] < 0.15
    assert trained["coverage"] > untrained["coverage"] + 0.2, (untrained, trained)
    assert trained["defects_found"] > untrained["defects_found"] + 1, (untrained, trained)
