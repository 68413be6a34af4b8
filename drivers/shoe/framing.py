"""The reader's line protocol: bytes in, shoe events out (and back, for the simulated shoe).

One ASCII line per event, ended by CR, LF or CR LF (see ``docs/reference/devices.md``)::

    K7Q2M9-7S          a card drawn (deck serial, card code)
    CUT                the cutting card
    #FACEUP K7Q2M9-7S  a card seen face up in the shoe
    #HB 1042           heartbeat
    #ERR <text>        the reader's own fault report

A line may end with ``*HH``: two hex digits of the XOR of the bytes before the ``*``. A line
whose checksum fails, that is too long, not printable ASCII, empty or none of the above is a
:class:`Misread` carrying its raw bytes. Nothing here raises on any input and nothing does I/O.
"""

from __future__ import annotations

import re
from functools import reduce
from operator import xor

from .events import CardRead, CutCard, Heartbeat, Misread, ReaderError, ShoeEvent

MAX_LINE = 80
"""Longest line accepted, in bytes before the terminator (the longest valid card line is 26)."""

_TERMINATOR = re.compile(rb"[\r\n]")
_NOT_PRINTABLE = re.compile(rb"[^\x20-\x7e]")
_HEX = frozenset(b"0123456789ABCDEFabcdef")
_BARCODE = re.compile(rb"([A-Z0-9]{4,12})-([A23456789TJQK][SHDC])")
_HEARTBEAT = re.compile(rb"#HB ([0-9]{1,12})")
_SERIAL = re.compile(r"[A-Z0-9]{4,12}")


def is_deck_serial(text: str) -> bool:
    """A deck serial is 4–12 characters ``A–Z 0–9``."""
    return _SERIAL.fullmatch(text) is not None


def checksum(body: bytes) -> int:
    """XOR of the bytes (as in NMEA 0183)."""
    return reduce(xor, body, 0)


def parse_line(line: bytes) -> ShoeEvent:
    """Decode one line (without its terminator). Never raises: a bad line is a Misread."""
    if not line:
        return Misread(line, "empty line")
    if len(line) > MAX_LINE:
        return Misread(line[:MAX_LINE], f"line too long: {len(line)} bytes, at most {MAX_LINE}")
    bad = _NOT_PRINTABLE.search(line)
    if bad is not None:
        return Misread(
            line,
            f"byte 0x{line[bad.start()]:02x} at column {bad.start() + 1} is not printable ASCII",
        )
    body = line
    if len(line) >= 3 and line[-3] == 0x2A and line[-2] in _HEX and line[-1] in _HEX:  # "*HH"
        body = line[:-3]
        stated = int(line[-2:], 16)
        actual = checksum(body)
        if stated != actual:
            return Misread(line, f"checksum *{stated:02X} does not match *{actual:02X}")
    if body == b"CUT":
        return CutCard()
    if body[:1] == b"#":
        return _parse_message(line, body)
    m = _BARCODE.fullmatch(body)
    if m is None:
        return Misread(line, "not a card barcode <deck serial>-<card>, CUT or #message")
    return CardRead(card=m[2].decode("ascii"), deck=m[1].decode("ascii"))


def _parse_message(line: bytes, body: bytes) -> ShoeEvent:
    if body.startswith(b"#HB"):
        m = _HEARTBEAT.fullmatch(body)
        if m is None:
            return Misread(line, "heartbeat is not '#HB <counter>'")
        return Heartbeat(int(m[1]))
    if body.startswith(b"#FACEUP "):
        m = _BARCODE.fullmatch(body, 8)
        if m is None:
            return Misread(line, "face-up card is not '#FACEUP <deck serial>-<card>'")
        return CardRead(card=m[2].decode("ascii"), deck=m[1].decode("ascii"), face_up=True)
    if body == b"#ERR" or body.startswith(b"#ERR "):
        return ReaderError(body[5:].decode("ascii"))
    return Misread(line, "unknown reader message (not #HB, #FACEUP or #ERR)")


