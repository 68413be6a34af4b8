"""The state of a round: its phase, its boxes, hands and wagers, the dealer's cards, the shoe.

Plain data with small queries; the rooms of the engine (:mod:`~controller.engine.deal`,
:mod:`~controller.engine.play`, ...) change it. A hand keeps its totals as cards arrive
(:meth:`Hand.add`), so no total is ever recomputed from the cards on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from controller.cards import VALUE, deck
from controller.engine.results import Flag, RoundResult
from controller.events import MAX_DECKS, TableSetup
from controller.events import Device as Device
from controller.rules import HoleCard, RuleSet

if TYPE_CHECKING:
    from controller.engine.decisions import Decision, Fixed
    from controller.engine.tray import Tray

ZERO: Final = Decimal(0)


class Phase(StrEnum):
    """Where a round is. A ``StrEnum``: it prints, compares and serialises as its value."""

    IDLE = "idle"  # no round in progress (what :meth:`Table.due` says between rounds)
    BETTING = "betting"  # wagers are being placed
    CLOSED = "closed"  # "no more bets": the next card starts the deal
    DEALING = "dealing"  # the initial deal
    PLAY = "play"  # the boxes' hands, in turn
    DEALER = "dealer"  # the dealer's hand
    SETTLED = "settled"
    VOID = "void"


class DayState(StrEnum):
    """The table's day (6.1-6.3): ``closed`` until ``open_table``; ``opening`` until the first
    shoe is loaded (the opening's checks apply); ``open`` until ``close_table``."""

    CLOSED = "closed"
    OPENING = "opening"
    OPEN = "open"


class Reshuffle(StrEnum):
    """Why a reshuffle is due after the round (``NONE``: it is not, beyond the cutting card)."""

    NONE = ""
    CUTTING_CARD_OUT = "16.9"  # the cutting card came out and a round was dealt after it
    NO_CUTTING_CARD = "16.10"  # the shoe was loaded with no cutting card


class Resolved(StrEnum):
    """How a flag stopped waiting: seen (``acknowledge``), or a misread's card entered."""

    SEEN = "seen"
    CORRECTED = "corrected"


# Module-level names for the hot path (one lookup instead of two; constants under mypyc).
# Typed Phase, not each its literal: a phase changes under calls mypy cannot see into, so no
# comparison may narrow it.
BETTING: Final[Phase] = Phase.BETTING
CLOSED: Final[Phase] = Phase.CLOSED
DEALING: Final[Phase] = Phase.DEALING
PLAY: Final[Phase] = Phase.PLAY
DEALER: Final[Phase] = Phase.DEALER
SETTLED: Final[Phase] = Phase.SETTLED
VOID: Final[Phase] = Phase.VOID
LIVE_PHASES: Final = frozenset({DEALING, PLAY, DEALER})  # cards are out


@dataclass(init=False, slots=True)
class Wager:
    """One player's money on one hand: the wager, any double, and whether it was rescued."""

    player: str
    amount: Decimal
    double: Decimal
    rescued: bool

    def __init__(
        self, player: str, amount: Decimal, double: Decimal = ZERO, rescued: bool = False
    ) -> None:
        self.player = player
        self.amount = amount
        self.double = double
        self.rescued = rescued


def soft_total(hard: int, free_aces: int) -> tuple[int, bool]:
    """The best total from the hard total (aces as 1) and the aces that may count 11."""
    if free_aces > 0 and hard <= 11:
        return hard + 10, True
    return hard, False


@dataclass(init=False, slots=True)
class Hand:
    """A box's hand. Change its cards only through :meth:`add` and :meth:`take_last`."""

    box: int
    wagers: list[Wager]
    cards: list[str]
    split: bool  # formed by splitting (cannot make a natural, 13.4(c))
    split_aces: bool
    doubled: bool
    aces_fixed: int  # 12.2: initial aces that count 1 once doubled
    done: bool
    refused: bool  # 16.4: refused an error card, no more cards
    void: bool
    surrendered: bool
    rescue_open: bool
    hard: int  # the total with every ace counted 1
    aces: int  # aces among the cards

    def __init__(
        self, box: int, wagers: list[Wager], *, split: bool = False, split_aces: bool = False
    ) -> None:
        self.box = box
        self.wagers = wagers
        self.cards = []
        self.split = split
        self.split_aces = split_aces
        self.doubled = False
        self.aces_fixed = 0
        self.done = False
        self.refused = False
        self.void = False
        self.surrendered = False
        self.rescue_open = False
        self.hard = 0
        self.aces = 0

    def add(self, card: str) -> None:
        self.cards.append(card)
        v = VALUE[card]
        self.hard += v
        if v == 1:
            self.aces += 1

    def take_last(self) -> str:
        card = self.cards.pop()
        v = VALUE[card]
        self.hard -= v
        if v == 1:
            self.aces -= 1
        return card

    @property
    def best(self) -> int:
        hard = self.hard
        if hard <= 11 and self.aces > self.aces_fixed:
            return hard + 10
        return hard

    def total(self) -> tuple[int, bool]:
        return soft_total(self.hard, self.aces - self.aces_fixed)

    @property
    def busted(self) -> bool:
        return self.hard > 21

    @property
    def natural(self) -> bool:
        """An ace and a ten-value card as the first two cards of an original hand (13.4(c))."""
        return not self.split and len(self.cards) == 2 and self.hard == 11 and self.aces == 1

    def wager_of(self, player: str) -> Wager | None:
        for w in self.wagers:
            if w.player == player:
                return w
        return None


@dataclass(init=False, slots=True)
class Box:
    """A betting box: its players' initial wagers (in betting order), its controller, its hands."""

    number: int
    bets: dict[str, Decimal]  # player -> initial wager, in betting order
    controller: str
    hands: list[Hand]
    absent: bool
    void: bool
    surrendered: bool
    surrender_offered: bool
    late_surrender: bool  # 16.12: may still surrender until its next card
    decided: bool
    insurance: dict[str, Decimal]
    split_open: tuple[int, int] | None  # (source hand, new hand) open to back-bettors

    def __init__(self, number: int, bets: dict[str, Decimal], controller: str) -> None:
        self.number = number
        self.bets = bets
        self.controller = controller
        self.hands = []
        self.absent = False
        self.void = False
        self.surrendered = False
        self.surrender_offered = False
        self.late_surrender = False
        self.decided = False
        self.insurance = {}
        self.split_open = None


@dataclass(init=False, slots=True)
class ShoeRecord:
    """One shoe loaded, as the replay document's ``"shoes"`` lists it: its load, the decks that
    had passed inspection when it was loaded, and its reconciliation (None: not ended yet)."""

    seq: int  # the shuffle that loaded it
    decks: int
    serials: tuple[str, ...] | None  # as loaded, in order
    inspected: list[str]
    reconciled: bool | None
    missing: list[str]
    extra: list[str]

    def __init__(
        self, seq: int, decks: int, serials: tuple[str, ...] | None, inspected: list[str]
    ) -> None:
        self.seq = seq
        self.decks = decks
        self.serials = serials
        self.inspected = inspected
        self.reconciled = None
        self.missing = []
        self.extra = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "shoe": self.seq,
            "decks": self.decks,
            "deck_serials": list(self.serials) if self.serials is not None else None,
            "inspected": list(self.inspected),
            "reconciled": self.reconciled,
            "missing": list(self.missing),
            "extra": list(self.extra),
        }


