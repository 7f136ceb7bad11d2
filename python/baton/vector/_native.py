"""Finding, building and loading the fast lane's Go library (cmd/libbaton).

The library is built from the checkout's Go sources with the Go toolchain, never
shipped prebuilt: ``go build -buildmode=c-shared ./cmd/libbaton``. It is cached as
``libbaton-<key>.so`` in ``$BATON_CACHE_DIR`` (default ``$XDG_CACHE_HOME/baton``, else
``~/.cache/baton``), outside the clone, where ``<key>`` hashes every Go source file of
the module (test files aside), go.mod, go.sum, the Go version and the platform: a
change to any of them builds a new library, and clones at the same sources share one.
A build writes a temporary file and renames it into place, so processes that build at
once do not see half a library. ``BATON_LIBRARY`` names a library to load instead
(built elsewhere); ``BATON_GO_ROOT`` the module's root when the package does not sit
in its checkout. Entries of older sources stay in the cache; delete the folder to
reclaim the space.

Nothing here runs at ``import baton``: the library, and with it the Go runtime, is
loaded by the first vector a process makes. A Go runtime does not survive fork, so a
process may fork after ``import baton`` (multiprocessing's "fork" context) and make
vectors in the child, but a child forked after its parent loaded the library cannot
use it: load() raises ``ForkError`` instead of hanging. In such a child the vectors it
inherited are dead too: their methods raise ``ForkError``, and their finalizers, which
would call into the parent's Go runtime, are dropped. The module's lock is made anew in
every forked child, so a fork while another thread builds or loads the library does
not leave the child waiting on a lock that no thread of its own holds.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_pid: int | None = None
# The open vectors of this process, told at fork that the child has no Go runtime.
_vectors: weakref.WeakSet = weakref.WeakSet()

# Folders of the module whose Go files are not part of the library (or not Go).
_SKIP_DIRS = {".git", "node_modules", "python", "testdata", "__pycache__"}


class BuildError(RuntimeError):
    """The Go library could not be found or built."""


class ForkError(RuntimeError):
    """This process forked from one that had loaded the Go library (made a vector),
    and a Go runtime does not survive fork: it cannot load the library, nor use the
    vectors it inherited."""


def _fork_error() -> ForkError:
    return ForkError(
        f"baton.vector: the Go library was loaded in process {_pid} before it forked process "
        f"{os.getpid()}; a Go runtime does not survive fork. Make vectors only in processes that "
        "forked before their first vector (or use the 'spawn' or 'forkserver' context)"
    )


def track(vector) -> None:
    """Registers an open vector, whose ``_after_fork()`` a forked child calls."""
    _vectors.add(vector)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    for v in list(_vectors):
        v._after_fork()
    _vectors.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def go_root() -> Path:
    """The root of the Go module that holds cmd/libbaton."""
    env = os.environ.get("BATON_GO_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[3]
    if not (root / "go.mod").is_file() or not (root / "cmd" / "libbaton").is_dir():
        raise BuildError(
            f"no Go sources of baton at {root} (go.mod and cmd/libbaton): set BATON_GO_ROOT "
            "to a checkout, or BATON_LIBRARY to a built library"
        )
    return root


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        for cand in ("/usr/local/go/bin/go", os.path.expanduser("~/go/bin/go")):
            if os.access(cand, os.X_OK):
                return cand
        raise BuildError("the fast lane is built with the Go toolchain; `go` is not on PATH")
    return go


def source_key(root: Path, go_version: str) -> str:
    """A hash of the module's Go sources (tests aside), go.mod, go.sum, the Go version
    and the platform: the cache key of the library built from them."""
    h = hashlib.sha256()
    h.update(f"{go_version}\0{sys.platform}\0{platform.machine()}\0".encode())
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith((".", "_")))
        for f in filenames:
            if (f.endswith(".go") and not f.endswith("_test.go")) or (dirpath == str(root) and f in ("go.mod", "go.sum")):
                files.append(os.path.join(dirpath, f))
    for path in sorted(files):
        h.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:20]


def cache_dir() -> Path:
    env = os.environ.get("BATON_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "baton"


def build(force: bool = False, verbose: bool = False) -> Path:
    """Builds the library if its cache entry is missing (or force) and returns its path.

    >>> path = build()  # doctest: +SKIP
    """
    root, go = go_root(), _go()
    version = subprocess.run([go, "env", "GOVERSION"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    out = cache_dir() / f"libbaton-{source_key(root, version)}.so"
    if out.is_file() and not force:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".libbaton-", suffix=".so", dir=out.parent)
    os.close(fd)
    env = dict(os.environ, CGO_ENABLED="1")
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-o", tmp, "./cmd/libbaton"]
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    try:
        res = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise BuildError(f"go build of the fast lane failed ({' '.join(cmd)}):\n{res.stderr}")
        os.replace(tmp, out)
    finally:
        for junk in (tmp, tmp[: -len(".so")] + ".h"):
            if os.path.exists(junk):
                os.remove(junk)
    return out


def _declare(lib: ctypes.CDLL) -> None:
    c = ctypes
    i32, i64, u64, p, s = c.c_int32, c.c_int64, c.c_uint64, c.c_void_p, c.c_char_p
    sigs = {
        "baton_describe": (i32, [s, s, p, i64, p, i64]),
        "baton_admit": (i32, [s, s, i64, i64, i64, p, i64]),
        "baton_single_new": (i32, [s, s, i64, i64, i64, p, p, p, p, p, p, c.POINTER(i64), p, i64]),
        "baton_multi_new": (
            i32,
            [s, s, i64, i64, i64, i64, p, p, p, p, p, p, p, p, p, p, p, c.POINTER(i64), p, i64],
        ),
        "baton_reset": (i32, [i64, u64, p, i64]),
        "baton_step_single": (i32, [i64, p, p, i64]),
        "baton_step_multi": (i32, [i64, p, i64]),
        "baton_record": (i32, [i64, s, p, i64]),
        "baton_record_close": (i32, [i64, p, i64]),
        "baton_close": (i32, [i64]),
        "baton_live": (i64, []),
        "baton_goroutines": (i64, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def load() -> ctypes.CDLL:
    """The loaded library, built and loaded on the first call of the process."""
    global _lib, _pid
    with _lock:
        if _lib is not None:
            if _pid != os.getpid():
                raise _fork_error()
            return _lib
        path = os.environ.get("BATON_LIBRARY") or str(build())
        lib = ctypes.CDLL(path)
        _declare(lib)
        _lib, _pid = lib, os.getpid()
        return lib


# describe_aside's child: loads the library, describes one environment and, asked to,
# makes (and closes) one copy of an agent's view, whose errors it reports; prints JSON.
_DESCRIBE = """
import ctypes, json, sys
c = ctypes
req = json.load(sys.stdin)
lib = c.CDLL(req["library"])
n = 1 << 22
out, err = c.create_string_buffer(n), c.create_string_buffer(n)
s = lambda t: None if t is None else t.encode()
f = lib.baton_describe
f.restype, f.argtypes = c.c_int32, [c.c_char_p, c.c_char_p, c.c_void_p, c.c_int64, c.c_void_p, c.c_int64]
code = f(s(req["name"]), s(req["config"]), out, n, err, n)
layout = json.loads(out.value) if code == 0 else None
view = req["view"]
if layout is not None and view is not None and layout["kind"] != "single":
    names = [a["name"] for a in layout["agents"]]
    agent = view["agent"] if view["agent"] is not None else names[0]
    if agent in names:
        a = layout["agents"][names.index(agent)]
        bufs = [
            (c.c_float * a["obs_dim"])(), (c.c_float * a["obs_dim"])(),
            (c.c_bool * a["mask_len"])() if a["mask_len"] else None,
            (c.c_double * 1)(), (c.c_bool * 1)(), (c.c_bool * 1)(), (c.c_int64 * 1)(),
        ]
        handle = c.c_int64()
        g = lib.baton_view_new
        g.restype = c.c_int32
        g.argtypes = [c.c_char_p] * 4 + [c.c_void_p, c.c_int64, c.c_int64, c.c_int64] + [c.c_void_p] * 7 + [
            c.POINTER(c.c_int64), c.c_void_p, c.c_int64]
        code = g(s(req["name"]), s(req["config"]), s(agent), s(view["policies"]), None, 1, 1, 0,
                 *(None if b is None else c.cast(b, c.c_void_p) for b in bufs), c.byref(handle), err, n)
        if code == 0:
            lib.baton_close.restype, lib.baton_close.argtypes = c.c_int32, [c.c_int64]
            lib.baton_close(handle.value)