class LineFramer:
    """Turns a byte stream, split anywhere, into shoe events in the order their lines ended.

    CR, LF and CR LF all end a line (a CR LF split between two chunks still counts once). A
    line growing past ``MAX_LINE`` is kept only up to that length, so noise without line
    ends cannot grow memory, and is reported as a too-long misread when it ends.
    """

    __slots__ = ("_after_cr", "_buf", "_length")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._length = 0  # bytes in the current line, including those not kept
        self._after_cr = False

    @property
    def pending(self) -> bytes:
        """The bytes of the line not yet ended (at most ``MAX_LINE``)."""
        return bytes(self._buf)

    def feed(self, data: bytes) -> list[ShoeEvent]:
        if not data:
            return []
        events: list[ShoeEvent] = []
        n = len(data)
        i = 1 if self._after_cr and data[0] == 0x0A else 0
        self._after_cr = False
        while i < n:
            m = _TERMINATOR.search(data, i)
            if m is None:
                self._keep(data, i, n)
                break
            j = m.start()
            self._keep(data, i, j)
            events.append(self._end_line())
            if data[j] == 0x0D:
                if j + 1 < n:
                    if data[j + 1] == 0x0A:
                        j += 1
                else:
                    self._after_cr = True
            i = j + 1
        return events

    def flush(self, why: str) -> list[ShoeEvent]:
        """End the stream: a line cut off (no terminator yet) comes back as a misread."""
        self._after_cr = False
        if not self._length:
            return []
        raw = bytes(self._buf)
        length = self._length
        self._buf.clear()
        self._length = 0
        return [Misread(raw, f"line cut off after {length} bytes: {why}")]

    def _keep(self, data: bytes, start: int, end: int) -> None:
        self._length += end - start
        room = MAX_LINE + 1 - len(self._buf)
        if room > 0:
            self._buf += data[start : min(end, start + room)]

    def _end_line(self) -> ShoeEvent:
        if self._length > MAX_LINE:
            event: ShoeEvent = Misread(
                bytes(self._buf[:MAX_LINE]),
                f"line too long: {self._length} bytes, at most {MAX_LINE}",
            )
        else:
            event = parse_line(bytes(self._buf))
        self._buf.clear()
        self._length = 0
        return event


def parse_stream(data: bytes) -> list[ShoeEvent]:
    """Every line of a complete stream, a trailing unterminated line included as a misread."""
    framer = LineFramer()
    return framer.feed(data) + framer.flush("end of stream")


# -- writing: the simulated shoe (and tests) frame lines with the same rules --------------------


def line_body(event: CardRead | CutCard | Heartbeat | ReaderError) -> bytes:
    """The text of the reader line for an event, without checksum or terminator."""
    if isinstance(event, CardRead):
        for name, value in (("deck serial", event.deck), ("card", event.card)):
            if not value.isascii():
                raise ValueError(f"{name} {value!r} is not ASCII")
        barcode = f"{event.deck}-{event.card}".encode("ascii")
        if _BARCODE.fullmatch(barcode) is None:
            raise ValueError(f"{barcode!r} is not a card barcode <deck serial>-<card>")
        return b"#FACEUP " + barcode if event.face_up else barcode
    if isinstance(event, CutCard):
        return b"CUT"
    if isinstance(event, Heartbeat):
        if not 0 <= event.counter < 10**12:
            raise ValueError(f"heartbeat counter {event.counter} is outside 0..999999999999")
        return b"#HB %d" % event.counter
    text = event.text.encode("ascii", "strict")
    if _NOT_PRINTABLE.search(text):
        raise ValueError(f"reader error text {event.text!r} is not printable ASCII")
    return b"#ERR " + text if text else b"#ERR"


def frame(body: bytes, *, with_checksum: bool = False, terminator: bytes = b"\r\n") -> bytes:
    """A complete line: the body, ``*HH`` when asked, and the terminator."""
    if with_checksum:
        body += b"*%02X" % checksum(body)
    return body + terminator


def encode(
    event: CardRead | CutCard | Heartbeat | ReaderError,
    *,
    with_checksum: bool = False,
    terminator: bytes = b"\r\n",
) -> bytes:
    """The reader line for an event, ready to write to a port."""
    return frame(line_body(event), with_checksum=with_checksum, terminator=terminator)
