"""Audit store benchmarks: durable appends per second on SQLite, events verified per second.

    .venv/bin/python benchmarks/bench_store.py [--appends N] [--verify-events N]

Appends: each event is its own committed transaction (WAL, synchronous=FULL), as a live
table writes it; measured both through the recorder (check, append, apply, derived rows) and
as bare appends of chained records. Verify: a store of a long shift (built in large batches)
is verified, chain only and in full (chain, replay through the engine, derived rows compared).
The shift is the pontoon examples of ../shared/spec/examples, one after another.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from controller.store.canonical import GENESIS, ChainRecord
from controller.store.fold import Fold, event_body, setup_body
from controller.store.recorder import Recorder, utc_now
from controller.store.repository import Derived, Store, table_row_for
from controller.store.verify import verify_store

EXAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "examples"


def shift(n_events: int) -> list[dict[str, Any]]:
    files = sorted(EXAMPLES.glob("0[1-4]-pontoon-*.jsonl"))
    parts = [[json.loads(x) for x in f.read_text().splitlines() if x.strip()] for f in files]
    events = [parts[0][0]]
    i = 0
    while len(events) < n_events + 1:
        events.extend(parts[i % len(parts)][1:])
        i += 1
    return events[: n_events + 1]


def bench_disk(directory: Path, n: int) -> float:
    """The disk's own bound: one-row commits straight through sqlite3 (WAL, FULL)."""
    conn = sqlite3.connect(directory / "disk.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, body TEXT, hash TEXT)")
    start = time.perf_counter()
    for seq in range(n):
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO t VALUES (?, ?, ?)", (seq, '{"card":"AS","type":"card"}', "0" * 64)
        )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return n / elapsed


def bench_recorder(directory: Path, n: int) -> float:
    events = shift(n)
    with Store.open(f"sqlite:///{directory / 'recorder.db'}") as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        start = time.perf_counter()
        for event in events[1:]:
            if not rec.record(event).stored:
                raise RuntimeError(f"not stored: {rec.status()}")
        elapsed = time.perf_counter() - start
        rec.close()
    return n / elapsed


def bench_bare_appends(directory: Path, n: int) -> float:
    events = shift(n)
    with Store.open(f"sqlite:///{directory / 'bare.db'}") as store:
        _setup, body = setup_body(events[0])
        first = ChainRecord.make("T1", 0, body, GENESIS, utc_now())
        store.append([first], table_row_for(body, first.recorded_at))
        prev = first.hash
        bodies = [event_body(e)[1] for e in events[1:]]
        start = time.perf_counter()
        for seq, b in enumerate(bodies, start=1):
            record = ChainRecord.make("T1", seq, b, prev, utc_now())
            store.append([record])
            prev = record.hash
        elapsed = time.perf_counter() - start
    return n / elapsed


def build_store(url: str, n: int) -> None:
    """A store holding an n-event shift and its derived rows, written in large batches."""
    events = shift(n)
    with Store.open(url) as store:
        _setup, body = setup_body(events[0])
        fold = Fold("T1", body)
        record = ChainRecord.make("T1", 0, body, GENESIS, utc_now())
        store.append([record], table_row_for(body, record.recorded_at))
        prev = record.hash
        batch: list[ChainRecord] = []
        derived = Derived()
        for seq, raw in enumerate(events[1:], start=1):
            event, b = event_body(raw)
            record = ChainRecord.make("T1", seq, b, prev, utc_now())
            prev = record.hash
            batch.append(record)
            derived.extend(fold.apply_event(seq, event)[2])
            if len(batch) == 5000:
                store.append(batch)
                store.insert_derived(derived)
                batch, derived = [], Derived()
        store.append(batch)
        store.insert_derived(derived)


def bench_verify(url: str, n: int, replay: bool) -> float:
    with Store.open(url) as store:
        start = time.perf_counter()
        report = verify_store(store, replay=replay)
        elapsed = time.perf_counter() - start
    if not report.ok or report.events != n + 1:
        raise RuntimeError(f"verify failed: {report.problem}")
    return report.events / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=3000)
    parser.add_argument("--verify-events", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        directory = Path(tmp)
        disk = bench_disk(directory, args.appends)
        print(f"the disk's bound (bare sqlite3, 1 row per commit, WAL+FULL): {disk:,.0f} commits/s")
        bare = bench_bare_appends(directory, args.appends)
        print(f"sqlite durable appends (bare, 1 event per commit): {bare:,.0f} events/s")
        recorded = bench_recorder(directory, args.appends)
        print(
            f"sqlite durable appends (recorder: check, append, apply, derive): "
            f"{recorded:,.0f} events/s"
        )
        url = f"sqlite:///{directory / 'verify.db'}"
        build_store(url, args.verify_events)
        chain = bench_verify(url, args.verify_events, replay=False)
        print(f"verify, hash chain only ({args.verify_events:,} events): {chain:,.0f} events/s")
        full = bench_verify(url, args.verify_events, replay=True)
        print(
            f"verify, chain + replay + derived rows ({args.verify_events:,} events): "
            f"{full:,.0f} events/s"
        )


if __name__ == "__main__":
    main()
