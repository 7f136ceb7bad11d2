"""Finding, building and loading the fast lane's Go libraries.

A library is a Go main package built with ``go build -buildmode=c-shared`` over Go's
package capi: baton's own, cmd/libbaton (the environments baton ships), or a user's,
cmd/libNAME in the user's module (their environments, registered with
``capi.Use(keydoor.Register)``). Every entry point takes ``library=``, the path of the
library to load; without it, ``BATON_LIBRARY``; without that, baton's own: built from
the checkout's Go sources when baton runs from a checkout, else the one a wheel of
baton carries (``baton/_lib``). The functions are declared from ``abi``, which is
generated from the header cgo writes for capi: the ABI is written once, in Go.

Building. ``build(module_dir, package)`` builds a module's library with the Go
toolchain and caches it as ``<package>-<key>.so`` in ``$BATON_CACHE_DIR`` (default
``$XDG_CACHE_HOME/baton``, else ``~/.cache/baton``), where ``<key>`` hashes every
source file (Go, C, assembly, embedded) of every package the library is built from
(``go list -deps``: the user's environment, baton, their dependencies; the standard
library is the Go version's), the module's go.mod, go.sum and go.work, the Go
version, the platform and the package: an edit anywhere the library depends on
builds a new one, and clones at the same sources share one. A build writes a
temporary file and renames it into place, so processes that build at once do not see
half a library. ``BATON_GO_ROOT`` names baton's checkout when the package does not sit
in it. Entries of older sources stay in the cache; delete the folder to reclaim the
space.

Several libraries. Each library loaded is a Go runtime of its own, and a process may
load several (baton's and a user's): they share nothing, and a vector belongs to the
library that made it.

Nothing here runs at ``import baton``: a library, and with it a Go runtime, is loaded
by the first vector a process makes of it. A Go runtime does not survive fork, so a
process may fork after ``import baton`` (multiprocessing's "fork" context) and make
vectors in the child, but a child forked after its parent loaded a library cannot
load any: load() raises ``ForkError`` instead of hanging. In such a child the vectors
it inherited are dead too: their methods raise ``ForkError``, and their finalizers,
which would call into the parent's Go runtime, are dropped. The module's lock is made
anew in every forked child, so a fork while another thread builds or loads a library
does not leave the child waiting on a lock that no thread of its own holds.
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

from . import abi as _abi

_lock = threading.Lock()
# The libraries loaded in this process, by real path, and the process that loaded them.
_libs: dict[str, ctypes.CDLL] = {}
_pid: int | None = None
# baton's own library as resolved in this process (built once per process).
_default: str | None = None
# The open vectors of this process, told at fork that the child has no Go runtime.
_vectors: weakref.WeakSet = weakref.WeakSet()

# Folders of the module whose Go files are not part of baton (or not Go): source_key.
_SKIP_DIRS = {".git", "node_modules", "python", "testdata", "__pycache__"}

# The files of a package that go build reads, as go list names their lists.
_FILE_LISTS = ("GoFiles", "CgoFiles", "CFiles", "CXXFiles", "HFiles", "SFiles", "SysoFiles", "EmbedFiles")
# The environment variables that change what go build writes, beside go env's.
_BUILD_ENV = ("CC", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_LDFLAGS", "GOFLAGS", "GOAMD64", "GOARM64", "GOEXPERIMENT")


class BuildError(RuntimeError):
    """A Go library could not be found or built."""


class ForkError(RuntimeError):
    """This process forked from one that had loaded a Go library (made a vector),
    and a Go runtime does not survive fork: it cannot load a library, nor use the
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


def _suffix() -> str:
    """The file name suffix of a shared library on this platform."""
    if sys.platform == "darwin":
        return ".dylib"
    if sys.platform == "win32":
        return ".dll"
    return ".so"


def bundled() -> Path | None:
    """The library of baton's environments that a wheel of baton carries
    (``baton/_lib/libbaton.so``), or None when this installation has none (a
    checkout)."""
    p = Path(__file__).resolve().parents[1] / "_lib" / f"libbaton{_suffix()}"
    return p if p.is_file() else None


