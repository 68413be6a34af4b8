"""``floorctl ship``'s CPU time with nothing new and with 1,000 new events, on signed stores of
1e3 and 1e5 events (and 1e6 with ``--million``), beside the whole check (``verify_table`` and
every head checked from the table line: what ship ran on every run before it checked only the
tail) measured in the same run.

    .venv/bin/python benchmarks/bench_ship.py [--million] [--repeat N] [--dir DIR]

The stores are those ``bench_restart.py`` keeps in ``/tmp/floorctl-bench-restart`` (a long
pontoon shift with its derived rows and checkpoints, built by ``bench_store.build_store``):
copied, never changed; a size not found there is built here (``build_store``) and kept in
``/tmp/floorctl-bench-ship``. The copy is signed (a head every ``HEAD_GAP`` events, about a
round's worth), and the floor is a copy of that with the table's key registered: whole, for
"nothing new", or without its last 1,000 events (rows and heads), for "1,000 new". The floor
is SQLite here (the CPU measured is ship's own; a PostgreSQL floor adds its writes).

Printed per size: the median CPU seconds of ``--repeat`` ships, the source events they read
(records, chain rows and hashes), and the whole check's CPU; then, for each case, the largest
size's time over the smallest's (the aim: about 1, constant in the store's size).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import build_store

from controller.store import witness
from controller.store.canonical import GENESIS
from controller.store.heads import check_heads, iter_hashes, load_heads, make_head
from controller.store.keys import SigningKey
from controller.store.merkle import Frontier, leaf_hash
from controller.store.repository import Store
from controller.store.schema import HEADS
from controller.store.ship import ship
from controller.store.verify import verify_table
from controller.store.witness import register_key

RESTART_CACHE = Path("/tmp/floorctl-bench-restart")  # bench_restart.py's: read only
OWN_CACHE = Path("/tmp/floorctl-bench-ship")
HEAD_GAP = 20  # events between signed heads
NEW = 1000


def source_store(n: int) -> Path:
    """A cached n-event store: bench_restart's if it has one, else one built here."""
    found = sorted(RESTART_CACHE.glob(f"store-{n}-*.db"), key=lambda p: p.stat().st_mtime)
    if found:
        return found[-1]
    OWN_CACHE.mkdir(exist_ok=True)
    db = OWN_CACHE / f"store-{n}.db"
    if not db.exists():
        part = db.with_suffix(".part")
        part.unlink(missing_ok=True)
        build_store(f"sqlite:///{part}", n)
        part.rename(db)
    return db


def sign(url: str, key: SigningKey) -> int:
    """Sign the store's log: a head over events 0 to k for every k a multiple of HEAD_GAP, and
    one over the whole log. Returns the last event."""
    with Store.open(url) as store:
        frontier = Frontier()
        rows: list[dict[str, Any]] = []
        prev = GENESIS
        hashes = list(iter_hashes(store, "T1"))
        for seq, digest in hashes:
            frontier.append(leaf_hash(digest))
            if (seq and seq % HEAD_GAP == 0) or seq == hashes[-1][0]:
                at = datetime.now(UTC).isoformat()
                head = make_head(key, "T1", len(rows), frontier, digest, at, prev)
                prev = head.digest()
                rows.append(head.to_row())
        with store.engine.begin() as conn:
            conn.execute(HEADS.insert(), rows)
        return hashes[-1][0]


def cut(url: str, upto: int) -> None:
    """The floor as it was before the last events: everything after event ``upto`` gone."""
    with Store.open(url) as store, store.engine.begin() as conn:
        for (name,) in conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).all():
            conn.exec_driver_sql(f"DROP TRIGGER {name}")
        for table, col in (
            ("events", "seq"),
            ("shoes", "seq"),
            ("rounds", "closed_seq"),
            ("flags", "seq"),
            ("settlements", "seq"),
            ("checkpoints", "seq + 1"),
            ("heads", "size - 1"),
        ):
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE {col} > {int(upto)}")


