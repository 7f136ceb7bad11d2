"""The model registry from Python: push what a training script made, pull it back by
name.

Models are versions by name, each its bytes (an ONNX policy, a torch state dict) and
its metadata (the environment and agent, their spaces, the training run, its figures
and learning curve). The registry is a directory, laid out as Go's ``models.Dir``
keeps it and with the same guarantees (a version appears whole or not at all; bytes
are checked against their SHA-256 on every read), or a model server (``baton serve
models``) reached over gRPC::

    from baton import models

    meta = models.push("maze-strategy", onnx_bytes, format="onnx", env="maze",
                       agent="strategy", figures={"success_rate": 0.93})
    meta, data = models.pull("maze-strategy@latest")
    for m in models.ls():
        print(m.ref, m.figures)

``where`` chooses the registry: a directory, ``grpc://HOST:PORT`` for a model server
(with ``key=``), or None for the default directory ($BATON_MODELS, else
$XDG_DATA_HOME/baton/models, else ~/.local/share/baton/models).

Errors: NotFound (a name or version the registry does not have), Corrupt (bytes whose
checksum does not match), InvalidModel (a malformed name, reference or metadata), and
SpaceMismatch (``check_spaces``: a model's spaces differ from an agent's, naming both).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "Corrupt",
    "DirStore",
    "InvalidModel",
    "ModelError",
    "ModelMeta",
    "NotFound",
    "Point",
    "RemoteStore",
    "SpaceMismatch",
    "default_dir",
    "export_onnx",
    "ls",
    "open_store",
    "parse_ref",
    "pull",
    "push",
]

#: The version number that stands for a name's newest version.
LATEST = 0
MAX_NAME_LEN = 128
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_VERSION_DIR = re.compile(r"^v(\d+)$")


class ModelError(Exception):
    """An error of the model registry."""


class NotFound(ModelError, LookupError):
    """The registry has no model of that name, or no such version of it."""


class Corrupt(ModelError, ValueError):
    """A stored version does not read back as written (checksum, metadata)."""


class InvalidModel(ModelError, ValueError):
    """A malformed name, reference, version or metadata field."""


class SpaceMismatch(ModelError, ValueError):
    """A model's observation or action space differs from the agent's."""


@dataclass(frozen=True)
class Point:
    """One episode of a learning curve."""

    episode: int
    ret: float
    success: bool
    time: str = ""

    def to_json(self) -> dict:
        d = {"episode": self.episode, "return": self.ret, "success": self.success}
        if self.time:
            d["time"] = self.time
        return d


@dataclass(frozen=True)
class ModelMeta:
    """One version of a model. The registry sets name, version, sha256, size and
    created; the rest is the caller's."""

    name: str
    version: int = 0
    sha256: str = ""
    size: int = 0
    created: str = ""
    format: str = ""
    env: str = ""
    agent: str = ""
    observation_space: dict | None = None
    action_space: dict | None = None
    run: str = ""
    figures: dict[str, float] = field(default_factory=dict)
    curve: tuple[Point, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        """NAME@VERSION."""
        return f"{self.name}@{self.version}"

    def to_json(self) -> dict:
        """The metadata as Go's models.Meta writes it."""
        d: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "size": self.size,
            "created": self.created or "0001-01-01T00:00:00Z",
        }
        for k in ("format", "env", "agent", "observation_space", "action_space", "run", "figures", "labels"):
            v = getattr(self, k)
            if v:
                d[k] = v
        if self.curve:
            d["curve"] = [p.to_json() for p in self.curve]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelMeta:
        curve = tuple(
            Point(int(p.get("episode", 0)), float(p.get("return", 0.0)), bool(p.get("success", False)), p.get("time", ""))
            for p in d.get("curve") or ()
        )
        return cls(
            name=d.get("name", ""),
            version=int(d.get("version", 0)),
            sha256=d.get("sha256", ""),
            size=int(d.get("size", 0)),
            created=d.get("created", ""),
            format=d.get("format", ""),
            env=d.get("env", ""),
            agent=d.get("agent", ""),
            observation_space=d.get("observation_space"),
            action_space=d.get("action_space"),
            run=d.get("run", ""),
            figures={k: float(v) for k, v in (d.get("figures") or {}).items()},
            curve=curve,
            labels=dict(d.get("labels") or {}),
        )

    def verify(self, data: bytes) -> None:
        """Raises Corrupt if data's size or SHA-256 differ from the metadata's."""
        got = hashlib.sha256(data).hexdigest()
        if got != self.sha256 or len(data) != self.size:
            raise Corrupt(
                f"{self.ref} is corrupt: {len(data)} bytes with sha256 {got[:12]}, "
                f"metadata says {self.size} bytes with sha256 {self.sha256[:12]}"
            )

    def check_spaces(self, agent: str, observation_space, action_space) -> None:
        """Raises SpaceMismatch, naming both, if the model's spaces (as recorded) differ
        from the agent's (gymnasium spaces, or baton's JSON spec as dicts)."""
        from .remote.specs import space_spec

        for which, have, want in (
            ("observation", self.observation_space, observation_space),
            ("action", self.action_space, action_space),
        ):
            want_spec = want if isinstance(want, Mapping) else space_spec(want)
            if have is None or _canon(have) != _canon(want_spec):
                raise SpaceMismatch(
                    f"model {self.ref} has {which} space {json.dumps(have)}, agent {agent!r} has {json.dumps(want_spec)}"
                )


