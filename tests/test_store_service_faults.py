"""`floorctl run` with its store failing as a table PC's does: the disk full, the floor
database gone. Taps go over HTTP and cards over a pseudo-terminal, as on a real table.

Each test runs the real service process, breaks its store, drives it until the store can take
nothing, checks what the dealer's screen and systemd's STATUS= say, kills the process with
SIGKILL, checks that the store verifies as the kill left it, repairs the store, restarts the
service, and checks that every input that was acknowledged (a tap answered 200, a shoe event
the screen counted as recorded) is in the store, in order, and nothing else is.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from store_proxy import PgProxy
from test_store_faults import fill

from controller.cli import main as floorctl
from controller.service.demo import PtyPair
from controller.service.pin import hash_pin
from controller.store.repository import Store
from drivers.shoe import CardRead, encode

ROOT = Path(__file__).resolve().parent.parent
CARDS = [f"{r}{s}" for s in "SHDC" for r in "A23456789JQK"]


def mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)


@pytest.fixture
def disks(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (a full disk)")
    where = tmp_path / "disk"
    mount_tmpfs(where, "8m")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@dataclass
class Service:
    """One `floorctl run` process, its screen's URL, its pty and what systemd was told."""

    proc: subprocess.Popen[str]
    base: str
    notify: socket.socket
    pty: PtyPair
    statuses: list[str] = field(default_factory=list)

    def get(self) -> Any:
        with urllib.request.urlopen(self.base + "/api/state", timeout=10) as r:
            return json.loads(r.read())

    def tap(self, event: dict[str, Any]) -> tuple[int, Any]:
        seq = self.get()["seq"]
        req = urllib.request.Request(
            self.base + "/api/event",
            data=json.dumps({"event": event, "seq": seq}).encode(),
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def card(self, card: str) -> None:
        os.write(self.pty.master, encode(CardRead(card=card, deck="K7Q2M9")))

    def read_status(self) -> None:
        self.notify.settimeout(0.01)
        while True:
            try:
                self.statuses.append(self.notify.recv(4096).decode())
            except (TimeoutError, BlockingIOError):
                return

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=20)
        self.notify.close()
        self.pty.close()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        _out, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err[-3000:]
        self.notify.close()
        self.pty.close()