class Reads:
    """Counts the source's events a ship reads (records, chain rows, hashes)."""

    def __init__(self, src: Store) -> None:
        self.count = 0
        iter_records, chain_rows, iter_h = src.iter_records, src.chain_rows, witness.iter_hashes

        def records(*a: Any, **k: Any) -> Iterator[Any]:
            for r in iter_records(*a, **k):
                self.count += 1
                yield r

        def rows(*a: Any, **k: Any) -> Iterator[Any]:
            for batch in chain_rows(*a, **k):
                self.count += len(batch)
                yield batch

        def hashes(store: Store, *a: Any, **k: Any) -> Iterator[Any]:
            for item in iter_h(store, *a, **k):
                self.count += store is src
                yield item

        src.iter_records = records  # type: ignore[method-assign]
        src.chain_rows = rows  # type: ignore[method-assign]
        self._restore = iter_h
        witness.iter_hashes = hashes  # type: ignore[assignment]

    def close(self) -> None:
        witness.iter_hashes = self._restore  # type: ignore[assignment]


def timed_ship(src_url: str, floor_url: str, expect: int) -> tuple[float, int]:
    with Store.open(src_url) as src, Store.open(floor_url) as dst:
        reads = Reads(src)
        try:
            start = time.process_time()
            report = ship(src, dst, batch_size=1000)
            cpu = time.process_time() - start
        finally:
            reads.close()
    if report.copied != {"T1": expect} or report.unchecked:
        raise RuntimeError(f"ship copied {report.copied}, unchecked {report.unchecked}")
    return cpu, reads.count


def whole_check(src_url: str, key: SigningKey) -> float:
    """What ship ran on every run before: the whole table verified, every head checked."""
    with Store.open(src_url) as src:
        start = time.process_time()
        _table, problem = verify_table(src, "T1")
        signed = check_heads(
            "T1", load_heads(src, "T1"), iter_hashes(src, "T1"), key.public, tail_ok=True
        )
        cpu = time.process_time() - start
    if problem is not None or signed is not None:
        raise RuntimeError(f"the source does not check: {problem or signed}")
    return cpu


def bench(directory: Path, n: int, repeat: int) -> dict[str, float]:
    key = SigningKey.generate()
    src = directory / f"src-{n}.db"
    shutil.copyfile(source_store(n), src)
    src_url = f"sqlite:///{src}"
    top = sign(src_url, key)
    signed_floor = directory / f"floor-{n}-signed.db"
    shutil.copyfile(src, signed_floor)
    with Store.open(f"sqlite:///{signed_floor}") as floor:
        register_key(floor, "T1", key.public, "bench")
    floor_url = f"sqlite:///{directory / f'floor-{n}.db'}"
    out: dict[str, float] = {}
    for case, new in (("nothing new", 0), (f"{NEW:,} new", NEW)):
        cpus, read = [], 0
        for _ in range(repeat):
            shutil.copyfile(signed_floor, directory / f"floor-{n}.db")
            if new:
                cut(floor_url, top - new)
            cpu, read = timed_ship(src_url, floor_url, new)
            cpus.append(cpu)
        out[case] = statistics.median(cpus)
        print(f"  {case:>11}: ship {out[case]:7.3f} s CPU, {read:>9,} source events read")
    out["whole"] = whole_check(src_url, key)
    print(
        f"  whole check (ship's before): {out['whole']:7.3f} s CPU; ship with nothing new "
        f"{out['nothing new'] / out['whole']:.4f} of it"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="a 1e6-event store too")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: temp)")
    args = parser.parse_args()
    sizes = [1000, 100_000] + ([1_000_000] if args.million else [])
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ship-", dir=args.dir) as tmp:
        for n in sizes:
            print(f"{n:,} events (a signed head every {HEAD_GAP} events, floor on SQLite):")
            results[n] = bench(Path(tmp), n, args.repeat)
    small, large = results[sizes[0]], results[sizes[-1]]
    for case in ("nothing new", f"{NEW:,} new", "whole"):
        print(
            f"{case:>11}: {sizes[-1]:,} events / {sizes[0]:,} events = "
            f"{large[case] / small[case]:.2f}" + ("   (aim: about 1)" if case != "whole" else "")
        )


if __name__ == "__main__":
    main()
