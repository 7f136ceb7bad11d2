"""Where hierarchy pays: the maze's hierarchy against the flat maze, under the same PPO
(train_maze.py's ``train``, over ``baton.ppo``), on generated mazes of growing size,
with one map for the whole run ("fixed") or a new map every episode ("per-episode"),
a sparse reward or a shaped one, over several seeds, with a fixed env-step budget per
size. Each run appends one JSON line to ``--out`` (default sweep_maze.jsonl); a run
already there is skipped, so an interrupted sweep resumes where it stopped.

    scripts/python examples/python/sweep_maze.py --out sweep.jsonl            # the grid
    scripts/python examples/python/sweep_maze.py --out sweep.jsonl --list     # what it runs
    scripts/python examples/python/sweep_maze.py --out sweep.jsonl --report --png sweep.png

The grid (each axis a flag): ``--sizes`` 7 11 15 21 (square mazes of that many rows
and columns, ``maze.Generate``'s), ``--maps`` fixed per-episode, ``--rewards`` sparse
shaped, ``--variants`` hierarchy flat, ``--seeds`` 1 2 3. The budget of a size is
``--base-steps`` (default 65,536) times (side / 7) squared, at most ``--cap`` (if
given), whole rollouts of
``--num-envs`` x ``--rollout`` ticks; a run stops early once a curve point reaches
``--target`` (default 0.9). An env step is a tick of one copy in both variants: in
the hierarchy a strategy decision and a motion move each take one.

Rewards. Both variants get ``reward_for_reaching_goal`` 1 for reaching the goal (the
strategy's decision that ends on it; the flat agent's move onto it). "sparse" pays
nothing else: the hierarchy's motion agent gets 0 for every move (it has nothing to
learn from, so it walks as its initial policy does). "shaped" pays every move 0.1
times the moves it took off the shortest walk to the goal (``reward_for_progress``,
the motion agent's in the hierarchy, the flat agent's): a walk earns 0.1 times the
distance it covered towards the goal, whatever its path, and stepping back and forth
earns nothing. The reference rewards (1 a forward move, -0.1 a backward one) are not
used: they pay the motion agent for walking a corridor to and fro.

Episode limits grow with the maze: the flat agent is truncated after 2 * side**2
moves; the hierarchy's strategy after side**2 // 2 decisions, the motion agent after
side moves a decision. The networks are train_maze.py's: with one map, the position
one-hot and the action mask; with a map per episode, the map too, and the
hierarchy's strategy (and the flat agent, which picks one of the same four
directions) plans on it with a value-iteration network: ``MovesPlanNet``, whose
transition is the maze's four moves (``--transition moves``, the default; its runs
record ``"transition": "moves"`` and the table names their maps "per-episode,
moves"), or ``PlanNet``, whose transition is learned (``--transition learned``, what
every run before the choice had).

``--report`` prints the table (per size, maps and reward: each variant's median env
steps to ``--target`` over the seeds that reached it, how many did, and the mean
success of the final evaluation) and ``--png`` draws the mean learning curves, one
panel per size and setting.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

import numpy as np
import torch

import train_maze
from baton.ppo import PPOConfig

SIZES = (7, 11, 15, 21)
MAPS = ("fixed", "per-episode")
REWARDS = ("sparse", "shaped")
VARIANTS = ("hierarchy", "flat")
PROGRESS = 0.1  # the shaped reward of a move, per tile it takes off the distance to the goal


def budget(side: int, base: int, num_envs: int, rollout: int, cap: int = 0) -> int:
    """The env-step budget of a side: ``base`` * (side / 7) ** 2, at most ``cap`` (0:
    no cap), rounded up to whole rollouts."""
    per = num_envs * rollout
    want = base * (side / 7) ** 2
    if cap:
        want = min(want, cap)
    return int(-(-want // per)) * per


def config_of(variant: str, side: int, maps: str, reward: str, map_seed: int = 1) -> dict:
    """The environment configuration of a run: ``maze`` (the hierarchy) or
    ``maze-flat``."""
    gen = {"rows": side, "cols": side}
    if maps == "per-episode":
        gen["per_episode"] = True
    else:
        gen["seed"] = map_seed
    if variant == "flat":
        cfg = {"generate": gen, "max_steps": 2 * side * side}
        if reward == "shaped":
            cfg["reward_for_progress"] = PROGRESS
        return cfg
    motion = {"max_steps": side}
    if reward == "shaped":
        motion["reward_for_progress"] = PROGRESS
    else:
        motion.update(reward_for_right_direction=0.0, reward_for_wrong_direction=0.0)
    return {"generate": gen, "strategy": {"max_steps": side * side // 2}, "motion": motion}


def key(run: dict) -> tuple:
    return (run["side"], run["maps"], run["reward"], run["variant"], run["seed"], planned(run),
            planned(run) and transition(run))


def planned(run: dict) -> bool:
    """Whether a run's agents that pick one of four directions plan with a value
    iteration network: with a map per episode, unless the run says otherwise
    (``planner``); never with one map."""
    return run["maps"] == "per-episode" and run.get("planner", True)


def transition(run: dict) -> str:
    """The transition of a planned run's value iteration network (train_maze.py's
    ``networks``): "moves" where the run says so, else "learned", what every run had
    before the choice existed."""
    return run.get("transition", "learned")


def setting(run: dict) -> str:
    """The maps of a run as the table and the plot name them: with a map per episode
    and no planner, "per-episode, MLP"; planned with the maze's moves (``transition``),
    "per-episode, moves"."""
    if run["maps"] != "per-episode":
        return run["maps"]
    if not planned(run):
        return run["maps"] + ", MLP"
    return run["maps"] + (", moves" if transition(run) == "moves" else "")


def extra(args, maps: str) -> dict:
    """What a run of these maps records of its networks beyond the grid's keys: no
    planner, or the moves planner (runs before it record neither)."""
    if not args.planner:
        return {"planner": False}
    return {"transition": "moves"} if maps == "per-episode" and args.transition == "moves" else {}


def grid(args) -> list[dict]:
    return [
        {"side": s, "maps": m, "reward": r, "variant": v, "seed": seed, **extra(args, m)}
        for s, m, r, v, seed in itertools.product(args.sizes, args.maps, args.rewards, args.variants, args.seeds)
    ]


def run_one(spec: dict, args) -> dict:
    """Trains one run of the grid and evaluates it on ``--eval-episodes`` fresh
    episodes (with a map per episode: maps the training drew with other seeds)."""
    torch.manual_seed(spec["seed"])
    side, flat = spec["side"], spec["variant"] == "flat"
    per = spec["maps"] == "per-episode"
    config = config_of(spec["variant"], side, spec["maps"], spec["reward"])
    steps = budget(side, args.base_steps, args.num_envs, args.rollout, args.cap)
    res = train_maze.train(flat=flat, seed=spec["seed"], env_steps=steps, num_envs=args.num_envs, rollout=args.rollout,
                           cfg=PPOConfig(), config=config, target=args.target, curve_every=args.curve_every,
                           curve_episodes=args.curve_episodes, with_map=per, planner=args.planner,
                           transition=transition(spec))
    final = train_maze.evaluate(res.agents, flat=flat, episodes=args.eval_episodes, config=config, seed=10_007 + spec["seed"])
    return {
        **spec,
        "config": config,
        "budget": steps,
        "env_steps": res.env_steps,
        "env_steps_to_target": train_maze.steps_to(res.curve, args.target),
        "target": args.target,
        "final_success": final["success"],
        "final_return": final["return"],
        "wall_seconds": round(res.wall_seconds, 2),
        "cpu_seconds": round(res.cpu_seconds, 2),
        "curve_every": args.curve_every,
        "curve_episodes": args.curve_episodes,
        "eval_episodes": args.eval_episodes,
        "load": round(os.getloadavg()[0], 1),
        "curve": [{k: p[k] for k in ("env_steps", "success", "return")} for p in res.curve],
    }


def load(*paths: str) -> list[dict]:
    """The runs of JSON lines files, the first of each key (``key``) only."""
    runs, seen = [], set()
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.strip() and key(run := json.loads(line)) not in seen:
                    seen.add(key(run))
                    runs.append(run)
    return runs


def table(runs: list[dict]) -> str:
    """A Markdown table: per size, maps and reward, the budgets of its runs, each
    variant's median env steps to the target over the seeds that reached it (of the
    seeds run), and the mean final success."""
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in runs:
        groups.setdefault((r["side"], setting(r), r["reward"]), {}).setdefault(r["variant"], []).append(r)
    lines = [
        "| size | maps | reward | budget | hierarchy: steps to target (reached/seeds) | hierarchy: final success | "
        "flat: steps to target (reached/seeds) | flat: final success |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for (side, maps, reward), by in sorted(groups.items()):
        cells = []
        for v in VARIANTS:
            rs = by.get(v, [])
            if not rs:
                cells += ["not run", "not run"]
                continue
            hit = [r["env_steps_to_target"] for r in rs if r["env_steps_to_target"] is not None]
            med = f"{int(np.median(hit)):,}" if hit else "not reached"
            cells += [f"{med} ({len(hit)}/{len(rs)})", f"{np.mean([r['final_success'] for r in rs]):.3f}"]
        b = " / ".join(f"{x:,}" for x in sorted({r["budget"] for rs in by.values() for r in rs}))
        lines.append(f"| {side}x{side} | {maps} | {reward} | {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(runs: list[dict], path: str, target: float) -> None:
    """The mean success curve of each variant over its seeds (a run that stopped at the
    target holds its last point), one panel per size and setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["side"], setting(r), r["reward"]) for r in runs})
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False, sharey=True)
    for ax, (side, maps, reward) in zip(axes.flat, panels):
        for v, color in zip(VARIANTS, ("tab:blue", "tab:orange")):
            rs = [r for r in runs if (r["side"], setting(r), r["reward"], r["variant"]) == (side, maps, reward, v)]
            if not rs:
                continue
            xs = sorted({p["env_steps"] for r in rs for p in r["curve"]})
            ys = []
            for r in rs:
                x = [p["env_steps"] for p in r["curve"]]
                y = [p["success"] for p in r["curve"]]
                ax.plot(x, y, color=color, alpha=0.25, lw=0.8)
                ys.append(np.interp(xs, x, y, right=y[-1]) if x else np.zeros(len(xs)))
            ax.plot(xs, np.mean(ys, 0), color=color, lw=2, label=f"{v} ({len(rs)} seeds)")
        ax.axhline(target, color="grey", ls=":", lw=0.8)
        ax.set_title(f"{side}x{side}, {maps}, {reward}", fontsize=9)
        ax.set_xlabel("env steps")
        ax.legend(fontsize=7, loc="best")
        ax.xaxis.set_major_formatter(train_maze.thousands())
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    axes[0][0].set_ylabel("success (sampled)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="sweep_maze.jsonl", help="the JSON lines file runs append to (and resume from)")
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--maps", nargs="+", default=list(MAPS), choices=MAPS)
    p.add_argument("--rewards", nargs="+", default=list(REWARDS), choices=REWARDS)
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--base-steps", type=int, default=65_536, help="the 7x7 budget; a size's is this times (side/7)**2")
    p.add_argument("--cap", type=int, default=0,
                   help="the most env steps of any size's budget (0: none), where the larger sizes do not fit the machine")
    p.add_argument("--planner", action=argparse.BooleanOptionalAction, default=True,
                   help="with a map per episode, the agents that pick a direction plan with a value-iteration network "
                        "(default on; off: an MLP over the map and position, far cheaper on large maps)")
    p.add_argument("--transition", choices=train_maze.TRANSITIONS, default="moves",
                   help="the value-iteration network's transition (train_maze.py's --transition; default moves)")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--rollout", type=int, default=32)
    p.add_argument("--target", type=float, default=0.9)
    p.add_argument("--curve-every", type=int, default=2, help="rollouts between curve points (default 2)")
    p.add_argument("--curve-episodes", type=int, default=100)
    p.add_argument("--eval-episodes", type=int, default=500)
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--list", action="store_true", help="list the runs still to do and their budgets, and stop")
    p.add_argument("--report", action="store_true", help="print the table of the runs in --out, and stop")
    p.add_argument("--png", help="draw the curves of the runs in --out into this PNG")
    p.add_argument("--merge", nargs="*", default=[], help="more JSON lines files whose runs count as done and report")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    done = {key(r) for r in load(args.out, *args.merge)}
    todo = [s for s in grid(args) if key(s) not in done]
    if args.list:
        for s in todo:
            print(json.dumps({**s, "budget": budget(s["side"], args.base_steps, args.num_envs, args.rollout, args.cap)}))
        return 0
    if not args.report:
        for i, spec in enumerate(todo, 1):
            t = time.perf_counter()
            run = run_one(spec, args)
            with open(args.out, "a") as f:
                f.write(json.dumps(run) + "\n")
            print(f"[{i}/{len(todo)}] {spec}: to {args.target}: {run['env_steps_to_target']}, "
                  f"final {run['final_success']:.3f}, {time.perf_counter() - t:.0f} s (load {run['load']})",
                  file=sys.stderr, flush=True)
    runs = load(args.out, *args.merge)
    print(table(runs))
    if args.png and runs:
        plot(runs, args.png, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
