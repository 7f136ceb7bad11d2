"""The pieces of PPO (proximal policy optimisation, with a clipped surrogate and GAE)
that the example trainers share, for agents that act in some copies of a vector and
not in others, as the agents of a hierarchy do on the fast lane (``baton.vector``):

- ``MaskedCategorical``: a categorical distribution whose masked actions have logit
  -inf, so that they are never sampled and carry no probability, entropy or gradient;
- ``ActorCritic``: a small MLP policy and a separate MLP value;
- ``AgentBuffer``: one agent's rollout over N copies, filled a tick at a time with
  the rows of the agent's group (``record_acts``) and the outcomes each step reports
  for the agent in each copy (``record_outcomes``). A transition of the agent in a
  copy is complete when the agent is next reported done there, or acts there again;
  its reward is the sum of the rewards reported in between and its discount
  ``gamma ** span``, ``span`` being the ticks the decision lasted (an option of a
  semi-Markov decision process, for a parent whose action runs a child's
  sub-episode), or ``gamma`` per decision. ``advantages`` computes GAE on the
  complete transitions; a transition still open at the end of a rollout (a parent
  whose child has not finished) is carried into the next one;
- ``ppo_update``: epochs of minibatch updates of one agent's network on its batch.

``train_maze.py`` trains the maze's strategy and motion agents with them; a trainer
of another environment needs an ``ActorCritic`` and an ``AgentBuffer`` per agent.
Everything is seeded through the ``torch.Generator`` passed in, and single-threaded
torch gives the same numbers for the same seed. One agent's loop, over a group's rows
(``copies``, ``obs``, ``masks``) and what each step reports for the agent per copy:

    net, buf = ActorCritic(obs_dim, n_actions), AgentBuffer(ticks, n, obs_dim, mask_len)
    for t in range(ticks):
        a, logp, v = net.act(obs, masks, gen)
        buf.record_acts(t, copies, obs, masks, a, logp, v)
        ...  # step the vector
        buf.record_outcomes(rewards, spans, done)
    adv, ret = buf.advantages(cfg, copies_now, values_now)
    ppo_update(net, opt, buf.batch(adv, ret), cfg, gen)
    buf.carry(copies_now)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


@dataclass
class PPOConfig:
    """PPO's hyperparameters."""

    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatches: int = 4
    lr: float = 3e-3
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    smdp: bool = True  # discount a transition by gamma ** span (else gamma per decision)


