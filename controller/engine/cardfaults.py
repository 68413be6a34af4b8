"""What a card brings with it (section 16), raised at the card: 16.1 (found face up in the
shoe), 16.2 (drawn in error, its face not exposed), 16.8 (damaged), and at a round's first card
16.9 and 16.10 (no reshuffle after the cutting card, a shoe with no cutting card)."""

from __future__ import annotations

from controller.engine.state import SETTLED, VOID, Reshuffle, Round, TableState


def face_up(t: TableState, card: str) -> None:
    """16.1: a card found face up in the shoe is removed to the discard rack, not dealt."""
    t.flag("16.1", f"{card} found face up in the shoe: removed to the discard rack")
    t.discards.append(card)


def unexposed(t: TableState, card: str) -> None:
    """16.2: a card drawn in error, its face not exposed, is used as the next card."""
    t.flag("16.2", f"{card} drawn in error, face not exposed: used as the next card")


def damaged(t: TableState, rnd: Round | None, card: str) -> None:
    """16.8: a damaged card is replaced at the end of the round (one found face up in the shoe,
    16.1, is flagged too, though it is not dealt; between rounds it is replaced at once)."""
    if rnd is None or rnd.phase is SETTLED or rnd.phase is VOID:
        t.flag("16.8", f"{card} is damaged: replace it before the next round")
        return
    t.flag("16.8", f"{card} is damaged: replace it at the end of the round")
    rnd.damaged.append(card)


def at_first_card(t: TableState) -> None:
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
