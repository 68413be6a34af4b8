"""A table's whole state as plain data, and the table back from it: the store's checkpoints.

:func:`dump` (``Table.snapshot()``) gives a ``dict`` of ``str``, ``int``, ``bool``, ``None``,
lists and dicts only, money as decimal strings (``"12.5"``), valid at any moment: between
rounds and mid-round alike. It is deterministic: the same state gives the same dict, every
list in a fixed order (sets sorted), so it can be hashed canonically. It carries its own digest
(SHA-256 of its canonical JSON: keys sorted, no spaces, UTF-8) and the setup and rule set it was
taken under.

:func:`load` (``Table.restore(setup, snapshot)``) checks all of it and raises
:class:`SnapshotError` (a ``ValueError``) naming what is wrong: not a snapshot, another format
version, a digest that does not match (a corrupt or edited snapshot), another table, game,
setup or rule set, or a field of the wrong shape. It never returns a table it is unsure of: the
restored table must dump to exactly the snapshot it came from.

Its size does not grow with the table's life when the table keeps a bounded number of rounds
(``keep_rounds``): the discard rack and the cards removed from play are the current shoe's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from controller.cards import is_card
from controller.engine import tray
from controller.engine.results import Flag, RoundResult, Settlement, SettlementKind
from controller.engine.state import (
    Box,
    Day,
    DayState,
    DeckStatus,
    Desk,
    Device,
    Hand,
    Inspection,
    InspectionResult,
    ManualMode,
    Misread,
    Pending,
    Phase,
    Reshuffle,
    Resolution,
    Resolved,
    Round,
    Seen,
    Shoe,
    ShoeRecord,
    TableState,
    Wager,
)
from controller.events import OPENING_STEPS, TableSetup

TableT = TypeVar("TableT", bound=TableState)

_SERIAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
FORMAT = "floorctl-engine-snapshot"
# 2: the opening and the shoes' records (dealers, inspections, reconciliation); 3: the desk
# (manual modes, flags waiting to be seen, misreads, the camera's readings, rescues) and each
# flag's event type. A store whose newest checkpoint is of an older version rebuilds its table
# from its events once (the checkpoint is skipped, as any unusable one is).
VERSION = 3
T = TypeVar("T")


class SnapshotError(ValueError):
    """A snapshot that cannot be restored: corrupt, of another table, or malformed."""


def canonical(obj: Any) -> bytes:
    """The canonical JSON of plain data: keys sorted, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(obj: Any) -> str:
    return hashlib.sha256(canonical(obj)).hexdigest()


def rules_fingerprint(t_rules: Any) -> str:
    """SHA-256 of the rule set's every setting: a snapshot is only good under the same rules."""
    return digest(t_rules.to_dict())


def dec(d: Decimal) -> str:
    """Money as a canonical decimal string: no exponent, no trailing zeros (``12.5``, ``10``)."""
    return format(d.normalize(), "f")


# --- dump -----------------------------------------------------------------------------------------


def dump(t: TableState) -> dict[str, Any]:
    body: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "setup": _setup(t.setup),
        "rules": rules_fingerprint(t.rules),
        "keep_rounds": t.keep_rounds,
        "seq": t.seq,
        "rounds_played": t.rounds_played,
        "rounds": [_result(r) for r in t.rounds],
        "unassigned": [_flag(f) for f in t.unassigned],
        "reshuffle_reason": str(t.reshuffle_reason),
        "shoe": _shoe(t.shoe) if t.shoe is not None else None,
        "discards": list(t.discards),
        "removed": list(t.removed),
        "round": _round(t.current_round) if t.current_round is not None else None,
        "dealer_on_duty": t.dealer_on_duty,
        "day": _day(t.day),
        "inspection": _inspection(t.inspection) if t.inspection is not None else None,
        "inspections": [_inspection_result(i) for i in t.inspections],
        "deck_status": [[s, d.ok, d.seq, d.detail] for s, d in t.deck_status.items()],
        "shoes": [_shoe_record(r) for r in t.shoes],
        "desk": _desk(t.desk),
    }
    if t.tray.used:  # a table that never heard of its tray dumps as before
        body["tray"] = tray.dump(t.tray)
    body["digest"] = digest(body)
    return body


