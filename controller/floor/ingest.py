"""``floorctl floor ingest``: take into the floor's log what each table's key signed.

On a floor prepared with ``floorctl floor init``, a table ships (or records) as a role of its
own into the floor's *inbox*, a schema beside the log holding the same tables, where row-level
security lets it read and add only its own table's rows. Nothing in the inbox is the floor's
record: no page, report or ``verify`` of the floor reads it.

The ingest moves each table's events from its inbox to the log, as ``ship`` moves them from a
table PC, with every check ``ship`` makes: the chain from the floor's last event, every
derived row against a replay, and every head against the key registered for that table —
only the events under the last head that key signed go over. A table with no registered key,
or whose inbox does not check, is refused and its inbox left as it is (quarantined: the floor
shows nothing of it, and says why in the ingest's log); the other tables go on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
import structlog
from sqlalchemy.exc import DBAPIError

from controller.store.db import PG_CONNECT_ARGS, StoreError, describe, normalize_url, safe_url
from controller.store.heads import last_head
from controller.store.repository import Store
from controller.store.roles import inbox_of
from controller.store.ship import ship
from controller.store.witness import registered_key

log = structlog.get_logger("floorctl.floor")


@dataclass
class IngestReport:
    taken: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> (events, head)
    refused: dict[str, str] = field(default_factory=dict)  # table -> why


def open_inbox(url: str) -> tuple[Store, Store]:
    """The floor's log and its inbox, both as the role ``url`` names."""
    log_store = Store.open(url, create=False)
    try:
        if log_store.dialect != "postgresql":
            raise StoreError(f"database {safe_url(url)}: the floor is a PostgreSQL database")
        with log_store.engine.connect() as conn:
            inbox = inbox_of(conn)
        if inbox is None:
            raise StoreError(
                f"database {safe_url(url)} has no inbox: prepare it with floorctl floor init"
            )
    except Exception:
        log_store.close()
        raise
    engine = sa.create_engine(
        normalize_url(url),
        pool_pre_ping=True,
        connect_args={**PG_CONNECT_ARGS, "options": f"-csearch_path={inbox}"},
    )
    return log_store, Store(engine, url)


def ingest(url: str, tables: list[str] | None = None) -> IngestReport:
    """One pass over every table's inbox (or ``tables``')."""
    floor, inbox = open_inbox(url)
    try:
        return ingest_pass(floor, inbox, tables)
    finally:
        floor.close()
        inbox.close()


def ingest_pass(floor: Store, inbox: Store, tables: list[str] | None = None) -> IngestReport:
    """One pass over the open inbox (see :func:`ingest`)."""
    report = IngestReport()
    for table_id in tables if tables is not None else inbox.table_ids():
        try:
            if registered_key(floor, table_id) is None:
                raise StoreError("no key is registered for it (floorctl floor register-key)")
            if _nothing_new(inbox, floor, table_id):
                held = floor.head(table_id)
                report.taken[table_id] = (0, -1 if held is None else held[0])
                continue
            done = ship(inbox, floor, table_ids=[table_id])
        except (StoreError, DBAPIError) as exc:
            why = describe(exc) if isinstance(exc, DBAPIError) else str(exc)
            report.refused[table_id] = why
            log.error("inbox refused: nothing of it taken in", table=table_id, why=why)
            note(floor, table_id, f"refused: {why}")
            continue
        count, head = done.copied.get(table_id, 0), done.heads[table_id][0]
        report.taken[table_id] = (count, head)
        if count:
            log.info("taken in", table=table_id, events=count, upto=head)
        note(floor, table_id, "ok")
    return report


def note(floor: Store, table_id: str, outcome: str) -> None:
    """Add to the ingest log what became of a table's inbox, when that changed."""
    try:
        with floor.engine.begin() as conn:
            if not conn.exec_driver_sql("SELECT to_regclass('ingest_log') IS NOT NULL").scalar():
                return
            last = conn.exec_driver_sql(
                "SELECT outcome FROM ingest_log WHERE table_id = %(t)s ORDER BY id DESC LIMIT 1",
                {"t": table_id},
            ).scalar()
            if last == outcome or (last is None and outcome == "ok"):
                return
            held = floor.head(table_id)
            conn.exec_driver_sql(
                "INSERT INTO ingest_log (table_id, outcome, upto) VALUES (%(t)s, %(o)s, %(u)s)",
                {"t": table_id, "o": outcome[:2000], "u": None if held is None else held[0]},
            )
    except DBAPIError as exc:  # the log is for the floor's pages: the ingest goes on
        log.error("could not note the ingest's outcome", table=table_id, error=describe(exc))


def refused_inboxes(conn: Any) -> list[dict[str, Any]]:
    """The tables whose inbox the ingest refuses now: table, since, why (none on a floor
    without an ingest log)."""
    if not conn.exec_driver_sql("SELECT to_regclass('ingest_log') IS NOT NULL").scalar():
        return []
    rows = conn.exec_driver_sql(
        "SELECT DISTINCT ON (table_id) table_id, at, outcome FROM ingest_log "
        "ORDER BY table_id, id DESC"
    ).all()
    return [
        {"table": str(t), "since": at, "why": str(o).removeprefix("refused: ")}
        for t, at, o in rows
        if str(o).startswith("refused")
    ]


def _nothing_new(inbox: Store, floor: Store, table_id: str) -> bool:
    """Whether the floor already holds the table's inbox up to its last event and head (two
    index probes a table: an idle pass reads nothing else)."""
    theirs, ours = inbox.head(table_id), floor.head(table_id)
    if theirs is None or theirs != ours:
        return False
    a, b = last_head(inbox, table_id), last_head(floor, table_id)
    return a is not None and b is not None and a.seq == b.seq


def follow(url: str, every: float, tables: list[str] | None = None) -> None:
    """Ingest every ``every`` seconds until stopped; a failed pass is logged and retried."""
    floor, inbox = open_inbox(url)
    try:
        while True:
            try:
                ingest_pass(floor, inbox, tables)
            except (StoreError, DBAPIError) as exc:
                log.error("ingest failed", error=describe(exc))
            time.sleep(every)
    finally:
        floor.close()
        inbox.close()
