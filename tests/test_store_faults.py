"""The store locked, full or without a spool: durable or refused, never lost, never reordered.

A database that refuses a write sends the event to the table's spool (fsynced: still
acknowledged); a spool that refuses too makes the event not durable: refused, not applied,
and the recorder down until the store is back. Each case is checked against a replay of the
events the test meant to be stored, worked out from the script, not from the recorder.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from controller.events import parse_event
from controller.replay import replay_dicts
from controller.store.db import StoreDown, StoreError
from controller.store.recorder import Recorder, StoreStatus
from controller.store.repository import Store
from controller.store.spool import Spool
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


def bodies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [parse_event(e).to_dict() for e in events]


def stored_bodies(store: Store) -> list[dict[str, Any]]:
    return [r.event() for r in store.records("T1")][1:]


def test_a_locked_database_spools_each_event_and_writes_them_in_order_when_free(
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
            # Durable in the spool (acknowledged), not in the database yet.
            assert [r.seq for r in held] == list(range(5, 12))
            assert not any(r.stored for r in held)
            assert status.state == "spooling" and status.spooled == 7
            assert "locked" in status.reason
            assert rec.flush() is False  # still locked
        assert [entry["event"] for entry in logs if entry["log_level"] == "error"] == [
            "audit database unavailable: events kept in the spool"
        ]
        assert statuses[0].state == "spooling"
        spool = tmp_path / "table.db.T1.spool"
        assert spool.read_bytes().rstrip(b"\0").count(b"\n") == 7
        assert stored_bodies(store) == bodies(events[1:5])
        # The table went on meanwhile: the spooled events were applied.
        assert rec.table.result() == replay_dicts(events[:12])
        assert rec.flush() is True
        assert rec.status().ok and statuses[-1].ok
        assert rec.record(events[12]).stored
        rec.close()
        assert stored_bodies(store) == bodies(events[1:13])
        assert verify_store(store).ok  # derived rows written with their spooled events
        assert spool.read_bytes().strip(b"\0") == b""  # cleared, the reserve kept
        assert spool.stat().st_size >= 1 << 20


def test_the_retry_thread_writes_spooled_events_without_waiting_for_the_next(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        back = threading.Event()
        rec = Recorder.open(
            store, events[0], retry_every=0.05, on_status=lambda s: back.set() if s.ok else None
        )
        with locked(db):
            for e in events[1:6]:
                rec.record(e)
            assert rec.status().state == "spooling"
        assert back.wait(10), "the spooled events were not written after the lock was released"
        assert [r.seq for r in store.records("T1")] == list(range(6))
        rec.close()
        assert verify_store(store).ok


def test_events_spooled_when_the_process_dies_are_recovered_at_restart(
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
    with Store.open(f"sqlite:///{db}") as store:
        assert verify_store(store).ok  # what the database holds verifies as it is
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


def test_without_a_spool_a_refused_event_is_not_durable_not_applied_and_play_stops(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    statuses: list[StoreStatus] = []
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(
            store, events[0], spool=None, retry_every=None, on_status=statuses.append
        )
        for e in events[1:6]:
            rec.record(e)
        before = replay_dicts(events[:6])
        with locked(db):
            with pytest.raises(StoreDown, match="locked"):
                rec.record(events[6])  # applied, its commit refused: taken back
            assert rec.seq == 5
            with pytest.raises(StoreDown):
                rec.record(events[6])  # refused at once while down
            assert rec.status().halted and statuses[-1].halted
            assert rec.flush() is False
        assert rec.table.result() == before  # the refused event left no trace
        assert rec.flush() is True
        assert rec.status().ok and statuses[-1].ok
        for e in events[6:]:
            assert rec.record(e).stored
        rec.close()
        assert stored_bodies(store) == bodies(events[1:])
        assert rec.table.result() == replay_dicts(events)
        assert verify_store(store).ok


def test_a_second_table_line_for_a_new_table_that_cannot_be_stored_refuses_to_start(
    tmp_path: Path,
) -> None:
    line = {"type": "table", "game": "pontoon-nz-2000", "table_id": "T1", "boxes": 7}
    line |= {"min_bet": 5, "max_bet": 1000}
    db = tmp_path / "table.db"
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store, locked(db):
        with pytest.raises(StoreDown, match="cannot start"):
            Recorder.open(store, line, spool=None, retry_every=None)
        rec = Recorder.open(store, line, retry_every=None)  # with a spool it can
        assert rec.status().state == "spooling" and rec.seq == 0
        rec.close()


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs mounted for the test (root only: the test says so otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (a full disk)")
    where = tmp_path / "disk"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(directory: Path) -> Path:
    """Fill a filesystem to the last byte; returns the filler file."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (1 << 16, 4096, 512, 64, 1):
            try:
                while fh.write(b"\xff" * size):
                    pass
            except OSError:
                pass
    return filler


