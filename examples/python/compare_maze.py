"""Compares the maze's hierarchy with the flat maze under the same PPO and the same env
step budget (train_maze.py's ``train``), over several seeds, and draws their
learning curves on one plot.

    scripts/python examples/python/compare_maze.py --png docs/img/maze_flat_vs_hierarchy.png --json

Variants (``--variants``): "hierarchy" (strategy and motion learned together, the
strategy's returns discounted by gamma ** span ticks), "hierarchy-per-decision" (the
same, discounted by gamma per decision), "hierarchy-backward-1.5" (the motion agent's
backward move rewarded -1.5 rather than -0.1, so that stepping back and forth to
collect forward rewards no longer pays) and "flat" (one agent, a tile a tick). An env
step is a tick of one copy in every variant: in the hierarchy, a strategy decision and
a motion move each take one. The curve's success rate is the sampled policy's on fresh
episodes after each rollout; ``--json`` prints, per variant and seed, the env steps at
which it first reached 90 % and 100 %, the final evaluation, and wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch

import train_maze
from baton.ppo import PPOConfig

VARIANTS = {
    "hierarchy": dict(flat=False, smdp=True),
    "hierarchy-per-decision": dict(flat=False, smdp=False),
    # A backward move that costs more than a forward move earns: stepping back and
    # forth no longer pays the motion agent (with the reference -0.1 a pair earns 0.9).
    "hierarchy-backward-1.5": dict(flat=False, smdp=True, config={"motion": {"reward_for_wrong_direction": -1.5}}),
    "flat": dict(flat=True, smdp=True),
}


def compare(variants, seeds, env_steps, num_envs, rollout, curve_episodes, eval_episodes, log=None):
    out = {}
    for name in variants:
        v = VARIANTS[name]
        runs = []
        for seed in seeds:
            config = v.get("config")
            res = train_maze.train(flat=v["flat"], seed=seed, env_steps=env_steps, num_envs=num_envs, rollout=rollout,
                                   cfg=PPOConfig(smdp=v["smdp"]), config=config, curve_episodes=curve_episodes)
            final = train_maze.evaluate(res.agents, flat=v["flat"], episodes=eval_episodes, config=config)
            run = {
                "seed": seed,
                "env_steps_to_90": train_maze.steps_to(res.curve, 0.9),
                "env_steps_to_100": train_maze.steps_to(res.curve, 1.0),
                "evaluation": final,
                "wall_seconds": round(res.wall_seconds, 2),
                "cpu_seconds": round(res.cpu_seconds, 2),
                "curve": res.curve,
            }
            runs.append(run)
            if log:
                log(f"{name} seed {seed}: 90 % at {run['env_steps_to_90']} env steps, final success "
                    f"{final['success']:.3f} ({final['episode_ticks']:.1f} ticks), {run['wall_seconds']} s wall, "
                    f"{run['cpu_seconds']} s CPU")
        to90 = [r["env_steps_to_90"] for r in runs]
        out[name] = {
            "config": v.get("config"),
        "env_steps_to_90_median": float(np.median(to90)) if None not in to90 else None,
            "runs": runs,
        }
    return out


def plot(results: dict, path: str, env_steps: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, r in results.items():
        runs = r["runs"]
        x = np.array([p["env_steps"] for p in runs[0]["curve"]])
        succ = np.array([[p["success"] for p in run["curve"]] for run in runs])
        ticks = np.array([[p["episode_ticks"] for p in run["curve"]] for run in runs])
        label = f"{name} ({len(runs)} seeds)"
        for ax, y in ((ax1, succ), (ax2, ticks)):
            line, = ax.plot(x, y.mean(0), label=label)
            ax.fill_between(x, y.min(0), y.max(0), color=line.get_color(), alpha=0.2)
    ax1.axhline(0.9, color="grey", lw=0.8, ls="--")
    ax1.set(xlabel="env steps", ylabel="success rate (sampled policy)", ylim=(0, 1.02),
            title=f"maze: PPO, hierarchy vs flat ({env_steps:,} env steps)")
    ax2.set(xlabel="env steps", ylabel="mean episode length (ticks)", title="episode length (mean, min-max over seeds)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.xaxis.set_major_formatter(train_maze.thousands())
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default="hierarchy,flat", help=f"comma-separated, of {', '.join(VARIANTS)}")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--env-steps", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=128)
    p.add_argument("--rollout", type=int, default=32)
    p.add_argument("--curve-episodes", type=int, default=200)
    p.add_argument("--eval-episodes", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--png", help="draw the curves into this PNG file")
    p.add_argument("--json", action="store_true", help="print the results as JSON (curves left out)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        p.error(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    seeds = [int(s) for s in args.seeds.split(",")]
    results = compare(variants, seeds, args.env_steps, args.num_envs, args.rollout, args.curve_episodes,
                      args.eval_episodes, log=lambda s: print(s, file=sys.stderr, flush=True))
    if args.png:
        plot(results, args.png, args.env_steps)
    if args.json:
        brief = {n: {**r, "runs": [{k: v for k, v in run.items() if k != "curve"} for run in r["runs"]]} for n, r in results.items()}
        print(json.dumps(brief))
    return 0


if __name__ == "__main__":
    sys.exit(main())
