"""The live table's recorder: append durably, then apply, then store what followed.

For each event the table hears, :meth:`Recorder.record`

1. checks it with the engine's parser (a malformed event is refused and nothing is stored);
2. appends it to the table's hash chain in the database, in its own committed transaction
   (SQLite: WAL with ``synchronous=FULL``, so committed means on disk);
3. applies it to the round engine;
4. stores the flags, settlements, rounds and shoes the engine produced.

When the database refuses the write for now (locked, disk full, connection lost), the event
is not lost: it is kept in order in memory and, where possible, in a local *spool* file
(fsynced JSON lines), the fault is logged and shown by :meth:`Recorder.status`, the event is
applied so the table can go on, and everything held is written, in order, as soon as the
store takes writes again (on the next event, on :meth:`Recorder.flush`, or by the retry
thread). A restart (:meth:`Recorder.open`) rebuilds the table by replaying its stored events,
then the spool, a half-dealt round included.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy.exc import IntegrityError

from controller.engine import Applied, Table
from controller.store.canonical import GENESIS, ChainRecord
from controller.store.chain import check_chain
from controller.store.db import StoreError, describe, is_transient, sqlite_path
from controller.store.fold import Fold, event_body, same_setup, setup_body
from controller.store.repository import Derived, Store, table_row_for

log = structlog.get_logger("floorctl.store")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StoreStatus:
    """What the dealer's screen shows about the audit store."""

    ok: bool
    pending: int = 0  # events the table has applied that are not yet in the database
    spooled: int = 0  # of those, how many are safe in the local spool file
    message: str = ""
    since: str | None = None  # when the fault began

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": "ok" if self.ok else "fault",
            "pending": self.pending,
            "spooled": self.spooled,
            "reason": self.message,
            "since": self.since,
        }


@dataclass(frozen=True)
class Recorded:
    """One recorded event: its place in the chain, whether it is in the database yet, and
    what the engine made of it."""

    seq: int
    hash: str
    stored: bool
    applied: Applied


AUTO = "auto"


def default_spool(store: Store, table_id: str) -> Path | None:
    """Beside a SQLite database: ``<db>.<table>.spool``; none for PostgreSQL."""
    path = sqlite_path(store.url)
    if path is None:
        return None
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in table_id)
    return path.with_name(f"{path.name}.{safe}.spool")


