"""The devices, wired to the table service: each runs in its own thread and never crashes it.

The shoe reader's events go through the shoe driver's own bridge (`to_engine_event`), so the
service holds no second parser; its status (connecting, connected, fault, line noise) goes to
the screen. A shoe event is accepted once the audit store holds it durably; while the store is
down the service holds it in memory (the card has left the shoe) and records it later.
"""

from __future__ import annotations

import threading
from typing import Any

import structlog

from controller.service.core import TableService
from drivers.shoe import (
    Backoff,
    DeviceStatus,
    ReaderError,
    SerialSettings,
    ShoeReader,
    Transport,
    to_engine_event,
)

log = structlog.get_logger("floorctl.devices")


class ShoeFeed:
    """Runs a shoe reader in a thread and submits what it reads to the table service."""

    def __init__(
        self,
        service: TableService,
        port: Transport | str,
        *,
        baudrate: int = 9600,
        silence_timeout: float | None = 3.0,
        reconnect_max: float = 5.0,
        noise_misreads: int = 5,
        noise_window: float = 10.0,
    ) -> None:
        self.service = service
        self.reader = ShoeReader(
            port,
            settings=SerialSettings(baudrate=baudrate),
            silence_timeout=silence_timeout,
            backoff=Backoff(maximum=reconnect_max),
            on_status=self._status,
            noise_misreads=noise_misreads,
            noise_window=noise_window,
        )
        self._thread: threading.Thread | None = None
        service.set_device("shoe", "connecting", self.reader.url)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="shoe-reader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.reader.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _status(self, status: DeviceStatus) -> None:
        self.service.set_device("shoe", status.state, status.reason)

    def _run(self) -> None:
        while True:
            try:
                for event in self.reader.events():
                    if isinstance(event, ReaderError):
                        self.service.set_device("shoe", "warning", f"reader: {event.text}")
                        continue
                    obj: dict[str, Any] | None = to_engine_event(event)
                    if obj is None:
                        continue
                    result = self.service.submit(obj, source="shoe")
                    if result.held:
                        log.warning("shoe event held until the store is back", shoe_event=obj)
                    elif not result.ok:
                        log.error("shoe event not recorded", error=result.error, shoe_event=obj)
                return  # stopped
            except Exception as exc:  # a bug must not take the table down: log and go on
                log.exception("shoe feed failed; restarting the reader", error=str(exc))
                self.service.set_device("shoe", "fault", f"reader thread failed: {exc}")
                threading.Event().wait(1.0)
