"""Experience: an agent's logged steps paired into RL transitions (obs, action,
reward, next_obs, ...), in numpy. (Go's package transitions, the machine that hands
control between agents, is another thing.)

datalog/doc.go ("Transitions") defines them: for the rows of one agent id within a
trial and episode, in the log's order (or sorted by tick), every row k that is not a
start row ends a transition begun on row k-1:

    (obs, mask) = row[k-1].observation, row[k-1].action_mask   (row k-1 has acting set)
    action      = row[k].action
    reward      = row[k].reward (plus its retroactive rewards)
    next_obs    = row[k].observation
    terminated  = row[k].terminated;  truncated = row[k].truncated
    span_ticks  = row[k].span_ticks   (discount gamma ** span_ticks)

and row[k].tick - row[k].span_ticks == row[k-1].tick. An acting row with no row after
it (an episode cut by the runner's tick limit, a trial stopped) begins no transition:
its action is not in the log.

``build_transitions`` does this over plain numpy arrays, one per column, so it needs
neither pyarrow nor a log; ``baton.load`` gives it the columns it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

__all__ = ["Transitions", "build_transitions", "PairingError"]

_REQUIRED = (
    "trial_id",
    "episode",
    "agent_id",
    "tick",
    "start",
    "acting",
    "observation",
    "action",
    "reward",
    "terminated",
    "truncated",
    "span_ticks",
)


#: Three rows of one agent id, for the examples: a start row at tick 0, a decision of
#: one tick, then one of two that ends the sub-episode.
_EXAMPLE = {
    "trial_id": np.array(["t-0"] * 3, dtype=object),
    "episode": np.zeros(3, np.int32),
    "agent_id": np.array(["a_0"] * 3, dtype=object),
    "tick": np.array([0, 1, 3]),
    "start": np.array([True, False, False]),
    "acting": np.array([True, True, False]),
    "observation": np.arange(3, dtype=np.float32).reshape(3, 1),
    "action": np.array([0, 1, 0]),
    "reward": np.array([0, 1, 2], np.float32),
    "terminated": np.array([False, False, True]),
    "truncated": np.zeros(3, bool),
    "span_ticks": np.array([0, 1, 2], np.int32),
}


class PairingError(ValueError):
    """Rows that break the pairing convention of datalog/doc.go."""


@dataclass
class Transitions:
    """T transitions of one agent, as parallel arrays.

    obs and next_obs are flat float32 observations (T, observation_dim); action is
    int64 (T,) for a Discrete action space, (T, n) otherwise; reward float32 (T,);
    terminated, truncated bool (T,); span_ticks int32 (T,); mask and next_mask the
    action masks (T, mask_len) bool on obs and on next_obs, or None for an agent
    without a mask; next_acting tells whether the agent acted again on next_obs.
    trial_id, episode, agent_id and tick (of the row that ends the transition) say
    where each comes from; row and prev_row are the positions of its two rows in the
    columns given to build_transitions.
    """

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    span_ticks: np.ndarray
    mask: np.ndarray | None
    next_mask: np.ndarray | None
    next_acting: np.ndarray
    trial_id: np.ndarray
    episode: np.ndarray
    agent_id: np.ndarray
    tick: np.ndarray
    row: np.ndarray
    prev_row: np.ndarray

    def __len__(self) -> int:
        return int(self.reward.shape[0])

    @property
    def done(self) -> np.ndarray:
        """terminated or truncated: the sub-episode ended on next_obs.

        >>> build_transitions(_EXAMPLE).done.tolist()
        [False, True]
        """
        return self.terminated | self.truncated

    def discount(self, gamma: float) -> np.ndarray:
        """gamma ** span_ticks, the discount of each decision (float32).

        >>> t = build_transitions(_EXAMPLE)
        >>> t.span_ticks.tolist(), t.discount(0.5).tolist()
        ([1, 2], [0.5, 0.25])
        """
        return np.power(np.float32(gamma), self.span_ticks.astype(np.float32))

    def select(self, which: Any) -> Transitions:
        """The transitions at ``which`` (a boolean mask or indices).

        >>> len(build_transitions(_EXAMPLE).select([1]))
        1
        """
        kw = {}
        for f in fields(self):
            v = getattr(self, f.name)
            kw[f.name] = None if v is None else v[which]
        return Transitions(**kw)


def _codes(a: np.ndarray) -> np.ndarray:
    """Integer codes of a's values (strings or numbers): equal values, equal codes."""
    a = np.asarray(a)
    if a.dtype == object:
        a = a.astype(str)
    return np.unique(a, return_inverse=True)[1].reshape(-1)


