"""PPO's pieces (proximal policy optimisation, with a clipped surrogate and GAE), for
agents that act in some copies of a vector and not in others, as the agents of a
hierarchy do on the fast lane (``baton.vector``):

- ``PPOConfig``: the hyperparameters;
- ``MaskedCategorical``: a categorical distribution whose masked actions have logit
  -inf, so that they are never sampled and carry no probability, entropy or gradient;
- ``Network``: what the trainer needs of an agent's network (features from the
  agent's observations, a masked distribution over its actions, a value);
  ``ActorCritic``, a small MLP policy and a separate MLP value, is the default;
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

Everything is seeded through the ``torch.Generator`` passed in, and single-threaded
torch gives the same numbers for the same seed. One agent's loop, over a group's rows
(``copies``, ``obs``, ``masks``) and what each step reports for the agent per copy
(``baton.ppo.Trainer`` runs it for every agent name):

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

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import nn


@dataclass(frozen=True)
class PPOConfig:
    """PPO's hyperparameters. A rollout is ``rollout`` ticks of ``num_envs`` copies;
    each agent name's network has ``hidden`` units a layer (``ActorCritic``). A
    decision's return is discounted by ``gamma ** span_ticks`` (``smdp``; else by
    ``gamma`` per decision), its advantage by GAE's ``lam``; the update is
    ``epochs`` passes of ``minibatches`` minibatches of Adam at ``lr`` on the clipped
    surrogate (``clip``), with the value loss weighted ``vf_coef``, an entropy bonus
    ``ent_coef`` and gradients clipped to the norm ``max_grad_norm``. ``norm_adv``
    normalises the advantages of each agent's batch to mean 0 and deviation 1: that
    speeds up an agent whose rewards are rare (the maze's strategy), but where a
    single agent's reward is rare and every step counts (the flat maze, 200 moves to
    find the goal) it turns the value's noise into a drift that can trap the policy
    before it finds the goal; there ``norm_adv=False`` learns reliably.

    >>> PPOConfig(lr=1e-3).lr
    0.001
    >>> PPOConfig.from_json('{"gamma": 0.999, "num_envs": 16}').num_envs
    16
    """

    num_envs: int = 64
    rollout: int = 32
    hidden: int = 64
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatches: int = 4
    lr: float = 3e-3
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    smdp: bool = True
    norm_adv: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type == "bool":
                if not isinstance(v, bool):
                    raise ValueError(f"baton.ppo: PPOConfig.{f.name} is {v!r}; want true or false")
                continue
            if f.type == "int":
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise ValueError(f"baton.ppo: PPOConfig.{f.name} is {v!r}; want an integer")
                object.__setattr__(self, f.name, int(v))
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
                raise ValueError(f"baton.ppo: PPOConfig.{f.name} is {v!r}; want a number")
            object.__setattr__(self, f.name, float(v))
        for name in ("num_envs", "rollout", "hidden", "epochs", "minibatches"):
            if getattr(self, name) < 1:
                raise ValueError(f"baton.ppo: PPOConfig.{name} is {getattr(self, name)!r}; want 1 or more")
        bounds = {
            "gamma": (0 < self.gamma <= 1, "0 < gamma <= 1"),
            "lam": (0 <= self.lam <= 1, "0 <= lam <= 1"),
            "clip": (self.clip > 0, "more than 0"),
            "lr": (self.lr > 0, "more than 0"),
            "ent_coef": (self.ent_coef >= 0, "0 or more"),
            "vf_coef": (self.vf_coef >= 0, "0 or more"),
            "max_grad_norm": (self.max_grad_norm > 0, "more than 0"),
        }
        for name, (ok, want) in bounds.items():
            if not ok:
                raise ValueError(f"baton.ppo: PPOConfig.{name} is {getattr(self, name)!r}; want {want}")

    @classmethod
    def from_json(cls, text: str | bytes | Mapping[str, Any]) -> PPOConfig:
        """A configuration from JSON text, ``@FILE`` (a file of JSON) or a mapping; the
        fields left out keep their defaults. An unknown field is a ValueError naming it.

        >>> PPOConfig.from_json({"lr": 1e-3, "smdp": False}).smdp
        False
        """
        if isinstance(text, Mapping):
            raw: Any = dict(text)
        else:
            raw = load_json(text, "PPOConfig")
        if not isinstance(raw, dict):
            raise ValueError(f"baton.ppo: PPOConfig is {raw!r}; want a JSON object")
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(raw) - set(names))
        if unknown:
            raise ValueError(f"baton.ppo: PPOConfig has no field {unknown[0]!r} (fields: {', '.join(names)})")
        return cls(**raw)


def load_json(text: str | bytes | os.PathLike, what: str) -> Any:
    """JSON text, or the JSON of the file ``@PATH`` names; a ValueError naming ``what``
    if it does not parse."""
    if isinstance(text, bytes):
        text = text.decode()
    text = os.fspath(text)
    src = what
    if text.startswith("@"):
        path = text[1:]
        src = f"{what}: {path}"
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"baton.ppo: {what}: cannot read {path}: {e.strerror}") from e
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"baton.ppo: {src} is not JSON: {e}") from e


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


class Network(nn.Module):
    """What the trainer needs of an agent's network: ``features`` turns the agent's
    observations [k, obs_dim] float32 (rows of its group) into the network's inputs
    [k, in_features] float32, which the rollout keeps; ``dist`` is the masked
    distribution of a batch of inputs and ``value`` their values; ``act`` samples
    (or, ``greedy``, picks the most likely) actions, 0 to n - 1, with their
    log-probabilities and values. A subclass sets ``in_features`` and defines
    ``dist`` and ``value``; ``features`` is the identity unless given (a callable
    over numpy arrays), and ``act`` is written with ``dist`` and ``value``.

    >>> class Linear(Network):
    ...     def __init__(self, obs_dim, n_actions):
    ...         super().__init__(obs_dim)
    ...         self.pi, self.v = nn.Linear(obs_dim, n_actions), nn.Linear(obs_dim, 1)
    ...     def dist(self, x, mask):
    ...         return MaskedCategorical(self.pi(x), mask)
    ...     def value(self, x):
    ...         return self.v(x).squeeze(-1)
    >>> Linear(4, 2).act(np.zeros((3, 4), np.float32), None, torch.Generator())[0].shape
    (3,)
    """

    def __init__(self, in_features: int, features: Callable[[np.ndarray], np.ndarray] | None = None):
        super().__init__()
        self.in_features = int(in_features)
        self._features = features

    def features(self, obs: np.ndarray) -> np.ndarray:
        """The network's inputs [k, in_features] float32 of observations [k, obs_dim]."""
        if self._features is None:
            return np.array(obs, np.float32)  # a copy: the vector's arrays are read-only
        return self._features(obs)

    def dist(self, x: torch.Tensor, mask: torch.Tensor | None) -> MaskedCategorical:
        raise NotImplementedError

    def value(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @torch.no_grad()
    def act(self, x: np.ndarray, mask: np.ndarray | None, generator: torch.Generator, greedy: bool = False):
        """Actions, their log-probabilities and the values of a batch of inputs (numpy
        arrays, what ``features`` gives)."""
        xt = torch.from_numpy(x)
        d = self.dist(xt, None if mask is None else torch.from_numpy(mask))
        a = d.greedy() if greedy else d.sample(generator)
        return a.numpy(), d.log_prob(a).numpy(), self.value(xt).numpy()


class Scale:
    """Features that divide each observation value by the largest magnitude its Box
    allows (``max(|low|, |high|)``), where that is finite and not 0, and leave the
    others as they are: values in [-1, 1] where the bounds say so. Any space other
    than a Box leaves every value as it is.

    >>> Scale(gymnasium.spaces.Box(-2.0, 4.0, (2,)))(np.array([[1.0, -2.0]], np.float32))  # doctest: +SKIP
    array([[ 0.25, -0.5 ]], dtype=float32)
    """

    def __init__(self, space: Any, obs_dim: int):
        low, high = getattr(space, "low", None), getattr(space, "high", None)
        self.scale = np.ones(obs_dim, np.float32)
        if low is not None and high is not None:
            low = np.broadcast_to(np.asarray(low, np.float64), np.shape(high)).reshape(-1)
            high = np.asarray(high, np.float64).reshape(-1)
            if len(high) == obs_dim:
                big = np.maximum(np.abs(low), np.abs(high)).astype(np.float32)
                ok = np.isfinite(big) & (big > 0)
                self.scale = np.where(ok, np.float32(1) / np.where(ok, big, np.float32(1)), np.float32(1)).astype(np.float32)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return obs * self.scale


class ActorCritic(Network):
    """An MLP policy (logits over ``n_actions``) and a separate MLP value, each of one
    tanh hidden layer of ``hidden`` units, over ``features`` of the observations (the
    identity by default; ``ActorCritic.default`` scales them by their Box's bounds).
    The policy's last layer starts near zero, so that an untrained policy is close to
    uniform over the allowed actions.

    >>> net = ActorCritic(4, 2, hidden=32)
    >>> a, logp, v = net.act(np.zeros((8, 4), np.float32), None, torch.Generator().manual_seed(1))
    """

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64,
                 features: Callable[[np.ndarray], np.ndarray] | None = None):
        super().__init__(obs_dim, features)
        self.pi = nn.Sequential(_layer(obs_dim, hidden, 2**0.5), nn.Tanh(), _layer(hidden, n_actions, 0.01))
        self.v = nn.Sequential(_layer(obs_dim, hidden, 2**0.5), nn.Tanh(), _layer(hidden, 1, 1.0))

    @classmethod
    def default(cls, layout: Any, ppo: PPOConfig) -> ActorCritic:
        """The network ``baton.ppo`` gives an agent unless told otherwise: over the
        agent's whole flat observation (``layout`` is a ``baton.vector.AgentLayout``),
        scaled by its bounds (``Scale``), ``ppo.hidden`` units a layer."""
        return cls(layout.obs_dim, layout.actions, ppo.hidden, Scale(layout.observation_space, layout.obs_dim))

    def dist(self, x: torch.Tensor, mask: torch.Tensor | None) -> MaskedCategorical:
        return MaskedCategorical(self.pi(x), mask)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.v(x).squeeze(-1)


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


def ppo_update(net: Network, opt: torch.optim.Optimizer, b: dict, cfg: PPOConfig, generator: torch.Generator) -> dict:
    """``cfg.epochs`` passes of ``cfg.minibatches`` minibatches over a batch, with
    advantages normalised per batch (``cfg.norm_adv``); returns the last epoch's mean
    losses."""
    n = len(b["actions"])
    if n == 0:
        return {}
    adv = b["adv"]
    if cfg.norm_adv:
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
