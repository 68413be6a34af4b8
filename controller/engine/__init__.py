"""The round engine: a pure state machine over the events of ``docs/reference/events.md``.

No I/O and no clock. :meth:`Table.apply` takes one :class:`~controller.events.Event` and returns
what followed from it (:class:`Applied`): the flags raised (each naming its rule) and, when the
event ended a round, that round's result with its settlements. :meth:`Table.due` says what the
dealer must do next; :meth:`Table.open_decisions` lists the decisions open now, typed
(:class:`Decision`: ``kind``, ``by``, ``rule``, ``box``, ``hand``, ``player``, ``min``, ``max``,
``card``), and :meth:`Table.next_card` who is due the next card. A rule breach is a flag,
never an exception: the event is refused (or, for the section 16 irregularities, handled as the
procedure directs) and play goes on.

Checkpoints, for the store's restarts:

* ``Table.snapshot() -> dict[str, Any]``: the whole state at any moment (mid-round too) as
  plain JSON-able data (str, int, bool, None, lists, dicts; money as decimal strings),
  deterministic (the same state gives the same dict, so it hashes canonically), carrying its
  own SHA-256 digest, the table's setup line and a fingerprint of its rule set.
* ``Table.restore(setup, snapshot, *, keep_rounds="snapshot") -> Table``: the table back;
  :class:`SnapshotError` (a ``ValueError``) naming what is wrong for a snapshot that is corrupt,
  of another format version, of another table or rule set, or malformed. Never a wrong table:
  the restored table must dump to exactly the snapshot given.

Memory: ``Table(setup, keep_rounds=N)`` keeps the last N settled rounds in ``Table.rounds``
(``None``, the default, keeps all, as a replay needs; a live table keeps a few);
``Table.rounds_played`` counts them all. The discard rack and the cards removed from play are
the current shoe's, so with ``keep_rounds`` set neither memory nor snapshots grow with the
table's life.

The rooms (one module each, each saying what it owns): :mod:`.table`, :mod:`.state`,
:mod:`.deal`, :mod:`.decisions`, :mod:`.play`, :mod:`.irregular`, :mod:`.betting`,
:mod:`.shoe`, :mod:`.inspection` (decks inspected, the shoe's end and its reconciliation),
:mod:`.opening` (the table's day, the dealer on duty), :mod:`.settle` (with
:mod:`controller.payouts`), :mod:`.view`, :mod:`.results`, :mod:`.snapshot`; :mod:`.native`
checks an optional compiled build (``make native``).
"""

from controller.engine import native

native.check()  # before anything compiled is imported: a stale build must not run

from controller.engine.deal import Target  # noqa: E402
from controller.engine.decisions import Decision, Kind, Role  # noqa: E402
from controller.engine.results import (  # noqa: E402
    Applied,
    Flag,
    Refusal,
    RoundResult,
    Settlement,
    SettlementKind,
    money,
)
from controller.engine.snapshot import SnapshotError  # noqa: E402
from controller.engine.state import DayState, Device, Phase, Reshuffle  # noqa: E402
from controller.engine.table import Table  # noqa: E402
from controller.engine.tableview import TableView  # noqa: E402
from controller.engine.view import Due  # noqa: E402

__all__ = [
    "Applied",
    "DayState",
    "Decision",
    "Device",
    "Due",
    "Flag",
    "Kind",
    "Phase",
    "Refusal",
    "Reshuffle",
    "Role",
    "RoundResult",
    "Settlement",
    "SettlementKind",
    "SnapshotError",
    "Table",
    "TableView",
    "Target",
    "money",
]
