"""The event vocabulary of ``docs/reference/events.md``: one class per event kind, decoded and
checked in one step.

Each kind is a frozen ``msgspec`` struct (:class:`Bet`, :class:`Card`, :class:`Stand`, ...),
all of them :class:`Event`; the JSON ``type`` names the class. :func:`decode_event` turns a
JSON line into its event (msgspec decodes and checks it in one pass); :func:`parse_event` does
the same for a JSON object already read. A line that is not valid JSON, has an unknown ``type``,
an unknown card code or a missing (or malformed) field is an input error:
:class:`ScenarioError` names the line and the field, with the reason the field's check gives.
Whether an event is *allowed* at that moment is the engine's business, not the parser's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal

import msgspec
from msgspec import Meta, Struct

from controller.cards import ALL_CODES, is_card
from controller.rules import MAX_AMOUNT, RuleSet, RuleSetError, load_ruleset


class ScenarioError(ValueError):
    """Malformed input: ``line`` (1-based; 0 when unknown) and ``field`` say where."""

    def __init__(self, line: int, field: str, message: str) -> None:
        where = f"line {line}: " if line else ""
        super().__init__(f'{where}"{field}": {message}' if field else f"{where}{message}")
        self.line = line
        self.field = field
        self.detail = message


# Fields every event may carry that the rules do not read: kept in the audit log and exports.
PASSTHROUGH = ("time", "actor", "source", "correction_of", "note")
MAX_NOTE = 2000
TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
MAX_BOX = 99
MAX_COUNT = 1_000_000
MAX_DECKS = 16
MAX_RAW = 512
MAX_ID = 64
MAX_BY = 8
MAX_REASON = 200
MAX_SEQ = 2**63 - 1
MAX_CHIPS = 64
RULE_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._()-]{0,15}"
RULE_NAME = re.compile(RULE_PATTERN)
SERIAL_PATTERN = r"[A-Z0-9]{4,12}"


# --- the words an event may hold --------------------------------------------------------------


class InError(StrEnum):
    """A card dealt in error (16.3, 16.4): whether it was seen."""

    UNEXPOSED = "unexposed"
    EXPOSED = "exposed"


class OpeningStep(StrEnum):
    """The opening's steps as the dealer confirms them: 6.2 (spread), 6.3 (a)-(c), the cut."""

    SPREAD = "spread"
    CHEMMY = "chemmy"
    STACK = "stack"
    RIFFLE = "riffle"
    CUT = "cut"


class Device(StrEnum):
    """The devices a supervisor may put in manual mode (``manual_mode``)."""

    SHOE = "shoe"
    CAMERA = "camera"


OPENING_STEPS: tuple[str, ...] = tuple(OpeningStep)
DEVICES: tuple[str, ...] = tuple(Device)


# --- field checkers: each returns the value or raises ValueError with the reason ----------------
# The event classes call them for what a type alone cannot say (an amount's cents, printable
# text); a refused event's reason is the one its first failing field's checker gives.