@dataclass(init=False, slots=True)
class Shoe:
    """The shoe loaded: its decks, the cutting card, the deck serials, the cards read from it.

    ``seen`` counts every card read from it since it was loaded (or since a 16.7 reload of the
    discards), dealt or not, by (deck serial or "", card): what its reconciliation checks.
    ``ended``: ``shoe_end`` came, and the cards read now are the ones left, read out."""

    decks: int
    cut_card: int | None
    serials: frozenset[str] | None
    counts: dict[str, int]
    read: set[tuple[str, str]]
    drawn: int
    cut_out: bool
    recorded: bool  # False when cards came with no shuffle on record
    record: ShoeRecord | None  # None when no load is on record
    seen: dict[tuple[str, str], int]
    ended: bool
    read_out: int  # cards read out since shoe_end

    def __init__(
        self,
        decks: int,
        cut_card: int | None,
        serials: frozenset[str] | None,
        recorded: bool = True,
        record: ShoeRecord | None = None,
    ) -> None:
        self.decks = decks
        self.cut_card = cut_card
        self.serials = serials
        self.counts = {}
        self.read = set()
        self.drawn = 0
        self.cut_out = False
        self.recorded = recorded
        self.record = record
        self.seen = {}
        self.ended = False
        self.read_out = 0

    def saw(self, deck: str | None, card: str) -> None:
        key = (deck or "", card)
        seen = self.seen
        seen[key] = seen.get(key, 0) + 1


