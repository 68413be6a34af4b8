"""``floorctl verify``: prove a store (or an export of one) has not been changed.

A table verifies when its hash chain is intact (see :mod:`controller.store.chain`) and the
derived rows stored beside it (shoes, rounds, flags, settlements) are exactly what a replay
of its events through the round engine gives. An event and its derived rows are committed in
one transaction, so a row missing, changed or added is always tampering. The first problem
found is named: the table, the event's sequence number, and what was done.

Reading a store is streamed, batch by batch: the chain of each batch is checked straight
from the columns (no record objects), the derived rows are compared a batch at a time, and
nothing of the table is kept in memory but the engine's own state. At the first batch that
does not check out, the record-by-record checker of :mod:`controller.store.chain` takes over
to say exactly what was done.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from controller.events import ScenarioError
from controller.store import checkpoint
from controller.store.canonical import GENESIS, ChainRecord, json_string
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
    """Check a table's chain and replay its sound events; what the events give.

    (For records already in hand, as in an export; a store is read by :func:`verify_table`.)
    """
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


class ChainWalk:
    """A table's chain checked from the store, batch by batch.

    :meth:`batches` yields the sound events of each batch as ``(seq, body)`` pairs; once it
    is exhausted, ``events``, ``head_hash`` and ``problem`` say how far the chain held.
    """

    def __init__(
        self,
        store: Store,
        table_id: str,
        *,
        bodies: bool = True,
        start: tuple[int, str] = (0, GENESIS),
    ) -> None:
        self.store = store
        self.table_id = table_id
        self.bodies = bodies  # False: the batches yielded are empty (a chain-only check)
        # Where the walk begins: the sequence number expected next and the hash it chains to
        # (a trusted record's, as a checkpoint's: see verify_table's ``since``).
        self.start = start
        self.events = start[0]
        self.head_hash = start[1]
        self.problem: Problem | None = None

    def batches(self) -> Iterator[list[tuple[int, str]]]:
        expected, prev = self.start
        while True:
            for rows in _quiet(self.store.chain_rows(self.table_id, after=expected - 1)):
                with _no_gc():
                    ok = self._sound(rows, expected, prev)
                if ok:
                    expected, prev = expected + len(rows), rows[-1][2]
                    self.events, self.head_hash = expected, prev
                    yield [(row[0], row[5]) for row in rows] if self.bodies else []
                    continue
                # Corrections, odd characters, or something wrong: record by record, then
                # the fast path again from where that left off.
                sound: list[ChainRecord] = []
                before = self.store.records(self.table_id, after=expected - 2, upto=expected - 1)
                last = max(int(rows[-1][0]), expected)
                count, prev, problem = check_chain(
                    self.table_id,
                    self.store.iter_records(self.table_id, after=expected - 1),
                    sound.append,
                    start=(expected, prev, before[-1] if before else None),
                    until=last,
                )
                expected = count
                self.events, self.head_hash = count, prev
                if sound:
                    yield [(r.seq, r.body) for r in sound]
                if problem is not None:
                    self.problem = problem
                    return
                if not sound or sound[-1].seq < last:
                    return  # the table ended
                break
            else:
                return

    def _sound(
        self, rows: list[tuple[int, str, str, str, int | None, str]], expected: int, prev: str
    ) -> bool:
        """Whether a batch is sound, checked from its columns: each row's canonical record,
        built as :func:`~controller.store.canonical.record_text` builds it, hashes to its
        stored hash; sequence numbers run on; each row chains to the one before. A batch
        with a correction or a time stamp to escape is left to the record-by-record path."""
        seqs, prevs, hashes, ats, corrects, bodies = zip(*rows, strict=True)
        n = len(rows)
        stamps = "".join(ats)
        if not (
            seqs == tuple(range(expected, expected + n))
            and prevs[0] == prev
            and prevs[1:] == hashes[:-1]
            and corrects.count(None) == n
            and stamps.isprintable()
            and '"' not in stamps
            and "\\" not in stamps
        ):
            return False
        table = json_string(self.table_id)
        sha256 = hashlib.sha256
        return [
            sha256(
                f'{{"corrects":null,"event":{b},"prev":"{p}","recorded_at":"{a}",'
                f'"seq":{s},"table":{table}}}'.encode()
            ).hexdigest()
            for s, p, a, b in zip(seqs, prevs, ats, bodies, strict=True)
        ] == list(hashes)


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """No cyclic garbage collection while a batch's rows are checked: the check makes no
    cycles, and the collector would walk the batch's tens of thousands of row tuples again
    and again (it doubled the time of a chain check)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _quiet(batches: Iterator[list[Any]]) -> Iterator[list[Any]]:
    """Each batch read from the database with the collector off (see :func:`_no_gc`)."""
    while True:
        with _no_gc():
            rows = next(batches, None)
        if rows is None:
            return
        yield rows


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
    table_id: str, expected: Derived, stored: Derived, head_seq: int
) -> Problem | None:
    """The first (by event) difference between stored derived rows and a replay's."""
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


