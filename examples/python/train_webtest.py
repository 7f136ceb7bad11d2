"""Trains the web tester's strategy agent (envs/webtest, "webtest": the shop site
with its planted defects) with ``baton.ppo``, the motion agent played by the
registry's scripted policy in Go, and compares it with the registry's strategy
policies, random (monkey testing) and heuristic (least-covered target first).

    scripts/python examples/python/train_webtest.py --json

The strategy is one agent of the hierarchy seen through ``baton.make_vec("webtest",
N, agent="strategy", policies={"motion": "scripted"})`` (``baton.ppo.Trainer`` with
``agent`` and ``policies``): a step lasts a decision, the motion agent's operations
(and the login procedure) run in Go in between, and ``info["span_ticks"]`` says how
many ticks the decision took, so that its return is discounted by gamma **
span_ticks (0.999 a tick: the budget is 1000 ticks). Its reward is the coverage and
the defects the decision gained, with the coverage weighted 10 rather than 1 by
default (``DEFAULT_CONFIG``; ``--config`` replaces it). Features: the observation
divided by its Box's bounds (``baton.ppo``'s default network). Env steps count ticks
(UI operations, navigations, the login's), as ``baton run`` does. The same training,
without the metrics and baselines:

    python -m baton.ppo --env webtest --agent strategy --policy motion=scripted \
        --config '{"strategy": {"reward_for_coverage": 10}}' --ppo '{"gamma": 0.999}' --steps 1000000

``--json`` prints the learned policy's coverage and defects found (mean over the
first episode of each of ``--eval-episodes`` copies, actions sampled, and greedy), the
untrained policy's, and those of ``baton run webtest --policy strategy=random`` and
``strategy=heuristic`` (run with the Go toolchain) for comparison, with env steps,
wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from baton.ppo import AgentVector, Network, PPOConfig, Trainer, untrained

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The strategy's observation (envs/webtest.Strategy.ObservationSpace): 16 target
# slots of 7 values, 6 element kinds, 3 page flags, then coverage, pages visited,
# defects found, budget left, then the session.
OBS_DIM = 135
COVERAGE, DEFECTS = 16 * 7 + 6 + 3, 16 * 7 + 6 + 3 + 2
# The shop with the strategy's coverage reward raised from 1 to 10. With the default
# rewards a defect is worth as much as covering the whole site, and PPO learns to find
# four defects fast and stop (coverage about 0.21); at 10, covering the site is worth
# twice its five defects. The metrics (coverage, defects found) do not change.
DEFAULT_CONFIG = {"strategy": {"reward_for_coverage": 10}}
# The strategy is trained; the motion agent plays the registry's scripted policy.
VIEW = {"agent": "strategy", "policies": {"motion": "scripted"}}


def _check(layouts) -> None:
    (a,) = layouts
    if a.obs_dim != OBS_DIM:
        raise RuntimeError(f"webtest: the strategy's observation has {a.obs_dim} values; want {OBS_DIM}")


class WebtestTrainer(Trainer):
    """A ``baton.ppo.Trainer`` of the strategy that keeps the coverage and defects
    found of the training episodes that ended (``ended``, a list of [k, 2] arrays)."""

    def __init__(self, *args, **kwargs):
        self.ended: list[np.ndarray] = []
        super().__init__(*args, **kwargs)

    def on_step(self, rows, outcome) -> None:
        if outcome is not None and outcome.ended.any():
            self.ended.append(outcome.final_obs[outcome.ended][:, [COVERAGE, DEFECTS]])


def train(*, seed=1, env_steps=1_000_000, num_envs=64, rollout=32, hidden=64, cfg: PPOConfig | None = None,
          config=None, log=None, vector_kwargs=None):
    """PPO on the strategy agent for ``env_steps`` ticks (whole rollouts of ``rollout``
    decisions of ``num_envs`` copies; they and ``hidden`` replace ``cfg``'s). Returns
    the network, a curve of the training episodes' coverage and defects per rollout,
    the ticks, wall and CPU seconds."""
    cfg = replace(cfg or PPOConfig(), num_envs=num_envs, rollout=rollout, hidden=hidden)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    curve = []
    with WebtestTrainer("webtest", cfg, seed=seed, config=config, **VIEW, **(vector_kwargs or {})) as t:
        _check(t.vector.agents)
        while t.env_steps < env_steps:
            t.ended.clear()
            r = t.rollout()
            m = np.concatenate(t.ended) if t.ended else np.zeros((0, 2), np.float32)
            c, d = m[:, 0], m[:, 1]
            point = {"env_steps": t.env_steps, "episodes": int(len(c)),
                     "coverage": float(c.mean()) if len(c) else None, "defects_found": float(d.mean()) if len(d) else None}
            curve.append(point)
            if log and len(c):
                log(f"env steps {t.env_steps:>10,}  episodes {len(c):>4}  coverage {point['coverage']:.3f}  "
                    f"defects {point['defects_found']:.2f}  entropy {r.losses['strategy'].get('entropy', 0):.3f}")
        net = t.agents["strategy"].net
    return net, curve, t.env_steps, time.perf_counter() - wall0, time.process_time() - cpu0


def untrained_net(seed: int = 1, hidden: int = 64, config=None) -> Network:
    """The network ``train`` starts from with this seed."""
    return untrained("webtest", PPOConfig(hidden=hidden), seed=seed, config=config, **VIEW)["strategy"].net


def evaluate(net: Network, *, episodes=200, seed=12345, greedy=False, config=None) -> dict:
    """Coverage and defects found of the first episode of each of ``episodes`` copies."""
    gen = torch.Generator().manual_seed(seed)
    done = np.zeros(episodes, np.bool_)
    cov = np.zeros(episodes)
    found = np.zeros(episodes)
    ticks = np.zeros(episodes, np.int64)
    with AgentVector("webtest", episodes, config=config, **VIEW) as v:
        _check(v.agents)
        (r,) = v.reset(seed).values()
        while not done.all():
            a, _, _ = net.act(net.features(r.obs), np.array(r.masks), gen, greedy)
            r.actions[:] = a
            rows, out = v.step()
            (r,) = rows.values()
            ticks[~done] += out.ticks[~done]
            e = out.ended & ~done
            cov[e] = out.final_obs[e, COVERAGE]
            found[e] = out.final_obs[e, DEFECTS]
            done |= out.ended
    return {"episodes": episodes, "policy": "greedy" if greedy else "sampled", "coverage": float(cov.mean()),
            "defects_found": float(found.mean()), "found_all": float((found >= 5).mean()), "episode_ticks": float(ticks.mean())}


def baseline(policy: str, trials: int, config=None) -> dict:
    """``baton run webtest --policy strategy=POLICY`` (motion scripted), via go run."""
    cmd = ["go", "run", "./cmd/baton", "run", "webtest", "--trials", str(trials), "--policy", f"strategy={policy}",
           "--policy", "motion=scripted", "--json"]
    if config:
        cmd += ["--env-config", json.dumps(config)]
    out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    s = json.loads(out)
    return {"episodes": s["episodes"], "policy": policy, "coverage": s["metrics"]["coverage"]["mean"],
            "defects_found": s["metrics"]["defects_found"]["mean"], "found_all": s["success_rate"],
            "episode_ticks": s["env_steps"] / max(s["episodes"], 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--env-steps", type=int, default=1_000_000, help="tick budget (default 1,000,000)")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--rollout", type=int, default=32, help="decisions per rollout (default 32)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--config", default=json.dumps(DEFAULT_CONFIG),
                   help=f"the environment's JSON configuration (default {json.dumps(DEFAULT_CONFIG)})")
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--lr", type=float, default=PPOConfig.lr)
    p.add_argument("--gamma", type=float, default=0.999, help="discount per tick (default 0.999: the budget is 1000)")
    p.add_argument("--ent-coef", type=float, default=PPOConfig.ent_coef)
    p.add_argument("--no-baselines", action="store_true", help="do not run the registry's policies with go run")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = json.loads(args.config) if args.config else None
    log = lambda s: print(s, file=sys.stderr if args.json else sys.stdout, flush=True)  # noqa: E731
    before = evaluate(untrained_net(args.seed, config=config), episodes=args.eval_episodes, config=config)
    net, curve, ticks, wall, cpu = train(seed=args.seed, env_steps=args.env_steps, num_envs=args.num_envs,
                                         rollout=args.rollout, cfg=PPOConfig(lr=args.lr, gamma=args.gamma, ent_coef=args.ent_coef),
                                         config=config, log=log)
    report = {
        "env": "webtest", "config": config, "seed": args.seed, "env_steps": ticks, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
        "evaluation": evaluate(net, episodes=args.eval_episodes, config=config),
        "evaluation_greedy": evaluate(net, episodes=args.eval_episodes, greedy=True, config=config),
        "untrained": before,
    }
    if not args.no_baselines:
        report["random"] = baseline("random", args.eval_episodes, config)
        report["heuristic"] = baseline("heuristic", args.eval_episodes, config)
    report["curve"] = curve
    if args.json:
        print(json.dumps(report))
    else:
        for k in ("evaluation", "evaluation_greedy", "untrained", "random", "heuristic"):
            if k in report:
                r = report[k]
                print(f"{k:18} coverage {r['coverage']:.3f}  defects {r['defects_found']:.2f}  found all {r['found_all']:.3f}  "
                      f"ticks {r['episode_ticks']:.0f}")
        print(f"{ticks:,} env steps, {wall:.1f} s wall, {cpu:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
