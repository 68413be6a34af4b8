"""The irregularity procedures of section 16, each raised at the event that carries it.

Here: 16.1 (a card face up in the shoe), 16.2 (drawn in error, unexposed), 16.5 (void), 16.6
(an absent player), 16.7 (the shoe runs short), 16.8 (a damaged card), 16.9 and 16.10 (no
reshuffle after the cutting card, no cutting card). Elsewhere, beside what they govern: 16.3
(a card nobody is due) and 16.4 (an exposed card on offer) in :mod:`~controller.engine.deal`;
16.11 (insurance not offered) and 16.12 (surrender not offered) in
:mod:`~controller.engine.decisions`, with the windows they reopen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.engine import deal, settle
from controller.engine.results import Refusal
from controller.engine.state import PLAY, SETTLED, VOID, Reshuffle, Round, Shoe
from controller.events import Absent, ReshuffleDiscards, Void

if TYPE_CHECKING:
    from controller.engine.table import Table


def face_up(t: Table, card: str) -> None:
    """16.1: a card found face up in the shoe is removed to the discard rack, not dealt."""
    t.flag("16.1", f"{card} found face up in the shoe: removed to the discard rack")
    t.discards.append(card)


def unexposed(t: Table, card: str) -> None:
    """16.2: a card drawn in error, its face not exposed, is used as the next card."""
    t.flag("16.2", f"{card} drawn in error, face not exposed: used as the next card")


def damaged(t: Table, rnd: Round | None, card: str) -> None:
    """16.8: a damaged card is replaced at the end of the round (one found face up in the shoe,
    16.1, is flagged too, though it is not dealt; between rounds it is replaced at once)."""
    if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
        t.flag("16.8", f"{card} is damaged: replace it before the next round")
        return
    t.flag("16.8", f"{card} is damaged: replace it at the end of the round")
    rnd.damaged.append(card)


def at_first_card(t: Table) -> None:
    """16.9 and 16.10, at the first card of a round: a reshuffle is due after the round."""
    shoe = t.shoe
    if shoe is None:
        return
    if shoe.cut_out:
        t.flag("16.9", "round dealt after the cutting card came out without a reshuffle")
        t.require_reshuffle(Reshuffle.CUTTING_CARD_OUT)
    if shoe.cut_card is None and shoe.recorded:
        t.flag(
            "16.10",
            "this shoe was loaded with no cutting card: reshuffle at the end of the round",
        )
        t.require_reshuffle(Reshuffle.NO_CUTTING_CARD)


def on_void(t: Table, ev: Void) -> None:
    """16.5: the round, or one box's hands, voided: cards to the discards, wagers returned.

    Later hands stand as dealt. A round voided while its dealer's hand is incomplete ends here.
    """
    rnd = t.current_round
    if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
        t.flag("16.5", "void: no round is in progress", ev.box)
        return
    if ev.box is None:
        t.flag(
            "16.5",
            "the round is void: its cards go to the discard rack and every wager is returned",
        )
        for each in rnd.boxes.values():
            each.void = True
            for hand in each.hands:
                hand.void = True
                hand.done = True
        settle.finish(t, rnd, VOID)
        return
    box = rnd.boxes.get(ev.box)
    if box is None:
        t.flag("16.5", f"void box {ev.box}: it has no wager in this round", ev.box)
        return
    t.flag(
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
        settle.finish(t, rnd, VOID)
        return
    if rnd.deal_queue:
        deal.drop_void(rnd)
        if not rnd.deal_queue:  # the void box was the last one due a card of the deal
            deal.end_initial_deal(t, rnd)
            return
    if rnd.offered_to is not None and rnd.offered_to[0] == ev.box:
        deal.pass_offer(t, rnd)
    if rnd.phase is PLAY:
        deal.advance(t, rnd)


def absent_refusal(t: Table, box: int) -> Refusal | None:
    """16.6 applies to a box with a wager in the round in progress, whenever it is noticed."""
    rnd = t.current_round
    found = rnd.boxes.get(box) if rnd is not None else None
    if rnd is None or found is None or rnd.phase is SETTLED or rnd.phase is VOID:
        return Refusal("turn", f"box {box} has no wager in this round")
    if found.absent:
        return Refusal("16.6", f"box {box} is drawn for as absent already")
    return None


def on_absent(t: Table, ev: Absent) -> None:
    """16.6: nobody may decide for the box: its hand is drawn to 12 or more."""
    assert ev.box is not None
    why = absent_refusal(t, ev.box)
    if why is not None:
        t.flag(why.rule, why.reason, ev.box)
        return
    rnd = t.current_round
    assert rnd is not None
    box = rnd.boxes[ev.box]
    t.flag(
        "16.6",
        f"the player of box {ev.box} is absent: the hand is drawn to "
        f"{t.rules.absent_draw_to} or more",
        ev.box,
    )
    box.absent = True
    box.decided = True
    if rnd.phase is PLAY:
        if rnd.offered_to is not None and rnd.offered_to[0] == box.number:
            deal.accept_pending(t, rnd)
        deal.advance(t, rnd)


def on_reshuffle_discards(t: Table, ev: ReshuffleDiscards) -> None:
    """16.7: the shoe ran short; the discards were shuffled, cut and loaded to complete the
    round. The cards on the table are counted into the new shoe."""
    rnd = t.current_round
    on_table: list[str] = []
    pending: str | None = None
    if rnd is not None and rnd.phase is not SETTLED and rnd.phase is not VOID:
        on_table = list(rnd.dealer)
        for hand in rnd.all_hands():
            on_table.extend(hand.cards)
        pending = rnd.pending_card
    t.flag(
        "16.7",
        "the shoe ran short: the discards were shuffled, cut and loaded to complete the round",
    )
    old = t.shoe
    decks = old.decks if old is not None else t.rules.decks
    serials = old.serials if old is not None else None
    record = old.record if old is not None else None
    t.shoe = shoe = Shoe(decks=decks, cut_card=ev.cut_card, serials=serials, record=record)
    t.discards.clear()  # the rack is the new shoe
    for card in on_table:
        shoe.counts[card] = shoe.counts.get(card, 0) + 1
    # The reconciliation counts the shoe's cards again from here: the cards on the table (their
    # deck serials not kept) are seen; the rest are in the new shoe.
    for card in on_table:
        shoe.saw(None, card)
    if pending is not None:
        shoe.saw(None, pending)
