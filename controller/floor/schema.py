"""The floor database: the store's shipped events, and the floor's own read model beside them.

:func:`open_floor` connects to the floor's PostgreSQL database (no migration of the store's
schema: that is the store's), checks that it holds an audit store, and creates the floor's own
tables (``schema.sql``) when they are missing or older. The read model is never the record:
:func:`drop_read_model` removes it (users and the lookup log are kept) and the indexer builds
it again from the events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources

from sqlalchemy.engine import Connection, Engine

from controller.floor.settings import FloorSettings, NotFound
from controller.store.db import StoreError, create_engine, current_revision, describe, safe_url
from controller.store.repository import Store

SCHEMA_VERSION = "1"
# Serialises the floor's DDL and partition creation between processes (serve, the CLI).
DDL_LOCK = 0x666C6F6F72444400  # "floorDD\0"
PARTITIONED = ("floor_rounds", "floor_flags")
READ_MODEL = (
    "floor_rounds",
    "floor_flags",
    "floor_shoes",
    "floor_tray",
    "floor_checkpoints",
    "floor_tables",
)


class FloorError(StoreError):
    """The floor database cannot be used as asked."""


@dataclass
class Floor:
    """An open floor database: the store over it, the engine, the settings."""

    engine: Engine
    store: Store
    settings: FloorSettings
    url: str

    @property
    def name(self) -> str:
        return safe_url(self.url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Floor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def open_floor(url: str, settings: FloorSettings | None = None) -> Floor:
    """Open the floor database at ``url``; raises :class:`FloorError` naming the problem."""
    try:
        engine = create_engine(url)
    except StoreError as exc:
        raise FloorError(str(exc)) from exc
    if engine.dialect.name != "postgresql":
        engine.dispose()
        raise FloorError(
            f"database {safe_url(url)}: the floor is a PostgreSQL database (postgresql://...)"
        )
    try:
        if current_revision(engine) is None:
            raise FloorError(
                f"database {safe_url(url)} holds no audit store: ship a table to it first "
                "(floorctl ship --to URL)"
            )
        ensure_schema(engine)
    except FloorError:
        engine.dispose()
        raise
    except Exception as exc:
        engine.dispose()
        raise FloorError(f"database {safe_url(url)}: {describe(exc)}") from exc
    return Floor(engine, Store(engine, url), settings or FloorSettings.from_env(), url)


def ensure_schema(engine: Engine) -> None:
    with engine.begin() as conn:
        ensure_floor_tables(conn)


def ensure_floor_tables(conn: Connection) -> None:
    """Create the floor's own tables (``schema.sql``) when they are missing or older."""
    if _version(conn) == SCHEMA_VERSION:
        return
    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({DDL_LOCK})")
    if _version(conn) == SCHEMA_VERSION:
        return
    ddl = resources.files("controller.floor").joinpath("schema.sql").read_text("utf-8")
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(ddl)  # no parameters: the DDL's own % signs stay as written
    finally:
        cursor.close()
    conn.exec_driver_sql(
        "INSERT INTO floor_meta (key, value) VALUES ('schema', %(v)s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        {"v": SCHEMA_VERSION},
    )


def _version(conn: Connection) -> str | None:
    exists = conn.exec_driver_sql("SELECT to_regclass('floor_meta') IS NOT NULL").scalar()
    if not exists:
        return None
    value = conn.exec_driver_sql("SELECT value FROM floor_meta WHERE key = 'schema'").scalar()
    return None if value is None else str(value)


def month_of(moment: datetime) -> tuple[int, int]:
    m = moment.astimezone(UTC)
    return m.year, m.month


def ensure_partitions(conn: Connection, months: set[tuple[int, int]], known: set[str]) -> None:
    """Create the monthly partitions of floor_rounds and floor_flags that ``months`` need.

    ``known`` holds the partitions this process has seen exist (it is added to)."""
    for year, month in sorted(months):
        nxt = (year + 1, 1) if month == 12 else (year, month + 1)
        for table in PARTITIONED:
            name = f"{table}_y{year:04d}m{month:02d}"
            if name in known:
                continue
            exists = conn.exec_driver_sql(
                "SELECT to_regclass(%(n)s) IS NOT NULL", {"n": name}
            ).scalar()
            if not exists:
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({DDL_LOCK})")
                conn.exec_driver_sql(
                    f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {table} FOR VALUES "
                    f"FROM ('{year:04d}-{month:02d}-01 00:00+00') "
                    f"TO ('{nxt[0]:04d}-{nxt[1]:02d}-01 00:00+00')"
                )
            known.add(name)


def drop_read_model(engine: Engine) -> None:
    """Empty the read model (the indexer rebuilds it from the events)."""
    with engine.begin() as conn:
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({DDL_LOCK})")
        conn.exec_driver_sql("TRUNCATE " + ", ".join(READ_MODEL))


def known_table(floor: Floor, conn: Connection, table_id: str) -> None:
    """Raise a clear :class:`NotFound` when the floor has no such table."""
    row = conn.exec_driver_sql(
        "SELECT 1 FROM tables WHERE table_id = %(t)s", {"t": table_id}
    ).first()
    if row is None:
        names = [
            str(r[0])
            for r in conn.exec_driver_sql("SELECT table_id FROM tables ORDER BY table_id LIMIT 40")
        ]
        listing = ", ".join(names) if names else "none shipped yet"
        raise NotFound(f"no table {table_id!r} on the floor (tables: {listing})")
