"""Trains the maze's hierarchy, its strategy and motion agents together, with PPO on
the fast lane (``baton.vector.make("maze", ...)``), or the flat maze ("maze-flat",
one agent moving a tile a tick) with the same PPO, and evaluates the result.

    scripts/python examples/python/train_maze.py --json
    scripts/python examples/python/train_maze.py --flat --json
    scripts/python examples/python/train_maze.py --png curve.png --env-steps 500000

Each agent name has its own small MLP policy and value (``ppo.ActorCritic``) and its
own rollout (``ppo.AgentBuffer``), filled a tick at a time with the rows of its group:
one policy call per agent name per tick, whatever the number of copies. The
strategy's decision lasts the motion agent's sub-episode: its reward arrives when
control returns to it, and its return is discounted by gamma ** span_ticks (an
option of a semi-Markov decision process; ``--no-smdp`` discounts by gamma per
decision). Masked actions get logit -inf.

Features: the map is the same in every episode of a run (the reference map, or the
one ``--config``'s map or generate gives), so each agent sees its position one-hot
and its action mask, derived from the observation the environment gives.

``--json`` prints the evaluation of the policy learned (success rate over
``--eval-episodes`` episodes, each copy's first, with actions sampled from the
policy, and with its most likely actions), with the untrained policy's for
comparison, the env steps, wall and CPU seconds, and the learning curve (the
success rate and mean return of the training episodes that ended in each rollout).
Env steps count ticks of every copy: in the hierarchy, the strategy's decisions and
the motion agent's moves each take one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

import baton.vector
from ppo import ActorCritic, AgentBuffer, PPOConfig, ppo_update

HIERARCHY, FLAT = "maze", "maze-flat"


@dataclass
class Outcome:
    """What a step reported, per copy and agent (columns in the order of ``agents``):
    rewards, span ticks, done (the agent's sub-episode or the episode ended), and per
    copy whether the episode ended, succeeded (reached the goal), and its top agent's
    reward."""

    rewards: np.ndarray
    spans: np.ndarray
    done: np.ndarray
    ended: np.ndarray
    success: np.ndarray
    top_reward: np.ndarray


class Rows:
    """A group's rows: the copies an agent acts in, their observations and masks, and
    the actions to fill."""

    def __init__(self, copies, obs, masks, actions):
        self.copies, self.obs, self.masks, self.actions = copies, obs, masks, actions


class HierarchyEnv:
    """A MultiVector of the hierarchy, its groups as Rows."""

    def __init__(self, v: baton.vector.MultiVector):
        self.v, self.num_envs = v, v.num_envs
        self.agents = list(v.agents)
        self.top = 0  # the initial agent, whose end is the episode's: the strategy
        self._done = np.zeros((v.num_envs, len(self.agents)), np.bool_)

    def _rows(self, groups):
        return {n: Rows(g.copies, g.obs, g.masks, g.actions) for n, g in groups.items()}

    def reset(self):
        return self._rows(self.v.reset())

    def step(self):
        groups, rewards, term, trunc, ended = self.v.step()
        np.logical_or(term, trunc, out=self._done)
        self._done |= ended[:, None]
        out = Outcome(rewards, self.v.spans, self._done, ended, ended & term[:, self.top], rewards[:, self.top])
        return self._rows(groups), out

    def close(self):
        self.v.close()


class FlatEnv:
    """A SingleVector as one group of every copy."""

    def __init__(self, v: baton.vector.SingleVector):
        self.v, self.num_envs = v, v.num_envs
        self.agents = list(v.agents)
        self.top = 0
        self._copies = np.arange(v.num_envs)
        self._actions = np.zeros(v.num_envs, np.int64)
        self._spans = np.ones((v.num_envs, 1), np.int64)

    def _rows(self, obs, info):
        return {self.agents[0].name: Rows(self._copies, obs, info.get("action_mask"), self._actions)}

    def reset(self):
        return self._rows(*self.v.reset())

    def step(self):
        obs, rewards, term, trunc, info = self.v.step(self._actions)
        ended = term | trunc
        out = Outcome(rewards[:, None], self._spans, ended[:, None], ended, term.copy(), rewards)
        return self._rows(obs, info), out

    def close(self):
        self.v.close()


def open_env(flat: bool, num_envs: int, seed: int, config=None, **vector_kwargs):
    """The environment to train or evaluate on; ``vector_kwargs`` go to
    ``baton.vector.make``."""
    v = baton.vector.make(FLAT if flat else HIERARCHY, num_envs=num_envs, seed=seed, config=config, **vector_kwargs)
    return (FlatEnv if flat else HierarchyEnv)(v)


class Features:
    """An agent's features: its position one-hot and its action mask, from an
    observation laid out as the maze's are (the map, row and column, the mask)."""

    def __init__(self, layout: baton.vector.AgentLayout):
        self.cells = layout.obs_dim - 2 - layout.mask_len
        self.cols = int(np.asarray(layout.observation_space.high)[self.cells + 1]) + 1
        self.dim = self.cells + layout.mask_len

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        k = len(obs)
        x = np.zeros((k, self.dim), np.float32)
        pos = obs[:, self.cells].astype(np.int64) * self.cols + obs[:, self.cells + 1].astype(np.int64)
        x[np.arange(k), pos] = 1
        x[:, self.cells:] = obs[:, self.cells + 2:]
        return x


@dataclass
class Agent:
    name: str
    features: Features
    net: ActorCritic
    opt: torch.optim.Optimizer | None = None
    buf: AgentBuffer | None = None


def make_agents(env, hidden: int, lr: float) -> dict[str, Agent]:
    agents = {}
    for layout in env.agents:
        f = Features(layout)
        net = ActorCritic(f.dim, layout.actions, hidden)
        agents[layout.name] = Agent(layout.name, f, net, torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5))
    return agents


