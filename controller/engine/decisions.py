"""The decisions: what may be decided now, by whom, within what limits, and by which rule.

One predicate per decision states the rule that allows it (``double_refusal`` is 12.1 / 10.1,
``split_refusal`` 13.1 / 11.1 and 13.4 / 11.4, ``may_surrender`` 9 and 16.12, ...): the event
handlers (:mod:`~controller.engine.play`) refuse with the predicate's reason, and
:func:`open_decisions` lists exactly what the predicates allow, as typed :class:`Decision`
values. The dealer's screen, the simulator and the demo's dealer bot all read that one list.

The windows that stay open out of turn live here too: insurance (10.3, and 16.11 when it was
not offered), rescue (12.8), a back-bettor's split (15.3) and the late surrender of 16.12. They
close at a card that is dealt, and only at one (:func:`card_drawn`): a card found face up in the
shoe (16.1), a ten in a Pontoon shoe (6.1) or a card the shoe cannot hold is not dealt.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

from controller.cards import PICTURES, VALUE
from controller.engine.results import money
from controller.engine.state import (
    BETTING,
    CLOSED,
    DEALING,
    PLAY,
    Box,
    Hand,
    Round,
    TableState,
    Wager,
)
from controller.rules import DoubleAmount, DoubleFirstTwo, RuleSet, SplitPairs


class Kind(StrEnum):
    """What is decided: the ``type`` of the event that carries the decision."""

    NO_MORE_BETS = "no_more_bets"
    OFFER_INSURANCE = "offer_insurance"
    OFFER_SURRENDER = "offer_surrender"
    PEEK = "peek"
    SHUFFLE = "shuffle"
    STAND = "stand"
    HIT = "hit"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"
    INSURANCE = "insurance"
    RESCUE = "rescue"
    REFUSE = "refuse"
    ABSENT = "absent"
    VOID = "void"
    RESHUFFLE_DISCARDS = "reshuffle_discards"


class Role(StrEnum):
    """Who may take a decision."""

    DEALER = "dealer"  # the dealer's announcement or procedure
    SUPERVISOR = "supervisor"  # a supervisor's action (16.5, 16.7), behind the PIN
    CONTROLLER = "controller"  # the box's controller, for every wager on the hand (9.6, 15.3)
    PLAYER = "player"  # each player for their own wager (insurance 15.3(f), rescue 12.8)
    BACK_BETTOR = "back_bettor"  # a back-bettor following the controller's double or split


# The decisions the dealer's screen offers as buttons for a box (``Due.decisions``); the others
# are the dealer's announcements and the supervisor's actions.
SCREEN_KINDS: Final = frozenset(
    {
        Kind.STAND,
        Kind.HIT,
        Kind.DOUBLE,
        Kind.SPLIT,
        Kind.SURRENDER,
        Kind.INSURANCE,
        Kind.RESCUE,
        Kind.REFUSE,
        Kind.ABSENT,
        Kind.PEEK,
    }
)


@dataclass(init=False, slots=True)
class Decision:
    """One decision open now.

    ``by`` says who may take it, ``player`` names them where it is a person's, ``box`` and
    ``hand`` what it applies to (``hand`` is None for a decision on the whole box: surrender
    binds every wager on it, 9.6). ``min`` and ``max`` bound the amount of a double or an
    insurance wager. ``rule`` is the rule that opens it (a Gazette number where the rule set
    has one). ``card`` is the exposed card on offer under 16.4. A value: read it, never change
    it (the engine shares the decisions that do not change).
    """

    kind: Kind
    by: Role
    rule: str
    box: int | None
    hand: int | None
    player: str | None
    min: Decimal | None
    max: Decimal | None
    card: str | None

    def __init__(
        self,
        kind: Kind,
        by: Role,
        rule: str,
        box: int | None = None,
        hand: int | None = None,
        player: str | None = None,
        min: Decimal | None = None,
        max: Decimal | None = None,
        card: str | None = None,
    ) -> None:
        self.kind = kind
        self.by = by
        self.rule = rule
        self.box = box
        self.hand = hand
        self.player = player
        self.min = min
        self.max = max
        self.card = card

    def event(self, amount: Decimal | None = None) -> dict[str, Any]:
        """The event that takes this decision (``amount`` defaults to ``max``)."""
        out: dict[str, Any] = {"type": str(self.kind)}
        if self.box is not None:
            out["box"] = self.box
        if self.player is not None and (
            self.kind in (Kind.DOUBLE, Kind.INSURANCE, Kind.RESCUE)
            or (self.kind is Kind.SPLIT and self.by is Role.BACK_BETTOR)
        ):
            out["player"] = self.player
        if self.kind in (Kind.DOUBLE, Kind.INSURANCE):
            chosen = amount if amount is not None else self.max
            out["amount"] = money(chosen) if chosen is not None else None
        return out

    def to_dict(self) -> dict[str, Any]:
        """The form the dealer's screen reads (``Due.decisions``)."""
        out: dict[str, Any] = {"action": str(self.kind)}
        if self.box is not None:
            out["box"] = self.box
        if self.hand is not None:
            out["hand"] = self.hand
        if self.player is not None:
            out["player"] = self.player
        if self.max is not None:
            out["max"] = money(self.max)
        if self.min is not None:
            out["min"] = money(self.min)
        return out


