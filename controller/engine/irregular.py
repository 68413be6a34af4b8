"""The irregularity procedures of section 16, each raised at the event that carries it.

Here: 16.5 (void), 16.6 (an absent player), 16.7 (the shoe runs short). What a card brings
with it — 16.1 (face up in the shoe), 16.2 (drawn in error, unexposed), 16.8 (damaged), 16.9
and 16.10 (no reshuffle after the cutting card, no cutting card) — is
:mod:`~controller.engine.cardfaults`'s. Elsewhere, beside what they govern: 16.3
(a card nobody is due) and 16.4 (an exposed card on offer) in :mod:`~controller.engine.deal`;
16.11 (insurance not offered) and 16.12 (surrender not offered) in
:mod:`~controller.engine.decisions`, with the windows they reopen.
"""

from __future__ import annotations

from controller.engine import deal, settle
from controller.engine.results import Refusal
from controller.engine.state import PLAY, SETTLED, VOID, Shoe, TableState
from controller.events import Absent, ReshuffleDiscards, Void


def on_void(t: TableState, ev: Void) -> None:
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


def absent_refusal(t: TableState, box: int) -> Refusal | None:
    """16.6 applies to a box with a wager in the round in progress, whenever it is noticed."""
    rnd = t.current_round
    found = rnd.boxes.get(box) if rnd is not None else None
    if rnd is None or found is None or rnd.phase is SETTLED or rnd.phase is VOID:
        return Refusal("turn", f"box {box} has no wager in this round")
    if found.absent:
        return Refusal("16.6", f"box {box} is drawn for as absent already")
    return None


def on_absent(t: TableState, ev: Absent) -> None:
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


def on_reshuffle_discards(t: TableState, ev: ReshuffleDiscards) -> None:
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
