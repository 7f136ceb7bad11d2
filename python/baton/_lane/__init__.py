"""The fast lane's private core, shared by baton's Python adapters.

``abi`` is the Go library's C ABI (generated, see ``scripts/generate``), ``native``
finds, builds and loads the libraries, ``core`` holds the errors, argument checks,
buffers and the base vector, and ``adapters`` what the Gymnasium, PettingZoo and
RLlib adapters share. ``baton.vector``, ``baton.gym``, ``baton.pettingzoo`` and
``baton.rllib`` import from here, and nothing here imports them: imports run one way.
Nothing here is public API; the public names are re-exported by ``baton.vector``.
"""