def act(agents: dict[str, Agent], rows: dict[str, Rows], generator: torch.Generator, greedy: bool = False, t: int | None = None):
    """Fills every group's actions; with ``t``, records them in the agents' buffers."""
    for name, r in rows.items():
        if len(r.copies) == 0:
            continue
        ag = agents[name]
        x = ag.features(r.obs)
        masks = None if r.masks is None else np.array(r.masks)  # torch wants writable arrays
        a, logp, v = ag.net.act(x, masks, generator, greedy)
        r.actions[:] = a
        if t is not None:
            ag.buf.record_acts(t, r.copies, x, masks, a, logp, v)


@dataclass
class Result:
    """What ``train`` returns: the agents, the learning curve, env steps, seconds."""

    agents: dict[str, Agent]
    curve: list[dict] = field(default_factory=list)
    env_steps: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0


def train(
    *, flat: bool = False, seed: int = 1, env_steps: int = 300_000, num_envs: int = 128, rollout: int = 32,
    hidden: int = 64, cfg: PPOConfig | None = None, config=None, target: float | None = None,
    curve_every: int = 1, curve_episodes: int = 200, log=None, vector_kwargs: dict | None = None,
) -> Result:
    """Trains with PPO for ``env_steps`` env steps (whole rollouts of ``rollout`` ticks
    of ``num_envs`` copies), or until the curve's success rate reaches ``target``.
    Every ``curve_every`` rollouts (0: never) a point of the learning curve evaluates
    the policies, sampled, on ``curve_episodes`` fresh episodes (``evaluate``); their
    steps are not counted in ``env_steps``, nor their time in the seconds. A point also
    has the success rate of the training episodes that ended in the rollout
    (``train_success``), which favours short episodes early on: those are the ones
    that end within a rollout. ``vector_kwargs`` go to ``baton.vector.make``.

    >>> res = train(seed=3, env_steps=100_000)  # doctest: +SKIP
    >>> evaluate(res.agents)["success"]  # doctest: +SKIP
    1.0
    """
    cfg = cfg or PPOConfig()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    env = open_env(flat, num_envs, seed, config, **(vector_kwargs or {}))
    agents = make_agents(env, hidden, cfg.lr)
    names = [a.name for a in env.agents]
    for layout in env.agents:
        agents[layout.name].buf = AgentBuffer(rollout, num_envs, agents[layout.name].features.dim, layout.mask_len)
    res = Result(agents)
    eval_wall = eval_cpu = 0.0
    rollouts = 0
    ep_ret = np.zeros(num_envs)
    ep_ticks = np.zeros(num_envs, np.int64)
    try:
        rows = env.reset()
        while res.env_steps < env_steps:
            succ, rets, ticks = [], [], []
            for t in range(rollout):
                act(agents, rows, gen, t=t)
                rows, out = env.step()
                for j, name in enumerate(names):
                    agents[name].buf.record_outcomes(out.rewards[:, j], out.spans[:, j], out.done[:, j])
                ep_ret += out.top_reward
                ep_ticks += 1
                if out.ended.any():
                    e = np.flatnonzero(out.ended)
                    succ.append(out.success[e])
                    rets.append(ep_ret[e])
                    ticks.append(ep_ticks[e])
                    ep_ret[e] = 0
                    ep_ticks[e] = 0
            res.env_steps += rollout * num_envs
            losses = {}
            for name in names:
                ag = agents[name]
                r = rows[name]
                with torch.no_grad():
                    nv = ag.net.value(torch.from_numpy(ag.features(r.obs))).numpy() if len(r.copies) else np.zeros(0, np.float32)
                adv, ret = ag.buf.advantages(cfg, r.copies, nv)
                losses[name] = ppo_update(ag.net, ag.opt, ag.buf.batch(adv, ret), cfg, gen)
                ag.buf.carry(r.copies)
            rollouts += 1
            if not curve_every or rollouts % curve_every:
                continue
            s = np.concatenate(succ) if succ else np.zeros(0, np.bool_)
            w, c = time.perf_counter(), time.process_time()
            e = evaluate(agents, flat=flat, episodes=curve_episodes, seed=seed + 7919 * rollouts, config=config)
            eval_wall += time.perf_counter() - w
            eval_cpu += time.process_time() - c
            point = {
                "env_steps": res.env_steps,
                "success": e["success"],
                "return": e["return"],
                "episode_ticks": e["episode_ticks"],
                "train_episodes": int(len(s)),
                "train_success": float(s.mean()) if len(s) else 0.0,
            }
            res.curve.append(point)
            if log:
                ent = " ".join(f"{n}_entropy {losses[n].get('entropy', 0):.3f}" for n in names)
                log(f"env steps {point['env_steps']:>9,}  success {point['success']:.3f}  return {point['return']:.3f}  "
                    f"ticks {point['episode_ticks']:.1f}  (training episodes {len(s)}, success {point['train_success']:.3f})  {ent}")
            if target is not None and point["success"] >= target:
                break
    finally:
        env.close()
    res.wall_seconds = time.perf_counter() - wall0 - eval_wall
    res.cpu_seconds = time.process_time() - cpu0 - eval_cpu
    return res