@dataclass(init=False, slots=True)
class Inspection:
    """One deck read through the reader for inspection (6.1): ``inspect`` until ``inspect_end``."""

    seq: int  # the inspect event
    deck: str | None  # the serial the inspect event named
    by: tuple[str, ...]
    cards: list[tuple[str, str]]  # (deck serial or "", card), in the order read

    def __init__(self, seq: int, deck: str | None, by: tuple[str, ...]) -> None:
        self.seq = seq
        self.deck = deck
        self.by = by
        self.cards = []


@dataclass(init=False, slots=True)
class InspectionResult:
    """A deck's inspection, checked: what the replay document's ``"inspections"`` lists."""

    seq: int  # the inspect event
    end: int  # the event that ended it
    deck: str | None
    by: tuple[str, ...]
    cards: int
    missing: list[str]
    doubled: list[str]
    foreign: list[str]
    tens: list[str]  # cards of a rank the game's decks do not hold (6.1)

    def __init__(
        self,
        seq: int,
        end: int,
        deck: str | None,
        by: tuple[str, ...],
        cards: int,
        missing: list[str],
        doubled: list[str],
        foreign: list[str],
        tens: list[str],
    ) -> None:
        self.seq = seq
        self.end = end
        self.deck = deck
        self.by = by
        self.cards = cards
        self.missing = missing
        self.doubled = doubled
        self.foreign = foreign
        self.tens = tens

    @property
    def passed(self) -> bool:
        return not (self.missing or self.doubled or self.foreign or self.tens)

    def to_dict(self) -> dict[str, Any]:
        return {
            "inspect": self.seq,
            "end": self.end,
            "deck": self.deck,
            "by": list(self.by),
            "cards": self.cards,
            "passed": self.passed,
            "missing": list(self.missing),
            "doubled": list(self.doubled),
            "foreign": list(self.foreign),
            "tens": list(self.tens),
        }


@dataclass(init=False, slots=True)
class DeckStatus:
    """What the table knows of a deck by its serial: whether it passed its last check (an
    inspection, or a shoe's reconciliation), at which event, and what was wrong."""

    ok: bool
    seq: int
    detail: str

    def __init__(self, ok: bool, seq: int, detail: str = "") -> None:
        self.ok = ok
        self.seq = seq
        self.detail = detail


@dataclass(init=False, slots=True)
class Day:
    """The table's day (6.1-6.3): see :class:`DayState`."""

    state: DayState
    seq: int  # the open_table event (0: never opened)
    by: tuple[str, ...]
    steps: list[tuple[str, str, int]]  # (step, who confirmed it or "", event), since opening
    inspected: int  # decks inspected since opening

    def __init__(self) -> None:
        self.state = DayState.CLOSED
        self.seq = 0
        self.by = ()
        self.steps = []
        self.inspected = 0


