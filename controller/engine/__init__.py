"""The round engine: a pure state machine over the events of ``shared/spec/SCENARIO.md``.

No I/O and no clock. :meth:`Table.apply` takes one :class:`~controller.events.Event` and returns
what followed from it (:class:`Applied`): the flags raised (each naming its rule) and, when the
event ended a round, that round's result with its settlements. :meth:`Table.due` says what the
dealer must do next; :meth:`Table.open_decisions` lists the decisions open now, typed. A rule
breach is a flag, never an exception: the event is refused (or, for the section 16
irregularities, handled as the procedure directs) and play goes on.
"""

from controller.engine import native

native.check()  # before anything compiled is imported: a stale build must not run

from controller.engine.deal import Target  # noqa: E402
from controller.engine.decisions import Decision, Kind, Role  # noqa: E402
from controller.engine.results import Applied, Flag, RoundResult, Settlement, money  # noqa: E402
from controller.engine.snapshot import SnapshotError  # noqa: E402
from controller.engine.state import Phase  # noqa: E402
from controller.engine.table import Table  # noqa: E402
from controller.engine.view import Due  # noqa: E402

__all__ = [
    "Applied",
    "Decision",
    "Due",
    "Flag",
    "Kind",
    "Phase",
    "Role",
    "RoundResult",
    "Settlement",
    "SnapshotError",
    "Table",
    "Target",
    "money",
]
