"""The event vocabulary of ``docs/reference/events.md``, parsed and checked.

A scenario line that is not valid JSON, has an unknown ``type``, an unknown card code or a
missing (or malformed) field is an input error: :class:`ScenarioError` names the line and the
field. Whether an event is *allowed* at that moment is the engine's business, not the parser's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from controller.cards import is_card
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


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    box: int | None = None
    player: str | None = None
    amount: Decimal | None = None
    card: str | None = None
    face_up: bool = False
    in_error: str | None = None
    damaged: bool = False
    controls: bool = False
    decks: int | None = None
    cut_card: int | None = None
    deck: str | None = None
    deck_serials: tuple[str, ...] | None = None
    raw: str | None = None
    chips: tuple[tuple[str, int], ...] | None = None
    confidence: Decimal | None = None
    by: tuple[str, ...] | None = None
    step: str | None = None
    dealer: str | None = None
    device: str | None = None
    on: bool | None = None
    reason: str | None = None
    flag_event: int | None = None
    rule: str | None = None
    kind: str | None = None
    slip: str | None = None
    was: str | None = None
    now: str | None = None
    elapsed: Decimal | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def meta(self, name: str) -> Any:
        """A field the rules do not read (``actor``, ``source``, ``correction_of``, ``note``,
        ``time``), or None."""
        for key, value in self.extra:
            if key == name:
                return value
        return None

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-able form: only the fields given, amounts as decimal strings."""
        out: dict[str, Any] = {"type": self.type}
        spec = _SPECS[self.type]
        for name in spec.order:
            v = getattr(self, name)
            if v is None or (v is False and name not in spec.required):
                continue
            if isinstance(v, Decimal):
                v = str(v)
            elif name in ("deck_serials", "by"):
                v = list(v)
            elif name == "chips":
                v = dict(v)
            out[name] = v
        if self.type in ("shuffle", "reshuffle_discards") and self.cut_card is None:
            out["cut_card"] = None
        for k, v in self.extra:
            out[k] = v
        return out


# --- field checkers: each returns the parsed value or raises ValueError with the reason ----------


TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
MAX_BOX = 99
MAX_COUNT = 1_000_000


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


MAX_DECKS = 16


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
        raise ValueError(f"{v!r} is not a deck serial (4-12 characters A-Z 0-9)")
    return v


def _serials(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise ValueError(f"{v!r} is not a list of deck serials")
    return tuple(_serial(s) for s in v)


MAX_RAW = 512


def _raw(v: Any) -> str:
    if not isinstance(v, str) or len(v) > MAX_RAW or not _utf8(v):
        raise ValueError(f"{_shown(v)} is not text (up to {MAX_RAW} characters)")
    return v


def _chips(v: Any) -> tuple[tuple[str, int], ...]:
    if not isinstance(v, dict):
        raise ValueError(f"{v!r} is not an object of denomination: count")
    if len(v) > 64:
        raise ValueError(f"{_shown(v)} has too many denominations (up to 64)")
    out = []
    for k, n in v.items():
        _amount(k)
        out.append((str(k), _count(n)))
    return tuple(out)


def _confidence(v: Any) -> Decimal:
    """A probability from 0 to 1, at whatever precision the device gives it (0.878, "0.61",
    0.8779999999999999), kept exactly as given: it is not money, so it has no cents."""
    d = _decimal(v, "a confidence")
    if not 0 <= d <= 1:
        raise ValueError(f"{_shown(v)} is not a confidence between 0 and 1")
    return d


MAX_ID = 64
MAX_BY = 8


def _id(v: Any) -> str:
    return _name(v, "an id", MAX_ID)


def _ids(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not 1 <= len(v) <= MAX_BY:
        raise ValueError(f"{_shown(v)} is not a list of ids (1 to {MAX_BY})")
    return tuple(_id(x) for x in v)


def _dealer(v: Any) -> str:
    return _name(v, "a dealer's id", MAX_ID)


# The opening's steps as the dealer confirms them: 6.2 (spread), 6.3 (a)-(c), the cut.
OPENING_STEPS: tuple[str, ...] = ("spread", "chemmy", "stack", "riffle", "cut")
DEVICES: tuple[str, ...] = ("shoe", "camera")


def _one_of(choices: tuple[str, ...], what: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in choices:
            raise ValueError(f"{_shown(v)} is not {what} ({', '.join(choices)})")
        return v

    return check


MAX_REASON = 200


def _reason(v: Any) -> str:
    return _name(v, "a reason", MAX_REASON)


MAX_SEQ = 2**63 - 1


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
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
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


RULE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._()-]{0,15}")


def _rule(v: Any) -> str:
    if not isinstance(v, str) or not RULE_NAME.fullmatch(v):
        raise ValueError(
            f"{_shown(v)} is not a rule's name (as flags name it: 16.4, shoe; up to 16 characters)"
        )
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


@dataclass(frozen=True)
class _Spec:
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    @property
    def order(self) -> tuple[str, ...]:
        return self.required + self.optional


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
}
# Fields whose check depends on the event's type.
_CHECK_FOR: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("tray_count", "kind"): _one_of(TRAY_COUNTS, "a kind of count"),
    ("buy_in", "kind"): _one_of(BUY_IN_KINDS, "a kind of buy-in"),
    ("tray_count", "chips"): _tray_chips,
    ("fill", "chips"): _tray_chips,
    ("credit", "chips"): _tray_chips,
}

