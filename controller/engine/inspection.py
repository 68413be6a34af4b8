"""Inspecting decks and reconciling shoes (6.1; docs/reference/events.md, "Opening the table
and reconciling the shoe").

* An inspection (``inspect`` ... ``inspect_end``) is one deck read through the reader: its cards
  are not dealt and not the shoe's. At ``inspect_end`` it is checked against the game's deck
  (:func:`check_deck`): a card of a rank the game's decks do not hold (a ten in Pontoon) is
  flagged ``6.1``, a missing, doubled or foreign card (of another deck serial) ``shoe``; the
  flags name the cards. The deck's serial is the ``inspect`` event's ``deck``, or else the one
  most of its cards carry; it is what ties the deck to the shoes it is later loaded into.
* After ``shoe_end`` the cards left in the shoe are read out: they pass the shoe's checks on a
  card read (:func:`~controller.engine.admission.admit`) and are not dealt. The readout ends at the
  next ``shuffle``, ``inspect`` or ``close_table``, and the shoe is reconciled then
  (:func:`reconcile`): every card of every deck loaded must have been seen exactly once since
  the shoe was loaded (or since a 16.7 reload of the discards), or it is flagged ``shoe`` by
  name (``K7Q2M9-7H`` where the serials are known, else ``7H``).
* What the table knows of each deck serial (:class:`~controller.engine.state.DeckStatus`): it
  passed its inspection or its last reconciliation, or it failed one. The shoe's load checks
  it (:func:`~controller.engine.shoe.on_shuffle`).
"""

from __future__ import annotations

from typing import Final

from controller.engine.admission import admit
from controller.engine.state import (
    DeckStatus,
    Inspection,
    InspectionResult,
    Shoe,
    TableState,
)
from controller.events import Card, Inspect, InspectEnd, ShoeEnd

# How many deck serials the table remembers (the oldest forgotten first): a bounded table's
# memory must not grow with its life. A forgotten deck counts as never inspected.
MAX_DECK_STATUS: Final = 256


# --- inspection ---------------------------------------------------------------------------------


def on_inspect(t: TableState, ev: Inspect) -> None:
    """A deck read for inspection begins (the table refused it while a round's cards are out:
    :mod:`.check`)."""
    if t.inspection is not None:
        unfinished(t, "another inspection began")
    shoe = t.shoe
    if shoe is not None and shoe.ended:
        finish_shoe(t, shoe)  # the readout is over: the cards now read are the deck's
    t.inspection = Inspection(t.seq, ev.deck, ev.by or ())


def on_inspect_end(t: TableState, ev: InspectEnd) -> None:
    end_inspection(t)  # one is open: the table asked :mod:`.check` first


def unfinished(t: TableState, why: str) -> None:
    """An inspection left open when ``why``: flagged, and the deck is checked as it stands."""
    insp = t.inspection
    assert insp is not None
    t.flag(
        "shoe",
        f"{why} before the inspection of {deck_name(deck_serial(insp))} (event {insp.seq}) "
        "was ended: it is checked as read",
    )
    end_inspection(t)


def read(t: TableState, ev: Card) -> None:
    """A card read during an inspection: the deck's, not the shoe's; not dealt."""
    insp = t.inspection
    assert insp is not None and ev.card is not None
    insp.cards.append((ev.deck or "", ev.card))


def deck_serial(insp: Inspection) -> str | None:
    """The inspected deck's serial: the one ``inspect`` named, or the one most of its cards
    carry (the first read, between equals)."""
    if insp.deck is not None:
        return insp.deck
    tally: dict[str, int] = {}
    for serial, _card in insp.cards:
        if serial:
            tally[serial] = tally.get(serial, 0) + 1
    best: str | None = None
    for serial, n in tally.items():  # in the order first read
        if best is None or n > tally[best]:
            best = serial
    return best


def deck_name(serial: str | None) -> str:
    return f"deck {serial}" if serial is not None else "the deck (no serial)"


def check_deck(t: TableState, insp: Inspection, end: int) -> InspectionResult:
    """The inspected deck against the game's deck: each card once, none foreign."""
    serial = deck_serial(insp)
    excluded = t.excluded_ranks
    own: dict[str, int] = {}
    foreign: list[str] = []
    tens: list[str] = []
    for s, card in insp.cards:
        named = f"{s}-{card}" if s and s != serial else card
        if card[0] in excluded:
            tens.append(named)
        elif s and s != serial:
            foreign.append(named)
        else:
            own[card] = own.get(card, 0) + 1
    missing = [c for c in t.deck_codes if c not in own]
    doubled = [c for c in t.deck_codes if own.get(c, 0) > 1]
    return InspectionResult(
        insp.seq, end, serial, insp.by, len(insp.cards), missing, doubled, foreign, tens
    )


def end_inspection(t: TableState) -> None:
    insp = t.inspection
    assert insp is not None
    t.inspection = None
    result = check_deck(t, insp, t.seq)
    name = deck_name(result.deck)
    if result.tens:
        t.flag(
            t.ref("foreign_card"),
            f"{name}: {'; '.join(f'{c} is a ten' for c in result.tens)}: this game's decks "
            "hold no tens; remove them",
        )
    wrong = [f"{c} missing" for c in result.missing]
    wrong += [
        f"{c} doubled (read {dict_count(insp, result.deck, c)} times)" for c in result.doubled
    ]
    wrong += [f"{c} is of another deck" for c in result.foreign]
    if wrong:
        t.flag("shoe", f"{name} ({result.cards} cards read): {'; '.join(wrong)}")
    t.inspections.append(result)
    t.day.inspected += 1
    if result.deck is not None:
        if result.passed:
            note_deck(t, result.deck, DeckStatus(True, result.seq))
        else:
            parts = [*result.missing, *result.doubled, *result.foreign, *result.tens]
            note_deck(
                t,
                result.deck,
                DeckStatus(
                    False,
                    result.seq,
                    f"failed its inspection at event {result.seq}: {', '.join(parts)}",
                ),
            )
    t.bound_records()


