"""Builds the fast lane's Go library (see ``baton.vector``) and prints its path:

    python -m baton.build            # build if the Go sources changed
    python -m baton.build --force    # build again

``baton.vector`` builds it on first use all the same; this is for doing it ahead of
time (an image, a CI cache) and seeing the compiler's errors.
"""

from __future__ import annotations

import argparse
import sys

from .vector import _native


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baton.build", description=__doc__.splitlines()[0])
    p.add_argument("--force", action="store_true", help="build even when the cached library is current")
    args = p.parse_args(argv)
    try:
        print(_native.build(force=args.force, verbose=True))
    except _native.BuildError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
