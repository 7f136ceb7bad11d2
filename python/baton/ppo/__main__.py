"""python -m baton.ppo: see baton.ppo._cli (``python -m baton.ppo --help``)."""

import sys

from ._cli import main

sys.exit(main())
