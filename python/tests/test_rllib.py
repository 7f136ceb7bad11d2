"""baton.rllib: the maze as an RLlib MultiAgentEnv, checked by RLlib's own checker,
against the fast lane (same seed and actions, same rewards), over gRPC against the
fast lane, and trained for a few PPO iterations with two env runners."""

import numpy as np
import pytest
import ray
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

import baton.rllib as br
import baton.vector
import raylocal
from test_remote_go import baton_bin, serve  # noqa: F401  (fixtures)

MAZE_SEED = 7


def play(env, seed, rng, limit=10_000):
    """One episode with uniformly drawn allowed actions: the per-step (actions, obs,
    rewards, terminateds, truncateds, infos, env.agents), the first entry the reset's."""
    obs, infos = env.reset(seed=seed)
    steps = [(None, obs, {}, {}, {}, infos, list(env.agents))]
    for _ in range(limit):
        aid = env._next
        m = obs[aid]["action_mask"].astype(bool) if isinstance(obs[aid], dict) else infos[aid]["action_mask"]
        a = int(rng.choice(np.flatnonzero(m)))
        obs, rewards, terms, truncs, infos = env.step({aid: a})
        steps.append(({aid: a}, obs, rewards, terms, truncs, infos, list(env.agents)))
        if terms["__all__"] or truncs["__all__"]:
            return steps
    raise AssertionError("the episode did not end")


@pytest.fixture
def maze():
    env = br.BatonMultiAgentEnv({"env": "maze"})
    yield env
    env.close()


def test_names_and_mapping():
    assert br.agent_name("motion_3") == "motion"
    assert br.agent_name("strategy_0") == "strategy"
    assert br.agent_name("player") == "player"
    assert br.policy_mapping_fn("motion_12", None) == "motion"
    assert br.policy_mapping_fn("strategy_0", None, worker=None) == "strategy"


@pytest.mark.parametrize("masking", [False, True])
def test_rllib_checks_the_env(masking):
    # RLlib's checker steps an action sampled from the space, without the mask.
    env = br.BatonMultiAgentEnv({"env": "maze", "action_masking": masking, "invalid_action": "terminate"})
    check_multiagent_environments(env)
    for aid in env.possible_agents:
        assert env.get_observation_space(aid) is env.observation_spaces[br.agent_name(aid) + "_0"]
    env.close()


def test_spaces(maze):
    assert maze.possible_agents[0] == "strategy_0"
    assert {"strategy_63", "motion_0", "motion_63"} <= set(maze.possible_agents)
    assert len(maze.possible_agents) == 2 * 64
    assert maze.observation_spaces["strategy_0"].shape == (106,)
    assert maze.observation_spaces["motion_5"].shape == (104,)
    assert maze.action_spaces["strategy_0"].n == 4 and maze.action_spaces["motion_9"].n == 2
    masked = br.BatonMultiAgentEnv({"env": "maze", "action_masking": True})
    sp = masked.observation_spaces["motion_1"]
    assert set(sp.spaces) == {"observations", "action_mask"} and sp["action_mask"].shape == (2,)
    obs, _ = masked.reset(seed=3)
    assert masked.observation_spaces["strategy_0"].contains(obs["strategy_0"])
    _, infos = maze.reset(seed=3)
    np.testing.assert_array_equal(obs["strategy_0"]["action_mask"], infos["strategy_0"]["action_mask"].astype(np.float32))
    assert 0 < obs["strategy_0"]["action_mask"].sum() < 4
    masked.close()


