"""The recorder's hot path: one held database connection, one transaction per commit.

A :class:`Writer` checks one connection out of the store's pool and keeps it: no checkout,
no pre-ping and no SQLAlchemy statement building per event. :meth:`Writer.commit` writes
events *with every row derived from them* (shoes, rounds, flags, settlements, and the
``tables`` row with the table line) in a single transaction, so a kill at any instant leaves
either all of an event or none of it. A connection that fails is dropped and a new one is
opened on the next call.

Errors come out as SQLAlchemy's (``IntegrityError``, ``OperationalError``, ...), as from the
rest of the store, so :func:`controller.store.db.is_transient` tells "not now" from "never".
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from controller.store.canonical import ChainRecord
from controller.store.db import StoreUnavailable, sqlite_path
from controller.store.repository import Derived, Store
from controller.store.schema import (
    CHECKPOINTS,
    EVENTS,
    FLAGS,
    ROUNDS,
    SETTLEMENTS,
    SHOES,
    TABLES,
)

# Free space a SQLite store's disk must have before the store counts as back after a fault.
PROBE_FREE_BYTES = 1 << 20

_DERIVED = (
    ("shoes", SHOES),
    ("rounds", ROUNDS),
    ("flags", FLAGS),
    ("settlements", SETTLEMENTS),
    ("checkpoints", CHECKPOINTS),
)


def _insert(table: sa.Table, mark: str) -> tuple[str, tuple[str, ...]]:
    cols = tuple(c.name for c in table.columns)
    return (
        f"INSERT INTO {table.name} ({', '.join(cols)}) VALUES ({', '.join([mark] * len(cols))})",
        cols,
    )


class Writer:
    """One connection to a store, held for the writer's life (not thread-safe: the recorder's
    lock serialises it)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.sqlite = store.dialect == "sqlite"
        mark = "?" if self.sqlite else "%s"
        self._events_sql, _ = _insert(EVENTS, mark)
        self._table_sql, self._table_cols = _insert(TABLES, mark)
        self._derived_sql = [(name, *_insert(table, mark)) for name, table in _DERIVED]
        self._conn: Any = None  # SQLAlchemy's pooled connection proxy
        self._raw: Any = None  # the driver's own connection
        self._cursor: Any = None

    def _connect(self) -> None:
        if self._raw is not None:
            return
        try:
            conn = self.store.engine.raw_connection()
        except Exception as exc:  # the pool lets the driver's own errors through
            raise self.store.wrap_error("connect", exc) from exc
        self._conn = conn
        self._raw = conn.driver_connection
        self._cursor = self._raw.cursor()

    def commit(
        self,
        items: Sequence[tuple[ChainRecord, Derived]],
        table_row: dict[str, Any] | None = None,
    ) -> None:
        """Insert events and their derived rows (and the table's row) in one transaction."""
        if not items:
            return
        self._connect()
        cur = self._cursor
        statement = self._events_sql
        try:
            if self.sqlite:
                cur.execute("BEGIN")
            if table_row is not None:
                statement = self._table_sql
                cur.execute(statement, tuple(table_row[c] for c in self._table_cols))
            statement = self._events_sql
            if len(items) == 1:
                cur.execute(statement, items[0][0])
            else:
                cur.executemany(statement, [record for record, _ in items])
            for name, sql, cols in self._derived_sql:
                rows = [row for _, derived in items for row in getattr(derived, name)]
                if rows:
                    statement = sql
                    if len(rows) == 1:
                        cur.execute(sql, tuple(rows[0][c] for c in cols))
                    else:
                        cur.executemany(sql, [tuple(r[c] for c in cols) for r in rows])
            if self.sqlite:
                cur.execute("COMMIT")
            else:
                self._raw.commit()
        except Exception as exc:
            self._failed()
            raise self.store.wrap_error(statement, exc) from exc

    def probe(self) -> None:
        """Raise unless the database would take a write now (after a fault: is it back?)."""
        self._connect()
        cur = self._cursor
        try:
            if self.sqlite:
                path = sqlite_path(self.store.url)
                if path is not None:
                    stat = os.statvfs(path.parent)
                    free = stat.f_bavail * stat.f_frsize
                    if free < PROBE_FREE_BYTES:
                        raise StoreUnavailable(
                            f"{self.store.name}: database or disk is full "
                            f"({free // 1024} KiB free on {path.parent})"
                        )
                cur.execute("BEGIN IMMEDIATE")
                cur.execute("ROLLBACK")
            else:
                cur.execute("SELECT 1")
                cur.fetchall()
                self._raw.rollback()
        except StoreUnavailable:
            raise
        except Exception as exc:
            self._failed()
            raise self.store.wrap_error("probe", exc) from exc

    def _failed(self) -> None:
        """Roll back; a connection that is no longer sound is dropped."""
        raw = self._raw
        if raw is None:
            return
        try:
            if self.sqlite:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                return
            raw.rollback()
            if not raw.closed and not raw.broken:
                return
        except Exception:
            pass
        self._drop()

    def _drop(self) -> None:
        conn, self._conn, self._raw, self._cursor = self._conn, None, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.invalidate()

    def close(self) -> None:
        conn, self._conn, self._raw, self._cursor = self._conn, None, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
