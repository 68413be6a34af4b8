"""The shoe reader: a transport, the line framer, reconnection and the silence watchdog.

``ShoeReader.events()`` yields shoe events in the order their lines were read, for as long as
the reader runs: a port that cannot be opened or goes away is retried with backoff, a
reader that stays silent past the heartbeat limit is reported as a fault, and so is a line
giving more misreads than ``noise_misreads`` within ``noise_window`` seconds ("line noise";
runs of misreads come out as one counted misread, see ``noise``). Device status
(connecting, connected, fault with its reason) goes to the ``on_status`` callback and to the
log (structlog), never to the event stream, and never raises out of the reader.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any, Literal, Protocol

import structlog

from .events import DeviceStatus, Misread, ReaderError, ShoeEvent
from .framing import LineFramer
from .noise import DEFAULT_LIMIT, DEFAULT_WINDOW, NoiseGate
from .transport import Backoff, SerialSettings, SerialTransport, Transport, TransportError

StatusCallback = Callable[[DeviceStatus], None]


class ShoeSource(Protocol):
    """Anything that yields shoe events until stopped: the serial reader, or a test double."""

    def events(self) -> Iterator[ShoeEvent]: ...

    def stop(self) -> None: ...


class ShoeReader:
    """Reads shoe events from a transport (or a pyserial URL).

    ``silence_timeout``: seconds without a valid line (heartbeat, card, ...) before the reader
    is reported as a fault; ``None`` for a plain barcode scanner that sends no heartbeat.
    """

    def __init__(
        self,
        transport: Transport | str,
        *,
        settings: SerialSettings | None = None,
        silence_timeout: float | None = 3.0,
        backoff: Backoff | None = None,
        on_status: StatusCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
        logger: Any = None,
        noise_misreads: int = DEFAULT_LIMIT,
        noise_window: float = DEFAULT_WINDOW,
    ) -> None:
        if isinstance(transport, str):
            transport = SerialTransport(transport, settings)
        if silence_timeout is not None and silence_timeout <= 0:
            raise ValueError(f"silence timeout {silence_timeout} s is not positive")
        self._transport = transport
        self._silence_timeout = silence_timeout
        self._backoff = backoff or Backoff()
        self._on_status = on_status
        self._clock = clock
        self._log = (logger or structlog.get_logger("drivers.shoe")).bind(
            device="shoe", url=transport.url
        )
        self._framer = LineFramer()
        self._gate = NoiseGate(noise_misreads, noise_window)
        self._noisy = False  # the fault shown is line noise
        self._stopping = threading.Event()
        self._status = DeviceStatus("connecting", transport.url)

    @property
    def url(self) -> str:
        return self._transport.url

    @property
    def status(self) -> DeviceStatus:
        return self._status

    def stop(self) -> None:
        """Ask ``events()`` to end; it returns within one read timeout (or backoff wait)."""
        self._stopping.set()

    def run(self, on_event: Callable[[ShoeEvent], None]) -> None:
        """Call ``on_event`` for each event, in order, until ``stop()``."""
        for event in self.events():
            on_event(event)

    def events(self) -> Generator[ShoeEvent, None, None]:
        transport = self._transport
        delays: Iterator[float] | None = None
        last_life = self._clock()
        try:
            while not self._stopping.is_set():
                if not transport.is_open or self._status.state == "connecting":
                    try:
                        transport.open()  # nothing to do if it is open already
                    except TransportError as exc:
                        self._set_status("fault", str(exc))
                        delays = delays or self._backoff.delays()
                        self._stopping.wait(next(delays))
                        continue
                    delays = None
                    last_life = self._clock()
                    self._set_status("connected")
                try:
                    data = transport.read()
                except TransportError as exc:
                    # Lines read before the fault are delivered first; a line cut off is a misread.
                    for event in self._gate.feed_all(
                        self._framer.flush("port lost"), self._clock()
                    ):
                        self._note(event)
                        yield event
                    for event in self._gate.flush():
                        self._note(event)
                        yield event
                    transport.close()
                    self._noisy = False
                    self._set_status("fault", str(exc))
                    continue
                now = self._clock()
                events = self._gate.feed_all(self._framer.feed(data), now) if data else []
                events += self._gate.tick(now)
                for event in events:
                    if not isinstance(event, Misread):
                        last_life = now
                        if self._status.state != "connected" and not self._noisy:
                            self._set_status("connected")
                    self._note(event)
                    yield event
                self._judge(now, now - last_life)
            for event in self._gate.flush():  # stopped: a run of misreads in progress
                self._note(event)
                yield event
        finally:
            pending = self._framer.pending
            if pending:
                self._log.warning("shoe.unfinished_line", raw=Misread(pending, "").text)
            transport.close()
            self._log.info("shoe.stopped")

    def _judge(self, now: float, quiet: float) -> None:
        """The status while the port is open: line noise, silence, or connected."""
        state = self._status.state
        noise = self._gate.noise(now)
        if noise is not None:
            if state == "connected":
                self._noisy = True
                self._set_status("fault", f"{self.url}: {noise}")
            return
        if self._noisy:  # the noise has died down
            self._noisy = False
            self._set_status("connected")
            return
        limit = self._silence_timeout
        if limit is not None and state == "connected" and quiet > limit:
            self._set_status(
                "fault",
                f"{self.url}: reader silent for {quiet:.1f} s "
                f"(no heartbeat or card; limit {limit:g} s)",
            )

    def _note(self, event: ShoeEvent) -> None:
        if isinstance(event, Misread):
            self._log.warning("shoe.misread", raw=event.text, reason=event.reason)
        elif isinstance(event, ReaderError):
            self._log.error("shoe.reader_error", text=event.text)

    def _set_status(self, state: Literal["connected", "fault"], reason: str = "") -> None:
        status = DeviceStatus(state, self.url, reason)
        if status == self._status:
            self._log.debug("shoe.retry", state=state, reason=reason)
            return
        self._status = status
        if status.state == "fault":
            self._log.error("shoe.fault", reason=reason)
        else:
            self._log.info("shoe.connected")
        if self._on_status is not None:
            try:
                self._on_status(status)
            except Exception:
                self._log.exception("shoe.status_callback_failed", status=status.to_dict())
