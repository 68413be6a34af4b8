"""The table as the world outside the engine reads it: :class:`TableView`, typed and frozen.

The service, the dealer's screen, the floor's rebuild and indexer, the export and the demo's
bot read the table only through a view (:meth:`Table.view`) and ask it only through
:meth:`Table.check`; none of them reads the engine's own fields. A view is taken at one moment
(``seq``) and never changes after: take a new one after the next event.

The screen's own shape of what is due (``due``: prompts, the boxes, the dealer's hand, the
inspection and the opening, as the dealer's page reads them) is a read-only mapping built with
the view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from controller.engine import check, deal, opening, view
from controller.engine.decisions import Decision
from controller.engine.results import Flag, RoundResult
from controller.engine.state import (
    SETTLED,
    VOID,
    DayState,
    Device,
    Phase,
    Resolved,
    Round,
    TableState,
)


@dataclass(frozen=True, slots=True)
class WagerView:
    player: str
    amount: Decimal
    double: Decimal
    rescued: bool


@dataclass(frozen=True, slots=True)
class HandView:
    """One hand of the round in progress; ``hand`` numbers a box's hands from 0, in play order."""

    box: int
    hand: int
    cards: tuple[str, ...]
    total: int
    soft: bool
    doubled: bool
    done: bool
    natural: bool
    wagers: tuple[WagerView, ...]


@dataclass(frozen=True, slots=True)
class BoxView:
    number: int
    controller: str
    bets: tuple[tuple[str, Decimal], ...]  # player, initial wager, in betting order
    insurance: tuple[tuple[str, Decimal], ...]
    absent: bool
    void: bool
    surrendered: bool
    seen: Decimal | None  # the camera's stable wager in this round
    hands: tuple[HandView, ...]

    @property
    def staked(self) -> Decimal:
        return sum((a for _p, a in self.bets), Decimal(0))


@dataclass(frozen=True, slots=True)
class RoundView:
    """The round in progress."""

    number: int
    phase: Phase
    boxes: tuple[BoxView, ...]  # in play order once the deal began, else by number
    dealer: tuple[str, ...]
    dealer_total: int
    pending_card: str | None  # 16.4: an exposed card on offer
    flags: tuple[Flag, ...]
    dealers: tuple[str, ...]

    def box(self, number: int) -> BoxView | None:
        for b in self.boxes:
            if b.number == number:
                return b
        return None

    def hands(self) -> dict[tuple[int, int], tuple[str, ...]]:
        """Every hand's cards by (box, hand)."""
        return {(h.box, h.hand): h.cards for b in self.boxes for h in b.hands}


@dataclass(frozen=True, slots=True)
class ShoeView:
    load: int | None  # the shuffle that loaded it (None: cards came with no load on record)
    decks: int
    drawn: int
    remaining: int
    cut_card: int | None
    cut_out: bool
    ended: bool  # shoe_end came: the cards read now are read out
    read_out: int


@dataclass(frozen=True, slots=True)
class ShoeRecordView:
    """One shoe loaded, as the replay document's ``"shoes"`` lists it."""

    seq: int  # the shuffle that loaded it
    decks: int
    serials: tuple[str, ...] | None
    inspected: tuple[str, ...]
    reconciled: bool | None  # None: not ended yet
    missing: tuple[str, ...]
    extra: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DayView:
    state: DayState
    opened: int  # the open_table event (0: never opened)
    by: tuple[str, ...]
    steps: tuple[tuple[str, str, int], ...]  # (step, who confirmed it or "", event)
    to_do: tuple[str, ...]  # the opening's steps not yet confirmed (while opening)
    inspected: int


@dataclass(frozen=True, slots=True)
class DeckView:
    """What the table knows of a deck serial: passed (or failed) its last check, when, why."""

    serial: str
    ok: bool
    seq: int
    detail: str


@dataclass(frozen=True, slots=True)
class ManualView:
    device: Device
    since: int
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class PendingView:
    """Flags of one rule raised at one event, waiting to be seen."""

    seq: int
    rule: str
    kind: str  # the type of the event that raised them
    round: int
    box: int | None
    messages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResolutionView:
    seq: int
    rule: str
    how: Resolved
    by: str
    card: str


@dataclass(frozen=True, slots=True)
class MisreadView:
    seq: int
    raw: str
    note: str
    round: int | None


@dataclass(frozen=True, slots=True)
class SeenView:
    box: int
    amount: Decimal
    confidence: Decimal | None


