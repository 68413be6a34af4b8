"""The live table's recorder: nothing is acknowledged that is not durable.

For each event the table hears, :meth:`Recorder.record`

1. checks it with the engine's parser (a malformed event is refused; nothing is stored);
2. chains it (sequence number, previous hash, SHA-256) and applies it to the round engine;
3. commits it *with every row derived from it* (flags, settlements, rounds, shoes) in one
   transaction on the recorder's one held connection (SQLite: WAL, ``synchronous=FULL``);
4. returns only once the event is durable.

**When the database refuses** (locked, disk full, connection lost) the event goes to the
table's local :mod:`spool <controller.store.spool>` instead, fsynced, and is still
acknowledged; the recorder is then *spooling*: each further event is written to the spool
before it is applied, the store shows as at fault, and the retry thread writes the spooled
events to the database, in order and with their derived rows, once it takes writes again.

**When the spool cannot take it either**, the event is *not durable*: :meth:`record` raises
:class:`~controller.store.db.StoreDown` and the recorder is *down* — every further event is
refused the same way, before it is applied, until the retry thread finds the database (or the
spool) taking writes again. The caller decides what a refusal means (the table service
refuses a tap, and keeps a card that physically left the shoe in memory, showing it so).
An event applied before its commit failed is taken back by rebuilding the engine from what
is durable, so the table never shows an event that is not durable.

A restart (:meth:`Recorder.open`) replays the stored events, then the spool's. It never
writes a derived row the database lacks for a stored event: events and their rows commit
together, so a missing row is tampering, for ``floorctl verify`` to report.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy.exc import IntegrityError

from controller.engine import Applied, Table
from controller.store import checkpoint
from controller.store.canonical import GENESIS, ChainRecord
from controller.store.clockwatch import ClockWatch, Step
from controller.store.db import StoreDown, StoreError, describe, is_transient
from controller.store.fold import Fold, event_body, setup_body
from controller.store.repository import Derived, Store, table_row_for
from controller.store.restore import replay_table
from controller.store.spool import DEFAULT_RESERVE, Spool, default_spool
from controller.store.writer import Writer

if TYPE_CHECKING:
    from controller.store.heads import HeadLog
    from controller.store.keys import SigningKey

log = structlog.get_logger("floorctl.store")

# Spooled events written to the database per transaction when it is back.
FLUSH_BATCH = 500


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StoreStatus:
    """What the dealer's screen (and ``STATUS=``) shows about the audit store.

    ``state``: ``ok``; ``spooling`` (the database refuses; events are durable in the spool
    and play goes on); ``down`` (neither takes events: play is halted).
    """

    state: str = "ok"
    reason: str = ""
    since: str | None = None  # when the fault began
    spooled: int = 0  # events durable only in the spool so far
    spool: str | None = None  # the spool file

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def halted(self) -> bool:
        return self.state == "down"

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "reason": self.reason,
            "since": self.since,
            "spooled": self.spooled,
            "spool": self.spool,
        }


@dataclass(frozen=True)
class Recorded:
    """One durable event: its place in the chain, whether the database holds it yet (else
    the spool does), and what the engine made of it."""

    seq: int
    hash: str
    stored: bool
    applied: Applied


AUTO = "auto"


class Recorder:
    """One table's single writer. Use :meth:`open`; thread-safe."""

    def __init__(
        self,
        store: Store,
        fold: Fold,
        head: tuple[int, str],
        *,
        spool: Spool | None,
        clock: Callable[[], str],
        on_status: Callable[[StoreStatus], None] | None,
        retry_every: float | None,
        checkpoints: checkpoint.Checkpointer | None = None,
        keep_rounds: int | None = checkpoint.KEEP_ROUNDS,
        watch: ClockWatch | None = None,
    ) -> None:
        self.store = store
        self.writer: Writer = store.writer()
        self.fold = fold
        self.table_id = fold.table_id
        self._seq, self._hash = head
        self.spool = spool
        self.clock = clock
        self.watch = watch or ClockWatch()  # the wall clock against the monotonic one
        self._watch_restored = True  # False: the watch still lacks the last stored event's time
        self.on_status = on_status
        self.retry_every = retry_every
        # Checkpoints are the last restored from, or the head: the next is due from there.
        self.checkpoints = checkpoints or checkpoint.Checkpointer()
        self.checkpoints.last = max(self.checkpoints.last, fold.restored_from or 0)
        self.keep_rounds = keep_rounds
        self._lock = threading.RLock()
        self._pending: list[tuple[ChainRecord, Derived]] = []  # in the spool, not the database
        self._table_row: dict[str, Any] | None = None  # goes with a pending table line
        self._state = "ok"
        self._reason = ""
        self._since: str | None = None
        self._stale = False  # the engine holds an event that is not durable
        self._broken: str | None = None  # refused for good (another writer on the table)
        self._status_dirty = False
        self._closed = False
        self._wake = threading.Event()
        self._retry_thread: threading.Thread | None = None
        self.heads: HeadLog | None = None  # with a signing key: the signed heads (issue 12)
        self._head_thread: threading.Thread | None = None

    @property
    def spool_path(self) -> Path | None:
        return self.spool.path if self.spool is not None else None

    # ----- opening ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: Store,
        table_line: Mapping[str, Any] | None = None,
        *,
        table_id: str | None = None,
        spool: Path | str | None = AUTO,
        spool_reserve: int = DEFAULT_RESERVE,
        clock: Callable[[], str] = utc_now,
        on_status: Callable[[StoreStatus], None] | None = None,
        retry_every: float | None = 1.0,
        signing_key: SigningKey | None = None,
        head_every: float | None = None,
        checkpoint_every: int = checkpoint.DEFAULT_EVERY,
        keep_rounds: int | None = checkpoint.KEEP_ROUNDS,
        watch: ClockWatch | None = None,
    ) -> Recorder:
        """Start a new table from its table line, or restart one from the store.

        With ``table_line``, a table already in the store must have been set up alike; its
        events are replayed, then its spool's. Without it, ``table_id`` names a table the
        store must hold. ``spool``: the spool file (``AUTO``: :func:`default_spool`; None: no
        spool, so any database fault refuses events). ``checkpoint_every``: events between
        checkpoints at most; ``keep_rounds``: settled rounds the engine keeps (None: all, as a
        replay document needs; the restart then replays from the table line, since a
        checkpoint holds only the last few). Raises :class:`StoreError` if the
        stored chain does not verify or the table line cannot be made durable, and
        ``ScenarioError`` if the table line is malformed.

        With ``signing_key`` the recorder appends signed heads of the table's Merkle log (see
        :mod:`controller.store.heads`): at each round's end, once an event has waited
        ``head_every`` seconds (default ``HEAD_EVERY``, 60), and at close.

        ``watch``: how the wall clock is watched (:mod:`controller.store.clockwatch`; tests
        give one with a fake monotonic clock).
        """
        body: dict[str, Any] | None = None
        if table_line is not None:
            _setup, body = setup_body(table_line)
            table_id = str(body["table_id"])
        if table_id is None:
            raise ValueError("Recorder.open needs a table line or a table id")
        spool_path = default_spool(store, table_id) if spool == AUTO else spool
        opened: Spool | None = None
        spooled: list[ChainRecord] = []
        if spool_path is not None:
            opened, spooled = Spool.open(Path(spool_path), table_id, reserve=spool_reserve)
        try:
            fold, head = replay_table(store, table_id, body, spooled, keep_rounds=keep_rounds)
            rec = cls(
                store,
                fold,
                head,
                spool=opened,
                clock=clock,
                on_status=on_status,
                retry_every=retry_every,
                checkpoints=checkpoint.Checkpointer(checkpoint_every),
                keep_rounds=keep_rounds,
                watch=watch,
            )
            if signing_key is not None:
                from controller.store.heads import HEAD_EVERY, HeadLog

                rec.heads = HeadLog(
                    store,
                    table_id,
                    signing_key,
                    clock=clock,
                    every=HEAD_EVERY if head_every is None else head_every,
                )
            if fold.restored_from is not None:
                log.info(
                    "table restored from checkpoint",
                    table=table_id,
                    checkpoint=fold.restored_from,
                    replayed=head[0] - fold.restored_from,
                )
            rec._adopt(spooled)
            if rec._seq < 0:
                assert body is not None
                rec._start(body)
            else:
                rec._watch_restored = False  # read at the first event (a restart reads no more)
        except BaseException:
            if opened is not None:
                opened.close()
            raise
        with rec._lock:
            rec._flush_pending()
            if rec._state != "ok":
                rec._start_retry()
            rec._sign_head()
        rec._start_heads()
        rec._deliver()
        if spooled:
            log.warning(
                "table restored with spooled events",
                table=table_id,
                head=rec._seq,
                spooled=len(spooled),
                store=store.name,
                spool=str(spool_path),
            )
        return rec

    def _adopt(self, spooled: list[ChainRecord]) -> None:
        """Take the spooled events the database lacks, checking that they continue the chain."""
        for record in spooled:
            if record.seq <= self._seq:
                continue  # written to the database before the spool was cleared
            if record.seq != self._seq + 1 or record.prev_hash != self._hash:
                raise StoreError(
                    f"spool {self.spool_path}: event {record.seq} does not continue table "
                    f"{self.table_id}'s chain at event {self._seq}"
                )
            if record.recompute() != record.hash:
                raise StoreError(
                    f"spool {self.spool_path}: event {record.seq} does not match its hash"
                )
            if record.seq == 0:
                self._table_row = table_row_for(record.event(), record.recorded_at)
                derived = Derived()
            else:
                derived = self._apply_spooled(record)
            self._pending.append((record, derived))
            self._seq, self._hash = record.seq, record.hash
        if self._pending:
            self._state = "spooling"
            self._reason = "events from the spool not yet in the database"
            self._since = self.clock()

    def _apply_spooled(self, record: ChainRecord) -> Derived:
        """Apply a spooled event; its derived rows, with the checkpoint it names (taken
        again from the engine, which must give the digest the event names)."""
        named = checkpoint.named(record.body)
        taken = None
        if named is not None:
            taken = checkpoint.Checkpoint.of(self.fold)
            if taken.digest != named or taken.seq != record.seq - 1:
                raise StoreError(
                    f"spool {self.spool_path}: event {record.seq} names a checkpoint that the "
                    "table's state before it does not give"
                )
        event, _applied, derived = self.fold.apply(record.seq, record.event())
        self.checkpoints.done(event.type, taken)
        return checkpoint.with_checkpoint(derived, taken)

    def _start(self, body: dict[str, Any]) -> None:
        """A new table: its table line is the chain's first record, durable before play."""
        record = ChainRecord.make(self.table_id, 0, body, GENESIS, self.clock())
        row = table_row_for(body, record.recorded_at)
        try:
            self.writer.commit([(record, Derived())], row)
        except Exception as exc:
            if not is_transient(exc):
                raise StoreError(f"{self.store.name}: {describe(exc)}") from exc
            problem = self._spool_write([record])
            if problem is not None:
                raise StoreDown(
                    f"table {self.table_id} cannot start: the database ({describe(exc)}) "
                    f"and the spool ({problem}) refused its table line"
                ) from exc
            self._pending.append((record, Derived()))
            self._table_row = row
            self._enter("spooling", describe(exc))
        self._seq, self._hash = 0, record.hash
        self.watch.restored(record.recorded_at)

    def _last_recorded_at(self) -> str | None:
        """When the newest durable event was recorded (the spool's, else the database's)."""
        if self._pending:
            return self._pending[-1][0].recorded_at
        stored = self.store.records(self.table_id, after=self._seq - 1, upto=self._seq)
        return stored[-1].recorded_at if stored else None

    # ----- recording ----------------------------------------------------------------------

    @property
    def table(self) -> Table:
        return self.fold.table

    @property
    def seq(self) -> int:
        """The sequence number of the last durable event (0: only the table line)."""
        return self._seq

    @property
    def head_hash(self) -> str:
        return self._hash

    def record(self, event: Mapping[str, Any], *, recorded_at: str | None = None) -> Recorded:
        """Record one event durably and apply it.

        Raises ``ScenarioError`` if it is malformed, :class:`StoreDown` if it could not be
        made durable (then it is not applied), and :class:`StoreError` if the store refused
        it for good. An event may name an earlier one it corrects: ``"correction_of": seq``.
        """
        try:
            return self._record(event, recorded_at)
        finally:
            self._deliver()

    def _record(self, event: Mapping[str, Any], recorded_at: str | None) -> Recorded:
        """Record at ``recorded_at`` as given (an import), or at the wall clock's time, after a
        ``clock`` event if the wall clock was stepped since the last event."""
        with self._lock:
            if recorded_at is not None:
                done = self._record_one(event, recorded_at)
                self.watch.restored(recorded_at)
                return done
            if not self._watch_restored:
                self._watch_restored = True
                self.watch.restored(self._last_recorded_at())
            step, stamp, mono = self.watch.check(self.clock())
            if step is not None:
                self._record_step(step)
                self.watch.seen(step.now, mono)
            done = self._record_one(event, stamp)
            self.watch.seen(stamp, mono)
            return done

    def _record_step(self, step: Step) -> None:
        """The wall clock was stepped: said in the log, and in the record as a ``clock``
        event (whose flag the dealer's screen shows) before the event that found it."""
        log.warning(
            "the wall clock was stepped: recorded as a clock event",
            table=self.table_id,
            way="back" if step.back else "forward",
            step_seconds=round(step.step, 3),
            last_event_at=step.was,
            now=step.now,
            elapsed=None if step.elapsed is None else round(step.elapsed, 3),
        )
        self._record_one(step.event(), step.now)

    def _record_one(self, event: Mapping[str, Any], recorded_at: str) -> Recorded:
        with self._lock:
            if self._closed:
                raise StoreError(f"table {self.table_id}: the recorder is closed")
            if self._broken is not None:
                raise StoreError(self._broken)
            if self._stale and self._state != "down":
                self._rebuild()
            if self._state == "down" or self._stale:
                raise StoreDown(self._reason)
            seq = self._seq + 1
            parsed, body = event_body(checkpoint.without_key(event), seq)
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
            body, taken = self.checkpoints.prepare(self.fold, body)
            record = ChainRecord.make(self.table_id, seq, body, self._hash, recorded_at, corrects)
            if self._state == "spooling":
                # Durable first, then applied: a spool that refuses leaves nothing to take back.
                problem = self._spool_write([record])
                if problem is not None:
                    self._enter("down", f"{self._reason}; {problem}")
                    raise StoreDown(self._reason)
                applied, derived = self.fold.apply_event(seq, parsed)[1:]
                self._pending.append((record, checkpoint.with_checkpoint(derived, taken)))
                self.checkpoints.done(parsed.type, taken)
                self._seq, self._hash = seq, record.hash
                self._notify()
                return Recorded(seq, record.hash, False, applied)
            applied, derived = self.fold.apply_event(seq, parsed)[1:]
            derived = checkpoint.with_checkpoint(derived, taken)
            try:
                self.writer.commit([(record, derived)])
            except IntegrityError as exc:
                self._stale = True
                raise StoreError(self._break(self._conflict_message(seq, exc))) from exc
            except Exception as exc:
                if not is_transient(exc):
                    self._stale = True
                    self._rebuild()
                    raise StoreError(
                        f"{self.store.name}: table {self.table_id} event {seq} refused: "
                        f"{describe(exc)}"
                    ) from exc
                reason = describe(exc)
                problem = self._spool_write([record])
                if problem is not None:
                    self._stale = True  # applied, not durable: taken back by a rebuild
                    self._enter("down", f"database: {reason}; {problem}")
                    self._start_retry()
                    raise StoreDown(self._reason) from exc
                self._enter("spooling", reason)
                self._pending.append((record, derived))
                self.checkpoints.done(parsed.type, taken)
                self._seq, self._hash = seq, record.hash
                return Recorded(seq, record.hash, False, applied)
            self.checkpoints.done(parsed.type, taken)
            self._seq, self._hash = seq, record.hash
            if self.heads is not None:
                self.heads.note(seq, record.hash)
                if applied.settled is not None:
                    self._sign_head(closes=applied.settled.round)
                elif self.heads.due():
                    self._sign_head()
            return Recorded(seq, record.hash, True, applied)

    def _break(self, reason: str) -> str:
        """An integrity fault (another writer, a row refused for good): halted until the
        table is restarted and its log looked at."""
        self._broken = reason
        self._enter("down", reason)
        return reason

    def _conflict_message(self, seq: int, exc: Exception) -> str:
        try:
            stored = self.store.records(self.table_id, after=seq - 1, upto=seq)
        except Exception:
            stored = []
        if stored:
            return (
                f"{self.store.name}: table {self.table_id} event {seq} is already stored with "
                "another hash: is another recorder writing this table?"
            )
        return f"{self.store.name}: table {self.table_id} event {seq}: {describe(exc)}"

    def history(self, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """The durable events after ``after`` (the table line is 0), as (sequence, event)."""
        with self._lock:
            pending = [(r.seq, r) for r, _ in self._pending]
            first_pending = pending[0][0] if pending else self._seq + 1
            top = min(self._seq, first_pending - 1)
        for record in self.store.iter_records(self.table_id, after=after, upto=top):
            yield record.seq, record.event()
        for seq, record in pending:
            if seq > after:
                yield seq, record.event()

    def latest(
        self, kinds: tuple[str, ...], upto: int, limit: int = 20
    ) -> list[tuple[int, dict[str, Any]]]:
        """The newest stored events of these types up to event ``upto``, oldest first."""
        return checkpoint.latest_events(self.store, self.table_id, kinds, upto, limit)

    # ----- the store's health -------------------------------------------------------------

    def status(self) -> StoreStatus:
        with self._lock:
            if self._broken is not None:
                return StoreStatus("down", self._broken, self._since)
            if self._state == "ok":
                return StoreStatus()
            return StoreStatus(
                self._state,
                self._reason,
                self._since,
                len(self._pending),
                str(self.spool_path) if self.spool_path else None,
            )

    def flush(self) -> bool:
        """Try to bring the store back now; True when the database holds everything."""
        try:
            return self._recover()
        finally:
            self._deliver()

    def close(self) -> None:
        try:
            self._recover()
        except Exception as exc:
            log.error("store: last flush failed", table=self.table_id, error=str(exc))
        with self._lock:
            self._sign_head()
            self._closed = True
            self._wake.set()
            if self._pending:
                log.error(
                    "store closed with events only in the spool",
                    table=self.table_id,
                    spooled=len(self._pending),
                    spool=str(self.spool_path),
                )
            self.writer.close()
            if self.heads is not None:
                self.heads.close()
            if self.spool is not None:
                self.spool.close()
        self._deliver()
        thread = self._retry_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _enter(self, state: str, reason: str) -> None:
        """Change state (``ok``, ``spooling`` or ``down``), logging and telling the screen."""
        before = self._state
        self._state, self._reason = state, reason
        if state == "ok":
            self._since = None
        elif self._since is None:
            self._since = self.clock()
        if state == before:
            self._notify()
            return
        where = str(self.spool_path) if self.spool_path else None
        if state == "spooling":
            log.error(
                "audit database unavailable: events kept in the spool",
                table=self.table_id,
                store=self.store.name,
                reason=reason,
                spool=where,
            )
        elif state == "down":
            log.critical(
                "STORE DOWN: neither the database nor the spool takes events; play halted",
                table=self.table_id,
                store=self.store.name,
                reason=reason,
                spool=where,
            )
        else:
            log.warning(
                "audit store back: every event is in the database",
                table=self.table_id,
                store=self.store.name,
                was=before,
            )
        if state != "ok":
            self._start_retry()
        else:
            self._sign_head()  # the spooled events are in the database: sign them
        self._notify()

    # ----- coming back --------------------------------------------------------------------

    def _recover(self) -> bool:
        """One attempt to bring the store back (retry thread, flush, close)."""
        with self._lock:
            if self._closed or self._broken is not None:
                return False
            if self._stale:
                try:
                    self._rebuild()
                except StoreError as exc:
                    log.info("store: rebuild waits for the database", reason=str(exc))
                    return False
            if self._pending:
                self._flush_pending()
            elif self._state != "ok":
                try:
                    self.writer.probe()
                except Exception as exc:
                    if not is_transient(exc) and not isinstance(exc, StoreError):
                        raise
                    if self._state == "down" and self.spool is not None and self.spool.probe():
                        self._enter("spooling", f"{describe(exc)} (the spool has room again)")
                    else:
                        self._reason_update(describe(exc))
                    return False
                self._enter("ok", "")
            return self._state == "ok"

    def _reason_update(self, reason: str) -> None:
        if self._state == "down" and "spool" in self._reason:
            return  # keep saying why the spool failed too
        if reason and reason != self._reason:
            self._reason = reason
            self._notify()

    def _flush_pending(self) -> None:
        """Write spooled events to the database, in order, each with its derived rows."""
        while self._pending:
            batch = self._pending[:FLUSH_BATCH]
            row = self._table_row if batch[0][0].seq == 0 else None
            try:
                self.writer.commit(batch, row)
            except IntegrityError as exc:
                if not self._drop_stored(exc):
                    return
                continue
            except Exception as exc:
                if not is_transient(exc):
                    self._break(f"{self.store.name}: spooled events refused: {describe(exc)}")
                    return
                if self._state == "down" and self.spool is not None and self.spool.probe():
                    self._enter("spooling", describe(exc))
                else:
                    self._reason_update(describe(exc))
                return
            del self._pending[: len(batch)]
            if row is not None:
                self._table_row = None
            self._notify()
        if self.spool is not None:
            try:
                self.spool.clear()
            except OSError as exc:  # the records are in the database: a restart skips them
                log.error("could not clear the spool", spool=str(self.spool.path), error=str(exc))
        if self._state != "ok":
            self._enter("ok", "")

    def _drop_stored(self, exc: Exception) -> bool:
        """A flush said "already stored" (a commit whose answer was lost): drop what the
        database holds if it is ours; False (and broken) if it is not."""
        first = self._pending[0][0].seq
        stored = {r.seq: r.hash for r in self.store.iter_records(self.table_id, after=first - 1)}
        for record, _ in self._pending:
            if record.seq in stored and stored[record.seq] != record.hash:
                self._break(
                    f"{self.store.name}: table {self.table_id} event {record.seq} is already "
                    "stored with another hash: is another recorder writing this table?"
                )
                return False
        left = [(r, d) for r, d in self._pending if r.seq not in stored]
        if len(left) == len(self._pending):
            self._break(f"{self.store.name}: {describe(exc)}")
            return False
        if self._pending[0][0].seq == 0:
            self._table_row = None
        self._pending = left
        return True

    def _rebuild(self) -> None:
        """Rebuild the engine from what is durable (the database, then the spooled events),
        taking back an event that was applied but could not be made durable."""
        spooled = [record for record, _ in self._pending]
        fold, head = replay_table(
            self.store, self.table_id, None, spooled, keep_rounds=self.keep_rounds
        )
        for record in spooled:
            if record.seq <= head[0]:
                continue
            if record.seq > 0:
                fold.apply(record.seq, record.event())
            head = (record.seq, record.hash)
        if head[0] > self._seq:
            log.warning(
                "events stored after all (their commit's answer was lost)",
                table=self.table_id,
                upto=head[0],
            )
            self._seq, self._hash = head
        self.fold = fold
        self._stale = False
        self._notify()

    # ----- signed heads -------------------------------------------------------------------

    def _sign_head(self, closes: int | None = None) -> None:
        """Append a signed head over everything in the database, if there is anything new
        (never while events wait in the spool: the head is over the database's log);
        ``closes``: the round the last event ended (the head marks that round's end)."""
        with self._lock:
            heads = self.heads
            if heads is None or self._closed or self._pending or self._stale:
                return
            if self._state != "ok" or self._broken is not None or self._seq < 0:
                return
            heads.sign(self._seq, self._hash, closes)

    def _start_heads(self) -> None:
        """The timer that signs a head once an event has waited ``every`` seconds."""
        heads = self.heads
        if heads is None or self._head_thread is not None:
            return
        period = max(0.05, min(1.0, heads.every / 4))

        def loop() -> None:
            while not self._wake.wait(period):
                if self._closed:
                    return
                if heads.due():
                    try:
                        self._sign_head()
                    except Exception as exc:
                        log.error("signing a head failed", table=self.table_id, error=str(exc))

        self._head_thread = threading.Thread(
            target=loop, name=f"store-heads-{self.table_id}", daemon=True
        )
        self._head_thread.start()

    # ----- the spool ----------------------------------------------------------------------

    def _spool_write(self, records: list[ChainRecord]) -> str | None:
        """Append to the spool; None when done, else why not."""
        if self.spool is None:
            return "no spool"
        try:
            self.spool.append(records)
        except OSError as exc:
            return f"spool {self.spool.path}: {exc.strerror or exc}"
        return None

    # ----- telling the screen -------------------------------------------------------------

    def _notify(self) -> None:
        """Note that the status changed; :meth:`_deliver` tells the listener."""
        self._status_dirty = True

    def _deliver(self) -> None:
        """Tell ``on_status`` of a change, never while holding the recorder's lock (the
        listener may take the service's lock, which the service holds while recording)."""
        if not self._status_dirty:  # the usual case, read without the lock (set under it)
            return
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
            try:
                done = self._recover()
            except Exception as exc:
                log.error("audit store retry failed", table=self.table_id, error=str(exc))
                done = False
            self._deliver()
            if done or self._closed or self._broken is not None:
                return


def open_tables(store: Store, **options: Any) -> dict[str, Recorder]:
    """Restart every table the store holds (each rebuilt by replaying its events).

    ``options`` are passed to :meth:`Recorder.open` (``on_status``, ``retry_every``, ...).
    """
    return {tid: Recorder.open(store, table_id=tid, **options) for tid in store.table_ids()}