# --- the predicates: each says why a decision is not allowed ("" when it is) ---------------------


def double_refusal(rules: RuleSet, hand: Hand) -> str:
    """12.1 (Pontoon) / 10.1 (Blackjack 1994): may this hand double at all?"""
    n = len(hand.cards)
    where = f"box {hand.box}"
    if n < 2:
        return f"{where}: a hand of one card cannot double"
    if hand.split_aces and not rules.double_split_aces:
        return f"{where}: split aces may not double"
    if n == 2:
        if hand.split and not rules.double_after_split:
            return f"{where}: no doubling after a split in this game"
        if rules.double_first_two is DoubleFirstTwo.NEVER:
            return f"{where}: this game has no doubling on two cards"
        if rules.double_no_aces and hand.aces:
            return f"{where}: double down only on 9, 10 or 11 without an ace"
        totals = rules.double_totals
        by_total = rules.double_first_two is DoubleFirstTwo.TOTALS
        if by_total and hand.hard not in totals and hand.best not in totals:
            listed = ", ".join(str(t) for t in totals)
            return f"{where}: double down only on a total of {listed}"
        return ""
    if not rules.double_later_under_21:
        return f"{where}: doubling only on the first two cards"
    if hand.best >= 21:
        return f"{where}: doubling after a third card only on a total under 21"
    return ""


def double_amount_refusal(rules: RuleSet, wager: Wager, amount: Decimal) -> str:
    """12.3 (at most the original, at least the increment) / 10.2 (exactly the original)."""
    if rules.double_amount is DoubleAmount.EQUAL:
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
    if amount < rules.min_increment:
        return (
            f"{wager.player}'s double of {money(amount)} is less than the table's "
            f"increment of {money(rules.min_increment)}"
        )
    return ""


def double_limits(rules: RuleSet, wager: Wager) -> tuple[Decimal, Decimal]:
    """The smallest and largest double :func:`double_amount_refusal` allows."""
    top = wager.amount
    low = top if rules.double_amount is DoubleAmount.EQUAL else rules.min_increment
    return min(low, top), top


def is_pair(rules: RuleSet, hand: Hand) -> bool:
    """13.1: two cards of one value; 11.1: pictures only of one rank (J-Q is no pair)."""
    a, b = hand.cards
    if rules.split_pairs is SplitPairs.SAME_RANK_PICTURES and (
        a[0] in PICTURES or b[0] in PICTURES
    ):
        return a[0] == b[0]
    return VALUE[a] == VALUE[b]


