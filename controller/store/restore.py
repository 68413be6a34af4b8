"""Rebuilding a table's state from its store: the one way a restart and a recorder's
rebuild after a fault get it.

The table starts from its newest checkpoint bound into the chain (see
:mod:`controller.store.checkpoint`), or from the table line when it has none, and the stored
events after it are replayed (streamed, not held in memory), their chain checked as they go.
"""

from __future__ import annotations

import json
from typing import Any

from controller.events import ScenarioError
from controller.store import checkpoint
from controller.store.canonical import GENESIS, ChainRecord
from controller.store.chain import check_chain
from controller.store.db import NotThisTable, StoreError, describe
from controller.store.fold import Fold, same_setup
from controller.store.repository import Store


def replay_table(
    store: Store,
    table_id: str,
    body: dict[str, Any] | None,
    spooled: list[ChainRecord],
    *,
    keep_rounds: int | None = None,
) -> tuple[Fold, tuple[int, str]]:
    """The table rebuilt from its stored events, and its head (sequence, hash).

    Checks the chain (from the checkpoint used, if any), that a given table line ``body``
    matches the stored one, and that the ``spooled`` records agree with what is stored where
    they overlap. With no stored events, the table starts from the spool's table line, or
    from ``body``. ``keep_rounds``: the rounds the engine keeps (None: all, and then no
    checkpoint is used, since one holds only the last few). Raises StoreError.
    """
    folds: list[Fold] = []
    spool_from = spooled[0].seq if spooled else None
    spool_hashes = {r.seq: r.hash for r in spooled}
    start: tuple[int, str, ChainRecord | None] = (0, GENESIS, None)

    known: set[int] | None = None  # the checkpoints stored, when a restart looks for them

    def apply(record: ChainRecord) -> None:
        if known is not None and record.seq - 1 not in known and checkpoint.named(record.body):
            checkpoint.log.warning(
                "an event names a checkpoint the store lacks: run floorctl verify",
                table=table_id,
                named_by=record.seq,
                checkpoint=record.seq - 1,
                store=store.name,
            )
        overlap = spool_from is not None and record.seq >= spool_from
        if overlap and spool_hashes.get(record.seq, record.hash) != record.hash:
            raise StoreError(f"spool: event {record.seq} differs from the stored one")
        if record.seq == 0:
            stored = record.event()
            if body is not None and not same_setup(stored, body):
                raise NotThisTable(
                    f"{store.name}: table {table_id} is stored with the table line "
                    f"{record.body}, not {json.dumps(body, default=str)}"
                )
            folds.append(Fold(table_id, stored, keep_rounds=keep_rounds))
            return
        try:
            folds[0].apply(record.seq, record.event())
        except (ScenarioError, ValueError) as exc:
            raise StoreError(
                f"{store.name}: table {table_id} event {record.seq} cannot be replayed: {exc}"
            ) from exc

    try:
        if keep_rounds is not None:
            known = {seq for seq, _digest in checkpoint.stored(store, table_id)}
            found = _checkpoint(store, table_id, body, keep_rounds, spool_from)
            if found is not None:
                fold, before = found
                folds.append(fold)
                start = (before.seq + 1, before.hash, before)
        count, head_hash, problem = check_chain(
            table_id, store.iter_records(table_id, after=start[0] - 1), apply, start=start
        )
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"{store.name}: cannot read table {table_id}: {describe(exc)}") from exc
    if problem is not None:
        raise StoreError(f"{store.name}: the audit log does not verify: {problem}")
    if folds:
        return folds[0], (count - 1, head_hash)
    if spooled and spooled[0].seq == 0:
        return Fold(table_id, spooled[0].event(), keep_rounds=keep_rounds), (-1, GENESIS)
    if body is not None:
        return Fold(table_id, body, keep_rounds=keep_rounds), (-1, GENESIS)
    raise StoreError(f"{store.name}: table {table_id} has no events in the store")


def _checkpoint(
    store: Store,
    table_id: str,
    body: dict[str, Any] | None,
    keep_rounds: int,
    spool_from: int | None,
) -> tuple[Fold, ChainRecord] | None:
    """The newest checkpoint to start from (named before the spool's first event, so every
    event the spool overlaps is replayed and compared), if the stored table line is ``body``'s."""
    line = store.records(table_id, upto=0)
    if not line or (body is not None and not same_setup(line[0].event(), body)):
        return None  # no table yet, or another table line: the replay says which
    return checkpoint.restore_latest(
        store, table_id, line[0].event(), keep_rounds=keep_rounds, below=spool_from
    )