def test_ids_invocations_and_episode_end(maze):
    steps = play(maze, MAZE_SEED, np.random.default_rng(1))
    _, obs0, *_ = steps[0]
    assert list(obs0) == ["strategy_0"]
    acted = [next(iter(s[0])) for s in steps[1:]]
    motions = [a for a in dict.fromkeys(acted) if a.startswith("motion_")]
    assert motions == [f"motion_{k}" for k in range(len(motions))]
    assert set(a for a in acted if a.startswith("strategy")) == {"strategy_0"}
    ended = set()
    for actions, obs, rewards, terms, truncs, infos, agents in steps[1:]:
        (aid,) = actions
        assert aid not in ended, f"{aid} acted after its end"
        for i in obs:
            assert i in maze.possible_agents and infos[i]["agent"] == br.agent_name(i)
            if terms.get(i) or truncs.get(i):
                ended.add(i)
        assert set(rewards) <= set(agents) and set(obs) <= set(agents)
        live = [i for i in obs if not (terms.get(i) or truncs.get(i))]
        assert len(live) <= 1  # the agent acting next, alone
    *_, last = steps
    _, obs, rewards, terms, truncs, infos, _ = last
    assert terms["__all__"] != truncs["__all__"]
    assert all(terms[i] or truncs[i] for i in obs)
    assert infos["strategy_0"]["success"] == terms["__all__"]
    # A strategy's decision lasts its motion's sub-episode: its span is that many ticks + 1.
    spans = [s[5]["strategy_0"]["span_ticks"] for s in steps[1:] if "strategy_0" in s[1]]
    assert spans and all(s >= 2 for s in spans)
    with pytest.raises(baton.vector.StateError):
        maze.step({"strategy_0": 0})


@pytest.mark.parametrize("seed", [MAZE_SEED, 11])
def test_rewards_equal_the_fast_lane(maze, seed):
    """The same seed and actions on baton.vector.make("maze", num_envs=1): the same
    observations of the acting agent and the same rewards per agent name, step by step."""
    steps = play(maze, seed, np.random.default_rng(seed))
    v = baton.vector.make("maze", num_envs=1)
    groups = v.reset(seed)
    names = v.agent_names
    np.testing.assert_array_equal(groups["strategy"].obs[0], steps[0][1]["strategy_0"])
    for actions, obs, rewards, terms, truncs, infos, _ in steps[1:]:
        ((aid, a),) = actions.items()
        name = br.agent_name(aid)
        assert len(groups[name]) == 1
        groups, vrew, vterm, vtrunc, ended = v.step({name: np.array([a])})
        got = {n: 0.0 for n in names}
        for i, r in rewards.items():
            got[br.agent_name(i)] += r
        assert got == {n: float(vrew[0, j]) for j, n in enumerate(names)}
        if ended[0]:
            assert terms["__all__"] == bool(vterm[0, 0])
            break
        (nxt,) = [i for i in obs if not (terms.get(i) or truncs.get(i))]
        np.testing.assert_array_equal(groups[br.agent_name(nxt)].obs[0], obs[nxt])
    else:
        raise AssertionError("the fast lane's episode did not end with the env's")
    v.close()


def test_bad_actions_name_the_agent_and_change_nothing(maze):
    obs, infos = maze.reset(seed=MAZE_SEED)
    mask = infos["strategy_0"]["action_mask"]
    bad, good = int(np.flatnonzero(~mask)[0]), int(np.flatnonzero(mask)[0])
    cases = {
        "masked": ({"strategy_0": bad}, "strategy_0: action .* masked"),
        "outside": ({"strategy_0": 9}, r"strategy_0: action 9 outside Discrete\(4"),
        "not acting": ({"motion_0": 0}, "agent strategy_0 acts now"),
        "two": ({"strategy_0": good, "motion_0": 0}, "agent strategy_0 acts now"),
        "not an int": ({"strategy_0": "up"}, "not an integer"),
    }
    for name, (actions, match) in cases.items():
        with pytest.raises(baton.vector.ActionError, match=match):
            maze.step(actions)
    obs, rewards, terms, truncs, infos = maze.step({"strategy_0": good})
    assert list(obs) == ["motion_0"] and not terms["__all__"]


