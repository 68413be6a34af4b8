"""Whether a card read is one the shoe can hold.

A card the shoe cannot hold is flagged and removed from play, never dealt: a ten in a Pontoon
shoe (6.1), a card of a deck not loaded, the same deck's card read twice, more copies of a card
than the decks loaded hold (``shoe``). The deal (:mod:`.deal`) and the read-out of a shoe that
has ended (:mod:`.inspection`) both ask it of every card.
"""

from __future__ import annotations

from controller.engine.state import Shoe, TableState
from controller.events import Card


def unrecorded(t: TableState) -> Shoe:
    """The shoe cards come from when no load is on record (flagged ``shoe``)."""
    return Shoe(decks=t.rules.decks, cut_card=None, serials=None, recorded=False)


def admit(t: TableState, ev: Card) -> bool:
    """The shoe's checks on a card read: is it a card this shoe can hold?"""
    card = ev.card
    assert card is not None
    shoe = t.shoe
    if shoe is None:
        t.flag("shoe", "cards are being read with no shoe load on record")
        shoe = t.shoe = unrecorded(t)
    shoe.drawn += 1
    tally = shoe.seen  # every card read counts for the reconciliation (Shoe.saw, inlined)
    key = (ev.deck or "", card)
    tally[key] = tally.get(key, 0) + 1
    if card[0] in t.excluded_ranks:
        t.flag(
            t.ref("foreign_card"),
            f"{card} read from the shoe: this game's decks hold no tens; removed from play",
        )
        t.removed.append(card)
        return False
    if shoe.serials is not None and ev.deck is not None:
        if ev.deck not in shoe.serials:
            t.flag(
                "shoe",
                f"{card} of deck {ev.deck}, which was not loaded into this shoe: removed from play",
            )
            t.removed.append(card)
            return False
        if (ev.deck, card) in shoe.read:
            t.flag(
                "shoe",
                f"{card} of deck {ev.deck} was read a second time from this shoe: "
                "removed from play",
            )
            t.removed.append(card)
            return False
        shoe.read.add((ev.deck, card))
    counts = shoe.counts
    seen = counts.get(card, 0)
    if seen >= shoe.decks:
        t.flag(
            "shoe",
            f"{card} read more often than the {shoe.decks} decks in this shoe hold it: "
            "removed from play",
        )
        t.removed.append(card)
        return False
    counts[card] = seen + 1
    return True
