"""Entry points the rest of floorctl calls."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.events import ScenarioError, parse_event
from controller.store.checkpoint import without_key
from controller.store.db import StoreError
from controller.store.fold import event_body, same_setup, setup_body
from controller.store.recorder import Recorder
from controller.store.repository import Store

if TYPE_CHECKING:
    from controller.store.keys import SigningKey


def record_scenario(
    db_url: str, events: Sequence[dict[str, Any]], *, signing_key: Path | str | None = None
) -> dict[str, Any]:
    """Record a scenario (the table line first) into a store as a live table would.

    Each event is chained, applied, and committed with its flags and settlements. Returns
    the replay document (what ``floorctl replay --json`` prints). If the store already holds
    this table, its stored events must be the start of the scenario; the rest are recorded
    (so an interrupted recording can be run again).
    Raises ``ScenarioError`` for a malformed line (nothing is stored) and
    :class:`StoreError` if the store cannot take the events. With ``signing_key`` (a
    ``table.key``) the log is signed as a live table signs it: a head at each round's end.
    """
    if not events:
        raise ScenarioError(1, "type", "no events: the table line is missing")
    _setup, setup = setup_body(events[0])
    # A scenario exported from a store names that store's checkpoints: they mean nothing here.
    bodies = [
        event_body(without_key(obj) if isinstance(obj, dict) else obj, line)[1]
        for line, obj in enumerate(events[1:], start=2)
    ]
    table_id = str(setup["table_id"])
    key = None
    if signing_key is not None:
        from controller.store.keys import load_signing_key

        key = load_signing_key(signing_key)  # before the store is touched
    from controller.store.lock import lock_store

    locks = [lock_store(db_url, table_id)]  # no live table may be recording on this store
    try:
        with Store.open(db_url) as store:
            locks.append(lock_store(db_url, table_id, store))
            return _record(store, table_id, setup, bodies, key)
    finally:
        for lock in reversed(locks):
            if lock is not None:
                lock.release()


def _record(
    store: Store,
    table_id: str,
    setup: dict[str, Any],
    bodies: list[dict[str, Any]],
    key: SigningKey | None,
) -> dict[str, Any]:
    """Record ``bodies`` after what the store holds of them (the lock on the store held)."""
    stored = store.records(table_id)
    if stored:
        if not same_setup(stored[0].event(), setup):
            raise StoreError(
                f"{store.name}: table {table_id} is already stored with another table "
                f"line ({stored[0].body})"
            )
        for record in stored[1:]:
            index = record.seq - 1
            if index >= len(bodies) or without_key(record.event()) != bodies[index]:
                raise StoreError(
                    f"{store.name}: table {table_id} already holds event {record.seq} "
                    f"({record.body}), which is not line {record.seq + 1} of this scenario"
                )
    # No spool: this is not a live table, and a store that refuses an event stops it.
    # Every round kept (keep_rounds=None): the replay document lists them all.
    recorder = Recorder.open(
        store, setup, spool=None, retry_every=None, keep_rounds=None, signing_key=key
    )
    try:
        for seq in range(recorder.seq + 1, len(bodies) + 1):
            recorder.record(bodies[seq - 1])
        return recorder.table.result()
    finally:
        recorder.close()


__all__ = ["ScenarioError", "StoreError", "parse_event", "record_scenario"]
