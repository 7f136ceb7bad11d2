"""baton: read the Arrow activity logs of baton trials in Python and train from them.

From a checkout, scripts/python runs Python in the project's environment, where baton
is installed (editable) with every extra of python/pyproject.toml:

    scripts/python -c "import baton"

- ``baton.load(dir)``: every agent's steps as a pyarrow Table and numpy arrays, with
  observations in their spaces' shapes, and the trials, episodes and rewards tables
  (needs pyarrow).
- ``baton.spaces_from_schema(metadata_or_spec)``: the Gymnasium spaces of an agent (plain
  descriptions when gymnasium is not importable); ``baton.parse_space`` for the plain
  description of one spaces JSON spec, ``baton.unflatten`` to undo the flat encoding.
- ``baton.build_transitions(columns)`` (module ``baton.experience``): (obs, action,
  reward, next_obs, terminated, truncated, span_ticks) per agent, paired as
  datalog/doc.go says, in numpy.
- ``baton.TransitionDataset``: a torch Dataset of those transitions (needs torch).
- ``baton.export_minari(log, agent, dataset_id)``: one agent's steps of a log as a
  Minari dataset, for offline-RL tools (needs minari; module ``baton.minari``).
- ``baton.make(env, agent=None, ...)`` and ``baton.make_vec(env, n, ...)``: a baton
  environment, or one agent of a hierarchy with the others driven by policies, as a
  ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv`` on the fast lane (module
  ``baton.gym``); with gymnasium installed, ``import baton`` registers the ids
  ``baton/CartPole-v1``, ``baton/Maze-strategy-v0``, ``baton/Maze-motion-v0`` and
  ``baton/Webtest-strategy-v0`` for ``gymnasium.make``.
- ``baton.pettingzoo`` (import it by name): PettingZoo AEC and parallel environments
  on the fast lane, agent names as PettingZoo's agents.
- ``baton.rllib`` (import it by name): an RLlib ``MultiAgentEnv`` for RLlib's new API
  stack, per-invocation agent ids (``strategy_0``, ``motion_3``) mapped to one module
  per agent name, on the fast lane or over gRPC.
- ``baton.ppo`` (import it by name; needs torch): PPO for every agent of any
  environment of the fast lane, one policy per agent name, decisions discounted by
  their span; ``python -m baton.ppo --env NAME`` on the command line.
- ``baton.schedule`` (import it by name): schedules of tasks (curricula) in the JSON
  of ``baton run --schedule``, driven from a training loop with Go's rules.
- ``baton.vector`` (import it by name): the fast lane, N copies of a registered
  environment stepped per call by Go code in this process into numpy arrays. Its Go
  library is the one a wheel of baton carries, or, in a checkout, built with the Go
  toolchain on first use; ``import baton`` loads no Go.
- ``baton.build(module_dir=None, package=None)``: builds (and caches) the fast lane's
  library of a Go module, by default baton's own, else a module of one's own
  environments and its cmd/lib* package (``capi.Use``), and returns its path: the
  ``library=`` that every fast-lane entry point takes (``baton.make``,
  ``baton.make_vec``, ``baton.vector.make``, ``baton.pettingzoo``, ``baton.rllib``).
- ``baton.register_gymnasium(library=None)``: Gymnasium ids
  ``baton/<env>-<agent>-v0`` for every agent of every environment of a library.

numpy is the only hard dependency; the extras (arrow, remote, gym, pettingzoo, torch,
ray, minari) bring the rest.
"""

from .spaces import (
    DEFAULT_CHARSET,
    AgentSpaces,
    Box,
    Dict,
    Discrete,
    MultiBinary,
    MultiDiscrete,
    SpecError,
    Text,
    Tuple,
    flat_dim,
    parse_space,
    spaces_from_schema,
    to_gymnasium,
    unflatten,
)
from .experience import PairingError, Transitions, build_transitions
from .loader import AgentData, Log, load, read_table
from .minari import export_minari

__all__ = [
    "DEFAULT_CHARSET",
    "AgentData",
    "AgentSpaces",
    "Box",
    "Dict",
    "Discrete",
    "Log",
    "MultiBinary",
    "MultiDiscrete",
    "PairingError",
    "SpecError",
    "Text",
    "TransitionDataset",
    "Transitions",
    "Tuple",
    "build_transitions",
    "export_minari",
    "flat_dim",
    "load",
    "build",
    "make",
    "make_vec",
    "parse_space",
    "read_table",
    "register_gymnasium",
    "spaces_from_schema",
    "to_gymnasium",
    "unflatten",
]


def __getattr__(name):
    # torch is imported only when the Dataset is asked for, gymnasium's adapters
    # when they are.
    if name == "TransitionDataset":
        from .dataset import TransitionDataset

        return TransitionDataset
    if name in ("make", "make_vec", "register_gymnasium"):
        from . import gym as _gym

        return getattr(_gym, name)
    if name == "build":
        # The module baton.build, callable as its function build.
        import importlib

        return importlib.import_module(".build", __name__)
    raise AttributeError(f"module 'baton' has no attribute {name!r}")


def _register_gymnasium() -> None:
    # Registers baton's Gymnasium ids; loads no Go code (that waits for gymnasium.make).
    import importlib.util

    if importlib.util.find_spec("gymnasium") is None:
        return
    from .gym import register_envs

    register_envs()


_register_gymnasium()