def test_invalid_action_terminate():
    env = br.BatonMultiAgentEnv({"env": "maze", "invalid_action": "terminate", "invalid_reward": -1.0})
    obs, infos = env.reset(seed=MAZE_SEED)
    bad = int(np.flatnonzero(~infos["strategy_0"]["action_mask"])[0])
    obs, rewards, terms, truncs, infos = env.step({"strategy_0": bad})
    assert rewards == {"strategy_0": -1.0} and terms == {"strategy_0": True, "__all__": True}
    assert infos["strategy_0"]["invalid_action"] and not infos["strategy_0"]["success"]
    env.close()


def test_config_errors_and_id_limit():
    for cfg, match in [({"env": "maze", "bogus": 1}, "unknown config keys"),
                       ({"invalid_action": "ignore"}, "invalid_action"),
                       ({"ids_per_agent": 0}, "ids_per_agent"),
                       ({"agent_ids": "index"}, "agent_ids")]:
        with pytest.raises(baton.vector.ConfigError, match=match):
            br.BatonMultiAgentEnv(cfg)
    with pytest.raises(baton.vector.ConfigError):
        br.BatonMultiAgentEnv({"env": "no-such-env"})
    env = br.BatonMultiAgentEnv({"env": "maze", "ids_per_agent": 2})
    with pytest.raises(br.IdError, match="motion_2 is outside possible_agents"):
        play(env, MAZE_SEED, np.random.default_rng(0))
    env.close()


def test_remote_equals_the_fast_lane(serve):  # noqa: F811
    addr = serve("env", "--addr", "127.0.0.1:0").addr
    remote = br.BatonMultiAgentEnv({"env": "maze", "address": addr, "action_masking": True})
    local = br.BatonMultiAgentEnv({"env": "maze", "action_masking": True})
    assert remote.possible_agents == local.possible_agents
    assert remote.observation_spaces["motion_3"] == local.observation_spaces["motion_3"]
    got = play(remote, MAZE_SEED, np.random.default_rng(5))
    want = play(local, MAZE_SEED, np.random.default_rng(5))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0] == w[0] and g[2:5] == w[2:5]
        assert g[1].keys() == w[1].keys()
        for i in g[1]:
            for k in ("observations", "action_mask"):
                np.testing.assert_array_equal(g[1][i][k], w[1][i][k])
    remote.close()
    local.close()


@pytest.fixture
def ray_two_cpus():
    temp = raylocal.start(num_cpus=2, configure_logging=False, log_to_driver=False)
    try:
        yield
    finally:
        raylocal.stop(temp)


@pytest.mark.go
def test_ppo_trains_with_two_env_runners(ray_two_cpus):
    """A few PPO iterations of examples/python/rllib_maze.py's config: both modules
    learn from both agents' steps, sampled by two env runner processes
    (baton.rllib.MultiAgentEnvRunner, its direct connectors)."""
    import rllib_maze

    cfg = rllib_maze.ppo_config({"env": "maze", "seed": 1}, env_runners=2, envs_per_runner=2,
                                batch=400, minibatch=100, epochs=2, seed=1)
    algo = cfg.env_runners(env_runner_cls=br.MultiAgentEnvRunner).build_algo()
    try:
        for _ in range(2):
            res = algo.train()
        runners = res["env_runners"]
        assert runners["num_env_steps_sampled_lifetime"] >= 800
        assert set(res["learners"]) >= {"strategy", "motion"}
        direct = algo.env_runner_group.foreach_env_runner(lambda r: getattr(r, "_baton_direct", None),
                                                          local_env_runner=False)
        assert direct == [True, True]
        modules = {m: algo.get_module(m) for m in ("strategy", "motion")}
        ev = rllib_maze.evaluate(modules, {"env": "maze"}, episodes=3)
        assert 0.0 <= ev["success"] <= 1.0 and ev["episode_ticks"] > 0
    finally:
        algo.stop()


