"""SIGKILL the recording process at random moments of a scripted shift.

Each run is a real process (forked from the test, so it starts in milliseconds) that opens the
store, restarts the table from it and records the rest of the shift, acknowledging each event
on a pipe once ``record`` has returned (the event is then durable: committed, or in the
spool). The test kills it at a random moment of one of three kinds:

- ``random``: after a random number of acknowledgements plus a random delay (some kills land
  in the restart, some inside a commit);
- ``derived``: inside the derived-row writes of an event's transaction (the process says when
  it is about to insert an event's flags, settlements, rounds or shoes, then pauses there);
- ``spool`` (SQLite): with the database held locked by the test, so that the events go to the
  spool, and the kill lands while spooling;
- ``checkpoint``: inside the write of a checkpoint (the recorder takes one every few events
  here, so many transactions carry one; the process pauses before inserting it).

After each kill, *before any restart*: the stored events are exactly the script's first
events, every acknowledged event is stored or (spool runs) spooled, and ``verify`` passes on
the store as the kill left it. Then a restart must give exactly the state of a replay of the
script's first events through a fresh engine, and the restart starts from the newest
checkpoint stored (replaying only the events after it).

The suite runs 24 kills on SQLite and 8 on PostgreSQL; ``FLOORCTL_SLOW_CHECKS=1`` runs 200
and 60. ``FLOORCTL_CRASH_SEED`` chooses the moments.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.store import checkpoint
from controller.store.fold import Fold
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.spool import Spool, default_spool
from controller.store.verify import verify_store
from controller.store.writer import Writer

Shift = Callable[..., list[dict[str, Any]]]
SLOW = os.environ.get("FLOORCTL_SLOW_CHECKS") == "1"
SEED = int(os.environ.get("FLOORCTL_CRASH_SEED", "20261130"))
DERIVED_TABLES = ("INSERT INTO shoes", "INSERT INTO rounds", "INSERT INTO flags")
DERIVED_TABLES += ("INSERT INTO settlements",)
CHECKPOINT_INSERT = "INSERT INTO checkpoints"
CHECKPOINT_EVERY = 5  # events between checkpoints in these runs

pytestmark = pytest.mark.usefixtures("store_spool_dir")


class _PausingCursor:
    """The child's cursor: before each derived-row insert it says so on the pipe, and pauses."""

    def __init__(self, cursor: Any, ack: int, marks: tuple[str, ...]) -> None:
        self._cursor = cursor
        self._ack = ack
        self._marks = marks

    def _mark(self, sql: str) -> None:
        if sql.startswith(self._marks):
            os.write(self._ack, b"W\n")
            time.sleep(0.003)

    def execute(self, sql: str, *args: Any) -> Any:
        self._mark(sql)
        return self._cursor.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._mark(sql)
        return self._cursor.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _child(url: str, script: list[dict[str, Any]], ack: int, marks: tuple[str, ...]) -> None:
    if marks:
        connect = Writer._connect

        def pausing(self: Writer) -> None:
            connect(self)
            if not isinstance(self._cursor, _PausingCursor):
                self._cursor = _PausingCursor(self._cursor, ack, marks)

        Writer._connect = pausing  # type: ignore[method-assign]
    store = Store.open(url, busy_timeout_ms=20)
    rec = Recorder.open(store, script[0], retry_every=None, checkpoint_every=CHECKPOINT_EVERY)
    os.write(ack, b"R\n")
    for event in script[rec.seq + 1 :]:
        done = rec.record(event)
        os.write(ack, f"{done.seq} {'S' if done.stored else 'P'}\n".encode())
    os.write(ack, b"D\n")
    os._exit(0)


