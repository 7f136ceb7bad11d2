"""baton.pettingzoo: PettingZoo's own checkers on the maze, the web tester and
rock-paper-scissors, and the mapping of sub-episode ids onto agent names."""

import types

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.test.max_cycles_test import max_cycles_test

import baton.pettingzoo as bp
import baton.vector

ROCK, PAPER, SCISSORS = 0, 1, 2


@pytest.mark.parametrize("name", ["maze", "webtest", "rps"])
def test_api(name):
    env = bp.env(name)
    api_test(env, num_cycles=300)
    env.close()


@pytest.mark.parametrize("name", ["maze", "rps"])
def test_seed(name):
    seed_test(lambda: bp.env(name), num_cycles=200)


def test_parallel_api_and_seed():
    parallel_api_test(bp.parallel_env("rps"), num_cycles=300)
    parallel_seed_test(lambda: bp.parallel_env("rps"), num_cycles=200)


def test_max_cycles():
    mod = types.SimpleNamespace(
        env=lambda max_cycles: bp.env("rps", config={"max_cycles": max_cycles}),
        parallel_env=lambda max_cycles: bp.parallel_env("rps", config={"max_cycles": max_cycles}),
    )
    max_cycles_test(mod)


def test_maze_names_and_ids():
    # The agents are names; each motion sub-episode has an id of its own in the infos.
    env = bp.env("maze", config={"motion": {"max_steps": 10}})
    env.reset(seed=3)
    assert env.possible_agents == ["strategy", "motion"] and env.agents == ["strategy", "motion"]
    assert env.infos["strategy"]["agent_id"] == "strategy_0" and env.infos["motion"]["agent_id"] == ""
    seen, ends = set(), 0
    for agent in env.agent_iter(400):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].any()
        seen.add(info["agent_id"])
        env.step(env.action_space(agent).sample(info["action_mask"]))
        ends += env.infos.get("motion", {}).get("sub_episode_end", False)
    assert {"motion_0", "motion_1", "strategy_0"} <= seen
    assert not env.agents  # the episode ended and every agent was removed


def test_strategy_span_reward():
    # The oracle's first decision (LEFT) with the motion agent walking forward: the
    # strategy is rewarded when control returns, for a span of 2 ticks.
    env = bp.env("maze")
    env.reset(seed=0)
    assert env.agent_selection == "strategy"
    env.step(3)
    assert env.agent_selection == "motion" and env.infos["motion"]["sub_episode_start"]
    env.step(1)
    assert env.agent_selection == "strategy"
    assert env.infos["strategy"]["span_ticks"] == 2
    assert env.infos["motion"]["sub_episode_end"] and env.rewards["motion"] == 1.0
    assert env.observe("strategy")[-6:-4].tolist() == [4, 8]
    with pytest.raises(baton.vector.ActionError, match="masked"):
        env.step(0)  # UP, a wall: nothing changes
    assert env.agent_selection == "strategy"


def test_rps_rounds():
    par = bp.parallel_env("rps", config={"max_cycles": 2})
    obs, infos = par.reset(seed=0)
    assert obs["player_0"].tolist() == [0, 0, 0, 1]
    obs, rew, term, trunc, infos = par.step({"player_0": PAPER, "player_1": ROCK})
    assert rew == {"player_0": 1.0, "player_1": -1.0}
    assert obs["player_0"].tolist() == [1, 0, 0, 0] and obs["player_1"].tolist() == [0, 1, 0, 0]
    assert not any(term.values()) and not any(trunc.values())
    # A round is applied whole or not at all.
    with pytest.raises(KeyError, match="player_1"):
        par.step({"player_0": ROCK})
    with pytest.raises(baton.vector.ActionError, match="outside"):
        par.step({"player_0": ROCK, "player_1": 3})
    obs, rew, term, trunc, infos = par.step({"player_0": SCISSORS, "player_1": ROCK})
    assert rew == {"player_0": -1.0, "player_1": 1.0}
    assert trunc == {"player_0": True, "player_1": True} and not any(term.values())
    assert par.agents == []
