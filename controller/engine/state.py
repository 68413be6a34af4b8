"""The state of a round: its phase, its boxes, hands and wagers, the dealer's cards, the shoe.

Plain data with small queries; the rooms of the engine (:mod:`~controller.engine.deal`,
:mod:`~controller.engine.play`, ...) change it. A hand keeps its totals as cards arrive
(:meth:`Hand.add`), so no total is ever recomputed from the cards on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from controller.cards import VALUE
from controller.engine.results import Flag

ZERO = Decimal(0)


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


# Module-level names for the hot path (one global lookup instead of two).
BETTING = Phase.BETTING
CLOSED = Phase.CLOSED
DEALING = Phase.DEALING
PLAY = Phase.PLAY
DEALER = Phase.DEALER
SETTLED = Phase.SETTLED
VOID = Phase.VOID
LIVE_PHASES = frozenset({DEALING, PLAY, DEALER})  # cards are out
OPEN_PHASES = frozenset({BETTING, CLOSED})  # wagers still count


@dataclass(slots=True)
class Wager:
    """One player's money on one hand: the wager, any double, and whether it was rescued."""

    player: str
    amount: Decimal
    double: Decimal = ZERO
    rescued: bool = False


def soft_total(hard: int, free_aces: int) -> tuple[int, bool]:
    """The best total from the hard total (aces as 1) and the aces that may count 11."""
    if free_aces > 0 and hard <= 11:
        return hard + 10, True
    return hard, False


@dataclass(slots=True)
class Hand:
    """A box's hand. Change its cards only through :meth:`add` and :meth:`take_last`."""

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
    hard: int = 0  # the total with every ace counted 1
    aces: int = 0  # aces among the cards

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


@dataclass(slots=True)
class Box:
    """A betting box: its players' initial wagers (in betting order), its controller, its hands."""

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
    """The shoe loaded: its decks, the cutting card, the deck serials, the cards read from it."""

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
    """One round from its first bet until it is settled or void."""

    number: int
    boxes: dict[int, Box] = field(default_factory=dict)
    phase: Phase = BETTING
    deal_queue: list[int] = field(default_factory=list)  # box numbers; 0 = the dealer
    dealer: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    insurance_offered: bool = False
    insurance_open: bool = False
    insurance_late: bool = False  # 16.11: open until the dealer's second card
    post_deal_cards: int = 0  # cards dealt after the initial deal
    peek_pending: bool = False
    pending_card: str | None = None  # 16.4: exposed error card on offer
    offered_to: tuple[int, int] | None = None
    damaged: list[str] = field(default_factory=list)
    seen: dict[int, Decimal] = field(default_factory=dict)  # the camera's stable wager per box
    order: list[Box] | None = None  # fixed once the deal starts: no box joins after that
    dealer_hard: int = 0  # the dealer's total with aces as 1
    dealer_aces: int = 0
    turn: int = 0  # index in ``order`` of the first box that may still have a hand to play

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
