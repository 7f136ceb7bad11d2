"""The wheel: scripts/wheel builds a platform wheel with baton's library inside, and
`pip install` of it into a clean virtual environment works with no Go toolchain and
no checkout: baton.make("cartpole") and baton.vector.make("maze", ...) step, a
library of one's own loads through library=, and baton.build without a module says
what is missing.

It builds the library and the wheel, makes a virtual environment and installs numpy
and gymnasium into it (at the project environment's versions, from uv's cache, else
from the package index): slow, but part of the normal suite.
"""

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from baton.vector import _native

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.go, pytest.mark.slow]


def uv() -> str:
    """The pinned uv that scripts/python installs."""
    r = subprocess.run([str(REPO_ROOT / "scripts" / "python"), "--uv", "--version"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    version = r.stdout.split()[1]
    return str(Path(_native.cache_dir()) / f"uv-{version}" / "bin" / "uv")


def test_wheel_installs_and_runs_without_go(tmp_path):
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: cannot build the library the wheel carries")
    r = subprocess.run([str(REPO_ROOT / "scripts" / "wheel"), str(tmp_path / "dist")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    wheel = Path(r.stdout.strip().splitlines()[-1])
    assert wheel.is_file(), r.stdout
    if sys.platform == "linux" and os.uname().machine == "x86_64":
        assert wheel.name.endswith("-py3-none-linux_x86_64.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "baton/_lib/libbaton.so" in names and "baton/_lane/abi.py" in names
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "Root-Is-Purelib: false" in z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
    requires = [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    assert requires == ["Requires-Dist: numpy>=1.24"], "numpy is the only hard dependency"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pins = [f"numpy=={np.__version__}", f"gymnasium=={gymnasium.__version__}", f"{wheel}[gym]"]
    install = [uv(), "pip", "install", "--quiet", "--python", py, *pins]
    if subprocess.run([*install, "--offline"], capture_output=True).returncode != 0:
        r = subprocess.run(install, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr

    # A library of one's own, built here, loads through library= there.
    own = _native.build()
    home = tmp_path / "home"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "BATON_CACHE_DIR": str(home / "cache")}
    code = f"""
        import shutil
        import numpy as np
        import baton, baton.vector as bv
        assert shutil.which("go") is None
        e = baton.make("cartpole")
        obs, _ = e.reset(seed=1)
        assert obs.shape == (4,) and e.step(0)[1] == 1.0
        v = bv.make("maze", 4, seed=1)
        assert v.library.endswith("site-packages/baton/_lib/libbaton.so"), v.library
        groups = v.reset()
        for _ in range(20):
            for g in groups.values():
                g.actions[:] = np.argmax(g.masks, axis=1) if g.masks is not None else 0
            groups = v.step()[0]
        v.close()
        w = bv.make("cartpole", 2, library={str(own)!r})
        w.reset()
        assert w.library == {str(own)!r}
        try:
            baton.build()
        except baton.build.BuildError as err:
            assert "no Go module to build" in str(err), err
        else:
            raise AssertionError("baton.build() built without a module")
        print("ok")
    """
    r = subprocess.run([py, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert r.stdout.strip() == "ok"
    assert not (home / "cache").exists(), "nothing was built or cached"