def dict_count(insp: Inspection, serial: str | None, card: str) -> int:
    return sum(1 for s, c in insp.cards if c == card and (not s or s == serial))


def note_deck(t: TableState, serial: str, status: DeckStatus) -> None:
    """Record what is now known of a deck (most recent last; the oldest forgotten first)."""
    known = t.deck_status
    known.pop(serial, None)
    known[serial] = status
    while len(known) > MAX_DECK_STATUS:
        del known[next(iter(known))]


# --- the shoe's end, its readout and its reconciliation -----------------------------------------


def on_shoe_end(t: TableState, ev: ShoeEnd) -> None:
    """The shoe is finished (a shoe is loaded, not ended, and no round's cards are out: the
    table asked :mod:`.check` first); the cards read next are read out."""
    shoe = t.shoe
    assert shoe is not None
    if t.inspection is not None:
        unfinished(t, "the shoe was ended")
    shoe.ended = True


def read_out(t: TableState, ev: Card) -> None:
    """A card left in an ended shoe, read out: the shoe's checks on a card read, not dealt."""
    shoe = t.shoe
    assert shoe is not None
    if admit(t, ev):
        shoe.read_out += 1


def finish_shoe(t: TableState, shoe: Shoe) -> None:
    """The readout of an ended shoe is over: reconcile it; its cards are off the table."""
    reconcile(t, shoe)
    t.shoe = None
    t.discards.clear()
    t.removed.clear()


def expected_serials(shoe: Shoe) -> tuple[str, ...] | None:
    record = shoe.record
    if record is not None and record.serials is not None:
        return tuple(dict.fromkeys(record.serials))  # a serial listed twice is one deck
    if shoe.serials is not None:
        return tuple(sorted(shoe.serials))
    return None


def compare(
    codes: tuple[str, ...],
    serials: tuple[str, ...] | None,
    decks: int,
    seen: dict[tuple[str, str], int],
) -> tuple[list[str], list[str]]:
    """The cards missing from, and the cards beyond, ``decks`` decks of ``codes`` (each deck by
    its serial when the serials are known), given every card seen by (serial or "", card).

    With serials, a card read with none (keyed in by hand) stands for a missing card of its code
    (the first deck's, in load order); a card of another deck, or of a rank the decks do not
    hold, or a second read of the same card of the same deck, is extra."""
    missing: list[str] = []
    extra: list[str] = []
    if serials is None:
        got: dict[str, int] = {}
        for (_serial, card), n in seen.items():
            got[card] = got.get(card, 0) + n
        for card in codes:
            missing.extend([card] * max(0, decks - got.get(card, 0)))
        wanted = set(codes)
        for card in sorted(got):
            over = got[card] - (decks if card in wanted else 0)
            extra.extend([card] * max(0, over))
        return missing, extra
    loaded = set(serials)
    wanted = set(codes)
    matched: set[tuple[str, str]] = set()
    unnamed: dict[str, int] = {}
    for (serial, card), n in sorted(seen.items()):
        if not serial:
            unnamed[card] = unnamed.get(card, 0) + n
        elif serial in loaded and card in wanted:
            matched.add((serial, card))
            extra.extend([f"{serial}-{card}"] * (n - 1))
        else:
            extra.extend([f"{serial}-{card}"] * n)
    for serial in serials:
        for card in codes:
            if (serial, card) in matched:
                continue
            if unnamed.get(card, 0) > 0:
                unnamed[card] -= 1
                continue
            missing.append(f"{serial}-{card}")
    for card in sorted(unnamed):
        extra.extend([card] * unnamed[card])
    return missing, extra


def reconcile(t: TableState, shoe: Shoe) -> None:
    """Every card of every deck loaded seen exactly once since the load, or flagged by name."""
    serials = expected_serials(shoe)
    decks = len(serials) if serials is not None else shoe.decks
    missing, extra = compare(t.deck_codes, serials, decks, shoe.seen)
    record = shoe.record
    where = f"the shoe loaded at event {record.seq}" if record is not None else "the shoe"
    if record is not None:
        record.reconciled = not missing and not extra
        record.missing = missing
        record.extra = extra
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing: {', '.join(missing)}")
        if extra:
            parts.append(f"{len(extra)} extra: {', '.join(extra)}")
        t.flag("shoe", f"{where} does not reconcile: {'; '.join(parts)}")
    if serials is None:
        return
    # A deck short of a card fails (it may not be loaded again until it is whole); a card
    # beyond it was removed from play when read, so it does not.
    for serial in serials:
        mine = [c for c in missing if c.startswith(serial + "-")]
        if mine:
            detail = f"failed the reconciliation of {where} at event {t.seq}: {', '.join(mine)}"
            note_deck(t, serial, DeckStatus(False, t.seq, detail))
        else:
            note_deck(t, serial, DeckStatus(True, t.seq))


def inspection_view(t: TableState) -> dict[str, object] | None:
    """The inspection in progress as the dealer's screen shows it: a running count and what is
    missing, doubled or foreign so far."""
    insp = t.inspection
    if insp is None:
        return None
    result = check_deck(t, insp, 0)
    return {
        "inspect": insp.seq,
        "deck": result.deck,
        "by": list(insp.by),
        "read": result.cards,
        "of": len(t.deck_codes),
        "missing": result.missing,
        "doubled": result.doubled,
        "foreign": result.foreign,
        "tens": result.tens,
    }
