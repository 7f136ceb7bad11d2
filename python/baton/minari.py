"""One agent's steps of a baton activity log as a Minari dataset, for offline-RL tools.

    import baton
    ds = baton.export_minari("runs/maze", "strategy", "baton/maze/strategy-v0")
    ds.total_episodes, ds.observation_space, ds.action_space
    for ep in ds.iterate_episodes():
        ep.observations, ep.actions, ep.rewards, ep.terminations, ep.truncations

Each sub-episode of the agent (every agent id ``strategy_0``, ``strategy_1``, ... of
every trial and episode of the log) is a Minari episode: its first row (a start row:
the observation the agent first acted on) and the rows after it give the episode's
observations, and each row after the first its action, reward (the step's whole
reward, retroactive rewards included, as ``baton.load`` gives it), termination and
truncation, as datalog/doc.go's "Transitions" pairs them. The spaces are the log's
(``AgentData.spaces``: gymnasium spaces), observations in their space's shape
(``AgentData.observations``). Each episode's ``infos`` hold ``span_ticks`` (the
environment steps each decision took, 0 for the first observation, for a discount of
gamma ** span_ticks) and, for an agent with an action mask, ``action_mask``, one row
per observation. The dataset's ``algorithm_name`` is the policy that the log's trials
name for the agent (``policy=`` of ``baton.vector.make``, a campaign's registered
policy) when they all name the same one.

Minari writes the dataset under ``MINARI_DATASETS_PATH`` (default
``~/.minari/datasets``), and ``minari.load_dataset(dataset_id)`` reads it back. Needs
minari (the ``minari`` extra) and pyarrow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from .loader import AgentData, Log, load

__all__ = ["episodes", "export_minari"]


def _groups(columns: dict[str, np.ndarray]) -> Iterator[np.ndarray]:
    """The row indices of each sub-episode (trial, episode, agent id), in tick order,
    the sub-episodes in the order their first rows come in the log."""
    n = len(columns["tick"])
    if n == 0:
        return
    _, trial = np.unique(columns["trial_id"].astype(str), return_inverse=True)
    _, aid = np.unique(columns["agent_id"].astype(str), return_inverse=True)
    ep = columns["episode"].astype(np.int64)
    # One integer per sub-episode, then the rows grouped stably by it and by tick.
    key = (trial.astype(np.int64) * (int(ep.max()) + 1) + ep) * (int(aid.max()) + 1) + aid
    order = np.lexsort((columns["tick"], key))
    k = key[order]
    cuts = np.flatnonzero(k[1:] != k[:-1]) + 1
    groups = np.split(order, cuts)
    groups.sort(key=lambda g: int(g.min()))
    yield from groups


def episodes(data: AgentData, complete: bool = True) -> Iterator[dict[str, Any]]:
    """The agent's sub-episodes as dicts of arrays: ``trial_id``, ``episode``,
    ``agent_id``, ``rows`` (their row indices in ``data``, in tick order),
    ``observations`` (one more than the steps, in the observation space's shape),
    ``actions``, ``rewards`` (float64), ``terminations``, ``truncations`` (one per
    step), ``span_ticks`` and ``action_mask`` (one per observation; the mask only for
    an agent that has one).

    With ``complete`` (the default), only the sub-episodes that end in the log (their
    last row is terminated or truncated) are given; without it, one whose rows stop
    before its end (a trial stopped or cut, a writer killed) is given too, its last
    step marked truncated. A sub-episode whose rows do not begin with a start row (a
    log that lost its first batches) is skipped.

        for ep in baton.minari.episodes(baton.load("runs/maze")["motion"]):
            ep["observations"].shape, ep["actions"].shape
    """
    from . import spaces as _spaces

    c = data.columns
    for rows in _groups(c):
        if not c["start"][rows[0]] or len(rows) < 2:
            continue
        ended = bool(c["terminated"][rows[-1]] or c["truncated"][rows[-1]])
        if not ended and complete:
            continue
        steps = rows[1:]
        term = c["terminated"][steps].copy()
        trunc = c["truncated"][steps].copy()
        if not ended:
            trunc[-1] = True
        flat = c["observation"][rows]
        ep = {
            "trial_id": str(c["trial_id"][rows[0]]),
            "episode": int(c["episode"][rows[0]]),
            "agent_id": str(c["agent_id"][rows[0]]),
            "rows": rows,
            "observations": _spaces.unflatten(data.observation_space, flat),
            "actions": data.actions[steps],
            "rewards": c["reward"][steps].astype(np.float64),
            "terminations": term,
            "truncations": trunc,
            "span_ticks": c["span_ticks"][rows].astype(np.int64),
        }
        if "action_mask" in c:
            ep["action_mask"] = c["action_mask"][rows]
        yield ep


def _algorithm(log: Log, agent: str) -> str | None:
    """The one policy the log's trials name for agent, or None."""
    if log.trials is None or "policies" not in log.trials.column_names:
        return None
    names = set()
    for p in log.trials.column("policies").to_pylist():
        if p:
            names.add(json.loads(p).get(agent, ""))
    names.discard("")
    return names.pop() if len(names) == 1 else None


def export_minari(
    log: Log | str | os.PathLike,
    agent: str,
    dataset_id: str,
    *,
    complete: bool = True,
    env: Any = None,
    algorithm_name: str | None = None,
    author: str | None = None,
    author_email: str | None = None,
    code_permalink: str | None = None,
    description: str | None = None,
    data_format: str = "arrow",
) -> Any:
    """Writes the steps of ``agent`` (an agent name: every agent id ``agent_k``) of
    ``log`` (a ``baton.Log`` or its directory) as the Minari dataset ``dataset_id``
    ("namespace/env/name-v0", Minari's syntax) and returns it, a
    ``minari.MinariDataset``. Each sub-episode of the agent is an episode (see the
    module's documentation; ``complete`` as in ``episodes``); ``env`` (a gymnasium id,
    env or spec, e.g. "baton/Maze-strategy-v0") is recorded for Minari's
    ``recover_environment``; ``algorithm_name`` defaults to the policy the log names
    for the agent; the other keywords go to Minari's metadata. ``data_format`` is
    Minari's storage: "arrow" (the default; pyarrow, which baton.load needs
    anyway) or "hdf5" (needs h5py, Minari's default).

    Raises KeyError for an agent the log lacks, ValueError for one with no
    (complete) sub-episode, and what Minari raises for a dataset id taken or
    malformed.

        ds = baton.export_minari("runs/ppo", "strategy", "baton/maze/strategy-ppo-v0")
        minari.load_dataset("baton/maze/strategy-ppo-v0").total_episodes
    """
    import minari
    from minari.data_collector import EpisodeBuffer

    if not isinstance(log, Log):
        log = load(log, agents=[agent])
    data = log[agent]
    obs_space, act_space, _ = data.spaces
    buffers = []
    for k, ep in enumerate(episodes(data, complete=complete)):
        # A list, not an array: Minari's Arrow storage cannot read back a 1-D array
        # of infos (it writes its shape as "").
        infos: dict[str, Any] = {"span_ticks": ep["span_ticks"].tolist()}
        if "action_mask" in ep:
            infos["action_mask"] = ep["action_mask"]
        buffers.append(
            EpisodeBuffer(
                id=k,
                observations=ep["observations"],
                actions=ep["actions"],
                rewards=ep["rewards"].tolist(),
                terminations=ep["terminations"].tolist(),
                truncations=ep["truncations"].tolist(),
                infos=infos,
            )
        )
    if not buffers:
        what = "complete " if complete else ""
        raise ValueError(f"agent {agent!r} of the log in {log.dir} has no {what}sub-episode to export")
    return minari.create_dataset_from_buffers(
        dataset_id,
        buffers,
        env=env,
        algorithm_name=algorithm_name if algorithm_name is not None else _algorithm(log, agent),
        author=author,
        author_email=author_email,
        code_permalink=code_permalink,
        observation_space=obs_space,
        action_space=act_space,
        description=description or f"the {agent} agent's steps of the baton activity log {log.dir}",
        data_format=data_format,
    )
