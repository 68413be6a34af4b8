"""What the card-shoe reader reports: shoe events, and the device's own status.

A shoe event is one decoded line of the reader (see ``framing``). Device status (connected, or
a fault with its reason) is not a shoe event: it is about the reader, not the cards, and it
reaches the table service through the reader's status callback and the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class CardRead:
    """A card's barcode ``<deck>-<card>``; ``face_up`` when the reader saw it face up (16.1)."""

    card: str
    deck: str
    face_up: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "card", "card": self.card, "deck": self.deck}
        if self.face_up:
            out["face_up"] = True
        return out


@dataclass(frozen=True, slots=True)
class CutCard:
    """The cutting card passed the reader."""

    def to_dict(self) -> dict[str, Any]:
        return {"type": "cut_card"}


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """``#HB <counter>``: the reader is alive."""

    counter: int

    def to_dict(self) -> dict[str, Any]:
        return {"type": "heartbeat", "counter": self.counter}


@dataclass(frozen=True, slots=True)
class ReaderError:
    """``#ERR <text>``: the reader's own fault report."""

    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "reader_error", "text": self.text}


@dataclass(frozen=True, slots=True)
class Misread:
    """A line that is not a valid reader line, with the raw bytes as read and why it failed.

    ``count`` > 1: a run of that many misreads with no valid line between them (see
    ``noise``), reported once, with the first line's bytes and reason.
    """

    raw: bytes
    reason: str
    count: int = 1

    @property
    def text(self) -> str:
        """The raw bytes as printable text: non-ASCII and control bytes as ``\\xNN`` escapes."""
        return raw_text(self.raw)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "misread", "raw": self.text, "reason": self.reason}
        if self.count > 1:
            out["count"] = self.count
        return out


ShoeEvent = CardRead | CutCard | Heartbeat | ReaderError | Misread


def raw_text(raw: bytes) -> str:
    """Bytes as an unambiguous printable string (printable ASCII kept, the rest escaped)."""
    out: list[str] = []
    for b in raw:
        if 0x20 <= b < 0x7F and b != 0x5C:  # printable ASCII except the backslash itself
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return "".join(out)


StatusState = Literal["connecting", "connected", "fault"]


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    """The reader's state as the dealer's screen shows it: ``fault`` always carries a reason."""

    state: StatusState
    url: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "status", "state": self.state, "url": self.url}
        if self.reason:
            out["reason"] = self.reason
        return out
