"""A simulated shoe: N barcoded decks, shuffled with a cut card, written to a real port.

It writes the same lines a reader would (framed by ``framing.encode``) through the same
transport as the reader, at dealing pace, with a heartbeat about once a second and faults on
request. Everything random comes from one seeded ``random.Random``, so a seed replays a shoe.
"""

from __future__ import annotations

import random
import re
import string
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import structlog

from controller.cards import deck

from .bridge import shuffle_event
from .events import CardRead, CutCard, Heartbeat, Misread
from .framing import checksum, encode, frame, line_body, parse_line
from .transport import Transport, TransportError

FaultKind = Literal["misread", "checksum", "garbage", "faceup", "drop", "silence"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)

# Probability per card of a fault named without a rate ("--faults misread,silence").
DEFAULT_RATES: Mapping[FaultKind, float] = {
    "misread": 0.02,
    "checksum": 0.02,
    "garbage": 0.02,
    "faceup": 0.01,
    "drop": 0.005,
    "silence": 0.005,
}

_SERIAL_ALPHABET = string.ascii_uppercase + string.digits
_log = structlog.get_logger("drivers.shoe.simulator")


def make_deck_serials(count: int, rng: random.Random, length: int = 6) -> list[str]:
    """``count`` distinct random deck serials of ``length`` characters A–Z 0–9."""
    if not 4 <= length <= 12:
        raise ValueError(f"deck serial length {length} is outside 4..12")
    if count < 1:
        raise ValueError(f"deck count {count} is not positive")
    serials: list[str] = []
    seen: set[str] = set()
    while len(serials) < count:
        serial = "".join(rng.choice(_SERIAL_ALPHABET) for _ in range(length))
        if serial not in seen:
            seen.add(serial)
            serials.append(serial)
    return serials


@dataclass(frozen=True, slots=True)
class ShoeLoad:
    """A loaded shoe: its decks, its cards in draw order, and the cards before the cut card."""

    deck_serials: tuple[str, ...]
    cards: tuple[CardRead, ...]
    cut_card: int | None

    def shuffle_event(self) -> dict[str, Any]:
        """The load record for the engine (``shuffle`` with ``deck_serials``)."""
        return shuffle_event(self.deck_serials, self.cut_card)