def split_refusal(rules: RuleSet, box: Box, hand: Hand) -> tuple[str, str]:
    """(situation, reason) a split of ``hand`` is refused for, or ("", "").

    13.1 / 11.1 for the first split; a hand formed by splitting splits again only on the terms
    of 13.4(a) / 11.4(a) (the ``resplit`` situation); 13.4 / 11.4 for the hand limit and aces.
    """
    where = f"box {box.number}"
    if hand.split_aces and not rules.resplit_aces:
        return "split_limit", f"{where}: aces may be split only once"
    situation = "resplit" if hand.split else "split"
    if len(hand.cards) != 2 or hand.doubled:
        return situation, f"{where}: only a hand of two cards may split"
    if not is_pair(rules, hand):
        a, b = hand.cards
        if rules.split_pairs is SplitPairs.SAME_RANK_PICTURES and VALUE[a] == VALUE[b]:
            msg = f"{where}: {a} and {b} are different picture cards and may not be split"
            if {a[0], b[0]} == {"J", "Q"}:
                msg = f"{where}: a jack and a queen may not be split"
        else:
            msg = f"{where}: {a} and {b} are not a pair"
        return situation, msg
    if len(box.hands) >= rules.max_hands:
        return "split_limit", f"{where}: no more than {rules.max_hands} hands per box"
    return "", ""


def split_undoable(box: Box) -> bool:
    """16.12: the box's first decision was a split, and neither hand has had a card since."""
    hands = box.hands
    return (
        box.late_surrender
        and len(hands) == 2
        and len(hands[0].cards) == 1
        and len(hands[1].cards) == 1
        and hands[0].split
    )


def may_surrender(rules: RuleSet, box: Box) -> bool:
    """9 (assumed, 9.1-9.4 are missing): a box on its first two cards, not a natural, not 21.

    A box that split as its first decision without having been offered surrender may still
    surrender until its next card (16.12): the split is undone, as a surrender after a double
    withdraws the double."""
    if not rules.surrender or box.absent or box.void or box.surrendered:
        return False
    hands = box.hands
    if len(hands) == 1:
        hand = hands[0]
        return len(hand.cards) == 2 and not hand.natural and hand.best < 21
    return split_undoable(box)  # a pair: never a natural, never 21


def insurable(rnd: Round) -> list[Box]:
    """The boxes whose players may insure (10.1, 10.2): dealt, not void, not a natural."""
    return [b for b in rnd.ordered_boxes() if b.hands and not b.void and not b.hands[0].natural]


def dealer_ace_up(rnd: Round) -> bool:
    return bool(rnd.dealer) and rnd.dealer[0][0] == "A"


def insurance_due(rules: RuleSet, rnd: Round) -> bool:
    """Insurance is to be offered: the dealer's first card is an ace and someone may insure."""
    return rules.insurance and dealer_ace_up(rnd) and bool(insurable(rnd))


# --- the windows --------------------------------------------------------------------------------


def first_decision(t: TableState, rnd: Round, box: Box) -> None:
    """16.12: a box that could surrender decides without having been offered it."""
    box.decided = True
    if not box.surrender_offered and may_surrender(t.rules, box):
        t.flag("16.12", f"box {box.number} was not offered surrender", box.number)
        box.late_surrender = True
        rnd.windows = True


def card_drawn(t: TableState, rnd: Round) -> None:
    """A card drawn after the initial deal that is dealt (or offered under 16.4) closes the
    windows open until "any further card": insurance (10.3), rescue (12.8), a back-bettor's
    split. The first such card is also where 16.11 is noticed in a game with no hole card."""
    rnd.post_deal_cards += 1
    if rnd.post_deal_cards == 1 and t.no_hole_card and insurance_due(t.rules, rnd):
        if not rnd.insurance_offered:
            t.flag("16.11", "dealer's first card is an ace and insurance was not offered")
            rnd.insurance_late = True
        rnd.insurance_open = rnd.insurance_late
    for box in rnd.boxes.values():
        box.split_open = None
        for hand in box.hands:
            hand.rescue_open = False


# --- what is open now ---------------------------------------------------------------------------

