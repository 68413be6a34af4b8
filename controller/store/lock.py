"""One recorder per store: the lock a table's recorder holds on its store while it runs.

A SQLite store: an exclusive ``flock`` on ``<store>.lock`` beside it, taken before the store is
opened (SQLite's own locks are POSIX record locks, which ``flock`` does not touch). A
PostgreSQL store: a session advisory lock for the table in its database and schema, held on a
connection of its own. The OS (or the server, for a lost connection) gives either back when the
process ends, a crash included. Readers (verify, export, ship, prove) take none.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.store.db import StoreError

if TYPE_CHECKING:
    from controller.store.repository import Store


class StoreLocked(StoreError):
    """Another process records on this store (or the lock cannot be taken at all)."""


@dataclass
class RecorderLock:
    """The lock a running table holds on its store; :meth:`release` gives it back (the OS
    gives it back anyway when the process ends, a crash included)."""

    where: str
    _fd: int | None = None
    _conn: Any = None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a lost connection has lost its lock too
                conn.invalidate()  # the session ends, and its lock with it (not pooled)
                conn.close()


def lock_path(db: Path) -> Path:
    """The lock file of a SQLite store: beside it, ``<store>.lock``."""
    return db.with_name(db.name + ".lock")


def lock_sqlite(db: Path) -> RecorderLock:
    """An exclusive ``flock`` on ``<store>.lock``, taken without waiting; StoreLocked if
    another process holds it. (SQLite's own locks are POSIX record locks, which ``flock``
    does not touch.)"""
    where = lock_path(db)
    try:
        fd = os.open(where, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
    except OSError as exc:
        raise StoreLocked(
            f"audit store {db}: cannot open its lock file {where} ({exc.strerror}): the "
            "store's directory must be writable by the service's user"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = _holder(fd)
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise StoreLocked(
                f"audit store {db}: another floorctl is recording on it{holder} (it holds "
                f"{where}); stop it first (systemctl stop floorctl): two recorders on one "
                "store would part its log"
            ) from None
        raise StoreLocked(f"audit store {db}: cannot lock {where}: {exc.strerror}") from None
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    return RecorderLock(str(where), _fd=fd)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode("ascii").strip() or "0")
        if pid > 0:
            return f" (process {pid})"
    return ""


def lock_postgres(store: Store, table_id: str) -> RecorderLock:
    """A session advisory lock for this table in this database and schema, held on a
    connection of its own for as long as the table runs; StoreLocked if taken."""
    conn = store.engine.connect()
    try:
        got = conn.exec_driver_sql(
            "SELECT pg_try_advisory_lock(('x' || substr(md5('floorctl-recorder/' || "
            "current_database() || '/' || current_schema() || '/' || %(t)s), 1, 16))"
            "::bit(64)::bigint)",
            {"t": table_id},
        ).scalar()
        conn.commit()  # the lock is the session's, not the transaction's
    except Exception:
        conn.close()
        raise
    if not got:
        conn.close()
        raise StoreLocked(
            f"audit store {store.name}: another floorctl is recording table {table_id} on it "
            "(it holds the table's advisory lock); stop it first: two recorders on one store "
            "would part its log"
        )
    return RecorderLock(f"{store.name} advisory lock for table {table_id}", _conn=conn)


def lock_store(store_url: str, table_id: str, store: Store | None = None) -> RecorderLock | None:
    """The recorder's lock on its store: a SQLite file's ``flock`` (taken before the store is
    opened), or, with ``store``, a PostgreSQL advisory lock. None for an in-memory store."""
    from controller.store.db import normalize_url, sqlite_path

    url = normalize_url(store_url)
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path is None or store is not None:
            return None
        return lock_sqlite(path)
    if store is None:
        return None
    return lock_postgres(store, table_id)
