"""examples/python/train_maze.py on generated mazes: a short, seeded curriculum from
5x5 to 7x7 mazes (a new map every episode, both observed as 7x7) that must promote
and beat the untrained policy on 7x7 maps never seen in training; the first tenth of
the default curriculum (examples/python/maze_curriculum.json) with the default
planner, which must reach its target on unseen 9x9 maps; the planners' backups by
hand; and ``--log``, whose activity log ``baton.load`` reads back with the training
episodes."""

import json
import pathlib

import numpy as np
import pytest
import torch

import baton
import train_maze
from baton.schedule import Schedule

REPO = pathlib.Path(__file__).resolve().parents[2]


def maze(side: int) -> dict:
    return {
        "generate": {"rows": side, "cols": side, "per_episode": True},
        "obs_side": 7,
        "strategy": {"max_steps": 40},
        "motion": {"reward_for_wrong_direction": -1.5},
    }


SCHEDULE = {
    "order": "success",
    "promotion": {"window": 100, "threshold": 0.8},
    "tasks": [{"name": "5x5", "env": "maze", "config": maze(5)}, {"name": "7x7", "env": "maze", "config": maze(7)}],
}


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.go
def test_curriculum_promotes_and_beats_the_untrained_policy_on_unseen_maps(one_thread):
    """With MLPs (``planner=False``), the cheaper networks: a few seconds of CPU."""
    sched = Schedule.from_json(SCHEDULE).start(seed=2)
    final = maze(7)
    eval_seed = 987_654_321
    before = train_maze.evaluate(train_maze.untrained(seed=2, hidden=128, config=final, with_map=True, planner=False),
                                 config=final, episodes=300, seed=eval_seed)
    res = train_maze.train(seed=2, env_steps=49_152, num_envs=64, rollout=32, hidden=128, schedule=sched,
                           with_map=True, planner=False, curve_every=0)
    assert [p["task"] for p in res.promotions] == ["7x7"]
    assert sched.runs()[0][0] == "5x5" and sched.runs()[-1][0] == "7x7"
    assert res.maps, "the training episodes' maps are remembered"
    after = train_maze.evaluate(res.agents, config=final, episodes=300, seed=eval_seed, exclude=res.maps)
    assert after["episodes"] + after["excluded"] == 300
    assert after["episodes"] >= 50, after  # 7x7 mazes are few: many a map comes back
    assert after["success"] >= before["success"] + 0.2, (before, after)


@pytest.mark.go
def test_moves_planner_learns_the_curriculum_and_plays_unseen_9x9_mazes(one_thread):
    """The default strategy network, MovesPlanNet, on examples/python/maze_curriculum.json
    for 40,960 env steps (the command's first tenth; seed 1 promotes to 9x9 at 28,672):
    on 9x9 maps never seen in training it reaches the goal, sampled and greedy, as the
    command's target asks (0.90 and 0.85), where the untrained policy reaches it in
    under 0.4."""
    schedule = Schedule.load(str(REPO / "examples" / "python" / "maze_curriculum.json"))
    last = schedule.tasks[-1].config
    before = train_maze.evaluate(train_maze.untrained(seed=1, config=last, with_map=True), config=last,
                                 episodes=300, seed=55_555)
    sched = schedule.start(1)
    res = train_maze.train(seed=1, env_steps=40_960, num_envs=128, rollout=32, schedule=sched, with_map=True,
                           curve_every=0)
    assert [p["task"] for p in res.promotions] == ["7x7", "9x9"]
    assert isinstance(res.agents["strategy"].net, train_maze.MovesPlanNet)
    after = {g: train_maze.evaluate(res.agents, config=last, episodes=300, seed=55_555, greedy=g, exclude=res.maps)
             for g in (False, True)}
    assert before["success"] < 0.4, before
    assert after[False]["episodes"] >= 200, after
    assert after[False]["success"] >= 0.9 and after[True]["success"] >= 0.85, (before, after)


def test_features_and_plan_net_read_the_map():
    """A 3x3 map: the features are the walkable and goal planes, the position one-hot
    and the mask; PlanNet's iterations are Bellman backups, so a network whose weights
    discount the neighbours' values has 0.9^d at a tile d steps from the goal, and
    reading a direction's logit at the neighbour in it points at the goal's side."""

    class Layout:
        obs_dim, mask_len = 9 + 2 + 4, 4
        observation_space = type("Box", (), {"high": np.array([3.0] * 9 + [2, 2] + [1] * 4)})

    f = train_maze.Features(Layout(), with_map=True)
    assert f.dim == 3 * 9 + 4 and f.side == 3
    tiles = [1, 1, 3,
             0, 1, 0,
             2, 1, 0]
    obs = np.array([tiles + [0, 1] + [0, 1, 1, 1]], np.float32)  # at the top middle
    x = f(obs)[0]
    assert x[:9].tolist() == [float(t > 0) for t in tiles]
    assert x[9:18].tolist() == [float(t == 3) for t in tiles]
    assert x[18:27].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0]
    assert x[27:].tolist() == [0, 1, 1, 1]

    torch.manual_seed(0)
    net = train_maze.PlanNet(3, actions=5, iters=4)
    with torch.no_grad():
        for p in net.r.parameters():
            p.zero_()
        net.r[0].weight[0, 1, 1, 1] = 1  # R: 1 on the goal tile
        net.r[2].weight[0, 0] = 1
        net.q.weight.zero_()
        net.q.weight[0, 0, 1, 1] = 1  # Q_0: the reward where it is
        for a, (dr, dc) in enumerate(train_maze.MOVES):
            net.q.weight[1 + a, 1, 1 + dr, 1 + dc] = 0.9  # Q_1+a: 0.9 the value of the neighbour
        net.head.weight[:] = torch.tensor([[0.0] * 5 + [1.0]])  # the value at the neighbour
    logits, _ = net._plan(torch.from_numpy(f(obs)))
    assert logits[0, 1:].tolist() == pytest.approx([1, 0.81, 0.81]), "right: the goal; down, left: 2 steps away"
    d = net.dist(torch.from_numpy(f(obs)), torch.tensor([[False, True, True, True]]))
    assert d.greedy().item() == 1, "right, towards the goal"
    assert d.logp_all[0, 0].item() == float("-inf"), "up is masked"
    assert net.value(torch.from_numpy(f(obs))).shape == (1,)


