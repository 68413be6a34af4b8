"""The floor: surveillance and the pit over the floor's PostgreSQL database.

Tables ship their events to the floor database (``floorctl ship``); this package reads them
through the same engine and fold the table uses (:mod:`controller.store.fold`), so a round
shown here is the round the table played, rebuilt from its events.

- :mod:`.settings` — the floor's time zone, gaming day and shifts; local times read and shown;
- :mod:`.schema` — the floor's own read model (``floor_*`` tables, its DDL in ``schema.sql``):
  never the record, rebuildable from the events at any time;
- :mod:`.indexer` — keeps the read model up to date from the shipped events, incrementally,
  with engine checkpoints so that a round is rebuilt from its shoe, not from the dawn of time;
- :mod:`.rebuild` — a round rebuilt from its events, step by step as the dealer's screen
  showed it ("watch it again");
- :mod:`.queries` — the answers: the floor, a round by time or number, rounds in a range,
  flags, the shift or day of a table; each lookup logged with who made it (:mod:`.audit`);
- :mod:`.users` — the floor's own accounts (surveillance and pit), argon2-hashed;
- :mod:`.web` — ``floorctl floor serve``; :mod:`.cli` — the ``floorctl floor`` commands;
- :mod:`.text`, :mod:`.pdf`, :mod:`.evidence` — the same answers as text, PDF and an
  evidence package beside the store's own export;
- :mod:`.generate` — realistic shifts played through the engine (tests, benchmark).
"""
