"""What a table PC's deployment relies on, run for real on this machine:

- the kiosk unit's own commands (taken from the unit file) open Chromium on the address the
  running table service published, whatever port ``[ui] port`` chose;
- ``floorctl run`` opens the shoe reader's port before it imports the web server, the store
  and the camera's vision code, so a reader's first line is not lost while it starts;
- ``floorctl run --check --devices`` opens each device and names the one that fails.
"""

from __future__ import annotations

import configparser
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import paths
import pytest

from controller.service.demo import PtyPair
from controller.service.pin import hash_pin
from drivers.shoe import Heartbeat, encode

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "systemd"


def config_text(tmp_path: Path, shoe: str, store: str, extra: str = "") -> str:
    return f"""
[table]
table_id = "T07"
game = "pontoon-nz-2000"
boxes = 7
min_bet = 5
max_bet = 1000

[shoe]
url = "{shoe}"
heartbeat_timeout = 2

[store]
url = "{store}"

[ui]
port = 0

[supervisors]
jsmith = "{hash_pin("2468", iterations=1000)}"
{extra}
"""


def unit_commands(name: str, key: str) -> list[list[str]]:
    """The unit's ``key=`` command lines as argument lists, unescaped as systemd does."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    text = (UNITS / name).read_text(encoding="utf-8").replace("\\\n", " ")
    parser.read_string(text)
    value = parser["Service"][key]
    return [[word.replace("$$", "$") for word in shlex.split(value)]]


@pytest.fixture
def running_table(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    runtime = tmp_path / "run"
    runtime.mkdir()
    config = tmp_path / "table.toml"
    config.write_text(config_text(tmp_path, "none", f"sqlite:///{tmp_path / 'table.db'}"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        cwd=tmp_path,
        env=dict(os.environ, RUNTIME_DIRECTORY=str(runtime)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc, runtime
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_the_kiosk_opens_the_page_the_table_published(
    tmp_path: Path, running_table: tuple[subprocess.Popen[str], Path]
) -> None:
    proc, runtime = running_table
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    opened = tmp_path / "chromium-args.json"
    chromium = fake_bin / "chromium"
    chromium.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(opened)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    chromium.chmod(0o755)

    def as_here(argv: list[str]) -> list[str]:
        return [
            w.replace("/run/floorctl", str(runtime))
            .replace("/usr/bin/chromium", str(chromium))
            .replace("/opt/floorctl/.venv/bin/python", sys.executable)
            for w in argv
        ]

    env = dict(os.environ, HOME=str(tmp_path))
    (pre,) = unit_commands("floorctl-kiosk.service", "ExecStartPre")
    subprocess.run(as_here(pre), env=env, timeout=60, check=True)  # returns once the page answers
    assert proc.poll() is None
    published = (runtime / "ui.env").read_text().strip()
    assert published.startswith("FLOORCTL_URL=http://127.0.0.1:")
    url = published.split("=", 1)[1]
    assert not url.endswith(":8080/")  # port 0: the port the service chose
    (start,) = unit_commands("floorctl-kiosk.service", "ExecStart")
    subprocess.run(as_here(start), env=env, timeout=30, check=True)
    args = json.loads(opened.read_text())
    assert "--kiosk" in args
    assert f"--app={url}" in args


def test_run_opens_the_reader_s_port_before_the_heavy_imports(tmp_path: Path) -> None:
    """The order is read from Python's audit events in the service's own process: the
    connection to the reader (socket://) comes before FastAPI, SQLAlchemy or OpenCV load."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:
        conn, _ = server.accept()
        conn.sendall(encode(Heartbeat(1)))
        accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    config = tmp_path / "table.toml"
    config.write_text(
        config_text(tmp_path, f"socket://127.0.0.1:{port}", f"sqlite:///{tmp_path / 't.db'}")
    )
    order = tmp_path / "order.txt"
    code = (
        "import sys\n"
        f"log = open({str(order)!r}, 'w', buffering=1)\n"
        "heavy = ('fastapi', 'sqlalchemy', 'cv2', 'uvicorn')\n"
        "def hook(event, args):\n"
        "    if event == 'import' and args[0] in heavy:\n"
        "        log.write('import ' + args[0] + '\\n')\n"
        f"    elif event == 'socket.connect' and args[1][1:2] == ({port},):\n"
        "        log.write('connect\\n')\n"
        "sys.addaudithook(hook)\n"
        "from controller.cli import main\n"
        f"sys.exit(main(['run', '--config', {str(config)!r}]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = order.read_text().split() if order.exists() else []
            if "connect" in lines and "fastapi" in lines:
                break
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
        server.close()
        for conn in accepted:
            conn.close()
    events = order.read_text().splitlines()
    assert "connect" in events, events
    imports = [i for i, e in enumerate(events) if e.startswith("import ")]
    assert imports, events
    assert events.index("connect") < min(imports), events


def run_check(config: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--check",
         "--devices"],
        capture_output=True, text=True, timeout=60, cwd=config.parent,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout + proc.stderr


def test_check_devices_all_good(tmp_path: Path) -> None:
    pty = PtyPair()
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f.png"), np.full((720, 1280, 3), 120, np.uint8))
    camera = (ROOT / "config" / "table.example.toml").read_text().split("[camera]", 1)[1]
    config = tmp_path / "table.toml"
    config.write_text(
        config_text(tmp_path, pty.path, f"sqlite:///{tmp_path / 'table.db'}")
        + "\n[camera]"
        + camera.replace('source = "0"', f'source = "{frames}"')
    )
    done = threading.Event()

    def reader_heartbeat() -> None:  # as a reader does: a heartbeat every so often
        n = 0
        while not done.wait(0.3):
            n += 1
            os.write(pty.master, encode(Heartbeat(n)))

    writer = threading.Thread(target=reader_heartbeat, daemon=True)
    writer.start()
    try:
        status, out = run_check(config)
    finally:
        done.set()
        writer.join()
        pty.close()
    assert status == 0, out
    assert "shoe    ok:" in out and "heard a heartbeat" in out
    assert "camera  ok:" in out and "1280x720" in out
    # the example table's chips were never learned: the technician is told to learn them
    assert "never learned on this table" in out and "calibrate --learn" in out
    assert "store   ok:" in out and "new store" in out


@pytest.mark.parametrize(
    ("shoe", "store", "device", "why"),
    [
        ("/dev/ttyNOPE9", "sqlite:///{tmp}/t.db", "shoe", "cannot open port"),
        ("PTY", "sqlite:///{tmp}/t.db", "shoe", "no valid line"),
        ("none", "sqlite:///{tmp}/missing/t.db", "store", "does not exist"),
        ("none", "postgresql://postgres@127.0.0.1:1/test", "store", "127.0.0.1"),
    ],
    ids=["no-port", "silent-reader", "no-store-dir", "database-down"],
)
def test_check_devices_names_the_device_that_failed(
    tmp_path: Path, shoe: str, store: str, device: str, why: str
) -> None:
    pty = PtyPair()
    try:
        config = tmp_path / "table.toml"
        config.write_text(
            config_text(tmp_path, pty.path if shoe == "PTY" else shoe, store.format(tmp=tmp_path))
        )
        status, out = run_check(config)
    finally:
        pty.close()
    assert status == 1, out
    failed = [line for line in out.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith(device), out
    assert why in failed[0]


def test_check_devices_on_an_existing_store(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    scenario = paths.EXAMPLES / "01-pontoon-basic.jsonl"
    subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", str(scenario), "--db", f"sqlite:///{db}"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    config = tmp_path / "table.toml"
    config.write_text(config_text(tmp_path, "none", f"sqlite:///{db}"))
    status, out = run_check(config)
    assert status == 0, out
    assert "store   ok:" in out and "schema current" in out


def test_check_devices_black_camera(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f.png"), np.zeros((720, 1280, 3), np.uint8))
    camera = (ROOT / "config" / "table.example.toml").read_text().split("[camera]", 1)[1]
    config = tmp_path / "table.toml"
    config.write_text(
        config_text(tmp_path, "none", f"sqlite:///{tmp_path / 't.db'}")
        + "\n[camera]"
        + camera.replace('source = "0"', f'source = "{frames}"')
    )
    status, out = run_check(config)
    assert status == 1
    assert "camera  FAILED" in out and "black" in out