def go_root() -> Path:
    """The root of baton's Go module (a checkout, which holds cmd/libbaton): the
    environment variable ``BATON_GO_ROOT``, else the folder this package sits in."""
    env = os.environ.get("BATON_GO_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[3]
    if not (root / "go.mod").is_file() or not (root / "cmd" / "libbaton").is_dir():
        raise BuildError(
            f"no Go sources of baton at {root} (go.mod and cmd/libbaton): set BATON_GO_ROOT "
            "to a checkout, or BATON_LIBRARY to a built library"
        )
    return root


def _checkout() -> Path | None:
    try:
        return go_root()
    except BuildError:
        return None


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        for cand in ("/usr/local/go/bin/go", os.path.expanduser("~/go/bin/go")):
            if os.access(cand, os.X_OK):
                return cand
        raise BuildError("the fast lane's libraries are built with the Go toolchain; `go` is not on PATH")
    return go


def source_key(root: Path, go_version: str) -> str:
    """A hash of every Go source file of baton's module (tests aside), go.mod, go.sum,
    the Go version and the platform: the cache key of the baton command that
    ``baton.ray`` builds."""
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


def _run(go: str, args: list[str], cwd: Path, what: str) -> str:
    res = subprocess.run([go, *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"{what} failed (go {' '.join(args)} in {cwd}):\n{res.stderr.strip()}")
    return res.stdout


def _package(module_dir: Path, package: str | None) -> str:
    """The package to build, as go build takes it: ``package``, or the module's one
    cmd/lib* folder."""
    if package is not None:
        if not isinstance(package, str) or not package:
            raise TypeError(f"package is {package!r:.60}; want a Go package (\"./cmd/libkeydoor\" or an import path)")
        if not package.startswith((".", "/")) and (module_dir / package).is_dir():
            return "./" + package
        return package
    cmd = module_dir / "cmd"
    libs = sorted(d.name for d in cmd.glob("lib*") if d.is_dir() and any(d.glob("*.go"))) if cmd.is_dir() else []
    if len(libs) != 1:
        found = f"found {', '.join('cmd/' + d for d in libs)}" if libs else "found none"
        raise BuildError(f"package: the library of {module_dir} is its cmd/lib* package, and {found}; pass package=")
    return f"./cmd/{libs[0]}"


def _json_stream(text: str) -> list[dict]:
    """The JSON values of go list -json's output, one after another."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.append(v)


def package_key(go: str, module_dir: Path, package: str) -> tuple[str, str]:
    """The cache key of the library of ``package`` built in ``module_dir`` and the
    package's import path: a hash of every file that go build reads for it (every
    package of its dependency closure but the standard library's, listed by ``go
    list -deps``), the module's go.mod, go.sum and go.work, the Go version, the
    platform and the build's environment."""
    env_out = _run(go, ["env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOWORK"], module_dir, "go env")
    goversion, goos, goarch, cgo, gowork = (env_out.splitlines() + [""] * 5)[:5]
    listed = _run(
        go,
        ["list", "-deps", f"-json=ImportPath,Name,Dir,Standard,DepOnly,{','.join(_FILE_LISTS)}", package],
        module_dir,
        f"go list of {package}",
    )
    pkgs = _json_stream(listed)
    main = [p for p in pkgs if not p.get("DepOnly")]
    if len(main) != 1:
        raise BuildError(f"package {package!r} of {module_dir}: want one package, go list gives {len(main)}")
    target = main[0]
    if target.get("Name") != "main":
        raise BuildError(
            f"package {target['ImportPath']} is package {target.get('Name')}, not a main package: a library is a main "
            "package that calls capi.Use (cmd/libNAME/main.go)"
        )
    h = hashlib.sha256()
    for part in (goversion, goos, goarch, cgo, target["ImportPath"], *(f"{k}={os.environ.get(k, '')}" for k in _BUILD_ENV)):
        h.update(part.encode() + b"\0")
    extra = [module_dir / "go.mod", module_dir / "go.sum"]
    if gowork and gowork != "off":
        extra += [Path(gowork), Path(gowork + ".sum")]
    for f in extra:
        h.update(str(f.name).encode() + b"\0")
        h.update(f.read_bytes() if f.is_file() else b"\1missing")
    for p in sorted((p for p in pkgs if not p.get("Standard")), key=lambda p: p["ImportPath"]):
        h.update(b"package\0" + p["ImportPath"].encode() + b"\0")
        d = Path(p["Dir"])
        for name in sorted({f for k in _FILE_LISTS for f in p.get(k) or ()}):
            h.update(name.encode() + b"\0")
            h.update(hashlib.sha256((d / name).read_bytes()).digest())
    return h.hexdigest()[:20], target["ImportPath"]


def build(module_dir: str | os.PathLike | None = None, package: str | None = None, *, force: bool = False,
          verbose: bool = False) -> Path:
    """Builds the c-shared library of a Go module's package, if its cache entry is
    missing (or ``force``), and returns its path (see the module's documentation).

    ``module_dir`` is the module's folder (None: baton's own checkout); ``package``
    the main package to build ("./cmd/libkeydoor", or an import path; None: the
    module's one cmd/lib* folder, cmd/libbaton for baton's). BuildError when there is
    no module, no such package, no Go toolchain, or go build fails (with its errors).

    >>> path = build()  # doctest: +SKIP
    >>> path = build("~/keydoor")  # doctest: +SKIP
    """
    if module_dir is None:
        root = _checkout()
        if root is None:
            raise BuildError(
                "module_dir: no Go module to build: baton is installed without its Go sources (a wheel carries "
                "baton's library built, and baton.vector needs no build); pass the folder of a Go module of your own"
            )
        pkg = package if package is not None else "./cmd/libbaton"
    else:
        if not isinstance(module_dir, (str, os.PathLike)):
            raise TypeError(f"module_dir is {module_dir!r:.60} ({type(module_dir).__name__}); want a folder's path")
        root = Path(module_dir).expanduser().resolve()
        if not (root / "go.mod").is_file():
            raise BuildError(f"module_dir: {root} holds no go.mod; want the folder of a Go module")
        pkg = package
    go = _go()
    pkg = _package(root, pkg)
    key, path = package_key(go, root, pkg)
    out = cache_dir() / f"{path.rsplit('/', 1)[-1]}-{key}{_suffix()}"
    if out.is_file() and not force:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=_suffix(), dir=out.parent)
    os.close(fd)
    env = dict(os.environ, CGO_ENABLED="1")
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-o", tmp, pkg]
    if verbose:
        print(f"(cd {root} && {' '.join(cmd)})", file=sys.stderr)
    try:
        res = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise BuildError(f"go build of the library {path} failed ({' '.join(cmd)} in {root}):\n{res.stderr}")
        os.replace(tmp, out)
    finally:
        for junk in (tmp, tmp[: -len(_suffix())] + ".h"):
            if os.path.exists(junk):
                os.remove(junk)
    return out


