"""Env steps sampled per second by RLlib's env runner (PPO, the new API stack, default
RLModules, a local env runner with 4 environments) on baton's maze
(``baton.rllib.BatonMultiAgentEnv``) against Gymnasium's CartPole-v1, the yardstick,
with the same PPOConfig env-runner settings; CartPole, maze, CartPole again, and the
ratio against CartPole's mean.

    scripts/python examples/python/rllib_sample_bench.py --steps 8000
"""

import argparse
import json
import time

import ray
from ray.rllib.algorithms.ppo import PPOConfig

import baton.rllib


def config(env: str, env_config: dict, multi: bool) -> PPOConfig:
    c = (
        PPOConfig()
        .environment(env, env_config=env_config)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=4, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .debugging(seed=1)
    )
    if multi:
        c = c.multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=baton.rllib.policy_mapping_fn)
    return c


def rate(cfg: PPOConfig, steps: int) -> float:
    algo = cfg.build_algo()
    try:
        runner = algo.env_runner
        runner.sample(num_timesteps=500)  # warm up
        start = time.perf_counter()
        n = 0
        while n < steps:
            n += sum(len(e) for e in runner.sample(num_timesteps=steps - n))
        return n / (time.perf_counter() - start)
    finally:
        algo.stop()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8000)
    a = p.parse_args()
    ray.init(num_cpus=1, include_dashboard=False)
    try:
        name = baton.rllib.register()
        cart = config("CartPole-v1", {}, False)
        maze = config(name, {"env": "maze", "seed": 1, "invalid_action": "terminate"}, True)
        c1 = rate(cart, a.steps)
        m = rate(maze, a.steps)
        c2 = rate(cart, a.steps)
    finally:
        ray.shutdown()
    print(json.dumps({"cartpole_steps_per_s": [round(c1), round(c2)], "maze_steps_per_s": round(m),
                      "ratio_maze_to_cartpole": round(m / ((c1 + c2) / 2), 3)}))


if __name__ == "__main__":
    main()
