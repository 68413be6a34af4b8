"""Shoe latency: a reader line written on a pseudo-terminal -> the event applied by the engine.

A socat pty pair stands in for the reader's serial port. A writer thread writes one barcode
line at a time into one end (framed by the driver's own ``encode``); the shoe reader on the
other end decodes it, the bridge turns it into an engine event, and the round engine applies
it (``engine``) or the audit store records and applies it (``engine+store``: SQLite, WAL,
synchronous=FULL, one committed transaction per event). The latency of each line is from just
before the write to just after ``apply``/``record`` returns. The next line is written only
after the previous one was applied (plus 0-2 ms of jitter), so the figures are per-card
latency, not queueing. Between cards the benchmark plays the dealer's touchscreen (bets, no
more bets, stand, a new shoe after the cut card) from ``table.due()``; that is not timed.

    .venv/bin/python benchmarks/bench_shoe_latency.py [--cards 10000] [--mode engine|store|both]

Prints p50, p99 and the worst latency per mode; the aim is p99 under 20 ms.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import random
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from controller.engine import Due, Table
from controller.events import parse_event, parse_setup
from drivers.shoe.bridge import to_engine_event
from drivers.shoe.events import CutCard, Heartbeat, ShoeEvent
from drivers.shoe.framing import encode, parse_stream
from drivers.shoe.reader import ShoeReader
from drivers.shoe.simulator import load_shoe
from drivers.shoe.transport import SerialTransport

TABLE_LINE: dict[str, Any] = {
    "type": "table",
    "game": "blackjack",
    "table_id": "BENCH",
    "boxes": 7,
    "decks": 6,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
AIM_P99_MS = 20.0


def start_socat() -> tuple[subprocess.Popen[bytes], str, str]:
    proc = subprocess.Popen(
        ["socat", "-d", "-d", "pty,raw,echo=0", "pty,raw,echo=0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    log = b""
    deadline = time.monotonic() + 5
    while b"starting data transfer loop" not in log:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            proc.kill()
            raise SystemExit(f"socat did not start: {log.decode()!r}")
        log += chunk
    a, b = (p.decode() for p in re.findall(rb"PTY is (\S+)", log))
    threading.Thread(
        target=lambda: proc.stderr.read() if proc.stderr else None, daemon=True
    ).start()
    return proc, a, b


class Dealer:
    """Plays the touchscreen side: one player on box 1 who always stands, new shoe at the cut."""

    def __init__(
        self, apply: Callable[[dict[str, Any]], None], due: Callable[[], Due], rng: random.Random
    ) -> None:
        self.apply = apply
        self.due = due
        self.rng = rng
        self.lines: list[tuple[bytes, bool]] = []  # (line, is a card) still in the shoe
        self.new_shoe_due = True
        self.offered_insurance = False
        self.round = 0

    def load_shoe(self) -> None:
        load = load_shoe(6, self.rng)
        self.apply(load.shuffle_event())
        assert load.cut_card is not None
        self.lines = [(encode(card), True) for card in load.cards]
        self.lines.insert(load.cut_card, (encode(CutCard()), False))
        self.new_shoe_due = False

    def cut_card_out(self) -> None:
        self.new_shoe_due = True

    def next_line(self) -> tuple[bytes, bool]:
        """Do the touchscreen's part until the engine is due a card; return the next line."""
        for _ in range(100):
            due = self.due()
            if due.phase in ("idle", "settled", "void"):
                if self.new_shoe_due or not self.lines:
                    self.load_shoe()
                self.offered_insurance = False
                self.apply({"type": "bet", "box": 1, "player": "ann", "amount": "10"})
                self.apply({"type": "no_more_bets"})
                continue
            if due.phase == "betting":
                self.apply({"type": "no_more_bets"})
                continue
            if "offer insurance" in due.prompts and not self.offered_insurance:
                self.offered_insurance = True
                self.apply({"type": "offer_insurance"})
                continue
            actions = {d["action"] for d in due.decisions}
            if "stand" in actions:
                self.apply({"type": "stand", "box": 1})
                continue
            if "peek" in actions:
                self.apply({"type": "peek"})
                continue
            if due.next_card is not None:
                return self.lines.pop(0)
            self.apply({"type": "void"})  # nothing to do: should not happen; keeps the run going
        raise RuntimeError(f"the round is stuck: {self.due().to_dict()}")