class Recorder:
    """One table's single writer. Use :meth:`open`; thread-safe."""

    def __init__(
        self,
        store: Store,
        fold: Fold,
        head: tuple[int, str],
        *,
        spool: Path | None,
        clock: Callable[[], str],
        on_status: Callable[[StoreStatus], None] | None,
        retry_every: float | None,
    ) -> None:
        self.store = store
        self.fold = fold
        self.table_id = fold.table_id
        self._seq, self._hash = head
        self.spool_path = spool
        self.clock = clock
        self.on_status = on_status
        self.retry_every = retry_every
        self._lock = threading.RLock()
        self._pending: deque[ChainRecord] = deque()  # events not yet in the database
        self._spooled = 0  # how many of _pending are in the spool file
        self._derived = Derived()  # derived rows not yet in the database
        self._fault: str | None = None
        self._status_dirty = False
        self._written = 0  # events written since the fault began
        self._fault_since: str | None = None
        self._table_row: dict[str, Any] | None = None
        self._closed = False
        self._wake = threading.Event()
        self._retry_thread: threading.Thread | None = None

    # ----- opening ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: Store,
        table_line: Mapping[str, Any] | None = None,
        *,
        table_id: str | None = None,
        spool: Path | str | None = AUTO,
        clock: Callable[[], str] = utc_now,
        on_status: Callable[[StoreStatus], None] | None = None,
        retry_every: float | None = 1.0,
    ) -> Recorder:
        """Start a new table from its table line, or restart one from the store.

        With ``table_line``, a table already in the store must have been set up alike; its
        events are replayed. Without it, ``table_id`` names a table the store must hold.
        Raises :class:`StoreError` if the stored chain does not verify, and
        ``ScenarioError`` if the table line is malformed.
        """
        body: dict[str, Any] | None = None
        if table_line is not None:
            _setup, body = setup_body(table_line)
            table_id = str(body["table_id"])
        if table_id is None:
            raise ValueError("Recorder.open needs a table line or a table id")
        spool_path = default_spool(store, table_id) if spool == AUTO else spool
        spool_path = None if spool_path is None else Path(spool_path)
        try:
            records = store.records(table_id)
        except Exception as exc:
            raise StoreError(
                f"{store.name}: cannot read table {table_id}: {describe(exc)}"
            ) from exc
        spooled = _read_spool(spool_path, table_id) if spool_path is not None else []
        count, head_hash, problem = check_chain(table_id, records)
        if problem is not None:
            raise StoreError(f"{store.name}: the audit log does not verify: {problem}")
        if records:
            stored_setup = records[0].event()
            if body is not None and not same_setup(stored_setup, body):
                raise StoreError(
                    f"{store.name}: table {table_id} is stored with the table line "
                    f"{records[0].body}, not {json.dumps(body, default=str)}"
                )
        elif spooled and spooled[0].seq == 0:
            stored_setup = spooled[0].event()
        elif body is not None:
            stored_setup = body
        else:
            raise StoreError(f"{store.name}: table {table_id} has no events in the store")
        fold = Fold(table_id, stored_setup)
        last = records[-1].seq if records else -1
        rec = cls(
            store,
            fold,
            (last, head_hash),
            spool=spool_path,
            clock=clock,
            on_status=on_status,
            retry_every=retry_every,
        )
        expected = Derived()
        for record in records[1:]:
            expected.extend(fold.apply(record.seq, record.event())[2])
        rec._derived = expected  # written (where missing) below; stored rows are kept
        for record in spooled:
            if record.seq <= last and record.hash != records[record.seq].hash:
                raise StoreError(
                    f"spool {spool_path}: event {record.seq} differs from the stored one"
                )
        rec._adopt_spool(spooled)
        if last < 0 and not spooled:
            assert body is not None
            rec._start(body)
        rec._flush()
        rec._deliver()
        if spooled:
            log.warning(
                "table restored with spooled events",
                table=table_id,
                stored=count,
                spooled=len(spooled),
                store=store.name,
                spool=str(spool_path),
            )
        return rec

    def _adopt_spool(self, spooled: list[ChainRecord]) -> None:
        """Take the spooled events the database lacks, checking they continue the chain."""
        for record in spooled:
            if record.seq <= self._seq:
                continue  # already written before the spool was cleared
            if record.seq != self._seq + 1 or record.prev_hash != self._hash:
                raise StoreError(
                    f"spool {self.spool_path}: event {record.seq} does not continue table "
                    f"{self.table_id}'s chain at event {self._seq}"
                )
            if record.recompute() != record.hash:
                raise StoreError(
                    f"spool {self.spool_path}: event {record.seq} does not match its hash"
                )
            self._pending.append(record)
            self._spooled += 1
            self._seq, self._hash = record.seq, record.hash
            if record.seq == 0:
                self._table_row = table_row_for(record.event(), record.recorded_at)
            else:
                self._derived.extend(self.fold.apply(record.seq, record.event())[2])

    def _start(self, body: dict[str, Any]) -> None:
        record = ChainRecord.make(self.table_id, 0, body, GENESIS, self.clock())
        self._table_row = table_row_for(body, record.recorded_at)
        self._pending.append(record)
        self._seq, self._hash = 0, record.hash
        if not self._flush_events():
            self._spool_pending()

    # ----- recording ----------------------------------------------------------------------

    @property
    def table(self) -> Table:
        return self.fold.table

    @property
    def seq(self) -> int:
        """The sequence number of the last event recorded (0: only the table line)."""
        return self._seq

    @property
    def head_hash(self) -> str:
        return self._hash

    def record(self, event: Mapping[str, Any], *, recorded_at: str | None = None) -> Recorded:
        """Record one event and apply it. Raises ``ScenarioError`` if it is malformed.

        An event may name the earlier event it corrects with ``"correction_of": <seq>``.
        """
        try:
            return self._record(event, recorded_at)
        finally:
            self._deliver()

    def _record(self, event: Mapping[str, Any], recorded_at: str | None) -> Recorded:
        with self._lock:
            if self._closed:
                raise StoreError(f"table {self.table_id}: the recorder is closed")
            seq = self._seq + 1
            parsed, body = event_body(event, seq)
            corrects = body.get("correction_of")
            if corrects is not None and (
                isinstance(corrects, bool)
                or not isinstance(corrects, int)
                or not 0 < corrects < seq
            ):
                raise StoreError(
                    f'table {self.table_id} event {seq}: "correction_of": {corrects!r} names '
                    "no earlier event"
                )
            record = ChainRecord.make(
                self.table_id, seq, body, self._hash, recorded_at or self.clock(), corrects
            )
            before = self._seq, self._hash
            self._pending.append(record)
            self._seq, self._hash = seq, record.hash
            try:
                stored = self._flush_events()
            except Exception:
                # Refused for good (not "not now"): the event is neither kept nor applied.
                if self._pending and self._pending[-1] is record:
                    self._pending.pop()
                    self._seq, self._hash = before
                raise
            if not stored:
                self._spool_pending()
            _event, applied, derived = self.fold.apply_event(seq, parsed)
            self._derived.extend(derived)
            if stored:
                self._flush_derived()
            return Recorded(seq, record.hash, stored, applied)

    def append(self, event: dict[str, Any]) -> int:
        """The table service's event log interface: record and apply; return the sequence."""
        return self.record(event).seq

    def history(self) -> list[tuple[int, dict[str, Any]]]:
        """Every stored event after the table line, as (sequence, event) pairs."""
        with self._lock:
            out = [(r.seq, r.event()) for r in self.store.iter_records(self.table_id, after=0)]
            out.extend((r.seq, r.event()) for r in self._pending if r.seq > 0)
            return out

    # ----- the store's health -------------------------------------------------------------

    def status(self) -> StoreStatus:
        with self._lock:
            if self._fault is None:
                return StoreStatus(ok=True)
            return StoreStatus(
                ok=False,
                pending=len(self._pending),
                spooled=self._spooled,
                message=self._fault,
                since=self._fault_since,
            )

    def flush(self) -> bool:
        """Write whatever is held; True when nothing is left waiting."""
        try:
            return self._flush()
        finally:
            self._deliver()

    def _flush(self) -> bool:
        with self._lock:
            if self._flush_events():
                self._flush_derived()
            return not self._pending and not self._derived

    def close(self) -> None:
        with self._lock:
            self._flush()
            self._closed = True
            self._wake.set()
            if self._pending:
                log.error(
                    "store closed with events not written",
                    table=self.table_id,
                    pending=len(self._pending),
                    spool=str(self.spool_path) if self.spool_path else None,
                    spooled=self._spooled,
                )
        self._deliver()
        thread = self._retry_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _flush_events(self) -> bool:
        if not self._pending:
            return True
        batch = list(self._pending)
        try:
            self.store.append(batch, self._table_row if batch[0].seq == 0 else None)
        except IntegrityError as exc:
            batch = self._resolve_conflict(batch, exc)
            if batch:
                return self._flush_events()
        except Exception as exc:
            if not is_transient(exc):
                raise
            self._set_fault(describe(exc))
            return False
        self._pending.clear()
        self._table_row = None
        if self._spooled:
            self._clear_spool()
        self._written += len(batch)
        if not self._derived:
            self._set_ok()
        return True

    def _resolve_conflict(self, batch: list[ChainRecord], exc: Exception) -> list[ChainRecord]:
        """A write said "already stored": keep going only if what is stored is ours.

        (A commit whose answer was lost, e.g. a dropped connection, is retried this way.)
        """
        stored = {
            r.seq: r.hash for r in self.store.iter_records(self.table_id, after=batch[0].seq - 1)
        }
        for record in batch:
            if record.seq in stored and stored[record.seq] != record.hash:
                raise StoreError(
                    f"{self.store.name}: table {self.table_id} event {record.seq} is already "
                    "stored with another hash: is another recorder writing this table?"
                ) from exc
        left = [r for r in batch if r.seq not in stored]
        if len(left) == len(batch):
            raise StoreError(f"{self.store.name}: {describe(exc)}") from exc
        self._pending = deque(left)
        if batch[0].seq == 0:
            self._table_row = None
        return left

    def _flush_derived(self) -> None:
        if not self._derived:
            return
        try:
            self.store.insert_derived(self._derived)
        except Exception as exc:
            if not is_transient(exc):
                raise
            self._set_fault(describe(exc))
            return
        self._derived = Derived()
        if not self._pending:
            self._set_ok()

    def _set_fault(self, reason: str) -> None:
        first = self._fault is None
        self._fault = reason
        if first:
            self._fault_since = self.clock()
            log.error(
                "audit store unavailable: holding events in order until it is back",
                table=self.table_id,
                store=self.store.name,
                reason=reason,
                pending=len(self._pending),
                spool=str(self.spool_path) if self.spool_path else None,
            )
            self._start_retry()
        self._notify()

    def _set_ok(self) -> None:
        if self._fault is None:
            self._written = 0
            return
        log.warning(
            "audit store back: held events written",
            table=self.table_id,
            store=self.store.name,
            written=self._written,
            down_since=self._fault_since,
        )
        self._written = 0
        self._fault = None
        self._fault_since = None
        self._spooled = 0
        self._notify()

    def _notify(self) -> None:
        """Note that the status changed; :meth:`_deliver` tells the listener."""
        self._status_dirty = True

    def _deliver(self) -> None:
        """Tell ``on_status`` of a change, never while holding the recorder's lock (the
        listener may take the service's lock, which the service holds while recording)."""
        with self._lock:
            if not self._status_dirty:
                return
            self._status_dirty = False
            status = self.status()
        listener = self.on_status
        if listener is not None:
            try:
                listener(status)
            except Exception as exc:  # the screen's trouble is not the store's
                log.error("store status listener failed", error=str(exc))

    def _start_retry(self) -> None:
        if self.retry_every is None or self._closed:
            return
        if self._retry_thread is not None and self._retry_thread.is_alive():
            return
        self._wake.clear()
        self._retry_thread = threading.Thread(
            target=self._retry_loop, name=f"store-retry-{self.table_id}", daemon=True
        )
        self._retry_thread.start()

    def _retry_loop(self) -> None:
        assert self.retry_every is not None
        while not self._wake.wait(self.retry_every):
            with self._lock:
                if self._closed:
                    return
                try:
                    done = self._flush()
                except Exception as exc:
                    log.error("audit store retry failed", table=self.table_id, error=str(exc))
                    done = False
                back = done and self._fault is None
            self._deliver()
            if back:
                return

    # ----- the spool ----------------------------------------------------------------------

    def _spool_pending(self) -> None:
        """Append the held events not yet spooled to the spool file, fsynced."""
        if self.spool_path is None:
            return
        todo = list(self._pending)[self._spooled :]
        if not todo:
            return
        try:
            with open(self.spool_path, "a", encoding="utf-8") as fh:
                for record in todo:
                    fh.write(json.dumps(record.to_row(), sort_keys=True) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            first = "spool" not in (self._fault or "")
            if first:
                self._fault = (
                    f"{self._fault or 'store unavailable'}; spool {self.spool_path}: "
                    f"{exc.strerror or exc}: events held in memory only"
                )
                log.error(
                    "spool unavailable: events held in memory only",
                    table=self.table_id,
                    spool=str(self.spool_path),
                    error=str(exc),
                    pending=len(self._pending),
                )
            self._notify()
            return
        self._spooled += len(todo)
        self._notify()

    def _clear_spool(self) -> None:
        if self.spool_path is None:
            return
        try:
            with open(self.spool_path, "w", encoding="utf-8") as fh:
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            log.error("could not clear the spool", spool=str(self.spool_path), error=str(exc))
        self._spooled = 0


def _read_spool(path: Path, table_id: str) -> list[ChainRecord]:
    """The records in a spool file; a torn last line (a crash mid-write) is dropped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"spool {path}: cannot read: {exc}") from exc
    out: list[ChainRecord] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = ChainRecord.from_row(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            if number >= len(lines) - 1 and not text.endswith("\n"):
                log.warning("spool: torn last line dropped", spool=str(path), line=number)
                break
            raise StoreError(f"spool {path} line {number}: not a spooled event: {exc}") from exc
        if record.table_id != table_id:
            raise StoreError(f"spool {path} line {number}: names table {record.table_id!r}")
        out.append(record)
    return out


def open_tables(store: Store, **options: Any) -> dict[str, Recorder]:
    """Restart every table the store holds (each rebuilt by replaying its events).

    ``options`` are passed to :meth:`Recorder.open` (``on_status``, ``retry_every``, ...).
    """
    return {tid: Recorder.open(store, table_id=tid, **options) for tid in store.table_ids()}
