"""Restart of a table: process start to the dealer's screen answering, and peak memory, with
1e3, 1e4 and 1e5 events in its store (1e6 with ``--million``).

    .venv/bin/python benchmarks/bench_restart.py [--million]

Each size gets a SQLite store of a long pontoon shift (built in large batches, as
``bench_store.py`` builds it), then ``floorctl run`` is started on it under a stand-in for
systemd: the time to READY=1 and to the first answer of ``/api/state``, and the process's
peak resident memory (``VmHWM``), are printed, with each time over the 1e3 store's. Today a
restart replays every stored event (checkpointed restores will not); the aim is the 1e6
time within 1.3 times the 1e3 time, and peak memory under 200 MB at any size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def restart(directory: Path, n: int) -> tuple[float, float, float]:
    """Seconds to READY=1, seconds to the screen answering, and peak RSS in MiB."""
    from controller.service.pin import hash_pin

    db = directory / f"store-{n}.db"
    build_store(f"sqlite:///{db}", n)
    config = directory / f"table-{n}.toml"
    config.write_text(CONFIG.format(db=db, pin=hash_pin("2468", iterations=1000)))
    path = str(directory / f"notify-{n}.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.settimeout(1800)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        cwd=ROOT,
        env=dict(os.environ, NOTIFY_SOCKET=path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ready = notify.recv(4096).decode()
        to_ready = time.perf_counter() - start
        m = re.search(r"http://127\.0\.0\.1:\d+", ready)
        if not m:
            raise RuntimeError(f"no screen URL in {ready!r}")
        with urllib.request.urlopen(m.group(0) + "/api/state", timeout=60) as r:
            state = json.loads(r.read())
        to_screen = time.perf_counter() - start
        if state["seq"] != n:
            raise RuntimeError(f"restored to event {state['seq']}, not {n}")
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        notify.close()
        db.unlink()
    return to_ready, to_screen, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="also 1e6 events (minutes)")
    args = parser.parse_args()
    sizes = [1_000, 10_000, 100_000] + ([1_000_000] if args.million else [])
    print(f"load {os.getloadavg()[0]:.2f}")
    print(f"{'events':>10} {'to READY':>10} {'to screen':>10} {'x 1e3':>7} {'peak RSS':>10}")
    with tempfile.TemporaryDirectory(prefix="bench-restart-") as tmp:
        base = None
        for n in sizes:
            to_ready, to_screen, peak = restart(Path(tmp), n)
            base = base or to_screen
            print(
                f"{n:>10,} {to_ready:>9.2f}s {to_screen:>9.2f}s {to_screen / base:>6.1f}x "
                f"{peak:>7.0f} MiB"
            )
    print("aim: the 1e6 time within 1.3x the 1e3 time; peak memory under 200 MB")


if __name__ == "__main__":
    main()
