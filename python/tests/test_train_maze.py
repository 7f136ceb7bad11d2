"""examples/python/train_maze.py and the pieces of baton.ppo it builds on: the rollout
bookkeeping of an agent that acts in some copies and not others, with decisions that
span several ticks (checked by hand), and a short, seeded PPO training of the maze's
hierarchy and of the flat maze on the fast lane with the maze's features, which must
beat the untrained policy by a clear margin and give the same result for the same
seed."""

import numpy as np
import pytest
import torch

import train_maze
from baton import ppo


@pytest.fixture
def one_thread():
    """Single-threaded torch, as the trainer runs by default: deterministic and cheap."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_masked_categorical_never_picks_a_masked_action_and_has_finite_gradients():
    torch.manual_seed(0)
    logits = torch.randn(64, 4, requires_grad=True)
    mask = torch.rand(64, 4) < 0.5
    mask[torch.arange(64), torch.randint(0, 4, (64,))] = True
    d = ppo.MaskedCategorical(logits, mask)
    gen = torch.Generator().manual_seed(1)
    for _ in range(20):
        a = d.sample(gen)
        assert mask[torch.arange(64), a].all()
    assert mask[torch.arange(64), d.greedy()].all()
    d.entropy().sum().backward()
    assert torch.isfinite(logits.grad).all()
    assert (logits.grad[~mask] == 0).all()
    one = ppo.MaskedCategorical(torch.zeros(1, 4), torch.tensor([[True, False, False, False]]))
    assert one.entropy().item() == 0
    assert one.log_prob(torch.tensor([0])).item() == 0


def _rollout(smdp: bool):
    """A hand-made rollout of 3 ticks over 3 copies, gamma 0.5 and lambda 1 (advantages
    are then discounted returns minus values):

    copy 0: acts at tick 0 (value 0.1); its decision lasts 2 ticks, reward 1 at tick 1;
            acts at tick 2 (value 0.3), reward 0.5 and done.
    copy 1: acts at tick 1 (value 0.2); reward 0.25 at tick 2, still open at the end.
    copy 2: acts at tick 2 (value 0.4), reward 1; acting again at the end, value 2.
    """
    buf = ppo.AgentBuffer(3, 3, obs_dim=1, mask_len=0)
    zero = np.zeros(3)

    def outcome(rewards, spans, done=(False, False, False)):
        buf.record_outcomes(np.array(rewards, float), np.array(spans), np.array(done))

    buf.record_acts(0, np.array([0]), np.zeros((1, 1)), None, np.array([1]), np.array([-0.5]), np.array([0.1]))
    outcome(zero, [0, 0, 0])
    buf.record_acts(1, np.array([1]), np.ones((1, 1)), None, np.array([2]), np.array([-0.7]), np.array([0.2]))
    outcome([1, 0, 0], [2, 0, 0])
    buf.record_acts(2, np.array([0, 2]), np.full((2, 1), 2.0), None, np.array([0, 3]), np.array([-0.1, -0.2]), np.array([0.3, 0.4]))
    outcome([0.5, 0.25, 1], [1, 1, 1], [True, False, False])
    cfg = ppo.PPOConfig(gamma=0.5, lam=1.0, smdp=smdp)
    adv, ret = buf.advantages(cfg, np.array([2]), np.array([2.0], np.float32))
    return buf, cfg, adv, ret


@pytest.mark.parametrize("smdp, first_return", [(True, 1 + 0.5**2 * 0.5), (False, 1 + 0.5 * 0.5)])
def test_agent_buffer_advantages_discount_by_span_and_leave_open_decisions_out(smdp, first_return):
    buf, cfg, adv, ret = _rollout(smdp)
    assert ret[1, 0] == pytest.approx(first_return)
    assert adv[1, 0] == pytest.approx(first_return - 0.1)
    assert ret[3, 0] == pytest.approx(0.5), "done: no bootstrap"
    assert ret[3, 2] == pytest.approx(1 + 0.5 * 2.0), "bootstrapped from the value now"
    assert buf.open[2, 1], "copy 1's decision has not ended"
    b = buf.batch(adv, ret)
    assert sorted(b["actions"].tolist()) == [0, 1, 3], "the open decision is left out"


def test_agent_buffer_carries_an_open_decision_into_the_next_rollout():
    buf, cfg, adv, ret = _rollout(True)
    buf.carry(np.array([2]))
    assert buf.valid[0].tolist() == [False, True, False]
    assert buf.pending.tolist() == [-1, 0, -1]
    assert buf.actions[0, 1] == 2 and buf.rewards[0, 1] == 0.25 and buf.spans[0, 1] == 1
    assert not buf.valid[1:].any()
    buf.record_outcomes(np.array([0, 1.0, 0]), np.array([0, 1, 0]), np.array([False, True, False]))
    adv, ret = buf.advantages(cfg, np.array([], np.int64), np.array([], np.float32))
    assert ret[0, 1] == pytest.approx(1.25), "the rewards of both rollouts"
    assert buf.spans[0, 1] == 2


@pytest.mark.go
def test_training_beats_the_untrained_policy(one_thread):
    """The hierarchy (strategy and motion learned together) and the flat maze, each from
    an untrained policy close to uniform over the allowed actions."""
    results = {}
    for flat, steps in ((False, 24_576), (True, 12_288)):
        before = train_maze.evaluate(train_maze.untrained(flat, seed=3), flat=flat, episodes=300)
        res = train_maze.train(flat=flat, seed=3, env_steps=steps, num_envs=64, rollout=32, curve_every=0)
        after = train_maze.evaluate(res.agents, flat=flat, episodes=300)
        results[flat] = (before["success"], after["success"])
        assert res.env_steps == steps
    (h0, h1), (f0, f1) = results[False], results[True]
    assert h0 <= 0.1 and h1 >= 0.9, results
    assert f0 <= 0.35 and f1 >= 0.9, results


@pytest.mark.go
def test_training_is_deterministic(one_thread):
    def run(seed):
        res = train_maze.train(seed=seed, env_steps=4096, num_envs=32, rollout=16, curve_every=4, curve_episodes=20)
        params = torch.cat([p.detach().flatten() for a in res.agents.values() for p in a.net.parameters()])
        return res.curve, params

    c1, p1 = run(5)
    c2, p2 = run(5)
    c3, p3 = run(6)
    assert c1 == c2 and len(c1) == 2
    assert torch.equal(p1, p2)
    assert not torch.equal(p1, p3)
