"""The floor at scale: a round lookup, a shift report and the floor view as the floor grows.

    nice -n 19 .venv/bin/python benchmarks/bench_floor.py --big      # 1e6 then 1e7 events
    .venv/bin/python benchmarks/bench_floor.py                       # a small run (2e5)

Creates a database of its own on the server (``floorctl_bench_<tag>``, dropped at the end),
loads it with generated events over ``--tables`` tables and measures at each stage:

1. **Loading**: realistic days of play, generated through the engine
   (:mod:`controller.floor.generate`: inspections, dealers, camera wagers, irregularities,
   every shoe read out and reconciled), each table's hash chain computed, and written with
   COPY into the store's own tables (events and the derived rows a table's recorder writes:
   shoes, rounds, flags, settlements), as shipping would leave them. ``--streams`` distinct
   streams are generated and each table plays one of them, shifted in time.
2. **Indexing**: the floor's indexer over every event (two processes), against the engine
   alone replaying the same events (its peer, in the same run).
3. **Lookups**, each ``--samples`` times, p50 and p95: a round found by table and local time
   and rebuilt from its events (``floorctl floor round --at``: the same function), the same
   with the dealer's screen for every step (the web page), a shift report, the floor view;
   beside ``SELECT 1`` on the same connection pool (the database's own round trip, the peer
   that says how loaded the machine was), and a few rounds rebuilt the naive way, replaying
   the table from its table line (what the checkpoints avoid).

Then each figure's growth from the first stage to the last. Timings move with what else the
machine runs: the ratios are the figures to compare.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.floor import queries
from controller.floor.audit import Who
from controller.floor.generate import Shift, iso
from controller.floor.indexer import Indexer
from controller.floor.schema import open_floor
from controller.floor.settings import FloorSettings
from controller.store.canonical import GENESIS, canonical_json, record_hash
from controller.store.fold import Fold, event_body
from controller.store.repository import Store, table_row_for

SERVER = os.environ.get(
    "FLOORCTL_BENCH_PG",
    os.environ.get("FLOORCTL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test").replace(
        "postgresql+psycopg://", "postgresql://", 1
    ),
)
START = datetime(2026, 11, 2, 20, 0, tzinfo=UTC)  # 09:00 NZDT on 3 November 2026
WHO = Who("bench", "surveillance", "cli")


# ----- generating -------------------------------------------------------------------------------


class Stream:
    """One table's generated events: bodies, times and the store's derived rows (per seq)."""

    def __init__(self, index: int, events: int) -> None:
        shift = Shift("GEN", seed=f"bench-{index}", start=START, vocabulary=True)
        self.setup: dict[str, Any] = {}
        self.bodies: list[str] = []
        self.types: list[str] = []
        self.times: list[datetime] = []
        self.derived: list[Any] = []
        fold: Fold | None = None
        for n, (event, at) in enumerate(shift.events(10**9)):
            moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
            if n == 0:
                self.setup = dict(event)
                fold = Fold("GEN", event)
                self.bodies.append(canonical_json(_setup_body(event)))
                self.types.append("table")
                self.times.append(moment)
                self.derived.append(None)
                continue
            assert fold is not None
            parsed, body = event_body(event, n)
            _ev, _applied, derived = fold.apply_event(n, parsed)
            self.bodies.append(canonical_json(body))
            self.types.append(parsed.type)
            self.times.append(moment)
            self.derived.append(derived if derived else None)
            if n >= events and fold.table.current_round is None:
                break


def _setup_body(event: dict[str, Any]) -> dict[str, Any]:
    from controller.store.fold import setup_body

    return setup_body(event)[1]


def _copy_rows(
    cur: psycopg.Cursor[Any], table: str, cols: tuple[str, ...], rows: list[Any]
) -> None:
    if not rows:
        return
    with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def load_table(
    conninfo: str,
    stream: Stream,
    table_id: str,
    offset: timedelta,
    first: int,
    last: int,
    prev: str,
) -> str:
    """COPY events first..last of a table (and their derived rows); returns the last hash."""
    events = []
    shoes, rounds, flags, settlements = [], [], [], []
    setup = dict(stream.setup, table_id=table_id)
    for seq in range(first, last + 1):
        at = iso(stream.times[seq] + offset)
        body = stream.bodies[seq]
        if seq == 0:
            body = canonical_json(_setup_body(setup))
        digest = record_hash(table_id, seq, prev, at, None, body)
        events.append((table_id, seq, stream.types[seq], body, at, None, prev, digest))
        prev = digest
        d = stream.derived[seq]
        if d is None:
            continue
        for r in d.shoes:
            shoes.append(
                (table_id, r["seq"], r["kind"], r["decks"], r["cut_card"], r["deck_serials"])
            )
        for r in d.rounds:
            rounds.append(
                (table_id, r["round"], r["status"], r["closed_seq"], r["dealer"], r["hands"])
            )
        for r in d.flags:
            flags.append(
                (table_id, r["seq"], r["idx"], r["round"], r["rule"], r["box"], r["message"])
            )
        for r in d.settlements:
            settlements.append(
                (
                    table_id,
                    r["round"],
                    r["idx"],
                    r["seq"],
                    r["player"],
                    r["box"],
                    r["hand"],
                    r["kind"],
                    r["staked"],
                    r["returned"],
                    r["net"],
                )
            )
    with psycopg.connect(conninfo) as conn, conn.cursor() as cur:
        if first == 0:
            row = table_row_for(setup, events[0][4])
            cur.execute(
                "INSERT INTO tables (table_id, game, setup, created_at) VALUES (%s, %s, %s, %s)",
                (row["table_id"], row["game"], row["setup"], row["created_at"]),
            )
        _copy_rows(
            cur,
            "events",
            ("table_id", "seq", "type", "body", "recorded_at", "corrects", "prev_hash", "hash"),
            events,
        )
        _copy_rows(
            cur, "shoes", ("table_id", "seq", "kind", "decks", "cut_card", "deck_serials"), shoes
        )
        _copy_rows(
            cur, "rounds", ("table_id", "round", "status", "closed_seq", "dealer", "hands"), rounds
        )
        _copy_rows(
            cur, "flags", ("table_id", "seq", "idx", "round", "rule", "box", "message"), flags
        )
        _copy_rows(
            cur,
            "settlements",
            (
                "table_id",
                "round",
                "idx",
                "seq",
                "player",
                "box",
                "hand",
                "kind",
                "staked",
                "returned",
                "net",
            ),
            settlements,
        )
    return prev


# ----- indexing ---------------------------------------------------------------------------------


def _index_job(args: tuple[str, list[str]]) -> tuple[int, float]:
    url, tables = args
    with open_floor(url) as floor:
        began = time.perf_counter()
        done = Indexer(floor).run_once(tables)
        return sum(done.values()), time.perf_counter() - began


def index_all(url: str, tables: list[str], jobs: int) -> tuple[int, float, float]:
    """Events indexed, wall seconds, and the sum of the workers' seconds."""
    parts = [tables[i::jobs] for i in range(jobs)]
    began = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        results = pool.map(_index_job, [(url, p) for p in parts if p])
    return sum(r[0] for r in results), time.perf_counter() - began, sum(r[1] for r in results)