# The members, as module names: the hot path reads them once per call, not through the class.
NO_MORE_BETS: Final[Kind] = Kind.NO_MORE_BETS
OFFER_INSURANCE: Final[Kind] = Kind.OFFER_INSURANCE
OFFER_SURRENDER: Final[Kind] = Kind.OFFER_SURRENDER
PEEK: Final[Kind] = Kind.PEEK
SHUFFLE: Final[Kind] = Kind.SHUFFLE
STAND: Final[Kind] = Kind.STAND
HIT: Final[Kind] = Kind.HIT
DOUBLE: Final[Kind] = Kind.DOUBLE
SPLIT: Final[Kind] = Kind.SPLIT
SURRENDER: Final[Kind] = Kind.SURRENDER
INSURANCE: Final[Kind] = Kind.INSURANCE
RESCUE: Final[Kind] = Kind.RESCUE
REFUSE: Final[Kind] = Kind.REFUSE
ABSENT: Final[Kind] = Kind.ABSENT
VOID: Final[Kind] = Kind.VOID
RESHUFFLE_DISCARDS: Final[Kind] = Kind.RESHUFFLE_DISCARDS
DEALER: Final[Role] = Role.DEALER
SUPERVISOR: Final[Role] = Role.SUPERVISOR
CONTROLLER: Final[Role] = Role.CONTROLLER
PLAYER: Final[Role] = Role.PLAYER
BACK_BETTOR: Final[Role] = Role.BACK_BETTOR


class Fixed:
    """The decisions that never change at a table, made once (they are shared, so never
    change a :class:`Decision`)."""

    def __init__(self, t: TableState) -> None:
        ref = t.ref
        self.no_more_bets = (Decision(NO_MORE_BETS, DEALER, ref("late_bet")),)
        self.void = Decision(VOID, SUPERVISOR, "16.5")
        self.only_void = (self.void,)
        self.reshuffle = Decision(RESHUFFLE_DISCARDS, SUPERVISOR, "16.7")
        self.void_or_reshuffle = (self.reshuffle, self.void)
        self.offer_insurance = Decision(OFFER_INSURANCE, DEALER, ref("insurance_window"))
        self.peek = Decision(PEEK, DEALER, "peek")
        self.shuffle = {
            rule: (Decision(SHUFFLE, DEALER, rule),) for rule in ("6.3", "16.9", "16.10")
        }
        self.refs = {
            key: ref(key)
            for key in ("back_bettor", "surrender", "double", "split", "resplit", "rescue")
        }
        self.insurance_ref = ref("insurance_window")


def open_now(t: TableState) -> tuple[Decision, ...]:
    """:func:`open_decisions`, worked out once per event."""
    cached = t.open_cache
    if cached is not None and cached[0] == t.seq:
        return cached[1]
    found = open_decisions(t)
    t.open_cache = (t.seq, found)
    return found


def open_decisions(t: TableState) -> tuple[Decision, ...]:
    """Every decision open now, in the order the dealer's screen lists them: the dealer's
    announcements, the hand in play's decisions, the decisions open out of turn, the
    supervisor's actions."""
    fixed = t.fixed
    rnd = t.current_round
    if rnd is None:
        if t.shoe is None or t.reshuffle_due:
            return fixed.shuffle[t.reshuffle_rule()]
        return ()
    phase = rnd.phase
    if phase is BETTING:
        return fixed.no_more_bets if rnd.boxes else ()
    short = t.shoe is not None and t.shoe_remaining() <= 0
    if phase is CLOSED or phase is DEALING:  # nothing to decide until the deal is done
        return fixed.void_or_reshuffle if short and phase is DEALING else fixed.only_void
    out: list[Decision] = []
    if not rnd.insurance_offered and (
        rnd.peek_pending
        or (rnd.insurance_open and rnd.post_deal_cards == 0 and bool(insurable(rnd)))
    ):
        out.append(fixed.offer_insurance)
    if phase is PLAY:
        _play_decisions(t, rnd, out)
    if rnd.insurance_open or rnd.windows:
        _window_decisions(t, rnd, out)
    if not out:
        return fixed.void_or_reshuffle if short else fixed.only_void
    if short:
        out.append(fixed.reshuffle)
    out.append(fixed.void)
    return tuple(out)


