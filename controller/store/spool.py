"""The local spool: a table's events while its database cannot take them, durable on disk.

A spool is one file per table (``<db>.<table>.spool`` beside a SQLite database, or in the
directory the table's config names). Each record is one line of JSON (the ``events`` columns)
ending in ``\\n``; the records carry their place in the hash chain (``prev_hash``, ``hash``),
so the spool continues the table's chain from the database's head and is checked like it.

- **Durable before acknowledged.** :meth:`Spool.append` writes the lines and ``fsync``s the
  file before it returns; the file's directory is ``fsync``ed once, when the file is created.
- **A reserve.** The file is created with ``reserve`` bytes of zeros written (really
  allocated, not a sparse hole), and records are written over them in place: when the disk
  fills, the spool still takes about ``reserve`` bytes of events (some 3,000 at 1 MiB).
  Everything after the last record is zeros, so the records end at the first NUL byte.
- **Torn writes.** A write cut by a crash leaves at most a last line without its ``\\n``: it
  was never acknowledged, and it is dropped (and zeroed) when the spool is opened again. A
  line that does not parse *before* the last one is damage, and opening refuses it.
- **Clearing** (once the database holds the records) zeros the used bytes and syncs; the
  reserve stays allocated.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import structlog

from controller.store.canonical import ChainRecord
from controller.store.db import NotThisTable, StoreError, sqlite_path
from controller.store.repository import Store

log = structlog.get_logger("floorctl.store")

DEFAULT_RESERVE = 1 << 20  # bytes of zeros the spool keeps allocated for a full disk
_ZEROS = bytes(64 * 1024)


def default_spool(store: Store, table_id: str, directory: Path | str | None = None) -> Path:
    """Where a table's spool lives: ``directory`` if given; else beside a SQLite database, or
    in ``$STATE_DIRECTORY`` (systemd's) for PostgreSQL. Raises StoreError if there is none.

    The name is ``<database file>.<table>.spool`` for SQLite and ``floor.<table>.spool`` for
    PostgreSQL: it does not depend on how the database is reached, so a changed host or port
    still finds the events spooled before (and a spool that does not continue the store's
    chain stops the table from starting, rather than being passed over).
    """
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in table_id)
    path = sqlite_path(store.url)
    if path is not None:
        name = path.name
        where = Path(directory) if directory is not None else path.parent
    else:
        name = "floor"
        env = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
        where_text = directory if directory is not None else env or None
        if where_text is None:
            raise StoreError(
                f"{store.name}: a PostgreSQL table needs a local spool directory for events "
                "while the database is unreachable ([store] spool_dir)"
            )
        where = Path(where_text)
    if not where.is_dir():
        raise StoreError(f"spool directory {where} does not exist")
    return where / f"{name}.{safe}.spool"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        if written <= 0:  # pragma: no cover - pwrite raises rather than returning 0
            raise OSError(f"pwrite wrote {written} bytes")
        view = view[written:]
        offset += written


def _write_zeros(fd: int, start: int, end: int) -> None:
    offset = start
    while offset < end:
        chunk = _ZEROS[: min(len(_ZEROS), end - offset)]
        _write_all(fd, chunk, offset)
        offset += len(chunk)


def record_line(record: ChainRecord) -> bytes:
    return (json.dumps(record.to_row(), sort_keys=True, ensure_ascii=False) + "\n").encode()


class Spool:
    """One table's spool file, kept open for the recorder's life. Use :meth:`open`."""

    def __init__(self, path: Path, table_id: str, fd: int, end: int, reserve: int) -> None:
        self.path = path
        self.table_id = table_id
        self._fd = fd
        self._end = end  # bytes of whole records at the start of the file
        self.reserve = reserve

    @classmethod
    def open(
        cls, path: Path, table_id: str, *, reserve: int = DEFAULT_RESERVE
    ) -> tuple[Spool, list[ChainRecord]]:
        """Open (creating, with its reserve) a table's spool; return it and its records.

        Raises :class:`StoreError` when the file cannot be created or read, or holds
        something that is not this table's records.
        """
        created = not path.exists()
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StoreError(f"spool {path}: cannot open: {exc.strerror or exc}") from exc
        try:
            if created:
                _fsync_dir(path.parent)
            records, end, torn = _read(fd, path, table_id)
            size = os.fstat(fd).st_size
            if torn:
                log.warning("spool: torn last line dropped", spool=str(path), bytes=torn)
                _write_zeros(fd, end, min(size, end + torn))
            if size < reserve:
                try:
                    _write_zeros(fd, size, reserve)
                except OSError as exc:  # a full disk: the spool works, with less room
                    log.warning("spool: reserve not allocated", spool=str(path), error=str(exc))
            os.fsync(fd)
            if created:
                _fsync_dir(path.parent)
        except StoreError:
            os.close(fd)
            raise
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"spool {path}: {exc.strerror or exc}") from exc
        return cls(path, table_id, fd, end, reserve), records

    @property
    def empty(self) -> bool:
        return self._end == 0

    def room(self) -> int:
        """Bytes the spool can take without allocating on the disk."""
        return max(0, os.fstat(self._fd).st_size - self._end)

    def append(self, records: Sequence[ChainRecord]) -> None:
        """Write records and fsync; raises ``OSError`` (nothing is then counted as written)."""
        if not records:
            return
        data = b"".join(record_line(r) for r in records)
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, data, self._end)
            os.fsync(self._fd)
        except OSError:
            self._undo(size, len(data))
            raise
        self._end += len(data)

    def _undo(self, size: int, length: int) -> None:
        """After a failed write: nothing of it may look like a record."""
        try:
            if os.fstat(self._fd).st_size > max(size, self._end):
                os.ftruncate(self._fd, max(size, self._end))
            _write_zeros(self._fd, self._end, min(size, self._end + length))
        except OSError as exc:  # a torn line is dropped on reading anyway
            log.error("spool: could not undo a failed write", spool=str(self.path), error=str(exc))

    def probe(self) -> bool:
        """Whether an append of a few records would find room now."""
        if self.room() >= 16 * 1024:
            return True
        size = os.fstat(self._fd).st_size
        try:
            _write_zeros(self._fd, size, size + len(_ZEROS))
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)
            return False
        return True

    def clear(self) -> None:
        """Forget the records (the database holds them now): zero them and sync."""
        if self._end == 0:
            return
        _write_zeros(self._fd, 0, self._end)
        if os.fstat(self._fd).st_size > self.reserve:
            os.ftruncate(self._fd, self.reserve)
        os.fsync(self._fd)
        self._end = 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _read(fd: int, path: Path, table_id: str) -> tuple[list[ChainRecord], int, int]:
    """The records, the bytes they take, and the length of a torn last line (0: none)."""
    size = os.fstat(fd).st_size
    data = os.pread(fd, size, 0) if size else b""
    nul = data.find(b"\0")
    if nul >= 0:
        data = data[:nul]
    end = data.rfind(b"\n") + 1
    torn = len(data) - end
    out: list[ChainRecord] = []
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        try:
            record = ChainRecord.from_row(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"spool {path} line {number}: not a spooled event: {exc}") from exc
        if record.table_id != table_id:
            raise NotThisTable(
                f"spool {path} line {number}: names table {record.table_id!r}, not "
                f"{table_id!r}: the spool belongs to another table"
            )
        out.append(record)
    return out, end, torn