def test_name_ids_checked_by_rllib_and_by_its_episode():
    """agent_ids="name": RLlib's checker accepts it, and RLlib's MultiAgentEpisode takes
    whole episodes of it: one agent id per name, the same steps and returns as the
    per-invocation form for the same seed and actions."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    for masking in (False, True):
        env = br.BatonMultiAgentEnv({"env": "maze", "agent_ids": "name", "action_masking": masking,
                                     "invalid_action": "terminate"})
        check_multiagent_environments(env)
        env.close()
    by_name = br.BatonMultiAgentEnv({"env": "maze", "agent_ids": "name"})
    by_call = br.BatonMultiAgentEnv({"env": "maze"})
    assert by_name.possible_agents == ["strategy", "motion"]
    assert by_name.observation_spaces["motion"] == by_call.observation_spaces["motion_7"]
    assert br.policy_mapping_fn("motion") == "motion"
    for seed in (MAZE_SEED, 11, 12):
        episodes = []
        for env in (by_name, by_call):
            e = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces)
            steps = play(env, seed, np.random.default_rng(seed))
            e.add_env_reset(observations=steps[0][1], infos=steps[0][5])
            for actions, obs, rewards, terms, truncs, infos, _ in steps[1:]:
                e.add_env_step(obs, actions, rewards, infos, terminateds=terms, truncateds=truncs)
            e.validate()
            episodes.append((e, steps))
        (en, sn), (ec, sc) = episodes
        assert [next(iter(s[0])) for s in sn[1:]] == [br.agent_name(next(iter(s[0]))) for s in sc[1:]]
        assert set(en.agent_episodes) == {"strategy", "motion"}
        assert en.get_return() == pytest.approx(ec.get_return())
        for name in ("strategy", "motion"):
            calls = [sa for i, sa in ec.agent_episodes.items() if br.agent_name(i) == name]
            assert len(en.agent_episodes[name]) == sum(len(sa) for sa in calls)
            assert en.agent_episodes[name].get_return() == pytest.approx(sum(sa.get_return() for sa in calls))
        assert en.is_terminated == ec.is_terminated


def test_name_ids_carry_the_sub_episodes_in_infos():
    env = br.BatonMultiAgentEnv({"env": "maze", "agent_ids": "name"})
    steps = play(env, MAZE_SEED, np.random.default_rng(1))
    shown = [(i, infos[i]) for _, obs, _, terms, truncs, infos, _ in steps[:-1] for i in obs]
    assert all(set(obs) <= {"strategy", "motion"} and len(obs) == 1 for _, obs, *_ in steps[:-1])
    motion = [info for i, info in shown if i == "motion"]
    starts = [info["agent_id"] for info in motion if info["sub_episode_start"]]
    assert starts == [f"motion_{k}" for k in range(len(starts))] and len(starts) >= 2
    # Each invocation after the first tells how the one before it ended.
    for info in motion:
        if info["sub_episode_start"] and info["agent_id"] != "motion_0":
            assert info["previous_terminated"] or info["previous_truncated"]
        else:
            assert "previous_terminated" not in info
    assert {info["agent_id"] for i, info in shown if i == "strategy"} == {"strategy_0"}
    _, obs, rewards, terms, truncs, infos, _ = steps[-1]
    assert set(obs) == {"strategy", "motion"} and all(terms[i] or truncs[i] for i in obs)
    assert infos["strategy"]["success"] == terms["__all__"]
    env.close()


def _step_counts(metrics):
    """The env runner's sampled step and episode counts: per env, agent id and module."""
    keys = ("num_env_steps_sampled", "num_env_steps_sampled_lifetime", "num_episodes", "num_episodes_lifetime",
            "num_agent_steps_sampled", "num_agent_steps_sampled_lifetime", "num_module_steps_sampled",
            "num_module_steps_sampled_lifetime")
    out = {k: metrics[k] for k in keys if k in metrics}
    assert out.get("num_agent_steps_sampled") and out.get("num_module_steps_sampled")
    return out


