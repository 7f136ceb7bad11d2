"""Libraries of one's own: baton.build of a Go module outside baton's tree
(tests/testdata/keydoor, example.com/keydoor, baton through a replace), every entry
point's library=, register_gymnasium, two libraries in one process, the cache key over
the package's dependency closure, and the C ABI declared from the header cgo writes.

Each test builds or loads Go libraries, so they need the Go toolchain (go marker);
the builds take tens of seconds the first time (slow marker), seconds once Go's build
cache holds baton's packages.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

import baton
import baton.pettingzoo as bp
import baton.vector as bv
from baton.gym import BatonEnv, BatonVectorEnv
from baton.vector import _abi, _native

REPO_ROOT = Path(__file__).resolve().parents[2]
KEYDOOR = Path(__file__).resolve().parent / "testdata" / "keydoor"

pytestmark = [pytest.mark.go, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def go():
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the fast lane's libraries")


@pytest.fixture(scope="module")
def keydoor() -> str:
    """The library of the keydoor module's environments, a second library beside baton's."""
    return str(baton.build(KEYDOOR))


def run_child(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env or dict(os.environ), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


def copy_module(dst: Path) -> Path:
    """The keydoor module copied to dst, its replace pointing at this checkout."""
    shutil.copytree(KEYDOOR, dst)
    mod = dst / "go.mod"
    mod.write_text(mod.read_text().replace("=> ../../../..", f"=> {REPO_ROOT}"))
    return dst


# --- the library of a module of one's own ---------------------------------------


def test_every_entry_point_takes_library(keydoor):
    v = bv.make("keydoor", 4, seed=1, library=keydoor)
    assert v.library == keydoor and isinstance(v, bv.SingleVector)
    obs, _ = v.reset()
    np.testing.assert_array_equal(obs, np.zeros((4, 2), np.float32))
    _, rewards, *_ = v.step(np.ones(4, np.int64))
    np.testing.assert_allclose(rewards, -0.05)
    v.close()
    kind, agents = bv.describe("keydoor-pair", library=keydoor)
    assert kind == "multi" and [a.name for a in agents] == ["keeper", "opener"]
    m = bv.make("keydoor-pair", 3, library=keydoor)
    assert set(m.reset()) == {"keeper", "opener"}
    m.close()
    a = bv.make("keydoor", 4, batch_size=2, library=keydoor)
    a.async_reset()
    assert a.recv()[0].shape == (2, 2)
    a.close()
    env = baton.make("keydoor-pair", agent="opener", policies={"keeper": "random"}, library=keydoor)
    env.reset(seed=2)
    assert env.step(1)[1] in (0.0, 1.0)
    env.close()
    envs = baton.make_vec("keydoor", 3, library=keydoor)
    assert envs.reset(seed=1)[0].shape == (3, 2)
    envs.close()
    par = bp.parallel_env("keydoor-pair", library=keydoor)
    par.reset(seed=0)
    _, rewards, *_ = par.step({"keeper": 2, "opener": 2})
    assert rewards == {"keeper": 1.0, "opener": 1.0}
    par.close()
    # baton's own environments are not in it: the library holds what it registers.
    with pytest.raises(bv.ConfigError, match=r'unknown environment "maze" \(choices: keydoor, keydoor-pair\)'):
        bv.make("maze", 2, library=keydoor)


@pytest.mark.parametrize("name,agent", [("keydoor", "explorer"), ("keydoor-pair", "keeper"), ("keydoor-pair", "opener")])
def test_check_env(keydoor, name, agent):
    env = baton.make(name, agent=agent, library=keydoor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the checker fails the test
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_pettingzoo_api(keydoor):
    env = bp.env("keydoor-pair", library=keydoor)
    api_test(env, num_cycles=100)
    env.close()
    parallel_api_test(bp.parallel_env("keydoor-pair", library=keydoor), num_cycles=100)


def test_register_gymnasium(keydoor, tmp_path):
    ids = baton.register_gymnasium(keydoor)
    assert ids == ["baton/keydoor-explorer-v0", "baton/keydoor-pair-keeper-v0", "baton/keydoor-pair-opener-v0"]
    assert baton.register_gymnasium(keydoor) == ids, "again, harmlessly"
    env = gym.make("baton/keydoor-pair-opener-v0")
    assert isinstance(env.unwrapped, BatonEnv) and env.unwrapped.agent == "opener"
    obs, _ = env.reset(seed=1)
    assert obs in env.observation_space
    env.close()
    vec = gym.make_vec("baton/keydoor-explorer-v0", 4, vectorization_mode="vector_entry_point")
    assert isinstance(vec, BatonVectorEnv) and vec.reset(seed=0)[0].shape == (4, 2)
    vec.close()
    assert "baton/CartPole-v1" in gym.registry, "the shipped ids stay"
    # The same ids for another library: an error naming both, unless in another namespace.
    copy = shutil.copy(keydoor, tmp_path / "libcopy.so")
    with pytest.raises(ValueError, match=r"baton/keydoor-explorer-v0 is registered already, for .*libkeydoor-.*, not "
                                         r".*libcopy.so: pass another namespace"):
        baton.register_gymnasium(copy)
    assert baton.register_gymnasium(copy, namespace="copy")[0] == "copy/keydoor-explorer-v0"
    assert "mine/maze-motion-v0" in baton.register_gymnasium(str(_native.build()), namespace="mine")
    with pytest.raises(ValueError, match="namespace"):
        baton.register_gymnasium(keydoor, namespace="a/b")


def test_rllib_config_key(keydoor):
    from baton.rllib import BatonMultiAgentEnv

    env = BatonMultiAgentEnv({"env": "keydoor-pair", "library": keydoor})
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["keeper_0"]
    env.close()
    with pytest.raises(TypeError, match='config\\["library"\\]'):
        BatonMultiAgentEnv({"env": "keydoor-pair", "library": 7})


def test_two_libraries_in_one_process(keydoor):
    """baton's library and the keydoor one, two Go runtimes, in one fresh process;
    BATON_LIBRARY names the default."""
    env = dict(os.environ, BATON_LIBRARY=keydoor)
    run_child(
        f"""
        import numpy as np
        import baton.vector as bv
        from baton.vector import _native
        own = str(_native.build())
        k = bv.make("keydoor", 8, seed=1)          # BATON_LIBRARY
        m = bv.make("maze", 8, seed=1, library=own)
        assert k.library == {keydoor!r} and m.library == own
        k.reset(); groups = m.reset()
        for _ in range(50):
            k.step(np.ones(8, np.int64))
            for g in groups.values():
                g.actions[:] = np.argmax(g.masks, axis=1) if g.masks is not None else 0
            groups = m.step()[0]
        libs = [k._lib, m._lib]
        assert [l.baton_live() for l in libs] == [1, 1], "each library counts its own vectors"
        k.close()
        assert [l.baton_live() for l in libs] == [0, 1]
        m.close()
        assert len(_native._libs) == 2
        """,
        env,
    )


def test_a_library_is_described_aside(keydoor):
    """baton.make and register_gymnasium in a process that loaded no library ask a
    child process, so that the process stays free to fork (AsyncVectorEnv)."""
    run_child(
        f"""
        import gymnasium
        import baton
        from baton.vector import _native
        env = baton.make("keydoor-pair", agent="keeper", library={keydoor!r})
        ids = baton.register_gymnasium({keydoor!r})
        assert not _native.loaded()
        vec = gymnasium.vector.AsyncVectorEnv([lambda: gymnasium.make(ids[1])] * 2, context="fork")
        obs, _ = vec.reset(seed=3)
        assert obs.shape == (2, 4)
        vec.close()
        env.reset(seed=1)
        assert _native.loaded()
        """
    )


# --- building ------------------------------------------------------------------


def test_edit_in_the_users_package_builds_again(tmp_path, monkeypatch):
    """The stale-code bug: the cache key covers the user's package, not only baton's
    files. An edited constant gives a new library, without force, and its value."""
    monkeypatch.setenv("BATON_CACHE_DIR", str(tmp_path / "cache"))
    mod = copy_module(tmp_path / "keydoor")
    first = baton.build(mod)
    assert first.parent == tmp_path / "cache" and first.name.startswith("libkeydoor-")
    assert baton.build(mod) == first, "unchanged sources: the cached library"
    src = mod / "keydoor.go"
    src.write_text(src.read_text().replace("const StepCost = 0.05", "const StepCost = 0.07"))
    second = baton.build(mod)
    assert second != first and second.is_file()
    rewards = []
    for lib in (first, second):
        v = bv.make("keydoor", 2, library=lib)
        v.reset()
        rewards.append(float(v.step(np.ones(2, np.int64))[1][0]))
        v.close()
    assert rewards == [-0.05, -0.07]


def test_package_key_covers_the_dependency_closure(tmp_path):
    """A file of a dependency (baton's, through the replace: a copy of baton's
    sources) changes the key; a test file, which go build does not read, does not."""
    fake = tmp_path / "baton"
    shutil.copytree(REPO_ROOT, fake, ignore=shutil.ignore_patterns(".git", "python", "node_modules", "webui", "docs"))
    mod = copy_module(tmp_path / "keydoor")
    (mod / "go.mod").write_text((mod / "go.mod").read_text().replace(f"=> {REPO_ROOT}", f"=> {fake}"))
    go = _native._go()
    key, path = _native.package_key(go, mod, "./cmd/libkeydoor")
    assert path == "example.com/keydoor/cmd/libkeydoor"
    registry = fake / "registry" / "registry.go"
    text = registry.read_text()
    registry.write_text(text + "\n// an edit\n")
    assert _native.package_key(go, mod, "./cmd/libkeydoor")[0] != key
    registry.write_text(text)
    assert _native.package_key(go, mod, "./cmd/libkeydoor")[0] == key
    (fake / "registry" / "extra_test.go").write_text("package registry\n")
    assert _native.package_key(go, mod, "./cmd/libkeydoor")[0] == key


def test_build_errors(tmp_path):
    with pytest.raises(_native.BuildError, match="holds no go.mod"):
        baton.build(tmp_path)
    with pytest.raises(TypeError, match="module_dir"):
        baton.build(7)
    mod = copy_module(tmp_path / "keydoor")
    (mod / "cmd" / "libother").mkdir()
    (mod / "cmd" / "libother" / "main.go").write_text("package main\n\nfunc main() {}\n")
    with pytest.raises(_native.BuildError, match="found cmd/libkeydoor, cmd/libother; pass package="):
        baton.build(mod)
    with pytest.raises(_native.BuildError, match="is package keydoor, not a main package"):
        baton.build(mod, ".")
    with pytest.raises(_native.BuildError, match=r"go list of cmd/nothing failed(.|\n)*is not in std"):
        baton.build(mod, "cmd/nothing")
    with pytest.raises(_native.BuildError, match="no library at"):
        bv.make("keydoor", 1, library=tmp_path / "missing.so")
    with pytest.raises(TypeError, match="library is 7"):
        bv.make("keydoor", 1, library=7)
    with pytest.raises(TypeError, match="library is 7"):
        baton.make("keydoor", library=7)
    with pytest.raises(bv.ConfigError, match="library: a remote vector"):
        bv.make("cartpole", 2, address="grpc://127.0.0.1:1", library="x.so")


def test_a_library_given_no_registry(tmp_path):
    """A main package that never calls capi.Use: every call says so (ConfigError)."""
    mod = copy_module(tmp_path / "keydoor")
    (mod / "cmd" / "libnone").mkdir()
    (mod / "cmd" / "libnone" / "main.go").write_text(
        'package main\n\nimport _ "github.com/batonrl/baton/capi"\n\nfunc main() {}\n')
    lib = baton.build(mod, "./cmd/libnone")
    with pytest.raises(bv.ConfigError, match=r"no environments: the library's main package calls capi.Use"):
        bv.make("keydoor", 1, library=lib)
    code, _, err = _native.envs(lib)
    assert code == 1 and "capi.Use" in json.loads(err)["message"]


def test_build_command(keydoor):
    r = subprocess.run([sys.executable, "-m", "baton.build", "--module-dir", str(KEYDOOR)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == keydoor
    r = subprocess.run([sys.executable, "-m", "baton.build", "--module-dir", str(REPO_ROOT / "docs")], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "holds no go.mod" in r.stderr


# --- the C ABI, declared once ------------------------------------------------------


def elf_functions(path: str) -> set[str]:
    """The functions a 64-bit little-endian ELF shared library exports (its .dynsym)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        pytest.skip(f"{path} is not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _, kind, _, _, offset, size, link, *_ in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link][4]
        for off in range(offset, offset + size, 24):
            name, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, off)
            if shndx != 0 and info >> 4 == 1 and info & 0xF == 2:  # defined, global, a function
                names.add(data[strtab + name: data.index(b"\0", strtab + name)].decode())
    return names


