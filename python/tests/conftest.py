"""maze_log, a real log written by `go run ./cmd/baton run maze --log DIR`, with the Go
reader's figures of it; the go marker on every test that needs the Go toolchain.

The tests run in the project's environment (scripts/python -m pytest), where baton is
installed from this checkout with every extra of python/pyproject.toml."""

import json
import os
import shutil
import subprocess

import pytest

# Ray's nodes take their address from the machine's network interface on Linux, and then
# listen there. Ray's own switch for single-machine clusters makes every node, driver and
# worker of these tests use 127.0.0.1 instead: the tests send traffic to loopback only.
# It is read when ray is first imported, and the processes Ray starts inherit it.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)

# The fixtures that run go: a test that uses one gets the go marker.
GO_FIXTURES = {"maze_log", "webtest_log", "baton_bin", "tools"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if GO_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.go)


def _go_or_skip():
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot write a log with `go run ./cmd/baton run maze --log`")


@pytest.fixture(scope="session")
def maze_log(tmp_path_factory):
    """A log of 3 maze trials, 2 episodes each, and the Go reader's figures of it."""
    _go_or_skip()
    d = str(tmp_path_factory.mktemp("mazelog") / "log")
    cmd = ["go", "run", "./cmd/baton", "run", "maze", "--trials", "3", "--episodes", "2", "--log", d]
    r = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    r = subprocess.run(["go", "run", "./tools/arrowcheck/dump", d], cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d, json.loads(r.stdout)


@pytest.fixture(scope="session")
def webtest_log(tmp_path_factory):
    """A log of 4 web-testing trials, 2 episodes each (an environment with metrics:
    coverage, defects_found), and the Go reader's figures of it."""
    _go_or_skip()
    d = str(tmp_path_factory.mktemp("webtestlog") / "log")
    cmd = ["go", "run", "./cmd/baton", "run", "webtest", "--trials", "4", "--episodes", "2",
           "--policy", "motion=random", "--log", d]
    r = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    r = subprocess.run(["go", "run", "./tools/arrowcheck/dump", d], cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d, json.loads(r.stdout)
