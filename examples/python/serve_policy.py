#!/usr/bin/env python3
"""Serves the maze's strategy agent from Python, so that baton's Go trials act with it.

The policy is a Python function of the strategy's flat observation (the map, the
position and the four direction-mask entries) and its action mask: "oracle" walks a
shortest path to the goal (breadth-first search over the map in the observation),
"random" picks a walkable direction at random, "model" plays the model train_strategy.py
saved (--model strategy_bc.pt: behaviour cloned from a log), "ppo" the policy
train_maze.py pushed to the model registry (--model maze-strategy@1 --models DIR, or
--model FILE.onnx), in torch, greedily: the same policy that ``baton run --policy
strategy=model:maze-strategy@1`` runs in Go. Any model trained in Python serves the
same way: replace the function.

    baton envs maze --json > /tmp/maze.json          # the agents' spaces
    scripts/python examples/python/serve_policy.py \\
        --spec /tmp/maze.json --addr 127.0.0.1:50052 --key-file keys.txt
    baton run maze --trials 100 --policy strategy=grpc://127.0.0.1:50052 \\
        --policy motion=forward --key-file keys.txt

The spaces come from ``baton envs ENV --json`` (--spec) or from an environment server
(--env-server ADDR, ``baton serve env``); they must be the trial's, which the Go side
checks. Once it serves, its first line on stdout says where, as baton serve's does
("serving agent strategy of maze on grpc://127.0.0.1:50052"; port 0 lets the OS pick
one), and it stops gracefully on SIGINT or SIGTERM. Needs baton's remote extra (grpcio,
protobuf), which the project's environment (scripts/python) has.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections import deque

import numpy as np

from baton import remote

# The maze's directions (envs/maze): UP, RIGHT, DOWN, LEFT.
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))
WALL, GOAL = 0, 3


def maze_layout(spec: remote.AgentSpec):
    """(rows, cols) of the maze from the strategy's observation space: rows*cols tiles,
    then the row and the column (bounded by rows-1 and cols-1), then the mask."""
    n = spec.observation.flat_dim - 2 - spec.mask_len
    high = np.asarray(spec.observation.high).ravel()
    rows, cols = int(high[n]) + 1, int(high[n + 1]) + 1
    if n <= 0 or rows * cols != n:
        raise ValueError(f"agent {spec.name}: not the maze's observation layout ({spec.observation.flat_dim} values)")
    return rows, cols


def goal_distances(grid: np.ndarray) -> np.ndarray:
    """Every tile's distance in tiles to the goal (-1: a wall, or unreachable)."""
    dist = np.full(grid.shape, -1, dtype=np.int64)
    goals = np.argwhere(grid == GOAL)
    queue = deque()
    for g in goals:
        dist[tuple(g)] = 0
        queue.append(tuple(g))
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES:
            q = (r + dr, c + dc)
            if 0 <= q[0] < grid.shape[0] and 0 <= q[1] < grid.shape[1] and grid[q] != WALL and dist[q] < 0:
                dist[q] = dist[r, c] + 1
                queue.append(q)
    return dist


def oracle(spec: remote.AgentSpec):
    """A strategy policy that steps toward the goal along a shortest path, among the
    directions the mask allows."""
    rows, cols = maze_layout(spec)
    n = rows * cols
    cache = {}  # the map's bytes -> distances: a trial keeps its map

    def act(obs: np.ndarray, mask):
        tiles = obs[:n]
        key = tiles.tobytes()
        dist = cache.get(key)
        if dist is None:
            if len(cache) > 64:
                cache.clear()
            dist = cache[key] = goal_distances(tiles.reshape(rows, cols))
        r, c = int(obs[n]), int(obs[n + 1])
        allowed = [d for d in range(4) if mask is None or mask[d]]
        if not allowed:
            raise ValueError(f"no walkable direction at [{r} {c}]")

        def cost(d):
            q = (r + MOVES[d][0], c + MOVES[d][1])
            inside = 0 <= q[0] < rows and 0 <= q[1] < cols
            return dist[q] if inside and dist[q] >= 0 else n + 1

        return min(allowed, key=cost)

    return act


def cloned(spec: remote.AgentSpec, path: str):
    """The policy train_strategy.py saved at path (behaviour cloning from a log): the
    allowed direction of highest logit. The model must fit the agent's spaces."""
    import torch

    from train_strategy import Policy  # examples/python, next to this script

    saved = torch.load(path, map_location="cpu", weights_only=True)
    if saved["observation_dim"] != spec.observation.flat_dim or saved["n_actions"] != spec.action.n:
        raise ValueError(
            f"{path}: a model of {saved['observation_dim']} observation values and {saved['n_actions']} actions; "
            f"agent {spec.name} has {spec.observation.flat_dim} and {spec.action.n}"
        )
    policy = Policy(torch, saved["observation_dim"], saved["n_actions"], saved["hidden"])
    policy.net.load_state_dict(saved["state_dict"])
    policy.net.eval()
    start = int(saved["action_start"])

    def act(obs: np.ndarray, mask):
        with torch.no_grad():
            m = None if mask is None else torch.as_tensor(mask, dtype=torch.bool)[None]
            z = policy.logits(torch.as_tensor(obs, dtype=torch.float32)[None], m)
        return int(z.argmax(dim=1)[0]) + start

    return act


