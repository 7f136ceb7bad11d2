"""Env steps sampled per second by RLlib's env runner (PPO, the new API stack, one env
runner with 4 environments) on baton's maze
(``baton.rllib.BatonMultiAgentEnv``, agent ids per invocation and per agent name,
on RLlib's ``MultiAgentEnvRunner`` and on ``baton.rllib.MultiAgentEnvRunner``) against Gymnasium's CartPole-v1, the yardstick, with the same PPOConfig env-runner
settings; the rounds alternate (CartPole, maze per invocation, maze per name, ...) and
each maze figure is reported as a ratio against the mean of CartPole's rounds.

    scripts/python examples/python/rllib_sample_bench.py --steps 8000
    scripts/python examples/python/rllib_sample_bench.py --steps 2000 --rounds 3 --forms name
    scripts/python examples/python/rllib_sample_bench.py --steps 2000 --setting terminate

The maze's modules (``--setting``): ``masked`` (the default) is RLlib's
``ActionMaskingTorchRLModule`` (PPO's default MLP, its logits masked) on the
observations of ``"action_masking": True``, so that every action is valid and episodes
last as they do in training (46 to 48 env steps a sampled episode); ``terminate`` is
PPO's default modules, which do not read masks, with ``"invalid_action":
"terminate"``: most episodes end at an invalid action within a step or two, a
benchmark of RLlib's cost per episode. CartPole runs PPO's default module.

The env runners are RLlib's own classes (``SingleAgentEnvRunner`` for CartPole,
``MultiAgentEnvRunner`` for the maze), made from the config in this process, as the
algorithm makes its local env runner when ``num_env_runners=0``; no Ray cluster is
started. torch computes on one thread, as in Ray's worker processes. Each ``sample(num_timesteps=...)`` call asks for what is left of ``--steps``
(after a warm-up of 500), so ``--steps`` is also the size of one call: RLlib's
``MultiAgentEnvRunner`` numpy-izes every episode finished so far in a call at every
env step, a cost that grows with the steps of a call times the agent ids of each
finished episode (see docs/rllib.md).
"""

import argparse
import json
import statistics
import time

import torch
from ray.rllib.algorithms.ppo import PPOConfig

import baton.rllib


def config(env: str, env_config: dict, multi: bool, to_numpy: bool = True, runner_cls=None,
           masked: bool = False) -> PPOConfig:
    c = (
        PPOConfig()
        .environment(env, env_config=env_config)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=4, rollout_fragment_length="auto",
                     episodes_to_numpy=to_numpy, env_runner_cls=runner_cls)
        .learners(num_learners=0)
        .debugging(seed=1)
    )
    if multi:
        c = c.multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=baton.rllib.policy_mapping_fn)
    if masked:
        # RLlib's ActionMaskingTorchRLModule: PPO's default MLP with the masked logits.
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule)
        c = c.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"strategy": spec, "motion": spec}))
    return c


def runner(cfg: PPOConfig):
    """RLlib's env runner for the config, as the algorithm makes its local one."""
    if cfg.env_runner_cls is not None:
        cls = cfg.env_runner_cls
    elif cfg.is_multi_agent:
        from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner as cls
    else:
        from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner as cls
    return cls(config=cfg)


def rate(cfg: PPOConfig, steps: int, lengths: list[float] | None = None) -> float:
    """Env steps/s of one sample call of steps (after a warm-up); appends the mean
    length of the episodes it returned (finished or not) to lengths."""
    r = runner(cfg)
    try:
        r.sample(num_timesteps=500)  # warm up
        start = time.perf_counter()
        n, episodes = 0, 0
        while n < steps:
            got = r.sample(num_timesteps=steps - n)
            n += sum(len(e) for e in got)
            episodes += len(got)
        dt = time.perf_counter() - start
        if lengths is not None:
            lengths.append(n / max(episodes, 1))
        return n / dt
    finally:
        r.stop()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8000, help="env steps a round (and a sample call)")
    p.add_argument("--rounds", type=int, default=2, help="rounds of each; CartPole gets one more")
    p.add_argument("--forms", default="invocation,name", help="the maze's agent_ids forms, comma-separated")
    p.add_argument("--runners", default="rllib,baton",
                   help="the maze's env runners, comma-separated: rllib (RLlib's MultiAgentEnvRunner), "
                        "baton (baton.rllib.MultiAgentEnvRunner), baton-pipelines (the same with RLlib's "
                        "connector pipelines: direct_connectors False)")
    p.add_argument("--episodes-to-numpy", choices=("true", "false"), default="true",
                   help="RLlib's episodes_to_numpy for every env runner (RLlib's default: true)")
    p.add_argument("--setting", choices=("masked", "terminate"), default="masked",
                   help="the maze's modules: masked (RLlib's ActionMaskingTorchRLModule on the masked observations, "
                        "valid actions only: episodes as in training) or terminate (PPO's default modules, which do "
                        "not read masks; an invalid action ends the episode, most within a step or two)")
    a = p.parse_args()
    torch.set_num_threads(1)  # as in Ray's worker processes (OMP_NUM_THREADS=1)
    to_numpy = a.episodes_to_numpy == "true"
    name = baton.rllib.register()
    forms = [f for f in a.forms.split(",") if f]
    cart = config("CartPole-v1", {}, False, to_numpy)
    class Pipelines(baton.rllib.MultiAgentEnvRunner):
        direct_connectors = False

    classes = {"rllib": None, "baton": baton.rllib.MultiAgentEnvRunner, "baton-pipelines": Pipelines}
    suffix = {"rllib": "", "baton": "_baton_runner", "baton-pipelines": "_baton_runner_pipelines"}
    masked = a.setting == "masked"
    mazes = {f + suffix[r]:
             config(name, {"env": "maze", "seed": 1, "invalid_action": "terminate", "agent_ids": f,
                           "action_masking": masked}, True, to_numpy, classes[r], masked)
             for r in a.runners.split(",") if r for f in forms}
    carts: list[float] = []
    got: dict[str, list[float]] = {f: [] for f in mazes}
    lengths: dict[str, list[float]] = {f: [] for f in mazes}
    for _ in range(a.rounds):
        carts.append(rate(cart, a.steps))
        for f, cfg in mazes.items():
            got[f].append(rate(cfg, a.steps, lengths[f]))
    carts.append(rate(cart, a.steps))
    c = statistics.mean(carts)
    print(json.dumps({
        "steps_per_call": a.steps, "episodes_to_numpy": to_numpy, "setting": a.setting,
        **{f"maze_{f}_steps_per_episode": round(statistics.mean(v), 1) for f, v in lengths.items()},
        "cartpole_steps_per_s": [round(x) for x in carts],
        **{f"maze_{f}_steps_per_s": [round(x) for x in v] for f, v in got.items()},
        **{f"ratio_maze_{f}_to_cartpole": round(statistics.mean(v) / c, 3) for f, v in got.items()},
    }))


if __name__ == "__main__":
    main()