def start(tmp_path: Path, store: str, extra: str = "") -> Service:
    pty = PtyPair()
    config = tmp_path / "table.toml"
    config.write_text(
        f"""
[table]
table_id = "T07"
game = "pontoon-nz-2000"
boxes = 7
min_bet = 5
max_bet = 1000

[shoe]
url = "{pty.path}"
heartbeat_timeout = 0
noise_misreads = 1000

[store]
url = "{store}"
spool_reserve_kib = 16
{extra}

[ui]
host = "127.0.0.1"
port = 0

[supervisors]
jsmith = "{hash_pin("2468", iterations=1000)}"
""",
        encoding="utf-8",
    )
    path = str(tmp_path / f"notify-{time.monotonic_ns()}.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.settimeout(60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        cwd=ROOT,
        env=dict(os.environ, NOTIFY_SOCKET=path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready = notify.recv(4096).decode()
    m = re.search(r"http://127\.0\.0\.1:\d+", ready)
    assert ready.startswith("READY=1") and m, ready
    service = Service(proc, m.group(0), notify, pty)
    deadline = time.monotonic() + 10
    while service.get()["devices"].get("shoe", {}).get("state") != "connected":
        assert time.monotonic() < deadline, "the shoe reader did not connect"
        time.sleep(0.05)
    return service


@dataclass
class Acked:
    """What the service acknowledged, by sequence number (and what it held)."""

    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    held: list[str] = field(default_factory=list)
    refused_taps: int = 0


def wait_change(service: Service, seq: int, held: int) -> Any:
    deadline = time.monotonic() + 10
    while True:
        state = service.get()
        if state["seq"] > seq or len(state["store"]["held"]) > held:
            return state
        assert time.monotonic() < deadline, "the card was neither recorded nor held"
        time.sleep(0.02)


def play_until_halted(service: Service, acked: Acked, cards: Iterator[str]) -> Any:
    """Taps and cards until the store can take nothing and two cards are held."""
    for _ in range(600):
        service.read_status()
        state = service.get()
        if state["store"]["halted"] and len(acked.held) >= 2:
            return state
        if state["due"]["phase"] == "idle" and not state["store"]["halted"]:
            status, body = service.tap({"type": "shuffle", "decks": 6, "cut_card": 200})
            if status == 200:
                acked.events[body["seq"]] = {"type": "shuffle", "source": "dealer"}
            else:
                assert status == 503 and body.get("store_down"), (status, body)
                acked.refused_taps += 1
        card = next(cards)
        before = service.get()
        service.card(card)
        after = wait_change(service, before["seq"], len(before["store"]["held"]))
        if after["seq"] > before["seq"]:
            assert after["seq"] == before["seq"] + 1
            acked.events[after["seq"]] = {"type": "card", "card": card, "source": "shoe"}
        else:
            acked.held.append(card)
            assert [h["text"] for h in after["store"]["held"]][-1] == f"card {card}"
    raise AssertionError("the store never went down")


def check_halted(service: Service, state: Any, acked: Acked, why: str) -> None:
    assert state["store"]["halted"] is True
    assert re.search(why, state["store"]["reason"]), state["store"]["reason"]
    assert state["devices"]["store"]["state"] == "down"
    assert [h["text"] for h in state["store"]["held"]] == [f"card {c}" for c in acked.held]
    status, body = service.tap({"type": "stand", "box": 1})
    assert status == 503 and "STORE DOWN" in body["error"]
    service.read_status()
    assert any("STORE DOWN" in s for s in service.statuses), service.statuses


def check_store(url: str, acked: Acked) -> None:
    with Store.open(url) as store:
        records = store.records("T07")
    events = {r.seq: r.event() for r in records}
    for seq, want in acked.events.items():
        assert {k: events[seq].get(k) for k in want} == want, (seq, events[seq], want)
    assert max(events) == max(acked.events), "the store holds events nobody was told of"


def test_a_full_disk_halts_the_table_and_every_acknowledged_input_survives_a_kill(
    disks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = disks / "floorctl.db"
    url = f"sqlite:///{db}"
    cards = iter(CARDS * 20)
    service = start(tmp_path, url)
    acked = Acked()
    try:
        # 1. Full, then freed: play resumes by itself, the held cards recorded in order.
        filler = fill(disks)
        state = play_until_halted(service, acked, cards)
        check_halted(service, state, acked, "space|full")
        first_held = list(acked.held)
        top = state["seq"]
        filler.unlink()
        deadline = time.monotonic() + 15
        while (state := service.get())["store"]["halted"] or state["seq"] < top + 2:
            assert time.monotonic() < deadline, "play did not resume by itself"
            time.sleep(0.05)
        for n, card in enumerate(first_held, start=1):
            acked.events[top + n] = {"type": "card", "card": card, "source": "shoe"}
        acked.held.clear()
        # 2. Full again, and the process killed while halted.
        filler = fill(disks)
        state = play_until_halted(service, acked, cards)
        check_halted(service, state, acked, "space|full")
    finally:
        if service.proc.poll() is None:
            service.kill()
    # The store as the kill left it, on the full disk, before anything restarts.
    assert floorctl(["verify", "--db", url]) == 0, capsys.readouterr()
    filler.unlink()
    again = start(tmp_path, url)
    try:
        assert again.get()["seq"] == max(acked.events)
    finally:
        again.stop()
    check_store(url, acked)
    print(f"{len(acked.events)} inputs acknowledged, {acked.refused_taps} taps refused")


def test_the_floor_database_gone_then_the_spool_full_halts_and_loses_no_acknowledged_input(
    disks: Path, tmp_path: Path, store_pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy = PgProxy()
    spool_dir = f'spool_dir = "{disks}"'
    cards = iter(CARDS * 20)
    service = start(tmp_path, proxy.url(store_pg_url), spool_dir)
    acked = Acked()
    try:
        status, body = service.tap({"type": "shuffle", "decks": 6, "cut_card": 200})
        assert status == 200
        acked.events[body["seq"]] = {"type": "shuffle", "source": "dealer"}
        proxy.stop()  # refused from now on, the open connection cut
        status, body = service.tap({"type": "shuffle", "decks": 6, "cut_card": 100})
        assert status == 200, body  # durable in the local spool
        acked.events[body["seq"]] = {"type": "shuffle", "source": "dealer"}
        state = service.get()
        assert state["devices"]["store"]["state"] == "fault"
        assert "safe in the spool" in state["devices"]["store"]["reason"]
        assert state["store"]["halted"] is False
        fill(disks)  # and the table PC's disk full: the spool's reserve is all there is
        state = play_until_halted(service, acked, cards)
        check_halted(service, state, acked, "space|full")
    finally:
        if service.proc.poll() is None:
            service.kill()
        proxy.stop()
    direct = store_pg_url
    assert floorctl(["verify", "--db", direct]) == 0, capsys.readouterr()
    (disks / "filler").unlink()
    again = start(tmp_path, direct, spool_dir)  # the database is back (straight, no proxy)
    try:
        state = again.get()
        assert state["seq"] == max(acked.events)
        assert state["devices"]["store"]["state"] == "ok"
    finally:
        again.stop()
    check_store(direct, acked)
    assert floorctl(["verify", "--db", direct]) == 0
    print(f"{len(acked.events)} inputs acknowledged, {acked.refused_taps} taps refused")