def _day(d: Day) -> dict[str, Any]:
    return {
        "state": str(d.state),
        "seq": d.seq,
        "by": list(d.by),
        "steps": [list(step) for step in d.steps],
        "inspected": d.inspected,
    }


def _inspection(i: Inspection) -> dict[str, Any]:
    return {
        "seq": i.seq,
        "deck": i.deck,
        "by": list(i.by),
        "cards": [list(pair) for pair in i.cards],
    }


def _inspection_result(r: InspectionResult) -> dict[str, Any]:
    return {
        "seq": r.seq,
        "end": r.end,
        "deck": r.deck,
        "by": list(r.by),
        "cards": r.cards,
        "missing": list(r.missing),
        "doubled": list(r.doubled),
        "foreign": list(r.foreign),
        "tens": list(r.tens),
    }


def _shoe_record(r: ShoeRecord) -> dict[str, Any]:
    return {
        "seq": r.seq,
        "decks": r.decks,
        "serials": list(r.serials) if r.serials is not None else None,
        "inspected": list(r.inspected),
        "reconciled": r.reconciled,
        "missing": list(r.missing),
        "extra": list(r.extra),
    }


def _setup(setup: TableSetup) -> dict[str, Any]:
    return json.loads(canonical(setup.to_dict()))  # type: ignore[no-any-return]


def _flag(f: Flag) -> list[Any]:
    return [f.rule, f.message, f.box, f.round, f.seq, f.kind]


def _desk(d: Desk) -> dict[str, Any]:
    return {
        "manual": [[str(m.device), m.since, m.by, m.reason] for m in d.manual.values()],
        "pending": [
            [p.seq, p.rule, p.kind, p.round, p.box, list(p.messages)] for p in d.pending.values()
        ],
        "resolved": [
            [seq, rule, str(r.how), r.by, r.card] for (seq, rule), r in d.resolved.items()
        ],
        "misreads": [[m.seq, m.raw, m.note, m.round] for m in d.misreads.values()],
        "misreads_dropped": d.misreads_dropped,
        "seen": [
            [box, dec(s.amount), None if s.confidence is None else str(s.confidence)]
            for box, s in d.seen.items()
        ],
        "rescues": [list(r) for r in sorted(d.rescues)],
    }


def _result(r: RoundResult) -> dict[str, Any]:
    return {
        "round": r.round,
        "status": r.status,
        "dealer": list(r.dealer),
        "dealer_total": r.dealer_total,
        "hands": [dict(h) for h in r.hands],
        "settlements": [
            [s.player, s.box, s.hand, str(s.kind), dec(s.staked), dec(s.returned)]
            for s in r.settlements
        ],
        "flags": [_flag(f) for f in r.flags],
        "dealers": list(r.dealers),
    }


def _shoe(s: Shoe) -> dict[str, Any]:
    return {
        "decks": s.decks,
        "cut_card": s.cut_card,
        "serials": sorted(s.serials) if s.serials is not None else None,
        "counts": [[card, n] for card, n in sorted(s.counts.items())],
        "read": [list(pair) for pair in sorted(s.read)],
        "drawn": s.drawn,
        "cut_out": s.cut_out,
        "recorded": s.recorded,
        "record": s.record is not None,
        "seen": [[deck, card, n] for (deck, card), n in sorted(s.seen.items())],
        "ended": s.ended,
        "read_out": s.read_out,
    }


def _round(r: Round) -> dict[str, Any]:
    return {
        "number": r.number,
        "phase": str(r.phase),
        "boxes": [_box(r.boxes[n]) for n in sorted(r.boxes)],
        "order_fixed": r.order is not None,
        "deal_queue": list(r.deal_queue),
        "dealer": list(r.dealer),
        "flags": [_flag(f) for f in r.flags],
        "insurance_offered": r.insurance_offered,
        "insurance_open": r.insurance_open,
        "insurance_late": r.insurance_late,
        "post_deal_cards": r.post_deal_cards,
        "peek_pending": r.peek_pending,
        "pending_card": r.pending_card,
        "offered_to": list(r.offered_to) if r.offered_to is not None else None,
        "damaged": list(r.damaged),
        "seen": [[n, dec(a)] for n, a in sorted(r.seen.items())],
        "dealers": list(r.dealers),
    }


