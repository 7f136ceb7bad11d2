"""python -m baton.ppo: trains every agent of a registered environment with PPO on the
fast lane and evaluates the result against the untrained policies.

    python -m baton.ppo --env maze --steps 30000 --json
    python -m baton.ppo --env cartpole --ppo '{"num_envs": 32}' --steps 100000 --png cartpole.png
    python -m baton.ppo --env webtest --agent strategy --policy motion=scripted --config @shop.json
    python -m baton.ppo --env myenv --library ./libmyenv.so --steps 100000

``--config`` is the environment's JSON configuration and ``--ppo`` the
hyperparameters (``baton.ppo.PPOConfig``'s fields), each JSON text or @FILE.
``--json`` prints the report: the evaluation of the learned policies (the first
episode of each of ``--eval-episodes`` copies, actions sampled, and greedy) and of the
untrained ones (close to uniform over the allowed actions) on a vector seed of their
own, the env steps, wall and CPU seconds, and the learning curve (the training
episodes' mean return, terminated fraction and ticks, a point every
``--curve-every`` rollouts).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from dataclasses import asdict, replace
from typing import Any

import torch

from .. import vector as _vector
from .._lane import native as _native
from ..schedule import derive_seed
from ._core import PPOConfig, load_json
from ._train import evaluate, plot, train, untrained

EVAL_SEED = 0x6576616C  # the evaluation's vector seed ("eval"), before derive_seed


def _policies(pairs: list[str]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for p in pairs:
        name, sep, policy = p.partition("=")
        if not sep or not name or not policy:
            raise SystemExit(f"baton.ppo: --policy {p!r}: want AGENT=POLICY (a registry policy of that agent)")
        out[name] = policy
    return out or None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    doc = __doc__ or ""
    p = argparse.ArgumentParser(prog="python -m baton.ppo", description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(doc.split("\n\n")[1:]))
    p.add_argument("--env", required=True, help="the registered environment to train (maze, maze-flat, cartpole, ...)")
    p.add_argument("--config", help="the environment's JSON configuration: JSON text or @FILE")
    p.add_argument("--ppo", help="PPO's hyperparameters (PPOConfig's fields): JSON text or @FILE")
    p.add_argument("--steps", type=int, default=100_000, help="env step budget, ticks of every copy (default 100,000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--agent", help="train this agent of a hierarchy only, the others driven by --policy in Go")
    p.add_argument("--policy", action="append", default=[], metavar="AGENT=POLICY",
                   help="a registry policy for another agent (with --agent; repeatable)")
    p.add_argument("--library", help="the fast lane library holding the environment (a user's own build)")
    p.add_argument("--workers", type=int, default=1, help="Go threads stepping the copies (default 1)")
    p.add_argument("--log", help="record the training episodes into an activity log in this directory")
    p.add_argument("--eval-episodes", type=int, default=200, help="evaluation episodes (default 200; 0: none)")
    p.add_argument("--curve-every", type=int, default=1, help="rollouts a learning curve point covers (default 1)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the same seed, the same curve)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--png", help="draw the learning curve into this PNG file (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no line per curve point")
    return p.parse_args(argv)


def _library_kwargs(library: str | None) -> dict[str, Any]:
    """``library=`` for ``baton.vector.make`` where it takes one; else the library is
    named by BATON_LIBRARY, which the process reads when it loads the fast lane, at its
    first vector."""
    if library is None:
        return {}
    if "library" in inspect.signature(_vector.make).parameters:
        return {"library": library}
    if _native.loaded():
        raise SystemExit(f"baton.ppo: --library {library}: this process has loaded the fast lane already; "
                         "run python -m baton.ppo in a process of its own")
    os.environ["BATON_LIBRARY"] = os.path.abspath(library)
    return {}


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    """The command line; returns its exit status.

    >>> main(["--env", "cartpole", "--steps", "20000", "--json"])  # doctest: +SKIP
    0
    """
    args = parse_args(argv)
    try:
        ppo = PPOConfig.from_json(args.ppo) if args.ppo else PPOConfig()
        config = load_json(args.config, "--config") if args.config else None
    except ValueError as e:
        raise SystemExit(str(e)) from None
    if args.threads < 1:
        raise SystemExit(f"baton.ppo: --threads is {args.threads}; want 1 or more")
    policies = _policies(args.policy)
    if policies and args.agent is None:
        raise SystemExit("baton.ppo: --policy drives the other agents of the one --agent trains; give --agent too")
    torch.set_num_threads(args.threads)
    lib = _library_kwargs(args.library)
    view = {"agent": args.agent, "policies": policies}
    train_kw: dict[str, Any] = {**lib, **view}
    if args.workers != 1:
        train_kw["workers"] = args.workers
    if args.log:
        train_kw.update(log=args.log, policy="ppo")
    eval_kw = {**lib, **view, "config": config, "seed": derive_seed(args.seed ^ EVAL_SEED, 1)}
    out = sys.stderr if args.json else sys.stdout
    log = None if args.quiet else (lambda s: print(s, file=out, flush=True))
    before = None
    if args.eval_episodes:
        start = untrained(args.env, replace(ppo, num_envs=1), seed=args.seed, config=config, **lib, **view)
        before = evaluate(start, args.env, episodes=args.eval_episodes, **eval_kw)
    res = train(args.env, ppo, steps=args.steps, seed=args.seed, config=config, curve_every=args.curve_every, progress=log,
                **train_kw)
    report: dict[str, Any] = {
        "env": args.env,
        "config": config,
        "agent": args.agent,
        "policies": policies,
        "seed": args.seed,
        "env_steps": res.env_steps,
        "wall_seconds": round(res.wall_seconds, 2),
        "cpu_seconds": round(res.cpu_seconds, 2),
        "torch_threads": args.threads,
        "ppo": asdict(ppo),
    }
    if args.eval_episodes:
        report["evaluation"] = evaluate(res.agents, args.env, episodes=args.eval_episodes, **eval_kw)
        report["evaluation_greedy"] = evaluate(res.agents, args.env, episodes=args.eval_episodes, greedy=True, **eval_kw)
        report["untrained"] = before
    if args.log:
        report["log"] = args.log
    report["curve"] = res.curve
    if args.png:
        plot({args.env: res.curve}, args.png, title=f"{args.env}: PPO, seed {args.seed}")
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{args.env}: {res.env_steps:,} env steps, {res.wall_seconds:.1f} s wall, {res.cpu_seconds:.1f} s CPU")
    for key in ("evaluation", "evaluation_greedy", "untrained"):
        if key in report:
            e = report[key]
            print(f"  {key:18} return {_fmt(e['return'])}  terminated {_fmt(e['terminated'])}  "
                  f"ticks {_fmt(e['episode_ticks'])}  ({e['policy']}, {e['episodes']} episodes)")
    return 0