def engine_rate(stream: Stream, n: int) -> float:
    """The engine alone on the same events: parse and apply, per second."""
    from controller.events import parse_event

    fold = Fold("GEN", stream.setup)
    bodies = [json.loads(b) for b in stream.bodies[1 : n + 1]]
    began = time.perf_counter()
    for seq, body in enumerate(bodies, start=1):
        fold.table.apply(parse_event(body, seq))
    return n / (time.perf_counter() - began)


# ----- measuring --------------------------------------------------------------------------------


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50 * 1000, p95 * 1000


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        began = time.perf_counter()
        fn()
        out.append(time.perf_counter() - began)
    return out


def measure(url: str, tables: list[str], samples: int, rng: random.Random) -> dict[str, Any]:
    settings = FloorSettings()
    out: dict[str, Any] = {}
    with open_floor(url) as floor:
        with floor.engine.connect() as conn:
            picks = conn.exec_driver_sql(
                "SELECT table_id, started_at, ended_at FROM floor_rounds TABLESAMPLE SYSTEM (5) "
                "WHERE status = 'settled' LIMIT %(n)s",
                {"n": samples * 4},
            ).all()
            if len(picks) < samples:
                picks = conn.exec_driver_sql(
                    "SELECT table_id, started_at, ended_at FROM floor_rounds "
                    "WHERE status = 'settled' ORDER BY random() LIMIT %(n)s",
                    {"n": samples},
                ).all()
            days = conn.exec_driver_sql(
                "SELECT DISTINCT table_id, (started_at AT TIME ZONE 'Pacific/Auckland')::date "
                "FROM floor_rounds"
            ).all()
        picks = list(picks)
        rng.shuffle(picks)
        moments = [
            (str(t), (a + (b - a) / 2).astimezone(settings.tz).strftime("%Y-%m-%d %H:%M:%S.%f"))
            for t, a, b in picks[:samples]
        ]

        def select_one() -> None:
            with floor.engine.connect() as c:
                c.exec_driver_sql("SELECT 1").scalar()

        it = iter(moments * 3)

        def round_lookup() -> None:
            table_id, at = next(it)
            doc = queries.find_round(floor, WHO, table_id, at=at)
            assert doc["checks"]["matches_table_record"], doc["checks"]

        def round_watch() -> None:
            table_id, at = next(it)
            queries.find_round(floor, WHO, table_id, at=at, steps=True)

        shift_names = [n for n, _ in settings.shifts]

        def shift_report() -> None:
            table_id, day = rng.choice(days)
            queries.report(floor, WHO, str(table_id), settings.shift(day, rng.choice(shift_names)))

        def floor_view() -> None:
            doc = queries.floor_view(floor, WHO)
            assert len(doc["tables"]) == len(tables)

        for name, fn in (
            ("SELECT 1 (peer)", select_one),
            ("round lookup", round_lookup),
            ("round watched (every step)", round_watch),
            ("shift report", shift_report),
            ("floor view", floor_view),
        ):
            fn()  # warm
            out[name] = percentiles(timed(fn, samples))
        # The naive way: the table replayed from its table line to the round.
        naive = []
        for table_id, _at in moments[:3]:
            began = time.perf_counter()
            fold = None
            for record in floor.store.iter_records(table_id):
                if fold is None:
                    fold = Fold.from_record(record)
                    continue
                fold.apply(record.seq, record.event())
            naive.append(time.perf_counter() - began)
        out["round rebuilt from the table line (naive)"] = percentiles(naive)
        with floor.engine.connect() as conn:
            out["_events"] = int(conn.exec_driver_sql("SELECT count(*) FROM events").scalar() or 0)
            out["_rounds"] = int(
                conn.exec_driver_sql("SELECT count(*) FROM floor_rounds").scalar() or 0
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", action="store_true", help="stages of 1e6 and 1e7 events")
    parser.add_argument("--stages", help="total events at each stage, e.g. 20000,200000")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--streams", type=int, default=5, help="distinct generated streams")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2, help="indexing processes")
    parser.add_argument("--server", default=SERVER, help="a database URL on the server")
    parser.add_argument("--tag", default=f"{os.getpid()}_{uuid.uuid4().hex[:6]}")
    args = parser.parse_args()
    stages = (
        [1_000_000, 10_000_000]
        if args.big
        else [int(float(x)) for x in args.stages.split(",")]
        if args.stages
        else [20_000, 200_000]
    )
    per_table = [s // args.tables for s in stages]
    parts = urlsplit(SERVER if args.server is None else args.server)
    name = f"floorctl_bench_{args.tag}"
    admin = urlunsplit(parts._replace(query=""))
    conninfo = urlunsplit(parts._replace(path=f"/{name}", query=""))
    url = conninfo.replace("postgresql://", "postgresql+psycopg://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    print(
        f"database {name}: {args.tables} tables, stages {stages} events "
        f"({per_table} a table), {args.streams} streams"
    )
    try:
        Store.open(url).close()  # the store's schema, by its own migrations
        began = time.perf_counter()
        streams = [Stream(i, per_table[-1]) for i in range(args.streams)]
        print(
            f"generated {args.streams} streams of {len(streams[0].bodies)}+ events through the "
            f"engine in {time.perf_counter() - began:.1f} s"
        )
        tables = [f"T{i + 1:03d}" for i in range(args.tables)]
        heads = {t: (-1, GENESIS) for t in tables}
        results = []
        for stage, target in zip(stages, per_table, strict=True):
            began = time.perf_counter()
            for i, table_id in enumerate(tables):
                stream = streams[i % args.streams]
                offset = timedelta(minutes=37 * i)
                last = min(target, len(stream.bodies) - 1)
                done, prev = heads[table_id]
                if done < last:
                    heads[table_id] = (
                        last,
                        load_table(conninfo, stream, table_id, offset, done + 1, last, prev),
                    )
            load_s = time.perf_counter() - began
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute("ANALYZE")
            indexed, wall, cpu = index_all(url, tables, args.jobs)
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute("ANALYZE")
            rate = engine_rate(streams[0], min(50_000, len(streams[0].bodies) - 1))
            figures = measure(url, tables, args.samples, random.Random(stage))
            figures["_load_s"] = load_s
            figures["_index"] = (indexed, wall, cpu, rate)
            results.append((stage, figures))
            print(
                f"\n== stage {stage:,} events: {figures['_events']:,} events, "
                f"{figures['_rounds']:,} rounds on the floor"
            )
            print(f"loaded (hash chains, COPY) in {load_s:.1f} s")
            print(
                f"indexed {indexed:,} events in {wall:.1f} s with {args.jobs} processes: "
                f"{indexed / cpu:,.0f} events/s per process; the engine alone "
                f"{rate:,.0f} events/s (indexer/engine {indexed / cpu / rate:.2f})"
            )
            peer = figures["SELECT 1 (peer)"][1]
            for key, value in figures.items():
                if key.startswith("_"):
                    continue
                p50, p95 = value
                print(
                    f"  {key:<44} p50 {p50:8.1f} ms  p95 {p95:8.1f} ms  "
                    f"p95/SELECT1 {p95 / peer:7.1f}  p95/200ms {p95 / 200:5.2f}"
                )
        if len(results) > 1:
            (s0, f0), (s1, f1) = results[0], results[-1]
            print(f"\n== growth from {s0:,} to {s1:,} events ({s1 / s0:.0f}x)")
            for key in f0:
                if key.startswith("_"):
                    continue
                print(
                    f"  {key:<44} p50 x{f1[key][0] / f0[key][0]:5.2f}  "
                    f"p95 x{f1[key][1] / f0[key][1]:5.2f}"
                )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        print(f"database {name} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
