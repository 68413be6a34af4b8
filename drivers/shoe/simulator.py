"""A simulated shoe: N barcoded decks, shuffled with a cut card, written to a real port.

It writes the same lines a reader would (framed by ``framing.encode``) through the same
transport as the reader, at dealing pace, with a heartbeat about once a second and faults on
request. Everything random comes from one seeded ``random.Random``, so a seed replays a shoe.

The decks are physical (:class:`PhysicalDeck`): a deck fault (``short-deck``, ``ten-in-deck``,
``doubled-card``, ``foreign-card``) changes the deck itself, so it shows in the deck's
inspection, in the shoe and in the cards left at its end alike. Besides dealing
(:meth:`SimulatedShoe.run`) the shoe can read a deck through for inspection
(:meth:`SimulatedShoe.inspect`) and read out the cards left (:meth:`SimulatedShoe.read_out`).
The reader has no line for "an inspection starts" or "the shoe has ended": those are the
dealer's taps on the screen (``inspect``, ``inspect_end``, ``shoe_end``), never the reader's;
the per-card faults (misreads, face up, drops) apply to the cards dealt only.
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
# Faults of a deck itself: a card missing, a ten in a Pontoon deck, a card twice, a card of
# another deck in place of one of its own.
DeckFaultKind = Literal["short-deck", "ten-in-deck", "doubled-card", "foreign-card"]
DECK_FAULT_KINDS: tuple[DeckFaultKind, ...] = get_args(DeckFaultKind)

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
class PhysicalDeck:
    """One deck as it is: its serial and its cards (in the order sorted for inspection)."""

    serial: str
    cards: tuple[CardRead, ...]


@dataclass(frozen=True, slots=True)
class Injected:
    """A deck fault put in: the card the deck now lacks and the card it now holds beyond its
    own, as barcodes (``K7Q2M9-7H``); what a reconciliation of a shoe holding it must name."""

    kind: DeckFaultKind
    deck: str
    missing: str | None = None
    extra: str | None = None

    def describe(self) -> str:
        parts = []
        if self.missing is not None:
            parts.append(f"{self.missing} missing")
        if self.extra is not None:
            parts.append(f"{self.extra} added")
        return f"{self.kind} in deck {self.deck}: {', '.join(parts)}"


@dataclass(frozen=True, slots=True)
class ShoeLoad:
    """A loaded shoe: its decks, its cards in draw order, and the cards before the cut card;
    the physical decks it was made of and the deck faults put into them."""

    deck_serials: tuple[str, ...]
    cards: tuple[CardRead, ...]
    cut_card: int | None
    decks: tuple[PhysicalDeck, ...] = ()
    injected: tuple[Injected, ...] = ()

    def shuffle_event(self) -> dict[str, Any]:
        """The load record for the engine (``shuffle`` with ``deck_serials``)."""
        return shuffle_event(self.deck_serials, self.cut_card)


def make_decks(
    count: int,
    rng: random.Random,
    *,
    pontoon: bool = False,
    faults: tuple[tuple[DeckFaultKind, int | None], ...] = (),
) -> tuple[tuple[PhysicalDeck, ...], tuple[Injected, ...]]:
    """``count`` barcoded decks (no tens for Pontoon), each fault put into the deck it names
    (numbered from 1; ``None``: a deck at random)."""
    serials = make_deck_serials(count, rng)
    one_deck = deck("T" if pontoon else "")
    decks = {s: [CardRead(card=c, deck=s) for c in one_deck] for s in serials}
    injected: list[Injected] = []
    for kind, number in faults:
        if number is not None and not 1 <= number <= count:
            raise ValueError(f"fault {kind}@{number}: the shoe has decks 1 to {count}")
        serial = serials[number - 1] if number is not None else rng.choice(serials)
        cards = decks[serial]
        if kind == "short-deck":
            gone = cards.pop(rng.randrange(len(cards)))
            injected.append(Injected(kind, serial, missing=f"{serial}-{gone.card}"))
        elif kind == "doubled-card":
            twice = rng.choice(cards)
            cards.insert(cards.index(twice) + 1, twice)
            injected.append(Injected(kind, serial, extra=f"{serial}-{twice.card}"))
        elif kind == "ten-in-deck":
            if not pontoon:
                raise ValueError("fault ten-in-deck: only a Pontoon deck holds no tens")
            ten = CardRead(card="T" + rng.choice("SHDC"), deck=serial)
            cards.insert(rng.randrange(len(cards) + 1), ten)
            injected.append(Injected(kind, serial, extra=f"{serial}-{ten.card}"))
        else:  # foreign-card: one of its cards swapped for a card of a deck not in the shoe
            other = next(s for s in make_deck_serials(count + 1, rng) if s not in decks)
            at = rng.randrange(len(cards))
            gone = cards[at]
            cards[at] = CardRead(card=rng.choice(one_deck), deck=other)
            injected.append(
                Injected(
                    kind, serial, missing=f"{serial}-{gone.card}", extra=f"{other}-{cards[at].card}"
                )
            )
    return tuple(PhysicalDeck(s, tuple(decks[s])) for s in serials), tuple(injected)


def shuffle_decks(
    decks: tuple[PhysicalDeck, ...],
    rng: random.Random,
    *,
    cut_card: int | Literal["auto"] | None = "auto",
    injected: tuple[Injected, ...] = (),
) -> ShoeLoad:
    """Shuffle these decks into a shoe and place the cut card.

    ``cut_card="auto"`` puts it 70–80% into the shoe; an int puts that many cards before it;
    ``None`` inserts none.
    """
    cards = [c for d in decks for c in d.cards]
    rng.shuffle(cards)
    if cut_card == "auto":
        cut: int | None = round(len(cards) * rng.uniform(0.70, 0.80))
    else:
        cut = cut_card
    if cut is not None and not 0 <= cut <= len(cards):
        raise ValueError(f"cut card position {cut} is outside 0..{len(cards)}")
    return ShoeLoad(tuple(d.serial for d in decks), tuple(cards), cut, decks, injected)


def load_shoe(
    decks: int,
    rng: random.Random,
    *,
    pontoon: bool = False,
    cut_card: int | Literal["auto"] | None = "auto",
    deck_faults: tuple[tuple[DeckFaultKind, int | None], ...] = (),
) -> ShoeLoad:
    """Shuffle ``decks`` barcoded decks (no tens for Pontoon), with the deck faults asked for,
    and place the cut card (see :func:`shuffle_decks`)."""
    physical, injected = make_decks(decks, rng, pontoon=pontoon, faults=deck_faults)
    return shuffle_decks(physical, rng, cut_card=cut_card, injected=injected)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Which faults to inject: a probability per card for each kind, and kinds at card numbers.

    Card numbers count from 1 in draw order; the fault applies to that card (``drop`` and
    ``silence`` happen just before it is written).
    """

    rates: Mapping[FaultKind, float] = field(default_factory=dict)
    at: Mapping[int, frozenset[FaultKind]] = field(default_factory=dict)
    decks: tuple[tuple[DeckFaultKind, int | None], ...] = ()  # (kind, deck number or None)

    def faults_for(self, number: int, rng: random.Random) -> set[FaultKind]:
        kinds = set(self.at.get(number, ()))
        for kind in FAULT_KINDS:  # a fixed order, so a seed gives the same shoe
            rate = self.rates.get(kind, 0.0)
            if rate and rng.random() < rate:
                kinds.add(kind)
        return kinds


