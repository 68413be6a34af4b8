"""The deal: who is due the next card, and giving it to them.

Cards are not addressed: a card out of the shoe goes to whoever the dealing procedure says is
due it. During the initial deal that is box 1..N, the dealer, box 1..N (and, in a hole-card
game, the dealer again); in play, the hand in play; then the dealer while the drawing rule and
the hands still waiting on the dealer's total say so (:func:`dealer_needs_card`). A card nobody
is due is an error card (16.3). An exposed card drawn in error after the initial deal is
offered in turn (16.4): a player may refuse it, and refused by all it goes to the dealer.

This room also moves play on (:func:`advance`): past finished hands, to the dealer, and to the
settlement when nothing more is due.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from controller.cards import TEN_VALUES
from controller.engine import cardfaults, decisions, inspection, settle
from controller.engine.admission import admit
from controller.engine.state import (
    BETTING,
    CLOSED,
    DEALER,
    DEALING,
    PLAY,
    SETTLED,
    VOID,
    Box,
    Hand,
    Round,
    TableState,
    Wager,
)
from controller.events import Card, Peek, Refuse


@dataclass(frozen=True, slots=True)
class Target:
    """Who is due the next card: the dealer, or a box's hand."""

    to: str  # "box" or "dealer"
    box: int | None = None
    hand: int | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.to == "dealer":
            return {"to": "dealer"}
        return {"to": "box", "box": self.box, "hand": self.hand}


TO_DEALER: Final = Target("dealer")
_TO_BOX: Final[dict[tuple[int | None, int], Target]] = {}


def to_box(box: int | None, hand: int) -> Target:
    """The target for a box's hand (made once for each)."""
    key = (box, hand)
    target = _TO_BOX.get(key)
    if target is None:
        target = _TO_BOX[key] = Target("box", box, hand)
    return target


def next_card(t: TableState) -> Target | None:
    """Who is due the next card out of the shoe (None: nobody, or a decision comes first; a
    deck under inspection or a shoe being read out takes the cards read, and deals none)."""
    rnd = t.current_round
    if rnd is None or t.inspection is not None:
        return None
    shoe = t.shoe
    if shoe is not None and shoe.ended:
        return None
    phase = rnd.phase
    if phase is PLAY:
        if rnd.peek_pending or rnd.pending_card is not None:
            return None
        target = rnd.hand_in_play()
        assert target is not None
        return to_box(target[0].number, target[1])
    if phase is DEALER:
        return TO_DEALER
    if phase is DEALING:
        first = rnd.deal_queue[0]
        return TO_DEALER if first == 0 else to_box(first, 0)
    if phase is CLOSED:
        return to_box(rnd.ordered_boxes()[0].number if rnd.boxes else None, 0)
    return None


# --- a card out of the shoe ---------------------------------------------------------------------


def on_card(t: TableState, ev: Card) -> None:
    card = ev.card
    assert card is not None
    if t.inspection is not None:
        inspection.read(t, ev)  # a deck under inspection: not the shoe's, not dealt
        return
    shoe = t.shoe
    if shoe is not None and shoe.ended:
        inspection.read_out(t, ev)  # the cards left in an ended shoe: not dealt
        return
    rnd = t.current_round
    if not admit(t, ev):
        return
    if ev.face_up:
        cardfaults.face_up(t, card)  # 16.1: not dealt, so it closes no window
        if ev.damaged:  # a card carrying both conditions raises both (RULES.md)
            cardfaults.damaged(t, rnd, card)
        return
    if rnd is None or not rnd.boxes or rnd.phase is SETTLED or rnd.phase is VOID:
        card_not_due(t, card)
        return
    if rnd.phase is BETTING:
        card_not_due(t, card)
        return
    if rnd.phase is CLOSED:
        cardfaults.at_first_card(t)  # 16.9, 16.10
        start_deal(t, rnd)
    if ev.damaged:
        cardfaults.damaged(t, rnd, card)  # 16.8
    error = ev.in_error
    if error is not None:
        if error == "unexposed":
            cardfaults.unexposed(t, card)  # 16.2: used as the next card
        elif rnd.phase is DEALING:
            t.flag(
                "16.4",
                f"{card} drawn in error and exposed during the initial deal: dealt as though "
                "it were the next card",
            )
    if rnd.phase is DEALING:
        deal_initial(t, rnd, card)
        return
    # After the initial deal.
    if rnd.pending_card is not None:
        accept_pending(t, rnd)
        if rnd.phase is SETTLED or rnd.phase is VOID:
            card_not_due(t, card)
            return
    if rnd.peek_pending:
        peek(t, rnd)
        if rnd.phase is SETTLED:
            card_not_due(t, card)
            return
    decisions.card_drawn(t, rnd)
    if rnd.phase is PLAY:
        target = rnd.hand_in_play()
        assert target is not None
        box, idx = target
        if error == "exposed":
            t.flag("16.4", f"{card} drawn in error and exposed: offered in turn", box.number)
            rnd.pending_card = card
            rnd.offered_to = (box.number, idx)
            settle_offer(t, rnd)
            return
        deal_to_hand(t, rnd, box, idx, card)
    elif rnd.phase is DEALER:
        if not dealer_needs_card(t, rnd):
            card_not_due(t, card)
        else:
            if error == "exposed":
                t.flag(
                    "16.4",
                    f"{card} drawn in error and exposed: dealt to the dealer as though it were "
                    "the next card",
                )
            deal_to_dealer(t, rnd, card)
    advance(t, rnd)


