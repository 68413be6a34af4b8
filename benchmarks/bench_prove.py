"""``floorctl prove`` against the log's length: a round's proof at 1e4, 1e5 and 1e6 events.

    .venv/bin/python benchmarks/bench_prove.py [--sizes 10000,100000,1000000] [--repeat 7]

Each store is a signed pontoon shift (a head at every round's end, marking it; the subtree
roots a recorder keeps), built once into ``benchmarks/.cache/`` (git-ignored; the 1e6 store
takes some minutes) and reused by later runs. For each size: ``prove`` of the last round and of
a middle round (best of ``--repeat``), the database reads it made, and ``verify-proof`` of the
result; the peer in the same run is the same proof from the log's hashes without the kept
roots (what prove read before: every hash under the head). The figure asked for is the ratio
of prove's time at the largest size to that at the smallest (aim: at most 1.2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_signed import build_signed

from controller.store.keys import SigningKey, generate_pair, load_signing_key
from controller.store.proof import _paths, check_proof, prove_round
from controller.store.repository import Store
from controller.store.tree import StoredTree

CACHE = Path(__file__).resolve().parent / ".cache"


def store_of(n: int) -> tuple[str, SigningKey]:
    """The cached n-event store and its key (built on first use)."""
    CACHE.mkdir(exist_ok=True)
    path, keys = CACHE / f"prove-{n}.db", CACHE / f"prove-{n}.keys"
    if not path.is_file() or not (keys / "table.key").is_file():
        path.unlink(missing_ok=True)
        for stale in keys.glob("*") if keys.is_dir() else ():
            stale.unlink()
        _private, _public, key = generate_pair(keys)
        partial = CACHE / f"prove-{n}.building.db"
        partial.unlink(missing_ok=True)
        start = time.perf_counter()
        heads = build_signed(f"sqlite:///{partial}", n, key)
        partial.rename(path)
        print(
            f"  (built {path.name}: {n:,} events, {heads:,} heads, "
            f"{time.perf_counter() - start:.0f} s)"
        )
    return f"sqlite:///{path}", load_signing_key(keys / "table.key")


def best_of(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def measure(n: int, repeat: int) -> dict[str, float]:
    url, key = store_of(n)
    out: dict[str, float] = {}
    with Store.open(url, create=False) as store:
        with store.engine.connect() as conn:
            rounds = int(conn.exec_driver_sql("SELECT max(round) FROM rounds").scalar() or 0)
        for label, number in (("last", rounds), ("middle", rounds // 2)):
            out[label] = best_of(repeat, lambda number=number: prove_round(store, "T1", number))
        doc = prove_round(store, "T1", rounds)
        size = int(doc["head"]["size"])
        tree = StoredTree(store, "T1", size)
        for ev in doc["events"]:
            tree.inclusion_proof(int(ev["seq"]))
        out["reads"] = tree.reads
        out["leaves"] = tree.leaves_read
        records = store.records("T1", after=doc["events"][0]["seq"] - 1, upto=size - 1)
        from controller.store.heads import Head

        head = Head.from_row(doc["head"])

        def bare() -> None:
            if _paths(StoredTree(store, "T1", size, use_nodes=False), records, head) is None:
                raise RuntimeError("the proof from the hashes does not check")

        out["bare"] = best_of(1 if n >= 1_000_000 else 3, bare)
    text = json.dumps(doc)
    out["check"] = best_of(repeat, lambda: check_proof(json.loads(text), key.public))
    if not check_proof(json.loads(text), key.public).ok:
        raise RuntimeError("the proof does not check")
    out["events"] = len(doc["events"])
    out["bytes"] = len(text.encode())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    print(f"floorctl prove of one round, SQLite, best of {args.repeat}:")
    for n in sizes:
        r = results[n] = measure(n, args.repeat)
        print(
            f"  {n:>9,} events: prove {r['last'] * 1000:7.1f} ms (last round), "
            f"{r['middle'] * 1000:7.1f} ms (middle round); {r['reads']:.0f} reads, "
            f"{r['leaves']:.0f} hashes read; without kept roots {r['bare'] * 1000:8.1f} ms; "
            f"verify-proof {r['check'] * 1000:.1f} ms ({r['events']:.0f} events, "
            f"{r['bytes']:,.0f} bytes)"
        )
    lo, hi = sizes[0], sizes[-1]
    if hi != lo:
        ratio = results[hi]["last"] / results[lo]["last"]
        middle = results[hi]["middle"] / results[lo]["middle"]
        bare = results[hi]["bare"] / results[lo]["bare"]
        print(
            f"prove at {hi:,} / at {lo:,} events: {ratio:.2f} (last round), {middle:.2f} "
            f"(middle round); aim at most 1.2. Without kept roots: {bare:.1f}"
        )


if __name__ == "__main__":
    main()