def test_every_export_is_declared(tmp_path, keydoor):
    """_abi.py is what genabi writes from cgo's header today; every baton_* function
    the libraries export is in it; and the ctypes each loaded library is declared
    with are the header's types."""
    r = subprocess.run(["go", "run", "./capi/internal/genabi", "-o", str(tmp_path / "_abi.py"), "-header",
                        str(tmp_path / "capi.h")], cwd=REPO_ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "_abi.py").read_text() == Path(_abi.__file__).read_text(), "run scripts/generate"
    header = {}
    for m in re.finditer(r"^extern (.+?) ?\b(baton_\w+)\((.*)\);$", (tmp_path / "capi.h").read_text(), re.M):
        params = [] if m[3] in ("", "void") else [re.sub(r"\s*\w+$", "", p.strip()).replace(" ", "") for p in m[3].split(",")]
        header[m[2]] = (m[1].replace(" ", ""), params)
    assert set(header) == set(_abi.FUNCTIONS)
    own = str(_native.build())
    for path in (own, keydoor):
        exported = {n for n in elf_functions(path) if n.startswith("baton_")}
        assert exported == set(_abi.FUNCTIONS), f"{path}: exported but not declared, or declared but not exported"
        lib = _native.load(path)
        for name, (result, params) in header.items():
            f = getattr(lib, name)
            assert f.restype is _abi.ctype(result), name
            assert f.argtypes == [_abi.ctype(t) for t in params], name