def _play_decisions(t: TableState, rnd: Round, out: list[Decision]) -> None:
    """The decisions of the hand in play (the box's controller), in turn."""
    rules = t.rules
    fixed = t.fixed
    if rnd.peek_pending:
        out.append(fixed.peek)
        return
    target = rnd.hand_in_play()
    assert target is not None
    box, idx = target
    hand = box.hands[idx]
    n, p = box.number, box.controller
    if rnd.pending_card is not None:
        card = rnd.pending_card
        out.append(Decision(HIT, CONTROLLER, "16.4", n, idx, p, card=card))
        out.append(Decision(REFUSE, CONTROLLER, "16.4", n, idx, p, card=card))
        return
    if box.absent:
        return
    refs = fixed.refs
    if len(hand.cards) < 2:  # a split hand waiting for its second card
        _follow_split(box, p, refs["back_bettor"], out)
        return
    if hand.doubled:
        for w in hand.wagers:
            if w.player != p and w.double == 0:
                low, top = double_limits(rules, w)
                out.append(
                    Decision(DOUBLE, BACK_BETTOR, refs["back_bettor"], n, idx, w.player, low, top)
                )
        return
    surrender_open = not box.decided and may_surrender(rules, box)
    if surrender_open and not box.surrender_offered:
        out.append(Decision(OFFER_SURRENDER, DEALER, refs["surrender"], n))
    out.append(Decision(STAND, CONTROLLER, "turn", n, idx, p))
    out.append(Decision(HIT, CONTROLLER, "turn", n, idx, p))
    wager = hand.wager_of(p)
    if wager is not None and not double_refusal(rules, hand):
        low, top = double_limits(rules, wager)
        out.append(Decision(DOUBLE, CONTROLLER, refs["double"], n, idx, p, low, top))
    if len(hand.cards) == 2 and not split_refusal(rules, box, hand)[0]:
        ref = refs["resplit" if hand.split else "split"]
        out.append(Decision(SPLIT, CONTROLLER, ref, n, idx, p))
    if surrender_open:
        out.append(Decision(SURRENDER, CONTROLLER, refs["surrender"], n, None, p))
    out.append(Decision(ABSENT, DEALER, "16.6", n))
    _follow_split(box, p, refs["back_bettor"], out)


def _follow_split(box: Box, controller: str, ref: str, out: list[Decision]) -> None:
    """15.3: after the controller splits, each back-bettor may match the split, until the next
    card."""
    if box.split_open is None:
        return
    source, new = box.split_open
    for w in box.hands[source].wagers:
        if w.player != controller and box.hands[new].wager_of(w.player) is None:
            out.append(Decision(SPLIT, BACK_BETTOR, ref, box.number, source, w.player))


def _window_decisions(t: TableState, rnd: Round, out: list[Decision]) -> None:
    """Decisions open outside the turn order: insurance, rescue, late surrender."""
    rules = t.rules
    if rnd.insurance_open:
        rule = "16.11" if rnd.insurance_late else t.fixed.insurance_ref
        fraction = rules.insurance_max_fraction
        for box in insurable(rnd):
            for player, amount in box.bets.items():
                if player not in box.insurance:
                    top = amount * fraction
                    out.append(
                        Decision(INSURANCE, PLAYER, rule, box.number, None, player, None, top)
                    )
    if not rnd.windows:
        return
    rescue = t.fixed.refs["rescue"]
    for box in rnd.ordered_boxes():
        n = box.number
        for i, hand in enumerate(box.hands):
            if not hand.rescue_open:
                continue
            for w in hand.wagers:
                if w.double > 0 and not w.rescued:
                    out.append(Decision(RESCUE, PLAYER, rescue, n, i, w.player))
        if box.late_surrender and may_surrender(rules, box):
            out.append(Decision(SURRENDER, CONTROLLER, "16.12", n, None, box.controller))
