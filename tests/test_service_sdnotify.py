"""systemd's notify protocol over $NOTIFY_SOCKET: readiness, status, watchdog pings."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.sdnotify import Notifier, WatchdogPinger


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    yield path, sock
    sock.close()


def test_outside_systemd_nothing_is_sent() -> None:
    n = Notifier({})
    assert not n.enabled
    assert n.ready() is False
    assert n.watchdog_interval is None


def test_ready_and_status_reach_the_socket(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.ready("table T07 ready")
    assert sock.recv(4096).decode() == "READY=1\nSTATUS=table T07 ready"
    assert n.stopping()
    assert sock.recv(4096).decode() == "STOPPING=1"


def test_abstract_namespace_sockets_are_supported() -> None:
    name = f"floorctl-test-{os.getpid()}-{time.monotonic_ns()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).watchdog()
        assert sock.recv(4096) == b"WATCHDOG=1"
    finally:
        sock.close()


def test_a_missing_socket_is_logged_not_raised(tmp_path: Path) -> None:
    assert Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")}).ready() is False


def test_watchdog_pings_at_half_the_interval_while_healthy(
    notify_socket: tuple[str, socket.socket],
) -> None:
    path, sock = notify_socket
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": str(os.getpid())}
    n = Notifier(env)
    assert n.watchdog_interval == pytest.approx(0.1)
    healthy = [True]
    pinger = WatchdogPinger(n, lambda: healthy[0])
    pinger.start()
    try:
        assert sock.recv(64) == b"WATCHDOG=1"
        assert sock.recv(64) == b"WATCHDOG=1"
        healthy[0] = False  # a hung service stops pinging, so systemd restarts it
        time.sleep(0.15)
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            while True:  # drain what was sent before the service turned unhealthy
                sock.recv(64)
        sock.settimeout(0.35)  # more than three ping intervals: none comes
        with pytest.raises(TimeoutError):
            sock.recv(64)
    finally:
        pinger.stop()


def test_a_watchdog_meant_for_another_process_is_ignored() -> None:
    env = {"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}
    assert Notifier(env).watchdog_interval is None


def test_a_service_manager_that_does_not_read_never_stalls_the_sender(
    notify_socket: tuple[str, socket.socket],
) -> None:
    # The table calls this while its inputs wait: a full socket queue drops the message.
    path, sock = notify_socket
    n = Notifier({"NOTIFY_SOCKET": path})
    results = [n.status(f"status {i}") for i in range(2000)]  # (a blocking send would hang)
    assert results[0] is True and results[-1] is False
    assert sock.recv(4096).decode() == "STATUS=status 0"
