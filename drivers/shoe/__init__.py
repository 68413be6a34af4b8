"""The card-shoe reader (see ``docs/reference/devices.md``).

- ``events``: what the reader reports (cards with their deck serial, the cut card, heartbeats,
  the reader's own errors, misreads with their raw bytes) and the device status;
- ``framing``: the pure line protocol, bytes to events and events to bytes;
- ``transport``: a port opened by pyserial URL (``/dev/ttyUSB0``, ``loop://``, ``socket://``,
  a pseudo-terminal);
- ``reader``: reconnection with backoff and the heartbeat watchdog, yielding events in order;
- ``bridge``: shoe events as round-engine events;
- ``simulator``: a shuffled, barcoded shoe written to a real port, with faults on request;
- ``cli``: ``floorctl shoe listen`` and ``floorctl shoe simulate``.
"""

from .bridge import shuffle_event, to_engine_event
from .events import (
    CardRead,
    CutCard,
    DeviceStatus,
    Heartbeat,
    Misread,
    ReaderError,
    ShoeEvent,
)
from .framing import LineFramer, encode, parse_line, parse_stream
from .reader import ShoeReader, ShoeSource
from .transport import Backoff, SerialSettings, SerialTransport, Transport, TransportError

__all__ = [
    "Backoff",
    "CardRead",
    "CutCard",
    "DeviceStatus",
    "Heartbeat",
    "LineFramer",
    "Misread",
    "ReaderError",
    "SerialSettings",
    "SerialTransport",
    "ShoeEvent",
    "ShoeReader",
    "ShoeSource",
    "Transport",
    "TransportError",
    "encode",
    "parse_line",
    "parse_stream",
    "shuffle_event",
    "to_engine_event",
]
