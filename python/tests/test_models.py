"""baton.models: the model registry from Python, in Go's directory layout and over a
model server."""

import json
import os
import subprocess

import gymnasium
import pytest

from baton import models
from test_remote_go import Process, baton_bin  # noqa: F401 - the fixture


def test_push_pull_ls_in_a_directory(tmp_path):
    obs = gymnasium.spaces.Box(0.0, 1.0, (4,))
    act = gymnasium.spaces.Discrete(4)
    m = models.push(
        "maze-strategy", b"graph one", where=tmp_path, format="onnx", env="maze", agent="strategy",
        observation_space=obs, action_space=act, figures={"success_rate": 0.5},
        curve=[{"episode": 1, "return": -1.0, "success": False}, models.Point(2, 1.0, True)],
    )
    assert m.ref == "maze-strategy@1" and m.size == 9 and len(m.sha256) == 64
    assert models.push("maze-strategy", b"graph two", where=tmp_path).version == 2

    meta, data = models.pull("maze-strategy@1", where=tmp_path)
    assert data == b"graph one" and meta.env == "maze" and meta.curve[1].success
    meta.check_spaces("strategy", obs, act)
    with pytest.raises(models.SpaceMismatch, match=r"maze-strategy@1 has action space .*agent 'strategy'"):
        meta.check_spaces("strategy", obs, gymnasium.spaces.Discrete(5))
    assert models.pull("maze-strategy@latest", where=tmp_path)[1] == b"graph two"
    assert [m.ref for m in models.ls(where=tmp_path)] == ["maze-strategy@2"]
    assert [m.version for m in models.ls("maze-strategy", where=tmp_path)] == [1, 2]


@pytest.mark.parametrize(
    "ref, error, message",
    [
        ("nope", models.NotFound, "no model named 'nope'"),
        ("m@7", models.NotFound, "has no version 7"),
        ("m@x", models.InvalidModel, "invalid ref"),
        ("../m", models.InvalidModel, "invalid name"),
    ],
)
def test_bad_references(tmp_path, ref, error, message):
    models.push("m", b"x", where=tmp_path)
    with pytest.raises(error, match=message):
        models.pull(ref, where=tmp_path)


def test_corrupt_bytes_are_refused_and_keep_deletes_old_versions(tmp_path):
    store = models.DirStore(tmp_path, keep=2)
    for i in range(4):
        store.put(models.ModelMeta("m"), bytes([i]))
    assert [m.version for m in store.list("m")] == [3, 4]
    (tmp_path / "m" / "v000004" / "model").write_bytes(b"\xff")
    with pytest.raises(models.Corrupt, match="m@4 is corrupt"):
        store.get("m")
    assert store.get("m", 3)[1] == b"\x02"


def test_go_reads_what_python_writes_and_serves_it(baton_bin, tmp_path):  # noqa: F811
    models.push("maze-strategy", b"from python", where=tmp_path, format="onnx", figures={"success_rate": 1.0})
    out = subprocess.run(
        [baton_bin, "models", "show", "maze-strategy", "--dir", str(tmp_path), "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert json.loads(out)["figures"] == {"success_rate": 1.0}

    server = Process([baton_bin, "serve", "models", "--addr", "127.0.0.1:0", "--dir", str(tmp_path)])
    try:
        target = server.target
        meta = models.push("maze-strategy", b"over grpc", where=target, env="maze")
        assert meta.ref == "maze-strategy@2"
        assert models.pull("maze-strategy@1", where=target)[1] == b"from python"
        assert [m.ref for m in models.ls(where=target)] == ["maze-strategy@2"]
        with pytest.raises(models.NotFound):
            models.pull("maze-strategy@9", where=target)
        with pytest.raises(models.InvalidModel):
            models.ls("a/b", where=target)
    finally:
        server.stop()
    # What the server wrote, Python reads from the directory.
    assert models.pull("maze-strategy", where=tmp_path)[1] == b"over grpc"