def load_shoe(
    decks: int,
    rng: random.Random,
    *,
    pontoon: bool = False,
    cut_card: int | Literal["auto"] | None = "auto",
) -> ShoeLoad:
    """Shuffle ``decks`` barcoded decks (no tens for Pontoon) and place the cut card.

    ``cut_card="auto"`` puts it 70–80% into the shoe; an int puts that many cards before it;
    ``None`` inserts none.
    """
    serials = make_deck_serials(decks, rng)
    one_deck = deck("T" if pontoon else "")
    cards = [CardRead(card=c, deck=s) for s in serials for c in one_deck]
    rng.shuffle(cards)
    if cut_card == "auto":
        cut: int | None = round(len(cards) * rng.uniform(0.70, 0.80))
    else:
        cut = cut_card
    if cut is not None and not 0 <= cut <= len(cards):
        raise ValueError(f"cut card position {cut} is outside 0..{len(cards)}")
    return ShoeLoad(tuple(serials), tuple(cards), cut)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Which faults to inject: a probability per card for each kind, and kinds at card numbers.

    Card numbers count from 1 in draw order; the fault applies to that card (``drop`` and
    ``silence`` happen just before it is written).
    """

    rates: Mapping[FaultKind, float] = field(default_factory=dict)
    at: Mapping[int, frozenset[FaultKind]] = field(default_factory=dict)

    def faults_for(self, number: int, rng: random.Random) -> set[FaultKind]:
        kinds = set(self.at.get(number, ()))
        for kind in FAULT_KINDS:  # a fixed order, so a seed gives the same shoe
            rate = self.rates.get(kind, 0.0)
            if rate and rng.random() < rate:
                kinds.add(kind)
        return kinds


_FAULT_ITEM = re.compile(r"([a-z]+)(?:=([0-9.]+)|@([0-9]+))?")


def parse_faults(spec: str) -> FaultPlan:
    """``"misread=0.05,faceup@3,drop@10,checksum"``: a rate, a card number, or the default rate."""
    rates: dict[FaultKind, float] = {}
    at: dict[int, set[FaultKind]] = {}
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        m = _FAULT_ITEM.fullmatch(item)
        if m is None or m[1] not in FAULT_KINDS:
            raise ValueError(
                f"fault {item!r} is not KIND, KIND=RATE or KIND@CARD "
                f"(KIND one of {', '.join(FAULT_KINDS)})"
            )
        kind: FaultKind = m[1]  # checked against FAULT_KINDS above
        if m[3] is not None:
            number = int(m[3])
            if number < 1:
                raise ValueError(f"fault {item!r}: card numbers count from 1")
            at.setdefault(number, set()).add(kind)
        else:
            rate = DEFAULT_RATES[kind] if m[2] is None else float(m[2])
            if not 0 <= rate <= 1:
                raise ValueError(f"fault {item!r}: rate {rate} is outside 0..1")
            rates[kind] = rate
    return FaultPlan(rates, {n: frozenset(k) for n, k in at.items()})


@dataclass(frozen=True, slots=True)
class Written:
    """One line the simulated shoe wrote: what it stands for, and the bytes."""

    kind: Literal["card", "cut_card", "heartbeat", "garbage", "misread", "checksum"]
    data: bytes
    card: CardRead | None = None


class SimulatedShoe:
    """Deals a loaded shoe into a transport, line by line, at ``interval`` seconds per card."""

    def __init__(
        self,
        transport: Transport,
        load: ShoeLoad,
        rng: random.Random,
        *,
        interval: float = 1.5,
        heartbeat_interval: float | None = 1.0,
        faults: FaultPlan | None = None,
        with_checksum: bool = False,
        drop_seconds: float = 5.0,
        silence_seconds: float = 5.0,
        on_write: Callable[[Written], None] | None = None,
    ) -> None:
        self._transport = transport
        self._load = load
        self._rng = rng
        self._interval = interval
        self._heartbeat_interval = heartbeat_interval
        self._faults = faults or FaultPlan()
        self._with_checksum = with_checksum
        self._drop_seconds = drop_seconds
        self._silence_seconds = silence_seconds
        self._on_write = on_write
        self._stopping = threading.Event()
        self._sleep = self._stopping.wait
        self._heartbeat = 0
        self._next_heartbeat = 0.0
        self.written: list[Written] = []

    def stop(self) -> None:
        self._stopping.set()

    def run(self, cards: int | None = None) -> list[Written]:
        """Deal ``cards`` cards (the whole shoe if ``None``) and the cut card where it falls.

        Returns what was written. A port that goes away is reopened (the shoe waits for it).
        """
        self._open()
        self._next_heartbeat = time.monotonic()
        total = len(self._load.cards) if cards is None else min(cards, len(self._load.cards))
        for number, card in enumerate(self._load.cards[:total], start=1):
            if self._stopping.is_set():
                break
            self._wait(self._interval if number > 1 else 0.0)
            if self._stopping.is_set():  # stopped while waiting: deal nothing more
                break
            if self._load.cut_card == number - 1:
                self._write(Written("cut_card", self._frame(line_body(CutCard()))))
            self._deal(number, card)
        if self._load.cut_card == total and not self._stopping.is_set():
            self._write(Written("cut_card", self._frame(line_body(CutCard()))))
        return self.written

    def _deal(self, number: int, card: CardRead) -> None:
        faults = self._faults.faults_for(number, self._rng)
        if "drop" in faults:
            self._transport.close()
            self._sleep(self._drop_seconds)
            self._open()
        if "silence" in faults:
            self._sleep(self._silence_seconds)
            self._next_heartbeat = time.monotonic()
        if "garbage" in faults:
            self._write(Written("garbage", self._garbage()))
        if "faceup" in faults:
            card = CardRead(card.card, card.deck, face_up=True)
        if "misread" in faults:
            self._write(Written("misread", self._misread(card), card))
        elif "checksum" in faults:
            body = line_body(card)
            wrong = checksum(body) ^ (1 + self._rng.randrange(255))  # never the right one
            self._write(Written("checksum", body + b"*%02X\r\n" % wrong, card))
        else:
            self._write(Written("card", encode(card, with_checksum=self._with_checksum), card))

    def _frame(self, body: bytes) -> bytes:
        return frame(body, with_checksum=self._with_checksum)

    def _garbage(self) -> bytes:
        """Line noise: 1–30 random bytes (no line end inside), then a line end."""
        while True:
            size = 1 + self._rng.randrange(30)
            noise = bytes(self._rng.choice(_NOISE_BYTES) for _ in range(size))
            if isinstance(parse_line(noise), Misread):  # never a valid line by chance
                return noise + b"\r\n"

    def _misread(self, card: CardRead) -> bytes:
        """A damaged barcode: cut short, or with a character the scanner could not decode."""
        body = line_body(card)
        while True:
            if self._rng.random() < 0.5:
                damaged = body[: self._rng.randrange(1, len(body))]
            else:
                at = self._rng.randrange(len(body))
                damaged = body[:at] + b"?" + body[at + 1 :]
            if isinstance(parse_line(damaged), Misread):  # never write a valid line by chance
                return damaged + b"\r\n"

    def _wait(self, seconds: float) -> None:
        """Wait, writing heartbeats when they fall due."""
        end = time.monotonic() + seconds
        while not self._stopping.is_set():
            now = time.monotonic()
            if self._heartbeat_interval is not None and now >= self._next_heartbeat:
                self._heartbeat += 1
                self._write(
                    Written("heartbeat", self._frame(line_body(Heartbeat(self._heartbeat))))
                )
                self._next_heartbeat = now + self._heartbeat_interval
            if now >= end:
                return
            until = end if self._heartbeat_interval is None else min(end, self._next_heartbeat)
            self._sleep(max(0.0, until - now))

    def _write(self, item: Written) -> None:
        while True:
            try:
                self._transport.write(item.data)
                break
            except TransportError as exc:
                _log.warning("shoe_sim.port_lost", url=self._transport.url, reason=str(exc))
                self._transport.close()
                if self._stopping.is_set():
                    return
                self._sleep(0.5)
                self._open()
        self.written.append(item)
        if self._on_write is not None:
            self._on_write(item)

    def _open(self) -> None:
        """Open the port, waiting for it to appear (a pty being recreated, a cable replugged)."""
        reported = False
        while not self._stopping.is_set():
            try:
                self._transport.open()
                return
            except TransportError as exc:
                if not reported:
                    _log.warning("shoe_sim.waiting_for_port", reason=str(exc))
                    reported = True
                self._sleep(0.5)


_NOISE_BYTES = bytes(b for b in range(256) if b not in (0x0A, 0x0D))
