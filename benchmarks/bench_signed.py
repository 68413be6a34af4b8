"""The signed log's costs (issue 12), each beside its unsigned peer measured in the same run.

    .venv/bin/python benchmarks/bench_signed.py [--appends N] [--verify-events N]
                                                [--proof-events N] [--skip-pg] [--dir DIR]

1. **Signed appends**: a shift recorded through the recorder with a signing key (a signed head
   at every round's end, in its own transaction) against the same shift recorded unsigned, on
   SQLite (WAL, ``synchronous=FULL``) and on PostgreSQL; run in alternation, twice each, the
   best of each kept.
2. **Verify with signatures**: a long signed shift verified in full (chain, replay, derived
   rows) without the key, and with it (the same, then every head's signature, root and chain
   head recomputed from the log, and the triggers checked).
3. **A round's proof in a 1e6-event log**: ``prove`` of one round (its events, each with an
   inclusion proof under the head that marks its end) and ``verify-proof`` of it: time and
   size (``bench_prove.py`` measures prove against the log's length).

The shift is the pontoon examples of tests/data/examples, one after another.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import shift

from controller.store.canonical import GENESIS, ChainRecord
from controller.store.fold import Fold, event_body, setup_body
from controller.store.heads import make_head
from controller.store.keys import SigningKey
from controller.store.merkle import Frontier, leaf_hash
from controller.store.proof import check_proof, prove_round
from controller.store.recorder import Recorder, utc_now
from controller.store.repository import Derived, Store, table_row_for
from controller.store.schema import HEADS, MERKLE_NODES
from controller.store.signed import verify_signed
from controller.store.tree import node_rows
from controller.store.verify import verify_store

PG = os.environ.get("FLOORCTL_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def record(url: str, events: list[dict[str, Any]], key: SigningKey | None) -> tuple[float, int]:
    """Events per second through the recorder, and the heads it signed."""
    with Store.open(url) as store:
        recorder = Recorder.open(store, events[0], spool=None, retry_every=None, signing_key=key)
        start = time.perf_counter()
        for event in events[1:]:
            recorder.record(event)
        elapsed = time.perf_counter() - start
        recorder.close()
        with store.engine.connect() as conn:
            heads = int(conn.exec_driver_sql("SELECT count(*) FROM heads").scalar() or 0)
    return (len(events) - 1) / elapsed, heads


def _pg_url(schema: str) -> str:
    import psycopg

    with psycopg.connect(PG.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in PG else "?"
    return f"{PG}{sep}options={quote(f'-csearch_path={schema}')}"


def _drop(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def bench_appends(directory: Path, n: int, pg: bool) -> None:
    events = shift(n)
    key = SigningKey.generate()
    backends = ["sqlite"] + (["postgresql"] if pg else [])
    for backend in backends:
        best = {False: 0.0, True: 0.0}
        heads = 0
        for attempt in range(2):
            for signed in (False, True):
                schema = f"signed_bench_{uuid.uuid4().hex[:8]}"
                url = (
                    f"sqlite:///{directory}/appends-{attempt}-{int(signed)}.db"
                    if backend == "sqlite"
                    else _pg_url(schema)
                )
                try:
                    rate, count = record(url, events, key if signed else None)
                finally:
                    if backend != "sqlite":
                        _drop(schema)
                best[signed] = max(best[signed], rate)
                heads = count if signed else heads
        print(f"durable appends on {backend}, {n:,} events ({heads} signed heads):")
        print(f"  unsigned: {best[False]:9,.0f} events/s")
        print(
            f"  signed:   {best[True]:9,.0f} events/s, ratio {best[True] / best[False]:.2f}  "
            "(a head at every round's end)"
        )


def build_signed(url: str, n: int, key: SigningKey) -> int:
    """An n-event shift with its derived rows and a signed head at every round's end, written
    in large batches. Returns the number of heads."""
    events = shift(n)
    frontier = Frontier()
    heads: list[dict[str, Any]] = []
    prev_head = GENESIS
    with Store.open(url) as store:
        _setup, body = setup_body(events[0])
        fold = Fold("T1", body)
        record = ChainRecord.make("T1", 0, body, GENESIS, utc_now())
        store.append([record], table_row_for(body, record.recorded_at))
        frontier.append(leaf_hash(record.hash))
        prev = record.hash
        batch: list[ChainRecord] = []
        derived = Derived()
        nodes: list[tuple[int, int, bytes]] = []  # the subtree roots a recorder keeps

        for seq, raw in enumerate(events[1:], start=1):
            event, b = event_body(raw)
            record = ChainRecord.make("T1", seq, b, prev, utc_now())
            prev = record.hash
            frontier.append(leaf_hash(record.hash), nodes)
            batch.append(record)
            _e, applied, rows = fold.apply_event(seq, event)
            derived.extend(rows)
            if applied.settled is not None or seq == n:
                closes = applied.settled.round if applied.settled is not None else None
                head = make_head(
                    key, "T1", len(heads), frontier, prev, utc_now(), prev_head, closes
                )
                prev_head = head.digest()
                heads.append(head.to_row())
            if len(batch) == 20000:
                store.append(batch, derived=derived)
                batch, derived = [], Derived()
        store.append(batch, derived=derived)
        with store.engine.begin() as conn:
            for i in range(0, len(heads), 5000):
                conn.execute(HEADS.insert(), heads[i : i + 5000])
            if nodes:
                conn.execute(MERKLE_NODES.insert(), node_rows("T1", nodes))
    return len(heads)


def bench_verify(directory: Path, n: int) -> None:
    key = SigningKey.generate()
    url = f"sqlite:///{directory}/verify.db"
    heads = build_signed(url, n, key)
    times: dict[str, float] = {}
    for label in ("plain", "signed", "plain", "signed"):
        with Store.open(url) as store:
            start = time.perf_counter()
            report = verify_store(store)
            if label == "signed":
                problem = verify_signed(store, ["T1"], key.public)
                if problem is not None:
                    raise RuntimeError(f"signed verify failed: {problem}")
            elapsed = time.perf_counter() - start
        if not report.ok:
            raise RuntimeError(f"verify failed: {report.problem}")
        times[label] = min(times.get(label, elapsed), elapsed)
    plain, signed = (n + 1) / times["plain"], (n + 1) / times["signed"]
    print(f"verify, {n:,} events and {heads:,} signed heads on SQLite:")
    print(f"  without the key (chain, replay, derived rows): {plain:9,.0f} events/s")
    print(
        f"  with --key (and every head checked):          {signed:9,.0f} events/s, ratio "
        f"{signed / plain:.2f}"
    )


def bench_proof(directory: Path, n: int) -> None:
    key = SigningKey.generate()
    url = f"sqlite:///{directory}/proof.db"
    start = time.perf_counter()
    heads = build_signed(url, n, key)
    built = time.perf_counter() - start
    with Store.open(url) as store:
        with store.engine.connect() as conn:
            rounds = int(conn.exec_driver_sql("SELECT max(round) FROM rounds").scalar() or 0)
        number = rounds // 2
        start = time.perf_counter()
        doc = prove_round(store, "T1", number)
        proving = time.perf_counter() - start
    text = json.dumps(doc, indent=1, sort_keys=True)
    start = time.perf_counter()
    result = check_proof(json.loads(text), key.public)
    checking = time.perf_counter() - start
    if not result.ok:
        raise RuntimeError(f"the proof does not check: {result.message}")
    events = len(doc["events"])
    path = len(doc["events"][0]["proof"])
    print(f"a round's proof in a {n:,}-event log ({heads:,} heads; built in {built:.0f} s):")
    print(
        f"  round {number}: {events} events, {path} hashes per inclusion proof; file "
        f"{len(text.encode()):,} bytes ({len(text.encode()) / events:,.0f} per event)"
    )
    print(f"  prove (kept subtree roots: O(log n) reads): {proving:.3f} s")
    print(f"  verify-proof: {checking * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=10_000)
    parser.add_argument("--verify-events", type=int, default=200_000)
    parser.add_argument("--proof-events", type=int, default=1_000_000)
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--only", choices=("appends", "verify", "proof"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        directory = Path(tmp)
        if args.only in (None, "appends"):
            bench_appends(directory, args.appends, not args.skip_pg)
        if args.only in (None, "verify"):
            bench_verify(directory, args.verify_events)
        if args.only in (None, "proof"):
            bench_proof(directory, args.proof_events)


if __name__ == "__main__":
    main()
