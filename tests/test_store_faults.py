"""The store locked or the disk full: events are held in order, logged, shown, never lost."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from structlog.testing import capture_logs

from controller.events import parse_event
from controller.replay import replay_dicts
from controller.store.recorder import Recorder, StoreStatus
from controller.store.repository import Store
from controller.store.verify import verify_store

Shift = Callable[..., list[dict[str, Any]]]


@contextmanager
def locked(db: Path) -> Iterator[None]:
    """Another process's write transaction holding the SQLite database."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def stored_bodies(store: Store) -> list[dict[str, Any]]:
    return [r.event() for r in store.records("T1")]


def test_a_locked_database_holds_events_in_order_and_writes_them_when_free(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(2)
    statuses: list[StoreStatus] = []
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(store, events[0], retry_every=None, on_status=statuses.append)
        for e in events[1:5]:
            assert rec.record(e).stored
        with capture_logs() as logs, locked(db):
            held = [rec.record(e) for e in events[5:12]]
            status = rec.status()
        assert not any(r.stored for r in held)
        assert not status.ok and status.pending == 7 and status.spooled == 7
        assert "locked" in status.message
        assert [entry["event"] for entry in logs if entry["log_level"] == "error"] == [
            "audit store unavailable: holding events in order until it is back"
        ]
        assert statuses[0].ok is False
        # The table went on meanwhile: the held events were applied.
        assert rec.table.result() == replay_dicts(events[:12])
        assert rec.record(events[12]).stored
        assert rec.status().ok and statuses[-1].ok
        rec.close()
        want = [parse_event(e).to_dict() for e in events[1:13]]
        assert stored_bodies(store)[1:] == want
        assert verify_store(store).ok
        assert (tmp_path / "table.db.T1.spool").read_text() == ""


def test_the_retry_thread_writes_held_events_without_waiting_for_the_next(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        back = threading.Event()
        rec = Recorder.open(
            store,
            events[0],
            retry_every=0.05,
            on_status=lambda s: back.set() if s.ok else None,
        )
        with locked(db):
            for e in events[1:6]:
                rec.record(e)
            assert not rec.status().ok
        assert back.wait(10), "the held events were not written after the lock was released"
        assert rec.status().ok
        assert [r.seq for r in store.records("T1")] == list(range(6))
        rec.close()


def test_a_full_disk_holds_events_until_there_is_room(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(2)
    with Store.open(f"sqlite:///{db}") as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        for e in events[1:4]:
            rec.record(e)

        def cap(dbapi_conn: Any, _record: Any) -> None:
            pages = dbapi_conn.execute("PRAGMA page_count").fetchone()[0]
            dbapi_conn.execute(f"PRAGMA max_page_count = {pages}")

        sa.event.listen(store.engine, "connect", cap)
        store.engine.dispose()
        filler = "x" * 2000  # the longest note allowed: the free pages fill in a few events
        results = [rec.record({**e, "note": filler}) for e in events[4:9]]
        first_held = next(i for i, r in enumerate(results) if not r.stored)
        # Once the disk is full, every later event is held, none stored out of order.
        assert not any(r.stored for r in results[first_held:])
        assert "full" in rec.status().message
        sa.event.remove(store.engine, "connect", cap)
        store.engine.dispose()
        assert rec.flush()
        assert rec.status().ok
        rec.close()
        assert [r.seq for r in store.records("T1")] == list(range(9))
        assert verify_store(store).ok


def test_events_held_when_the_process_dies_are_recovered_from_the_spool(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(2)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        for e in events[1:6]:
            rec.record(e)
        with locked(db):
            for e in events[6:15]:
                rec.record(e)
            state = rec.table.result()
        # The process dies here: the recorder is never closed or flushed.
    assert (tmp_path / "table.db.T1.spool").read_text().count("\n") == 9
    with Store.open(f"sqlite:///{db}") as store:
        assert store.head("T1") is not None and store.head("T1")[0] == 5  # type: ignore[index]
        with capture_logs() as logs:
            again = Recorder.open(store, table_id="T1", retry_every=None)
        assert any(entry["event"] == "table restored with spooled events" for entry in logs)
        assert again.table.result() == state
        assert again.status().ok
        assert [r.seq for r in store.records("T1")] == list(range(15))
        for e in events[15:]:
            again.record(e)
        assert again.table.result() == replay_dicts(events)
        again.close()
        assert verify_store(store).ok


def test_events_are_kept_in_memory_when_the_spool_cannot_be_written(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(store, events[0], spool=tmp_path / "gone" / "spool", retry_every=None)
        with locked(db):
            for e in events[1:8]:
                rec.record(e)
            status = rec.status()
        assert status.pending == 7 and status.spooled == 0
        assert "memory only" in status.message
        assert rec.flush()
        rec.close()
        assert stored_bodies(store)[1:] == [parse_event(e).to_dict() for e in events[1:8]]


def test_the_status_listener_is_called_without_the_recorders_lock_held(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    # The table service takes its own lock in the listener and holds it while recording:
    # a listener called under the recorder's lock (from the retry thread) could deadlock.
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    calls: list[tuple[bool, bool]] = []  # (status ok, recorder lock free)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        holder: list[Recorder] = []

        def listener(status: StoreStatus) -> None:
            free: list[bool] = []

            def probe() -> None:
                got = holder[0]._lock.acquire(timeout=2)
                free.append(got)
                if got:
                    holder[0]._lock.release()

            t = threading.Thread(target=probe)
            t.start()
            t.join()
            calls.append((status.ok, free[0]))

        rec = Recorder.open(store, events[0], retry_every=0.05, on_status=listener)
        holder.append(rec)
        with locked(db):
            rec.record(events[1])
        deadline = threading.Event()
        for _ in range(200):
            if calls and calls[-1][0]:
                break
            deadline.wait(0.05)
        rec.close()
    assert [ok for ok, _ in calls] == [False, True]
    assert all(free for _, free in calls)