def _run_and_kill(
    url: str, script: list[dict[str, Any]], rng: random.Random, mode: str
) -> tuple[list[int], bool, bool]:
    """Start a recording process, kill it as ``mode`` says; its acknowledgements, whether it
    was killed, and whether the kill came inside a derived-row write."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the recording process
        os.close(read_end)
        try:
            marks = {"derived": DERIVED_TABLES, "checkpoint": (CHECKPOINT_INSERT,)}
            _child(url, script, write_end, marks.get(mode, ()))
        finally:
            os._exit(4)
    os.close(write_end)
    pausing = mode in ("derived", "checkpoint")
    want_acks = rng.choice([0, 0, 1, 1, 2, 3, 5, 8])
    acks: list[int] = []
    buffer = b""
    finished = inside = False
    deadline = time.monotonic() + 20
    while not finished and time.monotonic() < deadline:
        if len(acks) >= want_acks and not pausing:
            break
        ready, _, _ = select.select([read_end], [], [], 1)
        if not ready:
            continue
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line == b"D":
                finished = True
            elif line == b"W" and len(acks) >= want_acks:
                inside = True
            elif line[:1].isdigit():
                acks.append(int(line.split()[0]))
        if inside:
            break
    if not pausing:
        time.sleep(rng.uniform(0, 0.006))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    rest = buffer
    while chunk := os.read(read_end, 4096):
        rest += chunk
    os.close(read_end)
    acks.extend(int(line.split()[0]) for line in rest.split(b"\n") if line[:1].isdigit())
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert killed or os.WEXITSTATUS(status) == 0, f"recording process failed: status {status}"
    return acks, killed, inside and killed


def _kill_many(url: str, tmp_path: Path, script: list[dict[str, Any]], kills: int) -> None:
    rng = random.Random(SEED)
    reference = Fold("T1", script[0], keep_rounds=checkpoint.KEEP_ROUNDS)
    states = [reference.snapshot()]  # the replay's state after each event of the script
    bodies = []
    for seq, e in enumerate(script[1:], start=1):
        bodies.append(reference.apply(seq, e)[0].to_dict())
        states.append(reference.snapshot())
    sqlite = url.startswith("sqlite")
    modes = ["random", "derived", "checkpoint"] + (["spool"] if sqlite else [])
    killed_n = inside_n = in_checkpoint = spooled_n = shifts = acked_total = 0
    from_checkpoint = 0
    while killed_n < kills:
        mode = rng.choice(modes)
        db = Path(url.removeprefix("sqlite:///")) if sqlite else None
        blocker = None
        if mode == "spool" and db is not None and db.exists():
            blocker = sqlite3.connect(db, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
        try:
            acks, killed, inside = _run_and_kill(url, script, rng, mode)
        finally:
            if blocker is not None:
                blocker.execute("ROLLBACK")
                blocker.close()
        killed_n += killed
        inside_n += inside and mode == "derived"
        in_checkpoint += inside and mode == "checkpoint"
        acked_total += len(acks)
        where = (SEED, killed_n, mode, acks)
        with Store.open(url) as store:
            # The store as the kill left it, before anything restarts.
            head = store.head("T1")
            last = head[0] if head is not None else -1
            stored = store.records("T1")
            heard = [checkpoint.without_key(r.event()) for r in stored[1:]]
            assert heard == bodies[: max(last, 0)], where
            if last >= 0:
                report = verify_store(store)
                assert report.ok, (*where, report.problem)
            spool_path = default_spool(store, "T1")
            spool, spooled = Spool.open(spool_path, "T1") if spool_path.exists() else (None, [])
            if spool is not None:
                spool.close()
            durable = max([last, *(r.seq for r in spooled)])
            spooled_n += sum(1 for r in spooled if r.seq > last)
            assert all(seq <= durable for seq in acks), where
            if durable >= 0:
                newest = max((s for s, _ in checkpoint.stored(store, "T1")), default=None)
                first_spooled = min((r.seq for r in spooled), default=None)
                rec = Recorder.open(
                    store, table_id="T1", retry_every=None, checkpoint_every=CHECKPOINT_EVERY
                )
                assert rec.seq == durable, where
                # The restored state is a replay's from the table line, mid-round or not.
                assert rec.fold.snapshot() == states[durable], where
                if newest is not None and (first_spooled is None or newest + 1 < first_spooled):
                    assert rec.fold.restored_from == newest, where
                    from_checkpoint += 1
                rec.close()
                assert store.head("T1") == (durable, rec.head_hash), where
                assert verify_store(store).ok, where
        if durable == len(script) - 1 and sqlite:  # a whole shift: the next in a new store
            shifts += 1
            url = f"sqlite:///{tmp_path / f'shift{shifts}.db'}"
    assert killed_n >= kills
    assert inside_n >= max(1, kills // 10), f"only {inside_n} kills inside derived-row writes"
    assert in_checkpoint >= max(1, kills // 10), f"only {in_checkpoint} in checkpoint writes"
    assert from_checkpoint >= kills // 2, f"only {from_checkpoint} restarts from a checkpoint"
    assert acked_total > kills  # the kills did not all land before the first event
    if sqlite:
        assert spooled_n > 0, "no kill left events in the spool"
    print(
        f"{killed_n} kills ({inside_n} inside derived-row writes, {in_checkpoint} inside "
        f"checkpoint writes), {from_checkpoint} restarts from a checkpoint, {acked_total} "
        "acknowledged "
        f"events, {spooled_n} found only in the spool, {shifts} whole shifts"
    )


def test_every_acknowledged_event_survives_kills_on_sqlite(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    url = f"sqlite:///{tmp_path / 'shift0.db'}"
    _kill_many(url, tmp_path, store_shift_events(8), 200 if SLOW else 24)


def test_every_acknowledged_event_survives_kills_on_postgresql(
    tmp_path: Path, store_pg_url: str, store_shift_events: Shift
) -> None:
    _kill_many(store_pg_url, tmp_path, store_shift_events(12), 60 if SLOW else 8)