def evaluate(agents: dict[str, Agent], *, flat: bool = False, episodes: int = 1000, seed: int = 12345,
             greedy: bool = False, config=None) -> dict:
    """The success rate, mean return and mean ticks of the first episode of each of
    ``episodes`` copies, with actions sampled from the policies (``greedy``: their
    most likely actions).

    >>> evaluate(untrained(flat=True), flat=True, episodes=300)["success"]  # doctest: +SKIP
    0.30333333333333334
    """
    gen = torch.Generator().manual_seed(seed)
    env = open_env(flat, episodes, seed, config)
    first = np.zeros(episodes, np.bool_)
    success = np.zeros(episodes, np.bool_)
    ret = np.zeros(episodes)
    ticks = np.zeros(episodes, np.int64)
    try:
        rows = env.reset()
        while not first.all():
            act(agents, rows, gen, greedy)
            rows, out = env.step()
            live = ~first
            ret[live] += out.top_reward[live]
            ticks[live] += 1
            e = out.ended & live
            success[e] = out.success[e]
            first |= out.ended
    finally:
        env.close()
    return {
        "episodes": episodes,
        "policy": "greedy" if greedy else "sampled",
        "success": float(success.mean()),
        "return": float(ret.mean()),
        "episode_ticks": float(ticks.mean()),
    }


def untrained(flat: bool = False, seed: int = 1, hidden: int = 64, config=None) -> dict[str, Agent]:
    """The agents ``train`` starts from with this seed."""
    torch.manual_seed(seed)
    env = open_env(flat, 1, seed, config)
    try:
        return make_agents(env, hidden, PPOConfig().lr)
    finally:
        env.close()