def _canon(spec) -> str:
    from .spaces import parse_space
    from .remote.specs import space_spec

    try:
        return json.dumps(space_spec(parse_space(dict(spec))), sort_keys=True)
    except Exception:  # noqa: BLE001 - an unreadable spec matches nothing
        return json.dumps(spec, sort_keys=True)


def check_name(name: str) -> None:
    """Raises InvalidModel unless name is 1 to 128 letters, digits, '.', '_' and '-',
    not starting with '.' or '-'."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_LEN or not _NAME.match(name):
        raise InvalidModel(
            f"invalid name {name!r}: want 1 to {MAX_NAME_LEN} letters, digits, '.', '_' and '-', not starting with '.' or '-'"
        )


def parse_ref(ref: str) -> tuple[str, int]:
    """NAME, NAME@latest or NAME@VERSION to (name, version), LATEST (0) for the first two."""
    name, sep, v = str(ref).partition("@")
    check_name(name)
    if not sep or v == "latest":
        return name, LATEST
    if not v.isdigit() or int(v) < 1:
        raise InvalidModel(f"invalid ref {ref!r}: version is not latest or a number from 1")
    return name, int(v)


def default_dir() -> str:
    """$BATON_MODELS, else $XDG_DATA_HOME/baton/models, else ~/.local/share/baton/models."""
    if os.environ.get("BATON_MODELS"):
        return os.environ["BATON_MODELS"]
    if os.environ.get("XDG_DATA_HOME"):
        return os.path.join(os.environ["XDG_DATA_HOME"], "baton", "models")
    return os.path.join(os.path.expanduser("~"), ".local", "share", "baton", "models")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


class DirStore:
    """Models under a directory, in Go's models.Dir layout (DIR/NAME/v000001/model and
    meta.json). A version is written to a hidden temporary folder, synced, and renamed
    into place, so a writer killed at any moment leaves earlier versions intact; two
    writers never get the same number. ``keep`` > 0 deletes all but the newest
    ``keep`` versions of a name after each put."""

    def __init__(self, root: str | os.PathLike[str] | None = None, *, keep: int = 0):
        if keep < 0:
            raise InvalidModel(f"keep {keep}: want 0 (every version) or more")
        self.root = os.fspath(root) if root is not None else default_dir()
        self.keep = keep
        os.makedirs(self.root, exist_ok=True)

    def _versions(self, name: str) -> list[int]:
        try:
            ents = os.listdir(os.path.join(self.root, name))
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for e in ents if (m := _VERSION_DIR.match(e)) and int(m.group(1)) > 0)

    def put(self, meta: ModelMeta, data: bytes) -> ModelMeta:
        """Stores data as meta.name's next version; returns its metadata."""
        check_name(meta.name)
        data = bytes(data)
        meta = dataclasses.replace(
            meta, sha256=hashlib.sha256(data).hexdigest(), size=len(data), created=_now()
        )
        folder = os.path.join(self.root, meta.name)
        os.makedirs(folder, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".put-", dir=folder)
        try:
            _write_synced(os.path.join(tmp, "model"), data)
            while True:
                vs = self._versions(meta.name)
                meta = dataclasses.replace(meta, version=(vs[-1] + 1) if vs else 1)
                _write_synced(os.path.join(tmp, "meta.json"), json.dumps(meta.to_json(), indent=2).encode())
                dest = os.path.join(folder, f"v{meta.version:06d}")
                try:
                    os.rename(tmp, dest)  # fails onto a non-empty folder: another writer won
                    break
                except OSError:
                    if not os.path.exists(dest):
                        raise
        finally:
            if os.path.exists(tmp):
                _rmtree(tmp)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.keep:
            for v in self._versions(meta.name)[: -self.keep]:
                gone = os.path.join(folder, f".del-v{v:06d}")
                try:
                    os.rename(os.path.join(folder, f"v{v:06d}"), gone)
                except OSError:
                    continue
                _rmtree(gone)
        return meta

    def _resolve(self, name: str, version: int) -> int:
        check_name(name)
        vs = self._versions(name)
        if not vs:
            raise NotFound(f"no model named {name!r}")
        if version == LATEST:
            return vs[-1]
        if version not in vs:
            raise NotFound(f"model {name!r} has no version {version}")
        return version

    def stat(self, name: str, version: int = LATEST) -> ModelMeta:
        """A version's metadata (LATEST: the newest)."""
        v = self._resolve(name, version)
        path = os.path.join(self.root, name, f"v{v:06d}", "meta.json")
        try:
            with open(path, "rb") as f:
                meta = ModelMeta.from_json(json.load(f))
        except FileNotFoundError:
            raise NotFound(f"model {name!r} has no version {v}") from None
        except ValueError as e:
            raise Corrupt(f"{name}@{v} is corrupt: meta.json: {e}") from None
        if meta.name != name or meta.version != v:
            raise Corrupt(f"{name}@{v} is corrupt: meta.json names {meta.ref}")
        return meta

    def get(self, name: str, version: int = LATEST) -> tuple[ModelMeta, bytes]:
        """A version's metadata and bytes, checked against its checksum."""
        meta = self.stat(name, version)
        try:
            with open(os.path.join(self.root, name, f"v{meta.version:06d}", "model"), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise Corrupt(f"{meta.ref} is corrupt: the model's bytes are missing") from None
        meta.verify(data)
        return meta, data

    def list(self, name: str | None = None) -> list[ModelMeta]:
        """The versions of name, oldest first; or the newest version of every model."""
        if name:
            vs = self._versions(name)
            if not vs:
                check_name(name)
                raise NotFound(f"no model named {name!r}")
            return [self.stat(name, v) for v in vs]
        out = []
        for e in sorted(os.listdir(self.root)):
            if e.startswith(".") or not _NAME.match(e) or not self._versions(e):
                continue
            out.append(self.stat(e))
        return out


def _write_synced(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _rmtree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


class RemoteStore:
    """A model server (``baton serve models``, ModelService) over gRPC; the same
    methods as DirStore. ``key`` is the key that grants the models used."""

    def __init__(self, target: str, *, key: str | None = None, **options):
        from .remote.channel import Connection
        from .v1 import baton_pb2_grpc

        self._conn = Connection(target, key=key, **options)
        self._stub = baton_pb2_grpc.ModelServiceStub(self._conn.channel)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, rpc, request, method: str, target: str):
        from .remote import errors as E

        try:
            return self._conn.call(rpc, request, f"ModelService/{method}", target)
        except E.NotFound as e:
            raise NotFound(str(e)) from e
        except E.InvalidArgument as e:
            raise InvalidModel(str(e)) from e
        except E.RemoteError as e:
            if e.code is not None and e.code.name == "DATA_LOSS":
                raise Corrupt(str(e)) from e
            raise

    @staticmethod
    def _meta(info) -> ModelMeta:
        return ModelMeta.from_json(json.loads(info.meta_json))

    def put(self, meta: ModelMeta, data: bytes) -> ModelMeta:
        from .v1 import baton_pb2 as pb

        check_name(meta.name)
        data = bytes(data)
        req = pb.PutModelRequest(
            name=meta.name, data=data, meta_json=json.dumps(meta.to_json()), data_sha256=hashlib.sha256(data).hexdigest()
        )
        return self._meta(self._call(self._stub.Put, req, "Put", meta.name))

    def stat(self, name: str, version: int = LATEST) -> ModelMeta:
        from .v1 import baton_pb2 as pb

        check_name(name)
        resp = self._call(self._stub.Get, pb.GetModelRequest(name=name, version=version, meta_only=True), "Get", name)
        return self._meta(resp.model)

    def get(self, name: str, version: int = LATEST) -> tuple[ModelMeta, bytes]:
        from .v1 import baton_pb2 as pb

        check_name(name)
        resp = self._call(self._stub.Get, pb.GetModelRequest(name=name, version=version), "Get", name)
        meta = self._meta(resp.model)
        meta.verify(resp.data)
        return meta, resp.data

    def list(self, name: str | None = None) -> list[ModelMeta]:
        from .v1 import baton_pb2 as pb

        resp = self._call(self._stub.List, pb.ListModelsRequest(name=name or ""), "List", name or "")
        return [self._meta(m) for m in resp.models]


#: The ONNX opset policies are exported with: the one Go's runtime (package
#: models/onnx, on gonnx) implements.
ONNX_OPSET = 13


def export_onnx(module, obs_dim: int) -> bytes:
    """A torch module from a batch of flat float32 observations [batch, obs_dim] to
    logits [batch, actions], as ONNX bytes (torch.onnx.export, opset 13, input "obs",
    output "logits", the batch dynamic) that ``--policy AGENT=model:NAME@VERSION`` runs
    inside Go trials. Needs the onnx package (the onnx extra)."""
    import io

    import torch

    buf = io.BytesIO()
    module = module.eval()
    with torch.no_grad():
        torch.onnx.export(
            module,
            (torch.zeros(1, int(obs_dim), dtype=torch.float32),),
            buf,
            dynamo=False,
            opset_version=ONNX_OPSET,
            input_names=["obs"],
            output_names=["logits"],
            dynamic_axes={"obs": {0: "batch"}, "logits": {0: "batch"}},
        )
    return buf.getvalue()


def open_store(where: str | os.PathLike[str] | None = None, *, key: str | None = None, **options) -> DirStore | RemoteStore:
    """The registry at ``where``: a model server for grpc:// or grpcs:// targets, else a
    directory (None: default_dir())."""
    if isinstance(where, str) and (where.startswith("grpc://") or where.startswith("grpcs://")):
        return RemoteStore(where, key=key, **options)
    if key is not None:
        raise InvalidModel("key= goes with a grpc:// model server, not a directory")
    return DirStore(where, **options)


def push(
    name: str,
    data: bytes | str | os.PathLike[str],
    *,
    where: str | os.PathLike[str] | None = None,
    key: str | None = None,
    format: str = "",
    env: str = "",
    agent: str = "",
    observation_space=None,
    action_space=None,
    run: str = "",
    figures: Mapping[str, float] | None = None,
    curve: Sequence[Point | Mapping[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
) -> ModelMeta:
    """Stores data (bytes, or the path of a file) as name's next version and returns
    its metadata. Spaces may be gymnasium spaces or baton's JSON spec (dicts)."""
    from .remote.specs import space_spec

    if not isinstance(data, (bytes, bytearray, memoryview)):
        with open(data, "rb") as f:
            data = f.read()

    def spec(sp):
        if sp is None or isinstance(sp, Mapping):
            return sp
        return space_spec(sp)

    points = tuple(
        p if isinstance(p, Point) else Point(int(p["episode"]), float(p["return"]), bool(p["success"]), p.get("time", ""))
        for p in curve
    )
    meta = ModelMeta(
        name=name,
        format=format,
        env=env,
        agent=agent,
        observation_space=spec(observation_space),
        action_space=spec(action_space),
        run=run,
        figures={k: float(v) for k, v in (figures or {}).items()},
        curve=points,
        labels=dict(labels or {}),
    )
    store = open_store(where, key=key)
    try:
        return store.put(meta, bytes(data))
    finally:
        if isinstance(store, RemoteStore):
            store.close()


def pull(ref: str, *, where: str | os.PathLike[str] | None = None, key: str | None = None) -> tuple[ModelMeta, bytes]:
    """The metadata and bytes of NAME, NAME@latest or NAME@VERSION, checked against
    their checksum."""
    name, version = parse_ref(ref)
    store = open_store(where, key=key)
    try:
        return store.get(name, version)
    finally:
        if isinstance(store, RemoteStore):
            store.close()


def ls(name: str | None = None, *, where: str | os.PathLike[str] | None = None, key: str | None = None) -> list[ModelMeta]:
    """The versions of name, or the newest version of every model."""
    store = open_store(where, key=key)
    try:
        return store.list(name)
    finally:
        if isinstance(store, RemoteStore):
            store.close()
