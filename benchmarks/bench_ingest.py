"""What the floor's signature check costs: a table's log shipped into the floor's inbox and
taken into the record by ``floorctl floor ingest``, beside the same log shipped straight into
a floor's record (as before the inbox), on one PostgreSQL server in the same run; and an idle
ingest pass (nothing new) beside one query's round trip.

    FLOORCTL_TEST_PG=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python benchmarks/bench_ingest.py [--blocks N] [--repeat N]

A signed pontoon shift of ``--blocks`` worked examples (about 19 events each) is recorded into
a SQLite store; a fresh database is prepared with ``floorctl floor init`` and ``add-table``,
and dropped afterwards. Printed: the events, the wall seconds of ship into the inbox, of the
ingest, and of a straight ship, and their ratio; then the median wall milliseconds of
``--repeat`` idle ingest passes (on connections kept open, as ``ingest --every`` keeps them)
and of ``SELECT 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from controller.floor.ingest import ingest, ingest_pass, open_inbox
from controller.store.api import record_scenario
from controller.store.keys import generate_pair, load_public_key
from controller.store.repository import Store
from controller.store.roles import add_table, init_floor
from controller.store.ship import ship
from controller.store.witness import register_key

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "data" / "examples"


def shift(blocks: int) -> list[dict[str, Any]]:
    files = sorted(EXAMPLES.glob("0[1-4]-pontoon-*.jsonl"))
    parts = [[json.loads(x) for x in f.read_text().splitlines() if x.strip()] for f in files]
    events = [dict(parts[0][0])]
    for i in range(blocks):
        events.extend(dict(e) for e in parts[i % len(parts)][1:])
    return events


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    base = os.environ.get("FLOORCTL_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    conninfo = base.replace("postgresql+psycopg://", "postgresql://", 1)
    root = base.rsplit("/", 1)[0]
    host = root.split("@", 1)[1]
    tag = uuid.uuid4().hex[:8]
    db = f"bench_ingest_{tag}"
    roles = {k: f"bench_{k}_{tag}" for k in ("owner", "ingest", "floor", "table")}

    def url(role: str | None) -> str:
        return f"{root}/{db}" if role is None else f"postgresql+psycopg://{role}@{host}/{db}"

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "straight_{tag}"')
    try:
        with tempfile.TemporaryDirectory() as tmp:
            private, public, _ = generate_pair(Path(tmp) / "keys")
            table = f"sqlite:///{tmp}/table.db"
            events = shift(args.blocks)
            record_scenario(table, events, signing_key=private)
            init_floor(url(None), roles["owner"], roles["ingest"], roles["floor"])
            add_table(url(None), "T1", roles["table"])
            with Store.open(url(roles["owner"]), create=False) as owner:
                register_key(owner, "T1", load_public_key(public), "bench")
            with Store.open(table, create=False) as src:
                with Store.open(url(roles["table"])) as inbox:
                    t0 = time.perf_counter()
                    ship(src, inbox)
                    shipped = time.perf_counter() - t0
                t0 = time.perf_counter()
                report = ingest(url(roles["ingest"]))
                taken = time.perf_counter() - t0
                assert not report.refused, report.refused
                sep = "&" if "?" in base else "?"
                straight_url = f"{base}{sep}options=-csearch_path%3Dstraight_{tag}"
                with Store.open(straight_url) as straight:
                    t0 = time.perf_counter()
                    ship(src, straight)
                    direct = time.perf_counter() - t0
            idle = []
            floor, inbox = open_inbox(url(roles["ingest"]))  # as `ingest --every` keeps them
            try:
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    assert ingest_pass(floor, inbox).taken["T1"][0] == 0
                    idle.append(time.perf_counter() - t0)
            finally:
                floor.close()
                inbox.close()
            trip = []
            with psycopg.connect(conninfo, autocommit=True) as conn:
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    conn.execute("SELECT 1").fetchone()
                    trip.append(time.perf_counter() - t0)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            conn.execute(f'DROP SCHEMA IF EXISTS "straight_{tag}" CASCADE')
            for role in roles.values():
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')
    print(f"events: {len(events)} (load average {os.getloadavg()[0]:.1f})")
    print(f"ship into the inbox: {shipped:.2f} s; ingest into the record: {taken:.2f} s")
    print(f"straight ship into a record: {direct:.2f} s")
    print(f"ship + ingest over a straight ship: {(shipped + taken) / direct:.2f}x")
    print(
        f"idle ingest pass: {statistics.median(idle) * 1000:.1f} ms median of {args.repeat}; "
        f"SELECT 1: {statistics.median(trip) * 1000:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