def card_not_due(t: TableState, card: str) -> None:
    """16.3: an exposed card nobody is due (the dealer's hand complete, or between rounds)."""
    t.flag(
        "16.3",
        f"{card} came out when no hand was due a card: removed face down to the discard rack",
    )
    t.discards.append(card)


# --- the initial deal ---------------------------------------------------------------------------


def start_deal(t: TableState, rnd: Round) -> None:
    """The first card of the round: betting is over, the boxes and their order are fixed."""
    rnd.phase = DEALING
    rnd.order = order = [rnd.boxes[n] for n in sorted(rnd.boxes)]
    numbers = []
    for box in order:
        box.hands = [Hand(box=box.number, wagers=[Wager(p, a) for p, a in box.bets.items()])]
        numbers.append(box.number)
    rnd.deal_queue = [*numbers, 0, *numbers]
    if t.hole_card_peek:
        rnd.deal_queue.append(0)


def deal_initial(t: TableState, rnd: Round, card: str) -> None:
    queue = rnd.deal_queue
    drop_void(rnd)  # a box voided before the deal began
    target = queue.pop(0)
    if target == 0:
        rnd.add_dealer(card)
    else:
        rnd.boxes[target].hands[0].add(card)
    drop_void(rnd)
    if not queue:
        end_initial_deal(t, rnd)


def drop_void(rnd: Round) -> None:
    """Void boxes (16.5) are dealt no more cards: take them off the front of the deal."""
    queue = rnd.deal_queue
    boxes = rnd.boxes
    while queue and queue[0] and boxes[queue[0]].void:
        queue.pop(0)


def end_initial_deal(t: TableState, rnd: Round) -> None:
    rnd.phase = PLAY
    for box in rnd.ordered_boxes():
        for hand in box.hands:
            if hand.natural or hand.best >= 21:
                hand.done = True
    ace_up = decisions.dealer_ace_up(rnd)
    rnd.insurance_open = t.rules.insurance and ace_up
    if t.hole_card_peek:
        if rnd.dealer and rnd.dealer[0][0] in TEN_VALUES:
            peek(t, rnd)
            return
        if ace_up:
            rnd.peek_pending = True
            return
    advance(t, rnd)


def peek(t: TableState, rnd: Round) -> None:
    """Hole-card games: the dealer checks for a natural; one ends the round at once."""
    rnd.peek_pending = False
    rnd.insurance_open = False
    if decisions.insurance_due(t.rules, rnd) and not rnd.insurance_offered:
        t.flag("16.11", "insurance was not offered before the hole card was checked")
    if rnd.dealer_natural:
        for box in rnd.ordered_boxes():
            for hand in box.hands:
                hand.done = True
        settle.finish(t, rnd, SETTLED)
    else:
        advance(t, rnd)


def on_peek(t: TableState, ev: Peek) -> None:
    rnd = t.current_round
    if rnd is None or not rnd.peek_pending:
        t.flag("turn", "peek: the dealer's hole card is not waiting to be checked")
        return
    peek(t, rnd)


# --- cards in play ------------------------------------------------------------------------------


def deal_to_hand(t: TableState, rnd: Round, box: Box, idx: int, card: str) -> None:
    hand = box.hands[idx]
    if not box.decided and not hand.split and len(hand.cards) == 2:
        decisions.first_decision(t, rnd, box)
    box.late_surrender = False  # its next card closes the 16.12 window
    hand.add(card)
    rules = t.rules
    if hand.doubled:
        hand.done = True
        if rules.rescue and hand.hard <= 21:
            hand.rescue_open = rnd.windows = True  # 12.8: until any further card
    else:
        best = hand.best
        hand.done = (
            best >= 21
            or hand.refused
            or (hand.split_aces and rules.split_aces_one_card and not may_resplit(t, box, hand))
            or (box.absent and best >= rules.absent_draw_to)
        )


