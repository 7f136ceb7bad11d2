#!/usr/bin/env python3
"""Serves a tabular Q-learner as the maze's strategy agent: it learns while Go trials play it.

The learner keeps a table of action values per observation (the strategy's flat
observation: map, position and direction mask, so one row per tile of a fixed map).
It acts epsilon-greedily among the directions the mask allows, and learns from the
feedback of every trial that plays it (baton.remote.serve_learner): each step's
reward, discounted by gamma^span_ticks over the ticks the decision took (the motion
agent's walk), retroactive rewards for past decisions, and the episodes' ends, after
each of which epsilon decays. Run campaigns against it, one after another, and watch
their success rate rise:

    baton envs maze --json > /tmp/maze.json
    scripts/python examples/python/serve_learner.py --spec /tmp/maze.json --addr 127.0.0.1:50053
    for i in 1 2 3 4 5 6; do
        baton run maze --trials 20 --workers 1 --policy strategy=grpc://127.0.0.1:50053 \\
            --policy motion=forward
    done

Its first line on stdout says where it serves, as serve_policy.py's does; it stops
gracefully on SIGINT or SIGTERM, printing what it learned (episodes, table size).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections import defaultdict

import numpy as np

from baton import remote


class QLearner:
    """Tabular Q-learning over whole observations, for a Discrete agent with a mask.

    ``act`` chooses epsilon-greedily among the allowed actions (ties broken at random)
    and remembers the decision per (trial, episode, agent id); ``learn`` updates the
    value of that decision from its step outcome (a one-step target, bootstrapped
    unless the step terminated), adds retroactive rewards to the decision they
    address, and decays epsilon at each episode's end. ``initial`` is every action's
    value before it is tried: optimistic values (the goal's reward) make the learner
    try what it has not tried. Not safe for concurrent use: serve_learner serialises
    its calls.
    """

    def __init__(self, n_actions: int, *, alpha: float = 0.5, gamma: float = 0.95, initial: float = 1.0,
                 epsilon: float = 0.2, epsilon_decay: float = 0.95, epsilon_min: float = 0.0, seed: int = 0):
        self.n_actions = n_actions
        self.alpha, self.gamma = alpha, gamma
        self.epsilon, self.epsilon_decay, self.epsilon_min = epsilon, epsilon_decay, epsilon_min
        self.q: dict[bytes, np.ndarray] = defaultdict(lambda: np.full(n_actions, initial, dtype=np.float64))
        self.rng = np.random.default_rng(seed)
        self.decision: dict[tuple, tuple[bytes, int]] = {}  # (trial, episode, agent id) -> (state, action)
        self.past: dict[tuple, tuple[bytes, int]] = {}  # (trial, episode, agent id, tick) -> (state, action)
        self.episodes = 0
        self.updates = 0
        self.returns: dict[tuple, float] = {}  # (trial, episode) -> the strategy's return so far
        self.curve: list[dict] = []  # per episode that ended: {"episode", "return", "success"}

    def state_json(self) -> bytes:
        """What the learner knows, as JSON bytes (a checkpoint): the table, epsilon,
        the counts and the learning curve."""
        return json.dumps({
            "q": {s.hex(): v.tolist() for s, v in self.q.items()},
            "epsilon": self.epsilon, "episodes": self.episodes, "updates": self.updates,
        }).encode()

    def load_json(self, data: bytes, curve=()) -> None:
        """Resumes from a checkpoint (state_json) and its learning curve."""
        d = json.loads(data)
        for s, v in d["q"].items():
            self.q[bytes.fromhex(s)] = np.asarray(v, dtype=np.float64)
        self.epsilon, self.episodes, self.updates = d["epsilon"], d["episodes"], d["updates"]
        self.curve = [{"episode": p.episode, "return": p.ret, "success": p.success} for p in curve]

    @staticmethod
    def state(obs: np.ndarray) -> bytes:
        return np.asarray(obs, dtype=np.float32).tobytes()

    def allowed(self, mask) -> np.ndarray:
        return np.arange(self.n_actions) if mask is None else np.flatnonzero(mask)

    def greedy(self, s: bytes, mask) -> int:
        allowed = self.allowed(mask)
        values = self.q[s][allowed]
        best = allowed[values == values.max()]
        return int(self.rng.choice(best))

    def act(self, obs, mask, context):
        s = self.state(obs)
        if self.rng.random() < self.epsilon:
            a = int(self.rng.choice(self.allowed(mask)))
        else:
            a = self.greedy(s, mask)
        self.decision[(context.trial, context.episode, context.agent_id)] = (s, a)
        return a

    def learn(self, o: remote.Outcome) -> None:
        if o.kind == remote.STEP:
            if o.start:
                return  # a sub-episode opens: no decision to score yet
            made = self.decision.pop((o.trial, o.episode, o.agent_id), None)
            if made is None:
                return
            s, a = made
            target = o.reward
            if not o.terminated:
                target += self.gamma ** o.span_ticks * float(self.q[self.state(o.obs)][self.allowed(o.mask)].max())
            self.q[s][a] += self.alpha * (target - self.q[s][a])
            self.returns[(o.trial, o.episode)] = self.returns.get((o.trial, o.episode), 0.0) + o.reward
            self.past[(o.trial, o.episode, o.agent_id, o.tick)] = made
            self.updates += 1
        elif o.kind == remote.RETRO:
            made = self.past.get((o.trial, o.rewarded_episode, o.agent_id, o.tick))
            if made is not None:
                s, a = made
                self.q[s][a] += self.alpha * o.reward
            key = (o.trial, o.rewarded_episode)
            if key in self.returns:
                self.returns[key] += o.reward
        elif o.kind == remote.EPISODE_END:
            self.episodes += 1
            # The maze ends an episode at the goal, after the strategy's last decision
            # (both terminated) or at the tick limit; only the goal rewards the
            # strategy (reward_for_reaching_goal), so a positive return reached it.
            ret = self.returns.pop((o.trial, o.episode), 0.0)
            self.curve.append({"episode": self.episodes, "return": ret, "success": ret > 0 and not o.truncated})
            self.epsilon = max(self.epsilon_min, self.epsilon * self.epsilon_decay)
            for d in (self.decision, self.past):
                for k in [k for k in d if k[0] == o.trial and k[1] == o.episode]:
                    del d[k]


def parse_args(argv=None):
    from serve_policy import add_agent_args  # examples/python, next to this script

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_agent_args(p)
    p.add_argument("--alpha", type=float, default=0.5, help="the learning rate (default 0.5)")
    p.add_argument("--gamma", type=float, default=0.95, help="the discount per tick (default 0.95)")
    p.add_argument("--initial", type=float, default=1.0,
                   help="every action's value before it is tried (default 1: optimistic)")
    p.add_argument("--epsilon", type=float, default=0.2, help="the first episode's exploration rate (default 0.2)")
    p.add_argument("--epsilon-decay", type=float, default=0.95, help="its factor per episode (default 0.95)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", metavar="NAME",
                   help="persist the learner in the model registry as NAME: resume from NAME@latest on start, "
                        "checkpoint every --checkpoint-every episodes and on shutdown")
    p.add_argument("--models", metavar="WHERE", help="the registry: a directory or grpc://HOST:PORT (default: baton.models.default_dir())")
    p.add_argument("--checkpoint-every", type=int, default=50, metavar="K", help="episodes between checkpoints (default 50)")
    return p.parse_args(argv)


class Checkpoints:
    """The learner's checkpoints in the model registry: a version every ``every``
    episodes and one on shutdown, each with the learning curve so far."""

    def __init__(self, learner: QLearner, name: str, where, every: int, env: str, agent: str):
        from baton import models

        self.models, self.learner, self.name, self.where, self.every = models, learner, name, where, max(1, every)
        self.env, self.agent = env, agent
        self.saved = learner.episodes

    def resume(self) -> str | None:
        """Loads NAME@latest into the learner; returns its reference, or None when there is none."""
        try:
            meta, data = self.models.pull(self.name, where=self.where)
        except self.models.NotFound:
            return None
        self.learner.load_json(data, meta.curve)
        self.saved = self.learner.episodes
        return meta.ref

    def maybe(self) -> None:
        if self.learner.episodes - self.saved >= self.every:
            self.save()

    def save(self) -> None:
        curve = self.learner.curve
        wins = sum(p["success"] for p in curve[-100:])
        self.models.push(
            self.name, self.learner.state_json(), where=self.where, format="qtable-json", env=self.env,
            agent=self.agent, run="serve_learner.py", curve=curve,
            figures={"episodes": self.learner.episodes, "updates": self.learner.updates,
                     "epsilon": self.learner.epsilon, "success_rate_last_100": wins / max(1, min(100, len(curve)))},
        )
        self.saved = self.learner.episodes


def main(argv=None) -> int:
    from serve_policy import agent_spec  # examples/python, next to this script

    args = parse_args(argv)
    spec = agent_spec(args)
    learner = QLearner(spec.action.n, alpha=args.alpha, gamma=args.gamma, initial=args.initial, epsilon=args.epsilon,
                       epsilon_decay=args.epsilon_decay, seed=args.seed)
    keys = remote.Keys.read(args.key_file) if args.key_file else None
    checkpoints = None
    if args.model:
        checkpoints = Checkpoints(learner, args.model, args.models, args.checkpoint_every, args.env, spec.name)
        ref = checkpoints.resume()
        print(f"serve_learner.py: resumed from {ref} ({learner.episodes} episodes)" if ref else
              f"serve_learner.py: no model {args.model} yet: learning from scratch", file=sys.stderr, flush=True)
        learn = learner.learn

        def learn_and_checkpoint(o):  # serve_learner serialises the learner's calls
            learn(o)
            if o.kind == remote.EPISODE_END:
                checkpoints.maybe()

        learner.learn = learn_and_checkpoint
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server = remote.serve_learner(learner, spec, args.addr, key=keys)
    print(f"serving agent {spec.name} of {args.env} on grpc://{server.addr}", flush=True)
    stop.wait()
    server.stop(grace=5)
    if checkpoints is not None:
        checkpoints.save()
    print(f"serve_learner.py: learned from {learner.episodes} episodes ({learner.updates} updates); "
          f"{len(learner.q)} observations in the table, epsilon {learner.epsilon:.3f}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