def _first(*problems: Problem | None) -> Problem | None:
    found = [p for p in problems if p is not None]
    return min(found, key=lambda p: p.seq) if found else None


def verify_table(
    store: Store,
    table_id: str,
    *,
    replay: bool = True,
    full: bool = False,
    since: tuple[Fold, ChainRecord] | None = None,
) -> tuple[TableReport, Problem | None]:
    """Verify one table: its chain and its checkpoints (each named by the event after it,
    holding the state its digest says), then (with ``replay``) its derived rows, a batch at
    a time, and (with ``full``) each checkpoint's state against the replay's at its sequence
    number. Returns the report and the first problem.

    ``since``: a trusted checkpoint's fold and the stored event it ends with (as
    :func:`~controller.store.checkpoint.restore_latest` gives them): only the table's tail
    after it is checked, from that state (``ship``'s check of what it has not shipped yet).
    The report's ``events`` then counts the table's records up to its head, as a whole
    check's does, though only the tail was read.
    """
    replay = replay or full
    fold: Fold | None = None
    if since is None:
        walk = ChainWalk(store, table_id)
        audit = checkpoint.Audit(store, table_id)
    else:
        fold, before = since
        walk = ChainWalk(store, table_id, start=(before.seq + 1, before.hash))
        audit = checkpoint.Audit(store, table_id, after=before.seq - 1)
    problem: Problem | None = None
    loads = json.loads
    for batch in walk.batches():
        found: Problem | None = None
        for seq, body in batch:
            found = audit.event(seq, body)
            if found is not None:
                break
        if not replay:
            if found is not None:
                problem = found
                break
            continue
        expected = Derived()
        try:
            for seq, body in batch:
                if fold is None:
                    fold = Fold(table_id, loads(body), keep_rounds=checkpoint.KEEP_ROUNDS)
                    continue
                expected.extend(fold.apply_text(seq, body)[2])
                if full and audit.wants(seq) and (differs := audit.compare(fold)) is not None:
                    found = _first(found, differs)
                    break
        except (ScenarioError, ValueError) as exc:
            problem = _first(
                found, Problem(table_id, seq, "malformed", f"cannot be replayed: {exc}")
            )
            break
        first, last = batch[0][0], batch[-1][0]
        stored = store.derived(table_id, first=first, last=last)
        problem = _first(found, compare_derived(table_id, expected, stored, last))
        if problem is not None:
            break
    table = TableReport(table_id, walk.events, walk.events - 1, walk.head_hash)
    if walk.problem is not None:
        return table, _first(walk.problem, problem)
    if problem is None and table.events == 0:
        problem = Problem(table_id, 0, "missing", "the store holds no events for this table")
    if problem is None:
        problem = audit.finish(table.head_seq)
    if problem is None and replay:
        beyond = store.derived(table_id, first=table.head_seq + 1)
        problem = compare_derived(table_id, Derived(), beyond, table.head_seq)
    return table, problem


def verify_store(
    store: Store,
    table_ids: Iterable[str] | None = None,
    *,
    replay: bool = True,
    full: bool = False,
    progress: Callable[[TableReport], None] | None = None,
) -> VerifyReport:
    """Verify every table in a store (or those named): chain and checkpoints, then derived
    rows (``replay``), and with ``full`` every checkpoint against the replay; all of it in
    one snapshot of the store (:meth:`Store.snapshot`), so rows a recorder commits meanwhile
    are not seen at all rather than seen in part."""
    report = VerifyReport()
    with store.snapshot() as snap:  # one moment of a store still being written (see Store)
        ids = list(table_ids) if table_ids is not None else snap.table_ids()
        for table_id in ids:
            table, problem = verify_table(snap, table_id, replay=replay, full=full)
            report.tables.append(table)
            if progress is not None:
                progress(table)
            if problem is not None:
                report.problem = problem
                return report
    return report