def run(mode: str, cards: int, seed: int, workdir: Path) -> list[float]:
    recorder: Any = None
    if mode == "engine":
        table = Table(parse_setup(TABLE_LINE))

        def apply(event: dict[str, Any]) -> None:
            table.apply(parse_event(event))

        def due() -> Due:
            return table.due()
    else:
        from controller.store.recorder import Recorder
        from controller.store.repository import Store

        store = Store.open(f"sqlite:///{workdir / 'bench.db'}")
        recorder = Recorder.open(store, TABLE_LINE, spool=None, retry_every=None)

        def apply(event: dict[str, Any]) -> None:
            recorder.record(event)

        def due() -> Due:
            table: Table = recorder.table
            return table.due()

    proc, a, b = start_socat()
    writer = SerialTransport(a)
    writer.open()
    to_write: queue.Queue[bytes | None] = queue.Queue()
    written_at: list[float] = []
    jitter = random.Random(seed)

    def write_loop() -> None:
        while (data := to_write.get()) is not None:
            time.sleep(jitter.uniform(0, 0.002))
            written_at.append(time.perf_counter())
            writer.write(data)

    thread = threading.Thread(target=write_loop, daemon=True)
    thread.start()
    reader = ShoeReader(b, silence_timeout=None)
    dealer = Dealer(apply, due, random.Random(seed))
    latencies: list[float] = []
    dealt = 0
    line, is_card = dealer.next_line()
    to_write.put(line)
    try:
        events = reader.events()
        for event in events:
            if isinstance(event, Heartbeat):
                continue
            engine_event = to_engine_event(event)
            assert engine_event is not None, event
            apply(engine_event)
            latencies.append(time.perf_counter() - written_at[len(latencies)])
            check(event, line)
            if isinstance(event, CutCard):
                dealer.cut_card_out()
            dealt += is_card
            if dealt >= cards:
                break
            line, is_card = dealer.next_line()
            to_write.put(line)
        events.close()
    finally:
        to_write.put(None)
        thread.join(timeout=5)
        writer.close()
        proc.terminate()
        proc.wait(timeout=5)
        if recorder is not None:
            recorder.close()
    return latencies


def check(event: ShoeEvent, line: bytes) -> None:
    if parse_stream(line) != [event]:
        raise SystemExit(f"read {event} for the line {line!r}: the benchmark is out of step")


def report(mode: str, latencies: list[float]) -> bool:
    ms = sorted(x * 1000 for x in latencies)
    p50 = statistics.median(ms)
    p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
    label = "engine" if mode == "engine" else "engine+store (SQLite, synchronous=FULL)"
    print(
        f"  {label:42} lines {len(ms):6}  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  "
        f"max {ms[-1]:6.2f} ms"
    )
    return p99 < AIM_P99_MS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--mode", choices=("engine", "store", "both"), default="both")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    # the reader's log lines (connected, stopped) would drown the figures
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    modes = ("engine", "store") if args.mode == "both" else (args.mode,)
    print(
        f"shoe latency, line written on a pty -> event applied: {args.cards} cards per mode "
        f"(cut cards included), {os.cpu_count()} CPUs"
    )
    ok = True
    with tempfile.TemporaryDirectory(prefix="floorctl-bench-") as tmp:
        for mode in modes:
            ok = report(mode, run(mode, args.cards, args.seed, Path(tmp))) and ok
    print(f"aim p99 < {AIM_P99_MS:g} ms: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
