"""SIGKILL the recording process at 200+ random moments of a scripted shift.

Each run is a real process (forked from the test, so it starts in milliseconds) that opens the
SQLite store, restarts the table from it and records the rest of the shift, acknowledging
each event on a pipe once ``record`` has returned with it stored. The test kills it after a
random number of acknowledgements plus a random delay (so some kills land inside a write or
inside the restart), then checks: every acknowledged event is stored; the stored events are
exactly the script's first events; the chain and derived rows verify after a restart; and the
restarted table's state equals a replay of those events.
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.engine import Table
from controller.events import parse_event, parse_setup
from controller.store.recorder import Recorder
from controller.store.repository import Store
from controller.store.verify import verify_store

Shift = Callable[..., list[dict[str, Any]]]
KILLS = 200
SEED = int(os.environ.get("FLOORCTL_CRASH_SEED", "20261130"))


def _child(url: str, script: list[dict[str, Any]], ack: int) -> None:
    store = Store.open(url)
    rec = Recorder.open(store, script[0], retry_every=None)
    os.write(ack, b"R\n")
    for event in script[rec.seq + 1 :]:
        done = rec.record(event)
        if not done.stored:
            os._exit(3)
        os.write(ack, f"{done.seq}\n".encode())
    os.write(ack, b"D\n")
    os._exit(0)


def _run_and_kill(
    url: str, script: list[dict[str, Any]], rng: random.Random
) -> tuple[list[int], bool]:
    """Start a recording process, kill it at a random moment; its acks and whether it died."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the recording process
        os.close(read_end)
        try:
            _child(url, script, write_end)
        finally:
            os._exit(4)
    os.close(write_end)
    want_acks = rng.choice([0, 0, 1, 1, 2, 3, 5, 8])
    delay = rng.uniform(0, 0.006)
    acks: list[int] = []
    buffer = b""
    finished = False
    deadline = time.monotonic() + 20
    while len(acks) < want_acks and not finished and time.monotonic() < deadline:
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
            elif line.isdigit():
                acks.append(int(line))
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    rest = buffer
    while chunk := os.read(read_end, 4096):
        rest += chunk
    os.close(read_end)
    acks.extend(int(line) for line in rest.split(b"\n") if line.isdigit())
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert killed or os.WEXITSTATUS(status) == 0, f"recording process failed: status {status}"
    return acks, killed


def test_every_acknowledged_event_survives_200_kills(
    tmp_path: Path, store_shift_events: Shift
) -> None:
    rng = random.Random(SEED)
    script = store_shift_events(8)
    bodies = [parse_event(e).to_dict() for e in script[1:]]
    shifts = 0
    url = f"sqlite:///{tmp_path / 'shift0.db'}"
    kills = mid_write = 0
    acked_total = 0
    while kills < KILLS:
        acks, killed = _run_and_kill(url, script, rng)
        kills += killed
        acked_total += len(acks)
        with Store.open(url) as store:
            head = store.head("T1")
            stored = store.records("T1")
            last = head[0] if head is not None else -1
            assert all(seq <= last for seq in acks), (SEED, kills, acks, last)
            if acks and last > acks[-1]:
                mid_write += 1  # killed after storing an event, before acknowledging it
            assert [r.event() for r in stored[1:]] == bodies[: max(last, 0)], (SEED, kills)
            if last >= 0:
                rec = Recorder.open(store, table_id="T1", retry_every=None)
                reference = Table(parse_setup(script[0]))
                for event in script[1 : last + 1]:
                    reference.apply(parse_event(event))
                assert rec.table.result() == reference.result(), (SEED, kills)
                assert rec.table.due().to_dict() == reference.due().to_dict(), (SEED, kills)
                rec.close()
                report = verify_store(store)
                assert report.ok, (SEED, kills, report.problem)
        if last == len(script) - 1:
            shifts += 1
            url = f"sqlite:///{tmp_path / f'shift{shifts}.db'}"
    assert kills >= KILLS
    assert acked_total > len(script)  # the kills did not all land before the first event
    print(
        f"{kills} kills, {acked_total} acknowledged events, {shifts} whole shifts, "
        f"{mid_write} kills between storing and acknowledging"
    )
