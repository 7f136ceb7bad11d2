"""Builds a fast-lane library of a Go module (see ``baton.vector``) and prints its path:

    python -m baton.build                          # baton's own, from this checkout
    python -m baton.build --module-dir ~/keydoor   # a module's cmd/lib* package
    python -m baton.build --module-dir ~/keydoor --package ./cmd/libkeydoor --force

From Python, ``baton.build(module_dir=None, package=None)`` (this module is callable)
builds and caches a library and returns its path, for the ``library=`` of every entry
point:

    lib = baton.build("~/keydoor")
    env = baton.make("keydoor", library=lib)

A library is cached by the content of every file it is built from (the module's
packages, baton's and their dependencies', as ``go list -deps`` lists them), so an edit
anywhere there builds a new one; ``--force`` builds again all the same. ``baton.vector``
builds baton's own on first use in a checkout; this is for building ahead of time (an
image, a CI cache), a module of one's own, and seeing the compiler's errors.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
from pathlib import Path

from ._lane import native as _native

BuildError = _native.BuildError


def build(module_dir: str | os.PathLike | None = None, package: str | None = None, *, force: bool = False,
          verbose: bool = False) -> Path:
    """Builds, if its sources changed (or ``force``), the c-shared library of the main
    package ``package`` of the Go module in ``module_dir`` and returns its cached
    path. ``module_dir`` None is baton's own checkout (cmd/libbaton); ``package`` None
    the module's one cmd/lib* folder. ``BuildError`` names what is missing (a module,
    the package, the Go toolchain) or carries go build's errors.

    >>> lib = baton.build("~/keydoor")  # doctest: +SKIP
    >>> lib = baton.build("~/keydoor", "./cmd/libkeydoor", force=True)  # doctest: +SKIP
    """
    return _native.build(module_dir, package, force=force, verbose=verbose)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baton.build", description=__doc__.splitlines()[0])
    p.add_argument("--module-dir", help="the Go module's folder (default: baton's own checkout)")
    p.add_argument("--package", help="the main package to build (default: the module's one cmd/lib* folder)")
    p.add_argument("--force", action="store_true", help="build even when the cached library is current")
    args = p.parse_args(argv)
    try:
        print(build(args.module_dir, args.package, force=args.force, verbose=True))
    except BuildError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


class _Callable(types.ModuleType):
    """This module, callable as its ``build``: ``baton.build(...)``."""

    def __call__(self, module_dir: str | os.PathLike | None = None, package: str | None = None, *,
                 force: bool = False, verbose: bool = False) -> Path:
        return build(module_dir, package, force=force, verbose=verbose)


sys.modules[__name__].__class__ = _Callable

if __name__ == "__main__":
    sys.exit(main())
