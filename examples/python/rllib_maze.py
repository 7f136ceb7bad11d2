"""Trains the maze's hierarchy, its strategy and motion agents together, with RLlib's
PPO on RLlib's new API stack, through ``baton.rllib``, and evaluates the result.

    scripts/python examples/python/rllib_maze.py --json
    scripts/python examples/python/rllib_maze.py --env-runners 1 --iterations 5
    scripts/python examples/python/rllib_maze.py --remote 127.0.0.1:50051 --json   # after `baton serve env`

Each env runner (``--env-runners``, 2 by default: Ray worker processes) makes its
copies of ``baton.rllib.BatonMultiAgentEnv``: the maze stepped by Go in that process
(the fast lane), or, with ``--remote ADDR``, over gRPC by a ``baton serve env`` server.
Agent ids are per invocation (``strategy_0``, ``motion_0``, ``motion_1``, ...; or,
with ``--agent-ids name``, one per agent name, ``strategy`` and ``motion``) and
``baton.rllib.policy_mapping_fn`` maps them to two RLModules, "strategy" and "motion":
RLlib's ``ActionMaskingTorchRLModule`` (PPO's default MLP, masked logits), fed the
Dict observations ``{"observations", "action_mask"}`` of ``"action_masking": True``.
The copies take ``"invalid_action": "terminate"``: each env runner checks its env with
RLlib's ``check_multiagent_environments``, which steps an action sampled without the
mask; the masked modules never choose an invalid one.

Training runs ``--iterations`` PPO iterations (``--batch`` env steps each) or until
the success rate, evaluated after every ``--eval-every`` iterations, reaches
``--target``. Evaluation plays ``--eval-episodes`` fresh episodes (seeds 10**6 + i) on
the fast lane in this process with the trained modules, their actions sampled from
the masked distributions (``success``) and, once at the end, their most likely
actions (``greedy``), and counts the episodes whose strategy reached the goal. ``--json``
prints the iterations, env steps sampled, both success rates, and wall and CPU seconds
(CPU of this process and its children, Ray's workers included, as ``resource``
counts them once they end: the figure is taken after ``ray.shutdown``).

Features: RLlib's masking module is fed what ``train_maze.py`` feeds its MLPs, the
agent's position one-hot and its action mask, computed inside the module from the
observation (the map is the same in every episode); the environment's spaces stay
its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

# Ray's single-machine switch: its nodes, driver and workers use 127.0.0.1 (read when
# ray is first imported, by baton.rllib).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import baton.rllib  # noqa: E402


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def masked_module_class():
    """RLlib's ``ActionMaskingTorchRLModule`` fed the features ``train_maze.py`` uses: the
    map is the same in every episode, so the agent's position, one-hot, and its action
    mask, derived from the observation (the map's cells, row and column, the mask).
    The module's encoder sees the features; the env's spaces stay the raw ones."""
    import gymnasium as gym
    from ray.rllib.core.columns import Columns
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    class MazeMaskingModule(ActionMaskingTorchRLModule):
        def __init__(self, *, observation_space=None, **kw):
            raw = observation_space["observations"]
            mask_len = observation_space["action_mask"].shape[0]
            self._cells = raw.shape[0] - 2 - mask_len
            self._cols = int(raw.high[self._cells + 1]) + 1
            feat = gym.spaces.Box(0.0, 1.0, (self._cells + mask_len,), np.float32)
            super().__init__(observation_space=gym.spaces.Dict(
                {"observations": feat, "action_mask": observation_space["action_mask"]}), **kw)

        def _features(self, obs):
            c = self._cells
            pos = obs[..., c].long() * self._cols + obs[..., c + 1].long()
            one_hot = torch.nn.functional.one_hot(pos, c).to(obs.dtype)
            return torch.cat([one_hot, obs[..., c + 2:]], dim=-1)

        def _preprocess_batch(self, batch, **kwargs):
            action_mask, batch = super()._preprocess_batch(batch, **kwargs)
            batch[Columns.OBS] = self._features(batch[Columns.OBS])
            return action_mask, batch

    return MazeMaskingModule


def ppo_config(env_config: dict, *, env_runners: int = 2, envs_per_runner: int = 4, batch: int = 2000,
               minibatch: int = 250, epochs: int = 6, lr: float = 3e-3, hidden: int = 64, seed: int = 1,
               episodes_to_numpy: bool = True, runner: str = "rllib"):
    """The PPO config: two masked RLModules, one per agent name, every id mapped to its
    name's module; ``runner`` "baton" samples with ``baton.rllib.MultiAgentEnvRunner``,
    "rllib" with RLlib's own."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    name = baton.rllib.register()
    module = RLModuleSpec(
        module_class=masked_module_class(),
        model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [], "vf_share_layers": False},
    )
    return (
        PPOConfig()
        .environment(name, env_config={**env_config, "action_masking": True, "invalid_action": "terminate"})
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner,
                     num_cpus_per_env_runner=0, rollout_fragment_length="auto",
                     episodes_to_numpy=episodes_to_numpy,
                     env_runner_cls=baton.rllib.MultiAgentEnvRunner if runner == "baton" else None)
        .learners(num_learners=0)
        .multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=baton.rllib.policy_mapping_fn)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"strategy": module, "motion": module}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr,
                  gamma=0.99, lambda_=0.95, entropy_coeff=0.01)
        .debugging(seed=seed)
    )


