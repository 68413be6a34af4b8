"""The floor database unreachable: refused, cut mid-transaction, its answer lost, the
process killed meanwhile. Every acknowledged event reaches PostgreSQL once it is back.

The recorder talks to the real PostgreSQL through a proxy the test breaks (see
``store_proxy``); what the database holds is read straight from it, not through the proxy.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from store_proxy import PgProxy

from controller.events import parse_event
from controller.replay import replay_dicts
from controller.store.db import StoreDown
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.verify import verify_store

Shift = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def proxy() -> Iterator[PgProxy]:
    p = PgProxy()
    yield p
    p.stop()


def bodies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [parse_event(e).to_dict() for e in events]


def in_database(url: str) -> list[dict[str, Any]]:
    with Store.open(url) as store:
        return [r.event() for r in store.records("T1")][1:]


def test_a_refused_connection_spools_and_the_events_reach_the_database_when_it_is_back(
    store_pg_url: str, proxy: PgProxy, tmp_path: Path, store_shift_events: Shift
) -> None:
    events = store_shift_events(2)
    with Store.open(proxy.url(store_pg_url)) as store:
        rec = Recorder.open(store, events[0], spool=tmp_path / "T1.spool", retry_every=None)
        for e in events[1:6]:
            assert rec.record(e).stored
        proxy.stop()
        spooled = [rec.record(e) for e in events[6:14]]
        assert [r.seq for r in spooled] == list(range(6, 14))
        assert not any(r.stored for r in spooled)
        assert rec.status().state == "spooling"
        assert rec.flush() is False
        assert "refused" in rec.status().reason or "connect" in rec.status().reason
        assert in_database(store_pg_url) == bodies(events[1:6])
        proxy.start()
        assert rec.flush() is True, rec.status()
        assert rec.record(events[14]).stored
        rec.close()
    assert in_database(store_pg_url) == bodies(events[1:15])
    with Store.open(store_pg_url) as direct:
        assert verify_store(direct).ok


def test_a_transaction_cut_before_its_commit_is_spooled_and_written_once(
    store_pg_url: str, proxy: PgProxy, tmp_path: Path, store_shift_events: Shift
) -> None:
    events = store_shift_events(1)
    with Store.open(proxy.url(store_pg_url)) as store:
        rec = Recorder.open(store, events[0], spool=tmp_path / "T1.spool", retry_every=None)
        for e in events[1:4]:
            rec.record(e)
        proxy.arm("cut_at_commit")
        cut = rec.record(events[4])
        assert proxy.fired == ["cut_at_commit"]
        assert not cut.stored and rec.status().state == "spooling"
        assert in_database(store_pg_url) == bodies(events[1:4])  # rolled back by the server
        assert rec.flush() is True
        rec.close()
    assert in_database(store_pg_url) == bodies(events[1:5])
    with Store.open(store_pg_url) as direct:
        assert verify_store(direct).ok


def test_a_commit_whose_answer_was_lost_is_written_once(
    store_pg_url: str, proxy: PgProxy, tmp_path: Path, store_shift_events: Shift
) -> None:
    events = store_shift_events(1)
    with Store.open(proxy.url(store_pg_url)) as store:
        rec = Recorder.open(store, events[0], spool=tmp_path / "T1.spool", retry_every=None)
        for e in events[1:4]:
            rec.record(e)
        proxy.arm("lose_commit_answer")
        lost = rec.record(events[4])
        assert proxy.fired == ["lose_commit_answer"]
        assert not lost.stored  # the recorder could not know: it spooled the event too
        assert in_database(store_pg_url) == bodies(events[1:5])  # the server committed it
        rec.record(events[5])
        assert rec.flush() is True
        rec.close()
    assert in_database(store_pg_url) == bodies(events[1:6])  # once, in order
    with Store.open(store_pg_url) as direct:
        assert verify_store(direct).ok


def test_with_the_database_and_the_spool_refusing_nothing_is_acknowledged_or_applied(
    store_pg_url: str, proxy: PgProxy, store_shift_events: Shift
) -> None:
    events = store_shift_events(1)
    with Store.open(proxy.url(store_pg_url)) as store:
        rec = Recorder.open(store, events[0], spool=None, retry_every=None)
        for e in events[1:6]:
            rec.record(e)
        proxy.stop()
        with pytest.raises(StoreDown):
            rec.record(events[6])
        with pytest.raises(StoreDown):
            rec.record(events[6])
        assert rec.status().halted
        assert rec.flush() is False  # the engine cannot even be rebuilt while it is down
        proxy.start()
        assert rec.flush() is True
        assert rec.table.result() == replay_dicts(events[:6])  # the refused event taken back
        for e in events[6:]:
            assert rec.record(e).stored
        assert rec.table.result() == replay_dicts(events)
        rec.close()
    assert in_database(store_pg_url) == bodies(events[1:])


def test_events_spooled_while_the_database_is_cut_survive_a_kill(
    store_pg_url: str, proxy: PgProxy, tmp_path: Path, store_shift_events: Shift
) -> None:
    events = store_shift_events(3)
    spool = tmp_path / "T1.spool"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the table's process
        try:
            os.close(read_end)
            store = Store.open(proxy.url(store_pg_url))
            rec = Recorder.open(store, events[0], spool=spool, retry_every=None)
            for e in events[1:]:
                done = rec.record(e)
                os.write(write_end, f"{done.seq}\n".encode())
                time.sleep(0.01)
            time.sleep(60)
        finally:
            os._exit(3)
    os.close(write_end)
    acks: list[int] = []
    buffer = b""
    cut_at = None
    deadline = time.monotonic() + 30
    while len(acks) < 40 and time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], 1)
        if ready:
            buffer += os.read(read_end, 4096)
            *lines, buffer = buffer.split(b"\n")
            acks.extend(int(x) for x in lines if x)
        if cut_at is None and len(acks) >= 10:
            proxy.stop()  # the floor database gone in the middle of play
            cut_at = len(acks)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read_end)
    assert len(acks) >= 40, "the table stopped acknowledging after the cut"
    stored = in_database(store_pg_url)
    assert len(stored) < acks[-1], "nothing was left to the spool"
    with Store.open(store_pg_url) as direct:
        assert verify_store(direct).ok  # what the database holds verifies as the kill left it
        again = Recorder.open(direct, table_id="T1", spool=spool, retry_every=None)
        assert again.status().ok and again.seq >= acks[-1]
        assert again.table.result() == replay_dicts(events[: again.seq + 1])
        again.close()
        assert verify_store(direct).ok
    assert in_database(store_pg_url) == bodies(events[1 : again.seq + 1])


def test_twenty_tables_write_to_one_floor_database_at_once(
    store_pg_url: str, tmp_path: Path, store_shift_events: Shift
) -> None:
    # Each table its own recorder (one held connection each), all opening the empty floor
    # database and committing at the same time: every table's chain is its own, complete and
    # verified, and no event is lost.
    import threading

    scripts = {f"T{n:02d}": store_shift_events(2, f"T{n:02d}") for n in range(20)}
    errors: list[BaseException] = []
    start = threading.Barrier(20)

    def table(table_id: str) -> None:
        try:
            with Store.open(store_pg_url) as store:
                rec = Recorder.open(
                    store, scripts[table_id][0], spool=tmp_path / f"{table_id}.spool"
                )
                start.wait(timeout=60)
                for e in scripts[table_id][1:]:
                    assert rec.record(e).stored
                rec.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=table, args=(t,)) for t in scripts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    with Store.open(store_pg_url) as store:
        assert store.table_ids() == sorted(scripts)
        report = verify_store(store)
        assert report.ok, report.problem
        assert report.events == sum(len(s) for s in scripts.values())
        for table_id, script in scripts.items():
            assert [r.event() for r in store.records(table_id)][1:] == bodies(script[1:])
