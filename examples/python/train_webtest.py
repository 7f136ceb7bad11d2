"""Trains the web tester's strategy agent (examples/webtest, "webtest": the shop site
with its planted defects) with the PPO of ppo.py, the motion agent played by the
registry's scripted policy in Go, and compares it with the registry's strategy
policies, random (monkey testing) and heuristic (least-covered target first).

    scripts/python examples/python/train_webtest.py --json

The strategy is one agent of the hierarchy seen through ``baton.make_vec("webtest",
N, agent="strategy", policies={"motion": "scripted"})``: a step lasts a decision, the
motion agent's operations (and the login procedure) run in Go in between, and
``info["span_ticks"]`` says how many ticks the decision took, so that its return is
discounted by gamma ** span_ticks (0.999 a tick: the budget is 1000 ticks). Its reward
is the coverage and the defects the decision gained, with the coverage weighted 10
rather than 1 by default (``DEFAULT_CONFIG``; ``--config`` replaces it). Features: the observation divided by its Box's bounds. Env steps
count ticks (UI operations, navigations, the login's), as ``baton run`` does.

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

import numpy as np
import torch

import baton
from ppo import ActorCritic, AgentBuffer, PPOConfig, ppo_update

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The strategy's observation (examples/webtest.Strategy.ObservationSpace): 16 target
# slots of 7 values, 6 element kinds, 3 page flags, then coverage, pages visited,
# defects found, budget left, then the session.
COVERAGE, DEFECTS = 16 * 7 + 6 + 3, 16 * 7 + 6 + 3 + 2
# The shop with the strategy's coverage reward raised from 1 to 10. With the default
# rewards a defect is worth as much as covering the whole site, and PPO learns to find
# four defects fast and stop (coverage about 0.21); at 10, covering the site is worth
# twice its five defects. The metrics (coverage, defects found) do not change.
DEFAULT_CONFIG = {"strategy": {"reward_for_coverage": 10}}


def open_env(num_envs: int, config=None, **kw):
    env = baton.make_vec("webtest", num_envs, agent="strategy", config=config, policies={"motion": "scripted"}, **kw)
    if env.single_observation_space.shape != (135,):
        raise RuntimeError(f"webtest: the strategy's observation has shape {env.single_observation_space.shape}; want (135,)")
    return env


def scale_of(env) -> np.ndarray:
    high = np.asarray(env.single_observation_space.high, np.float32)
    return np.where(np.isfinite(high) & (high > 0), 1 / np.where(high > 0, high, 1), 1).astype(np.float32)


def train(*, seed=1, env_steps=1_000_000, num_envs=64, rollout=32, hidden=64, cfg: PPOConfig | None = None,
          config=None, log=None, vector_kwargs=None):
    """PPO on the strategy agent for ``env_steps`` ticks (whole rollouts of ``rollout``
    decisions of ``num_envs`` copies). Returns the network, a curve of the training
    episodes' coverage and defects per rollout, the ticks, wall and CPU seconds."""
    cfg = cfg or PPOConfig()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    env = open_env(num_envs, config, **(vector_kwargs or {}))
    scale = scale_of(env)
    n_actions = int(env.single_action_space.n)
    net = ActorCritic(135, n_actions, hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)
    buf = AgentBuffer(rollout, num_envs, 135, n_actions)
    copies = np.arange(num_envs)
    ticks, curve = 0, []
    try:
        obs, info = env.reset(seed=seed)
        while ticks < env_steps:
            cov, found = [], []
            for t in range(rollout):
                x = obs * scale
                m = np.array(info["action_mask"])
                a, logp, v = net.act(x, m, gen)
                buf.record_acts(t, copies, x, m, a, logp, v)
                obs, rewards, term, trunc, info = env.step(a)
                buf.record_outcomes(rewards, info["span_ticks"], term | trunc)
                ticks += int(info["span_ticks"].sum())
                ended = term | trunc
                if ended.any():
                    final = info["final_obs"][ended]
                    cov.append(final[:, COVERAGE])
                    found.append(final[:, DEFECTS])
            with torch.no_grad():
                nv = net.value(torch.from_numpy(obs * scale)).numpy()
            adv, ret = buf.advantages(cfg, copies, nv)
            stats = ppo_update(net, opt, buf.batch(adv, ret), cfg, gen)
            buf.carry(copies)
            c = np.concatenate(cov) if cov else np.zeros(0)
            d = np.concatenate(found) if found else np.zeros(0)
            point = {"env_steps": ticks, "episodes": int(len(c)),
                     "coverage": float(c.mean()) if len(c) else None, "defects_found": float(d.mean()) if len(d) else None}
            curve.append(point)
            if log and len(c):
                log(f"env steps {ticks:>10,}  episodes {len(c):>4}  coverage {point['coverage']:.3f}  "
                    f"defects {point['defects_found']:.2f}  entropy {stats.get('entropy', 0):.3f}")
    finally:
        env.close()
    return net, curve, ticks, time.perf_counter() - wall0, time.process_time() - cpu0


def evaluate(net: ActorCritic, *, episodes=200, seed=12345, greedy=False, config=None) -> dict:
    """Coverage and defects found of the first episode of each of ``episodes`` copies."""
    gen = torch.Generator().manual_seed(seed)
    env = open_env(episodes, config)
    scale = scale_of(env)
    done = np.zeros(episodes, np.bool_)
    cov = np.zeros(episodes)
    found = np.zeros(episodes)
    ticks = np.zeros(episodes, np.int64)
    try:
        obs, info = env.reset(seed=seed)
        while not done.all():
            a, _, _ = net.act(obs * scale, np.array(info["action_mask"]), gen, greedy)
            obs, _, term, trunc, info = env.step(a)
            ticks[~done] += info["span_ticks"][~done]
            e = (term | trunc) & ~done
            cov[e] = info["final_obs"][e, COVERAGE]
            found[e] = info["final_obs"][e, DEFECTS]
            done |= term | trunc
    finally:
        env.close()
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
    torch.manual_seed(args.seed)
    untrained = evaluate(ActorCritic(135, 18), episodes=args.eval_episodes, config=config)
    net, curve, ticks, wall, cpu = train(seed=args.seed, env_steps=args.env_steps, num_envs=args.num_envs,
                                         rollout=args.rollout, cfg=PPOConfig(lr=args.lr, gamma=args.gamma, ent_coef=args.ent_coef),
                                         config=config, log=log)
    report = {
        "env": "webtest", "config": config, "seed": args.seed, "env_steps": ticks, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
        "evaluation": evaluate(net, episodes=args.eval_episodes, config=config),
        "evaluation_greedy": evaluate(net, episodes=args.eval_episodes, greedy=True, config=config),
        "untrained": untrained,
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
