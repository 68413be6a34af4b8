"""The round engine: a pure state machine over the events of ``shared/spec/SCENARIO.md``.

No I/O and no clock. :meth:`Table.apply` takes one :class:`~controller.events.Event` and returns
what followed from it: the flags raised (each naming its rule) and, when the event ended a
round, that round's result with its settlements. :meth:`Table.due` says what the dealer must do
next. A rule breach is a flag, never an exception: the event is refused (or, for the section 16
irregularities, handled as the procedure directs) and play goes on.

Who gets a card is the engine's to know: cards are not addressed. During the initial deal the
order is box 1..N, the dealer, box 1..N (and, in a hole-card game, the dealer again); in play a
card goes to the hand in play; then to the dealer while the drawing rule and the hands still
waiting on the dealer's total say so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import Any

from controller import payouts
from controller.cards import PICTURES, TEN_VALUES, VALUE, best_total
from controller.events import EVENT_TYPES, Event, TableSetup
from controller.rules import RuleSet

ZERO = Decimal(0)
CENT = Decimal("0.01")


@cache
def money(d: Decimal) -> str:
    """A decimal amount as the output shows it: no exponent, no needless trailing zeros.

    Cached: a table sees few distinct amounts, and equal amounts print alike."""
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1)))
    return str(d.quantize(CENT))


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Flag:
    rule: str
    message: str
    box: int | None = None
    round: int = 0
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        if self.box is not None:
            out["box"] = self.box
        out["message"] = self.message
        out["event"] = self.seq
        return out


@dataclass(frozen=True, slots=True)
class Settlement:
    player: str
    box: int
    hand: int
    kind: str
    staked: Decimal
    returned: Decimal

    @property
    def net(self) -> Decimal:
        return self.returned - self.staked

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "box": self.box,
            "hand": self.hand,
            "kind": self.kind,
            "staked": money(self.staked),
            "returned": money(self.returned),
            "net": money(self.net),
        }


@dataclass(slots=True)
class RoundResult:
    round: int
    status: str
    dealer: list[str]
    dealer_total: int
    hands: list[dict[str, Any]]
    settlements: list[Settlement]
    flags: list[Flag]

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "status": self.status,
            "dealer": {"cards": list(self.dealer), "total": self.dealer_total},
            "hands": [dict(h) for h in self.hands],
            "settlements": [s.to_dict() for s in self.settlements],
            "flags": [f.to_dict() for f in self.flags],
        }


@dataclass(slots=True)
class Applied:
    """What one event did: the flags it raised and the round it ended, if any."""

    flags: list[Flag] = field(default_factory=list)
    settled: RoundResult | None = None
    accepted: bool = True


# --- state -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Wager:
    player: str
    amount: Decimal
    double: Decimal = ZERO
    rescued: bool = False


@dataclass(slots=True)
class Hand:
    box: int
    wagers: list[Wager]
    cards: list[str] = field(default_factory=list)
    split: bool = False  # formed by splitting (cannot make a natural, 13.4(c))
    split_aces: bool = False
    doubled: bool = False
    aces_fixed: int = 0  # 12.2: initial aces that count 1 once doubled
    done: bool = False
    refused: bool = False  # 16.4: refused an error card, no more cards
    void: bool = False
    surrendered: bool = False
    rescue_open: bool = False

    def total(self) -> tuple[int, bool]:
        return best_total(self.cards, self.aces_fixed)

    @property
    def best(self) -> int:
        return best_total(self.cards, self.aces_fixed)[0]

    @property
    def busted(self) -> bool:
        return best_total(self.cards, self.aces_fixed)[0] > 21

    def wager_of(self, player: str) -> Wager | None:
        for w in self.wagers:
            if w.player == player:
                return w
        return None


@dataclass(slots=True)
class Box:
    number: int
    bets: dict[str, Decimal]  # player -> initial wager, in betting order
    controller: str
    hands: list[Hand] = field(default_factory=list)
    absent: bool = False
    void: bool = False
    surrendered: bool = False
    surrender_offered: bool = False
    late_surrender: bool = False  # 16.12: may still surrender until its next card
    decided: bool = False
    insurance: dict[str, Decimal] = field(default_factory=dict)
    split_open: tuple[int, int] | None = None  # (source hand, new hand) open to back-bettors


@dataclass(slots=True)
class Shoe:
    decks: int
    cut_card: int | None
    serials: frozenset[str] | None
    counts: dict[str, int] = field(default_factory=dict)
    read: set[tuple[str, str]] = field(default_factory=set)
    drawn: int = 0
    cut_out: bool = False
    recorded: bool = True  # False when cards came with no shuffle on record


@dataclass(slots=True)
class Round:
    number: int
    boxes: dict[int, Box] = field(default_factory=dict)
    phase: str = "betting"  # betting, closed, dealing, play, dealer, settled, void
    deal_queue: list[int] = field(default_factory=list)  # box numbers; 0 = the dealer
    dealer: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    insurance_offered: bool = False
    insurance_open: bool = False
    insurance_late: bool = False  # 16.11: open until the dealer's second card
    post_deal_cards: int = 0
    peek_pending: bool = False
    pending_card: str | None = None  # 16.4: exposed error card on offer
    offered_to: tuple[int, int] | None = None
    damaged: list[str] = field(default_factory=list)
    seen: dict[int, Decimal] = field(default_factory=dict)  # the camera's stable wager per box

    order: list[Box] | None = None  # fixed once the deal starts: no box joins after that

    def ordered_boxes(self) -> list[Box]:
        if self.order is not None:
            return self.order
        return [self.boxes[n] for n in sorted(self.boxes)]

    def all_hands(self) -> Iterator[Hand]:
        for box in self.ordered_boxes():
            yield from box.hands

    def hand_in_play(self) -> tuple[Box, int] | None:
        for box in self.ordered_boxes():
            for i, hand in enumerate(box.hands):
                if not hand.done:
                    return box, i
        return None


_SEAT_DECISIONS = ("stand", "hit", "double", "split")


class Table:
    """One table's rounds, from its setup line through every event it hears."""

    def __init__(self, setup: TableSetup) -> None:
        self.setup = setup
        self.rules: RuleSet = setup.rules
        self.rounds: list[RoundResult] = []
        self.current_round: Round | None = None
        self.shoe: Shoe | None = None
        self.discards: list[str] = []  # cards put in the discard rack, in order
        self.removed: list[str] = []  # foreign or impossible cards taken off the table
        self.seq = 0
        self._unassigned: list[Flag] = []  # flags raised before the first round
        self._applied: Applied = Applied()
        self._reshuffle_due = False
        self._ten_free = set(self.rules.excluded_ranks)
        self._per_deck = self.rules.cards_per_deck()
        self._handlers: dict[str, Callable[[Event], None]] = {
            kind: getattr(self, "_on_" + kind) for kind in EVENT_TYPES
        }

    # ----- public -------------------------------------------------------------------------

    def apply(self, ev: Event) -> Applied:
        """Apply one event; return the flags it raised and the round it ended, if any."""
        self.seq += 1
        self._applied = Applied()
        self._handlers[ev.type](ev)
        return self._applied

    def result(self) -> dict[str, Any]:
        """The whole replay document: every round so far, the one in progress included."""
        rounds = [r.to_dict() for r in self.rounds]
        if self.current_round is not None and self.current_round.phase not in ("settled", "void"):
            rounds.append(self._snapshot(self.current_round, "incomplete").to_dict())
        return {"game": self.setup.game, "table_id": self.setup.table_id, "rounds": rounds}

    # ----- flags --------------------------------------------------------------------------

    def _flag(self, rule: str, message: str, box: int | None = None) -> None:
        rnd = self.current_round
        number = rnd.number if rnd is not None else (self.rounds[-1].round if self.rounds else 0)
        flag = Flag(rule=rule, message=message, box=box, round=number, seq=self.seq)
        if rnd is not None:
            rnd.flags.append(flag)
        elif self.rounds:
            self.rounds[-1].flags.append(flag)  # noticed after that round
        else:
            self._unassigned.append(flag)  # belongs to the first round
        self._applied.flags.append(flag)
        self._applied.accepted = False

    def _ref(self, situation: str) -> str:
        return self.rules.ref(situation)

    # ----- rounds -------------------------------------------------------------------------

    def _open_round(self) -> Round:
        rnd = Round(number=(self.rounds[-1].round if self.rounds else 0) + 1)
        rnd.flags.extend(self._unassigned)
        self._unassigned.clear()
        self.current_round = rnd
        return rnd

    def _betting_round(self) -> Round | None:
        rnd = self.current_round
        return rnd if rnd is not None and rnd.phase in ("betting", "closed") else None

    def _live_round(self) -> Round | None:
        """The round being dealt or played (cards out), if any."""
        rnd = self.current_round
        return rnd if rnd is not None and rnd.phase in ("dealing", "play", "dealer") else None

    # ----- betting ------------------------------------------------------------------------

    def _on_bet(self, ev: Event) -> None:
        assert ev.box is not None and ev.player is not None and ev.amount is not None
        rnd = self.current_round
        if rnd is not None and rnd.phase == "dealer" and self._dealer_needs_card(rnd):
            self._flag(
                "dealer",
                f"the dealer stopped on {self._dealer_total(rnd)} against the drawing rule; "
                "the round is settled as dealt",
            )
            self._settle(rnd)
            rnd = None
        if rnd is not None and rnd.phase in ("dealing", "play", "dealer"):
            self._flag(
                self._ref("late_bet"),
                f"{ev.player} bet {money(ev.amount)} on box {ev.box} after no more bets "
                "and the first card: refused",
                ev.box,
            )
            return
        if rnd is None or rnd.phase in ("settled", "void"):
            rnd = self._open_round()
        if ev.box > self.setup.boxes:
            self._flag("limits", f"box {ev.box} does not exist at a {self.setup.boxes}-box table")
            return
        box = rnd.boxes.get(ev.box)
        if ev.amount == 0:
            if box is not None and ev.player in box.bets:
                del box.bets[ev.player]
                if not box.bets:
                    del rnd.boxes[ev.box]
                elif box.controller == ev.player:
                    box.controller = next(iter(box.bets))
            return
        if not self.setup.min_bet <= ev.amount <= self.setup.max_bet:
            self._flag(
                "limits",
                f"{ev.player}'s wager of {money(ev.amount)} on box {ev.box} is outside the "
                f"table's limits {money(self.setup.min_bet)}-{money(self.setup.max_bet)}: refused",
                ev.box,
            )
            return
        if box is None:
            box = rnd.boxes[ev.box] = Box(number=ev.box, bets={}, controller=ev.player)
        box.bets[ev.player] = ev.amount
        if ev.controls:
            box.controller = ev.player

    def _on_no_more_bets(self, ev: Event) -> None:
        rnd = self._betting_round()
        if rnd is None or rnd.phase != "betting" or not rnd.boxes:
            return
        rnd.phase = "closed"
        self._check_presence(rnd)

    def _check_presence(self, rnd: Round) -> None:
        """5.2 at "no more bets": chips with no recorded wager, a wager with no chips."""
        for number in sorted(set(rnd.seen) | set(rnd.boxes)):
            seen = rnd.seen.get(number)
            box = rnd.boxes.get(number)
            if seen is None:
                continue  # the camera has not reported this box: nothing to compare
            if box is not None and seen == 0:
                recorded = money(sum(box.bets.values(), ZERO))
                self._flag(
                    self._ref("camera_presence"),
                    f"box {number} has a recorded wager of {recorded} but the camera sees no chips",
                    number,
                )
            elif box is None and seen > 0:
                self._flag(
                    self._ref("camera_presence"),
                    f"the camera sees {money(seen)} in box {number}, which has no recorded wager",
                    number,
                )

    def _on_wager_seen(self, ev: Event) -> None:
        assert ev.box is not None and ev.amount is not None
        rnd = self.current_round
        if rnd is None or rnd.phase in ("settled", "void"):
            return  # between rounds the layout is the players' own
        before = rnd.seen.get(ev.box)
        rnd.seen[ev.box] = ev.amount
        if rnd.phase == "betting":
            return
        if ev.box not in rnd.boxes and ev.amount == 0:
            return  # stray chips taken back from a box nobody bet on: no wager changed
        if (before if before is not None else ZERO) != ev.amount:
            self._flag(
                self._ref("camera_change"),
                f"the wager in box {ev.box} changed from {money(before or ZERO)} to "
                f"{money(ev.amount)} after no more bets",
                ev.box,
            )

    # ----- the shoe -----------------------------------------------------------------------

    def _on_shuffle(self, ev: Event) -> None:
        assert ev.decks is not None
        if self._live_round() is not None:
            self._flag("shoe", "a new shoe was loaded in the middle of a round")
        if ev.decks != self.rules.decks:
            self._flag(
                "shoe",
                f"the shoe was loaded with {ev.decks} decks; the table's rule set says "
                f"{self.rules.decks}",
            )
        self.shoe = Shoe(
            decks=ev.decks,
            cut_card=ev.cut_card,
            serials=frozenset(ev.deck_serials) if ev.deck_serials is not None else None,
        )
        self._reshuffle_due = False

    def _on_cut_card(self, ev: Event) -> None:
        if self.shoe is None:
            self._flag("shoe", "a cutting card came out of a shoe with no load on record")
            self.shoe = self._unrecorded_shoe()
        self.shoe.cut_out = True

    def _on_reshuffle_discards(self, ev: Event) -> None:
        rnd = self.current_round
        on_table: list[str] = []
        if rnd is not None and rnd.phase not in ("settled", "void"):
            on_table = list(rnd.dealer)
            for hand in rnd.all_hands():
                on_table.extend(hand.cards)
        self._flag(
            "16.7",
            "the shoe ran short: the discards were shuffled, cut and loaded to complete the round",
        )
        decks = self.shoe.decks if self.shoe is not None else self.rules.decks
        serials = self.shoe.serials if self.shoe is not None else None
        self.shoe = Shoe(decks=decks, cut_card=ev.cut_card, serials=serials)
        for card in on_table:
            self.shoe.counts[card] = self.shoe.counts.get(card, 0) + 1

    def _unrecorded_shoe(self) -> Shoe:
        return Shoe(decks=self.rules.decks, cut_card=None, serials=None, recorded=False)

    def _admit(self, ev: Event) -> bool:
        """The shoe's checks on a card read: is it a card this shoe can hold?"""
        card = ev.card
        assert card is not None
        if self.shoe is None:
            self._flag("shoe", "cards are being read with no shoe load on record")
            self.shoe = self._unrecorded_shoe()
        shoe = self.shoe
        shoe.drawn += 1
        if card[0] in self._ten_free:
            self._flag(
                self._ref("foreign_card"),
                f"{card} read from the shoe: this game's decks hold no tens; removed from play",
            )
            self.removed.append(card)
            return False
        if shoe.serials is not None and ev.deck is not None:
            if ev.deck not in shoe.serials:
                self._flag(
                    "shoe",
                    f"{card} of deck {ev.deck}, which was not loaded into this shoe: "
                    "removed from play",
                )
                self.removed.append(card)
                return False
            if (ev.deck, card) in shoe.read:
                self._flag(
                    "shoe",
                    f"{card} of deck {ev.deck} was read a second time from this shoe: "
                    "removed from play",
                )
                self.removed.append(card)
                return False
            shoe.read.add((ev.deck, card))
        seen = shoe.counts.get(card, 0)
        if seen >= shoe.decks:
            self._flag(
                "shoe",
                f"{card} read more often than the {shoe.decks} decks in this shoe hold it: "
                "removed from play",
            )
            self.removed.append(card)
            return False
        shoe.counts[card] = seen + 1
        return True

    def _on_misread(self, ev: Event) -> None:
        self._flag(
            "shoe",
            f"the shoe reader could not read a card ({ev.raw!r}): enter or correct it by hand",
        )

    # ----- cards --------------------------------------------------------------------------

    def _on_card(self, ev: Event) -> None:
        card = ev.card
        assert card is not None
        rnd = self.current_round
        if not self._admit(ev):
            return
        if ev.face_up:
            self._flag("16.1", f"{card} found face up in the shoe: removed to the discard rack")
            self.discards.append(card)
            if rnd is not None and rnd.phase in ("play", "dealer"):
                self._after_post_deal_card(rnd)
            return
        if rnd is None or rnd.phase in ("settled", "void", "betting") or not rnd.boxes:
            self._card_not_due(card)
            return
        if rnd.phase == "closed":
            self._start_deal(rnd)
        if ev.damaged:
            self._flag("16.8", f"{card} is damaged: replace it at the end of the round")
            rnd.damaged.append(card)
        if ev.in_error == "unexposed":
            self._flag("16.2", f"{card} drawn in error, face not exposed: used as the next card")
        if rnd.phase == "dealing":
            if ev.in_error == "exposed":
                self._flag(
                    "16.4",
                    f"{card} drawn in error and exposed during the initial deal: dealt as though "
                    "it were the next card",
                )
            self._deal_initial(rnd, card)
            return
        # After the initial deal.
        if rnd.pending_card is not None:
            self._accept_pending(rnd)
            if rnd.phase in ("settled", "void"):
                self._card_not_due(card)
                return
        if rnd.peek_pending:
            self._peek(rnd)
            if rnd.phase == "settled":
                self._card_not_due(card)
                return
        self._after_post_deal_card(rnd)
        if ev.in_error == "exposed" and rnd.phase == "play":
            target = rnd.hand_in_play()
            assert target is not None
            box, idx = target
            self._flag("16.4", f"{card} drawn in error and exposed: offered in turn", box.number)
            rnd.pending_card = card
            rnd.offered_to = (box.number, idx)
            self._settle_offer(rnd)
            return
        if rnd.phase == "play":
            target = rnd.hand_in_play()
            assert target is not None
            self._deal_to_hand(rnd, target[0], target[1], card)
        elif rnd.phase == "dealer":
            if self._dealer_needs_card(rnd):
                self._deal_to_dealer(rnd, card)
            else:
                self._card_not_due(card)
        self._advance(rnd)

    def _card_not_due(self, card: str) -> None:
        """16.3: an exposed card nobody is due (the dealer's hand complete, or between rounds)."""
        self._flag(
            "16.3",
            f"{card} came out when no hand was due a card: removed face down to the discard rack",
        )
        self.discards.append(card)

    def _after_post_deal_card(self, rnd: Round) -> None:
        """Every card out of the shoe after the initial deal closes some windows."""
        rnd.post_deal_cards += 1
        no_hole = self.rules.hole_card == "none"
        if rnd.post_deal_cards == 1 and no_hole and self._insurance_due(rnd):
            if not rnd.insurance_offered:
                self._flag("16.11", "dealer's first card is an ace and insurance was not offered")
                rnd.insurance_late = True
            rnd.insurance_open = rnd.insurance_late
        for box in rnd.boxes.values():
            if box.split_open is not None:
                box.split_open = None
            for hand in box.hands:
                hand.rescue_open = False

    def _start_deal(self, rnd: Round) -> None:
        shoe = self.shoe
        if shoe is not None and shoe.cut_out:
            self._flag("16.9", "round dealt after the cutting card came out without a reshuffle")
            self._reshuffle_due = True
        if shoe is not None and shoe.cut_card is None and shoe.recorded:
            self._flag(
                "16.10",
                "this shoe was loaded with no cutting card: reshuffle at the end of the round",
            )
            self._reshuffle_due = True
        rnd.phase = "dealing"
        rnd.order = [rnd.boxes[n] for n in sorted(rnd.boxes)]
        for box in rnd.ordered_boxes():
            box.hands = [Hand(box=box.number, wagers=[Wager(p, a) for p, a in box.bets.items()])]
        order = [b.number for b in rnd.ordered_boxes()]
        rnd.deal_queue = [*order, 0, *order]
        if self.rules.hole_card == "peek":
            rnd.deal_queue.append(0)

    def _deal_initial(self, rnd: Round, card: str) -> None:
        while rnd.deal_queue and rnd.deal_queue[0] and rnd.boxes[rnd.deal_queue[0]].void:
            rnd.deal_queue.pop(0)
        target = rnd.deal_queue.pop(0)
        if target == 0:
            rnd.dealer.append(card)
        else:
            rnd.boxes[target].hands[0].cards.append(card)
        while rnd.deal_queue and rnd.deal_queue[0] and rnd.boxes[rnd.deal_queue[0]].void:
            rnd.deal_queue.pop(0)
        if not rnd.deal_queue:
            self._end_initial_deal(rnd)

    def _end_initial_deal(self, rnd: Round) -> None:
        rnd.phase = "play"
        for hand in rnd.all_hands():
            if self._is_natural(hand) or hand.best >= 21:
                hand.done = True
        ace_up = self._dealer_ace_up(rnd)
        rnd.insurance_open = self.rules.insurance and ace_up
        if self.rules.hole_card == "peek":
            up_ten = bool(rnd.dealer) and rnd.dealer[0][0] in TEN_VALUES
            if up_ten:
                self._peek(rnd)
                return
            if ace_up:
                rnd.peek_pending = True
                return
        self._advance(rnd)

    def _peek(self, rnd: Round) -> None:
        """Hole-card games: the dealer checks for a natural; one ends the round at once."""
        rnd.peek_pending = False
        rnd.insurance_open = False
        if self._insurance_due(rnd) and not rnd.insurance_offered:
            self._flag("16.11", "insurance was not offered before the hole card was checked")
        if self._dealer_natural(rnd):
            for hand in rnd.all_hands():
                hand.done = True
            self._settle(rnd)
        else:
            self._advance(rnd)

    def _on_peek(self, ev: Event) -> None:
        rnd = self.current_round
        if rnd is None or not rnd.peek_pending:
            self._flag("turn", "peek: the dealer's hole card is not waiting to be checked")
            return
        self._peek(rnd)

    def _deal_to_hand(self, rnd: Round, box: Box, idx: int, card: str) -> None:
        hand = box.hands[idx]
        if not box.decided and len(hand.cards) == 2 and not hand.split:
            self._first_decision(rnd, box)
        box.late_surrender = False  # its next card closes the 16.12 window
        hand.cards.append(card)
        total = hand.best
        if hand.doubled:
            hand.done = True
            hand.rescue_open = self.rules.rescue and total <= 21
        else:
            hand.done = (
                total >= 21
                or hand.refused
                or (
                    hand.split_aces
                    and self.rules.split_aces_one_card
                    and not self._may_resplit(box, hand)
                )
                or (box.absent and total >= self.rules.absent_draw_to)
            )

    def _may_resplit(self, box: Box, hand: Hand) -> bool:
        """A split ace that drew another ace may split again where the rules allow it."""
        return (
            self.rules.resplit_aces
            and len(hand.cards) == 2
            and hand.cards[1][0] == "A"
            and len(box.hands) < self.rules.max_hands
        )

    def _deal_to_dealer(self, rnd: Round, card: str) -> None:
        rnd.dealer.append(card)
        if len(rnd.dealer) == 2:
            rnd.insurance_open = False
            for box in rnd.boxes.values():
                box.late_surrender = False

    def _advance(self, rnd: Round) -> None:
        """Move play on past finished hands; to the dealer; settle when nothing is due."""
        if rnd.phase == "play":
            while True:
                target = rnd.hand_in_play()
                if target is None:
                    rnd.phase = "dealer"
                    break
                box, idx = target
                hand = box.hands[idx]
                if box.void or box.surrendered:
                    hand.done = True
                    continue
                if box.absent and len(hand.cards) >= 2 and hand.best >= self.rules.absent_draw_to:
                    hand.done = True
                    continue
                break
        if rnd.phase == "dealer" and not self._dealer_needs_card(rnd):
            self._settle(rnd)

    # ----- the dealer ---------------------------------------------------------------------

    def _insurable(self, rnd: Round) -> list[Box]:
        """The boxes whose players may insure (10.1, 10.2): dealt, not void, not a natural."""
        return [
            b
            for b in rnd.ordered_boxes()
            if b.hands and not b.void and not self._is_natural(b.hands[0])
        ]

    def _insurance_due(self, rnd: Round) -> bool:
        """Insurance is to be offered: the dealer's first card is an ace and someone may insure."""
        return self.rules.insurance and self._dealer_ace_up(rnd) and bool(self._insurable(rnd))

    def _dealer_total(self, rnd: Round) -> int:
        return best_total(rnd.dealer)[0]

    def _dealer_ace_up(self, rnd: Round) -> bool:
        return bool(rnd.dealer) and rnd.dealer[0][0] == "A"

    def _dealer_natural(self, rnd: Round) -> bool:
        return payouts.is_natural(rnd.dealer, False)

    def _is_natural(self, hand: Hand) -> bool:
        return payouts.is_natural(hand.cards, hand.split)

    def _depends_on_dealer(self, hand: Hand) -> bool:
        if hand.void or hand.surrendered or hand.busted:
            return False
        if all(w.rescued for w in hand.wagers):
            return False
        if self._is_natural(hand):
            return False
        return not (hand.best == 21 and self.rules.player_21_beats_dealer_21)

    def _dealer_needs_card(self, rnd: Round) -> bool:
        live = [h for h in rnd.all_hands() if not h.void]
        if not live:
            return False
        if len(rnd.dealer) < 2:
            return True
        if self._dealer_natural(rnd):
            return False
        if not any(self._depends_on_dealer(h) for h in live):
            return False
        total, soft = best_total(rnd.dealer)
        return total < 17 or (total == 17 and soft and self.rules.dealer_hits_soft_17)

    # ----- decisions ----------------------------------------------------------------------

    def _in_play(self, ev: Event, action: str) -> tuple[Round, Box, int] | None:
        """The round, box and hand an in-turn decision applies to; flags it otherwise."""
        rnd = self.current_round
        if rnd is not None and rnd.peek_pending:
            self._peek(rnd)  # the first decision closes insurance: the dealer checks the hole card
            rnd = self.current_round
        if rnd is None or rnd.phase != "play":
            phase = "no round is in play" if rnd is None else f"the round is in {rnd.phase}"
            self._flag("turn", f"{action} for box {ev.box}: {phase}: ignored", ev.box)
            return None
        target = rnd.hand_in_play()
        assert target is not None
        box, idx = target
        if box.number != ev.box:
            self._flag(
                "turn",
                f"{action} for box {ev.box}, but box {box.number} is in play: ignored",
                ev.box,
            )
            return None
        return rnd, box, idx

    def _first_decision(self, rnd: Round, box: Box) -> None:
        """16.12: a box that could surrender decides without having been offered it."""
        box.decided = True
        if self._can_surrender(box) and not box.surrender_offered:
            self._flag("16.12", f"box {box.number} was not offered surrender", box.number)
            box.late_surrender = True

    def _can_surrender(self, box: Box) -> bool:
        if not self.rules.surrender or box.absent or box.void or box.surrendered:
            return False
        if len(box.hands) != 1:
            return False
        hand = box.hands[0]
        return len(hand.cards) == 2 and not self._is_natural(hand) and hand.best < 21

    def _on_stand(self, ev: Event) -> None:
        found = self._in_play(ev, "stand")
        if found is None:
            return
        rnd, box, idx = found
        hand = box.hands[idx]
        if len(hand.cards) < 2:
            self._flag(
                self._ref("split_order"),
                f"box {box.number} hand {idx} has one card: it must take its second card first",
                box.number,
            )
            return
        if hand.doubled:
            self._flag(
                self._ref("double_card"),
                f"box {box.number} doubled: it takes exactly one more card",
                box.number,
            )
            return
        if not box.decided and not hand.split:
            self._first_decision(rnd, box)
        hand.done = True
        if rnd.offered_to == (box.number, idx):
            self._pass_offer(rnd)
        self._advance(rnd)

    def _on_hit(self, ev: Event) -> None:
        found = self._in_play(ev, "hit")
        if found is None:
            return
        rnd, box, idx = found
        if rnd.offered_to == (box.number, idx):
            self._accept_pending(rnd)

    def _on_double(self, ev: Event) -> None:
        assert ev.player is not None and ev.amount is not None
        found = self._in_play(ev, "double")
        if found is None:
            return
        rnd, box, idx = found
        hand = box.hands[idx]
        wager = hand.wager_of(ev.player)
        if ev.player != box.controller:
            self._back_bettor_double(box, hand, idx, wager, ev)
            return
        assert wager is not None
        if hand.doubled:
            self._flag(
                self._ref("double_card"),
                f"box {box.number} has already doubled: no second double",
                box.number,
            )
            return
        why = self._double_refusal(hand)
        if why:
            self._flag(self._ref("double"), why, box.number)
            return
        why = self._double_amount_refusal(wager, ev.amount)
        if why:
            self._flag(self._ref("double_amount"), why, box.number)
            return
        if not box.decided and not hand.split:
            self._first_decision(rnd, box)
        hand.doubled = True
        wager.double = ev.amount
        if self.rules.double_aces_count_one:
            hand.aces_fixed = sum(1 for c in hand.cards[:2] if c[0] == "A")
        if rnd.offered_to == (box.number, idx):
            self._accept_pending(rnd)

    def _back_bettor_double(
        self, box: Box, hand: Hand, idx: int, wager: Wager | None, ev: Event
    ) -> None:
        assert ev.amount is not None
        if wager is None:
            self._flag(
                self._ref("back_bettor"),
                f"{ev.player} has no wager on box {box.number} hand {idx}: double refused",
                box.number,
            )
        elif not hand.doubled:  # the hand in play waits for its double card: in line
            self._flag(
                self._ref("back_bettor"),
                f"{ev.player} doubled on box {box.number}, where the controller "
                f"{box.controller} has not: refused",
                box.number,
            )
        elif wager.double > 0:
            self._flag(
                self._ref("double_card"),
                f"{ev.player} has already doubled on box {box.number}",
                box.number,
            )
        else:
            why = self._double_amount_refusal(wager, ev.amount)
            if why:
                self._flag(self._ref("double_amount"), why, box.number)
            else:
                wager.double = ev.amount

    def _double_refusal(self, hand: Hand) -> str:
        r = self.rules
        n = len(hand.cards)
        where = f"box {hand.box}"
        if n < 2:
            return f"{where}: a hand of one card cannot double"
        if hand.split_aces and not r.double_split_aces:
            return f"{where}: split aces may not double"
        if n == 2:
            if hand.split and not r.double_after_split:
                return f"{where}: no doubling after a split in this game"
            if r.double_first_two == "never":
                return f"{where}: this game has no doubling on two cards"
            if r.double_no_aces and any(c[0] == "A" for c in hand.cards):
                return f"{where}: double down only on 9, 10 or 11 without an ace"
            if r.double_first_two == "totals":
                hard = VALUE[hand.cards[0]] + VALUE[hand.cards[1]]
                soft = best_total(hand.cards)[0]
                if hard not in r.double_totals and soft not in r.double_totals:
                    totals = ", ".join(str(t) for t in r.double_totals)
                    return f"{where}: double down only on a total of {totals}"
            return ""
        if not r.double_later_under_21:
            return f"{where}: doubling only on the first two cards"
        if hand.best >= 21:
            return f"{where}: doubling after a third card only on a total under 21"
        return ""

    def _double_amount_refusal(self, wager: Wager, amount: Decimal) -> str:
        r = self.rules
        if r.double_amount == "equal":
            if amount != wager.amount:
                return (
                    f"{wager.player}'s double of {money(amount)} must equal the original "
                    f"wager of {money(wager.amount)}"
                )
            return ""
        if amount > wager.amount:
            return (
                f"{wager.player}'s double of {money(amount)} is more than the original wager "
                f"of {money(wager.amount)}"
            )
        if amount < r.min_increment:
            return (
                f"{wager.player}'s double of {money(amount)} is less than the table's "
                f"increment of {money(r.min_increment)}"
            )
        return ""

    def _pair(self, hand: Hand) -> bool:
        a, b = hand.cards
        if self.rules.split_pairs == "same_rank_pictures" and (
            a[0] in PICTURES or b[0] in PICTURES
        ):
            return a[0] == b[0]
        return VALUE[a] == VALUE[b]

    def _on_split(self, ev: Event) -> None:
        found = self._in_play(ev, "split")
        if found is None:
            return
        rnd, box, idx = found
        if ev.player is not None and ev.player != box.controller:
            self._back_bettor_split(box, idx, ev.player)
            return
        hand = box.hands[idx]
        where = f"box {box.number}"
        if hand.split_aces and not self.rules.resplit_aces:
            self._flag(
                self._ref("split_limit"), f"{where}: aces may be split only once", box.number
            )
            return
        if len(hand.cards) != 2 or hand.doubled:
            self._flag(
                self._ref("split"), f"{where}: only a hand of two cards may split", box.number
            )
            return
        if not self._pair(hand):
            a, b = hand.cards
            if self.rules.split_pairs == "same_rank_pictures" and VALUE[a] == VALUE[b]:
                msg = f"{where}: {a} and {b} are different picture cards and may not be split"
                if {a[0], b[0]} == {"J", "Q"}:
                    msg = f"{where}: a jack and a queen may not be split"
            else:
                msg = f"{where}: {a} and {b} are not a pair"
            self._flag(self._ref("split"), msg, box.number)
            return
        if len(box.hands) >= self.rules.max_hands:
            self._flag(
                self._ref("split_limit"),
                f"{where}: no more than {self.rules.max_hands} hands per box",
                box.number,
            )
            return
        if not box.decided and not hand.split:
            self._first_decision(rnd, box)
        aces = hand.cards[0][0] == "A"
        controller = hand.wager_of(box.controller)
        assert controller is not None
        new = Hand(
            box=box.number,
            wagers=[Wager(box.controller, controller.amount)],
            cards=[hand.cards.pop()],
            split=True,
            split_aces=aces,
        )
        hand.split = True
        hand.split_aces = aces
        box.hands.insert(idx + 1, new)
        box.split_open = (idx, idx + 1)
        if rnd.offered_to == (box.number, idx):
            self._accept_pending(rnd)

    def _back_bettor_split(self, box: Box, idx: int, player: str) -> None:
        if box.split_open is None:
            self._flag(
                self._ref("back_bettor"),
                f"{player} split on box {box.number}, where the controller {box.controller} "
                "has not: refused",
                box.number,
            )
            return
        source, new = box.split_open
        wager = box.hands[source].wager_of(player)
        if wager is None or box.hands[new].wager_of(player) is not None:
            self._flag(
                self._ref("back_bettor"),
                f"{player} has no wager on box {box.number} hand {source} to follow the split",
                box.number,
            )
            return
        box.hands[new].wagers.append(Wager(player, wager.amount))

    def _on_offer_surrender(self, ev: Event) -> None:
        assert ev.box is not None
        if not self.rules.surrender:
            self._flag(self._ref("surrender"), "this game has no surrender", ev.box)
            return
        rnd = self.current_round
        if rnd is None or ev.box not in rnd.boxes:
            self._flag("turn", f"surrender offered to box {ev.box}, which is not in play", ev.box)
            return
        rnd.boxes[ev.box].surrender_offered = True

    def _on_surrender(self, ev: Event) -> None:
        assert ev.box is not None
        rnd = self.current_round
        box = rnd.boxes.get(ev.box) if rnd is not None else None
        if rnd is None or box is None or rnd.phase not in ("play", "dealer"):
            self._flag("turn", f"surrender for box {ev.box}: no hand of it is in play", ev.box)
            return
        if not self.rules.surrender:
            self._flag(self._ref("surrender"), "this game has no surrender", ev.box)
            return
        target = rnd.hand_in_play()
        in_turn = target is not None and target[0] is box
        hand = box.hands[0]
        # The doubled-but-not-dealt case: the 16.12 window is open until its next card.
        undoubled_two = len(hand.cards) == 2 and len(box.hands) == 1
        if not undoubled_two or not (in_turn or box.late_surrender) or self._is_natural(hand):
            self._flag(
                self._ref("surrender"),
                f"box {ev.box} may surrender only on its first two cards, before it draws",
                ev.box,
            )
            return
        if not self._can_surrender(box):
            self._flag(self._ref("surrender"), f"box {ev.box} may not surrender", ev.box)
            return
        if hand.doubled:
            hand.doubled = False
            hand.aces_fixed = 0
            for w in hand.wagers:
                w.double = ZERO
        box.surrendered = True
        hand.surrendered = True
        hand.done = True
        box.decided = True
        box.late_surrender = False
        if rnd.offered_to == (box.number, 0):
            self._pass_offer(rnd)
        self._advance(rnd)

    def _on_rescue(self, ev: Event) -> None:
        assert ev.box is not None and ev.player is not None
        if not self.rules.rescue:
            self._flag(self._ref("rescue"), "this game has no rescue of a doubled wager", ev.box)
            return
        rnd = self.current_round
        box = rnd.boxes.get(ev.box) if rnd is not None else None
        hand = next((h for h in box.hands if h.rescue_open), None) if box is not None else None
        if hand is None:
            self._flag(
                self._ref("rescue"),
                f"rescue on box {ev.box}: no doubled hand has just taken its card (21 or under, "
                "no further card drawn)",
                ev.box,
            )
            return
        wager = hand.wager_of(ev.player)
        if wager is None or wager.double == 0 or wager.rescued:
            self._flag(
                self._ref("rescue"),
                f"rescue on box {ev.box}: {ev.player} has no doubled wager to withdraw",
                ev.box,
            )
            return
        wager.rescued = True
        assert rnd is not None
        self._advance(rnd)

    def _on_insurance(self, ev: Event) -> None:
        assert ev.box is not None and ev.player is not None and ev.amount is not None
        rnd = self.current_round
        box = rnd.boxes.get(ev.box) if rnd is not None else None
        if not self.rules.insurance:
            self._flag(self._ref("insurance_not_due"), "this game has no insurance", ev.box)
            return
        if rnd is None:
            self._flag(
                self._ref("insurance_window"),
                f"insurance from {ev.player} on box {ev.box}: no round is in play",
                ev.box,
            )
            return
        if box is None or ev.player not in box.bets:
            self._flag(
                self._ref("insurance_not_due"),
                f"insurance from {ev.player} on box {ev.box}, where they have no initial wager",
                ev.box,
            )
            return
        if rnd.phase in ("betting", "closed", "dealing"):
            self._flag(
                self._ref("insurance_window"),
                "insurance is taken after the initial deal is complete",
                ev.box,
            )
            return
        if not self._dealer_ace_up(rnd):
            self._flag(
                self._ref("insurance_not_due"),
                "insurance only when the dealer's first card is an ace",
                ev.box,
            )
            return
        if not rnd.insurance_open:
            self._flag(
                self._ref("insurance_window"),
                f"insurance from {ev.player} on box {ev.box} after play had begun: refused",
                ev.box,
            )
            return
        if self._is_natural(box.hands[0]):
            self._flag(
                self._ref("insurance_natural"),
                f"box {ev.box} holds {self.rules.natural_name} and may not insure",
                ev.box,
            )
            return
        if ev.player in box.insurance:
            self._flag("5.6", f"{ev.player}'s insurance on box {ev.box} is already placed", ev.box)
            return
        limit = box.bets[ev.player] * self.rules.insurance_max_fraction
        if ev.amount > limit:
            self._flag(
                self._ref("insurance_amount"),
                f"{ev.player}'s insurance of {money(ev.amount)} is more than half the wager "
                f"({money(limit)})",
                ev.box,
            )
            return
        if ev.amount > 0:
            box.insurance[ev.player] = ev.amount

    def _on_offer_insurance(self, ev: Event) -> None:
        rnd = self.current_round
        if rnd is None or not self.rules.insurance or not self._dealer_ace_up(rnd):
            self._flag(
                self._ref("insurance_not_due"),
                "insurance announced, but the dealer's first card is not an ace",
            )
            return
        rnd.insurance_offered = True

    def _on_absent(self, ev: Event) -> None:
        assert ev.box is not None
        rnd = self.current_round
        box = rnd.boxes.get(ev.box) if rnd is not None else None
        if rnd is None or box is None or rnd.phase in ("settled", "void"):
            self._flag("turn", f"box {ev.box} has no wager in this round", ev.box)
            return
        self._flag(
            "16.6",
            f"the player of box {ev.box} is absent: the hand is drawn to "
            f"{self.rules.absent_draw_to} or more",
            ev.box,
        )
        box.absent = True
        box.decided = True
        if rnd.phase == "play":
            if rnd.offered_to is not None and rnd.offered_to[0] == box.number:
                self._accept_pending(rnd)
            self._advance(rnd)

    # ----- 16.4: the exposed error card on offer -----------------------------------------

    def _on_refuse(self, ev: Event) -> None:
        rnd = self.current_round
        if rnd is None or rnd.pending_card is None or rnd.offered_to is None:
            self._flag("16.4", f"box {ev.box} refused a card, but none is on offer", ev.box)
            return
        if rnd.offered_to[0] != ev.box:
            self._flag(
                "turn",
                f"box {ev.box} refused, but the card is offered to box {rnd.offered_to[0]}",
                ev.box,
            )
            return
        box = rnd.boxes[ev.box]
        hand = box.hands[rnd.offered_to[1]]
        if not box.decided and not hand.split:
            box.decided = True
            box.late_surrender = False
        hand.refused = True
        hand.done = True
        self._pass_offer(rnd)

    def _pass_offer(self, rnd: Round) -> None:
        """The card on offer goes on to the next hand in turn, or else to the dealer."""
        rnd.offered_to = None
        self._advance(rnd)
        self._settle_offer(rnd)

    def _settle_offer(self, rnd: Round) -> None:
        if rnd.pending_card is None:
            return
        target = rnd.hand_in_play() if rnd.phase == "play" else None
        if target is not None:
            box, idx = target
            rnd.offered_to = (box.number, idx)
            if box.absent:
                self._accept_pending(rnd)  # nobody on the box can refuse it
            return
        card = rnd.pending_card
        rnd.pending_card = None
        rnd.offered_to = None
        if rnd.phase == "dealer" and self._dealer_needs_card(rnd):
            self._deal_to_dealer(rnd, card)
            self._advance(rnd)
        else:
            self._flag("16.3", f"{card} was on offer when no hand was due a card: discarded")
            self.discards.append(card)

    def _accept_pending(self, rnd: Round) -> None:
        card, target = rnd.pending_card, rnd.offered_to
        if card is None or target is None:
            return
        rnd.pending_card = None
        rnd.offered_to = None
        box = rnd.boxes[target[0]]
        self._deal_to_hand(rnd, box, target[1], card)
        self._advance(rnd)

    # ----- 16.5: void ---------------------------------------------------------------------

    def _on_void(self, ev: Event) -> None:
        rnd = self.current_round
        if rnd is None or rnd.phase in ("settled", "void"):
            self._flag("16.5", "void: no round is in progress", ev.box)
            return
        if ev.box is None:
            self._flag(
                "16.5",
                "the round is void: its cards go to the discard rack and every wager is returned",
            )
            for each in rnd.boxes.values():
                each.void = True
                for hand in each.hands:
                    hand.void = True
                    hand.done = True
            self._finish(rnd, "void")
            return
        box = rnd.boxes.get(ev.box)
        if box is None:
            self._flag("16.5", f"void box {ev.box}: it has no wager in this round", ev.box)
            return
        self._flag(
            "16.5",
            f"box {ev.box}'s hands are void: their cards go to the discard rack, wagers and "
            "insurance are returned",
            ev.box,
        )
        box.void = True
        for hand in box.hands:
            hand.void = True
            hand.done = True
        if all(b.void for b in rnd.boxes.values()):
            self._finish(rnd, "void")
            return
        if rnd.offered_to is not None and rnd.offered_to[0] == ev.box:
            self._pass_offer(rnd)
        if rnd.phase == "play":
            self._advance(rnd)

    # ----- settlement ---------------------------------------------------------------------

    def _outcome(self, rnd: Round, hand: Hand) -> str:
        if hand.void:
            return "void"
        if hand.surrendered:
            return "surrender"
        if hand.busted:
            return "lose"
        return payouts.outcome(
            self.rules,
            hand.best,
            self._is_natural(hand),
            self._dealer_total(rnd),
            self._dealer_natural(rnd),
        )

    def _returned(self, rnd: Round, hand: Hand, result: str, w: Wager) -> Decimal:
        """What a wager (with its double) returns."""
        return payouts.returned(
            self.rules,
            result,
            w.amount,
            w.double,
            rescued=w.rescued,
            ratio=payouts.odds(self.rules, hand.cards, hand.best, self._is_natural(hand)),
            dealer_natural=self._dealer_natural(rnd),
            busted=hand.busted,
            added_by_split=hand.split and hand is not rnd.boxes[hand.box].hands[0],
        )

    def _settle(self, rnd: Round) -> None:
        self._finish(rnd, "settled")

    def _finish(self, rnd: Round, status: str) -> None:
        rnd.phase = status
        result = self._snapshot(rnd, status)
        if status == "settled":
            self._check_seen_wagers(rnd)
        result.flags = rnd.flags
        for hand in rnd.all_hands():
            self.discards.extend(hand.cards)
        self.discards.extend(rnd.dealer)
        if rnd.pending_card is not None:
            self.discards.append(rnd.pending_card)
            rnd.pending_card = None
        self.rounds.append(result)
        self.current_round = None
        self._applied.settled = result

    def _check_seen_wagers(self, rnd: Round) -> None:
        for number, box in sorted(rnd.boxes.items()):
            seen = rnd.seen.get(number)
            if seen is None or box.void:
                continue
            staked = sum(box.bets.values(), ZERO)
            if seen != staked:
                self._flag(
                    self._ref("camera_change"),
                    f"box {number} settled on wagers of {money(staked)} but the camera saw "
                    f"{money(seen)}",
                    number,
                )

    def _snapshot(self, rnd: Round, status: str) -> RoundResult:
        hands: list[dict[str, Any]] = []
        settlements: list[Settlement] = []
        final = status in ("settled", "void")
        outcomes: dict[int, str | None] = {}
        for box in rnd.ordered_boxes():
            for i, hand in enumerate(box.hands):
                outcome: str | None
                if status == "void":
                    outcome = "void"
                elif final:
                    outcome = self._outcome(rnd, hand)
                else:
                    outcome = "void" if hand.void else "lose" if hand.busted else None
                outcomes[id(hand)] = outcome
                hands.append(
                    {
                        "box": box.number,
                        "hand": i,
                        "cards": list(hand.cards),
                        "total": hand.best,
                        "doubled": hand.doubled,
                        "outcome": outcome,
                    }
                )
        if final:
            settlements = self._settlements(rnd, outcomes)
        return RoundResult(
            round=rnd.number,
            status=status,
            dealer=list(rnd.dealer),
            dealer_total=self._dealer_total(rnd) if rnd.dealer else 0,
            hands=hands,
            settlements=settlements,
            flags=list(rnd.flags),
        )

    def _settlements(self, rnd: Round, outcomes: dict[int, str | None]) -> list[Settlement]:
        super_winners: set[tuple[str, int]] = set()
        rows: dict[tuple[int, str], list[Settlement]] = {}
        for box in rnd.ordered_boxes():
            if not box.hands:  # voided before the deal: the bets go back
                for player, amount in box.bets.items():
                    rows[(box.number, player)] = [
                        Settlement(player, box.number, 0, "hand", amount, amount)
                    ]
                continue
            for i, hand in enumerate(box.hands):
                outcome = outcomes[id(hand)] or "void"
                for w in hand.wagers:
                    returned = self._returned(rnd, hand, outcome, w)
                    out = rows.setdefault((box.number, w.player), [])
                    out.append(
                        Settlement(w.player, box.number, i, "hand", w.amount + w.double, returned)
                    )
            for player, amount in box.insurance.items():
                if box.void or outcomes.get(id(box.hands[0])) == "void":
                    back = amount
                elif len(rnd.dealer) >= 2 and rnd.dealer[1][0] in TEN_VALUES:
                    back = amount + amount * self.rules.insurance_ratio
                else:
                    back = ZERO
                rows.setdefault((box.number, player), []).append(
                    Settlement(player, box.number, 0, "insurance", amount, back)
                )
            for i, hand in enumerate(box.hands):
                if outcomes[id(hand)] == "void":
                    continue
                dealer_first = rnd.dealer[0] if rnd.dealer else None
                for w in hand.wagers:
                    bonus = payouts.super_bonus(
                        self.rules, hand.cards, dealer_first, w.amount, w.double > 0
                    )
                    if bonus:
                        super_winners.add((w.player, box.number))
                        rows[(box.number, w.player)].append(
                            Settlement(w.player, box.number, i, "super_bonus", ZERO, bonus)
                        )
        if super_winners and self.rules.bonus_50 > 0:
            for box in rnd.ordered_boxes():
                for player in box.bets:
                    if (player, box.number) in super_winners or box.void:
                        continue
                    first = next(
                        (i for i, h in enumerate(box.hands) if h.wager_of(player) is not None), 0
                    )
                    rows.setdefault((box.number, player), []).append(
                        Settlement(player, box.number, first, "bonus_50", ZERO, self.rules.bonus_50)
                    )
        ordered: list[Settlement] = []
        for box in rnd.ordered_boxes():
            for player in box.bets:
                ordered.extend(rows.get((box.number, player), []))
        return ordered

    # ----- what is due next ---------------------------------------------------------------

    def due(self) -> Due:
        """What the dealer must do next, and exactly which decisions are open to whom."""
        rnd = self.current_round
        due = Due(phase="idle", round=rnd.number if rnd else len(self.rounds) + 1)
        shoe = self.shoe
        remaining = shoe.decks * self._per_deck - shoe.drawn if shoe is not None else 0
        if shoe is None:
            due.prompts.append("load a shoe: shuffle and record the decks and the cutting card")
        else:
            due.shoe = {
                "decks": shoe.decks,
                "drawn": shoe.drawn,
                "remaining": max(0, remaining),
                "cut_card": shoe.cut_card,
                "cut_out": shoe.cut_out,
            }
        reshuffle = shoe is not None and (shoe.cut_out or self._reshuffle_due)
        if rnd is None:
            due.prompts.append("shuffle before the next round" if reshuffle else "place your bets")
            return due
        due.phase = rnd.phase
        due.view = lambda: [self._box_view(rnd, b) for b in rnd.ordered_boxes()]
        due.dealer = {
            "cards": list(rnd.dealer),
            "total": self._dealer_total(rnd) if rnd.dealer else 0,
        }
        if (
            rnd.insurance_open
            and not rnd.insurance_offered
            and not rnd.peek_pending
            and rnd.post_deal_cards == 0
            and self._insurable(rnd)
        ):
            due.prompts.append("offer insurance")
        if rnd.phase == "betting":
            due.prompts.append("call no more bets" if rnd.boxes else "place your bets")
        elif rnd.phase == "closed":
            first = rnd.ordered_boxes()[0].number if rnd.boxes else None
            due.prompts.append(f"deal: the first card to box {first}")
            due.next_card = {"to": "box", "box": first, "hand": 0}
        elif rnd.phase == "dealing":
            target = rnd.deal_queue[0]
            if target == 0:
                due.next_card = {"to": "dealer"}
                due.prompts.append("deal the dealer's card")
            else:
                due.next_card = {"to": "box", "box": target, "hand": 0}
                due.prompts.append(f"deal a card to box {target}")
        elif rnd.phase == "play":
            self._play_due(rnd, due)
        elif rnd.phase == "dealer":
            if len(rnd.dealer) < 2:
                due.prompts.append("draw the dealer's second card")
            else:
                due.prompts.append(f"draw for the dealer (dealer has {self._dealer_total(rnd)})")
            due.next_card = {"to": "dealer"}
        self._window_decisions(rnd, due)
        if shoe is not None and remaining <= 0:
            due.prompts.append("not enough cards: shuffle the discards, cut and load them (16.7)")
        if reshuffle:
            due.prompts.append("shuffle after this round")
        for card in rnd.damaged:
            due.prompts.append(f"replace the damaged {card} at the end of the round")
        return due

    def _play_due(self, rnd: Round, due: Due) -> None:
        if rnd.peek_pending:
            due.prompts.append("take insurance, then check the hole card")
            due.decisions.append({"action": "peek"})
            if not rnd.insurance_offered:
                due.prompts.insert(0, "offer insurance")
            return
        target = rnd.hand_in_play()
        assert target is not None
        box, idx = target
        hand = box.hands[idx]
        total, soft = hand.total()
        due.in_play = {
            "box": box.number,
            "hand": idx,
            "cards": list(hand.cards),
            "total": total,
            "soft": soft,
        }
        if rnd.pending_card is not None:
            due.prompts.append(
                f"offer the exposed {rnd.pending_card} to box {box.number}: take it or refuse it"
            )
            due.decisions.append({"action": "hit", "box": box.number, "hand": idx})
            due.decisions.append({"action": "refuse", "box": box.number, "hand": idx})
            due.next_card = None
            return
        due.next_card = {"to": "box", "box": box.number, "hand": idx}
        if box.absent:
            due.prompts.append(
                f"draw for box {box.number} until {self.rules.absent_draw_to} or more (absent)"
            )
            return
        if len(hand.cards) < 2:
            due.prompts.append(f"deal the second card to box {box.number} hand {idx}")
            return
        if hand.doubled:
            due.prompts.append(f"deal the double card to box {box.number}, sideways")
            for w in hand.wagers:
                if w.player != box.controller and w.double == 0:
                    due.decisions.append(
                        {
                            "action": "double",
                            "box": box.number,
                            "hand": idx,
                            "player": w.player,
                            "max": money(w.amount),
                        }
                    )
            return
        if self._can_surrender(box) and not box.decided and not box.surrender_offered:
            due.prompts.append(f"offer surrender to box {box.number}")
        due.prompts.append(
            f"box {box.number}{f' hand {idx}' if len(box.hands) > 1 else ''}: "
            f"{'soft ' if soft else ''}{total}, {box.controller} to decide"
        )
        p, n = box.controller, box.number
        due.decisions.append({"action": "stand", "box": n, "hand": idx, "player": p})
        due.decisions.append({"action": "hit", "box": n, "hand": idx, "player": p})
        wager = hand.wager_of(p)
        if wager is not None and not self._double_refusal(hand):
            top = wager.amount
            low = top if self.rules.double_amount == "equal" else self.rules.min_increment
            due.decisions.append(
                {
                    "action": "double",
                    "box": n,
                    "hand": idx,
                    "player": p,
                    "max": money(top),
                    "min": money(min(low, top)),
                }
            )
        if (
            len(hand.cards) == 2
            and self._pair(hand)
            and len(box.hands) < self.rules.max_hands
            and not (hand.split_aces and not self.rules.resplit_aces)
        ):
            due.decisions.append({"action": "split", "box": n, "hand": idx, "player": p})
        if self._can_surrender(box) and not box.decided:
            due.decisions.append({"action": "surrender", "box": n, "player": p})
        due.decisions.append({"action": "absent", "box": n})
        if box.split_open is not None:
            source, new = box.split_open
            for w in box.hands[source].wagers:
                if w.player != p and box.hands[new].wager_of(w.player) is None:
                    due.decisions.append(
                        {"action": "split", "box": n, "hand": source, "player": w.player}
                    )

    def _window_decisions(self, rnd: Round, due: Due) -> None:
        """Decisions open outside the turn order: insurance, rescue, late surrender."""
        if rnd.insurance_open:
            for box in self._insurable(rnd):
                for player, amount in box.bets.items():
                    if player not in box.insurance:
                        due.decisions.append(
                            {
                                "action": "insurance",
                                "box": box.number,
                                "player": player,
                                "max": money(amount * self.rules.insurance_max_fraction),
                            }
                        )
        for box in rnd.ordered_boxes():
            for i, hand in enumerate(box.hands):
                if not hand.rescue_open:
                    continue
                for w in hand.wagers:
                    if w.double > 0 and not w.rescued:
                        due.decisions.append(
                            {"action": "rescue", "box": box.number, "hand": i, "player": w.player}
                        )
            if box.late_surrender and self._can_surrender(box):
                due.decisions.append(
                    {"action": "surrender", "box": box.number, "player": box.controller}
                )

    def _box_view(self, rnd: Round, box: Box) -> dict[str, Any]:
        hands = []
        for i, hand in enumerate(box.hands):
            total, soft = hand.total()
            hands.append(
                {
                    "hand": i,
                    "cards": list(hand.cards),
                    "total": total,
                    "soft": soft,
                    "doubled": hand.doubled,
                    "done": hand.done,
                    "natural": self._is_natural(hand),
                    "wagers": [
                        {
                            "player": w.player,
                            "amount": money(w.amount),
                            "double": money(w.double),
                            "rescued": w.rescued,
                        }
                        for w in hand.wagers
                    ],
                }
            )
        return {
            "box": box.number,
            "controller": box.controller,
            "bets": {p: money(a) for p, a in box.bets.items()},
            "insurance": {p: money(a) for p, a in box.insurance.items()},
            "absent": box.absent,
            "void": box.void,
            "surrendered": box.surrendered,
            "seen": money(rnd.seen[box.number]) if box.number in rnd.seen else None,
            "hands": hands,
        }


@dataclass(slots=True)
class Due:
    """What the dealer must do next: the dealer's screen shows exactly this."""

    phase: str
    round: int
    next_card: dict[str, Any] | None = None
    prompts: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    dealer: dict[str, Any] = field(default_factory=lambda: {"cards": [], "total": 0})
    shoe: dict[str, Any] | None = None
    in_play: dict[str, Any] | None = None  # the hand in play: box, hand, cards, total, soft
    # The per-box view (wagers, hands, totals) is built only when asked for: the simulator
    # reads the decisions alone, the dealer's screen reads everything.
    view: Callable[[], list[dict[str, Any]]] = field(default=lambda: [], repr=False)
    _boxes: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def boxes(self) -> list[dict[str, Any]]:
        if self._boxes is None:
            self._boxes = self.view()
        return self._boxes

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "round": self.round,
            "next_card": self.next_card,
            "prompts": list(self.prompts),
            "decisions": [dict(d) for d in self.decisions],
            "boxes": self.boxes,
            "dealer": self.dealer,
            "shoe": self.shoe,
            "in_play": self.in_play,
        }
