"""The pit report over a large pit: 200 tables x 30 gaming days, p50 and p95 answer time.

    nice .venv/bin/python benchmarks/bench_pit_report.py                 # 200 tables x 30 days
    .venv/bin/python benchmarks/bench_pit_report.py --tables 20 --days 5 # a quick look

Creates a database of its own on the server (``floorctl_bench_pit_<tag>``, dropped at the
end), with the store's schema and the floor's, and fills the floor's read model with what the
indexer writes for a table's tray (``floor_tray``: an opener, two shift counts and a closer a
day, fills and credits on slips, buy-ins, the count room's drop) and its rounds
(``floor_rounds``, with the dealer on duty), written with COPY. Then it asks for the pit report
of the last gaming day, and of its night shift, ``--samples`` times each (the month and the year
to date come with each), beside ``SELECT 1`` on the same pool: the database's own round trip,
the peer that says how loaded the machine was.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.floor import indexer
from controller.floor.audit import Who
from controller.floor.pit import pit_report
from controller.floor.schema import ensure_partitions, month_of, open_floor
from controller.store.repository import Store

SERVER = os.environ.get(
    "FLOORCTL_BENCH_PG",
    os.environ.get("FLOORCTL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test").replace(
        "postgresql+psycopg://", "postgresql://", 1
    ),
)
LAST_DAY = date(2026, 11, 30)
DEALERS = [f"d.{n:03d}" for n in range(60)]
WHO = Who("bench", "pit", "cli")
TRAY_COLUMNS = indexer.TRAY_COLUMNS + indexer.TRAY_TOTALS  # the row as the indexer writes it
ROUND_COLUMNS = (
    "table_id",
    "round",
    "started_at",
    "first_seq",
    "open_seq",
    "closed_seq",
    "last_seq",
    "ended_at",
    "last_at",
    "status",
    "dealers",
    "wagered",
    "result",
)


def fill(conninfo: str, settings: Any, tables: int, days: int, rounds: int) -> tuple[int, int]:
    """The read model's rows for every table and day: (tray rows, rounds)."""
    rng = random.Random("bench-pit")
    tray_rows: list[tuple[Any, ...]] = []
    round_rows: list[tuple[Any, ...]] = []
    slip = 100_000
    for t in range(tables):
        table_id = f"P{t + 1:03d}"
        seq = 0
        number = 0
        value = Decimal(50_000)
        for d in range(days):
            day = LAST_DAY - timedelta(days=days - 1 - d)
            window = settings.gaming_day(day)
            clock = window.start + timedelta(hours=4)
            step = timedelta(hours=16) / (rounds + 8)
            seq += 1
            opener = seq
            tray_rows.append(
                (
                    table_id,
                    seq,
                    clock,
                    "opener",
                    None,
                    None,
                    value,
                    value,
                    0,
                    0,
                    0,
                    ["d", "s"],
                    DEALERS[t % 60],
                    opener,
                )
            )
            since_net = since_buy = since_fill = since_credit = Decimal(0)
            day_buy = Decimal(0)
            for r in range(rounds):
                dealer = DEALERS[(t + r // (rounds // 4 or 1)) % 60]
                clock += step
                seq += 3
                number += 1
                net = Decimal(rng.choice((-25, -10, 5, 10, 15, 20, 25, -5)))
                since_net += net
                round_rows.append(
                    (
                        table_id,
                        number,
                        clock,
                        seq - 2,
                        seq - 2,
                        seq,
                        seq,
                        clock,
                        clock,
                        "settled",
                        [dealer],
                        Decimal(30),
                        net,
                    )
                )
                if rng.random() < 0.15:
                    seq += 1
                    amount = Decimal(rng.choice((100, 200, 500)))
                    since_buy += amount
                    day_buy += amount
                    tray_rows.append(
                        (
                            table_id,
                            seq,
                            clock,
                            "buy_in",
                            "cash",
                            None,
                            amount,
                            None,
                            None,
                            None,
                            None,
                            [],
                            dealer,
                            opener,
                        )
                    )
                if r in (rounds // 3, 2 * rounds // 3):
                    seq += 1
                    slip += 1
                    kind = rng.choice(("fill", "credit"))
                    amount = Decimal(5000)
                    if kind == "fill":
                        since_fill += amount
                    else:
                        since_credit += amount
                    tray_rows.append(
                        (
                            table_id,
                            seq,
                            clock,
                            kind,
                            None,
                            str(slip),
                            amount,
                            None,
                            None,
                            None,
                            None,
                            ["r", "s", dealer],
                            dealer,
                            opener,
                        )
                    )
                    seq += 1
                    value += since_fill - since_credit + since_net - since_buy
                    tray_rows.append(
                        (
                            table_id,
                            seq,
                            clock,
                            "check",
                            None,
                            None,
                            value,
                            value,
                            0,
                            since_net,
                            since_buy,
                            ["d", "s"],
                            dealer,
                            opener,
                        )
                    )
                    since_net = since_buy = since_fill = since_credit = Decimal(0)
            seq += 1
            value += since_fill - since_credit + since_net - since_buy
            tray_rows.append(
                (
                    table_id,
                    seq,
                    clock,
                    "closer",
                    None,
                    None,
                    value,
                    value,
                    0,
                    since_net,
                    since_buy,
                    ["d", "s"],
                    None,
                    opener,
                )
            )
            seq += 1
            tray_rows.append(
                (
                    table_id,
                    seq,
                    window.end + timedelta(hours=2),
                    "drop",
                    None,
                    None,
                    day_buy,
                    None,
                    0,
                    None,
                    None,
                    ["c1", "c2"],
                    None,
                    opener,
                )
            )
    with psycopg.connect(conninfo) as conn, conn.cursor() as cur:
        for t in range(tables):
            cur.execute(
                "INSERT INTO tables (table_id, game, setup, created_at) VALUES (%s, %s, %s, now())",
                (f"P{t + 1:03d}", "pontoon-nz-2000", "{}"),
            )
        with cur.copy(f"COPY floor_tray ({', '.join(TRAY_COLUMNS)}) FROM STDIN") as copy:
            for row in with_totals(tray_rows):
                copy.write_row(row)
        with cur.copy(f"COPY floor_rounds ({', '.join(ROUND_COLUMNS)}) FROM STDIN") as copy:
            for row in round_rows:
                copy.write_row(row)
        cur.execute("ANALYZE")
    return len(tray_rows), len(round_rows)


def with_totals(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each row with its table's running totals, as the indexer writes them."""
    out = []
    table = None
    fills = credits = buys = net = diff = Decimal(0)
    counts = 0
    for r in rows:
        if r[0] != table:
            table = r[0]
            fills = credits = buys = net = diff = Decimal(0)
            counts = 0
        kind, amount = r[3], r[6]
        if kind == "fill":
            fills += amount
        elif kind == "credit":
            credits += amount
        elif kind == "buy_in":
            buys += amount
        elif kind in ("opener", "check", "closer"):
            net += r[9] or 0
            diff += r[8] or 0
            counts += 1
        out.append((*r, fills, credits, buys, net, diff, counts))
    return out


def timed(fn: Any, samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        began = time.perf_counter()
        fn()
        out.append(time.perf_counter() - began)
    return out


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[-1] if len(xs) >= 2 else xs[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=120, help="rounds a table deals a day")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--tag", default=uuid.uuid4().hex[:8])
    args = ap.parse_args(argv)
    parts = urlsplit(SERVER)
    name = f"floorctl_bench_pit_{args.tag}"
    admin = urlunsplit(parts._replace(query=""))
    conninfo = urlunsplit(parts._replace(path=f"/{name}", query=""))
    url = conninfo.replace("postgresql://", "postgresql+psycopg://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        Store.open(url).close()
        with psycopg.connect(conninfo) as conn:  # a table, so the floor finds an audit store
            conn.execute(
                "INSERT INTO tables (table_id, game, setup, created_at) "
                "VALUES ('P000', 'pontoon-nz-2000', '{}', now())"
            )
        with open_floor(url) as floor:
            settings = floor.settings
            first = settings.gaming_day(LAST_DAY - timedelta(days=args.days - 1)).start
            months = {month_of(first), month_of(settings.gaming_day(LAST_DAY).end)}
            y, m = month_of(first)
            while (y, m) < month_of(settings.gaming_day(LAST_DAY).end):
                m = m + 1 if m < 12 else 1
                y = y if m != 1 else y + 1
                months.add((y, m))
            with floor.engine.begin() as conn:
                ensure_partitions(conn, months, set())
            began = time.perf_counter()
            tray, rounds = fill(conninfo, settings, args.tables, args.days, args.rounds)
            print(
                f"database {name}: {args.tables} tables x {args.days} gaming days: {tray:,} tray "
                f"rows, {rounds:,} rounds, loaded in {time.perf_counter() - began:.1f} s"
            )
            day = settings.gaming_day(LAST_DAY)
            night = settings.shift(LAST_DAY, "night")
            doc = pit_report(floor, WHO, day)
            assert len(doc["tables"]) == args.tables, len(doc["tables"])
            assert doc["totals"]["year_to_date"]["gaming_days"] == args.tables * args.days
            with floor.engine.connect() as conn:
                peer = timed(lambda: conn.exec_driver_sql("SELECT 1").scalar(), args.samples)
            figures = {
                "pit report, gaming day (+ month, year to date)": timed(
                    lambda: pit_report(floor, WHO, day), args.samples
                ),
                "pit report, night shift (+ month, year to date)": timed(
                    lambda: pit_report(floor, WHO, night), args.samples
                ),
            }
            base = statistics.median(peer)
            print(f"{'':<50} {'p50 ms':>9} {'p95 ms':>9} {'p95 / SELECT 1':>15}")
            print(f"{'SELECT 1 (the peer)':<50} {base * 1000:>9.2f} {p95(peer) * 1000:>9.2f}")
            for label, xs in figures.items():
                print(
                    f"{label:<50} {statistics.median(xs) * 1000:>9.1f} {p95(xs) * 1000:>9.1f} "
                    f"{p95(xs) / base:>15.0f}"
                )
            print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
