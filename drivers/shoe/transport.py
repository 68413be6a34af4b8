"""Byte transport for the shoe reader: any pyserial URL, opened with ``serial_for_url``.

``/dev/ttyUSB0``, ``loop://``, ``socket://HOST:PORT`` and a pseudo-terminal all reach the same
code. The transport only moves bytes; framing lives in ``framing``, policy (reconnect, silence)
in ``reader``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import serial


class TransportError(Exception):
    """The port could not be opened, or went away; the message names the URL."""


class Transport(Protocol):
    """What the reader and the simulated shoe need from a port."""

    @property
    def url(self) -> str: ...

    @property
    def is_open(self) -> bool: ...

    def open(self) -> None: ...

    def close(self) -> None: ...

    def read(self) -> bytes:
        """Bytes available now, waiting up to the read timeout for the first; b"" if none."""
        ...

    def write(self, data: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class SerialSettings:
    """Line settings (the reader's default is 9600 8N1); ignored by loop:// and socket://."""

    baudrate: int = 9600
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1

    def __post_init__(self) -> None:
        if self.baudrate <= 0:
            raise ValueError(f"baud rate {self.baudrate} is not a positive number")
        if self.bytesize not in (5, 6, 7, 8):
            raise ValueError(f"byte size {self.bytesize} is not one of 5, 6, 7, 8")
        if self.parity not in ("N", "E", "O", "M", "S"):
            raise ValueError(f"parity {self.parity!r} is not one of N, E, O, M, S")
        if self.stopbits not in (1, 1.5, 2):
            raise ValueError(f"stop bits {self.stopbits} is not one of 1, 1.5, 2")


class SerialTransport:
    """A pyserial port chosen by URL, opened on ``open()`` and reopenable after ``close()``."""

    def __init__(
        self,
        url: str,
        settings: SerialSettings | None = None,
        *,
        read_timeout: float = 0.05,
        write_timeout: float = 2.0,
    ) -> None:
        if not url:
            raise ValueError("the port URL is empty")
        self._url = url
        self._settings = settings or SerialSettings()
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._port: Any = None

    @property
    def url(self) -> str:
        return self._url

    @property
    def is_open(self) -> bool:
        return self._port is not None

    def open(self) -> None:
        if self._port is not None:
            return
        s = self._settings
        try:
            self._port = serial.serial_for_url(
                self._url,
                baudrate=s.baudrate,
                bytesize=s.bytesize,
                parity=s.parity,
                stopbits=s.stopbits,
                timeout=self._read_timeout,
                write_timeout=self._write_timeout,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            raise TransportError(f"{self._url}: cannot open port: {exc}") from exc

    def close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            # closing a port that has already gone away may fail: it is closed either way
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()

    def read(self) -> bytes:
        port = self._require_open("read")
        try:
            data: bytes = port.read(1)
            if data:
                waiting: int = port.in_waiting
                if waiting:
                    data += port.read(waiting)
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"{self._url}: port lost while reading: {exc}") from exc
        return data

    def write(self, data: bytes) -> None:
        port = self._require_open("write")
        try:
            port.write(data)
            port.flush()
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"{self._url}: port lost while writing: {exc}") from exc

    def _require_open(self, what: str) -> Any:
        if self._port is None:
            raise TransportError(f"{self._url}: cannot {what}: port is not open")
        return self._port


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays between reconnect attempts: ``initial``, growing by ``factor`` up to ``maximum``."""

    initial: float = 0.1
    factor: float = 2.0
    maximum: float = 5.0

    def __post_init__(self) -> None:
        if not (0 < self.initial <= self.maximum) or self.factor < 1:
            raise ValueError(
                f"backoff needs 0 < initial <= maximum and factor >= 1, got {self.initial}, "
                f"{self.maximum}, {self.factor}"
            )

    def delays(self) -> Iterator[float]:
        delay = self.initial
        while True:
            yield delay
            delay = min(delay * self.factor, self.maximum)
