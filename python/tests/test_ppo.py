"""baton.ppo: PPO for any environment of the fast lane. Short, seeded trainings of a
hierarchy (the maze: two agents, masks, decisions that span ticks) and of single
agents (cartpole, the flat maze), with baton.ppo's own networks, must beat the
untrained policies (close to uniform over the allowed actions) by a clear margin and
give the same curve and weights for the same seed; what it cannot train is refused
with a clear error; the command line prints its report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
import torch

import baton
import baton.ppo as ppo
import baton.vector
from baton.vector import AgentLayout

go = pytest.mark.go


@pytest.fixture
def one_thread():
    """Single-threaded torch, as the trainer's command runs by default: the same seed
    gives the same numbers, and CI stays cheap."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env})


def test_import_baton_leaves_torch_out():
    r = _python("import sys, baton, baton.vector; print('torch' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_without_torch_the_import_says_which_extra_to_install():
    r = _python("import sys; sys.modules['torch'] = None\n"
                "try:\n    import baton.ppo\nexcept ImportError as e:\n    print(e)\n")
    assert r.returncode == 0, r.stderr
    assert "baton[torch]" in r.stdout and "PyTorch" in r.stdout


@pytest.mark.parametrize("fields, named", [
    ({"gamma": 1.5}, "PPOConfig.gamma"),
    ({"num_envs": 0}, "PPOConfig.num_envs"),
    ({"rollout": 2.5}, "PPOConfig.rollout"),
    ({"lr": -1e-3}, "PPOConfig.lr"),
    ({"smdp": 1}, "PPOConfig.smdp"),
    ({"clip": float("nan")}, "PPOConfig.clip"),
])
def test_config_names_the_bad_field(fields, named):
    with pytest.raises(ValueError, match=named):
        ppo.PPOConfig(**fields)


def test_config_from_json_text_file_and_mapping(tmp_path):
    f = tmp_path / "ppo.json"
    f.write_text('{"gamma": 0.999, "num_envs": 16}')
    for src in ('{"gamma": 0.999, "num_envs": 16}', f"@{f}", {"gamma": 0.999, "num_envs": 16}):
        cfg = ppo.PPOConfig.from_json(src)
        assert cfg == ppo.PPOConfig(gamma=0.999, num_envs=16)
    assert ppo.PPOConfig.from_json('{"gamma": 1}').gamma == 1.0 and isinstance(ppo.PPOConfig.from_json('{"gamma": 1}').gamma, float)
    with pytest.raises(ValueError, match="no field 'gama'"):
        ppo.PPOConfig.from_json('{"gama": 0.9}')
    with pytest.raises(ValueError, match="not JSON"):
        ppo.PPOConfig.from_json("{gamma")
    with pytest.raises(ValueError, match="cannot read"):
        ppo.PPOConfig.from_json(f"@{tmp_path / 'missing.json'}")
    with pytest.raises(AttributeError):
        ppo.PPOConfig().gamma = 0.5  # frozen


def test_scale_divides_by_the_bounds_where_they_are_finite():
    space = gymnasium.spaces.Box(np.array([-2.0, 0.0, -np.inf, 0.0], np.float32), np.array([4.0, 5.0, np.inf, 0.0], np.float32))
    x = ppo.Scale(space, 4)(np.array([[1.0, 5.0, 7.0, 3.0]], np.float32))
    assert x.tolist() == [[0.25, 1.0, 7.0, 3.0]]
    assert x.dtype == np.float32


class _BoxArm:
    """A stand-in vector of one agent acting in a Box, as a fast lane of the future (or
    someone's own vector) might describe it."""

    closed = False

    def __init__(self, *args, **kwargs):
        box = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.agents = [AgentLayout("arm", 3, 0, 0, 0, gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float32), box)]

    def close(self):
        _BoxArm.closed = True


def test_actions_other_than_discrete_are_refused_by_name(monkeypatch):
    monkeypatch.setattr(baton.vector, "make", _BoxArm)
    with pytest.raises(ppo.UnsupportedError, match=r"agent 'arm' of 'reacher' acts in Box.*Discrete actions only"):
        ppo.train("reacher", steps=1000)
    assert _BoxArm.closed, "the vector made is closed"


def test_asynchronous_vectors_are_refused():
    with pytest.raises(ppo.UnsupportedError, match="batch_size"):
        ppo.train("cartpole", batch_size=8)


def test_train_checks_its_arguments():
    with pytest.raises(ValueError, match="steps is -1"):
        ppo.train("cartpole", steps=-1)
    with pytest.raises(ValueError, match="curve_every"):
        ppo.train("cartpole", curve_every=-1)


