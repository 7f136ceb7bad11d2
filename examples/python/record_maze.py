"""Trains the maze hierarchy with baton.ppo, then records the trained agents playing
a few episodes as an animated GIF, one frame a tick, drawn by the environment itself
(render_mode="rgb_array": the maze's SVG picture, rasterised in Go).

    scripts/python examples/python/record_maze.py docs/img/maze.gif
    scripts/python examples/python/record_maze.py maze.gif --steps 200000 --episodes 4

The strategy agent picks a direction at each junction and hands control to the motion
agent, which turns and walks the corridor; both are PPO policies (baton.ppo.train),
played greedily here through PettingZoo's AEC loop (baton.pettingzoo), whose render()
draws each tick. Gymnasium's RecordVideo records the same frames as a video from a
gymnasium.Env view (baton.make(..., render_mode="rgb_array")).
"""

from __future__ import annotations

import argparse

import numpy as np
from PIL import Image

import baton.ppo
import baton.pettingzoo


def record(agents: dict, episodes: int, seed: int, max_ticks: int) -> tuple[list[np.ndarray], list[bool]]:
    """The frames of ``episodes`` greedy episodes of the trained agents, and whether
    each reached the goal."""
    env = baton.pettingzoo.env("maze", render_mode="rgb_array")
    frames, reached = [], []
    for k in range(episodes):
        env.reset(seed=seed + k)
        frames.append(env.render())
        ticks, goal = 0, False
        for name in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                goal |= term  # the maze's episodes end terminated at the goal only
                env.step(None)
                continue
            mask = info.get("action_mask")
            a = agents[name].act(obs, None if mask is None else mask.astype(bool), greedy=True)
            env.step(int(a[0]))
            ticks += 1
            frames.append(env.render())
            if ticks >= max_ticks:
                break
        reached.append(goal)
        frames.extend([frames[-1]] * 4)  # a pause at the end of the episode
    env.close()
    return frames, reached


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the GIF to write")
    p.add_argument("--steps", type=int, default=100_000, help="PPO's env step budget (default 100,000)")
    p.add_argument("--episodes", type=int, default=3, help="episodes recorded (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fps", type=float, default=8)
    p.add_argument("--max-ticks", type=int, default=120, help="ticks recorded per episode at most")
    p.add_argument("--scale", type=int, default=2, help="pixels of the GIF per pixel of the frames (default 2)")
    args = p.parse_args()

    res = baton.ppo.train("maze", baton.ppo.PPOConfig(), steps=args.steps, seed=args.seed)
    print(f"trained {res.env_steps} steps in {res.wall_seconds:.0f} s; "
          f"evaluation: {res.evaluate(episodes=200, greedy=True)}")
    frames, reached = record(res.agents, args.episodes, args.seed, args.max_ticks)
    images = [Image.fromarray(f.repeat(args.scale, 0).repeat(args.scale, 1)).convert(
        "P", palette=Image.Palette.ADAPTIVE, colors=16) for f in frames]
    images[0].save(args.out, save_all=True, append_images=images[1:], duration=int(1000 / args.fps), loop=0,
                   optimize=True)
    print(f"{args.out}: {len(frames)} frames of {args.episodes} episodes, goal reached in {sum(reached)}")


if __name__ == "__main__":
    main()