def test_a_full_disk_spools_into_the_reserve_then_refuses_and_recovers_in_order(
    tiny_disk: Path, store_shift_events: Shift
) -> None:
    db = tiny_disk / "table.db"
    events = store_shift_events(8)
    statuses: list[StoreStatus] = []
    with Store.open(f"sqlite:///{db}") as store:
        rec = Recorder.open(
            store, events[0], retry_every=None, spool_reserve=4096, on_status=statuses.append
        )
        for e in events[1:4]:
            assert rec.record(e).stored
        filler = fill(tiny_disk)
        acked: list[int] = []
        refused_at = None
        for index, e in enumerate(events[4:], start=4):
            try:
                done = rec.record({**e, "note": "x" * 200})
            except StoreDown as exc:
                refused_at = index
                assert "full" in str(exc) or "space" in str(exc)
                break
            acked.append(done.seq)
        assert refused_at is not None, "the spool's reserve never ran out"
        assert acked, "the reserve took nothing"
        assert rec.status().halted and "spool" in rec.status().reason
        state = rec.table.result()
        assert state == replay_dicts([*events[:4], *events[4:refused_at]])
        with pytest.raises(StoreDown):
            rec.record(events[refused_at])
        filler.unlink()
        assert rec.flush() is True
        assert statuses[-1].ok
        for e in events[refused_at : refused_at + 5]:
            assert rec.record(e).stored
        rec.close()
        want = [*events[1:4], *({**e, "note": "x" * 200} for e in events[4:refused_at])]
        want += events[refused_at : refused_at + 5]
        assert stored_bodies(store) == bodies(want)
        assert verify_store(store).ok


def test_a_spool_refuses_damage_but_drops_a_torn_last_line(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    with Store.open(f"sqlite:///{db}", busy_timeout_ms=20) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        with locked(db):
            for e in events[1:5]:
                rec.record(e)
    spool = tmp_path / "table.db.T1.spool"
    text = spool.read_bytes().rstrip(b"\0")
    lines = text.split(b"\n")[:-1]
    assert len(lines) == 4
    # A crash in the middle of writing the fifth line: never acknowledged, dropped.
    with open(spool, "r+b") as fh:
        fh.seek(len(text))
        fh.write(lines[0][:40])
    opened, records = Spool.open(spool, "T1")
    opened.close()
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert spool.read_bytes().rstrip(b"\0") == text  # the torn bytes zeroed
    # A line changed before the end is damage: the table refuses to start on it.
    damaged = text.replace(lines[1], lines[1][:-5] + b"#####", 1)
    spool.write_bytes(damaged)
    with Store.open(f"sqlite:///{db}") as store, pytest.raises(StoreError, match="line 2"):
        Recorder.open(store, table_id="T1", retry_every=None)
    spool.write_bytes(text.replace(b'"seq": 3', b'"seq": 7', 1))
    broken = pytest.raises(StoreError, match="does not continue")
    with Store.open(f"sqlite:///{db}") as store, broken:
        Recorder.open(store, table_id="T1", retry_every=None)


def test_the_status_listener_is_called_without_the_recorders_lock_held(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    # The table service takes its own lock in the listener and holds it while recording:
    # a listener called under the recorder's lock (from the retry thread) could deadlock.
    db = tmp_path / "table.db"
    events = store_shift_events(1)
    calls: list[tuple[str, bool]] = []  # (state, recorder lock free)
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
            calls.append((status.state, free[0]))

        rec = Recorder.open(store, events[0], retry_every=0.05, on_status=listener)
        holder.append(rec)
        with locked(db):
            rec.record(events[1])
        for _ in range(200):
            if calls and calls[-1][0] == "ok":
                break
            threading.Event().wait(0.05)
        rec.close()
    assert [state for state, _ in calls] == ["spooling", "ok"]
    assert all(free for _, free in calls)
