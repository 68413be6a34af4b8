"""The append-only repository: one class over a SQLite or PostgreSQL database.

Events go in with the rows derived from them (shoes, rounds, flags, settlements), one
transaction for both, through a :class:`~controller.store.writer.Writer` (the recorder holds
one) or :meth:`Store.append`; nothing is ever updated or deleted.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from controller.store.canonical import ChainRecord, canonical_json
from controller.store.db import StoreError, open_engine, safe_url
from controller.store.schema import (
    CHECKPOINTS,
    EVENTS,
    FLAGS,
    ROUNDS,
    SETTLEMENTS,
    SHOES,
    TABLES,
)

if TYPE_CHECKING:
    from controller.store.writer import Writer

_EVENT_COLUMNS = ("table_id", "seq", "type", "body", "recorded_at", "corrects", "prev_hash", "hash")


@dataclass
class Derived:
    """Rows that follow from a table's events: what a replay of them gives.

    Each list holds plain dicts with the columns of its table.
    """

    shoes: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    settlements: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)  # committed with seq + 1

    def extend(self, other: Derived) -> None:
        if other is NO_ROWS:
            return
        self.shoes.extend(other.shoes)
        self.rounds.extend(other.rounds)
        self.flags.extend(other.flags)
        self.settlements.extend(other.settlements)
        self.checkpoints.extend(other.checkpoints)

    def __bool__(self) -> bool:
        return bool(self.shoes or self.rounds or self.flags or self.settlements or self.checkpoints)

    def clear(self) -> None:
        self.shoes.clear()
        self.rounds.clear()
        self.flags.clear()
        self.settlements.clear()
        self.checkpoints.clear()


NO_ROWS = Derived()  # an event that gave no derived rows (shared, so never to be filled)


class Store:
    """An audit store database. ``Store.open(url)`` creates or upgrades its schema."""

    def __init__(self, engine: Engine, url: str, *, pinned: sa.Connection | None = None) -> None:
        self.engine = engine
        self.url = url
        # A snapshot's connection (see :meth:`snapshot`): every read goes through it.
        self._pinned = pinned

    @classmethod
    def open(cls, url: str, *, busy_timeout_ms: int | None = None, create: bool = True) -> Store:
        """Open (with ``create``, create if need be) the store at ``url``."""
        if busy_timeout_ms is None:
            engine = open_engine(url, create=create)
        else:
            engine = open_engine(url, busy_timeout_ms=busy_timeout_ms, create=create)
        return cls(engine, url)

    def close(self) -> None:
        if self._pinned is None:  # a snapshot's engine belongs to the store it was taken of
            self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return safe_url(self.url)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def in_snapshot(self) -> bool:
        return self._pinned is not None

    @contextlib.contextmanager
    def connection(self) -> Iterator[sa.Connection]:
        """A connection to read with: the snapshot's own inside :meth:`snapshot`, else one
        from the pool for this read alone."""
        if self._pinned is not None:
            yield self._pinned
            return
        with self.engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Store]:
        """This store as it stands now, for as long as the block runs: a view whose every
        read sees the same committed state, whatever is written meanwhile.

        One read transaction held open across all the reads: on SQLite (WAL journal) a
        ``BEGIN`` whose first read fixes the snapshot, on PostgreSQL ``REPEATABLE READ, READ
        ONLY``. The snapshot is fixed on entry (a first read is made at once), so a snapshot
        taken after another sees at least as much. Inside a snapshot, ``snapshot()`` gives the
        same view. Readers (``verify``, ``export``, ``ship``'s source, ``prove``) read so:
        an event and its derived rows are committed together, and a reader that read them at
        two moments would take a row written in between for tampering.
        """
        if self._pinned is not None:
            yield self
            return
        conn = self.engine.connect()
        try:
            if self.dialect == "postgresql":
                conn = conn.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
            with conn.begin():
                conn.exec_driver_sql("SELECT count(*) FROM (SELECT 1 FROM events LIMIT 1) AS t")
                yield Store(self.engine, self.url, pinned=conn)
                # a read-only transaction: leaving the block ends it (a rollback on close)
        finally:
            conn.close()

    # -- events -------------------------------------------------------------------------

    def writer(self) -> Writer:
        """A writer holding one connection of this store (the recorder keeps one)."""
        from controller.store.writer import Writer

        return Writer(self)

    def append(
        self,
        records: Sequence[ChainRecord],
        table_row: dict[str, Any] | None = None,
        derived: Derived | None = None,
    ) -> None:
        """Insert records, the rows derived from them and (with the table line) the table's
        row, all in one transaction."""
        if not records:
            return
        items = [(r, NO_ROWS) for r in records]
        if derived is not None:
            items[-1] = (records[-1], derived)
        writer = self.writer()
        try:
            writer.commit(items, table_row)
        finally:
            writer.close()

    def wrap_error(self, statement: str, exc: Exception) -> Exception:
        """A driver's exception as SQLAlchemy's matching one (PEP 249 names)."""
        if isinstance(exc, sa.exc.SQLAlchemyError):
            return exc
        dbapi = self.engine.dialect.loaded_dbapi
        for name, wrapper in (
            ("IntegrityError", sa.exc.IntegrityError),
            ("OperationalError", sa.exc.OperationalError),
            ("InterfaceError", sa.exc.InterfaceError),
            ("DatabaseError", sa.exc.DatabaseError),
        ):
            if isinstance(exc, getattr(dbapi, name)):
                return wrapper(statement, None, exc)
        return exc

    def table_ids(self) -> list[str]:
        """The tables that have events, in order: one index probe a table (a skip scan of
        the events' primary key), not a walk over every event."""
        with self.connection() as conn:
            rows = conn.exec_driver_sql(
                "WITH RECURSIVE t(id) AS (SELECT min(table_id) FROM events UNION ALL "
                "SELECT (SELECT min(table_id) FROM events WHERE table_id > t.id) FROM t "
                "WHERE t.id IS NOT NULL) SELECT id FROM t WHERE id IS NOT NULL ORDER BY id"
            )
            return [str(r[0]) for r in rows]

    def head(self, table_id: str) -> tuple[int, str] | None:
        """The last stored (sequence, hash) of a table, or None if it has no events."""
        with self.connection() as conn:
            row = conn.execute(
                sa.select(EVENTS.c.seq, EVENTS.c.hash)
                .where(EVENTS.c.table_id == table_id)
                .order_by(EVENTS.c.seq.desc())
                .limit(1)
            ).first()
        return None if row is None else (int(row[0]), str(row[1]))

    def records(
        self, table_id: str, *, after: int = -1, upto: int | None = None
    ) -> list[ChainRecord]:
        return list(self.iter_records(table_id, after=after, upto=upto))

    def iter_records(
        self, table_id: str, *, after: int = -1, upto: int | None = None, batch: int = 20000
    ) -> Iterator[ChainRecord]:
        """A table's records in sequence order, read in batches (straight from the driver:
        this is verify's inner loop)."""
        for rows in self.event_pages(table_id, _EVENT_COLUMNS, after=after, upto=upto, batch=batch):
            for t, s, ty, body, rec_at, corr, prev, h in rows:
                yield ChainRecord(t, s, ty, body, rec_at, corr, prev, h)

    def event_pages(
        self,
        table_id: str,
        columns: Sequence[str],
        *,
        after: int = -1,
        upto: int | None = None,
        batch: int = 20000,
    ) -> Iterator[list[Any]]:
        """The ``columns`` of a table's events after ``after`` (up to ``upto``), in sequence
        order, as the driver's rows, a page of ``batch`` at a time (``seq`` must be among
        the columns: the next page starts after the last one's)."""
        at = list(columns).index("seq")
        mark = "?" if self.dialect == "sqlite" else "%s"
        sql = (
            f"SELECT {', '.join(columns)} FROM events WHERE table_id = {mark} "
            f"AND seq > {mark} AND seq <= {mark} ORDER BY seq LIMIT {int(batch)}"
        )
        last = after
        top = upto if upto is not None else 2**62
        while True:
            with self.connection() as conn:
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                try:
                    cursor.execute(sql, (table_id, last, top))
                    rows = list(cursor.fetchall())
                finally:
                    cursor.close()
            if rows:
                yield rows
            if len(rows) < batch:
                return
            last = int(rows[-1][at])

    def chain_rows(
        self, table_id: str, *, after: int = -1, batch: int = 20000
    ) -> Iterator[list[tuple[int, str, str, str, int | None, str]]]:
        """A table's events in batches of ``(seq, prev_hash, hash, recorded_at, corrects,
        body)`` rows, in sequence order, without building records (verify's fast path)."""
        mark = "?" if self.dialect == "sqlite" else "%s"
        sql = (
            "SELECT seq, prev_hash, hash, recorded_at, corrects, body FROM events "
            f"WHERE table_id = {mark} AND seq > {mark} ORDER BY seq LIMIT {int(batch)}"
        )
        last = after
        with self.connection() as conn:
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                while True:
                    cursor.execute(sql, (table_id, last))
                    rows = list(cursor.fetchall())
                    if rows:
                        yield rows
                    if len(rows) < batch:
                        return
                    last = int(rows[-1][0])
            finally:
                cursor.close()

    def seq_range(
        self, table_id: str, since: str | None, until: str | None
    ) -> tuple[int, int] | None:
        """First and last sequence numbers recorded within [since, until] (ISO strings)."""
        query = sa.select(sa.func.min(EVENTS.c.seq), sa.func.max(EVENTS.c.seq)).where(
            EVENTS.c.table_id == table_id
        )
        if since is not None:
            query = query.where(EVENTS.c.recorded_at >= since)
        if until is not None:
            query = query.where(EVENTS.c.recorded_at <= until)
        with self.connection() as conn:
            row = conn.execute(query).first()
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])

    def table_row(self, table_id: str) -> dict[str, Any] | None:
        with self.connection() as conn:
            row = conn.execute(sa.select(TABLES).where(TABLES.c.table_id == table_id)).first()
        return None if row is None else dict(row._mapping)

    # -- derived rows -------------------------------------------------------------------

    def insert_ignore_statement(self, table: sa.Table) -> Any:
        if self.dialect == "postgresql":
            return postgresql.insert(table).on_conflict_do_nothing()
        if self.dialect == "sqlite":
            return sqlite.insert(table).on_conflict_do_nothing()
        raise StoreError(f"{self.name}: unsupported database {self.dialect!r}")

    def derived(
        self,
        table_id: str,
        *,
        first: int = 1,
        last: int | None = None,
        checkpoints: bool = False,
    ) -> Derived:
        """The derived rows stored for a table, optionally only those of events first..last
        (with ``checkpoints``, the checkpoints committed with those events too)."""
        out = Derived()
        with self.connection() as conn:
            if checkpoints:
                query = sa.select(CHECKPOINTS).where(
                    CHECKPOINTS.c.table_id == table_id, CHECKPOINTS.c.seq >= first - 1
                )
                if last is not None:
                    query = query.where(CHECKPOINTS.c.seq <= last - 1)
                result = conn.execute(query.order_by(CHECKPOINTS.c.seq))
                names = tuple(result.keys())
                out.checkpoints.extend(dict(zip(names, row, strict=True)) for row in result)
            for table, target, seq_col in (
                (SHOES, out.shoes, "seq"),
                (ROUNDS, out.rounds, "closed_seq"),
                (FLAGS, out.flags, "seq"),
                (SETTLEMENTS, out.settlements, "seq"),
            ):
                query = sa.select(table).where(table.c.table_id == table_id)
                query = query.where(table.c[seq_col] >= first)
                if last is not None:
                    query = query.where(table.c[seq_col] <= last)
                query = query.order_by(*table.primary_key.columns)
                result = conn.execute(query)
                names = tuple(result.keys())
                target.extend(dict(zip(names, row, strict=True)) for row in result)
        return out


def table_row_for(setup: dict[str, Any], created_at: str) -> dict[str, Any]:
    """The ``tables`` row for a table line."""
    return {
        "table_id": str(setup["table_id"]),
        "game": str(setup.get("game", "")),
        "setup": canonical_json(setup),
        "created_at": created_at,
    }


def json_list(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