@dataclass(init=False, slots=True)
class Round:
    """One round from its first bet until it is settled or void."""

    number: int
    boxes: dict[int, Box]
    phase: Phase
    deal_queue: list[int]  # box numbers; 0 = the dealer
    dealer: list[str]
    flags: list[Flag]
    insurance_offered: bool
    insurance_open: bool
    insurance_late: bool  # 16.11: open until the dealer's second card
    post_deal_cards: int  # cards dealt after the initial deal
    peek_pending: bool
    pending_card: str | None  # 16.4: exposed error card on offer
    offered_to: tuple[int, int] | None
    damaged: list[str]
    seen: dict[int, Decimal]  # the camera's stable wager per box
    order: list[Box] | None  # fixed once the deal starts: no box joins after that
    dealer_hard: int  # the dealer's total with aces as 1
    dealer_aces: int
    turn: int  # index in ``order`` of the first box that may still have a hand to play
    windows: bool  # a rescue (12.8) or late surrender (16.12) window may be open
    dealers: list[str]  # the dealers on duty during the round, in order

    def __init__(self, number: int, phase: Phase = BETTING) -> None:
        self.number = number
        self.dealers = []
        self.boxes = {}
        self.phase = phase
        self.deal_queue = []
        self.dealer = []
        self.flags = []
        self.insurance_offered = False
        self.insurance_open = False
        self.insurance_late = False
        self.post_deal_cards = 0
        self.peek_pending = False
        self.pending_card = None
        self.offered_to = None
        self.damaged = []
        self.seen = {}
        self.order = None
        self.dealer_hard = 0
        self.dealer_aces = 0
        self.turn = 0
        self.windows = False

    def ordered_boxes(self) -> list[Box]:
        if self.order is not None:
            return self.order
        return [self.boxes[n] for n in sorted(self.boxes)]

    def all_hands(self) -> list[Hand]:
        return [hand for box in self.ordered_boxes() for hand in box.hands]

    def hand_in_play(self) -> tuple[Box, int] | None:
        """The first hand not yet done, in box order. Hands only ever become done, and a split
        inserts its new hand after the one in play, so the search starts at the box it last
        stopped at."""
        order = self.ordered_boxes()
        i = self.turn
        n = len(order)
        while i < n:
            box = order[i]
            for idx, hand in enumerate(box.hands):
                if not hand.done:
                    self.turn = i
                    return box, idx
            i += 1
        self.turn = i
        return None

    def add_dealer(self, card: str) -> None:
        self.dealer.append(card)
        v = VALUE[card]
        self.dealer_hard += v
        if v == 1:
            self.dealer_aces += 1

    def dealer_total(self) -> tuple[int, bool]:
        return soft_total(self.dealer_hard, self.dealer_aces)

    @property
    def dealer_best(self) -> int:
        hard = self.dealer_hard
        return hard + 10 if hard <= 11 and self.dealer_aces else hard

    @property
    def dealer_natural(self) -> bool:
        return len(self.dealer) == 2 and self.dealer_hard == 11 and self.dealer_aces == 1


# --- the desk: what people did about the table beside the rules ---------------------------------


@dataclass(init=False, slots=True)
class ManualMode:
    """A device a supervisor put in manual mode: since which event, by whom, why."""

    device: Device
    since: int
    by: str  # the event's actor ("" when none was recorded)
    reason: str

    def __init__(self, device: Device, since: int, by: str, reason: str) -> None:
        self.device = device
        self.since = since
        self.by = by
        self.reason = reason


@dataclass(init=False, slots=True)
class Pending:
    """Flags of one rule raised at one event, waiting to be seen (``acknowledge``) or, for a
    misread, resolved by the card entered in its place."""

    seq: int  # the event that raised them
    rule: str
    kind: str  # that event's type
    round: int
    box: int | None
    messages: list[str]

    def __init__(
        self, seq: int, rule: str, kind: str, round: int, box: int | None, messages: list[str]
    ) -> None:
        self.seq = seq
        self.rule = rule
        self.kind = kind
        self.round = round
        self.box = box
        self.messages = messages