json.dump({"code": code, "out": out.value.decode(), "err": err.value.decode()}, sys.stdout)
"""
_described: dict[tuple, tuple[int, str, str]] = {}


def describe_aside(name: bytes, config: bytes | None, view: tuple[str | None, str] | None = None) -> tuple[int, str, str]:
    """baton_describe's (code, layout JSON, error JSON) for ``name`` and ``config``,
    without loading the library into this process: a short-lived child process
    loads it and answers (once per process for each question). With ``view``
    (agent name or None for the first agent, policies as baton_view_new takes them,
    names only), the child also makes one copy of that agent's view, for its errors.
    For adapters whose construction must leave the process free to fork
    (Gymnasium's AsyncVectorEnv makes one environment in the parent, for its spaces,
    before it forks its workers)."""
    key = (name, config, view)
    with _lock:
        got = _described.get(key)
    if got is not None:
        return got
    path = os.environ.get("BATON_LIBRARY") or str(build())
    req = {
        "library": path,
        "name": name.decode(),
        "config": None if config is None else config.decode(),
        "view": None if view is None else {"agent": view[0], "policies": view[1]},
    }
    res = subprocess.run([sys.executable, "-I", "-c", _DESCRIBE], input=json.dumps(req), capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"the fast lane's library {path} could not describe {req['name']!r}:\n{res.stderr}")
    ans = json.loads(res.stdout)
    got = (int(ans["code"]), ans["out"], ans["err"])
    if got[0] == 0:
        with _lock:
            _described[key] = got
    return got


def loaded() -> bool:
    """Whether this process has loaded the library (and so started a Go runtime)."""
    return _lib is not None