def _box(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_BOX:
        raise ValueError(f"{_shown(v)} is not a box number (a whole number, 1 to {MAX_BOX})")
    return v


def _utf8(v: str) -> bool:
    """Whether text can be stored as UTF-8 (JSON's escapes can make lone surrogates)."""
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name(v: Any, what: str, longest: int = 64) -> str:
    if not isinstance(v, str) or not v.strip() or len(v) > longest or not v.isprintable():
        raise ValueError(f"{_shown(v)} is not {what} (printable text, up to {longest} characters)")
    return v


def _player(v: Any) -> str:
    return _name(v, "a player name")


def _shown(v: Any) -> str:
    """A value as an error message quotes it: whole when short, its start when long."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _decimal(v: Any, what: str) -> Decimal:
    """A JSON number (or decimal text) as an exact Decimal; ValueError names ``what`` it is not."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str, Decimal)):
        raise ValueError(f"{_shown(v)} is not {what}")
    if isinstance(v, str) and len(v) > 40:
        raise ValueError(f"{_shown(v)} is not {what} (too long)")
    try:
        d = Decimal(repr(v)) if isinstance(v, float) else Decimal(str(v))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{_shown(v)} is not {what}") from None
    if not d.is_finite():
        raise ValueError(f"{_shown(v)} is not {what}")
    return d


def _amount(v: Any) -> Decimal:
    d = _decimal(v, "an amount")
    if d < 0:
        raise ValueError(f"{_shown(v)} is not an amount (a number, 0 or more)")
    if d > MAX_AMOUNT:
        raise ValueError(f"{_shown(v)} is out of range (no amount above {MAX_AMOUNT:,})")
    if d.as_tuple().exponent < -2:  # type: ignore[operator]
        raise ValueError(f"{_shown(v)} has more than cents")
    return d


def _card(v: Any) -> str:
    if not is_card(v):
        raise ValueError(f"{v!r} is not a card code")
    return str(v)


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{v!r} is not true or false")
    return v


def _count(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_COUNT:
        raise ValueError(f"{_shown(v)} is not a whole number (0 to {MAX_COUNT:,})")
    return v


def _decks(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_DECKS:
        raise ValueError(f"{_shown(v)} is not a number of decks (1 to {MAX_DECKS})")
    return v


def _cut(v: Any) -> int | None:
    return None if v is None else _count(v)


def _in_error(v: Any) -> str:
    if v not in ("unexposed", "exposed"):
        raise ValueError(f'{v!r} is not "unexposed" or "exposed"')
    return str(v)


_SERIAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _serial(v: Any) -> str:
    if not isinstance(v, str) or not 4 <= len(v) <= 12 or not set(v) <= _SERIAL_CHARS:
        raise ValueError(_serial_reason(v))
    return v


def _serial_reason(v: Any) -> str:
    return f"{v!r} is not a deck serial (4-12 characters A-Z 0-9)"


def _serials(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise ValueError(f"{v!r} is not a list of deck serials")
    return tuple(_serial(s) for s in v)


def _raw(v: Any) -> str:
    if not isinstance(v, str) or len(v) > MAX_RAW or not _utf8(v):
        raise ValueError(f"{_shown(v)} is not text (up to {MAX_RAW} characters)")
    return v


def _chips(v: Any) -> dict[str, int]:
    if not isinstance(v, dict):
        raise ValueError(f"{v!r} is not an object of denomination: count")
    if len(v) > MAX_CHIPS:
        raise ValueError(f"{_shown(v)} has too many denominations (up to {MAX_CHIPS})")
    for k, n in v.items():
        _amount(k)
        _count(n)
    return v


def _confidence(v: Any) -> Decimal:
    """A probability from 0 to 1, at whatever precision the device gives it (0.878, "0.61",
    0.8779999999999999), kept exactly as given: it is not money, so it has no cents."""
    d = _decimal(v, "a confidence")
    if not 0 <= d <= 1:
        raise ValueError(f"{_shown(v)} is not a confidence between 0 and 1")
    return d


def _id(v: Any) -> str:
    return _name(v, "an id", MAX_ID)


def _ids(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not 1 <= len(v) <= MAX_BY:
        raise ValueError(f"{_shown(v)} is not a list of ids (1 to {MAX_BY})")
    return tuple(_id(x) for x in v)


def _dealer(v: Any) -> str:
    return _name(v, "a dealer's id", MAX_ID)


def _one_of(choices: tuple[str, ...], what: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in choices:
            raise ValueError(f"{_shown(v)} is not {what} ({', '.join(choices)})")
        return v

    return check


def _reason(v: Any) -> str:
    return _name(v, "a reason", MAX_REASON)


MAX_INSTANT = 40
MAX_ELAPSED = Decimal(10) ** 9  # seconds: about 31 years


def _instant(v: Any) -> str:
    """A moment as the recorder writes ``recorded_at`` (ISO 8601, with its zone)."""
    from datetime import datetime

    if isinstance(v, str) and 0 < len(v) <= MAX_INSTANT and v.isascii():
        try:
            parsed = datetime.fromisoformat(v)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return v
    raise ValueError(
        f"{_shown(v)} is not a moment (ISO 8601 with its zone, e.g. 2026-12-01T21:14:00Z)"
    )


def _elapsed(v: Any) -> Decimal:
    if isinstance(v, bool) or not isinstance(v, (int, float, str, Decimal)):
        raise ValueError(f"{_shown(v)} is not a number of seconds")
    try:
        d = Decimal(str(v))
    except InvalidOperation:
        raise ValueError(f"{_shown(v)} is not a number of seconds") from None
    if not d.is_finite() or d < 0 or d > MAX_ELAPSED:
        raise ValueError(f"{_shown(v)} is not a number of seconds (0 to {MAX_ELAPSED})")
    return d


def _seq(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_SEQ:
        raise ValueError(f"{_shown(v)} is not an event's sequence number (a whole number from 1)")
    return v


def _rule(v: Any) -> str:
    if not isinstance(v, str) or not RULE_NAME.fullmatch(v):
        raise ValueError(
            f"{_shown(v)} is not a rule's name (as flags name it: 16.4, shoe; up to 16 characters)"
        )
    return v


def _note(v: Any) -> str:
    if not isinstance(v, str) or len(v) > MAX_NOTE or not _utf8(v):
        raise ValueError(f"{_shown(v)} is not a note (text, up to {MAX_NOTE} characters)")
    return v


# The chip tray (docs/reference/events.md, "The chip tray"): a count, a slip's chips.
TRAY_COUNTS: tuple[str, ...] = ("opener", "check", "closer")
BUY_IN_KINDS: tuple[str, ...] = ("cash", "marker")
MAX_DENOMINATIONS = 32
SLIP = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,31}")


def _tray_chips(v: Any) -> tuple[tuple[str, int], ...]:
    """Chips counted by denomination: each denomination a positive amount given once (``"5"``
    and ``"5.00"`` are one denomination), each count a whole number, the whole worth no more
    than the largest amount."""
    if not isinstance(v, dict) or not v:
        raise ValueError(f"{_shown(v)} is not an object of denomination: count (at least one)")
    if len(v) > MAX_DENOMINATIONS:
        raise ValueError(f"{_shown(v)} has too many denominations (up to {MAX_DENOMINATIONS})")
    out: list[tuple[str, int]] = []
    seen: dict[Decimal, str] = {}
    total = Decimal(0)
    for k, n in v.items():
        try:
            value = _amount(k)
        except ValueError as exc:
            raise ValueError(f"denomination {exc}") from None
        if value <= 0:
            raise ValueError(f"denomination {_shown(k)} is not a chip's value (more than 0)")
        if value in seen:
            raise ValueError(f"denominations {seen[value]!r} and {k!r} are the same chip")
        seen[value] = str(k)
        try:
            count = _count(n)
        except ValueError as exc:
            raise ValueError(f"the count of {k!r}: {exc}") from None
        total += value * count
        out.append((str(k), count))
    if total > MAX_AMOUNT:
        raise ValueError(f"the chips are worth more than {MAX_AMOUNT:,} (out of range)")
    return tuple(out)


def _slip(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 10**12:
        return str(v)
    if isinstance(v, str) and SLIP.fullmatch(v):
        return v
    raise ValueError(f"{_shown(v)} is not a slip number (letters, digits and '-', up to 32)")


_CHECK: dict[str, Callable[[Any], Any]] = {
    "box": _box,
    "player": _player,
    "amount": _amount,
    "card": _card,
    "face_up": _bool,
    "in_error": _in_error,
    "damaged": _bool,
    "controls": _bool,
    "decks": _decks,
    "cut_card": _cut,
    "deck": _serial,
    "deck_serials": _serials,
    "raw": _raw,
    "chips": _chips,
    "confidence": _confidence,
    "by": _ids,
    "step": _one_of(OPENING_STEPS, "an opening step"),
    "dealer": _dealer,
    "device": _one_of(DEVICES, "a device"),
    "on": _bool,
    "reason": _reason,
    "flag_event": _seq,
    "rule": _rule,
    "kind": _one_of(TRAY_COUNTS + BUY_IN_KINDS, "a kind"),
    "slip": _slip,
    "was": _instant,
    "now": _instant,
    "elapsed": _elapsed,
    # the passthrough fields
    "time": lambda v: _name(v, "a time"),
    "actor": lambda v: _name(v, "an actor's id"),
    "source": lambda v: _name(v, "a source", 32),
    "correction_of": _seq,
    "note": _note,
}


# Fields whose check depends on the event's type.
_CHECK_FOR: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("tray_count", "kind"): _one_of(TRAY_COUNTS, "a kind of count"),
    ("buy_in", "kind"): _one_of(BUY_IN_KINDS, "a kind of buy-in"),
    ("tray_count", "chips"): _tray_chips,
    ("fill", "chips"): _tray_chips,
    ("credit", "chips"): _tray_chips,
}


def _money(d: Decimal) -> None:
    """For the classes' checks: an amount msgspec decoded (the reason is :func:`_amount`'s)."""
    if not (d.is_finite() and 0 <= d <= MAX_AMOUNT and d.as_tuple().exponent >= -2):  # type: ignore[operator]
        _amount(d)


def _text(v: str | None, what: str, longest: int) -> None:
    """For the classes' checks: printable text, not blank (the length msgspec checked)."""
    if v is not None and (not v.isprintable() or not v.strip()):
        raise ValueError(f"{_shown(v)} is not {what} (printable text, up to {longest} characters)")


# --- the types of the fields, for msgspec: what a type says, it checks while decoding -----------

if TYPE_CHECKING:
    CardCode = str
else:
    CardCode = Literal[ALL_CODES]  # one lookup in msgspec's table of the 52 codes
Box = Annotated[int, Meta(ge=1, le=MAX_BOX)]
Count = Annotated[int, Meta(ge=0, le=MAX_COUNT)]
Decks = Annotated[int, Meta(ge=1, le=MAX_DECKS)]
Seq = Annotated[int, Meta(ge=1, le=MAX_SEQ)]
Name = Annotated[str, Meta(max_length=64)]
Id = Annotated[str, Meta(max_length=MAX_ID)]
Ids = Annotated[tuple[Id, ...], Meta(min_length=1, max_length=MAX_BY)]
Serial = Annotated[str, Meta(pattern=rf"^{SERIAL_PATTERN}\Z")]
RuleName = Annotated[str, Meta(pattern=rf"^{RULE_PATTERN}\Z")]


class Event(Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True, gc=False):
    """One event: the fields every kind may carry, which the rules do not read (the audit log
    keeps them). ``type`` is the kind's name (a class attribute, the JSON's tag)."""

    type: ClassVar[str]
    time: Name | None = None
    actor: Name | None = None
    source: Annotated[str, Meta(max_length=32)] | None = None
    correction_of: Seq | None = None
    note: Annotated[str, Meta(max_length=MAX_NOTE)] | None = None

    def __post_init__(self) -> None:
        # Every event runs this: each test is written out, and the reason is worked out only
        # for a field that fails.
        time, actor, source, note = self.time, self.actor, self.source, self.note
        if time is not None and (not time.isprintable() or not time or time.isspace()):
            _text(time, "a time", 64)
        if actor is not None and (not actor.isprintable() or not actor or actor.isspace()):
            _text(actor, "an actor's id", 64)
        if source is not None and (not source.isprintable() or not source or source.isspace()):
            _text(source, "a source", 32)
        if note is not None and not _utf8(note):
            raise ValueError(f"{_shown(note)} is not a note (text, up to {MAX_NOTE} characters)")

    @property
    def passthrough(self) -> bool:
        """Whether the event carries any field the rules do not read."""
        return not (
            self.time is None
            and self.actor is None
            and self.source is None
            and self.correction_of is None
            and self.note is None
        )

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-able form the store keeps: the fields given (an optional field
        false or null is left out), amounts as decimal strings."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        optional = _OPTIONAL[type(self)]
        for name, value in list(out.items()):
            if (value is None or value is False) and name in optional:
                del out[name]
            elif isinstance(value, tuple):  # deck_serials, by: JSON arrays
                out[name] = list(value)
        return out


class OnBox(Event, frozen=True, kw_only=True):
    """An event about one box."""

    box: Box


class Staked(OnBox, frozen=True, kw_only=True):
    """Money one player puts on a box: a bet, a double, insurance."""

    player: Name
    amount: Decimal

    def __post_init__(self) -> None:
        player = self.player
        if not player.isprintable() or not player or player.isspace():
            _text(player, "a player name", 64)
        _money(self.amount)
        Event.__post_init__(self)


class Shuffle(Event, tag="shuffle", frozen=True, kw_only=True):
    type: ClassVar[str] = "shuffle"
    decks: Decks
    cut_card: Count | None
    deck_serials: tuple[Serial, ...] | None = None


class Bet(Staked, tag="bet", frozen=True, kw_only=True):
    type: ClassVar[str] = "bet"
    controls: bool | None = None


class NoMoreBets(Event, tag="no_more_bets", frozen=True, kw_only=True):
    type: ClassVar[str] = "no_more_bets"


class Card(Event, tag="card", frozen=True, kw_only=True):
    type: ClassVar[str] = "card"
    card: CardCode
    face_up: bool | None = None
    in_error: InError | None = None
    damaged: bool | None = None
    deck: Annotated[str, Meta(min_length=4, max_length=12)] | None = None

    def __post_init__(self) -> None:
        deck = self.deck  # A-Z 0-9 (a test of its own, faster than the pattern on every card)
        if deck is not None and not (
            deck.isascii() and deck.isalnum() and (deck.isupper() or deck.isdigit())
        ):
            raise ValueError(_serial_reason(deck))
        source = self.source  # the passthrough of a card is its source alone, as a rule
        if (
            self.time is None
            and self.actor is None
            and self.note is None
            and (source is None or (source.isprintable() and source and not source.isspace()))
        ):
            return
        Event.__post_init__(self)


class CutCard(Event, tag="cut_card", frozen=True, kw_only=True):
    type: ClassVar[str] = "cut_card"


class OfferInsurance(Event, tag="offer_insurance", frozen=True, kw_only=True):
    type: ClassVar[str] = "offer_insurance"


class Insurance(Staked, tag="insurance", frozen=True, kw_only=True):
    type: ClassVar[str] = "insurance"


class OfferSurrender(OnBox, tag="offer_surrender", frozen=True, kw_only=True):
    type: ClassVar[str] = "offer_surrender"


class Surrender(OnBox, tag="surrender", frozen=True, kw_only=True):
    type: ClassVar[str] = "surrender"


class Hit(OnBox, tag="hit", frozen=True, kw_only=True):
    type: ClassVar[str] = "hit"


class Stand(OnBox, tag="stand", frozen=True, kw_only=True):
    type: ClassVar[str] = "stand"


class Double(Staked, tag="double", frozen=True, kw_only=True):
    type: ClassVar[str] = "double"


class Split(OnBox, tag="split", frozen=True, kw_only=True):
    """A split: ``player`` names a back-bettor splitting his own wager (none: the controller)."""

    type: ClassVar[str] = "split"
    player: Name | None = None

    def __post_init__(self) -> None:
        _text(self.player, "a player name", 64)
        Event.__post_init__(self)


class Rescue(OnBox, tag="rescue", frozen=True, kw_only=True):
    type: ClassVar[str] = "rescue"
    player: Name

    def __post_init__(self) -> None:
        _text(self.player, "a player name", 64)
        Event.__post_init__(self)


class Refuse(OnBox, tag="refuse", frozen=True, kw_only=True):
    type: ClassVar[str] = "refuse"


class Absent(OnBox, tag="absent", frozen=True, kw_only=True):
    type: ClassVar[str] = "absent"


class Void(Event, tag="void", frozen=True, kw_only=True):
    """The round void (no box), or one box's wagers void."""

    type: ClassVar[str] = "void"
    box: Box | None = None


class ReshuffleDiscards(Event, tag="reshuffle_discards", frozen=True, kw_only=True):
    type: ClassVar[str] = "reshuffle_discards"
    cut_card: Count | None


class Misread(Event, tag="misread", frozen=True, kw_only=True):
    type: ClassVar[str] = "misread"
    raw: Annotated[str, Meta(max_length=MAX_RAW)]

    def __post_init__(self) -> None:
        if not _utf8(self.raw):
            raise ValueError(f"{_shown(self.raw)} is not text (up to {MAX_RAW} characters)")
        Event.__post_init__(self)


class WagerSeen(OnBox, tag="wager_seen", frozen=True, kw_only=True):
    type: ClassVar[str] = "wager_seen"
    amount: Decimal
    chips: Annotated[dict[str, Count], Meta(max_length=MAX_CHIPS)] | None = None
    confidence: Decimal | None = None

    def __post_init__(self) -> None:
        _money(self.amount)
        if self.chips is not None:
            _chips(self.chips)
        confidence = self.confidence
        if confidence is not None and not (confidence.is_finite() and 0 <= confidence <= 1):
            _confidence(confidence)
        Event.__post_init__(self)


class Peek(Event, tag="peek", frozen=True, kw_only=True):
    type: ClassVar[str] = "peek"


class Inspect(Event, tag="inspect", frozen=True, kw_only=True):
    type: ClassVar[str] = "inspect"
    deck: Serial | None = None
    by: Ids | None = None

    def __post_init__(self) -> None:
        for who in self.by or ():
            _text(who, "an id", MAX_ID)
        Event.__post_init__(self)


class InspectEnd(Event, tag="inspect_end", frozen=True, kw_only=True):
    type: ClassVar[str] = "inspect_end"


class ShoeEnd(Event, tag="shoe_end", frozen=True, kw_only=True):
    type: ClassVar[str] = "shoe_end"


class OpenTable(Event, tag="open_table", frozen=True, kw_only=True):
    type: ClassVar[str] = "open_table"
    by: Ids | None = None

    def __post_init__(self) -> None:
        for who in self.by or ():
            _text(who, "an id", MAX_ID)
        Event.__post_init__(self)


class OpeningStepDone(Event, tag="opening_step", frozen=True, kw_only=True):
    type: ClassVar[str] = "opening_step"
    step: OpeningStep


class CloseTable(Event, tag="close_table", frozen=True, kw_only=True):
    type: ClassVar[str] = "close_table"
    by: Ids | None = None

    def __post_init__(self) -> None:
        for who in self.by or ():
            _text(who, "an id", MAX_ID)
        Event.__post_init__(self)


class Dealer(Event, tag="dealer", frozen=True, kw_only=True):
    type: ClassVar[str] = "dealer"
    dealer: Id

    def __post_init__(self) -> None:
        _text(self.dealer, "a dealer's id", MAX_ID)
        Event.__post_init__(self)


class ManualMode(Event, tag="manual_mode", frozen=True, kw_only=True):
    type: ClassVar[str] = "manual_mode"
    device: Device
    on: bool
    reason: Annotated[str, Meta(max_length=MAX_REASON)] | None = None

    def __post_init__(self) -> None:
        _text(self.reason, "a reason", MAX_REASON)
        Event.__post_init__(self)


class Acknowledge(Event, tag="acknowledge", frozen=True, kw_only=True):
    type: ClassVar[str] = "acknowledge"
    flag_event: Seq
    rule: RuleName


class Clock(Event, tag="clock", frozen=True, kw_only=True):
    """The recorder's own record that the table's wall clock was stepped: the last event's time
    (``was``), the clock's now, and the seconds measured between them (``elapsed``)."""

    type: ClassVar[str] = "clock"
    was: Annotated[str, Meta(max_length=MAX_INSTANT)]
    now: Annotated[str, Meta(max_length=MAX_INSTANT)]
    elapsed: Decimal | None = None

    def __post_init__(self) -> None:
        _instant(self.was)
        _instant(self.now)
        if self.elapsed is not None:
            _elapsed(self.elapsed)
        Event.__post_init__(self)


class TrayCountKind(StrEnum):
    """A count of the chip tray: the day's ``opener``, a ``check`` during it, its ``closer``."""

    OPENER = "opener"
    CHECK = "check"
    CLOSER = "closer"


class BuyInKind(StrEnum):
    """What a player paid chips with: ``cash`` or a ``marker``."""

    CASH = "cash"
    MARKER = "marker"


TrayChips = Annotated[dict[str, int], Meta(min_length=1, max_length=MAX_DENOMINATIONS)]


def _tray_extras(ev: Event, by: tuple[str, ...] | None, amount: Decimal | None) -> None:
    for who in by or ():
        _text(who, "an id", MAX_ID)
    if amount is not None:
        _money(amount)
    Event.__post_init__(ev)


class TrayCount(Event, tag="tray_count", frozen=True, kw_only=True):
    """The chip tray counted: the chips by denomination, and the total if one was written."""

    type: ClassVar[str] = "tray_count"
    chips: TrayChips
    kind: TrayCountKind
    by: Ids | None = None
    amount: Decimal | None = None

    def __post_init__(self) -> None:
        _tray_chips(self.chips)
        _tray_extras(self, self.by, self.amount)


class Slip(Event, frozen=True, kw_only=True):
    """Chips brought to the table (a fill) or taken from it (a credit), on a numbered slip."""

    slip: str | int
    chips: TrayChips
    by: Ids | None = None
    amount: Decimal | None = None

    def __post_init__(self) -> None:
        _slip(self.slip)
        _tray_chips(self.chips)
        _tray_extras(self, self.by, self.amount)

    @property
    def number(self) -> str:
        """The slip's number as text (a whole number given is kept as its digits)."""
        return str(self.slip)

    def to_dict(self) -> dict[str, Any]:
        out = Event.to_dict(self)
        out["slip"] = self.number
        return out


class Fill(Slip, tag="fill", frozen=True, kw_only=True):
    type: ClassVar[str] = "fill"


class Credit(Slip, tag="credit", frozen=True, kw_only=True):
    type: ClassVar[str] = "credit"


class BuyIn(Event, tag="buy_in", frozen=True, kw_only=True):
    """A player's cash or marker changed for chips, at a box or not."""

    type: ClassVar[str] = "buy_in"
    amount: Decimal
    kind: BuyInKind
    box: Box | None = None
    player: Name | None = None

    def __post_init__(self) -> None:
        _money(self.amount)
        _text(self.player, "a player name", 64)
        Event.__post_init__(self)


class DropCount(Event, tag="drop_count", frozen=True, kw_only=True):
    """The count room's count of the table's drop box for the gaming day."""

    type: ClassVar[str] = "drop_count"
    amount: Decimal
    by: Ids | None = None

    def __post_init__(self) -> None:
        _tray_extras(self, self.by, self.amount)


KINDS: Final[tuple[type[Event], ...]] = (
    Shuffle, Bet, NoMoreBets, Card, CutCard, OfferInsurance, Insurance, OfferSurrender,
    Surrender, Hit, Stand, Double, Split, Rescue, Refuse, Absent, Void, ReshuffleDiscards,
    # Extensions (devices and peek games); see docs/reference/events.md.
    Misread, WagerSeen, Peek,
    # Opening the table and reconciling the shoe (docs/reference/events.md, 6.1-6.3).
    Inspect, InspectEnd, ShoeEnd,
    # The table's day and the dealer's screen; see docs/reference/events.md.
    OpenTable, OpeningStepDone, CloseTable, Dealer, ManualMode, Acknowledge,
    # The chip tray and the drop (docs/reference/events.md, "The chip tray").
    TrayCount, Fill, Credit, BuyIn, DropCount,
    # The recorder's own record that the table's wall clock was stepped.
    Clock,
)  # fmt: skip
BY_TYPE: Final[dict[str, type[Event]]] = {k.type: k for k in KINDS}
EVENT_TYPES: tuple[str, ...] = tuple(BY_TYPE)
TRAY_EVENTS: frozenset[str] = frozenset({"tray_count", "fill", "credit", "buy_in", "drop_count"})
if TYPE_CHECKING:
    AnyEvent = Event
else:
    from typing import Union

    AnyEvent = Union[KINDS]  # noqa: UP007 (a union built of the tuple)


def _fields(kind: type[Event]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A kind's own fields (the passthrough aside): the required, then the optional."""
    info = msgspec.structs.fields(kind)
    own = [f for f in info if f.name not in PASSTHROUGH]
    return (
        tuple(f.name for f in own if f.required),
        tuple(f.name for f in own if not f.required),
    )


_SPECS: Final = {k.type: _fields(k) for k in KINDS}
# The fields to_dict leaves out when false or null (a required one is always written).
_OPTIONAL: Final[dict[type[Event], frozenset[str]]] = {
    k: frozenset(_SPECS[k.type][1]) | frozenset(PASSTHROUGH) for k in KINDS
}

_DECODE: Final = msgspec.json.Decoder(AnyEvent).decode
_CONVERT_ERRORS = (msgspec.ValidationError, ArithmeticError, ValueError, TypeError)


def box_of(ev: Event) -> int | None:
    """The box an event names (None: it names none)."""
    box: int | None = getattr(ev, "box", None)
    return box


def player_of(ev: Event) -> str | None:
    """The player an event names (None: it names none)."""
    player: str | None = getattr(ev, "player", None)
    return player


def amount_of(ev: Event) -> Decimal | None:
    """The amount an event names (None: it names none)."""
    amount: Decimal | None = getattr(ev, "amount", None)
    return amount


def parse_event(obj: Any, line: int = 0) -> Event:
    """Check one event object (as read from JSON) and return it as its kind's :class:`Event`."""
    if not isinstance(obj, Mapping):
        raise ScenarioError(line, "", "an event must be a JSON object")
    kind = _kind_of(obj, line)
    try:  # to the kind's own class: msgspec keeps its plan for a class, not for a union
        return msgspec.convert(obj, BY_TYPE[kind])
    except _CONVERT_ERRORS as exc:
        raise _explained(obj, line, exc) from None


def decode_event(text: str | bytes, line: int = 0) -> Event:
    """One JSON line as its event: decoded and checked in one pass. A line msgspec refuses, or
    one that nests more than an event may, is read again as :func:`parse_event` reads an object,
    which names the line, the field and the reason."""
    if isinstance(text, str):
        fast = len(text) <= FAST_LINE and text.count("{") + text.count("[") <= MAX_DEPTH
        source = text
    else:
        fast = len(text) <= FAST_LINE and text.count(b"{") + text.count(b"[") <= MAX_DEPTH
        source = ""
    if fast:
        try:
            return _DECODE(text)
        except (msgspec.MsgspecError, ArithmeticError, ValueError, TypeError):
            pass
    if not source:
        source = _text_of(text) if isinstance(text, bytes) else text
    return parse_event(parse_json_line(source, line), line)


def _text_of(data: bytes) -> str:
    """Bytes as text, a lone surrogate's encoding kept as the surrogate (as JSON's escape
    would give it), any other byte that is not UTF-8 kept apart from the text."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def _kind_of(obj: Mapping[str, Any], line: int) -> str:
    if "type" not in obj:
        raise ScenarioError(line, "type", "missing")
    kind = obj["type"]
    if kind == "table":
        raise ScenarioError(line, "type", '"table" may only be the first line')
    if not isinstance(kind, str) or kind not in BY_TYPE:
        raise ScenarioError(line, "type", f"{kind!r} is not an event type")
    return kind


def _explained(obj: Mapping[str, Any], line: int, exc: Exception) -> ScenarioError:
    """Why an event was refused: its first missing field, else the reason of its first field
    that fails its check (its own fields in order, then the passthrough)."""
    kind = _kind_of(obj, line)
    required, optional = _SPECS[kind]
    for name in required:
        if name not in obj:
            return ScenarioError(line, name, f"missing (a {kind!r} event needs it)")
    for name in (*required, *optional, *PASSTHROUGH):
        if name in obj and not (name not in required and obj[name] is None):
            try:
                _CHECK_FOR.get((kind, name), _CHECK[name])(obj[name])
            except ValueError as err:
                return ScenarioError(line, name, str(err))
    where = re.search(r"at `\$\.(\w+)", str(exc))
    return ScenarioError(line, where.group(1) if where else "", str(exc))


@dataclass(frozen=True)
class TableSetup:
    """The scenario's first line: which game, how many boxes, the limits."""

    game: str
    table_id: str
    boxes: int
    decks: int
    min_bet: Decimal
    max_bet: Decimal
    rules: RuleSet
    overrides: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "table",
            "game": self.game,
            "table_id": self.table_id,
            "boxes": self.boxes,
            "decks": self.decks,
            "min_bet": str(self.min_bet),
            "max_bet": str(self.max_bet),
            "rules": dict(self.overrides),
        }


def parse_setup(obj: Any, line: int = 1) -> TableSetup:
    if not isinstance(obj, Mapping):
        raise ScenarioError(line, "", "the first line must be a JSON object")
    if obj.get("type") != "table":
        raise ScenarioError(line, "type", 'the first line must be the "table" line')
    for name in ("game", "boxes", "min_bet", "max_bet"):
        if name not in obj:
            raise ScenarioError(line, name, "missing (the table line needs it)")
    game = obj["game"]
    if not isinstance(game, str):
        raise ScenarioError(line, "game", f"{game!r} is not a rule set name")
    overrides = obj.get("rules") or {}
    if not isinstance(overrides, Mapping):
        raise ScenarioError(line, "rules", f"{overrides!r} is not an object of rule settings")
    checked: dict[str, Any] = {}
    for name, check in (("boxes", _box), ("min_bet", _amount), ("max_bet", _amount)):
        try:
            checked[name] = check(obj[name])
        except ValueError as exc:
            raise ScenarioError(line, name, str(exc)) from None
    boxes, min_bet, max_bet = checked["boxes"], checked["min_bet"], checked["max_bet"]
    if max_bet < min_bet:
        raise ScenarioError(line, "max_bet", f"{max_bet} is below min_bet {min_bet}")
    table_id = obj.get("table_id", "T1")
    if not isinstance(table_id, str) or not TABLE_ID.fullmatch(table_id):
        raise ScenarioError(
            line,
            "table_id",
            f"{_shown(table_id)} is not a table id (letters, digits, '-' and '_', up to 32)",
        )
    rule_overrides = dict(overrides)
    if "decks" in obj and "decks" not in rule_overrides:
        try:
            _decks(obj["decks"])
        except ValueError as exc:
            raise ScenarioError(line, "decks", str(exc)) from None
        rule_overrides["decks"] = obj["decks"]
    try:
        rules = load_ruleset(game, rule_overrides)
    except RuleSetError as exc:
        if exc.key == "game" or (exc.key == "decks" and "decks" not in overrides):
            fld = exc.key
        else:
            fld = f"rules.{exc.key}"
        raise ScenarioError(line, fld, str(exc)) from None
    return TableSetup(
        game=game,
        table_id=table_id,
        boxes=boxes,
        decks=rules.decks,
        min_bet=min_bet,
        max_bet=max_bet,
        rules=rules,
        overrides=tuple(dict(overrides).items()),
    )


# A line longer than this is read by json first (no number in it can pass Python's limit of
# 4,300 digits unnoticed); an event's line is a few hundred bytes.
FAST_LINE = 4096
MAX_DEPTH = 4  # an event object, its chips or rules object, a list inside that
MAX_LINE = 64 * 1024


def _depth(value: Any) -> int:
    """How deeply ``value`` nests objects and arrays (a scalar is 0), counted iteratively."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, (dict, list)):
                if level + 1 > MAX_DEPTH:
                    return level + 1
                todo.append((child, level + 1))
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
    return deepest


class _NotJsonNumber(Exception):
    pass


def _no_constant(name: str) -> Any:
    raise _NotJsonNumber(name)


def parse_json_line(text: str, line: int) -> Any:
    if len(text) > MAX_LINE:
        raise ScenarioError(line, "", f"not valid JSON (longer than {MAX_LINE:,} characters)")
    try:
        value = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
    except _NotJsonNumber as exc:
        raise ScenarioError(line, "", f"not valid JSON ({exc} is not a JSON number)") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(line, "", f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ScenarioError(line, "", "not valid JSON (nested too deeply)") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise ScenarioError(line, "", "not valid JSON (a number of too many digits)") from None
    if _depth(value) > MAX_DEPTH:
        raise ScenarioError(
            line, "", f"not valid JSON for an event (nested deeper than {MAX_DEPTH} levels)"
        )
    return value


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at "\n" only (with a "\r" before it dropped).

    Not ``str.splitlines``, which also splits at characters JSON strings may hold unescaped
    (U+2028, U+0085, form feeds): a note in any script must not cut its event in two."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def parse_scenario(lines: Iterable[str]) -> tuple[TableSetup, list[tuple[int, Event]]]:
    """Parse a whole scenario: the table line, then each event with its line number.

    Blank lines are skipped. Raises :class:`ScenarioError` at the first malformed line.
    """
    setup: TableSetup | None = None
    events: list[tuple[int, Event]] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        if setup is None:
            setup = parse_setup(parse_json_line(text, number), number)
        else:
            events.append((number, decode_event(text, number)))
    if setup is None:
        raise ScenarioError(1, "type", 'the scenario is empty: it must start with the "table" line')
    return setup, events
