"""baton.experience: the pairing of datalog/doc.go ("Transitions") over hand-built
arrays."""

import numpy as np
import pytest

import baton

# Rows of one agent in the log's order. Each: (trial, episode, agent_id, tick, start,
# acting, action, reward, terminated, truncated, span_ticks). Observations are
# derived from the row so that a pairing mistake shows.
ROWS = [
    # trial t0, episode 0: m_0 acts at ticks 0 and 1, its decision at 1 takes 2 ticks.
    ("t0", 0, "m_0", 0, True, True, 0, 0.0, False, False, 0),
    ("t0", 0, "m_0", 1, False, True, 2, 0.5, False, False, 1),
    # m_1 starts while m_0 is still running (another sub-episode, same agent)
    ("t0", 0, "m_1", 2, True, True, 0, 0.0, False, False, 0),
    ("t0", 0, "m_0", 3, False, False, 1, 1.0, True, False, 2),
    ("t0", 0, "m_1", 4, False, True, 3, -0.25, False, False, 2),
    # m_1's last acting row has no row after it: no transition begins there.
    # episode 1 of t0 reuses the id m_0: never paired with episode 0.
    ("t0", 1, "m_0", 0, True, True, 0, 0.0, False, False, 0),
    ("t0", 1, "m_0", 1, False, False, 1, 2.0, False, True, 1),
    # trial t1, same ids again.
    ("t1", 0, "m_0", 0, True, True, 0, 0.0, False, False, 0),
    ("t1", 0, "m_0", 5, False, True, 2, 3.0, False, False, 5),
    ("t1", 0, "m_0", 6, False, False, 3, 4.0, True, False, 1),
]

D = 3  # observation size
M = 4  # mask length


def obs_of(i):
    return np.array([i, 10 * i, -i], dtype=np.float32)


def mask_of(i):
    return np.array([(i + k) % 2 == 0 for k in range(M)])


def columns(rows=ROWS, action_shape=None):
    n = len(rows)
    c = {
        "trial_id": np.array([r[0] for r in rows], dtype=object),
        "episode": np.array([r[1] for r in rows], dtype=np.int32),
        "agent_id": np.array([r[2] for r in rows], dtype=object),
        "tick": np.array([r[3] for r in rows], dtype=np.int64),
        "start": np.array([r[4] for r in rows]),
        "acting": np.array([r[5] for r in rows]),
        "action": np.array([r[6] for r in rows], dtype=np.int64),
        "reward": np.array([r[7] for r in rows], dtype=np.float32),
        "terminated": np.array([r[8] for r in rows]),
        "truncated": np.array([r[9] for r in rows]),
        "span_ticks": np.array([r[10] for r in rows], dtype=np.int32),
        "observation": np.stack([obs_of(i) for i in range(n)]),
        "action_mask": np.stack([mask_of(i) for i in range(n)]),
    }
    if action_shape is not None:
        c["action"] = np.stack([np.full(action_shape, r[6], dtype=np.float32) for r in rows])
    return c


# The transitions the convention gives: (row k-1, row k) by position in ROWS.
EXPECTED_PAIRS = [(0, 1), (1, 3), (2, 4), (5, 6), (7, 8), (8, 9)]


def as_set(t):
    return {(int(p), int(r)) for p, r in zip(t.prev_row, t.row)}


def test_pairs_follow_the_convention():
    c = columns()
    t = baton.build_transitions(c)
    assert len(t) == len(EXPECTED_PAIRS)
    assert as_set(t) == set(EXPECTED_PAIRS)
    for k in range(len(t)):
        p, r = int(t.prev_row[k]), int(t.row[k])
        np.testing.assert_array_equal(t.obs[k], obs_of(p))
        np.testing.assert_array_equal(t.next_obs[k], obs_of(r))
        np.testing.assert_array_equal(t.mask[k], mask_of(p))
        np.testing.assert_array_equal(t.next_mask[k], mask_of(r))
        assert t.action[k] == ROWS[r][6]
        assert t.reward[k] == np.float32(ROWS[r][7])
        assert t.terminated[k] == ROWS[r][8] and t.truncated[k] == ROWS[r][9]
        assert t.span_ticks[k] == ROWS[r][10]
        assert t.next_acting[k] == ROWS[r][5]
        assert (t.trial_id[k], t.episode[k], t.agent_id[k], t.tick[k]) == ROWS[r][:4]
        # tick - span_ticks is the tick the agent acted at.
        assert t.tick[k] - t.span_ticks[k] == ROWS[p][3]
    assert t.obs.dtype == np.float32 and t.reward.dtype == np.float32
    assert t.action.dtype == np.int64 and t.span_ticks.dtype == np.int32
    np.testing.assert_array_equal(t.done, t.terminated | t.truncated)


def test_order_of_rows_does_not_matter():
    rng = np.random.default_rng(7)
    perm = rng.permutation(len(ROWS))
    rows = [ROWS[i] for i in perm]
    c = columns(rows)
    # keep each row's observation as in ROWS, to compare with the unshuffled result
    c["observation"] = np.stack([obs_of(i) for i in perm])
    t = baton.build_transitions(c)
    assert {(int(perm[p]), int(perm[r])) for p, r in zip(t.prev_row, t.row)} == set(EXPECTED_PAIRS)
    for k in range(len(t)):
        np.testing.assert_array_equal(t.obs[k], obs_of(perm[t.prev_row[k]]))


def test_discount():
    t = baton.build_transitions(columns())
    np.testing.assert_allclose(t.discount(0.9), np.float32(0.9) ** t.span_ticks.astype(np.float32))
    assert t.discount(0.9).dtype == np.float32


def test_box_actions_and_no_mask():
    c = columns(action_shape=(2,))
    del c["action_mask"]
    t = baton.build_transitions(c)
    assert t.mask is None and t.next_mask is None
    assert t.action.shape == (len(EXPECTED_PAIRS), 2) and t.action.dtype == np.float32


def test_select():
    t = baton.build_transitions(columns())
    s = t.select(t.terminated)
    assert len(s) == int(t.terminated.sum()) == 2
    assert s.mask.shape == (2, M)


def test_empty():
    c = {k: v[:0] for k, v in columns().items()}
    t = baton.build_transitions(c)
    assert len(t) == 0 and t.obs.shape == (0, D)


def test_missing_column():
    c = columns()
    del c["span_ticks"]
    with pytest.raises(KeyError, match="span_ticks"):
        baton.build_transitions(c)


def test_rows_that_break_the_convention():
    # The start row of t1's m_0 lost: its next row has no row before it.
    rows = [r for i, r in enumerate(ROWS) if i != 7]
    with pytest.raises(baton.PairingError, match="not a start row"):
        baton.build_transitions(columns(rows))
    t = baton.build_transitions(columns(rows), check=False)
    assert len(t) == len(EXPECTED_PAIRS) - 1  # (7, 8) is gone; (8, 9) stays

    rows = list(ROWS)
    rows[1] = rows[1][:5] + (False,) + rows[1][6:]  # m_0 did not act at tick 1
    with pytest.raises(baton.PairingError, match="did not act"):
        baton.build_transitions(columns(rows))

    rows = list(ROWS)
    rows[3] = rows[3][:10] + (1,)  # span 1 from tick 3 is tick 2, not m_0's tick 1
    with pytest.raises(baton.PairingError, match="span_ticks"):
        baton.build_transitions(columns(rows))
