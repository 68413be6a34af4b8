"""How fast an attacker on the table PC can guess a supervisor's PIN through the screen.

The attack of issue 14: wrong PINs from rotating ``X-Forwarded-For`` addresses, as fast as the
server answers, against a real uvicorn server with the production PIN hash (PBKDF2, 200,000
iterations), in the same run:

- *as shipped*: no proxy trusted (the default);
- *trusting 127.0.0.1*: ``[ui] trusted_proxy = "127.0.0.1"``, proxy headers believed from this
  PC, as uvicorn did by default before the fix (the bounded count of addresses still holds);
- *the peer tree* (``--peer-tree DIR``, e.g. the code before the fix unpacked with ``git
  archive``): the same attack on that code, in a subprocess that imports it.

Each prints how many answers were 401 (a PIN checked and wrong) and 429 (the lockout) in
``--seconds``, and the time to try all 10,000 four-digit PINs at the measured rate of checks.
For the code as shipped the long run is set by the lockout schedule, not by a rate: it is
computed by driving the same PinGuard class with a stepped clock (5 tries, then 60 s doubling
to an hour) and printed beside the measured figures.

    .venv/bin/python benchmarks/bench_pin_guessing.py [--seconds 20] [--peer-tree DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from controller import logs
from controller.service import app as service_app
from controller.service.app import open_table, serve
from controller.service.pin import PinGuard, hash_pin

TABLE = {
    "type": "table",
    "game": "pontoon-nz-2000",
    "table_id": "T07",
    "boxes": 7,
    "min_bet": 5,
    "max_bet": 1000,
    "rules": {},
}
PINS = 10_000


def attack(trusted: str | None, seconds: float, folder: Path) -> tuple[int, int, float]:
    """(answers 401, answers 429, elapsed seconds) against one server."""
    table = open_table(
        TABLE,
        f"sqlite:///{folder / 'audit.db'}",
        {"jsmith": hash_pin("7391")},  # the production hash
        spool=False,
    )
    settings = getattr(service_app, "WebSettings", None)  # absent from code before the fix
    if settings is not None:
        table.web = settings(trusted_proxy=trusted)
    urls: list[str] = []
    ready = threading.Event()
    loop_box: list[asyncio.AbstractEventLoop] = []
    done_box: list[asyncio.Future[None]] = []

    async def main() -> None:
        loop_box.append(asyncio.get_running_loop())
        done_box.append(loop_box[0].create_future())
        await serve(
            table,
            "127.0.0.1",
            0,
            on_ready=lambda u: (urls.append(u), ready.set()),
            until=done_box[0],
        )

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    ready.wait(15)
    checked = refused = 0
    started = time.monotonic()
    with httpx.Client(base_url=urls[0].rstrip("/"), timeout=30) as client:
        i = 0
        while time.monotonic() - started < seconds:
            i += 1
            r = client.post(
                "/api/supervisor/login",
                json={"supervisor": "jsmith", "pin": f"{i % PINS:04d}"},
                headers={"x-forwarded-for": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"},
            )
            if r.status_code == 429:
                refused += 1
            else:
                checked += 1
    elapsed = time.monotonic() - started
    loop_box[0].call_soon_threadsafe(lambda: done_box[0].done() or done_box[0].set_result(None))
    thread.join(10)
    table.close()
    return checked, refused, elapsed


def schedule_seconds() -> float:
    """Seconds to check every 4-digit PIN against the shipped lockout, trying again the moment
    each lockout ends (the PinGuard itself, its clock stepped; the hashing time left out)."""
    now = [0.0]
    guard = PinGuard({"jsmith": hash_pin("7391", iterations=1000)}, clock=lambda: now[0])
    for _ in range(PINS):  # every call below is checked: the clock is past any lockout
        r = guard.login("jsmith", "0000", "127.0.0.1")
        now[0] += r.retry_after  # the try that locks says for how long
    return now[0]


def human(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def peer(tree: Path, seconds: float, folder: Path) -> tuple[int, int, float]:
    """The same attack on another checkout's code, in a process that imports it."""
    code = (
        "import json, sys; from pathlib import Path; sys.path[:0] = [sys.argv[1], sys.argv[2]]; "
        "import bench_pin_guessing as b; "
        "print(json.dumps(b.attack(None, float(sys.argv[3]), Path(sys.argv[4]))))"
    )
    here = str(Path(__file__).resolve().parent)
    out = subprocess.run(
        [sys.executable, "-c", code, str(tree), here, str(seconds), str(folder)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    a, b, c = json.loads(out.stdout.strip().splitlines()[-1])
    return int(a), int(b), float(c)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--peer-tree", type=Path, help="another checkout to attack the same way")
    args = parser.parse_args()
    # The server logs every refused PIN, as the table does (JSON lines), into nothing: the cost
    # of logging stays in the figures, the thousands of lines stay out of the printed ones.
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
    logs.configure("info", stream=sink)
    runs: list[tuple[str, tuple[int, int, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, trusted in (("as shipped", None), ("trusting 127.0.0.1", "127.0.0.1")):
            folder = Path(tmp) / name.replace(" ", "-")
            folder.mkdir()
            runs.append((name, attack(trusted, args.seconds, folder)))
        if args.peer_tree is not None:
            folder = Path(tmp) / "peer"
            folder.mkdir()
            runs.append((f"peer {args.peer_tree}", peer(args.peer_tree, args.seconds, folder)))
    for name, (checked, refused, elapsed) in runs:
        rate = checked / elapsed
        # With no lockout in force the rate goes on: that is the time to try every PIN.
        tail = f"; all {PINS:,} at that rate: {human(PINS / rate)}" if not refused else ""
        print(
            f"{name}: {checked} answered 401 (checked, wrong), {refused} answered 429 (locked "
            f"out) in {elapsed:.1f} s = {rate:.2f} PINs checked/s{tail}"
        )
    print(
        f"as shipped, trying again the moment each lockout ends (the lockout schedule): all "
        f"{PINS:,} in {human(schedule_seconds())}"
    )


if __name__ == "__main__":
    main()
