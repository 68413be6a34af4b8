"""Game protection: the advantage player, the cheat and the honest winner told apart.

A pure analysis of a table's record (its events in shoe order): no I/O beyond reading the count
tags and the calibration under ``config/``, no clock.

- :mod:`.tags` — each game's balanced count (tags from its effect of removal), the true count;
- :mod:`.record` — a table's events walked through the engine into per-round, per-decision and
  per-shuffle records (the count before each round, every playing decision with the next card);
- :mod:`.stats` — the tests: bet against count, playing when the count is high (wonging), index
  plays, the luck z-score, "played as if they knew", each with its null distribution;
- :mod:`.verdict` — clear / watch / alert with the false-alarm rate each stands for;
- :mod:`.analysis` — per player session, box, dealer, table and shift: the verdicts, the hold
  against expectation, the dealer scorecard and the shuffle audit;
- :mod:`.cli` — ``floorctl protect FILE.jsonl... [--json]``.

The user's description is docs/surveillance/game-protection.md.
"""
