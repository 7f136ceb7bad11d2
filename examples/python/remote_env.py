#!/usr/bin/env python3
"""Steps a baton environment served over gRPC from Python.

    baton serve env --addr 127.0.0.1:50051 &
    scripts/python examples/python/remote_env.py 127.0.0.1:50051 --env maze
    scripts/python examples/python/remote_env.py 127.0.0.1:50051 --env cartpole

The maze is played in the multi-agent form (RemoteMultiAgentEnv), turn by turn: the
strategy agent walks a shortest path (the oracle of serve_policy.py), the motion agent
moves forward where it can; each episode prints its ticks, each agent's return and
whether it reached the goal. The cart-pole is played through the Gymnasium view
(RemoteEnv): reset(seed=...) and step(action) with the five-tuple, pushing toward where
the pole falls. Needs baton's remote extra (grpcio, protobuf), which the project's
environment (scripts/python) has.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import numpy as np
from serve_policy import oracle  # beside this file

from baton import remote

FORWARD = 1  # the maze's motion: 0 backward, 1 forward


def play_maze(addr: str, episodes: int, seed: int, key, out=sys.stdout) -> list:
    """Plays episodes of the maze; returns (ticks, returns by agent, reached goal)."""
    results = []
    with remote.RemoteMultiAgentEnv(addr, "maze", key=key, wait_ready=True) as env:
        strategy = oracle(env.agent_spec("strategy"))
        for episode in range(episodes):
            turn = env.reset(seed=seed + episode)
            returns = defaultdict(float)
            reached = False
            while True:
                for r in turn.reports.values():
                    returns[r.agent] += r.reward
                    reached |= r.agent == "strategy" and r.terminated
                if turn.over:
                    break
                acting = turn.reports[turn.next]
                if acting.agent == "strategy":
                    action = strategy(acting.observation, acting.mask)
                else:
                    action = FORWARD if acting.mask is None or acting.mask[FORWARD] else int(np.flatnonzero(acting.mask)[0])
                turn = env.step(action)
            print(
                f"maze episode {episode} (seed {seed + episode}): {turn.tick} ticks, returns "
                + ", ".join(f"{a} {v:g}" for a, v in sorted(returns.items()))
                + (", reached the goal" if reached else ", did not reach the goal"),
                file=out,
            )
            results.append((turn.tick, dict(returns), reached))
    return results


def play_cartpole(addr: str, episodes: int, seed: int, key, out=sys.stdout) -> list:
    """Plays episodes of the cart-pole; returns (steps, return, terminated)."""
    results = []
    with remote.RemoteEnv(addr, "cartpole", key=key, wait_ready=True) as env:
        for episode in range(episodes):
            obs, info = env.reset(seed=seed + episode)
            total, steps = 0.0, 0
            while True:
                theta, theta_dot = float(obs[2]), float(obs[3])
                obs, reward, terminated, truncated, info = env.step(1 if theta + 0.5 * theta_dot > 0 else 0)
                total += reward
                steps += 1
                if terminated or truncated:
                    break
            how = "fell" if terminated else "balanced to the limit"
            print(f"cartpole episode {episode} (seed {seed + episode}): {steps} steps, return {total:g}, {how}", file=out)
            results.append((steps, total, terminated))
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("addr", help="the environment server (HOST:PORT, grpc://HOST:PORT or grpcs://HOST:PORT)")
    p.add_argument("--env", choices=("maze", "cartpole"), default="maze")
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--key-file", help="API keys, as baton's --key-file: the key of ENV, or the default key")
    args = p.parse_args(argv)
    key = remote.Keys.read(args.key_file).key_for(args.env) if args.key_file else None
    play = play_maze if args.env == "maze" else play_cartpole
    try:
        play(args.addr, args.episodes, args.seed, key)
    except remote.RemoteError as e:
        sys.exit(f"remote_env.py: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