def may_resplit(t: TableState, box: Box, hand: Hand) -> bool:
    """A split ace that drew another ace may split again where the rules allow it."""
    rules = t.rules
    return (
        rules.resplit_aces
        and len(hand.cards) == 2
        and hand.cards[1][0] == "A"
        and len(box.hands) < rules.max_hands
    )


def deal_to_dealer(t: TableState, rnd: Round, card: str) -> None:
    rnd.add_dealer(card)
    if len(rnd.dealer) == 2:  # the dealer's second card closes insurance and 16.12
        rnd.insurance_open = False
        for box in rnd.boxes.values():
            box.late_surrender = False


def advance(t: TableState, rnd: Round) -> None:
    """Move play on past finished hands; to the dealer; settle when nothing is due."""
    if rnd.phase is PLAY:
        draw_to = t.rules.absent_draw_to
        while True:
            target = rnd.hand_in_play()
            if target is None:
                rnd.phase = DEALER
                break
            box, idx = target
            hand = box.hands[idx]
            if box.void or box.surrendered:
                hand.done = True
                continue
            if box.absent and len(hand.cards) >= 2 and hand.best >= draw_to:
                hand.done = True
                continue
            break
    if rnd.phase is DEALER and not dealer_needs_card(t, rnd):
        settle.finish(t, rnd, SETTLED)


# --- the dealer's draw --------------------------------------------------------------------------


def depends_on_dealer(t: TableState, hand: Hand) -> bool:
    """Whether a hand's result still waits on the dealer's total."""
    if hand.void or hand.surrendered or hand.hard > 21 or hand.natural:
        return False
    for w in hand.wagers:
        if not w.rescued:
            break
    else:
        return False  # every wager on it rescued (12.8)
    return not (t.rules.player_21_beats_dealer_21 and hand.best == 21)


def dealer_needs_card(t: TableState, rnd: Round) -> bool:
    """The dealer's second card is always drawn; more while the drawing rule says so and some
    hand still depends on the dealer's total."""
    live = False
    depends = False
    for box in rnd.ordered_boxes():
        for hand in box.hands:
            if not hand.void:
                live = True
                if not depends and depends_on_dealer(t, hand):
                    depends = True
    if not live:
        return False
    if len(rnd.dealer) < 2:
        return True
    if rnd.dealer_natural or not depends:
        return False
    total, soft = rnd.dealer_total()
    return total < 17 or (total == 17 and soft and t.rules.dealer_hits_soft_17)


# --- 16.4: the exposed error card on offer ------------------------------------------------------


def on_refuse(t: TableState, ev: Refuse) -> None:
    rnd = t.current_round
    if rnd is None or rnd.pending_card is None or rnd.offered_to is None:
        t.flag("16.4", f"box {ev.box} refused a card, but none is on offer", ev.box)
        return
    if rnd.offered_to[0] != ev.box:
        t.flag(
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
    pass_offer(t, rnd)


def pass_offer(t: TableState, rnd: Round) -> None:
    """The card on offer goes on to the next hand in turn, or else to the dealer."""
    rnd.offered_to = None
    advance(t, rnd)
    settle_offer(t, rnd)


def settle_offer(t: TableState, rnd: Round) -> None:
    if rnd.pending_card is None:
        return
    target = rnd.hand_in_play() if rnd.phase is PLAY else None
    if target is not None:
        box, idx = target
        rnd.offered_to = (box.number, idx)
        if box.absent:
            accept_pending(t, rnd)  # nobody on the box can refuse it
        return
    card = rnd.pending_card
    rnd.pending_card = None
    rnd.offered_to = None
    if rnd.phase is DEALER and dealer_needs_card(t, rnd):
        deal_to_dealer(t, rnd, card)
        advance(t, rnd)
    else:
        t.flag("16.3", f"{card} was on offer when no hand was due a card: discarded")
        t.discards.append(card)


def accept_pending(t: TableState, rnd: Round) -> None:
    card, target = rnd.pending_card, rnd.offered_to
    if card is None or target is None:
        return
    rnd.pending_card = None
    rnd.offered_to = None
    box = rnd.boxes[target[0]]
    deal_to_hand(t, rnd, box, target[1], card)
    advance(t, rnd)
