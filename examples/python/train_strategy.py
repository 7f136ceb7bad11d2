#!/usr/bin/env python3
"""Trains the maze's strategy agent from an activity log, by behaviour cloning.

The log of a maze campaign holds every decision of the strategy agent, which plays the
oracle by default (shortest paths to the goal). This script clones it: a small MLP maps
the strategy's flat observation (the map, the position and the four direction-mask
entries) to one of the four directions, trained with cross-entropy on the logged
decisions, the directions the action mask forbids masked out. It prints its training
curve (loss and accuracy per epoch, on the training trials and on held-out trials) and
saves the model.

    go run ./cmd/baton run maze --trials 200 --log /tmp/mazelog
    scripts/python examples/python/train_strategy.py /tmp/mazelog

Needs baton's arrow and torch extras (pyarrow, torch), which the project's environment
(scripts/python) has.
Options: --epochs, --hidden, --lr, --batch-size, --holdout, --seed, --agent, --out.
"""

from __future__ import annotations

import argparse
import sys
import time


def need(module: str, install: str):
    try:
        return __import__(module)
    except ImportError:
        sys.exit(f"train_strategy.py needs {module}: {install}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log", help="the log's directory (baton run maze --log DIR)")
    p.add_argument("--agent", default="strategy", help="the agent to clone (default: strategy)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--holdout", type=float, default=0.2, help="fraction of the trials held out for validation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="strategy_bc.pt", help="where to save the model (default: strategy_bc.pt)")
    return p.parse_args(argv)


def split_by_trial(transitions, holdout: float, seed: int):
    """Splits transitions into training and validation sets by trial, so that the
    validation mazes are unseen (each trial of the maze draws its own)."""
    import numpy as np

    trials = np.unique(transitions.trial_id.astype(str))
    rng = np.random.default_rng(seed)
    rng.shuffle(trials)
    n_val = int(round(len(trials) * holdout)) if len(trials) > 1 else 0
    val_trials = set(trials[:n_val].tolist())
    is_val = np.array([t in val_trials for t in transitions.trial_id.astype(str)], dtype=bool)
    return transitions.select(~is_val), transitions.select(is_val)


class Policy:
    """The MLP and how it reads observations and masks."""

    def __init__(self, torch, obs_dim: int, n_actions: int, hidden: int):
        nn = torch.nn
        self.torch = torch
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_actions),
        )

    def logits(self, obs, mask=None):
        z = self.net(obs)
        if mask is not None:
            z = z.masked_fill(~mask, -1e9)
        return z


def tensors(torch, t, action_start: int):
    obs = torch.as_tensor(t.obs, dtype=torch.float32)
    # The action the agent took on obs is the action of the transition's second row.
    act = torch.as_tensor(t.action - action_start, dtype=torch.int64)
    mask = None if t.mask is None else torch.as_tensor(t.mask, dtype=torch.bool)
    return obs, act, mask


def evaluate(torch, policy, obs, act, mask):
    if len(act) == 0:
        return float("nan"), float("nan")
    with torch.no_grad():
        z = policy.logits(obs, mask)
        loss = torch.nn.functional.cross_entropy(z, act).item()
        acc = (z.argmax(dim=1) == act).float().mean().item()
    return loss, acc


def train(transitions, n_actions: int, action_start: int = 0, epochs: int = 30, hidden: int = 128,
          lr: float = 3e-3, batch_size: int = 256, holdout: float = 0.2, seed: int = 0, log=print):
    """Behaviour cloning on transitions (baton.Transitions of a Discrete-action agent).
    Returns the policy and the curve: one dict per epoch."""
    torch = need("torch", "pip install torch (Debian: apt-get install python3-torch)")
    torch.manual_seed(seed)
    train_t, val_t = split_by_trial(transitions, holdout, seed)
    if len(train_t) == 0:
        raise ValueError("no transition to train on")
    obs, act, mask = tensors(torch, train_t, action_start)
    vobs, vact, vmask = tensors(torch, val_t, action_start)
    policy = Policy(torch, obs.shape[1], n_actions, hidden)
    opt = torch.optim.Adam(policy.net.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    log(f"{len(train_t)} training transitions from {len(set(train_t.trial_id.tolist()))} trials, "
        f"{len(val_t)} validation transitions from {len(set(val_t.trial_id.tolist()))} trials; "
        f"observations of {obs.shape[1]} values, {n_actions} actions")
    log(f"{'epoch':>5}  {'loss':>8}  {'acc':>6}  {'val loss':>8}  {'val acc':>7}")
    curve = []
    for epoch in range(1, epochs + 1):
        policy.net.train()
        perm = torch.randperm(len(act), generator=gen)
        total, n = 0.0, 0
        for i in range(0, len(perm), batch_size):
            b = perm[i : i + batch_size]
            z = policy.logits(obs[b], None if mask is None else mask[b])
            loss = torch.nn.functional.cross_entropy(z, act[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
            n += len(b)
        policy.net.eval()
        _, acc = evaluate(torch, policy, obs, act, mask)
        vloss, vacc = evaluate(torch, policy, vobs, vact, vmask)
        row = {"epoch": epoch, "loss": total / n, "acc": acc, "val_loss": vloss, "val_acc": vacc}
        curve.append(row)
        log(f"{epoch:>5}  {row['loss']:>8.4f}  {acc:>6.3f}  {vloss:>8.4f}  {vacc:>7.3f}")
    return policy, curve


def main(argv=None):
    args = parse_args(argv)
    need("numpy", "pip install numpy (Debian: apt-get install python3-numpy)")
    need("pyarrow", "pip install pyarrow (Debian has no python3-pyarrow package)")
    torch = need("torch", "pip install torch (Debian: apt-get install python3-torch)")
    import baton

    started = time.time()
    log = baton.load(args.log, agents=[args.agent])
    agent = log[args.agent]
    if not isinstance(agent.action_space, baton.Discrete):
        sys.exit(f"{args.agent} acts in {agent.action_space}: this script clones Discrete actions")
    t = agent.transitions()
    print(f"read {len(agent)} rows of {args.agent} from {args.log} in {time.time() - started:.1f} s: "
          f"{len(t)} transitions")
    policy, curve = train(
        t, agent.action_space.n, agent.action_space.start, epochs=args.epochs, hidden=args.hidden,
        lr=args.lr, batch_size=args.batch_size, holdout=args.holdout, seed=args.seed,
    )
    torch.save(
        {
            "state_dict": policy.net.state_dict(),
            "hidden": args.hidden,
            "observation_dim": int(t.obs.shape[1]),
            "n_actions": agent.action_space.n,
            "action_start": agent.action_space.start,
            # The spaces as the log gives them, to rebuild them at load time.
            "observation_space": agent.metadata.get("baton.observation_space"),
            "action_space": agent.metadata.get("baton.action_space"),
            "curve": curve,
        },
        args.out,
    )
    print(f"saved the model to {args.out} (torch.load it; Policy(torch, observation_dim, n_actions, hidden) "
          f"rebuilds the network for its state_dict)")


if __name__ == "__main__":
    main()
