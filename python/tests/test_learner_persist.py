"""A served learner persists in the model registry (examples/python/serve_learner.py
--model): killed with SIGKILL mid-campaign and started again, it resumes from its
latest checkpoint and its learning curve goes on from there."""

import os
import signal
import subprocess
import sys

from baton import models
from conftest import REPO_ROOT
from test_remote_go import EXAMPLES, Process, baton_bin, maze_envs  # noqa: F401 - fixtures


def campaign(baton, target, trials):
    subprocess.run(
        [baton, "run", "maze", "--trials", str(trials), "--workers", "1", "--seed", str(trials),
         "--policy", f"strategy={target}", "--policy", "motion=forward"],
        check=True, capture_output=True, text=True, cwd=REPO_ROOT,
    )


def test_a_killed_learner_resumes_its_learning_curve(baton_bin, maze_envs, tmp_path):  # noqa: F811
    spec_file, _ = maze_envs
    where = str(tmp_path / "models")
    args = [sys.executable, os.path.join(EXAMPLES, "serve_learner.py"), "--spec", spec_file, "--seed", "1",
            "--model", "maze-learner", "--models", where, "--checkpoint-every", "5"]

    first = Process(args)
    campaign(baton_bin, first.target, 20)
    first.proc.send_signal(signal.SIGKILL)  # no shutdown checkpoint
    first.proc.wait()
    before = models.ls("maze-learner", where=where)
    assert before, "no checkpoint before the kill"
    saved = before[-1]
    assert saved.figures["episodes"] >= 15 and len(saved.curve) == saved.figures["episodes"]

    second = Process(args)
    campaign(baton_bin, second.target, 10)
    second.stop()  # SIGTERM: a last checkpoint
    last = models.ls("maze-learner", where=where)[-1]
    assert last.version > saved.version
    episodes = [p.episode for p in last.curve]
    assert episodes == list(range(1, len(episodes) + 1))  # one curve, numbered on
    assert last.figures["episodes"] == len(episodes) >= saved.figures["episodes"] + 10
    assert last.curve[: len(saved.curve)] == saved.curve