def ppo_policy(spec: remote.AgentSpec, ref: str, where: str | None):
    """The policy train_maze.py pushed (its ONNX export, ``PolicyGraph``) as a torch
    network: the allowed action of the largest logit, as Go's greedy policy."""
    import torch

    import train_maze  # examples/python, next to this script
    from baton import models

    if ref.endswith(".onnx"):
        with open(ref, "rb") as f:
            data = f.read()
    else:
        meta, data = models.pull(ref, where=where)
        if meta.agent and meta.agent != spec.name:
            raise ValueError(f"{meta.ref} acts for agent {meta.agent}, not {spec.name}")
    graph = train_maze.policy_graph_from_onnx(data, spec.name)

    def act(obs: np.ndarray, mask):
        with torch.no_grad():
            z = graph(torch.as_tensor(obs, dtype=torch.float32)[None])[0]
        if mask is not None:
            z = z.masked_fill(~torch.as_tensor(mask, dtype=torch.bool), -np.inf)
        return int(z.argmax())

    return act


def random_policy(spec: remote.AgentSpec, seed: int):
    """Uniform over the directions the mask allows, from a seeded generator."""
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray, mask):
        allowed = np.arange(spec.action.n) if mask is None else np.flatnonzero(mask)
        return int(rng.choice(allowed))

    return act


def agent_spec(args) -> remote.AgentSpec:
    if args.env_server:
        specs = remote.env_spec(args.env_server, args.env, args.env_config, key=args.env_key, wait_ready=True)
        by_name = {s.name: s for s in specs}
    else:
        with (sys.stdin if args.spec == "-" else open(args.spec)) as f:
            envs = json.load(f)
        env = next((e for e in envs if e.get("name") == args.env), None)
        if env is None:
            sys.exit(f"serve_policy.py: {args.spec} has no environment {args.env}")
        by_name = {a["name"]: remote.agent_spec(a) for a in env["agents"]}
    if args.agent not in by_name:
        sys.exit(f"serve_policy.py: {args.env} has no agent {args.agent} (agents: {', '.join(by_name)})")
    return by_name[args.agent]


def add_agent_args(p: argparse.ArgumentParser) -> None:
    """The flags that say where to listen and which agent of which environment is
    served, as ``agent_spec`` reads them (serve_learner.py takes the same)."""
    p.add_argument("--addr", default="127.0.0.1:0", help="where to listen (default 127.0.0.1:0: a port the OS picks)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--spec", help="the output of `baton envs ENV --json` ('-' for stdin)")
    src.add_argument("--env-server", metavar="ADDR", help="an environment server to ask for the spaces")
    p.add_argument("--env", default="maze", help="the environment (default maze)")
    p.add_argument("--env-config", default=None, help="its JSON configuration, with --env-server")
    p.add_argument("--env-key", default=None, help="the API key of --env-server")
    p.add_argument("--agent", default="strategy", help="the agent to serve (default strategy)")
    p.add_argument("--key-file", help="API keys (NAME=KEY lines, or a bare default KEY), as baton's --key-file")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_agent_args(p)
    p.add_argument("--policy", choices=("oracle", "random", "model", "ppo"), default="oracle",
                   help="oracle (default), random, model: the model train_strategy.py saved (--model), or ppo: "
                        "the model train_maze.py pushed (--model NAME@VERSION)")
    p.add_argument("--model", help="with --policy model: the file train_strategy.py saved (strategy_bc.pt); with "
                                   "--policy ppo: a reference NAME[@VERSION] in the registry (--models) or FILE.onnx")
    p.add_argument("--models", metavar="WHERE", help="with --policy ppo: the model registry (a directory or "
                                                     "grpc://HOST:PORT; default: baton.models.default_dir())")
    p.add_argument("--seed", type=int, default=1, help="the seed of the random policy")
    p.add_argument(
        "--max-workers", type=int, default=64,
        help="calls served at once (default 64): at least the trials acting at once (baton run --workers)",
    )
    p.add_argument("--tls-cert", help="the server's certificate chain (PEM), with --tls-key")
    p.add_argument("--tls-key", help="its private key (PEM)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        sys.exit("serve_policy.py: --tls-cert and --tls-key go together")
    if (args.policy in ("model", "ppo")) != bool(args.model):
        sys.exit("serve_policy.py: --policy model or ppo and --model go together")
    spec = agent_spec(args)
    if args.policy == "model":
        fn = cloned(spec, args.model)
    elif args.policy == "ppo":
        fn = ppo_policy(spec, args.model, args.models)
    elif args.policy == "oracle":
        fn = oracle(spec)
    else:
        fn = random_policy(spec, args.seed)
    keys = remote.Keys.read(args.key_file) if args.key_file else None
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server = remote.serve_policy(fn, spec, args.addr, key=keys, tls=tls, max_workers=args.max_workers)
    scheme = "grpcs" if tls else "grpc"
    print(f"serving agent {spec.name} of {args.env} on {scheme}://{server.addr}", flush=True)
    print(f"serve_policy.py: the {args.policy} policy plays agent {spec.name}", file=sys.stderr, flush=True)
    stop.wait()
    server.stop(grace=5)
    print("serve_policy.py: stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
