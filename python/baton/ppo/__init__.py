"""PPO for any environment of the fast lane: every agent name of a hierarchical,
multi-agent or single-agent environment trained together, each with its own policy
and value over its own observation, its masked actions never taken.

    import baton.ppo

    res = baton.ppo.train("maze", baton.ppo.PPOConfig(num_envs=64), steps=30_000, seed=1)
    print(res.curve[-1]["return"], res.evaluate(episodes=300)["terminated"])
    action = res.agents["strategy"].act(obs, mask)

or from the command line (``--json`` prints the report, ``--png`` draws the curve):

    python -m baton.ppo --env maze --steps 30000 --json
    python -m baton.ppo --env cartpole --ppo '{"gamma": 0.99, "num_envs": 32}' --steps 100000
    python -m baton.ppo --env webtest --agent strategy --policy motion=scripted --config @shop.json

What it does. ``train`` makes ``ppo.num_envs`` copies of a registered environment on
the fast lane (``baton.vector.make``) and each tick makes one policy call per agent
name over the rows of its group (the copies that agent acts in now). Each agent name
has its network (``ActorCritic``: an MLP policy and an MLP value over the agent's
flat observation, scaled by its Box's bounds; or a network of one's own, below) and
its own rollout (``AgentBuffer``). Masked actions get logit -inf. A decision of an
agent is complete when the agent acts again in that copy or its sub-episode ends: its
reward is what was reported to the agent in between, and it is discounted by
``gamma ** span_ticks`` (a semi-Markov decision process: the strategy's decision
lasts its child's whole sub-episode; ``PPOConfig(smdp=False)`` discounts by gamma per
decision). A decision still open at the end of a rollout is carried into the next.
Env steps count ticks of every copy, whichever agent acted.

The learning curve is a point every ``curve_every`` rollouts over the training
episodes that ended since the last one: their number, mean ``return`` (the top
agent's, the one that starts every episode: the root of a hierarchy; ``returns`` has
each agent's), ``terminated`` (the fraction ending in a terminal state rather than
truncated: the success rate where the goal is a terminal state, as in the maze, the
failure rate where failing ends the episode, as in cartpole) and ``episode_ticks``.
``evaluate`` gives the same figures over fresh episodes.

Options. ``config`` is the environment's JSON configuration (``--config JSON|@FILE``);
``ppo`` the hyperparameters (``PPOConfig``; ``--ppo JSON|@FILE``). ``agent`` and
``policies`` train one agent of a hierarchy with the others driven in Go by
registry policies (``baton.make_vec``'s view: a step lasts the agent's decision,
``span_ticks`` ticks). ``networks`` replaces the default network, for every agent (a
factory ``(layout, ppo) -> Network``) or by agent name (a mapping of factories):
examples/python/train_maze.py gives the maze's agents one-hot positions and a
value-iteration planner that way. The other keyword arguments go to
``baton.vector.make``: ``workers``, ``log`` (an activity log of the training
episodes, with ``policy="ppo"``) and ``library``, the fast lane library of one's own
environments, where ``baton.vector.make`` takes it (until then, ``--library`` sets
``BATON_LIBRARY`` for the command's process, which loads that library at its first
vector).

What is not supported: actions other than Discrete (Box, MultiDiscrete: the fast
lane steps Discrete agents, and ``train`` refuses others with ``UnsupportedError``);
asynchronous vectors (``batch_size``). Observations of any space are used flat, as
the fast lane gives them; an image wants a network of one's own.

Seeds. The same seed gives the same curve and the same weights with single-threaded
torch (``torch.set_num_threads(1)``; the command's ``--threads`` is 1 by default):
``torch.manual_seed(seed)`` is set before the networks are made, every sample and
minibatch comes from a ``torch.Generator`` seeded with it, and the vector's episodes
from it too.

torch is an optional extra of the package: ``import baton`` does not import it, and
importing ``baton.ppo`` without it raises ImportError saying what to install.
"""

from __future__ import annotations

try:
    import torch as _torch  # noqa: F401
except ImportError as _e:  # pragma: no cover - exercised in a test with torch hidden
    raise ImportError(
        "baton.ppo needs PyTorch, an optional extra of baton: pip install 'baton[torch]' (or pip install torch)"
    ) from _e

from ._core import (
    ActorCritic,
    AgentBuffer,
    MaskedCategorical,
    Network,
    PPOConfig,
    Scale,
    ppo_update,
)
from ._cli import main
from ._train import (
    Agent,
    AgentVector,
    Episodes,
    NetworkFactory,
    Outcome,
    Result,
    Rollout,
    Rows,
    Trainer,
    UnsupportedError,
    act,
    evaluate,
    plot,
    summary,
    train,
    untrained,
)

__all__ = [
    "ActorCritic",
    "Agent",
    "AgentBuffer",
    "AgentVector",
    "Episodes",
    "MaskedCategorical",
    "Network",
    "NetworkFactory",
    "Outcome",
    "PPOConfig",
    "Result",
    "Rollout",
    "Rows",
    "Scale",
    "Trainer",
    "UnsupportedError",
    "act",
    "evaluate",
    "main",
    "plot",
    "ppo_update",
    "summary",
    "train",
    "untrained",
]