@go
def test_trains_the_maze_hierarchy_past_the_untrained_policies(one_thread):
    """Both agents of the maze learned together from their whole observations (no
    maze features): 49,152 env steps, about 6 s of CPU."""
    cfg = ppo.PPOConfig(num_envs=64)
    before = ppo.evaluate(ppo.untrained("maze", cfg, seed=1), "maze", episodes=200)
    res = ppo.train("maze", cfg, steps=49_152, seed=1, curve_every=4)
    after = res.evaluate(200)
    assert set(res.agents) == {"strategy", "motion"}
    assert res.env_steps == 49_152 and len(res.curve) == 6
    assert before["terminated"] <= 0.05, before
    assert after["terminated"] >= 0.5, (before, after)
    assert after["return"] == after["returns"]["strategy"], "the return is the top agent's: the strategy"
    assert res.curve[-1]["terminated"] > res.curve[0]["terminated"]


@go
@pytest.mark.parametrize("env, steps, cfg, margin", [
    # cartpole: the untrained policy keeps the pole up for about 21 ticks.
    ("cartpole", 32_768, ppo.PPOConfig(num_envs=32), lambda b, a: a["return"] >= 3 * b["return"]),
    # The flat maze: a tile a tick, 200 moves to find the goal; see PPOConfig.norm_adv.
    ("maze-flat", 40_960, ppo.PPOConfig(norm_adv=False),
     lambda b, a: a["terminated"] >= 0.9 and b["terminated"] <= 0.35),
])
def test_trains_single_agents_past_the_untrained_policy(one_thread, env, steps, cfg, margin):
    before = ppo.evaluate(ppo.untrained(env, cfg, seed=2), env, episodes=200)
    res = ppo.train(env, cfg, steps=steps, seed=2, curve_every=0)
    after = res.evaluate(200)
    assert res.curve == []
    assert margin(before, after), (before, after)


@go
def test_trains_one_agent_of_a_hierarchy_with_the_others_driven_in_go(one_thread):
    """The maze's strategy alone, the motion agent walking forward in Go: a step lasts a
    decision, its ticks counted as env steps."""
    view = {"agent": "strategy", "policies": {"motion": "forward"}}
    cfg = ppo.PPOConfig(num_envs=32)
    before = ppo.evaluate(ppo.untrained("maze", cfg, seed=1, **view), "maze", episodes=200, **view)
    res = ppo.train("maze", cfg, steps=32_768, seed=1, **view)
    after = res.evaluate(200)
    assert set(res.agents) == {"strategy"}
    assert after["episode_ticks"] > 1 and res.env_steps >= 32_768
    assert before["terminated"] <= 0.05 and after["terminated"] >= 0.5, (before, after)


@go
def test_same_seed_same_curve_and_weights(one_thread):
    def run(seed):
        res = ppo.train("maze", ppo.PPOConfig(num_envs=16, rollout=16), steps=2048, seed=seed)
        weights = torch.cat([p.detach().flatten() for a in res.agents.values() for p in a.net.parameters()])
        return res.curve, weights

    c1, w1 = run(5)
    c2, w2 = run(5)
    c3, w3 = run(6)
    assert len(c1) == 8 and c1 == c2
    assert torch.equal(w1, w2)
    assert not torch.equal(w1, w3)


@go
def test_decisions_are_discounted_by_their_span(one_thread):
    """One rollout with and without SMDP discounting, from the same seed: the rollouts
    are the same; the motion agent's decisions last a tick, so its update is the same,
    while the strategy's, which last the motion agent's sub-episode, differ."""
    spans = []

    class Watch(ppo.Trainer):
        def on_step(self, rows, outcome):
            if outcome is not None:
                j = self.vector.names.index("strategy")
                spans.append(outcome.spans[:, j].copy())

    weights = {}
    for smdp in (True, False):
        with Watch("maze", ppo.PPOConfig(num_envs=16, rollout=32, smdp=smdp), seed=4) as t:
            t.rollout()
            weights[smdp] = {n: torch.cat([p.detach().flatten() for p in a.net.parameters()]) for n, a in t.agents.items()}
    assert np.concatenate(spans).max() > 1, "a strategy decision lasts several ticks"
    assert torch.equal(weights[True]["motion"], weights[False]["motion"])
    assert not torch.equal(weights[True]["strategy"], weights[False]["strategy"])


