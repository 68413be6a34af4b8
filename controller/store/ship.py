"""``floorctl ship``: copy each table's log from the table PC's store to the floor database.

Each table's events go over in sequence order, in batches; a batch is one transaction on the
floor database and carries the derived rows (rounds, settlements, flags, shoes) of its events,
as stored and verified against a replay, so the floor copy is consistent after every batch.
Rows are keyed by (table, sequence): a row already on the floor is left as it is, so shipping
twice copies nothing twice, and a cut
(network, power, kill) is resumed by shipping again. A source chain that does not verify, or a
floor copy that has diverged from the source, is refused.

The table's signed heads go over with its events (see :mod:`controller.store.witness`); when
the floor's registry holds the table's key, a source whose heads it does not check is refused,
and only the events under the last signed head are shipped.

What is checked is what is not yet on the floor (:func:`verify_unshipped`,
:func:`~controller.store.witness.ship_limit`): from the newest checkpoint the floor's copy
names, and from the floor's last witnessed head, so a run costs the same whatever the table's
age; the first ship of a table, or one with no usable checkpoint, checks the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import structlog

from controller.store import checkpoint
from controller.store.chain import Problem
from controller.store.db import StoreError
from controller.store.repository import Store
from controller.store.schema import (
    CHECKPOINTS,
    EVENTS,
    FLAGS,
    ROUNDS,
    SETTLEMENTS,
    SHOES,
    TABLES,
)
from controller.store.verify import TableReport, verify_table
from controller.store.witness import SignatureRefused, copy_heads, ship_limit

log = structlog.get_logger("floorctl.store")


def verify_unshipped(
    src: Store, table_id: str, floor_seq: int
) -> tuple[TableReport, Problem | None]:
    """Verify what ``ship`` has yet to copy of a table whose events up to ``floor_seq`` the
    floor holds (-1: none), the source's event there having the floor's hash.

    From the newest trustworthy checkpoint named by an event the floor holds
    (:func:`~controller.store.checkpoint.restore_latest`): the chain from it to the head (it
    reaches the floor's hash at ``floor_seq``, so the state is the one the floor's copy
    names), the tail's checkpoints, and its derived rows against a replay from that state.
    So a ship reads its new events and at most about one checkpoint interval before them.
    The whole table is verified when the floor holds nothing of it or no such checkpoint
    is stored.
    """
    since = None
    if floor_seq > 0:
        setup = src.records(table_id, upto=0)
        if setup:
            since = checkpoint.restore_latest(src, table_id, setup[0].event(), below=floor_seq + 1)
    return verify_table(src, table_id, since=since)


class ShipRefused(StoreError):
    """The source does not verify, or the floor copy has parted from it."""

    def __init__(self, message: str, problem: Problem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


@dataclass
class ShipReport:
    copied: dict[str, int] = field(default_factory=dict)  # table -> events copied this time
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)  # table -> floor head
    signed: dict[str, int] = field(default_factory=dict)  # table -> signed heads copied
    unchecked: list[str] = field(default_factory=list)  # tables with no key on the floor


def ship(
    src: Store,
    dst: Store,
    *,
    table_ids: Iterable[str] | None = None,
    batch_size: int = 1000,
    after_batch: Callable[[str, int], None] | None = None,
) -> ShipReport:
    """Copy events (and their derived rows) not yet on ``dst``; returns what was copied.

    ``after_batch(table, last_seq)`` is called after each committed batch. The source is
    read in one snapshot (:meth:`Store.snapshot`): a table recording meanwhile ships as it
    stood when the ship began.
    """
    with src.snapshot() as snap:
        return _ship(snap, dst, table_ids, batch_size, after_batch)


def _ship(
    src: Store,
    dst: Store,
    table_ids: Iterable[str] | None,
    batch_size: int,
    after_batch: Callable[[str, int], None] | None,
) -> ShipReport:
    report = ShipReport()
    ids = list(table_ids) if table_ids is not None else src.table_ids()
    for table_id in ids:
        floor = dst.head(table_id)
        start = -1
        if floor is not None:
            seq, digest = floor
            mine = src.records(table_id, after=seq - 1, upto=seq)
            if not mine or mine[0].hash != digest:
                raise ShipRefused(
                    f"{dst.name} holds table {table_id} up to event {seq} with hash "
                    f"{digest[:16]}…, which {src.name} "
                    + ("does not reach" if not mine else f"has as {mine[0].hash[:16]}…")
                    + ": the copies have parted; nothing shipped"
                )
            start = seq
        # A recorder may be writing this table now: the snapshot holds each event with all its
        # derived rows (one transaction) or neither.
        checked, problem = verify_unshipped(src, table_id, start)
        if problem is not None:
            raise ShipRefused(
                f"{src.name} does not verify, nothing of table {table_id} shipped: {problem}",
                problem,
            )
        src_head = checked.head_seq, checked.head_hash
        try:
            limit = ship_limit(src, dst, table_id, floor_seq=None if floor is None else start)
        except SignatureRefused as exc:
            raise ShipRefused(f"nothing of table {table_id} shipped: {exc}", exc.problem) from exc
        if limit is None:
            report.unchecked.append(table_id)
        elif limit[0] < src_head[0]:
            src_head = limit
        copied = 0
        while start < src_head[0]:
            batch = src.records(table_id, after=start, upto=min(start + batch_size, src_head[0]))
            if not batch:
                break
            first, last = batch[0].seq, batch[-1].seq
            derived = src.derived(table_id, first=first, last=last, checkpoints=True)
            with dst.engine.begin() as conn:
                if first == 0:
                    row = src.table_row(table_id)
                    if row is not None:
                        conn.execute(dst.insert_ignore_statement(TABLES), [row])
                conn.execute(dst.insert_ignore_statement(EVENTS), [r.to_row() for r in batch])
                for table, rows in (
                    (SHOES, derived.shoes),
                    (ROUNDS, derived.rounds),
                    (FLAGS, derived.flags),
                    (SETTLEMENTS, derived.settlements),
                    (CHECKPOINTS, derived.checkpoints),
                ):
                    if rows:
                        conn.execute(dst.insert_ignore_statement(table), rows)
            copied += len(batch)
            start = last
            if after_batch is not None:
                after_batch(table_id, last)
        try:
            report.signed[table_id] = copy_heads(src, dst, table_id, src_head[0])
        except StoreError as exc:
            raise ShipRefused(str(exc)) from exc
        floor = dst.head(table_id)
        if floor != src_head:
            raise ShipRefused(
                f"{dst.name}: table {table_id} ends at {floor} after shipping, not {src_head}"
            )
        report.copied[table_id] = copied
        report.heads[table_id] = src_head
        _keep_nodes(dst, table_id, src_head[0] + 1)
    return report


def _keep_nodes(dst: Store, table_id: str, size: int) -> None:
    """The floor keeps the subtree roots of what it holds too, so a proof made there reads
    O(log n) rows (:mod:`controller.store.tree`). A cache: a failure is logged, never a
    refused ship."""
    from sqlalchemy.exc import DBAPIError

    from controller.store.tree import ensure_nodes

    try:
        ensure_nodes(dst, table_id, size)
    except (StoreError, DBAPIError, ValueError) as exc:
        log.warning("merkle subtree roots not kept", table=table_id, error=str(exc)[:200])
