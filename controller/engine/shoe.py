"""The shoe: loads, the cutting card, and whether a card read is one the shoe can hold.

Whether a card read is one the shoe can hold is :mod:`.admission`'s. A misread is flagged
``shoe`` and deals nothing.

A load (``shuffle``) first reconciles the last shoe if it had ended (:mod:`.inspection`), then
checks the decks loaded against what the table knows of them: a deck serial that failed its
inspection (or its last reconciliation) is flagged ``shoe``; so is one never inspected, and a
load with no deck serials at all, once the opening procedure is in force (the day was opened,
or decks were inspected: :func:`~controller.engine.opening.in_force`). A load with no deck
serials otherwise is checked by counts only, as before the opening procedure existed.
"""

from __future__ import annotations

from controller.engine import inspection, opening
from controller.engine.admission import unrecorded
from controller.engine.state import LIVE_PHASES, Shoe, ShoeRecord, TableState
from controller.events import CutCard, Misread, Shuffle


def on_shuffle(t: TableState, ev: Shuffle) -> None:
    if t.inspection is not None:
        inspection.unfinished(t, "a shoe was loaded")
    old = t.shoe
    if old is not None and old.ended:
        inspection.reconcile(t, old)
    rnd = t.current_round
    if rnd is not None and rnd.phase in LIVE_PHASES:
        t.flag("shoe", "a new shoe was loaded in the middle of a round")
    if ev.decks != t.rules.decks:
        t.flag(
            "shoe",
            f"the shoe was loaded with {ev.decks} decks; the table's rule set says {t.rules.decks}",
        )
    opening.at_load(t)
    record = ShoeRecord(t.seq, ev.decks, ev.deck_serials, check_decks(t, ev, opening.in_force(t)))
    t.shoes.append(record)
    t.bound_records()
    t.shoe = Shoe(
        decks=ev.decks,
        cut_card=ev.cut_card,
        serials=frozenset(ev.deck_serials) if ev.deck_serials is not None else None,
        record=record,
    )
    t.discards.clear()  # the rack's cards are in the new shoe
    t.removed.clear()  # the last shoe's removed cards are off the table for good
    t.reshuffled()


def check_decks(t: TableState, ev: Shuffle, in_force: bool) -> list[str]:
    """The decks loaded against what the table knows of them; returns those that had passed
    their inspection (or their last reconciliation)."""
    serials = ev.deck_serials
    if serials is None:
        if in_force:
            t.flag(
                "shoe",
                "the shoe was loaded with no deck serials: its decks cannot be tied to their "
                "inspection (6.1)",
            )
        return []
    twice = sorted({s for s in serials if serials.count(s) > 1})
    if twice:
        t.flag("shoe", f"deck serials loaded twice into one shoe: {', '.join(twice)}")
    known = t.deck_status
    passed: list[str] = []
    failed: list[str] = []
    never: list[str] = []
    for serial in dict.fromkeys(serials):
        status = known.get(serial)
        if status is None:
            never.append(serial)
        elif status.ok:
            passed.append(serial)
        else:
            failed.append(f"deck {serial} {status.detail}")
    if failed:
        t.flag("shoe", f"decks loaded that may not be dealt: {'; '.join(failed)}")
    if never and in_force:
        t.flag("shoe", f"decks loaded that were never inspected (6.1): {', '.join(never)}")
    return passed


def on_cut_card(t: TableState, ev: CutCard) -> None:
    if t.inspection is not None:
        return  # the cutting card passed the reader with a deck under inspection: not the shoe's
    shoe = t.shoe
    if shoe is None:
        t.flag("shoe", "a cutting card came out of a shoe with no load on record")
        shoe = t.shoe = unrecorded(t)
    shoe.cut_out = True


def on_misread(t: TableState, ev: Misread) -> None:
    t.flag(
        "shoe",
        f"the shoe reader could not read a card ({ev.raw!r}): enter or correct it by hand",
    )