def evaluate(modules: dict, env_config: dict, episodes: int = 200, seed: int = 10**6, greedy: bool = True) -> dict:
    """Plays ``episodes`` fresh episodes (seeds ``seed + i``) on the fast lane with each
    module's most likely (masked) action, or with actions sampled from its masked
    distribution (``greedy=False``, from a torch generator seeded with ``seed``);
    returns the success rate and the mean ticks an episode."""
    from ray.rllib.core.columns import Columns

    cfg = {k: v for k, v in env_config.items() if k not in ("address", "key")}
    env = baton.rllib.BatonMultiAgentEnv({**cfg, "action_masking": True})
    gen = torch.Generator().manual_seed(seed)
    wins, ticks = 0, 0
    with torch.no_grad():
        for e in range(episodes):
            obs, _ = env.reset(seed=seed + e)
            aid = next(iter(obs))
            while True:
                batch = {Columns.OBS: {k: torch.from_numpy(np.asarray(v))[None] for k, v in obs[aid].items()}}
                logits = modules[baton.rllib.agent_name(aid)].forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
                if greedy:
                    a = int(torch.argmax(logits))
                else:
                    a = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen))
                obs, _, terms, truncs, _ = env.step({aid: a})
                ticks += 1
                if terms["__all__"] or truncs["__all__"]:
                    wins += bool(terms["__all__"])
                    break
                (aid,) = [i for i in obs if not (terms.get(i) or truncs.get(i))]
    env.close()
    return {"success": wins / episodes, "episode_ticks": ticks / episodes}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env-runners", type=int, default=2, help="RLlib env runners (Ray worker processes)")
    p.add_argument("--envs-per-runner", type=int, default=4)
    p.add_argument("--iterations", type=int, default=30, help="the most PPO iterations")
    p.add_argument("--batch", type=int, default=2000, help="env steps an iteration (train_batch_size_per_learner)")
    p.add_argument("--minibatch", type=int, default=250)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--agent-ids", choices=("invocation", "name"), default="invocation",
                   help="RLlib's agent ids: one per invocation (motion_0, motion_1, ...) or one per agent name")
    p.add_argument("--episodes-to-numpy", choices=("true", "false"), default="true",
                   help="RLlib's episodes_to_numpy (false: the env runners return episodes as lists)")
    p.add_argument("--config", help="the maze's JSON configuration")
    p.add_argument("--remote", metavar="ADDR", help="step the copies on a `baton serve env` server at ADDR")
    p.add_argument("--target", type=float, default=0.95, help="stop once the sampled success reaches this")
    p.add_argument("--eval-every", type=int, default=2)
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--num-cpus", type=int, default=2, help="the CPUs Ray may use")
    p.add_argument("--runner", choices=("baton", "rllib"), default="baton",
                   help="the env runner: baton.rllib.MultiAgentEnvRunner or RLlib's own")
    p.add_argument("--json", action="store_true")
    return p.parse_args(argv)


def run(args) -> dict:
    # Ray's nodes on 127.0.0.1 (its single-machine switch, read when ray is imported),
    # not on the machine's network address.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray

    env_config: dict = {"env": "maze", "seed": args.seed, "agent_ids": args.agent_ids}
    if args.config:
        env_config["config"] = json.loads(args.config)
    if args.remote:
        env_config["address"] = args.remote
    torch.manual_seed(args.seed)
    t0, c0 = time.perf_counter(), cpu_seconds()
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, configure_logging=False)
    curve: list[dict] = []
    try:
        algo = ppo_config(env_config, env_runners=args.env_runners, envs_per_runner=args.envs_per_runner,
                          batch=args.batch, minibatch=args.minibatch, epochs=args.epochs, lr=args.lr,
                          hidden=args.hidden, seed=args.seed,
                          episodes_to_numpy=args.episodes_to_numpy == "true", runner=args.runner).build_algo()
        steps, it, ev, greedy = 0, 0, {"success": 0.0, "episode_ticks": 0.0}, {}
        for it in range(1, args.iterations + 1):
            res = algo.train()
            steps = int(res["env_runners"]["num_env_steps_sampled_lifetime"])
            point = {"iteration": it, "env_steps": steps,
                     "episode_return": float(res["env_runners"].get("episode_return_mean", float("nan"))),
                     "module_returns": {k: round(float(v), 3) for k, v in res["env_runners"].get("module_episode_returns_mean", {}).items()},
                     "wall_seconds": round(time.perf_counter() - t0, 1)}
            if it % args.eval_every == 0 or it == args.iterations:
                modules = {m: algo.get_module(m) for m in ("strategy", "motion")}
                ev = evaluate(modules, env_config, args.eval_episodes, greedy=False)
                point.update(ev)
            curve.append(point)
            if not args.json:
                print(json.dumps(point), file=sys.stderr)
            if ev["success"] >= args.target and "success" in point:
                break
        greedy = evaluate({m: algo.get_module(m) for m in ("strategy", "motion")}, env_config, args.eval_episodes)
        algo.stop()
    finally:
        ray.shutdown()
    return {
        "env": "maze", "agent_ids": args.agent_ids, "episodes_to_numpy": args.episodes_to_numpy == "true",
        "remote": args.remote, "env_runners": args.env_runners, "iterations": it,
        "env_steps": steps, "success": ev["success"], "episode_ticks": ev["episode_ticks"],
        "greedy": greedy,
        "eval_episodes": args.eval_episodes, "wall_seconds": round(time.perf_counter() - t0, 1),
        "cpu_seconds": round(cpu_seconds() - c0, 1), "seed": args.seed, "curve": curve,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    out = run(args)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['iterations']} iterations, {out['env_steps']:,} env steps: success {out['success']:.3f} sampled, "
              f"{out['greedy'].get('success', float('nan')):.3f} greedy "
              f"({out['wall_seconds']} s wall, {out['cpu_seconds']} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