@go
def test_networks_by_agent_name_and_agent_act(one_thread):
    made = []

    class Linear(ppo.Network):
        def __init__(self, obs_dim, n_actions):
            super().__init__(obs_dim)
            self.pi, self.v = torch.nn.Linear(obs_dim, n_actions), torch.nn.Linear(obs_dim, 1)

        def dist(self, x, mask):
            return ppo.MaskedCategorical(self.pi(x), mask)

        def value(self, x):
            return self.v(x).squeeze(-1)

    def linear(layout, cfg):
        made.append((layout.name, cfg.hidden))
        return Linear(layout.obs_dim, layout.actions)

    res = ppo.train("maze", ppo.PPOConfig(num_envs=8, rollout=8, hidden=16), steps=64, networks={"motion": linear})
    assert made == [("motion", 16)]
    assert isinstance(res.agents["motion"].net, Linear)
    assert isinstance(res.agents["strategy"].net, ppo.ActorCritic)

    v = baton.vector.make("maze", num_envs=4, seed=3)
    g = v.reset()["strategy"]
    a = res.agents["strategy"].act(g.obs, g.masks)
    assert a.shape == (4,) and g.masks[np.arange(4), a].all(), "only allowed actions"
    assert res.agents["strategy"].act(g.obs[0], g.masks[0], greedy=True).shape == (1,)
    v.close()

    half = ppo.evaluate(res.agents, "maze", episodes=10, keep=lambda rows: np.arange(10) % 2 == 0)
    whole = ppo.evaluate(res.agents, "maze", episodes=10)
    assert half["episodes"] == 5 and half["excluded"] == 5 and "excluded" not in whole
    with pytest.raises(TypeError, match="want a baton.ppo.Network"):
        ppo.train("maze", steps=0, networks=lambda layout, cfg: torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="no policy for agent 'motion'"):
        ppo.evaluate({"strategy": res.agents["strategy"]}, "maze", episodes=2)


@go
def test_vector_kwargs_reach_the_fast_lane(tmp_path, one_thread, monkeypatch):
    """log= records the training episodes (an activity log baton.load reads); any other
    keyword, as library= will be, reaches baton.vector.make as given."""
    d = str(tmp_path / "log")
    res = ppo.train("maze", ppo.PPOConfig(num_envs=8, rollout=16), steps=1024, log=d, policy="ppo")
    log = baton.load(d)
    assert set(log) == {"strategy", "motion"}
    assert {json.loads(t["policies"])["strategy"] for t in log.trials.to_pylist()} == {"ppo"}
    assert res.env_steps == 1024

    seen = []
    make = baton.vector.make

    def spy(name, **kw):
        seen.append(kw.pop("library", None))
        return make(name, **kw)

    monkeypatch.setattr(baton.vector, "make", spy)
    ppo.train("cartpole", ppo.PPOConfig(num_envs=4, rollout=4), steps=16, library="/opt/libmine.so")
    ppo.evaluate(res.agents, "maze", episodes=2, library="/opt/libmine.so")
    assert seen == ["/opt/libmine.so", "/opt/libmine.so"]


@go
def test_command_line_prints_its_report(tmp_path, one_thread, capsys):
    cfg = tmp_path / "maze.json"
    cfg.write_text('{"motion": {"reward_for_wrong_direction": -1.5}}')
    png = tmp_path / "curve.png"
    rc = ppo.main(["--env", "maze", "--config", f"@{cfg}", "--ppo", '{"num_envs": 16, "rollout": 16}',
                   "--steps", "4096", "--seed", "3", "--eval-episodes", "20", "--curve-every", "4", "--json",
                   "--png", str(png)])
    assert rc == 0
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert "env steps" in out.err, "a line per curve point, on stderr with --json"
    assert report["env"] == "maze" and report["config"] == {"motion": {"reward_for_wrong_direction": -1.5}}
    assert report["env_steps"] == 4096 and report["seed"] == 3 and report["torch_threads"] == 1
    assert report["ppo"]["num_envs"] == 16 and report["ppo"]["smdp"] is True
    assert len(report["curve"]) == 4 and report["curve"][-1]["env_steps"] == 4096
    for key in ("evaluation", "evaluation_greedy", "untrained"):
        assert report[key]["episodes"] == 20 and set(report[key]["returns"]) == {"strategy", "motion"}
    assert png.stat().st_size > 0


def test_command_line_errors_name_the_flag(capsys):
    with pytest.raises(SystemExit, match="no field 'gama'"):
        ppo.main(["--env", "maze", "--ppo", '{"gama": 0.9}'])
    with pytest.raises(SystemExit, match="--config is not JSON"):
        ppo.main(["--env", "maze", "--config", "{motion"])
    with pytest.raises(SystemExit, match="give --agent too"):
        ppo.main(["--env", "maze", "--policy", "motion=forward"])
    with pytest.raises(SystemExit, match="AGENT=POLICY"):
        ppo.main(["--env", "maze", "--agent", "strategy", "--policy", "motion"])


@go
def test_command_line_loads_the_library_it_is_given(tmp_path):
    """--library names the fast lane library to load: a copy of the built one works, a
    file that is not there is an error naming it."""
    from baton.vector import _native

    lib = tmp_path / "libcopy.so"
    shutil.copy(_native.build(), lib)
    cmd = [sys.executable, "-m", "baton.ppo", "--env", "cartpole", "--steps", "256", "--ppo", '{"num_envs": 8, "rollout": 8}',
           "--eval-episodes", "0", "--json", "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != "BATON_LIBRARY"}
    r = subprocess.run([*cmd, "--library", str(lib)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["env_steps"] == 256
    missing = str(tmp_path / "nowhere" / "libmine.so")
    r = subprocess.run([*cmd, "--library", missing], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and missing in r.stderr
