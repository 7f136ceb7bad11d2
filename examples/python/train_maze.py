"""Trains the maze's hierarchy, its strategy and motion agents together, with PPO on
the fast lane (``baton.ppo`` over ``baton.vector.make("maze", ...)``), or the flat maze
("maze-flat", one agent moving a tile a tick) with the same PPO, and evaluates the
result, with the maze's own options on top of ``baton.ppo``: its features, a planner,
curricula of generated mazes, and an evaluation on mazes never seen in training.

    scripts/python examples/python/train_maze.py --json
    scripts/python examples/python/train_maze.py --flat --json
    scripts/python examples/python/train_maze.py --png curve.png --env-steps 500000
    scripts/python examples/python/train_maze.py --schedule examples/python/maze_curriculum.json --json

(``python -m baton.ppo --env maze`` trains the same agents with ``baton.ppo``'s
defaults: an MLP over each agent's whole observation.)

Each agent name has its own network and its own rollout (``baton.ppo.Trainer``): one
policy call per agent name per tick, whatever the number of copies. The strategy's
decision lasts the motion agent's sub-episode: its reward arrives when control
returns to it, and its return is discounted by gamma ** span_ticks (an option of a
semi-Markov decision process; ``--no-smdp`` discounts by gamma per decision). Masked
actions get logit -inf.

Features (the networks this script gives ``baton.ppo``, ``networks``): the map is the
same in every episode of a run (the reference map, or the one ``--config``'s map or
generate gives), so each agent sees its position one-hot and its action mask, derived
from the observation the environment gives. Where each episode draws its own map
(``"generate": {..., "per_episode": true}``), the agents see the map too
(``Features``), and the strategy (an agent that picks one of the four directions)
plans on it with a value-iteration network (``PlanNet``).

Curricula: ``--schedule FILE`` (a ``baton.schedule`` JSON, e.g.
examples/python/maze_curriculum.json) trains on generated mazes of growing sizes,
one observed size (``obs_side``) for all, so that one network plays them all; each
training episode is a trial of the schedule, and the vector is remade with the next
task's configuration when the schedule promotes (``train``). The evaluation is then
on the last task, on a vector seed of its own, and leaves out the episodes whose map
(start and goal included) a training episode had: the success rate is on maps never
seen in training.

    scripts/python examples/python/train_maze.py --schedule examples/python/maze_curriculum.json \
        --env-steps 320000 --curve-every 8 --hidden 128 --lr 2e-3 --ent-coef 0.02 --json --png curve.png

``--log DIR`` records the training vectors' episodes into an activity log
(``baton.vector.make(..., log=DIR, policy="ppo")``; under a schedule each task's
trials are named after it), which ``baton inspect DIR --plot`` draws and
``baton.load(DIR)`` reads.

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
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from torch import nn

from baton import ppo
from baton.ppo import ActorCritic, Agent, MaskedCategorical, Network, PPOConfig, Trainer, orthogonal_linear
from baton.schedule import Schedule, Scheduler, Task, derive_seed

HIERARCHY, FLAT = "maze", "maze-flat"
GOAL = 3  # a goal tile in the maze's map


def cells_of(layout) -> int:
    """The tiles of the map in an agent's observation, laid out as the maze's are
    (the map, row and column, the mask)."""
    return layout.obs_dim - 2 - layout.mask_len


class Features:
    """An agent's features, from an observation laid out as the maze's are (the map,
    row and column, the mask): its position one-hot and its action mask; with
    ``with_map``, the (padded, square) map's tiles as two planes, walkable and goal,
    ahead of them. A fixed map needs only the position; generated maps need the map."""

    def __init__(self, layout, with_map: bool = False):
        self.cells = cells_of(layout)
        self.cols = int(np.asarray(layout.observation_space.high)[self.cells + 1]) + 1
        self.with_map = with_map
        self.side = int(round(self.cells ** 0.5))
        if with_map and (self.side * self.side != self.cells or self.cols != self.side):
            raise ValueError(f"train_maze: a map of {self.cells} tiles, {self.cols} a row, is not square; give the config an obs_side")
        self.off = 2 * self.cells if with_map else 0
        self.dim = self.off + self.cells + layout.mask_len

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        k, c = len(obs), self.cells
        x = np.zeros((k, self.dim), np.float32)
        if self.with_map:
            tiles = obs[:, :c]
            x[:, :c] = tiles > 0
            x[:, c:2 * c] = tiles == GOAL
        pos = obs[:, c].astype(np.int64) * self.cols + obs[:, c + 1].astype(np.int64)
        x[np.arange(k), self.off + pos] = 1
        x[:, self.off + c:] = obs[:, c + 2:]
        return x


MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # the maze's directions: up, right, down, left
TRANSITIONS = ("moves", "learned")  # the planners' transitions: MovesPlanNet's, PlanNet's


class Planner(Network):
    """A ``baton.ppo.Network`` whose ``_plan`` gives a batch's logits and values in one
    pass (the planners below): ``dist``, ``value`` and ``act`` from it."""

    def _plan(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    @staticmethod
    def _around(h: torch.Tensor, x: torch.Tensor, beyond: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
        """The channels of planes h [k, C, n, n] at each row's agent tile [k, C] and at
        its four neighbours in ``MOVES`` order [k, 4, C], ``beyond`` outside the map; the
        position is the one-hot plane of ``Features`` with the map, after its two
        planes."""
        n = h.shape[-1]
        c = n * n
        pos = x[:, 2 * c:3 * c].argmax(1)
        row, col = pos // n + 1, pos % n + 1
        hp = nn.functional.pad(h, (1, 1, 1, 1), value=beyond)
        b = torch.arange(len(x))
        return hp[b, :, row, col], torch.stack([hp[b, :, row + dr, col + dc] for dr, dc in MOVES], 1)

    def dist(self, x: torch.Tensor, mask: torch.Tensor | None) -> MaskedCategorical:
        return MaskedCategorical(self._plan(x)[0], mask)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self._plan(x)[1]

    @torch.no_grad()
    def act(self, x: np.ndarray, mask: np.ndarray | None, generator: torch.Generator, greedy: bool = False):
        logits, value = self._plan(torch.from_numpy(x))
        d = MaskedCategorical(logits, None if mask is None else torch.from_numpy(mask))
        a = d.greedy() if greedy else d.sample(generator)
        return a.numpy(), d.log_prob(a).numpy(), value.numpy()


class PlanNet(Planner):
    """A policy and value for an agent that picks one of the four directions on a map
    it sees whole (``Features`` with the map): a value iteration network (Tamar et al.,
    2016). A small convolution of the walkable and goal planes gives a reward map R;
    then ``iters`` times Q = conv(R, V), a 3x3 convolution with ``actions`` output
    channels, and V = the maximum of Q over its channels, zeroed on walls, starting
    from V = 0. The maximum makes each iteration a Bellman backup over the
    neighbouring tiles, so that values spread from the goal along the corridors a
    tile an iteration (``iters`` defaults to ``side * side // 2``, at least the longest
    walk between two tiles of most maps of that side: with fewer, the goal's value
    does not reach the far end of a long walk, and the strategy picks blind there). The logit of a
    direction is a linear read-out of Q and V at the neighbouring tile in that
    direction, and the value an MLP of them at the agent's tile and the best
    neighbour's. The convolutions are shared over the map, so what is learned on one
    map holds on another, and a network of a few hundred weights plays maps of every
    size the padding allows. A ``baton.ppo.Network`` over ``features`` (a
    ``Features`` with the map) of the agent's observations."""

    def __init__(self, side: int, actions: int = 8, iters: int | None = None, hidden: int = 64, features=None):
        super().__init__(features.dim if features is not None else 3 * side * side + len(MOVES), features)
        self.side = side
        self.iters = side * side // 2 if iters is None else iters
        self.r = nn.Sequential(nn.Conv2d(2, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
        self.q = nn.Conv2d(2, actions, 3, padding=1, bias=False)  # of R and V
        nn.init.normal_(self.q.weight, std=0.1)  # V stays bounded over the iterations to start
        self.head = nn.Linear(actions + 1, 1)
        nn.init.zeros_(self.head.weight)  # uniform over the allowed directions to start
        nn.init.zeros_(self.head.bias)
        lin = orthogonal_linear
        self.v = nn.Sequential(lin(2 * actions + 2, hidden, 2**0.5), nn.Tanh(), lin(hidden, 1, 1.0))

    def _plan(self, x: torch.Tensor):
        n = self.side
        c = n * n
        walk = x[:, :c].reshape(-1, 1, n, n)
        r = self.r(torch.cat([walk, x[:, c:2 * c].reshape(-1, 1, n, n)], 1))
        v = torch.zeros_like(r)
        for _ in range(max(self.iters, 1)):
            q = self.q(torch.cat([r, v], 1))
            v = q.max(1, keepdim=True).values * walk  # zero on walls
        here, near = self._around(torch.cat([q, v], 1), x)
        value = self.v(torch.cat([here, near.max(1).values], 1)).squeeze(-1)
        return self.head(near).squeeze(-1), value


class MovesPlanNet(Planner):
    """A policy and value for an agent that picks one of the four directions on a map
    it sees whole (``Features`` with the map): a value iteration network whose
    transition is the maze's own, a move to one of the four neighbouring tiles, so that
    what it learns is what the tiles are worth, not how one gets between them. A small
    convolution of the walkable and goal planes gives each tile a reward ``r`` (at
    most 0: a step's cost) and a chance ``a`` that the episode ends there; then
    ``iters`` times L = r + (1 - a) * the best neighbour's L, starting from L = 0, walls
    never the best. Each iteration is a Bellman backup that carries a tile's worth one
    tile further along the corridors (``iters`` defaults to ``side * side // 2``, at
    least the longest walk between two tiles of most maps of that side); a tile the
    backups have not reached from the goal sees its neighbours equal. The logit of a
    direction is a linear read-out of L and r at the neighbouring tile in that
    direction (to start, the neighbour's L: uniform over the allowed directions where
    the backups have not yet made the tiles differ), the value an MLP
    of r, a and L at the agent's tile and the best neighbour's L. The convolution is
    shared over the map, so what is learned on one map holds on another."""

    WALL = -1e4  # a wall's L: below any walk's

    def __init__(self, side: int, iters: int | None = None, hidden: int = 64, features=None):
        super().__init__(features.dim if features is not None else 3 * side * side + len(MOVES), features)
        self.side = side
        self.iters = side * side // 2 if iters is None else iters
        self.r = nn.Sequential(nn.Conv2d(2, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 1))
        with torch.no_grad():  # to start: a step costs about 1, an episode ends nowhere
            self.r[2].bias[:] = torch.tensor([0.5413, -2.0])
        self.head = nn.Linear(2, 1)
        with torch.no_grad():  # to start: a neighbour's logit is its L
            self.head.weight[:] = torch.tensor([[1.0, 0.0]])
            self.head.bias.zero_()
        lin = orthogonal_linear
        self.v = nn.Sequential(lin(4, hidden, 2**0.5), nn.Tanh(), lin(hidden, 1, 1.0))

    def _plan(self, x: torch.Tensor):
        n = self.side
        c = n * n
        walk = x[:, :c].reshape(-1, n, n) > 0
        out = self.r(torch.stack([x[:, :c], x[:, c:2 * c]], 1).reshape(-1, 2, n, n))
        r = -nn.functional.softplus(out[:, 0])
        keep = 1 - torch.sigmoid(out[:, 1])
        wall = torch.full_like(r, self.WALL)
        L = torch.where(walk, torch.zeros_like(r), wall)
        for _ in range(max(self.iters, 1)):
            p = nn.functional.pad(L, (1, 1, 1, 1), value=self.WALL)
            best = torch.maximum(torch.maximum(p[:, :-2, 1:-1], p[:, 2:, 1:-1]),
                                 torch.maximum(p[:, 1:-1, :-2], p[:, 1:-1, 2:]))
            L = torch.where(walk, r + keep * best, wall)
        here, near = self._around(torch.stack([L, r, keep], 1), x, beyond=self.WALL)  # [k, 3], [k, 4, 3]
        here = torch.cat([here, near[:, :, :1].max(1).values], 1)
        return self.head(near[:, :, :2]).squeeze(-1), self.v(here).squeeze(-1)


class PolicyGraph(nn.Module):
    """An agent's policy logits as one torch graph over its raw observation (the map,
    row and column, the mask): ``Features``' one-hot position and mask, then the
    actor's MLP, so that ``baton.models.export_onnx`` exports it whole and Go trials
    run it (``--policy AGENT=model:NAME@VERSION``). For an ``ActorCritic`` over
    ``Features`` without the map."""

    def __init__(self, net: ActorCritic, features: Features):
        super().__init__()
        if features.with_map:
            raise ValueError("train_maze: only the policies of a fixed map (no map in the features) export to ONNX")
        self.pi = net.pi
        self.cells, self.cols, self.obs_dim = features.cells, features.cols, features.cells + 2 + features.dim - features.cells
        # [1, cells]: the ranks of both sides of every operator agree (no broadcast
        # across ranks), as some runtimes require.
        self.register_buffer("tiles", torch.arange(features.cells, dtype=torch.float32).reshape(1, -1))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        c = self.cells
        pos = obs[:, c:c + 1] * self.cols + obs[:, c + 1:c + 2]
        # 1 where the tile is the position, 0 elsewhere (positions are whole numbers),
        # in operators every ONNX runtime has (no boolean casts).
        onehot = torch.relu(1 - torch.abs(pos - self.tiles))
        return self.pi(torch.cat([onehot, obs[:, c + 2:self.obs_dim]], 1))


def policy_graph_from_onnx(data: bytes, agent: str, flat: bool = False) -> PolicyGraph:
    """The torch ``PolicyGraph`` of an agent's ONNX export (``push_models``): its
    initializers are the graph's parameters by name (``pi.0.weight``, ..., ``tiles``),
    loaded into a network of the export's hidden size, so that Python plays the policy
    Go runs from the same bytes. Needs the onnx package."""
    import onnx
    from onnx import numpy_helper

    inits = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in onnx.load_from_string(data).graph.initializer}
    if "pi.0.weight" not in inits:
        raise ValueError("train_maze: not a PolicyGraph export (no pi.0.weight)")
    agents = untrained(flat, hidden=int(inits["pi.0.weight"].shape[0]))
    if agent not in agents:
        raise ValueError(f"train_maze: no agent {agent!r} (agents: {', '.join(agents)})")
    a = agents[agent]
    graph = PolicyGraph(a.net, a.net._features)
    graph.load_state_dict(inits)
    return graph.eval()


def push_models(agents: dict[str, Agent], prefix: str, *, env: str, where=None, run: str = "",
                figures: dict | None = None) -> list:
    """Exports each agent's policy as ONNX (``PolicyGraph``) and pushes it to the model
    registry as PREFIX-AGENT (``baton.models.push``) with the agent's spaces and the
    run's figures; returns the models' metadata."""
    from baton import models

    out = []
    for name, a in agents.items():
        graph = PolicyGraph(a.net, a.net._features)
        out.append(models.push(
            f"{prefix}-{name}", models.export_onnx(graph, a.layout.obs_dim), where=where, format="onnx", env=env,
            agent=name, observation_space=a.layout.observation_space, action_space=a.layout.action_space, run=run,
            figures=figures,
        ))
    return out


def map_keys(obs: np.ndarray, cells: int) -> list[bytes]:
    """The maps of observations (rows), as bytes: a map with its start and goal tiles
    names its episode's layout (the dynamics are deterministic)."""
    return [row.tobytes() for row in obs[:, :cells].astype(np.uint8)]


def networks(with_map: bool = False, planner: bool = True, plan_iters: int | None = None, transition: str = "moves"):
    """The maze's network factory for ``baton.ppo``: per agent an MLP
    (``baton.ppo.ActorCritic``) over ``Features``, or with the map (``with_map``) and
    ``planner`` a value iteration network (of ``plan_iters`` iterations; None: its
    default) for an agent that picks one of the four directions: with ``transition``
    "moves" a ``MovesPlanNet``, with "learned" a ``PlanNet``."""
    if transition not in TRANSITIONS:
        raise ValueError(f"train_maze: transition {transition!r}: want one of {', '.join(TRANSITIONS)}")

    def make(layout, ppo: PPOConfig) -> Network:
        f = Features(layout, with_map)
        if with_map and planner and layout.actions == len(MOVES):
            if transition == "learned":
                return PlanNet(f.side, iters=plan_iters, features=f)
            return MovesPlanNet(f.side, iters=plan_iters, features=f)
        return ActorCritic(f.dim, layout.actions, ppo.hidden, features=f)

    return make


class MazeTrainer(Trainer):
    """A ``baton.ppo.Trainer`` that keeps, with ``track``, the maps of the training
    episodes it starts (``maps``, see ``map_keys``)."""

    def __init__(self, *args, track: bool = False, **kwargs):
        self.track, self.maps = track, set()
        super().__init__(*args, **kwargs)

    def on_step(self, rows, outcome) -> None:
        if not self.track:
            return
        top = self.vector.agents[self.vector.top]
        r = rows[top.name]
        obs = r.obs if outcome is None else r.obs[np.isin(r.copies, np.flatnonzero(outcome.ended))]
        self.maps.update(map_keys(obs, cells_of(top)))


@dataclass
class Result:
    """What ``train`` returns: the agents (``baton.ppo.Agent``), the learning curve, env
    steps, seconds; with a schedule, the task changes (``promotions``: the env steps and
    the task taken) and the maps of the training episodes (``maps``, see
    ``map_keys``)."""

    agents: dict[str, Agent]
    curve: list[dict] = field(default_factory=list)
    env_steps: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    promotions: list[dict] = field(default_factory=list)
    maps: set[bytes] = field(default_factory=set)


def train(
    *, flat: bool = False, seed: int = 1, env_steps: int = 300_000, num_envs: int = 128, rollout: int = 32,
    hidden: int = 64, cfg: PPOConfig | None = None, config=None, target: float | None = None,
    curve_every: int = 1, curve_episodes: int = 200, log=None, vector_kwargs: dict | None = None,
    schedule: Scheduler | None = None, with_map: bool = False, eval_config=None, planner: bool = True,
    plan_iters: int | None = None, transition: str = "moves",
) -> Result:
    """Trains with PPO (``baton.ppo.Trainer`` with the maze's ``networks``) for
    ``env_steps`` env steps (whole rollouts of ``rollout`` ticks of ``num_envs``
    copies; they and ``hidden`` replace ``cfg``'s), or until the curve's success rate
    reaches ``target``. Every ``curve_every`` rollouts (0: never) a point of the
    learning curve evaluates the policies, sampled, on ``curve_episodes`` fresh
    episodes (``evaluate``); their steps are not counted in ``env_steps``, nor their
    time in the seconds. A point also has the success rate of the training episodes
    that ended in the rollout (``train_success``), which favours short episodes early
    on: those are the ones that end within a rollout. ``vector_kwargs`` go to
    ``baton.vector.make``.

    With ``schedule`` (a ``baton.schedule.Scheduler`` whose tasks are maze
    configurations), the environment's configuration is the schedule's task, and each
    training episode that ends is a trial recorded with its success, in the order
    they end. When the schedule moves to another task, the episodes still ending in
    that rollout are not recorded, and after the rollout's update the vector is
    remade with the new task's configuration (a new vector seed each time, the k-th
    vector's ``derive_seed(seed, k)``), and the rollouts start afresh: decisions still
    open are dropped. A curve point then evaluates on the current task and, as
    ``final_success``, on ``eval_config`` (e.g. the last task's). ``with_map`` gives
    the agents the map among their features (``Features``), which generated maps need,
    and the strategy a value iteration network (``networks``; an MLP with ``planner``
    False).

    >>> res = train(seed=3, env_steps=100_000)  # doctest: +SKIP
    >>> evaluate(res.agents)["success"]  # doctest: +SKIP
    1.0
    """
    cfg = replace(cfg or PPOConfig(), num_envs=num_envs, rollout=rollout, hidden=hidden)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    task = schedule.task if schedule is not None else None
    if task is not None:
        config = task.config
    makes = 0
    trainer = MazeTrainer(FLAT if flat else HIERARCHY, cfg, seed=seed, config=config, networks=networks(with_map, planner, plan_iters, transition),
                          track=with_map and not flat, **vector_kwargs_for(vector_kwargs, task))
    names = trainer.vector.names
    res = Result(trainer.agents, maps=trainer.maps)
    eval_wall = eval_cpu = 0.0
    try:
        while res.env_steps < env_steps:
            r = trainer.rollout()
            res.env_steps = trainer.env_steps
            s = r.episodes.terminated
            switch = False
            if schedule is not None:
                for won in s:
                    if switch or schedule.done:
                        break
                    switch = schedule.record(bool(won))
            if switch:
                task, config, makes = schedule.task, schedule.task.config, makes + 1
                trainer.remake(seed=derive_seed(seed, makes), config=config, **vector_kwargs_for(vector_kwargs, task))
                res.promotions.append({"env_steps": res.env_steps, "trial": schedule.index, "task": task.name})
                if log:
                    log(f"env steps {res.env_steps:>9,}  trial {schedule.index}: now on task {task.name}")
            if not curve_every or trainer.rollouts % curve_every:
                continue
            w, c = time.perf_counter(), time.process_time()
            e = evaluate(res.agents, flat=flat, episodes=curve_episodes, seed=seed + 7919 * trainer.rollouts, config=config)
            point = {
                "env_steps": res.env_steps,
                "success": e["success"],
                "return": e["return"],
                "episode_ticks": e["episode_ticks"],
                "train_episodes": int(len(s)),
                "train_success": float(s.mean()) if len(s) else 0.0,
            }
            if task is not None:
                point["task"] = task.name
            if eval_config is not None:
                point["final_success"] = evaluate(res.agents, flat=flat, episodes=curve_episodes,
                                                  seed=seed + 7919 * trainer.rollouts + 1, config=eval_config)["success"]
            eval_wall += time.perf_counter() - w
            eval_cpu += time.process_time() - c
            res.curve.append(point)
            if log:
                ent = " ".join(f"{n}_entropy {r.losses[n].get('entropy', 0):.3f}" for n in names)
                on = f"[{task.name}] " if task is not None else ""
                fin = f"  final task {point['final_success']:.3f}" if "final_success" in point else ""
                log(f"env steps {point['env_steps']:>9,}  {on}success {point['success']:.3f}{fin}  return {point['return']:.3f}  "
                    f"ticks {point['episode_ticks']:.1f}  (training episodes {len(s)}, success {point['train_success']:.3f})  {ent}")
            goal = point.get("final_success", point["success"])
            if target is not None and goal >= target:
                break
    finally:
        trainer.close()
    res.wall_seconds = time.perf_counter() - wall0 - eval_wall
    res.cpu_seconds = time.process_time() - cpu0 - eval_cpu
    return res


def vector_kwargs_for(vector_kwargs: dict | None, task: Task | None) -> dict:
    """``vector_kwargs`` for a vector of ``task``: a recording one (``log=``) names its
    trials after the task (``run=``), unless the caller named them."""
    kw = dict(vector_kwargs or {})
    if task is not None and kw.get("log") is not None:
        kw.setdefault("run", task.name)
    return kw


def evaluate(agents: dict[str, Agent], *, flat: bool = False, episodes: int = 1000, seed: int = 12345,
             greedy: bool = False, config=None, exclude: set[bytes] | None = None) -> dict:
    """The success rate, mean return and mean ticks of the first episode of each of
    ``episodes`` copies, with actions sampled from the policies (``greedy``: their
    most likely actions): ``baton.ppo.evaluate``, success being the strategy's
    termination (the goal reached). With ``exclude`` (maps, as ``map_keys`` gives
    them, e.g. the training episodes' ``Result.maps``), the episodes on those maps are
    left out of the rates: ``episodes`` counts those left, ``excluded`` the others.

    >>> evaluate(untrained(flat=True), flat=True, episodes=300)["success"]  # doctest: +SKIP
    0.30333333333333334
    """

    def unseen(rows) -> np.ndarray:
        r = next(r for r in rows.values() if len(r.copies))  # at the reset, the strategy acts in every copy
        keep = np.ones(episodes, np.bool_)
        keep[r.copies] = [k not in exclude for k in map_keys(r.obs, cells_of(agents[r.agent].layout))]
        return keep

    e = ppo.evaluate(agents, FLAT if flat else HIERARCHY, episodes=episodes, seed=seed, greedy=greedy, config=config,
                     keep=None if exclude is None else unseen)
    out = {
        "episodes": e["episodes"],
        "policy": e["policy"],
        "success": e["terminated"] or 0.0,
        "return": e["return"] or 0.0,
        "episode_ticks": e["episode_ticks"] or 0.0,
    }
    if exclude is not None:
        out["excluded"] = e["excluded"]
    return out


def untrained(flat: bool = False, seed: int = 1, hidden: int = 64, config=None, with_map: bool = False,
              planner: bool = True, plan_iters: int | None = None, transition: str = "moves") -> dict[str, Agent]:
    """The agents ``train`` starts from with this seed."""
    return ppo.untrained(FLAT if flat else HIERARCHY, PPOConfig(hidden=hidden), seed=seed, config=config,
                         networks=networks(with_map, planner, plan_iters, transition))


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


def plot_curriculum(res: Result, path: str, title: str = "maze curriculum: PPO") -> None:
    """Draws a curriculum's learning curve: the success rate on the task being trained
    and on the last task against env steps, a dashed line where the task changed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    x = [p["env_steps"] for p in res.curve]
    ax.plot(x, [p["success"] for p in res.curve], label="the task trained on")
    ax.plot(x, [p.get("final_success", p["success"]) for p in res.curve], label="the last task")
    for p in res.promotions:
        ax.axvline(p["env_steps"], color="grey", ls="--", lw=0.8)
        ax.text(p["env_steps"], 0.03, " " + p["task"], color="grey", fontsize=8)
    ax.set(xlabel="env steps", ylabel="success rate (sampled policy)", ylim=(0, 1.02), title=title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
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
    p.add_argument("--curve-every", type=int,
                   help="rollouts between learning curve points (0: none; default 1, with --schedule 8)")
    p.add_argument("--curve-episodes", type=int, default=200, help="evaluation episodes per curve point (default 200)")
    p.add_argument("--eval-episodes", type=int, default=1000, help="evaluation episodes (default 1000)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=PPOConfig.lr)
    p.add_argument("--gamma", type=float, default=PPOConfig.gamma)
    p.add_argument("--ent-coef", type=float, default=PPOConfig.ent_coef)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--png", help="draw the learning curve into this PNG file")
    p.add_argument("--schedule", help="train on a curriculum: a baton.schedule JSON file whose tasks are maze configurations")
    p.add_argument("--planner", action=argparse.BooleanOptionalAction, default=True,
                   help="with the map, the strategy plans with a value-iteration network (default on; off: an MLP)")
    p.add_argument("--transition", choices=TRANSITIONS, default="moves",
                   help="the value-iteration network's transition: the maze's four moves (MovesPlanNet, the default) "
                        "or a learned 3x3 convolution (PlanNet)")
    p.add_argument("--plan-iters", type=int,
                   help="the value-iteration network's iterations (default: side * side // 2 of the observed map)")
    p.add_argument("--log", help="record the training episodes into an activity log in this directory (baton inspect DIR --plot)")
    p.add_argument("--quiet", action="store_true", help="no per-rollout lines")
    p.add_argument("--push", metavar="PREFIX",
                   help="export each agent's policy as ONNX and push it to the model registry as PREFIX-AGENT (fixed maps only)")
    p.add_argument("--models", metavar="WHERE",
                   help="the model registry of --push: a directory or grpc://HOST:PORT (default: baton.models.default_dir())")
    return p.parse_args(argv)


EVAL_SEED = 0x6576616C  # the final evaluation's vector seed ("eval"), before derive_seed


def per_episode(config) -> bool:
    """Whether a maze configuration draws a new map every episode."""
    return isinstance(config, dict) and bool((config.get("generate") or {}).get("per_episode"))


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    config = json.loads(args.config) if args.config else None
    scheduler = None
    if args.schedule:
        if args.flat or config is not None:
            raise SystemExit("train_maze: --schedule gives the configurations; leave out --flat and --config")
        scheduler = Schedule.load(args.schedule).start(args.seed)
    # The final evaluation: the last task's configuration (the largest maze) under a
    # schedule, on a vector seed of its own; episodes on a map seen in training are
    # left out.
    final = scheduler.schedule.tasks[-1].config if scheduler else config
    with_map = scheduler is not None or per_episode(config)
    eval_seed = derive_seed(args.seed ^ EVAL_SEED, 1)
    if args.curve_every is None:
        args.curve_every = 8 if scheduler else 1
    cfg = PPOConfig(num_envs=args.num_envs, rollout=args.rollout, hidden=args.hidden, lr=args.lr, gamma=args.gamma,
                    ent_coef=args.ent_coef, smdp=args.smdp)
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr if args.json else sys.stdout, flush=True))
    before = evaluate(untrained(args.flat, args.seed, args.hidden, final, with_map, args.planner, args.plan_iters,
                                args.transition), flat=args.flat,
                      episodes=args.eval_episodes, config=final, seed=eval_seed)
    vector_kwargs = {"log": args.log, "policy": "ppo"} if args.log else None
    res = train(flat=args.flat, seed=args.seed, env_steps=args.env_steps, num_envs=args.num_envs, rollout=args.rollout,
                hidden=args.hidden, cfg=cfg, config=config, target=args.target,
                curve_every=args.curve_every, curve_episodes=args.curve_episodes, log=log,
                vector_kwargs=vector_kwargs, schedule=scheduler, with_map=with_map, planner=args.planner,
                plan_iters=args.plan_iters, transition=args.transition,
                eval_config=final if scheduler else None)
    exclude = res.maps if with_map else None
    after = {mode: evaluate(res.agents, flat=args.flat, episodes=args.eval_episodes, greedy=mode == "greedy",
                            config=final, seed=eval_seed, exclude=exclude)
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
        "planner": (args.transition if args.planner else "none") if with_map else "none",
        "env_steps_to_90": steps_to(res.curve, 0.9),
        "evaluation": after["sampled"],
        "evaluation_greedy": after["greedy"],
        "untrained": before,
        "ppo": asdict(cfg),
        "curve": res.curve,
    }
    if scheduler:
        report["schedule"] = args.schedule
        report["evaluated_on"] = scheduler.schedule.tasks[-1].name
        report["env_steps_to_90"] = steps_to([{"env_steps": p["env_steps"], "success": p["final_success"]}
                                              for p in res.curve if "final_success" in p], 0.9)
        report["promotions"] = res.promotions
        report["trials"] = scheduler.index
        report["runs"] = scheduler.runs()
    if with_map:
        report["training_maps"] = len(res.maps)
    if args.log:
        report["log"] = args.log
    if args.png and scheduler:
        plot_curriculum(res, args.png, title=f"maze curriculum: PPO, seed {args.seed}")
    elif args.png:
        plot({report["env"]: res.curve}, args.png, title=f"{report['env']}: PPO, seed {args.seed}")
    if args.push:
        figures = {"success_rate": after["greedy"]["success"], "env_steps": res.env_steps}
        pushed = push_models(res.agents, args.push, env=report["env"], where=args.models, figures=figures,
                             run=f"train_maze.py seed {args.seed}")
        report["models"] = [m.ref for m in pushed]
    if args.json:
        print(json.dumps(report))
    else:
        e = report["evaluation"]
        on = f" on {report['evaluated_on']} maps not seen in training" if scheduler else ""
        print(f"{report['env']}: success {e['success']:.3f}{on} ({e['policy']}, {e['episodes']} episodes; greedy "
              f"{report['evaluation_greedy']['success']:.3f}; untrained {report['untrained']['success']:.3f}) "
              f"after {res.env_steps:,} env steps, {res.wall_seconds:.1f} s wall, {res.cpu_seconds:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