@dataclass(init=False, slots=True)
class Resolution:
    """How a flag stopped waiting: ``seen`` (acknowledged) or ``corrected`` (a misread's card
    entered), by whom (the event's actor), and the card entered."""

    how: Resolved
    by: str
    card: str

    def __init__(self, how: Resolved, by: str, card: str = "") -> None:
        self.how = how
        self.by = by
        self.card = card


@dataclass(init=False, slots=True)
class Misread:
    """A card the reader could not decode, awaiting the card a supervisor enters for it."""

    seq: int
    raw: str
    note: str
    round: int | None

    def __init__(self, seq: int, raw: str, note: str, round: int | None) -> None:
        self.seq = seq
        self.raw = raw
        self.note = note
        self.round = round


@dataclass(init=False, slots=True)
class Seen:
    """The camera's latest stable reading of a box (``wager_seen``), kept across rounds."""

    amount: Decimal
    confidence: Decimal | None

    def __init__(self, amount: Decimal, confidence: Decimal | None) -> None:
        self.amount = amount
        self.confidence = confidence


@dataclass(init=False, slots=True)
class Desk:
    """The table's state beside the rules, which the dealer's screen shows and the audit log
    explains: the devices in manual mode, the flags waiting to be seen and how the others were
    resolved, the misreads awaiting correction, the camera's latest reading of each box, and the
    rescues taken in the last two rounds (the settlement alone cannot always tell a rescue)."""

    manual: dict[Device, ManualMode]
    pending: dict[tuple[int, str], Pending]  # in the order raised
    resolved: dict[tuple[int, str], Resolution]
    misreads: dict[int, Misread]
    misreads_dropped: int
    seen: dict[int, Seen]
    rescues: set[tuple[int, int, int, str]]  # (round, box, hand, player)

    def __init__(self) -> None:
        self.manual = {}
        self.pending = {}
        self.resolved = {}
        self.misreads = {}
        self.misreads_dropped = 0
        self.seen = {}
        self.rescues = set()


# --- the table's whole state, and what every room does to it ------------------------------------


