"""systemd's notify protocol, spoken by hand: one datagram per message to $NOTIFY_SOCKET.

Outside systemd (no NOTIFY_SOCKET) every call is a no-op, so the same code runs in a
terminal, in tests and under `Type=notify`. Sending never blocks.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Mapping

import structlog

log = structlog.get_logger("floorctl.sdnotify")


class Notifier:
    """Sends READY=1, STATUS=..., WATCHDOG=1 and STOPPING=1 to the service manager."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = env.get("NOTIFY_SOCKET") or None
        self.watchdog_usec = _watchdog_usec(env)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send one message made of `KEY=value` fields; returns whether it was delivered."""
        if self.address is None:
            return False
        target = self.address
        if target.startswith("@"):  # abstract namespace socket
            target = "\0" + target[1:]
        payload = "\n".join(fields).encode("utf-8")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(target)
                # Never wait: a service manager slow to read must not stall the table (this
                # is called while the table's inputs wait). A message it has no room for is
                # dropped and logged; the next status or ping follows soon.
                sock.send(payload, socket.MSG_DONTWAIT)
        except OSError as exc:
            log.warning("sd_notify failed", socket=self.address, error=str(exc))
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between pings (half of WatchdogSec), or None when no watchdog is set."""
        if self.watchdog_usec is None:
            return None
        return self.watchdog_usec / 2_000_000


def _watchdog_usec(env: Mapping[str, str]) -> int | None:
    raw = env.get("WATCHDOG_USEC")
    if not raw:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None  # the watchdog is meant for another process
    try:
        usec = int(raw)
    except ValueError:
        log.warning("WATCHDOG_USEC is not a number; watchdog pings disabled", value=raw)
        return None
    return usec if usec > 0 else None


class WatchdogPinger:
    """Pings the watchdog from a daemon thread for as long as `healthy()` returns True.

    `healthy` is the service's liveness check (the event loop answered recently); when it
    fails the pings stop and systemd restarts the service after WatchdogSec.
    """

    def __init__(self, notifier: Notifier, healthy: Callable[[], bool]) -> None:
        self.notifier = notifier
        self.healthy = healthy
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        interval = self.notifier.watchdog_interval
        if interval is None or not self.notifier.enabled:
            return
        self._thread = threading.Thread(
            target=self._run, args=(interval,), name="sd-watchdog", daemon=True
        )
        self._thread.start()

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            if self.healthy():
                self.notifier.watchdog()
            else:
                log.error("service unhealthy: withholding the watchdog ping")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
