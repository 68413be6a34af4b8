"""What watching the wall clock costs the recorder (issue 25, item 6).

Every event recorded at the wall clock's time goes through :class:`ClockWatch` (the wall clock
against ``CLOCK_BOOTTIME``); an event given its own ``recorded_at`` (an import) does not. In
the same run, on the same disk, the same generated shift is recorded both ways into fresh
SQLite stores (WAL, ``synchronous=FULL``), alternating, best of three each; and the watch's
``check`` alone is timed per call. The figure to read is the ratio: the watch's share of an
event's cost.

    .venv/bin/python benchmarks/bench_clock_watch.py [--rounds 40] [--dir DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller import logs
from controller.floor.generate import Shift
from controller.store.clockwatch import ClockWatch
from controller.store.recorder import Recorder, utc_now
from controller.store.repository import Store


def record(
    folder: Path, name: str, events: list[tuple[dict[str, Any], str]], watched: bool
) -> float:
    url = f"sqlite:///{folder / f'{name}.db'}"
    with Store.open(url) as store:
        rec = Recorder.open(store, events[0][0], spool=None, retry_every=None)
        try:
            start = time.perf_counter()
            for event, _at in events[1:]:
                if watched:
                    rec.record(event)
                else:
                    rec.record(event, recorded_at=utc_now())
            return time.perf_counter() - start
        finally:
            rec.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    logs.configure("error")
    events = list(
        Shift("B1", seed=3, start=datetime(2026, 12, 1, 6, tzinfo=UTC)).events(args.rounds)
    )
    n = len(events) - 1
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        best = {True: float("inf"), False: float("inf")}
        for i in range(3):
            for watched in (False, True):
                took = record(folder, f"{watched}-{i}", events, watched)
                best[watched] = min(best[watched], took)
    watch = ClockWatch()
    watch.seen(utc_now(), watch.monotonic())
    calls = 200_000
    start = time.perf_counter()
    for _ in range(calls):
        _step, stamp, mono = watch.check(utc_now())
        watch.seen(stamp, mono)
    per_check = (time.perf_counter() - start) / calls
    plain, watched = best[False] / n * 1e6, best[True] / n * 1e6
    print(f"events per store: {n} (a {args.rounds}-round shift), best of 3 each")
    print(f"recorded at the wall clock, watched: {watched:8.1f} us/event")
    print(f"recorded_at given (not watched):     {plain:8.1f} us/event")
    print(f"ratio watched / not watched:         {watched / plain:8.3f}")
    print(
        f"ClockWatch.check + utc_now alone:    {per_check * 1e6:8.2f} us/call "
        f"({per_check * 1e6 / plain * 100:.2f}% of an event)"
    )


if __name__ == "__main__":
    main()