def test_env_runner_numpy_izes_once_and_samples_the_same():
    """baton.rllib.MultiAgentEnvRunner returns what RLlib's MultiAgentEnvRunner returns
    (same config and seeds: the same episodes, numpy-ized), for both id forms."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    name = br.register()
    for form in ("invocation", "name"):
        got = {}
        for cls in (MultiAgentEnvRunner, br.MultiAgentEnvRunner):
            cfg = (PPOConfig()
                   .environment(name, env_config={"env": "maze", "seed": 3, "agent_ids": form,
                                                  "invalid_action": "terminate"})
                   .env_runners(num_env_runners=0, num_envs_per_env_runner=2, env_runner_cls=cls)
                   .multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=br.policy_mapping_fn)
                   .debugging(seed=1))
            runner = cls(config=cfg)
            episodes = runner.sample(num_timesteps=120)
            if cls is br.MultiAgentEnvRunner:  # its modules stay in eval mode
                assert not any(m.training for m in runner.module.values())
            counts = _step_counts(runner.get_metrics())
            runner.stop()
            assert all(sa.is_numpy for e in episodes for sa in e.agent_episodes.values())
            got[cls] = [(len(e), sorted(e.agent_episodes), round(e.get_return(), 6)) for e in episodes], counts
        assert got[MultiAgentEnvRunner] == got[br.MultiAgentEnvRunner]
        got = {cls: v[0] for cls, v in got.items()}
        assert sum(n for n, _, _ in got[MultiAgentEnvRunner]) >= 120


def _episode_data(episodes):
    out = []
    for e in episodes:
        for aid, sa in sorted(e.agent_episodes.items()):
            out.append((e.env_t_started, len(e), aid, sa.module_id, sa.is_terminated, sa.is_truncated,
                        np.asarray(sa.get_actions()).tolist(), np.asarray(sa.get_rewards()).tolist(),
                        {k: np.asarray(sa.get_extra_model_outputs(k)).tolist()
                         for k in sorted(sa.extra_model_outputs) if k != "weights_seq_no"},
                        repr(sa.get_observations())))
    return out


@pytest.mark.parametrize("masked", [True, False])
def test_env_runner_direct_connectors_sample_the_same(masked):
    """baton.rllib.MultiAgentEnvRunner's direct connectors give the episodes (observations,
    actions, rewards, action log-probabilities and distribution inputs) that RLlib's
    connector pipelines give for the same seeds, over two sample calls (an episode cut
    and continued), for both id forms."""
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    class Pipelines(br.MultiAgentEnvRunner):
        direct_connectors = False

    name = br.register()
    for form in ("invocation", "name"):
        got = {}
        for cls in (Pipelines, br.MultiAgentEnvRunner):
            torch.manual_seed(0)
            cfg = (PPOConfig()
                   .environment(name, env_config={"env": "maze", "seed": 3, "agent_ids": form,
                                                  "invalid_action": "terminate", "action_masking": masked})
                   .env_runners(num_env_runners=0, num_envs_per_env_runner=3, env_runner_cls=cls)
                   .multi_agent(policies={"strategy", "motion"}, policy_mapping_fn=br.policy_mapping_fn)
                   .debugging(seed=1))
            if masked:
                spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule)
                cfg = cfg.rl_module(rl_module_spec=MultiRLModuleSpec(
                    rl_module_specs={"strategy": spec, "motion": spec}))
            runner = cls(config=cfg)
            episodes = runner.sample(num_timesteps=150) + runner.sample(num_timesteps=150)
            assert getattr(runner, "_baton_direct", False) is (cls is br.MultiAgentEnvRunner)
            runner.stop()
            got[cls] = _episode_data(episodes)
        assert got[Pipelines] == got[br.MultiAgentEnvRunner]
        assert sum(1 for x in got[Pipelines] if x[6]) > 10
