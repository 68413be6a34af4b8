"""``floorctl verify``: prove a store (or an export of one) has not been changed.

A table verifies when its hash chain is intact (see :mod:`controller.store.chain`) and the
derived rows stored beside it (shoes, rounds, flags, settlements) are exactly what a replay
of its events through the round engine gives. The first problem found is named: the table,
the event's sequence number, and what was done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.events import ScenarioError
from controller.store.canonical import ChainRecord
from controller.store.chain import Problem, check_chain
from controller.store.fold import Fold
from controller.store.repository import Derived, Store


@dataclass
class TableReport:
    table_id: str
    events: int  # records checked, the table line included
    head_seq: int
    head_hash: str


@dataclass
class VerifyReport:
    tables: list[TableReport] = field(default_factory=list)
    problem: Problem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def events(self) -> int:
        return sum(t.events for t in self.tables)


def replay_chain(
    table_id: str, records: Iterable[ChainRecord], *, replay: bool = True
) -> tuple[TableReport, Derived, Problem | None]:
    """Check a table's chain and replay its sound events; what the events give."""
    derived = Derived()
    fold: list[Fold] = []
    broken: list[Problem] = []

    def apply(record: ChainRecord) -> None:
        if broken:
            return
        try:
            if not fold:
                fold.append(Fold.from_record(record))
            else:
                derived.extend(fold[0].apply(record.seq, record.event())[2])
        except (ScenarioError, ValueError) as exc:
            broken.append(Problem(table_id, record.seq, "malformed", f"cannot be replayed: {exc}"))

    count, head, problem = check_chain(table_id, records, apply if replay else None)
    report = TableReport(table_id, count, count - 1, head)
    return report, derived, problem or (broken[0] if broken else None)


# How each derived table is compared: its key, the event sequence a row concerns, a label.
_KINDS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "shoes": (("seq",), "seq", "shoe"),
    "rounds": (("round",), "closed_seq", "round"),
    "flags": (("seq", "idx"), "seq", "flag"),
    "settlements": (("round", "idx"), "seq", "settlement"),
}
_IGNORED = ("table_id",)


def _describe(kind: str, row: dict[str, Any]) -> str:
    if kind == "settlement":
        return (
            f"settlement of round {row['round']} for {row['player']} box {row['box']} hand "
            f"{row['hand']} ({row['kind']}): staked {row['staked']}, returned "
            f"{row['returned']}, net {row['net']}"
        )
    if kind == "flag":
        return f"flag {row['rule']} of round {row['round']} ({row['message']})"
    if kind == "round":
        return f"round {row['round']} {row['status']} at event {row['closed_seq']}"
    return f"shoe loaded at event {row['seq']} ({row['kind']}, cut card {row['cut_card']})"


def compare_derived(
    table_id: str,
    expected: Derived,
    stored: Derived,
    head_seq: int,
    *,
    lacking_from: int | None = None,
) -> Problem | None:
    """The first (by event) difference between stored derived rows and a replay's.

    Rows a replay gives for events from ``lacking_from`` on may be absent from the store
    (a live recorder writes an event's derived rows just after the event).
    """
    found: list[tuple[int, Problem]] = []
    for name, (key_cols, seq_col, label) in _KINDS.items():
        want = {tuple(r[c] for c in key_cols): r for r in getattr(expected, name)}
        have = {tuple(r[c] for c in key_cols): r for r in getattr(stored, name)}
        for key in want.keys() | have.keys():
            w, h = want.get(key), have.get(key)
            if w is not None and h is not None:
                if all(w[c] == h[c] for c in w if c not in _IGNORED):
                    continue
                seq = int(w[seq_col])
                msg = (
                    f"stored {_describe(label, h)}; a replay of the events gives "
                    f"{_describe(label, w)}"
                )
                found.append((seq, Problem(table_id, seq, label, msg)))
            elif w is not None:
                seq = int(w[seq_col])
                if lacking_from is not None and seq >= lacking_from:
                    continue
                msg = f"a replay gives {_describe(label, w)}, which the store lacks"
                found.append((seq, Problem(table_id, seq, label, msg)))
            elif h is not None:
                seq = int(h[seq_col])
                if seq > head_seq:
                    msg = (
                        f"the store holds a {label} from event {seq} but its log ends at event "
                        f"{head_seq}: the events after {head_seq} were deleted"
                    )
                    found.append((head_seq + 1, Problem(table_id, head_seq + 1, "deleted", msg)))
                else:
                    msg = (
                        f"stored {_describe(label, h)}, which a replay of the events does not give"
                    )
                    found.append((seq, Problem(table_id, seq, label, msg)))
    if not found:
        return None
    return min(found, key=lambda item: item[0])[1]


def verify_table(
    store: Store, table_id: str, *, replay: bool = True, live: bool = False
) -> tuple[TableReport, Derived, Problem | None]:
    """Verify one table: its chain, then (with ``replay``) its derived rows.

    With ``live``, the last event's derived rows may be missing (a recorder writing now).
    Returns the report, the derived rows the replay gives, and the first problem.
    """
    table, expected, problem = replay_chain(table_id, store.iter_records(table_id), replay=replay)
    if problem is None and table.events == 0:
        problem = Problem(table_id, 0, "missing", "the store holds no events for this table")
    if problem is None and replay:
        stored = store.derived(table_id)
        lacking = table.head_seq if live else None
        problem = compare_derived(table_id, expected, stored, table.head_seq, lacking_from=lacking)
    return table, expected, problem


def verify_store(
    store: Store,
    table_ids: Iterable[str] | None = None,
    *,
    replay: bool = True,
    progress: Callable[[TableReport], None] | None = None,
) -> VerifyReport:
    """Verify every table in a store (or those named): chain, then derived rows."""
    report = VerifyReport()
    ids = list(table_ids) if table_ids is not None else store.table_ids()
    for table_id in ids:
        table, _expected, problem = verify_table(store, table_id, replay=replay)
        report.tables.append(table)
        if progress is not None:
            progress(table)
        if problem is not None:
            report.problem = problem
            return report
    return report
