"""Restart of a table: process start to the dealer's screen answering, and peak memory, with
1e3, 1e4, 1e5 and 1e6 events in its store.

    .venv/bin/python benchmarks/bench_restart.py [--sizes 1000,10000,100000,1000000] [--fresh]

Each size gets a SQLite store of a long pontoon shift with its derived rows and checkpoints,
built by ``bench_store.build_store`` (each event prepared, chained, applied and checkpointed
as the recorder does it, committed in large batches) and checked (chain and checkpoints) once
built; stores are kept in ``/tmp/floorctl-bench-restart`` keyed by size and by the code that
builds them, so the 1e6 store is built once (``--fresh`` builds again). Then ``floorctl run``
is started on a copy under a stand-in for systemd: the time to READY=1, to the dealer's page
(``/``) and ``/api/state`` both answering, and the process's peak resident memory
(``VmHWM``) are printed (the median of ``--repeat`` restarts, the highest peak), with each
time over the 1e3 store's, and the events the restart replayed (after the checkpoint it
started from, read from its log). The aim is the 1e6 time
within 1.3 times the 1e3 time, and peak memory under 200 MB at any size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import build_store

from controller.store import checkpoint
from controller.store.db import head_revision
from controller.store.repository import Store
from controller.store.verify import verify_store

CACHE = Path("/tmp/floorctl-bench-restart")

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """
[table]
table_id = "T1"
game = "pontoon-nz-2000"
boxes = 7
decks = 6
min_bet = 5
max_bet = 1000

[shoe]
url = "none"

[store]
url = "sqlite:///{db}"

[ui]
host = "127.0.0.1"
port = 0

[supervisors]
jsmith = "{pin}"
"""


def _builder_key() -> str:
    """What a cached store depends on: the schema, the checkpoint settings and the code that
    builds and checkpoints it."""
    digest = hashlib.sha256(head_revision().encode())
    digest.update(
        f"{checkpoint.DEFAULT_EVERY},{checkpoint.MIN_GAP},{checkpoint.KEEP_ROUNDS}".encode()
    )
    for rel in (
        "benchmarks/bench_store.py",
        "controller/store/checkpoint.py",
        "controller/store/fold.py",
        "controller/engine/snapshot.py",
    ):
        digest.update((ROOT / rel).read_bytes())
    return digest.hexdigest()[:16]


def cached_store(n: int, fresh: bool) -> Path:
    CACHE.mkdir(exist_ok=True)
    db = CACHE / f"store-{n}-{_builder_key()}.db"
    if db.exists() and not fresh:
        return db
    for old in CACHE.glob(f"store-{n}-*.db*"):
        old.unlink()
    part = db.with_suffix(".part")
    for extra in (part, Path(f"{part}-wal"), Path(f"{part}-shm")):
        extra.unlink(missing_ok=True)
    start = time.perf_counter()
    build_store(f"sqlite:///{part}", n)
    built = time.perf_counter() - start
    with Store.open(f"sqlite:///{part}") as store:
        report = verify_store(store, replay=False)  # the chain and every checkpoint
        marks = len(checkpoint.stored(store, "T1"))
    if not report.ok or report.events != n + 1:
        raise RuntimeError(f"the built store does not verify: {report.problem}")
    print(f"  built {n:,} events with {marks:,} checkpoints in {built:.1f}s; chain verified")
    part.rename(db)
    return db


def restart(directory: Path, n: int, fresh: bool) -> tuple[float, float, float, int | None]:
    """Seconds to READY=1, seconds to the screen answering, peak RSS in MiB, and the events
    the restart replayed."""
    from controller.service.pin import hash_pin

    db = directory / f"store-{n}.db"
    shutil.copyfile(cached_store(n, fresh), db)
    config = directory / f"table-{n}.toml"
    config.write_text(CONFIG.format(db=db, pin=hash_pin("2468", iterations=1000)))
    path = str(directory / f"notify-{n}-{time.monotonic_ns()}.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.settimeout(1800)
    log = directory / f"run-{n}.log"
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
            cwd=ROOT,
            env=dict(os.environ, NOTIFY_SOCKET=path),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        ready = notify.recv(4096).decode()
        to_ready = time.perf_counter() - start
        m = re.search(r"http://127\.0\.0\.1:\d+", ready)
        if not m:
            raise RuntimeError(f"no screen URL in {ready!r}")
        with urllib.request.urlopen(m.group(0) + "/", timeout=60) as r:
            page = r.read()
        with urllib.request.urlopen(m.group(0) + "/api/state", timeout=60) as r:
            state = json.loads(r.read())
        to_screen = time.perf_counter() - start
        if not page or state["seq"] != n:
            raise RuntimeError(f"restored to event {state['seq']}, not {n}")
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        notify.close()
        db.unlink()
    replayed = None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if "table restored from checkpoint" in line:
            found = re.search(r"replayed\W+(\d+)", line)
            replayed = int(found.group(1)) if found else None
    return to_ready, to_screen, peak, replayed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000,1000000",
        help="event counts, comma-separated (default: 1e3 to 1e6)",
    )
    parser.add_argument("--fresh", action="store_true", help="build the stores again")
    parser.add_argument(
        "--repeat", type=int, default=3, help="restarts per size; the median time is shown"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"load {os.getloadavg()[0]:.2f}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-restart-") as tmp:
        for n in sizes:
            cached_store(n, args.fresh)
        print(
            f"{'events':>10} {'to READY':>10} {'to screen':>10} {'x 1e3':>7} {'peak RSS':>10} "
            f"{'replayed':>9}"
        )
        base = None
        for n in sizes:
            runs = sorted(
                (restart(Path(tmp), n, False) for _ in range(args.repeat)), key=lambda r: r[1]
            )
            to_ready, to_screen, _peak, replayed = runs[len(runs) // 2]
            peak = max(r[2] for r in runs)
            base = base or to_screen
            rows.append((n, to_screen, peak))
            print(
                f"{n:>10,} {to_ready:>9.2f}s {to_screen:>9.2f}s {to_screen / base:>6.2f}x "
                f"{peak:>7.0f} MiB {'all' if replayed is None else f'{replayed:,}':>9}"
            )
    first, last = rows[0], rows[-1]
    print(
        f"{last[0]:,} events over {first[0]:,}: {last[1] / first[1]:.2f}x the time "
        f"(aim at most 1.3); peak memory at most {max(r[2] for r in rows):.0f} MiB "
        "(aim under 200 MB)"
    )


if __name__ == "__main__":
    main()