def _box(b: Box) -> dict[str, Any]:
    return {
        "number": b.number,
        "bets": [[p, dec(a)] for p, a in b.bets.items()],
        "controller": b.controller,
        "hands": [_hand(h) for h in b.hands],
        "absent": b.absent,
        "void": b.void,
        "surrendered": b.surrendered,
        "surrender_offered": b.surrender_offered,
        "late_surrender": b.late_surrender,
        "decided": b.decided,
        "insurance": [[p, dec(a)] for p, a in b.insurance.items()],
        "split_open": list(b.split_open) if b.split_open is not None else None,
    }


def _hand(h: Hand) -> dict[str, Any]:
    return {
        "wagers": [[w.player, dec(w.amount), dec(w.double), w.rescued] for w in h.wagers],
        "cards": list(h.cards),
        "split": h.split,
        "split_aces": h.split_aces,
        "doubled": h.doubled,
        "aces_fixed": h.aces_fixed,
        "done": h.done,
        "refused": h.refused,
        "void": h.void,
        "surrendered": h.surrendered,
        "rescue_open": h.rescue_open,
    }


# --- load -----------------------------------------------------------------------------------------


class _At:
    """A path into the snapshot, for error messages: ``round.boxes[0].hands[1].cards``."""

    def __init__(self, path: str, value: Any) -> None:
        self.path = path
        self.value = value

    def fail(self, why: str) -> SnapshotError:
        return SnapshotError(f"engine snapshot: {self.path}: {why}")

    def key(self, name: str) -> _At:
        if not isinstance(self.value, dict):
            raise self.fail(f"{_show(self.value)} is not an object")
        if name not in self.value:
            raise self.fail(f'"{name}" is missing')
        return _At(f"{self.path}.{name}" if self.path else name, self.value[name])

    def items(self, size: int | None = None) -> list[_At]:
        if not isinstance(self.value, list):
            raise self.fail(f"{_show(self.value)} is not a list")
        if size is not None and len(self.value) != size:
            raise self.fail(f"{_show(self.value)} is not a list of {size}")
        return [_At(f"{self.path}[{i}]", v) for i, v in enumerate(self.value)]

    def count(self, low: int = 0) -> int:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(f"{_show(v)} is not a whole number from {low}")
        return v

    def opt_count(self, low: int = 0) -> int | None:
        return None if self.value is None else self.count(low)

    def yes_no(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail(f"{_show(self.value)} is not true or false")
        return self.value

    def text(self) -> str:
        if not isinstance(self.value, str):
            raise self.fail(f"{_show(self.value)} is not text")
        return self.value

    def opt_text(self) -> str | None:
        return None if self.value is None else self.text()

    def card(self) -> str:
        if not is_card(self.value):
            raise self.fail(f"{_show(self.value)} is not a card code")
        return str(self.value)

    def serial(self) -> str:
        v = self.value
        if not isinstance(v, str) or not 4 <= len(v) <= 12 or not set(v) <= _SERIAL_CHARS:
            raise self.fail(f"{_show(v)} is not a deck serial")
        return v

    def opt_serial(self) -> str | None:
        return None if self.value is None else self.serial()

    def serial_or_none(self) -> str:
        """A deck serial, or "" for a card read with none."""
        return "" if self.value == "" else self.serial()

    def ids(self) -> tuple[str, ...]:
        return tuple(x.text() for x in self.items())

    def opt_card(self) -> str | None:
        return None if self.value is None else self.card()

    def cards(self) -> list[str]:
        return [c.card() for c in self.items()]

    def money(self) -> Decimal:
        v = self.value
        if not isinstance(v, str):
            raise self.fail(f"{_show(v)} is not an amount (a decimal string)")
        try:
            d = Decimal(v)
        except InvalidOperation:
            raise self.fail(f"{_show(v)} is not an amount") from None
        if not d.is_finite() or d < 0 or dec(d) != v:
            raise self.fail(f"{_show(v)} is not an amount in canonical form")
        return d

    def list_of(self, read: Callable[[_At], T]) -> list[T]:
        return [read(x) for x in self.items()]


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def load(
    cls: Callable[..., TableT], setup: TableSetup, data: Any, keep_rounds: int | str | None
) -> TableT:
    """The table ``data`` (a :func:`dump`) was taken of, or :class:`SnapshotError`."""
    top = _At("", data)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SnapshotError('not an engine snapshot (no "format": "floorctl-engine-snapshot")')
    version = top.key("version").value
    if version != VERSION:
        raise SnapshotError(f"engine snapshot version {version!r}: this engine reads {VERSION}")
    body = {k: v for k, v in data.items() if k != "digest"}
    stated = top.key("digest").value
    if not isinstance(stated, str) or stated != digest(body):
        raise SnapshotError("engine snapshot: the digest does not match its content (corrupt)")
    theirs = top.key("setup").value
    mine = _setup(setup)
    if theirs != mine:
        if not isinstance(theirs, dict):
            raise top.key("setup").fail("is not an object")
        differ = sorted(k for k in set(theirs) | set(mine) if theirs.get(k) != mine.get(k))
        shown = ", ".join(f"{k} {theirs.get(k)!r} (this table: {mine.get(k)!r})" for k in differ)
        raise SnapshotError(f"engine snapshot of another table setup: {shown}")
    if top.key("rules").value != rules_fingerprint(setup.rules):
        raise SnapshotError(
            f"engine snapshot taken under another version of rule set {setup.game!r}: "
            "rebuild the table from its events"
        )
    t = cls(setup, keep_rounds=top.key("keep_rounds").opt_count(1))
    t.seq = top.key("seq").count()
    t.rounds_played = top.key("rounds_played").count()
    t.rounds = top.key("rounds").list_of(_read_result)
    t.unassigned = top.key("unassigned").list_of(_read_flag)
    reason = top.key("reshuffle_reason")
    if reason.text() not in ("", "16.9", "16.10"):
        raise reason.fail(f"{_show(reason.value)} is not a reason for a reshuffle")
    t.reshuffle_reason = Reshuffle(reason.text())
    t.shoes = top.key("shoes").list_of(_read_shoe_record)
    shoe = top.key("shoe")
    t.shoe = None if shoe.value is None else _read_shoe(shoe, t.shoes)
    t.discards = top.key("discards").cards()
    t.removed = top.key("removed").cards()
    rnd = top.key("round")
    t.current_round = None if rnd.value is None else _read_round(rnd, setup)
    t.dealer_on_duty = top.key("dealer_on_duty").opt_text()
    t.day = _read_day(top.key("day"))
    insp = top.key("inspection")
    t.inspection = None if insp.value is None else _read_inspection(insp)
    t.inspections = top.key("inspections").list_of(_read_inspection_result)
    for row in top.key("deck_status").items():
        serial, ok, seq, detail = row.items(4)
        t.deck_status[serial.serial()] = DeckStatus(ok.yes_no(), seq.count(), detail.text())
    t.desk = _read_desk(top.key("desk"))
    if "tray" in data:
        try:
            t.tray = tray.load(data["tray"])
        except (ValueError, KeyError, TypeError, IndexError, ArithmeticError) as exc:
            raise SnapshotError(f"engine snapshot: tray: {exc}") from None
    if dump(t) != data:
        raise SnapshotError("engine snapshot: its content is not one this engine produces")
    if keep_rounds != "snapshot":
        t.keep_rounds = _keep(keep_rounds)
        if t.keep_rounds is not None and len(t.rounds) > t.keep_rounds:
            del t.rounds[: len(t.rounds) - t.keep_rounds]
        t.bound_records()
    return t


def _keep(value: int | str | None) -> int | None:
    if value is None or (isinstance(value, int) and value >= 1):
        return value
    raise ValueError(
        f"keep_rounds: {value!r} is not a number of rounds (1 or more), None or 'snapshot'"
    )


def _read_flag(at: _At) -> Flag:
    rule, message, box, number, seq, kind = at.items(6)
    return Flag(
        rule.text(), message.text(), box.opt_count(1), number.count(), seq.count(), kind.text()
    )


def _read_desk(at: _At) -> Desk:
    desk = Desk()
    for row in at.key("manual").items():
        device, since, by, reason = row.items(4)
        if device.value not in _DEVICES:
            raise device.fail(f"{_show(device.value)} is not a device in manual mode")
        name = Device(device.text())
        desk.manual[name] = ManualMode(name, since.count(1), by.text(), reason.text())
    for row in at.key("pending").items():
        seq, rule, kind, number, box, messages = row.items(6)
        desk.pending[(seq.count(1), rule.text())] = Pending(
            seq.count(1),
            rule.text(),
            kind.text(),
            number.count(),
            box.opt_count(1),
            [m.text() for m in messages.items()],
        )
    for row in at.key("resolved").items():
        seq, rule, how, by, card = row.items(5)
        if how.value not in tuple(Resolved):
            raise how.fail(f"{_show(how.value)} is not how a flag was resolved")
        desk.resolved[(seq.count(1), rule.text())] = Resolution(
            Resolved(how.text()), by.text(), card.text()
        )
    for row in at.key("misreads").items():
        seq, raw, note, number = row.items(4)
        desk.misreads[seq.count(1)] = Misread(
            seq.count(1), raw.text(), note.text(), number.opt_count()
        )
    desk.misreads_dropped = at.key("misreads_dropped").count()
    for row in at.key("seen").items():
        box, amount, confidence = row.items(3)
        conf = confidence.opt_text()
        try:
            known = None if conf is None else Decimal(conf)
        except ArithmeticError:
            raise confidence.fail(f"{_show(conf)} is not a confidence") from None
        desk.seen[box.count(1)] = Seen(amount.money(), known)
    for row in at.key("rescues").items():
        number, box, hand, player = row.items(4)
        desk.rescues.add((number.count(1), box.count(1), hand.count(), player.text()))
    return desk


_RESULT_HAND_KEYS = ("box", "hand", "cards", "total", "doubled", "outcome")
_OUTCOMES = (None, "win", "lose", "push", "surrender", "void")


def _read_result(at: _At) -> RoundResult:
    hands = []
    for h in at.key("hands").items():
        if not isinstance(h.value, dict) or set(h.value) != set(_RESULT_HAND_KEYS):
            raise h.fail(f"a round's hand has the keys {', '.join(_RESULT_HAND_KEYS)}")
        outcome = h.key("outcome")
        if outcome.value not in _OUTCOMES:
            raise outcome.fail(f"{_show(outcome.value)} is not an outcome")
        hands.append(
            {
                "box": h.key("box").count(1),
                "hand": h.key("hand").count(),
                "cards": h.key("cards").cards(),
                "total": h.key("total").count(),
                "doubled": h.key("doubled").yes_no(),
                "outcome": outcome.value,
            }
        )
    settlements = []
    for row in at.key("settlements").items():
        player, box, hand, kind, staked, returned = row.items(6)
        if kind.value not in _SETTLEMENT_KINDS:
            raise kind.fail(f"{_show(kind.value)} is not a kind of settlement")
        settlements.append(
            Settlement(
                player.text(),
                box.count(1),
                hand.count(),
                SettlementKind(kind.text()),
                staked.money(),
                returned.money(),
            )
        )
    status = at.key("status")
    if status.text() not in ("settled", "void"):
        raise status.fail(f"{_show(status.value)} is not the status of a round that ended")
    return RoundResult(
        round=at.key("round").count(1),
        status=status.text(),
        dealer=at.key("dealer").cards(),
        dealer_total=at.key("dealer_total").count(),
        hands=hands,
        settlements=settlements,
        flags=at.key("flags").list_of(_read_flag),
        dealers=[d.text() for d in at.key("dealers").items()],
    )


def _read_shoe(at: _At, records: list[ShoeRecord]) -> Shoe:
    serials = at.key("serials")
    has_record = at.key("record")
    if has_record.yes_no() and not records:
        raise has_record.fail("the shoe has a record, but no shoe record is kept")
    shoe = Shoe(
        decks=at.key("decks").count(1),
        cut_card=at.key("cut_card").opt_count(),
        serials=None if serials.value is None else frozenset(s.text() for s in serials.items()),
        record=records[-1] if has_record.yes_no() else None,
    )
    for row in at.key("seen").items():
        deck, card, n = row.items(3)
        shoe.seen[(deck.serial_or_none(), card.card())] = n.count(1)
    shoe.ended = at.key("ended").yes_no()
    shoe.read_out = at.key("read_out").count()
    for pair in at.key("counts").items():
        card, n = pair.items(2)
        shoe.counts[card.card()] = n.count(1)
    for pair in at.key("read").items():
        deck, card = pair.items(2)
        shoe.read.add((deck.text(), card.card()))
    shoe.drawn = at.key("drawn").count()
    shoe.cut_out = at.key("cut_out").yes_no()
    shoe.recorded = at.key("recorded").yes_no()
    return shoe


def _read_shoe_record(at: _At) -> ShoeRecord:
    serials = at.key("serials")
    record = ShoeRecord(
        seq=at.key("seq").count(1),
        decks=at.key("decks").count(1),
        serials=None if serials.value is None else tuple(s.serial() for s in serials.items()),
        inspected=[s.serial() for s in at.key("inspected").items()],
    )
    reconciled = at.key("reconciled")
    record.reconciled = None if reconciled.value is None else reconciled.yes_no()
    record.missing = [m.text() for m in at.key("missing").items()]
    record.extra = [m.text() for m in at.key("extra").items()]
    return record


_DAY_STATES = tuple(str(s) for s in DayState)
_SETTLEMENT_KINDS = tuple(str(k) for k in SettlementKind)
_DEVICES = tuple(str(d) for d in Device)


def _read_day(at: _At) -> Day:
    day = Day()
    state = at.key("state")
    if state.value not in _DAY_STATES:
        raise state.fail(f"{_show(state.value)} is not the state of a table's day")
    day.state = DayState(state.text())
    day.seq = at.key("seq").count()
    day.by = at.key("by").ids()
    for row in at.key("steps").items():
        step, who, seq = row.items(3)
        if step.value not in OPENING_STEPS:
            raise step.fail(f"{_show(step.value)} is not an opening step")
        day.steps.append((step.text(), who.text(), seq.count(1)))
    day.inspected = at.key("inspected").count()
    return day


def _read_inspection(at: _At) -> Inspection:
    insp = Inspection(
        seq=at.key("seq").count(1), deck=at.key("deck").opt_serial(), by=at.key("by").ids()
    )
    for row in at.key("cards").items():
        deck, card = row.items(2)
        insp.cards.append((deck.serial_or_none(), card.card()))
    return insp


def _read_inspection_result(at: _At) -> InspectionResult:
    return InspectionResult(
        seq=at.key("seq").count(1),
        end=at.key("end").count(1),
        deck=at.key("deck").opt_serial(),
        by=at.key("by").ids(),
        cards=at.key("cards").count(),
        missing=at.key("missing").cards(),
        doubled=at.key("doubled").cards(),
        foreign=[f.text() for f in at.key("foreign").items()],
        tens=[f.text() for f in at.key("tens").items()],
    )


_ROUND_PHASES = {str(p): p for p in Phase if p not in (Phase.IDLE, Phase.SETTLED, Phase.VOID)}


def _pair(at: _At) -> tuple[int, int] | None:
    if at.value is None:
        return None
    a, b = at.items(2)
    return a.count(), b.count()


def _read_round(at: _At, setup: TableSetup) -> Round:
    phase = at.key("phase")
    if phase.value not in _ROUND_PHASES:
        raise phase.fail(f"{_show(phase.value)} is not the phase of a round in progress")
    rnd = Round(number=at.key("number").count(1), phase=_ROUND_PHASES[phase.text()])
    for b in at.key("boxes").items():
        box = _read_box(b, setup)
        if box.number in rnd.boxes:
            raise b.fail(f"box {box.number} appears twice")
        rnd.boxes[box.number] = box
    if at.key("order_fixed").yes_no():
        rnd.order = [rnd.boxes[n] for n in sorted(rnd.boxes)]
    queue = at.key("deal_queue")
    rnd.deal_queue = [q.count() for q in queue.items()]
    if any(n and n not in rnd.boxes for n in rnd.deal_queue):
        raise queue.fail("names a box that has no wager")
    for card in at.key("dealer").cards():
        rnd.add_dealer(card)
    rnd.flags = at.key("flags").list_of(_read_flag)
    rnd.insurance_offered = at.key("insurance_offered").yes_no()
    rnd.insurance_open = at.key("insurance_open").yes_no()
    rnd.insurance_late = at.key("insurance_late").yes_no()
    rnd.post_deal_cards = at.key("post_deal_cards").count()
    rnd.peek_pending = at.key("peek_pending").yes_no()
    rnd.pending_card = at.key("pending_card").opt_card()
    offered = at.key("offered_to")
    rnd.offered_to = _pair(offered)
    if rnd.offered_to is not None:
        number, i = rnd.offered_to
        if number not in rnd.boxes or i >= len(rnd.boxes[number].hands):
            raise offered.fail(f"box {number} has no hand {i}")
    rnd.damaged = at.key("damaged").cards()
    rnd.dealers = [d.text() for d in at.key("dealers").items()]
    rnd.windows = any(
        box.late_surrender or any(h.rescue_open for h in box.hands) for box in rnd.boxes.values()
    )
    for pair in at.key("seen").items():
        n, amount = pair.items(2)
        rnd.seen[n.count(1)] = amount.money()
    return rnd


def _read_box(at: _At, setup: TableSetup) -> Box:
    number = at.key("number").count(1)
    if number > setup.boxes:
        raise at.key("number").fail(f"box {number} is not on a {setup.boxes}-box table")
    box = Box(number=number, bets={}, controller=at.key("controller").text())
    for pair in at.key("bets").items():
        player, amount = pair.items(2)
        box.bets[player.text()] = amount.money()
    if box.controller not in box.bets:
        raise at.key("controller").fail(f"{box.controller!r} has no wager on box {number}")
    box.hands = [_read_hand(h, number) for h in at.key("hands").items()]
    box.absent = at.key("absent").yes_no()
    box.void = at.key("void").yes_no()
    box.surrendered = at.key("surrendered").yes_no()
    box.surrender_offered = at.key("surrender_offered").yes_no()
    box.late_surrender = at.key("late_surrender").yes_no()
    box.decided = at.key("decided").yes_no()
    for pair in at.key("insurance").items():
        player, amount = pair.items(2)
        box.insurance[player.text()] = amount.money()
    split_open = at.key("split_open")
    box.split_open = _pair(split_open)
    if box.split_open is not None and max(box.split_open) >= len(box.hands):
        raise split_open.fail(f"box {number} has no hand {max(box.split_open)}")
    return box


def _read_hand(at: _At, box: int) -> Hand:
    wagers = []
    for w in at.key("wagers").items():
        player, amount, double, rescued = w.items(4)
        wagers.append(Wager(player.text(), amount.money(), double.money(), rescued.yes_no()))
    if not wagers:
        raise at.key("wagers").fail("a hand has at least one wager")
    hand = Hand(box=box, wagers=wagers)
    for card in at.key("cards").cards():
        hand.add(card)
    hand.split = at.key("split").yes_no()
    hand.split_aces = at.key("split_aces").yes_no()
    hand.doubled = at.key("doubled").yes_no()
    hand.aces_fixed = at.key("aces_fixed").count()
    if hand.aces_fixed > min(2, hand.aces):
        raise at.key("aces_fixed").fail(f"{hand.aces_fixed} is more aces than the hand holds")
    hand.done = at.key("done").yes_no()
    hand.refused = at.key("refused").yes_no()
    hand.void = at.key("void").yes_no()
    hand.surrendered = at.key("surrendered").yes_no()
    hand.rescue_open = at.key("rescue_open").yes_no()
    return hand