def steps_to(curve: list[dict], rate: float) -> int | None:
    """The env steps at the first curve point whose success rate is ``rate`` or more."""
    return next((p["env_steps"] for p in curve if p["success"] >= rate), None)


def plot(curves: dict[str, list[dict]], path: str, title: str = "maze: PPO") -> None:
    """Draws success rate and mean episode ticks against env steps, one line per curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, curve in curves.items():
        x = [p["env_steps"] for p in curve]
        ax1.plot(x, [p["success"] for p in curve], label=label)
        ax2.plot(x, [p["episode_ticks"] for p in curve], label=label)
    ax1.set(xlabel="env steps", ylabel="success rate (sampled policy)", ylim=(0, 1.02), title=title)
    ax2.set(xlabel="env steps", ylabel="mean episode length (ticks)", title="episode length")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
        ax.xaxis.set_major_formatter(thousands())
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def thousands():
    """A matplotlib tick formatter writing 40000 as 40k."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x else "0")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--env-steps", type=int, default=300_000, help="env step budget (default 300,000)")
    p.add_argument("--num-envs", type=int, default=128, help="copies stepped together (default 128)")
    p.add_argument("--rollout", type=int, default=32, help="ticks per rollout (default 32)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--flat", action="store_true", help="train the flat maze (maze-flat), one agent")
    p.add_argument("--smdp", action=argparse.BooleanOptionalAction, default=True,
                   help="discount the strategy's transitions by gamma ** span ticks (default on)")
    p.add_argument("--config", help="the environment's JSON configuration")
    p.add_argument("--target", type=float, help="stop once the curve's success rate reaches this")
    p.add_argument("--curve-every", type=int, default=1, help="rollouts between learning curve points (0: none; default 1)")
    p.add_argument("--curve-episodes", type=int, default=200, help="evaluation episodes per curve point (default 200)")
    p.add_argument("--eval-episodes", type=int, default=1000, help="evaluation episodes (default 1000)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=PPOConfig.lr)
    p.add_argument("--gamma", type=float, default=PPOConfig.gamma)
    p.add_argument("--ent-coef", type=float, default=PPOConfig.ent_coef)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--png", help="draw the learning curve into this PNG file")
    p.add_argument("--quiet", action="store_true", help="no per-rollout lines")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    config = json.loads(args.config) if args.config else None
    cfg = PPOConfig(lr=args.lr, gamma=args.gamma, ent_coef=args.ent_coef, smdp=args.smdp)
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr if args.json else sys.stdout, flush=True))
    before = evaluate(untrained(args.flat, args.seed, args.hidden, config), flat=args.flat,
                      episodes=args.eval_episodes, config=config)
    res = train(flat=args.flat, seed=args.seed, env_steps=args.env_steps, num_envs=args.num_envs, rollout=args.rollout,
                hidden=args.hidden, cfg=cfg, config=config, target=args.target,
                curve_every=args.curve_every, curve_episodes=args.curve_episodes, log=log)
    after = {mode: evaluate(res.agents, flat=args.flat, episodes=args.eval_episodes, greedy=mode == "greedy", config=config)
             for mode in ("sampled", "greedy")}
    report = {
        "env": FLAT if args.flat else HIERARCHY,
        "seed": args.seed,
        "smdp": args.smdp,
        "num_envs": args.num_envs,
        "env_steps": res.env_steps,
        "wall_seconds": round(res.wall_seconds, 2),
        "cpu_seconds": round(res.cpu_seconds, 2),
        "torch_threads": args.threads,
        "env_steps_to_90": steps_to(res.curve, 0.9),
        "evaluation": after["sampled"],
        "evaluation_greedy": after["greedy"],
        "untrained": before,
        "ppo": asdict(cfg),
        "curve": res.curve,
    }
    if args.png:
        plot({report["env"]: res.curve}, args.png, title=f"{report['env']}: PPO, seed {args.seed}")
    if args.json:
        print(json.dumps(report))
    else:
        e = report["evaluation"]
        print(f"{report['env']}: success {e['success']:.3f} ({e['policy']}, {e['episodes']} episodes; greedy "
              f"{report['evaluation_greedy']['success']:.3f}; untrained {report['untrained']['success']:.3f}) "
              f"after {res.env_steps:,} env steps, {res.wall_seconds:.1f} s wall, {res.cpu_seconds:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