def test_moves_plan_net_backs_up_along_the_corridors():
    """MovesPlanNet's iterations are Bellman backups over the maze's four moves: with a
    step costing 1 and the episode ending on the goal, a tile d moves from the goal has
    L = -(d + 1) (walls never count as a way), so its read-out prefers the neighbour
    nearer the goal, and a tile the iterations have not reached sees its neighbours
    equal."""

    class Layout:
        obs_dim, mask_len = 9 + 2 + 4, 4
        observation_space = type("Box", (), {"high": np.array([3.0] * 9 + [2, 2] + [1] * 4)})

    f = train_maze.Features(Layout(), with_map=True)
    tiles = [1, 1, 3,
             0, 1, 0,
             2, 1, 0]

    def at(row, col, mask):
        return torch.from_numpy(f(np.array([tiles + [row, col] + mask], np.float32)))

    def net(iters):
        n = train_maze.MovesPlanNet(3, iters=iters, features=f)
        with torch.no_grad():
            for p in n.r.parameters():
                p.zero_()
            n.r[0].weight[0, 1, 1, 1] = 1  # a hidden plane: 1 on the goal tile
            n.r[2].bias[0] = np.log(np.e - 1)  # a step costs softplus(.) = 1
            n.r[2].weight[1, 0] = 100  # the episode ends on the goal, nowhere else
            n.r[2].bias[1] = -50
        return n

    logits, value = net(4)._plan(at(0, 1, [0, 1, 1, 1]))
    assert logits[0, 1:].tolist() == pytest.approx([-1, -3, -3], abs=1e-4), "right: the goal; down, left: 2 moves"
    assert value.shape == (1,)
    d = net(4).dist(at(0, 1, [0, 1, 1, 1]), torch.tensor([[False, True, True, True]]))
    assert d.greedy().item() == 1, "right, towards the goal"
    assert d.logp_all[0, 0].item() == float("-inf"), "up is masked"
    # From the bottom middle the goal is 3 moves away, through the middle: up is 2.
    logits, _ = net(4)._plan(at(2, 1, [1, 0, 0, 1]))
    assert logits[0, 0].item() == pytest.approx(-3, abs=1e-4) and logits[0, 3].item() < -3
    # With one iteration the goal's worth has not reached the bottom row's neighbours.
    logits, _ = net(1)._plan(at(2, 1, [1, 0, 0, 1]))
    assert logits[0, 0].item() == pytest.approx(logits[0, 3].item()), "up and left alike: not reached"
    with pytest.raises(ValueError, match="transition"):
        train_maze.networks(with_map=True, transition="teleport")


@pytest.mark.go
def test_log_records_the_training_episodes(tmp_path, one_thread, capsys):
    """A fixed-map run: every training episode begun is a trial of the log, its
    policy "ppo"; the episodes that ended have their returns."""
    d = str(tmp_path / "log")
    rc = train_maze.main(["--env-steps", "2048", "--num-envs", "16", "--rollout", "16", "--curve-every", "0",
                          "--eval-episodes", "20", "--log", d, "--json", "--quiet"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["log"] == d and report["env_steps"] == 2048
    log = baton.load(d)
    assert set(log) == {"strategy", "motion"}
    trials = log.trials.to_pylist()
    assert len(trials) >= 16, "each copy's episodes, from the first"
    assert {json.loads(t["policies"])["strategy"] for t in trials} == {"ppo"}
    eps = log.episodes.to_pylist()
    assert eps, "training episodes ended"
    assert {e["trial_id"] for e in eps} <= {t["trial_id"] for t in trials}
    assert len(log["strategy"]) > 0 and len(log["motion"]) > 0


@pytest.mark.go
def test_log_under_a_schedule_names_the_trials_after_their_task(tmp_path, one_thread, capsys):
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps({**SCHEDULE, "promotion": {"window": 20, "threshold": 0.8}}))
    d = str(tmp_path / "log")
    rc = train_maze.main(["--schedule", str(path), "--env-steps", "8192", "--num-envs", "32", "--rollout", "32",
                          "--curve-every", "0", "--eval-episodes", "20", "--log", d, "--json", "--quiet", "--seed", "2",
                          "--no-planner"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["task"] for p in report["promotions"]] == ["7x7"]
    assert report["evaluated_on"] == "7x7"
    ids = [t["trial_id"] for t in baton.load(d).trials.to_pylist()]
    assert {i.rsplit("-", 1)[0] for i in ids} == {"5x5", "7x7"}