_SPECS: dict[str, _Spec] = {
    "shuffle": _Spec(("decks", "cut_card"), ("deck_serials",)),
    "bet": _Spec(("box", "player", "amount"), ("controls",)),
    "no_more_bets": _Spec(),
    "card": _Spec(("card",), ("face_up", "in_error", "damaged", "deck")),
    "cut_card": _Spec(),
    "offer_insurance": _Spec(),
    "insurance": _Spec(("box", "player", "amount")),
    "offer_surrender": _Spec(("box",)),
    "surrender": _Spec(("box",)),
    "hit": _Spec(("box",)),
    "stand": _Spec(("box",)),
    "double": _Spec(("box", "player", "amount")),
    "split": _Spec(("box",), ("player",)),
    "rescue": _Spec(("box", "player")),
    "refuse": _Spec(("box",)),
    "absent": _Spec(("box",)),
    "void": _Spec((), ("box",)),
    "reshuffle_discards": _Spec(("cut_card",)),
    # Extensions (devices and peek games); see docs/reference/events.md.
    "misread": _Spec(("raw",)),
    "wager_seen": _Spec(("box", "amount"), ("chips", "confidence")),
    "stack_changed": _Spec(("box",)),
    "peek": _Spec(),
    # Opening the table and reconciling the shoe (docs/reference/events.md, 6.1-6.3).
    "inspect": _Spec((), ("deck", "by")),
    "inspect_end": _Spec(),
    "shoe_end": _Spec(),
    # The table's day and the dealer's screen; see docs/reference/events.md.
    "open_table": _Spec((), ("by",)),
    "opening_step": _Spec(("step",)),
    "close_table": _Spec((), ("by",)),
    "dealer": _Spec(("dealer",)),
    "manual_mode": _Spec(("device", "on"), ("reason",)),
    "acknowledge": _Spec(("flag_event", "rule")),
    # The chip tray and the drop (docs/reference/events.md, "The chip tray").
    "tray_count": _Spec(("chips", "kind"), ("by", "amount")),
    "fill": _Spec(("slip", "chips"), ("by", "amount")),
    "credit": _Spec(("slip", "chips"), ("by", "amount")),
    "buy_in": _Spec(("amount", "kind"), ("box", "player")),
    "drop_count": _Spec(("amount",), ("by",)),
    # The recorder's own record that the table's wall clock was stepped (docs/reference/events.md).
    "clock": _Spec(("was", "now"), ("elapsed",)),
}
TRAY_EVENTS: frozenset[str] = frozenset({"tray_count", "fill", "credit", "buy_in", "drop_count"})

EVENT_TYPES: tuple[str, ...] = tuple(_SPECS)


def parse_event(obj: Any, line: int = 0) -> Event:
    """Check one event object and return it as an :class:`Event`."""
    if not isinstance(obj, Mapping):
        raise ScenarioError(line, "", "an event must be a JSON object")
    kind = obj.get("type")
    if "type" not in obj:
        raise ScenarioError(line, "type", "missing")
    if kind == "table":
        raise ScenarioError(line, "type", '"table" may only be the first line')
    spec = _SPECS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        raise ScenarioError(line, "type", f"{kind!r} is not an event type")
    values: dict[str, Any] = {}
    for name in spec.required:
        if name not in obj:
            raise ScenarioError(line, name, f"missing (a {kind!r} event needs it)")
    for name in spec.order:
        if name in obj and not (name in spec.optional and obj[name] is None):
            try:
                values[name] = _CHECK_FOR.get((str(kind), name), _CHECK[name])(obj[name])
            except ValueError as exc:
                raise ScenarioError(line, name, str(exc)) from None
    extra = _passthrough(obj, line)
    return Event(type=str(kind), extra=extra, **values)


def _correction(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{_shown(v)} is not an event's sequence number (a whole number from 1)")
    return v


def _note(v: Any) -> str:
    if not isinstance(v, str) or len(v) > MAX_NOTE or not _utf8(v):
        raise ValueError(f"{_shown(v)} is not a note (text, up to {MAX_NOTE} characters)")
    return v


_PASSTHROUGH_CHECK: dict[str, Callable[[Any], Any]] = {
    "time": lambda v: _name(v, "a time"),
    "actor": lambda v: _name(v, "an actor's id"),
    "source": lambda v: _name(v, "a source", 32),
    "correction_of": _correction,
    "note": _note,
}


def _passthrough(obj: Mapping[str, Any], line: int) -> tuple[tuple[str, Any], ...]:
    """The fields the rules do not read, each checked for its kind (the audit log keeps them)."""
    out = []
    for k in PASSTHROUGH:
        if k in obj and obj[k] is not None:
            try:
                out.append((k, _PASSTHROUGH_CHECK[k](obj[k])))
            except ValueError as exc:
                raise ScenarioError(line, k, str(exc)) from None
    return tuple(out)


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
        obj = parse_json_line(text, number)
        if setup is None:
            setup = parse_setup(obj, number)
        else:
            events.append((number, parse_event(obj, number)))
    if setup is None:
        raise ScenarioError(1, "type", 'the scenario is empty: it must start with the "table" line')
    return setup, events