def _own() -> str:
    """baton's own library: built from the checkout, else the one the wheel carries."""
    global _default
    if _default is None:
        if _checkout() is not None:
            _default = str(build())
        elif (b := bundled()) is not None:
            _default = str(b)
        else:
            raise BuildError(
                "baton.vector: no library of baton's environments: this installation carries none (a wheel does) and "
                "runs from no checkout to build one from; pass library= (or set BATON_LIBRARY) to a built library"
            )
    return _default


def resolve(library: str | os.PathLike | None = None) -> str:
    """The path of the library to load: ``library``, else ``BATON_LIBRARY``, else
    baton's own (built first if need be). BuildError for a path that names no file;
    TypeError for a library that is not a path."""
    what = "library"
    if library is None:
        library, what = os.environ.get("BATON_LIBRARY") or None, "BATON_LIBRARY"
    if library is None:
        return _own()
    if not isinstance(library, (str, os.PathLike)):
        raise TypeError(f"library is {library!r:.60} ({type(library).__name__}); want the path of a built library")
    p = Path(library).expanduser()
    if not p.is_file():
        raise BuildError(f"{what}: no library at {os.fspath(library)} (build one with baton.build(module_dir=...))")
    return str(p.resolve())


def load(library: str | os.PathLike | None = None) -> ctypes.CDLL:
    """The loaded library (see ``resolve``), loaded, and built if need be, on the
    first call of the process that names it, its functions declared from ``abi``."""
    global _pid
    with _lock:
        if _pid is not None and _pid != os.getpid():
            raise _fork_error()
        path = resolve(library)
        lib = _libs.get(path)
        if lib is None:
            lib = ctypes.CDLL(path)
            try:
                _abi.declare(lib)
            except AttributeError as e:
                raise BuildError(f"{path} is not a baton library of this version: {e}") from None
            _libs[path], _pid = lib, os.getpid()
        return lib