def build_transitions(columns: Mapping[str, Any], check: bool = True) -> Transitions:
    """Pairs an agent's rows into transitions.

    ``columns`` maps column names to numpy arrays of N rows, as ``baton.load`` gives
    them (``AgentData.columns``) or as one builds them by hand: trial_id, episode,
    agent_id, tick, start, acting, observation (N, D), action ((N,) or (N, n); any
    value on start rows), reward (the whole reward: add the retroactive rewards
    first), terminated, truncated, span_ticks, and action_mask (N, M) if the agent has
    one. Rows may come in any order: they are grouped by (trial_id, episode, agent_id)
    and ordered by tick, ties kept in the given order.

    With ``check`` (the default) rows that break the convention raise PairingError: a
    row that is not a start row but has no earlier row of its agent id, a previous
    row that did not act, or a tick minus span_ticks that is not the previous row's
    tick; KeyError names missing columns, ValueError a column of the wrong length.

    >>> t = build_transitions(_EXAMPLE)  # one agent id: a start row, then two decisions
    >>> t.obs[:, 0].tolist(), t.action.tolist(), t.next_obs[:, 0].tolist(), t.terminated.tolist()
    ([0.0, 1.0], [1, 0], [1.0, 2.0], [False, True])
    """
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise KeyError(f"build_transitions: missing columns {', '.join(missing)}")
    n = len(columns["tick"])
    for c in _REQUIRED:
        if len(columns[c]) != n:
            raise ValueError(f"build_transitions: column {c} has {len(columns[c])} rows; tick has {n}")

    tick = np.asarray(columns["tick"], dtype=np.int64)
    episode = np.asarray(columns["episode"], dtype=np.int64)
    start = np.asarray(columns["start"], dtype=bool)
    acting = np.asarray(columns["acting"], dtype=bool)
    span = np.asarray(columns["span_ticks"], dtype=np.int32)
    trial_c = _codes(columns["trial_id"])
    agent_c = _codes(columns["agent_id"])

    # Sort by (trial, episode, agent id, tick, position); np.lexsort's last key is the
    # primary one.
    order = np.lexsort((np.arange(n), tick, agent_c, episode, trial_c))
    prev, cur = order[:-1], order[1:]
    same = (trial_c[prev] == trial_c[cur]) & (episode[prev] == episode[cur]) & (agent_c[prev] == agent_c[cur])
    pair = same & ~start[cur]

    if check and n:
        first = np.ones(n, dtype=bool)  # first row of its group, in sorted order
        first[1:] = ~same
        orphan = order[first & ~start[order]]
        if orphan.size:
            i = int(orphan[0])
            raise PairingError(
                f"row {i} ({_where(columns, i)}) is not a start row but is the first row of its "
                f"agent id in its episode: rows are missing (pass check=False to skip such rows)"
            )
        p, c = prev[pair], cur[pair]
        bad = np.flatnonzero(~acting[p])
        if bad.size:
            i = int(c[bad[0]])
            raise PairingError(f"row {i} ({_where(columns, i)}) follows a row of its agent id that did not act")
        bad = np.flatnonzero(tick[c] - span[c] != tick[p])
        if bad.size:
            i, j = int(c[bad[0]]), int(p[bad[0]])
            raise PairingError(
                f"row {i} ({_where(columns, i)}): tick {tick[i]} - span_ticks {span[i]} is not the "
                f"tick {tick[j]} of the previous row of its agent id"
            )

    p, c = prev[pair], cur[pair]
    obs = np.asarray(columns["observation"])
    action = np.asarray(columns["action"])
    mask = columns.get("action_mask")
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    return Transitions(
        obs=obs[p],
        action=action[c],
        reward=np.asarray(columns["reward"], dtype=np.float32)[c],
        next_obs=obs[c],
        terminated=np.asarray(columns["terminated"], dtype=bool)[c],
        truncated=np.asarray(columns["truncated"], dtype=bool)[c],
        span_ticks=span[c],
        mask=None if mask is None else mask[p],
        next_mask=None if mask is None else mask[c],
        next_acting=acting[c],
        trial_id=np.asarray(columns["trial_id"])[c],
        episode=episode[c],
        agent_id=np.asarray(columns["agent_id"])[c],
        tick=tick[c],
        row=c,
        prev_row=p,
    )


def _where(columns: Mapping[str, Any], i: int) -> str:
    return (
        f"trial {columns['trial_id'][i]}, episode {columns['episode'][i]}, "
        f"{columns['agent_id'][i]}, tick {columns['tick'][i]}"
    )
