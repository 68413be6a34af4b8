"""Audit store benchmarks, each against a peer measured in the same run.

    .venv/bin/python benchmarks/bench_store.py [--appends N] [--pg-appends N] [--tables T]
                                               [--verify-events N] [--skip-pg] [--dir DIR]
                                               [--only sqlite|pg|verify]

``--dir`` puts the SQLite stores on another filesystem: on a tmpfs, where fsync costs nothing,
the appends show the recorder's own CPU cost against sqlite3's.

1. **Durable appends on SQLite**: events recorded through the recorder (parse, chain, apply,
   commit with the derived rows, WAL and ``synchronous=FULL``) against a bare ``sqlite3``
   loop committing the *same event rows* one per transaction into the same schema, with the
   same pragmas, on the same disk. Run in alternation, twice each; the best of each is kept.
2. **Durable appends on PostgreSQL**: 1 table, then ``--tables`` tables writing at once (one
   process each) to one floor database, through the recorder against bare psycopg inserts of
   the same rows, one commit per event.
3. **Verify**: a long shift (built in large batches) checked chain only, against raw
   ``hashlib.sha256`` of the same record bytes; and in full (chain, replay through the engine,
   derived rows compared), against the engine's own rate on the same stored events
   (``json.loads``, ``parse_event``, ``Table.apply``).

The shift is the pontoon examples of tests/data/examples, one after another. Timings
vary with what else the machine runs: the ratios are the figures to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.engine import Table
from controller.events import parse_event, parse_setup
from controller.store.canonical import GENESIS, ChainRecord, record_text
from controller.store.checkpoint import DEFAULT_EVERY, KEEP_ROUNDS, Checkpointer, with_checkpoint
from controller.store.fold import Fold, event_body, setup_body
from controller.store.recorder import Recorder, utc_now
from controller.store.repository import Derived, Store, table_row_for
from controller.store.verify import verify_store

EXAMPLES = Path(__file__).resolve().parents[1] / "tests" / "data" / "examples"
PG = os.environ.get("FLOORCTL_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def shift(n_events: int, table_id: str = "T1") -> list[dict[str, Any]]:
    files = sorted(EXAMPLES.glob("0[1-4]-pontoon-*.jsonl"))
    parts = [[json.loads(x) for x in f.read_text().splitlines() if x.strip()] for f in files]
    events = [{**parts[0][0], "table_id": table_id}]
    i = 0
    while len(events) < n_events + 1:
        events.extend(parts[i % len(parts)][1:])
        i += 1
    return events[: n_events + 1]


# ----- 1. SQLite appends ---------------------------------------------------------------------


def record_through_recorder(url: str, events: list[dict[str, Any]]) -> tuple[float, float]:
    """Events/s and CPU ms per event through a recorder (a fresh store)."""
    with Store.open(url) as store:
        rec = Recorder.open(store, events[0], retry_every=None)
        start, cpu = time.perf_counter(), time.process_time()
        for event in events[1:]:
            if not rec.record(event).stored:
                raise RuntimeError(f"not stored: {rec.status()}")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        rec.close()
    n = len(events) - 1
    return n / elapsed, cpu / n * 1000


def bare_sqlite(path: Path, rows: list[tuple[Any, ...]]) -> tuple[float, float]:
    """Commits/s and CPU ms per commit of the same event rows, one per transaction, through
    sqlite3 alone."""
    with Store.open(f"sqlite:///{path}"):
        pass  # the same schema, made by the same migrations
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    sql = f"INSERT INTO events VALUES ({', '.join('?' * 8)})"
    start, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        conn.execute("BEGIN")
        conn.execute(sql, row)
        conn.execute("COMMIT")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return len(rows) / elapsed, cpu / len(rows) * 1000


def bench_sqlite(directory: Path, n: int) -> None:
    events = shift(n)
    best_rec = best_bare = 0.0
    cpu = bare_cpu = 0.0
    for attempt in range(2):
        rec_url = f"sqlite:///{directory / f'recorder{attempt}.db'}"
        rate, cpu_ms = record_through_recorder(rec_url, events)
        if rate > best_rec:
            best_rec, cpu = rate, cpu_ms
        with Store.open(rec_url) as store:
            rows = [tuple(r) for r in store.records("T1")]
        rate, cpu_ms = bare_sqlite(directory / f"bare{attempt}.db", rows)
        if rate > best_bare:
            best_bare, bare_cpu = rate, cpu_ms
    print(f"SQLite (WAL, synchronous=FULL), {n:,} events, one commit each, best of 2:")
    print(
        f"  bare sqlite3 loop, the same rows:   {best_bare:9,.0f} commits/s "
        f"({bare_cpu:.3f} ms CPU/commit)"
    )
    print(
        f"  through the recorder:               {best_rec:9,.0f} events/s  ({cpu:.3f} ms CPU/event)"
    )
    print(f"  ratio recorder / bare:              {best_rec / best_bare:9.2f}   (aim >= 0.8)")


# ----- 2. PostgreSQL appends -----------------------------------------------------------------


def _pg_schema(name: str) -> str:
    import psycopg

    with psycopg.connect(PG.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    url = f"{PG}?options=-csearch_path%3D{name}"
    with Store.open(url):
        pass
    return url


def _drop_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(PG.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{name}" CASCADE')


def _pg_recorder_worker(
    url: str, table_id: str, n: int, spool: str, start_at: float
) -> tuple[float, float]:
    events = shift(n, table_id)
    with Store.open(url) as store:
        rec = Recorder.open(store, events[0], spool=Path(spool), retry_every=None)
        while time.time() < start_at:
            time.sleep(0.001)
        start, cpu = time.perf_counter(), time.process_time()
        for event in events[1:]:
            if not rec.record(event).stored:
                raise RuntimeError(f"not stored: {rec.status()}")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        rec.close()
    return elapsed, cpu


def _pg_bare_worker(
    url: str, table_id: str, n: int, _spool: str, start_at: float
) -> tuple[float, float]:
    import psycopg

    events = shift(n, table_id)
    _setup, body = setup_body(events[0])
    prev, rows = GENESIS, []
    for seq, raw in enumerate([body, *(event_body(e)[1] for e in events[1:])]):
        record = ChainRecord.make(table_id, seq, raw, prev, utc_now())
        prev = record.hash
        rows.append(tuple(record))
    options = url.split("options=", 1)[1].replace("%3D", "=")
    with psycopg.connect(PG.replace("+psycopg", ""), options=options) as conn:
        sql = f"INSERT INTO events VALUES ({', '.join(['%s'] * 8)})"
        cur = conn.cursor()
        cur.execute(sql, rows[0])
        conn.commit()
        while time.time() < start_at:
            time.sleep(0.001)
        start, cpu = time.perf_counter(), time.process_time()
        for row in rows[1:]:
            cur.execute(sql, row)
            conn.commit()
        return time.perf_counter() - start, time.process_time() - cpu


def _run_tables(
    worker: Callable[..., tuple[float, float]], url: str, tables: int, n: int, directory: Path
) -> tuple[float, float]:
    """Aggregate events/s of ``tables`` processes writing at once, and the client's CPU ms
    per event."""
    ctx = multiprocessing.get_context("fork")
    start_at = time.time() + 1.0 + 0.05 * tables
    with ctx.Pool(tables) as pool:
        jobs = [
            pool.apply_async(
                worker, (url, f"T{t:02d}", n, str(directory / f"T{t:02d}.spool"), start_at)
            )
            for t in range(tables)
        ]
        results = [job.get(timeout=600) for job in jobs]
    longest = max(elapsed for elapsed, _ in results)
    cpu = sum(c for _, c in results) / (tables * n) * 1000
    return tables * n / longest, cpu


def bench_pg(directory: Path, n: int, tables: int) -> None:
    print(f"PostgreSQL (one floor database), {n:,} events per table, one commit each:")
    for count in (1, tables):
        names = [f"bench_{uuid.uuid4().hex[:10]}" for _ in range(2)]
        try:
            rec_url, bare_url = (_pg_schema(name) for name in names)
            bare, bare_cpu = _run_tables(_pg_bare_worker, bare_url, count, n, directory)
            rec, rec_cpu = _run_tables(_pg_recorder_worker, rec_url, count, n, directory)
        finally:
            for name in names:
                _drop_schema(name)
        print(
            f"  {count:2d} table(s): bare psycopg {bare:7,.0f} events/s ({bare_cpu:.3f} ms CPU), "
            f"recorder {rec:7,.0f} events/s ({rec_cpu:.3f} ms CPU), ratio {rec / bare:4.2f}"
            "   (aim >= 0.6)"
        )


# ----- 3. verify ----------------------------------------------------------------------------


def build_store(url: str, n: int, checkpoint_every: int = DEFAULT_EVERY) -> None:
    """A store holding an n-event shift, its derived rows and its checkpoints, written in
    large batches: each event is prepared, chained, applied and checkpointed as the recorder
    does it (the same Fold, Checkpointer and Writer), only committed 5,000 at a time."""
    events = shift(n)
    with Store.open(url) as store:
        _setup, body = setup_body(events[0])
        fold = Fold("T1", body, keep_rounds=KEEP_ROUNDS)  # as a live table keeps it
        checkpoints = Checkpointer(checkpoint_every)
        record = ChainRecord.make("T1", 0, body, GENESIS, utc_now())
        store.append([record], table_row_for(body, record.recorded_at))
        prev = record.hash
        batch: list[ChainRecord] = []
        derived = Derived()
        for seq, raw in enumerate(events[1:], start=1):
            event, b = event_body(raw)
            b, taken = checkpoints.prepare(fold, b)
            record = ChainRecord.make("T1", seq, b, prev, utc_now())
            prev = record.hash
            batch.append(record)
            derived.extend(with_checkpoint(fold.apply_event(seq, event)[2], taken))
            checkpoints.done(event.type, taken)
            if len(batch) == 5000:
                store.append(batch, derived=derived)
                batch, derived = [], Derived()
        store.append(batch, derived=derived)


def bench_verify(url: str, n: int) -> None:
    build_store(url, n)
    with Store.open(url) as store:
        records = store.records("T1")
    blobs = [
        record_text(r.table_id, r.seq, r.prev_hash, r.recorded_at, r.corrects, r.body).encode()
        for r in records
    ]
    sha256 = hashlib.sha256
    start = time.perf_counter()
    for blob in blobs:
        sha256(blob).hexdigest()
    raw = len(blobs) / (time.perf_counter() - start)
    bodies = [r.body for r in records[1:]]
    setup = parse_setup(json.loads(records[0].body))
    del records, blobs
    table = Table(setup)
    start = time.perf_counter()
    for body in bodies:
        table.apply(parse_event(json.loads(body)))
    engine = len(bodies) / (time.perf_counter() - start)
    del bodies, table
    with Store.open(url) as store:
        start = time.perf_counter()
        read = sum(len(rows) for rows in store.chain_rows("T1"))
        reading = read / (time.perf_counter() - start)
    rates = {}
    for replay in (False, True):
        with Store.open(url) as store:
            start = time.perf_counter()
            report = verify_store(store, replay=replay)
            elapsed = time.perf_counter() - start
        if not report.ok or report.events != n + 1:
            raise RuntimeError(f"verify failed: {report.problem}")
        rates[replay] = report.events / elapsed
    print(f"verify, {n:,} events on SQLite:")
    print(f"  raw hashlib.sha256 of the record bytes: {raw:11,.0f} records/s")
    print(f"  reading the chain's columns alone:      {reading:11,.0f} rows/s")
    print(
        f"  chain only:                             {rates[False]:11,.0f} events/s, "
        f"ratio {rates[False] / raw:.2f}   (aim >= 0.5)"
    )
    print(f"  the engine alone (parse + apply):       {engine:11,.0f} events/s")
    print(
        f"  full (chain, replay, derived rows):     {rates[True]:11,.0f} events/s, "
        f"ratio {rates[True] / engine:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=3000, help="SQLite events per run")
    parser.add_argument("--pg-appends", type=int, default=1000, help="events per PG table")
    parser.add_argument("--tables", type=int, default=20, help="PG tables at once")
    parser.add_argument("--verify-events", type=int, default=100_000)
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--only", choices=("sqlite", "pg", "verify"))
    parser.add_argument(
        "--dir", type=Path, help="where the SQLite stores go (default: a temporary directory)"
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, load {load:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-store-", dir=args.dir) as tmp:
        directory = Path(tmp)
        print(f"stores in {directory}")
        if args.only in (None, "sqlite"):
            bench_sqlite(directory, args.appends)
        if args.only in (None, "pg") and not args.skip_pg:
            bench_pg(directory, args.pg_appends, args.tables)
        if args.only in (None, "verify"):
            bench_verify(f"sqlite:///{directory / 'verify.db'}", args.verify_events)


if __name__ == "__main__":
    main()