@dataclass(frozen=True, slots=True)
class TableView:
    """The whole table at one moment, as everything outside the engine reads it."""

    seq: int
    game: str
    table_id: str
    number: int  # the round in progress, or the next one
    round: RoundView | None  # the round in progress (None between rounds)
    rounds_played: int
    last_round: RoundResult | None  # the last round ended (a copy: its flags as of now)
    unassigned: tuple[Flag, ...]  # flags raised before the first round
    shoe: ShoeView | None
    shoes: tuple[ShoeRecordView, ...]  # the shoes loaded (a bounded table keeps the last few)
    day: DayView
    dealer: str | None  # the dealer on duty
    decks: tuple[DeckView, ...]  # by serial, the most recently checked last
    inspecting: bool  # a deck is being read for inspection
    reshuffle_due: bool
    open: tuple[Decision, ...]  # what may be decided now (the screen's buttons): check agrees
    next_card: deal.Target | None
    manual: tuple[ManualView, ...]
    pending: tuple[PendingView, ...]  # in the order raised
    resolved: tuple[ResolutionView, ...]
    misreads: tuple[MisreadView, ...]
    misreads_dropped: int
    seen: tuple[SeenView, ...]  # the camera's latest reading of each box, across rounds
    rescues: frozenset[tuple[int, int, int, str]]  # (round, box, hand, player)
    due: Mapping[str, Any]  # the screen's form of what is due (read-only)

    @property
    def in_round(self) -> bool:
        return self.round is not None

    @property
    def phase(self) -> Phase:
        return self.round.phase if self.round is not None else Phase.IDLE

    def manual_on(self, device: Device | str) -> bool:
        return any(m.device == device for m in self.manual)

    def waiting(self, seq: int, rule: str) -> PendingView | None:
        for p in self.pending:
            if p.seq == seq and p.rule == rule:
                return p
        return None

    def resolution(self, seq: int, rule: str) -> ResolutionView | None:
        for r in self.resolved:
            if r.seq == seq and r.rule == rule:
                return r
        return None

    def deck(self, serial: str) -> DeckView | None:
        for d in self.decks:
            if d.serial == serial:
                return d
        return None

    def flags_shown(self) -> tuple[Flag, ...]:
        """The flags of the last round ended and of the round in progress (or, before the first
        round, the flags raised so far), in the order raised."""
        out: list[Flag] = []
        if self.last_round is not None:
            out.extend(self.last_round.flags)
        if self.round is not None:
            out.extend(self.round.flags)
        out.extend(self.unassigned)
        return tuple(out)


def round_view(rnd: Round) -> RoundView:
    boxes = []
    for b in rnd.ordered_boxes():
        hands = []
        for i, hand in enumerate(b.hands):
            total, soft = hand.total()
            hands.append(
                HandView(
                    b.number,
                    i,
                    tuple(hand.cards),
                    total,
                    soft,
                    hand.doubled,
                    hand.done,
                    hand.natural,
                    tuple(WagerView(w.player, w.amount, w.double, w.rescued) for w in hand.wagers),
                )
            )
        boxes.append(
            BoxView(
                b.number,
                b.controller,
                tuple(b.bets.items()),
                tuple(b.insurance.items()),
                b.absent,
                b.void,
                b.surrendered,
                rnd.seen.get(b.number),
                tuple(hands),
            )
        )
    return RoundView(
        rnd.number,
        rnd.phase,
        tuple(boxes),
        tuple(rnd.dealer),
        rnd.dealer_best if rnd.dealer else 0,
        rnd.pending_card,
        tuple(rnd.flags),
        tuple(rnd.dealers),
    )


def _copy(r: RoundResult) -> RoundResult:
    return RoundResult(
        r.round,
        r.status,
        list(r.dealer),
        r.dealer_total,
        [dict(h) for h in r.hands],
        list(r.settlements),
        list(r.flags),
        list(r.dealers),
    )


def table_view(t: TableState) -> TableView:
    rnd = t.current_round
    live = rnd is not None and rnd.phase is not SETTLED and rnd.phase is not VOID
    shoe = t.shoe
    shoe_view = None
    if shoe is not None:
        shoe_view = ShoeView(
            shoe.record.seq if shoe.record is not None else None,
            shoe.decks,
            shoe.drawn,
            max(0, t.shoe_remaining()),
            shoe.cut_card,
            shoe.cut_out,
            shoe.ended,
            shoe.read_out,
        )
    day = t.day
    done = {s for s, _who, _seq in day.steps}
    to_do = tuple(
        s for s, _r, _b in opening.ORDER if s not in done and day.state is DayState.OPENING
    )
    desk = t.desk
    due = view.due(t)
    return TableView(
        seq=t.seq,
        game=t.setup.game,
        table_id=t.setup.table_id,
        number=rnd.number if rnd is not None else t.rounds_played + 1,
        round=round_view(rnd) if rnd is not None and live else None,
        rounds_played=t.rounds_played,
        last_round=_copy(t.rounds[-1]) if t.rounds else None,
        unassigned=tuple(t.unassigned),
        shoe=shoe_view,
        shoes=tuple(
            ShoeRecordView(
                r.seq,
                r.decks,
                r.serials,
                tuple(r.inspected),
                r.reconciled,
                tuple(r.missing),
                tuple(r.extra),
            )
            for r in t.shoes
        ),
        day=DayView(day.state, day.seq, day.by, tuple(day.steps), to_do, day.inspected),
        dealer=t.dealer_on_duty,
        decks=tuple(DeckView(s, d.ok, d.seq, d.detail) for s, d in t.deck_status.items()),
        inspecting=t.inspection is not None,
        reshuffle_due=t.reshuffle_due,
        open=check.allowed(t),
        next_card=deal.next_card(t),
        manual=tuple(ManualView(m.device, m.since, m.by, m.reason) for m in desk.manual.values()),
        pending=tuple(
            PendingView(p.seq, p.rule, p.kind, p.round, p.box, tuple(p.messages))
            for p in desk.pending.values()
        ),
        resolved=tuple(
            ResolutionView(seq, rule, r.how, r.by, r.card)
            for (seq, rule), r in desk.resolved.items()
        ),
        misreads=tuple(MisreadView(m.seq, m.raw, m.note, m.round) for m in desk.misreads.values()),
        misreads_dropped=desk.misreads_dropped,
        seen=tuple(SeenView(b, s.amount, s.confidence) for b, s in desk.seen.items()),
        rescues=frozenset(desk.rescues),
        due=MappingProxyType(due.to_dict()),
    )
