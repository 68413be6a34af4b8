"""`floorctl run` as systemd runs it: READY=1 once the screen listens, the shoe's cards in the
audit store, JSON logs bound to the table, a clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from controller.service.demo import PtyPair
from controller.service.pin import hash_pin
from controller.store.repository import Store
from drivers.shoe import CardRead, Heartbeat, encode

ROOT = Path(__file__).resolve().parent.parent


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def wait_for(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_run_reports_ready_records_the_shoe_and_stops_on_sigterm(tmp_path: Path) -> None:
    pty = PtyPair()
    db = tmp_path / "floorctl.db"
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
heartbeat_timeout = 30

[store]
url = "sqlite:///{db}"

[ui]
host = "127.0.0.1"
port = 0

[supervisors]
jsmith = "{hash_pin("2468", iterations=1000)}"
""",
        encoding="utf-8",
    )
    notify_path = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(30)
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = notify.recv(4096).decode()
        assert ready.startswith("READY=1\n"), ready
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", ready)
        assert m, ready
        base = m.group(0).rstrip("/")
        page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        assert "<title>floorctl" in page
        os.write(pty.master, encode(Heartbeat(1)))
        wait_for(lambda: get(base + "/api/state")["devices"]["shoe"]["state"] == "connected")
        assert get(base + "/api/state")["devices"]["camera"]["state"] == "off"
        shuffle = {"type": "shuffle", "decks": 6, "cut_card": 200}
        post(base + "/api/event", {"event": shuffle, "seq": get(base + "/api/state")["seq"]})
        os.write(pty.master, encode(CardRead(card="7S", deck="K7Q2M9")))
        state = wait_for(
            lambda: (s := get(base + "/api/state"))["seq"] >= 2 and s  # type: ignore[redundant-expr]
        )
        assert state["recent"][-1]["type"] == "card"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        messages = []
        while not messages or messages[-1] != "STOPPING=1":
            messages.append(notify.recv(4096).decode())
        # Status updates name a device at fault, for `systemctl status`; none here.
        assert all(m.startswith("STATUS=table T07") for m in messages[:-1])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        notify.close()
        pty.close()
    with Store.open(f"sqlite:///{db}") as store:
        events = [r.event() for r in store.records("T07")]
    assert events[0]["type"] == "table"
    assert [e["type"] for e in events[1:]] == ["shuffle", "card"]
    assert events[2]["source"] == "shoe" and events[2]["card"] == "7S"
    assert events[2]["deck"] == "K7Q2M9"
    # Logs are JSON lines bound to the table (and to the shoe once one is loaded).
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    card_logs = [x for x in lines if x.get("event") == "event" and x.get("type") == "card"]
    assert card_logs and card_logs[0]["table"] == "T07" and card_logs[0]["shoe"] == 1
