"""Starting a local Ray instance for a test, robustly on a busy machine.

Ray gives a new node a fixed 30 s to register its raylet with the GCS (ray/_private/node.py,
not configurable). On two loaded cores that can run out: ray.init then raises a bare
Exception saying "timed out during startup", and leaves the half-started node's processes
and Ray's global state behind, so that every later ray.init in the session fails with
"Maybe you called ray.init twice". start() stops what a failed try left (ray.shutdown and
the new child processes) and tries again on a fresh temp dir; whatever it raises, it
raises from a clean state. The node listens on loopback (conftest.py sets Ray's
single-machine switch)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile

import psutil
import ray

STARTUP_TIMEOUT = "timed out during startup"


def _kill_new_children(before: set[int]) -> None:
    for p in psutil.Process().children(recursive=True):
        if p.pid not in before:
            with contextlib.suppress(psutil.Error):
                p.kill()


def retrying(begin, attempts: int = 3, prefix: str = "ray"):
    """begin(temp) with a new short temp dir each try (Ray's sockets live under it, and
    AF_UNIX paths must stay short); returns (what begin returned, temp). A try that
    times out is undone (ray.shutdown, the try's new child processes killed, its temp
    dir removed) and tried again, up to attempts times in all; any other error, or the
    last timeout, is raised after the same undoing."""
    for attempt in range(attempts):
        temp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        try:
            return begin(temp), temp
        except Exception as e:  # Ray raises a bare Exception for the timeout
            ray.shutdown()
            _kill_new_children(before)
            shutil.rmtree(temp, ignore_errors=True)
            if STARTUP_TIMEOUT not in str(e) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def start(num_cpus: int = 2, attempts: int = 3, **init_kwargs) -> str:
    """ray.init(num_cpus=num_cpus, include_dashboard=False, **init_kwargs) with its files
    under a new short temp dir, which it returns (give it to stop), through
    ``retrying``."""
    return retrying(lambda temp: ray.init(num_cpus=num_cpus, include_dashboard=False, _temp_dir=temp,
                                          **init_kwargs), attempts)[1]


def stop(temp: str) -> None:
    """Shuts down what start started and removes its temp dir."""
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)
