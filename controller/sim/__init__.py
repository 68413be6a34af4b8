"""``floorctl simulate``: play many rounds through the live table's engine with a strategy table.

- :mod:`controller.sim.strategy` — strategy tables (``config/strategy-*.toml``);
- :mod:`controller.sim.shoe` — a seeded shoe that plays the shoe reader's part;
- :mod:`controller.sim.player` — drives :class:`controller.engine.Table` round by round, acting as
  dealer (offers, shuffles) and player (the typed decisions of ``table.open_decisions()``
  and the strategy);
- :mod:`controller.sim.stats` — the tally: house edge, standard error, frequencies;
- :mod:`controller.sim.runner` — splits a run into fixed seeded chunks over worker processes;
- :mod:`controller.sim.command` — the ``floorctl simulate`` subcommand.
"""

from controller.engine import native

native.check()  # the simulator's compiled modules too: never a stale build