class TableState:
    """The table's whole state: the rounds kept and the one in progress, the shoe, the discard
    rack, the day, the decks known, the desk; and the few things every room does to it (raise a
    flag, open and end a round, bound the records). The rooms are functions over it; the
    :class:`~controller.engine.table.Table` adds the way in and the questions asked from
    outside, and the snapshot is taken of it.

    What the event being applied did (the flags it raised, the round it ended) is kept here
    while it is applied and returned by ``Table.apply``."""

    fixed: Fixed  # the decisions that never change at this table (set by the Table)
    tray: Tray  # the chip tray's counts, slips, buy-ins, drop (:mod:`.tray`; set by the Table)

    def __init__(self, setup: TableSetup, keep_rounds: int | None) -> None:
        if keep_rounds is not None and keep_rounds < 1:
            raise ValueError(f"keep_rounds must be at least 1 (or None for all): {keep_rounds}")
        self.setup = setup
        self.rules: RuleSet = setup.rules
        self.keep_rounds = keep_rounds
        self.rounds: list[RoundResult] = []
        self.rounds_played = 0  # the number of the last round that ended
        self.current_round: Round | None = None
        self.shoe: Shoe | None = None
        self.discards: list[str] = []  # the discard rack since the shoe was loaded, in order
        self.removed: list[str] = []  # this shoe's foreign or impossible cards, off the table
        self.seq = 0
        self.unassigned: list[Flag] = []  # flags raised before the first round
        self.reshuffle_reason = Reshuffle.NONE  # 16.9 or 16.10 once due after the round
        # The opening and the shoes' records (:mod:`.opening`, :mod:`.inspection`).
        self.dealer_on_duty: str | None = None
        self.day = Day()
        self.inspection: Inspection | None = None  # the deck being inspected now
        self.inspections: list[InspectionResult] = []
        self.deck_status: dict[str, DeckStatus] = {}  # by deck serial, the most recent last
        self.shoes: list[ShoeRecord] = []  # one per shoe loaded
        # What the rules say, read once for the hot path.
        rules = self.rules
        self.excluded_ranks = frozenset(rules.excluded_ranks)
        self.cards_per_deck = rules.cards_per_deck()
        self.deck_codes: tuple[str, ...] = tuple(deck(rules.excluded_ranks))
        self.no_hole_card = rules.hole_card is HoleCard.NONE
        self.hole_card_peek = rules.hole_card is HoleCard.PEEK
        self._refs = dict(rules.rule_refs)
        self.desk = Desk()  # manual modes, flags waiting to be seen, misreads (:mod:`.desk`)
        # What the event being applied did.
        self._kind = ""
        self._flags: list[Flag] | None = None
        self._settled: RoundResult | None = None
        self.open_cache: tuple[int, tuple[Decision, ...]] | None = None  # (seq, decisions)

    def begin(self, kind: str) -> None:
        """An event of ``kind`` is being applied: it has done nothing yet."""
        self.seq += 1
        self._kind = kind
        self._flags = None
        self._settled = None

    def flag(self, rule: str, message: str, box: int | None = None) -> None:
        """Raise a flag on the round in progress (or the last one, or the first one to come)."""
        rnd = self.current_round
        number = rnd.number if rnd is not None else self.rounds_played
        flag = Flag(rule, message, box, number, self.seq, self._kind)
        if rnd is not None:
            rnd.flags.append(flag)
        elif self.rounds:
            self.rounds[-1].flags.append(flag)  # noticed after that round
        else:
            self.unassigned.append(flag)  # belongs to the first round
        if self._flags is None:
            self._flags = [flag]
        else:
            self._flags.append(flag)

    def ref(self, situation: str) -> str:
        """The rule a flag for ``situation`` names in this game (``rule_refs``)."""
        return self._refs.get(situation, situation)

    def open_round(self) -> Round:
        rnd = Round(number=self.rounds_played + 1)
        if self.dealer_on_duty is not None:
            rnd.dealers.append(self.dealer_on_duty)
        if self.unassigned:
            rnd.flags.extend(self.unassigned)
            self.unassigned.clear()
        self.current_round = rnd
        return rnd

    def end_round(self, result: RoundResult) -> None:
        self.rounds.append(result)
        self.rounds_played = result.round
        keep = self.keep_rounds
        if keep is not None and len(self.rounds) > keep:
            del self.rounds[: len(self.rounds) - keep]
        self.current_round = None
        self.tray.round_ended(result)  # its house net is money the tray paid or took
        self._settled = result

    def bound_records(self) -> None:
        """A bounded table (``keep_rounds``) keeps as many shoes' records as rounds, and the
        last inspections of at least a full shoe's decks."""
        keep = self.keep_rounds
        if keep is None:
            return
        if len(self.shoes) > keep:
            del self.shoes[: len(self.shoes) - keep]
        most = max(keep, MAX_DECKS)
        if len(self.inspections) > most:
            del self.inspections[: len(self.inspections) - most]

    def shoe_remaining(self) -> int:
        shoe = self.shoe
        return shoe.decks * self.cards_per_deck - shoe.drawn if shoe is not None else 0

    @property
    def reshuffle_due(self) -> bool:
        """A shuffle is due before the next round: the cutting card came out, or 16.9/16.10."""
        shoe = self.shoe
        return shoe is not None and (
            shoe.cut_out or shoe.ended or self.reshuffle_reason is not Reshuffle.NONE
        )

    def reshuffle_rule(self) -> str:
        """The rule a shuffle due now answers (6.1-6.3 when no shoe is loaded, or the shoe has
        ended)."""
        shoe = self.shoe
        if shoe is None:
            return "6.3"
        if shoe.ended:
            return str(self.reshuffle_reason) or "6.3"
        return str(self.reshuffle_reason) or "16.9"

    def require_reshuffle(self, reason: Reshuffle) -> None:
        if self.reshuffle_reason is Reshuffle.NONE:
            self.reshuffle_reason = reason

    def reshuffled(self) -> None:
        self.reshuffle_reason = Reshuffle.NONE
