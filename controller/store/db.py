"""Opening a store database and bringing its schema up to date.

``sqlite:///path`` (the table PC's default: WAL journal, ``synchronous=FULL``) and
``postgresql+psycopg://user@host:port/db`` (the floor) share one schema, created and
upgraded by the Alembic migrations in ``controller/store/migrations``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

MIGRATIONS = Path(__file__).with_name("migrations")
DEFAULT_BUSY_TIMEOUT_MS = 250
# libpq settings for every PostgreSQL connection: give up connecting after 5 s, and treat a
# connection whose sent data goes unacknowledged for 5 s (or that stays silent to keepalives)
# as lost.
PG_CONNECT_ARGS: dict[str, int] = {
    "connect_timeout": 5,
    "tcp_user_timeout": 5000,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}


class StoreError(Exception):
    """The store cannot be used as asked (bad URL, integrity fault, diverged copy)."""


class NotThisTable(StoreError):
    """The store's log is not the one this table writes: another table line, or heads
    signed by another key (a store copied from another table, or the wrong config)."""


class StoreUnavailable(StoreError):
    """The database refused a write for now (locked, disk full, connection lost)."""


class StoreDown(StoreUnavailable):
    """An event could not be made durable: neither the database nor the spool took it.

    Nothing of it was kept by the store; the table is halted until the store is back.
    """


def normalize_url(url: str) -> str:
    """Accept the short forms ``postgresql://`` and ``postgres://`` for psycopg 3."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def sqlite_path(url: str) -> Path | None:
    """The file of a file-backed SQLite URL, else None."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    if parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def create_engine(url: str, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> Engine:
    url = normalize_url(url)
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise StoreError(f"database URL {url!r} is not valid: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        path = sqlite_path(url)
        if path is None:
            raise StoreError(f"database URL {url!r}: the SQLite store must be a file")
        if not path.parent.is_dir():
            raise StoreError(f"database URL {url!r}: directory {path.parent} does not exist")
        engine = sa.create_engine(
            url,
            connect_args={"timeout": busy_timeout_ms / 1000, "isolation_level": None},
        )

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = FULL")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            # pysqlite's own transaction handling is off (isolation_level=None), so that
            # SQLAlchemy's transactions are SQLite's, DDL included.
            conn.exec_driver_sql("BEGIN")

        return engine
    if backend == "postgresql":
        if parsed.get_driver_name() != "psycopg":
            raise StoreError(f"database URL {url!r}: use postgresql+psycopg:// (psycopg 3)")
        # A floor database that vanishes must fail a write within seconds, not hang the
        # table for TCP's minutes: the recorder then spools (see controller.store.recorder).
        return sa.create_engine(url, pool_pre_ping=True, connect_args=dict(PG_CONNECT_ARGS))
    raise StoreError(f"database URL {url!r}: only sqlite:/// and postgresql:// are supported")


def head_revision() -> str:
    script = ScriptDirectory(str(MIGRATIONS))
    head = script.get_current_head()
    if head is None:
        raise StoreError(f"no migrations found in {MIGRATIONS}")
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


# The advisory lock PostgreSQL stores take while migrating: many tables starting at once on
# an empty floor database must not create the schema side by side (they would block on each
# other's catalog rows, or fail).
MIGRATION_LOCK = 0x666C6F6F72637400  # "floorct\0"


def migrate(engine: Engine) -> None:
    """Create or upgrade the store's schema to the newest migration."""
    head = head_revision()
    if current_revision(engine) == head:
        return
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            if MigrationContext.configure(conn).get_current_revision() == head:
                return  # another process migrated it while this one waited
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def open_engine(
    url: str, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, create: bool = True
) -> Engine:
    """An engine on ``url`` with the schema created or upgraded; errors name the URL.

    With ``create=False`` the store must already exist (for verify, export, ship's source).
    """
    path = sqlite_path(normalize_url(url))
    if not create and path is not None and not path.is_file():
        raise StoreError(f"database {safe_url(url)}: no such store ({path} does not exist)")
    engine = create_engine(url, busy_timeout_ms=busy_timeout_ms)
    try:
        if not create and current_revision(engine) is None:
            raise StoreError(f"database {safe_url(url)} holds no audit store")
        migrate(engine)
    except StoreError:
        engine.dispose()
        raise
    except DBAPIError as exc:
        engine.dispose()
        raise StoreError(f"database {safe_url(url)}: {describe(exc)}") from exc
    return engine


def safe_url(url: str) -> str:
    """The URL with any password hidden, for messages and logs."""
    try:
        return sa.engine.make_url(normalize_url(url)).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


def describe(exc: BaseException) -> str:
    """A one-line account of a database error."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def is_transient(exc: BaseException) -> bool:
    """Whether a database error means "not now" (locked, full, gone) rather than "never"."""
    if not isinstance(exc, DBAPIError):
        return isinstance(exc, (OSError, StoreUnavailable))
    if isinstance(exc, sa.exc.IntegrityError):
        return False
    if exc.connection_invalidated:
        return True
    return isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError))