_FAULT_ITEM = re.compile(r"([a-z-]+)(?:=([0-9.]+)|@([0-9]+))?")


def parse_faults(spec: str) -> FaultPlan:
    """``"misread=0.05,faceup@3,drop@10,checksum"``: a rate, a card number, or the default rate;
    ``"short-deck,doubled-card@2"``: a deck fault in a deck at random, or in deck 2."""
    rates: dict[FaultKind, float] = {}
    at: dict[int, set[FaultKind]] = {}
    decks: list[tuple[DeckFaultKind, int | None]] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        m = _FAULT_ITEM.fullmatch(item)
        if m is not None and m[1] in DECK_FAULT_KINDS:
            deck_kind: DeckFaultKind = m[1]  # checked against DECK_FAULT_KINDS
            if m[2] is not None:
                raise ValueError(f"fault {item!r}: a deck fault is KIND or KIND@DECK, not a rate")
            number = int(m[3]) if m[3] is not None else None
            if number is not None and number < 1:
                raise ValueError(f"fault {item!r}: decks count from 1")
            decks.append((deck_kind, number))
            continue
        if m is None or m[1] not in FAULT_KINDS:
            raise ValueError(
                f"fault {item!r} is not KIND, KIND=RATE or KIND@CARD "
                f"(KIND one of {', '.join(FAULT_KINDS)}), or a deck fault KIND or KIND@DECK "
                f"({', '.join(DECK_FAULT_KINDS)})"
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
    return FaultPlan(rates, {n: frozenset(k) for n, k in at.items()}, tuple(decks))


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
        self._cut_out = False
        self.dealt = 0  # cards of the load dealt so far
        self.written: list[Written] = []

    def stop(self) -> None:
        self._stopping.set()

    def resume(self) -> None:
        """Take a stopped shoe up again (to read out what is left once the dealing stopped)."""
        self._stopping.clear()

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
            self._cut_card_before(number)
            self._deal(number, card)
            self.dealt = number
        if self._load.cut_card == total and not self._stopping.is_set():
            self._cut_card_before(total + 1)
        return self.written

    def _cut_card_before(self, number: int) -> None:
        """The cutting card passes the reader just before card ``number`` (once)."""
        if self._load.cut_card == number - 1 and not self._cut_out:
            self._cut_out = True
            self._write(Written("cut_card", self._frame(line_body(CutCard()))))

    def rest(self) -> tuple[CardRead, ...]:
        """The cards of the load not dealt (yet)."""
        return self._load.cards[self.dealt :]

    def inspect(self, deck: PhysicalDeck, interval: float = 0.0) -> list[Written]:
        """Read one deck through the reader for inspection, ``interval`` seconds per card.

        Only cards: the screen marks the inspection's start and end (``inspect``,
        ``inspect_end``)."""
        return self._write_cards(deck.cards, interval)

    def read_out(self, interval: float = 0.0) -> list[Written]:
        """Read out the cards left in the shoe (the cutting card where it falls, if it has not
        come out), ``interval`` seconds per card. The screen marks ``shoe_end`` first."""
        start = self.dealt + 1
        first = len(self.written)
        self._open()
        for number, card in enumerate(self.rest(), start=start):
            if self._stopping.is_set():
                break
            self._pace(interval if number > start else 0.0)
            self._cut_card_before(number)
            self._write(Written("card", encode(card, with_checksum=self._with_checksum), card))
            self.dealt = number
        if not self._stopping.is_set():
            self._cut_card_before(len(self._load.cards) + 1)
        return self.written[first:]

    def _write_cards(self, cards: tuple[CardRead, ...], interval: float) -> list[Written]:
        first = len(self.written)
        self._open()
        for i, card in enumerate(cards):
            if self._stopping.is_set():
                break
            self._pace(interval if i else 0.0)
            self._write(Written("card", encode(card, with_checksum=self._with_checksum), card))
        return self.written[first:]

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
        """The pace of the dealing (a subclass may deal at the dealer's pace instead)."""
        self._pace(seconds)

    def _pace(self, seconds: float) -> None:
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
