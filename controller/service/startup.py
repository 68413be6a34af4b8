"""What `floorctl run` refuses before it serves a screen: an unsafe signing key, a second
recorder on the same store, a store that belongs to another table.

Each refusal is a :class:`StartRefused`, which `floorctl run` ends with exit status 2: the
unit's ``RestartPreventExitStatus=2`` then stops systemd restarting a table whose fix is a
person's (a chmod, a config, a store put back), where a restart every 2 s would only fill the
journal. Each message names the file or store and says what to do.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.service.errors import StartError

if TYPE_CHECKING:
    from controller.store.keys import SigningKey
    from controller.store.repository import Store


class StartRefused(StartError):
    """A start refused for a reason a restart would not fix (exit status 2)."""

    exit_code = 2


# ----- the signing key ----------------------------------------------------------------------


def key_problem(path: Path | str) -> str | None:
    """Why the file named by ``[store] signing_key`` may not be used as the table's key, or
    None: it must exist, be a regular file, be readable by no one but its owner, and hold an
    Ed25519 private key (not the public ``table.pub``)."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return (
            f"signing key {path}: no such file (make one with `floorctl keygen --out "
            f"{path.parent}`, or name the table's key)"
        )
    except OSError as exc:
        return f"signing key {path}: cannot read it ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return (
            f"signing key {path}: is a directory; name the key file in it (e.g. {path}/table.key)"
        )
    if not stat.S_ISREG(info.st_mode):
        return f"signing key {path}: not a regular file"
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (
            f"signing key {path}: mode {mode:04o} lets other users read it; "
            f"fix: chmod 600 {path} (and make a new key if others may have read it)"
        )
    return None


def load_table_key(path: Path | str) -> SigningKey:
    """The table's signing key, checked as :func:`key_problem` says; :class:`StartRefused`
    naming the file and the fix otherwise."""
    from controller.store.db import StoreError
    from controller.store.keys import load_signing_key

    problem = key_problem(path)
    if problem is not None:
        raise StartRefused(f"[store] signing_key: {problem}")
    try:
        return load_signing_key(path)
    except StoreError as exc:
        message = str(exc)
        if _is_public_key(Path(path)):
            message = (
                f"signing key {path}: is a public key; name the private key "
                "(table.key, made with table.pub by floorctl keygen)"
            )
        raise StartRefused(f"[store] signing_key: {message}") from None


def _is_public_key(path: Path) -> bool:
    try:
        head = path.read_bytes()[:200]
    except OSError:
        return False
    return b"-----BEGIN PUBLIC KEY-----" in head


# ----- one recorder per store ---------------------------------------------------------------


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
    """An exclusive ``flock`` on ``<store>.lock``, taken without waiting; StartRefused if
    another process holds it. (SQLite's own locks are POSIX record locks, which ``flock``
    does not touch.)"""
    where = lock_path(db)
    try:
        fd = os.open(where, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
    except OSError as exc:
        raise StartRefused(
            f"audit store {db}: cannot open its lock file {where} ({exc.strerror}): the "
            "store's directory must be writable by the service's user"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = _holder(fd)
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise StartRefused(
                f"audit store {db}: another floorctl is recording on it{holder} (it holds "
                f"{where}); stop it first (systemctl stop floorctl): two recorders on one "
                "store would part its log"
            ) from None
        raise StartError(f"audit store {db}: cannot lock {where}: {exc.strerror}") from None
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
    connection of its own for as long as the table runs; StartRefused if taken."""
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
        raise StartRefused(
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


# ----- a store of this table ----------------------------------------------------------------


def check_store_is_this_tables(store: Store, table_id: str) -> None:
    """StartRefused if the store holds other tables' logs but not this one's: a store copied
    from another table (or a config naming the wrong table) would otherwise start a second
    table in it, silently."""
    others = store.table_ids()
    if others and table_id not in others:
        shown = ", ".join(others[:5]) + (" …" if len(others) > 5 else "")
        raise StartRefused(
            f"audit store {store.name} holds the log of table {shown}, not of table "
            f"{table_id} ([table] table_id): it belongs to another table. Give this table its "
            "own store ([store] url), or correct table_id if the store is this table's"
        )