# aside's child: loads a library, declares its functions from abi (by its path, not
# importing baton), answers one question and prints JSON: "describe" (and, asked to,
# makes and closes one copy of an agent's view, for its errors) or "envs".
_CHILD = """
import ctypes, importlib.util, json, sys
c = ctypes
req = json.load(sys.stdin)
spec = importlib.util.spec_from_file_location("_baton_abi", req["abi"])
abi = importlib.util.module_from_spec(spec)
spec.loader.exec_module(abi)
lib = c.CDLL(req["library"])
abi.declare(lib)
n = 1 << 22
out, err = c.create_string_buffer(n), c.create_string_buffer(n)
s = lambda t: None if t is None else t.encode()
if req["op"] == "envs":
    needed = c.c_int64()
    code = lib.baton_envs(out, n, c.byref(needed), err, n)
    if code == 2 and needed.value >= n:
        out = c.create_string_buffer(needed.value + 1)
        code = lib.baton_envs(out, needed.value + 1, c.byref(needed), err, n)
    json.dump({"code": code, "out": out.value.decode(), "err": err.value.decode()}, sys.stdout)
    sys.exit(0)
code = lib.baton_describe(s(req["name"]), s(req["config"]), out, n, err, n)
layout = json.loads(out.value) if code == 0 else None
view = json.loads(req["view"]) if req["view"] else None
if layout is not None and view is not None and layout["kind"] != "single":
    names = [a["name"] for a in layout["agents"]]
    agent = view["agent"] if view["agent"] is not None else names[0]
    if agent in names:
        a = layout["agents"][names.index(agent)]
        bufs = [
            (c.c_float * a["obs_dim"])(), (c.c_float * a["obs_dim"])(),
            (c.c_bool * a["mask_len"])() if a["mask_len"] else None,
            (c.c_double * 1)(), (c.c_bool * 1)(), (c.c_bool * 1)(), None, (c.c_int64 * 1)(),
        ]
        handle = c.c_int64()
        code = lib.baton_view_new(s(req["name"]), s(req["config"]), s(agent), s(view["policies"]), None, 1, 1, 0,
                                  *bufs, c.byref(handle), err, n)
        if code == 0:
            lib.baton_close(handle.value)
json.dump({"code": code, "out": out.value.decode(), "err": err.value.decode()}, sys.stdout)
"""
_asked: dict[tuple, tuple[int, str, str]] = {}


def _aside(library: str | os.PathLike | None, op: str, **req) -> tuple[int, str, str]:
    """(code, out, error JSON) of one question to a library asked in a short-lived
    child process, once per process for each question that succeeds."""
    path = resolve(library)
    key = (path, op, *sorted(req.items()))
    with _lock:
        got = _asked.get(key)
    if got is not None:
        return got
    req = dict(req, library=path, abi=_abi.__file__, op=op)
    res = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=json.dumps(req), capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"the fast lane's library {path} could not answer ({op} {req.get('name') or ''}):\n{res.stderr}")
    ans = json.loads(res.stdout)
    got = (int(ans["code"]), ans["out"], ans["err"])
    if got[0] == 0:
        with _lock:
            _asked[key] = got
    return got


def describe_aside(name: bytes, config: bytes | None, view: tuple[str | None, str] | None = None,
                   library: str | os.PathLike | None = None) -> tuple[int, str, str]:
    """baton_describe's (code, layout JSON, error JSON) for ``name`` and ``config``,
    without loading the library into this process: a short-lived child process
    loads it and answers (once per process for each question). With ``view``
    (agent name or None for the first agent, policies as baton_view_new takes them,
    names only), the child also makes one copy of that agent's view, for its errors.
    For adapters whose construction must leave the process free to fork
    (Gymnasium's AsyncVectorEnv makes one environment in the parent, for its spaces,
    before it forks its workers)."""
    v = None if view is None else json.dumps({"agent": view[0], "policies": view[1]}, sort_keys=True)
    code, out, err = _aside(library, "describe", name=name.decode(), config=None if config is None else config.decode(), view=v)
    return code, out, err


def envs(library: str | os.PathLike | None = None) -> tuple[int, str, str]:
    """baton_envs's (code, listing JSON, error JSON) of the library: in this process
    when it has loaded that library already, else in a short-lived child process, so
    that listing a library loads no Go runtime into the process (which stays free to
    fork)."""
    path = resolve(library)
    with _lock:
        have = path in _libs
    if not have:
        return _aside(path, "envs")
    lib = load(path)  # ForkError in a forked child
    needed = ctypes.c_int64()
    n = 1 << 16
    while True:
        out, err = ctypes.create_string_buffer(n), ctypes.create_string_buffer(1 << 16)
        code = lib.baton_envs(out, n, ctypes.byref(needed), err, 1 << 16)
        if code != 2 or needed.value < n:
            return code, out.value.decode() if code == 0 else "", err.value.decode()
        n = needed.value + 1


def loaded() -> bool:
    """Whether this process has loaded a library (and so started a Go runtime)."""
    return bool(_libs)