class MaskedCategorical:
    """A categorical distribution over logits [B, A] whose entries where ``mask`` [B, A]
    is False are -inf. Every row needs one allowed action."""

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor | None):
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
        self.mask = mask
        self.logp_all = torch.log_softmax(logits, dim=-1)

    def sample(self, generator: torch.Generator) -> torch.Tensor:
        """Samples with the Gumbel-max trick from ``generator`` (seeded, unlike
        torch.distributions' sample)."""
        u = torch.rand(self.logp_all.shape, generator=generator).clamp_(1e-12, 1.0)
        return torch.argmax(self.logp_all - torch.log(-torch.log(u)), dim=-1)

    def greedy(self) -> torch.Tensor:
        return torch.argmax(self.logp_all, dim=-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        logp = self.logp_all
        if self.mask is not None:
            # 0 * -inf is nan, and so would its gradient be even behind a where.
            logp = torch.where(self.mask, logp, torch.zeros_like(logp))
        return -(self.logp_all.exp() * logp).sum(-1)


def _layer(n_in: int, n_out: int, gain: float) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """An MLP policy (logits over ``n_actions``) and a separate MLP value, each of one
    tanh hidden layer of ``hidden`` units. The policy's last layer starts near zero, so
    that an untrained policy is close to uniform over the allowed actions."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64):
        super().__init__()
        self.pi = nn.Sequential(_layer(obs_dim, hidden, 2**0.5), nn.Tanh(), _layer(hidden, n_actions, 0.01))
        self.v = nn.Sequential(_layer(obs_dim, hidden, 2**0.5), nn.Tanh(), _layer(hidden, 1, 1.0))

    def dist(self, x: torch.Tensor, mask: torch.Tensor | None) -> MaskedCategorical:
        return MaskedCategorical(self.pi(x), mask)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.v(x).squeeze(-1)

    @torch.no_grad()
    def act(self, x: np.ndarray, mask: np.ndarray | None, generator: torch.Generator, greedy: bool = False):
        """Actions, their log-probabilities and the values of a batch of features."""
        xt = torch.from_numpy(x)
        d = self.dist(xt, None if mask is None else torch.from_numpy(mask))
        a = d.greedy() if greedy else d.sample(generator)
        return a.numpy(), d.log_prob(a).numpy(), self.value(xt).numpy()


class AgentBuffer:
    """One agent's rollout of ``ticks`` ticks over ``n`` copies, as dense [ticks + 1, n]
    arrays: row t + 1 holds what the agent did at tick t in the copies it acted in
    (``valid``), row 0 a transition carried over from the previous rollout."""

    def __init__(self, ticks: int, n: int, obs_dim: int, mask_len: int):
        shape = (ticks + 1, n)
        self.ticks, self.n = ticks, n
        self.obs = np.zeros((*shape, obs_dim), np.float32)
        self.masks = np.ones((*shape, mask_len), np.bool_) if mask_len else None
        self.actions = np.zeros(shape, np.int64)
        self.logp = np.zeros(shape, np.float32)
        self.values = np.zeros(shape, np.float32)
        self.rewards = np.zeros(shape, np.float64)
        self.spans = np.zeros(shape, np.int64)
        self.done = np.zeros(shape, np.bool_)
        self.valid = np.zeros(shape, np.bool_)
        self.open = np.zeros(shape, np.bool_)  # still open at the rollout's end: not trained on
        self.pending = np.full(n, -1, np.int64)  # each copy's open transition (its row), or -1
        self._all = np.arange(n)

    def record_acts(self, t: int, copies: np.ndarray, obs, masks, actions, logp, values) -> None:
        """The agent acted at tick t in ``copies`` (the rows of its group)."""
        r = t + 1
        self.obs[r, copies] = obs
        if self.masks is not None and masks is not None:
            self.masks[r, copies] = masks
        self.actions[r, copies] = actions
        self.logp[r, copies] = logp
        self.values[r, copies] = values
        self.valid[r, copies] = True
        self.pending[copies] = r

    def record_outcomes(self, rewards: np.ndarray, spans: np.ndarray, done: np.ndarray) -> None:
        """What the last step reported of the agent in every copy ([n] each): rewards
        and span ticks add to the open transitions; ``done`` (the agent's
        sub-episode, or the episode, ended) closes them with no bootstrap."""
        i = np.flatnonzero(self.pending >= 0)
        r = self.pending[i]
        self.rewards[r, i] += rewards[i]
        self.spans[r, i] += spans[i]
        d = done[i]
        self.done[r[d], i[d]] = True
        self.pending[i[d]] = -1

    def advantages(self, cfg: PPOConfig, acting: np.ndarray, next_values: np.ndarray):
        """GAE advantages and returns [ticks + 1, n] of the complete transitions.
        ``acting`` are the copies the agent acts in now and ``next_values`` the values
        of their observations now: an open transition of such a copy is complete,
        bootstrapped from that value; the other open transitions (a decision whose
        span has not ended) are marked ``open``, left out and carried over by
        ``carry``."""
        nextv = np.zeros(self.n, np.float32)
        nexta = np.zeros(self.n, np.float32)
        now = np.zeros(self.n, np.bool_)
        now[acting] = True
        nextv[acting] = next_values
        self.open[:] = False
        waiting = np.flatnonzero((self.pending >= 0) & ~now)
        self.open[self.pending[waiting], waiting] = True
        nextv[waiting] = self.values[self.pending[waiting], waiting]
        spans = np.maximum(self.spans, 1)
        disc = (cfg.gamma ** spans if cfg.smdp else np.full(spans.shape, cfg.gamma)).astype(np.float32)
        adv = np.zeros(self.valid.shape, np.float32)
        for r in range(self.ticks, -1, -1):
            v = self.valid[r] & ~self.open[r]
            if not v.any():
                continue
            g = disc[r] * ~self.done[r]
            delta = self.rewards[r].astype(np.float32) + g * nextv - self.values[r]
            a = delta + g * cfg.lam * nexta
            adv[r] = np.where(v, a, 0)
            nextv = np.where(v, self.values[r], nextv)
            nexta = np.where(v, a, nexta)
        return adv, adv + self.values

    def batch(self, adv: np.ndarray, ret: np.ndarray) -> dict[str, torch.Tensor]:
        """The complete transitions as tensors for ``ppo_update``."""
        sel = self.valid & ~self.open
        b = {
            "obs": torch.from_numpy(self.obs[sel]),
            "actions": torch.from_numpy(self.actions[sel]),
            "logp": torch.from_numpy(self.logp[sel]),
            "values": torch.from_numpy(self.values[sel]),
            "adv": torch.from_numpy(adv[sel]),
            "ret": torch.from_numpy(ret[sel]),
        }
        b["masks"] = None if self.masks is None else torch.from_numpy(self.masks[sel])
        return b

    def carry(self, acting: np.ndarray) -> None:
        """Starts the next rollout: clears the rows, keeping each open transition in
        row 0 (its rewards and span so far included). The copies in ``acting`` have
        nothing open: their last transition was bootstrapped."""
        self.pending[acting] = -1
        i = np.flatnonzero(self.pending >= 0)
        r = self.pending[i]
        kept = [a[r, i].copy() for a in self._arrays()]
        for a in self._arrays():
            a[:] = 0
        if self.masks is not None:
            self.masks[:] = True
        for a, k in zip(self._arrays(), kept):
            a[0, i] = k
        self.valid[0, i] = True
        self.pending[i] = 0

    def _arrays(self):
        arrays = [self.obs, self.actions, self.logp, self.values, self.rewards, self.spans, self.done, self.valid, self.open]
        if self.masks is not None:
            arrays.append(self.masks)
        return arrays


def ppo_update(net: ActorCritic, opt: torch.optim.Optimizer, b: dict, cfg: PPOConfig, generator: torch.Generator) -> dict:
    """``cfg.epochs`` passes of ``cfg.minibatches`` minibatches over a batch, with
    advantages normalised per batch; returns the last epoch's mean losses."""
    n = len(b["actions"])
    if n == 0:
        return {}
    adv = b["adv"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8) if n > 1 else adv * 0
    size = max(1, n // cfg.minibatches)
    stats: dict[str, float] = {}
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=generator)
        sums = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "clipfrac": 0.0}
        count = 0
        for start in range(0, n, size):
            idx = perm[start:start + size]
            m = None if b["masks"] is None else b["masks"][idx]
            d = net.dist(b["obs"][idx], m)
            logp = d.log_prob(b["actions"][idx])
            ratio = torch.exp(logp - b["logp"][idx])
            a = adv[idx]
            pg = -torch.min(ratio * a, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a).mean()
            v = net.value(b["obs"][idx])
            vl = 0.5 * ((v - b["ret"][idx]) ** 2).mean()
            ent = d.entropy().mean()
            loss = pg + cfg.vf_coef * vl - cfg.ent_coef * ent
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            sums["policy"] += pg.item()
            sums["value"] += vl.item()
            sums["entropy"] += ent.item()
            sums["clipfrac"] += ((ratio - 1).abs() > cfg.clip).float().mean().item()
            count += 1
        stats = {k: s / count for k, s in sums.items()}
    return stats
